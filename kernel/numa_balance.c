/*
 * numa_balance.c - automatic NUMA balancing: the scanner that makes memory
 * PROT_NONE (kernel/sched/fair.c task_numa_work, mm/mprotect.c
 * change_prot_numa), the hinting fault (mm/memory.c do_numa_page,
 * mm/huge_memory.c do_huge_pmd_numa_page), the two-stage migration filter
 * (should_numa_migrate_memory, mpol_misplaced's MPOL_F_MORON), the migration
 * (mm/migrate.c migrate_misplaced_folio) and the adaptation of the scan
 * period (update_task_scan_period).  What the scanner marks in one PMD
 * range is the scheme's (numa.balancing): each is a file of its own,
 * numa_balance_pte.c (Linux 3.8 on) and numa_balance_pmd.c (the 2012 scheme
 * of seed 003: change_pmd_protnuma / do_pmd_numa_page, removed in Linux
 * 3.13), on the shared walk of numa_balance_impl.h; the hinting fault here
 * handles whatever they marked.
 *
 * Timing, per task as Linux keeps it (init_numa_balancing, task_tick_numa,
 * task_numa_work): a task's scan comes due by its own run time (cycles it
 * ran on a CPU, sum_exec_runtime), when that passes its node_stamp plus its
 * scan period.  A task starts with node_stamp 0 and the period
 * numa.scan_delay_ms; at its first due time the period becomes
 * numa.scan_period_min_ms (task_scan_start).  A thread that joins an
 * address space already in use starts later: node_stamp is its creator's
 * period times the tasks already there, at most numa.scan_period_max_ms
 * (the stagger of Linux 4.19 on), and keeps the delay as its period until
 * it adapts.  Each time a task comes due its node_stamp moves on by its
 * period, and it scans only when the address space's next scan time
 * (mm->numa_next_scan, numa.scan_delay_ms after its first task started)
 * has come; it then sets that time to now plus its own period, so the
 * tasks of one process share the scanning and the fastest sets the pace.
 * The run time a scan took counts 32 times against the task's node_stamp
 * (at most 3% of a task's time goes to scanning).  The scheduler tick is
 * not modelled: the condition is checked before every record of the task,
 * and the kernel's two-tick offsets are left out.
 *
 * Per address space: the next scan time, the scan offset (where the last
 * scan stopped; it goes back to 0 and the pass count numa_scan_seq grows
 * when a scan runs off the last VMA).  Per task: node_stamp, the period,
 * the pass count it last adapted at, and the page-weighted local, remote
 * and failed hinting faults it took since (numa_faults_locality).
 *
 * The scan (task_numa_work): from the offset, VMA by VMA, skipping hugetlb
 * VMAs and inaccessible (PROT_NONE) ones, PMD range by PMD range.  A range
 * in which something was marked uses up its size of the numa.scan_size_mb
 * budget; every range uses up its size of the virtual budget, 8 times the
 * budget, so that empty or already marked space is skipped fast: the rule
 * task_numa_work's comment states ("scan scan_size worth of hpages that
 * have at least one present PTE that is not already PTE-numa"), applied
 * per PMD range.  One TLB flush per VMA piece scanned, charged to the
 * scanning CPU with the scan itself (numa.scan_pte_ns per entry written).
 * What the scanner's walk skips, as change_pte_range / change_huge_pmd do:
 * the zero page and the huge zero page, entries already PROT_NONE, and,
 * for a scheme with skip_local_single_thread (pte) in a process with one
 * thread, pages already on the node that thread runs on.
 *
 * The period (task_numa_placement, update_task_scan_period): at a task's
 * first hinting fault after a pass over its address space ended, before
 * the fault is counted, the task adapts its period from its own faults
 * since it last did: none at all, or a failed migration, doubles it (up to
 * scan_period_max_ms) and pushes the address space's next scan to now plus
 * the new period, keeping the counts (the kernel returns before clearing
 * them, so a failed migration keeps slowing the task down); otherwise, with
 * lr = local * 10 / (local + remote) (NUMA_PERIOD_SLOTS) and t =
 * numa.period_threshold * 10, it grows by max(lr - t, 1) tenths when
 * lr >= t and shrinks by (t - lr) tenths when not, clamped to
 * [scan_period_min_ms, scan_period_max_ms], and the counts start again.
 * A task that takes no hinting fault keeps its period.
 *
 * The filter: the entry keeps the node of the page's last hinting fault
 * (NUMA_LAST_* in numa_balance.h).  A misplaced page migrates only when the
 * previous fault came from the faulting CPU's node: the first fault from a
 * node never migrates, as in Linux 3.8 where last_nid starts at -1 (newer
 * kernels let a page whose last_cpupid is unset through at once).
 *
 * Migration: a base page or a PMD-mapped THP whole, to a page of the
 * faulting CPU's node only (__GFP_THISNODE, no reclaim or compaction),
 * pgmigrate_fail when there is none.  A page the fault found marked needs
 * no TLB shootdown: its translation is PROT_NONE, which no TLB holds since
 * the scan's flush (ptep_clear_flush flushes only pte_accessible entries).
 * The pmd scheme's group may also hold pages the scan neither marked nor
 * flushed: the table is marked whole, but only the pieces of the VMAs the
 * scan reached are marked and flushed (not a later VMA in the table when
 * the budget ran out before it, nor an earlier one when the scan resumed
 * past it).  Such a page is accessible, and its migration shoots it down
 * on every CPU that may hold it (machine_flush_range of the one page
 * before the old frame is freed, as try_to_unmap's ptep_clear_flush
 * does).  A page that is part of a PTE-mapped THP (split, awaiting the
 * deferred split) is not migrated, as do_numa_page left PageCompound pages
 * before large-folio migration.  The VMA's policy decides: default
 * (local) and preferred migrate towards the faulting CPU, bind and
 * interleave do not (no MPOL_F_MORON).
 *
 * Leaves out: task placement and numa_group (no task moves to its memory),
 * the shared/private fault statistics (ps_ratio), the scaling of the period
 * bounds with the size of the address space (task_scan_min/max), the
 * scheduler tick, rate limiting of migrations,
 * memory tiering, and the per-VMA access history of recent kernels.
 */
#include "config.h"
#include "errors.h"
#include "numa_balance.h"
#include "numa_balance_impl.h"

#include "mempolicy.h"

#include <math.h>
#include "events.h"
#include "thp.h"

/* kernel/sched/fair.c: the period adapts in tenths of itself. */
#define NUMA_PERIOD_SLOTS 10
/* task_numa_work: "Scan up to this much virtual space", times the budget. */
#define NUMA_VIRT_SCAN_FACTOR 8
/* task_numa_work: "Make sure tasks use at least 32x as much time to run
 * other code than they used here" (the scan's run time counts 32 times). */
#define NUMA_SCAN_RUNTIME_FACTOR 32

/* The state of one address space (mm->numa_next_scan, numa_scan_offset,
 * numa_scan_seq). */
typedef struct {
  Mm *mm;
  gboolean started;       /* its first task ran */
  uint64_t next_scan;     /* cycles */
  uint64_t offset;        /* va where the next scan starts */
  uint64_t seq;           /* passes over the address space */
  unsigned tasks;         /* tasks seen (mm_users) */
  struct NumaTask *leader; /* its first task */
} NumaMm;

/* The state of one task (p->node_stamp, numa_scan_period, numa_scan_seq,
 * numa_faults_locality). */
typedef struct NumaTask {
  NumaMm *mm;
  uint64_t node_stamp;    /* run time, cycles */
  double period_ms;       /* set by set_period only */
  uint64_t period_cycles; /* ms_to_cycles(period_ms): set_due runs at every switch-in, llround costs ~40 */
  uint64_t seq;           /* the mm's pass count when it last adapted */
  uint64_t local, remote, failed; /* base pages, since it last adapted */
} NumaTask;

/* task_find's cache of the tasks of recent threads, direct-mapped by the
 * Thread's address: with more threads than CPUs nearly every record
 * switches threads, and a hash lookup at each switch-in cost some 60 host
 * instructions.  A task freed before the NumaBalance (numa_balance_mm_exit)
 * takes its entry with it, so an entry is never stale. */
#define TASK_CACHE_SLOTS 256u /* a power of two */
typedef struct {
  const Thread *t;
  NumaTask *p;
} TaskCacheEntry;

struct NumaBalance {
  Kernel *k;
  const NumaBalancePolicy *pol;
  gboolean active;        /* a scheme is on and the machine has nodes to balance */
  GHashTable *mms;        /* Mm* -> NumaMm */
  GHashTable *tasks;      /* Thread* -> NumaTask */
  TaskCacheEntry task_cache[TASK_CACHE_SLOTS];
  NumaMm *last;           /* lookup cache */
  gboolean filter;
  double delay_ms, min_ms, max_ms, threshold_slots;
  uint64_t budget_pages;  /* numa.scan_size_mb in base pages */
  double pte_cycles;      /* per entry written */
  uint64_t hint_cycles, migrate_cycles;
  int scan_node;          /* the scanning task's node when it runs alone, else -1 */
};

static uint64_t ms_to_cycles(const Kernel *k, double ms)
{
  return (uint64_t)llround(ms * 1e6 * k->cycles_per_ns);
}

Kernel *numa_balance_kernel(const NumaBalance *nb)
{
  return nb->k;
}

/* No scheme: balancing is off, the scanner never runs. */
static const NumaBalancePolicy numa_balance_off = {
  .name = "off",
  .help = "nothing is scanned, no hinting fault is taken",
  .source = "kernel.numa_balancing=0 (Documentation/admin-guide/sysctl/kernel.rst)",
  .mark_pmd = NULL,
};

/* The registry of schemes (base/registry.h), in the order of
 * numa.balancing's choices in settings.def.  A scheme is one file,
 * numa_balance_NAME.c defining numa_balance_NAME, and one row here: its
 * extern and its place in the table. */
extern const NumaBalancePolicy numa_balance_pte;
extern const NumaBalancePolicy numa_balance_pmd;
static const NumaBalancePolicy *const numa_balance_rows[] = {
  &numa_balance_off,
  &numa_balance_pte,
  &numa_balance_pmd,
};

const NumaBalancePolicy *const *numa_balance_policies(unsigned *n)
{
  *n = G_N_ELEMENTS(numa_balance_rows);
  return numa_balance_rows;
}

NumaBalance *numa_balance_new(Kernel *k, GError **error)
{
  g_return_val_if_fail(k != NULL && k->s != NULL, NULL);
  const Settings *s = k->s;
  double min_ms = settings_double(s, SET_NUMA_SCAN_PERIOD_MIN_MS);
  double max_ms = settings_double(s, SET_NUMA_SCAN_PERIOD_MAX_MS);
  if (max_ms < min_ms) {
    g_autofree char *max_w = settings_blame(s, SET_NUMA_SCAN_PERIOD_MAX_MS);
    g_autofree char *min_w = settings_blame(s, SET_NUMA_SCAN_PERIOD_MIN_MS);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s is below %s: give numa.scan_period_max_ms at least %s",
                max_w, min_w, settings_str(s, SET_NUMA_SCAN_PERIOD_MIN_MS));
    return NULL;
  }
  const char *scheme = settings_str(s, SET_NUMA_BALANCING);
  int row = registry_find(REGISTRY_ROWS(numa_balance_rows), G_N_ELEMENTS(numa_balance_rows), scheme);
  if (row < 0) {
    registry_set_unknown(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "setting 'numa.balancing'",
                         REGISTRY_ROWS(numa_balance_rows), G_N_ELEMENTS(numa_balance_rows), scheme);
    return NULL;
  }
  NumaBalance *nb = g_new0(NumaBalance, 1);
  nb->k = k;
  nb->pol = numa_balance_rows[row];
  nb->active = nb->pol->mark_pmd && settings_int(s, SET_MACHINE_NODES) > 1;
  nb->mms = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  nb->tasks = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  nb->filter = settings_bool(s, SET_NUMA_MIGRATE_FILTER);
  nb->delay_ms = settings_double(s, SET_NUMA_SCAN_DELAY_MS);
  nb->min_ms = min_ms;
  nb->max_ms = max_ms;
  nb->threshold_slots = settings_double(s, SET_NUMA_PERIOD_THRESHOLD) * NUMA_PERIOD_SLOTS;
  double bytes = settings_double(s, SET_NUMA_SCAN_SIZE_MB) * 1024.0 * 1024.0;
  nb->budget_pages = MAX(UINT64_C(1), (uint64_t)(bytes / (double)k->base_bytes));
  nb->pte_cycles = settings_double(s, SET_NUMA_SCAN_PTE_NS) * k->cycles_per_ns;
  nb->hint_cycles = kernel_ns_to_cycles(k, settings_double(s, SET_NUMA_HINT_FAULT_NS));
  nb->migrate_cycles = kernel_ns_to_cycles(k, settings_double(s, SET_NUMA_MIGRATE_PAGE_NS));
  nb->scan_node = -1;
  return nb;
}

void numa_balance_free(NumaBalance *nb)
{
  if (!nb)
    return;
  g_hash_table_destroy(nb->tasks);
  g_hash_table_destroy(nb->mms);
  g_free(nb);
}

void numa_balance_mm_new(NumaBalance *nb, Mm *mm)
{
  if (!nb || !nb->active || g_hash_table_contains(nb->mms, mm))
    return;
  NumaMm *s = g_new0(NumaMm, 1);
  s->mm = mm;
  s->next_scan = UINT64_MAX;
  g_hash_table_insert(nb->mms, mm, s);
}

static inline TaskCacheEntry *task_slot(NumaBalance *nb, const Thread *t)
{
  /* Fibonacci hashing: the top bits of the address times 2^64 / phi. */
  return &nb->task_cache[((uintptr_t)t * UINT64_C(0x9E3779B97F4A7C15)) >> 56 & (TASK_CACHE_SLOTS - 1)];
}

void numa_balance_mm_exit(NumaBalance *nb, Mm *mm)
{
  NumaMm *s = nb ? g_hash_table_lookup(nb->mms, mm) : NULL;
  if (!s)
    return;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, nb->tasks);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    if (((NumaTask *)value)->mm != s)
      continue;
    TaskCacheEntry *ce = task_slot(nb, key);
    if (ce->t == key)
      *ce = (TaskCacheEntry){ NULL, NULL };
    g_hash_table_iter_remove(&it); /* task_numa_free */
  }
  if (nb->last == s)
    nb->last = NULL;
  g_hash_table_remove(nb->mms, mm);
}

/* t's task, NULL if it has none yet. */
static NumaTask *task_find(NumaBalance *nb, const Thread *t)
{
  TaskCacheEntry *ce = task_slot(nb, t);
  if (ce->t == t)
    return ce->p;
  NumaTask *p = g_hash_table_lookup(nb->tasks, t);
  if (p)
    *ce = (TaskCacheEntry){ t, p };
  return p;
}

static NumaMm *state_of(NumaBalance *nb, const Mm *mm)
{
  if (nb->last && nb->last->mm == mm)
    return nb->last;
  NumaMm *s = g_hash_table_lookup(nb->mms, mm);
  if (s)
    nb->last = s;
  return s;
}

static void set_period(NumaBalance *nb, NumaTask *p, double ms)
{
  p->period_ms = ms;
  p->period_cycles = ms_to_cycles(nb->k, ms);
}

/* init_numa_balancing: the first task of an address space starts at once
 * (node_stamp 0); a later one, cloned by `creator` (its leader when the
 * creator is of another address space), is staggered. */
static NumaTask *task_new(NumaBalance *nb, const Thread *t, const Thread *creator)
{
  NumaMm *s = state_of(nb, t->mm);
  if (!s)
    return NULL;
  NumaTask *p = g_new0(NumaTask, 1);
  p->mm = s;
  set_period(nb, p, nb->delay_ms);
  p->seq = s->seq;
  if (s->tasks) {
    NumaTask *c = creator && creator->mm == t->mm ? task_find(nb, creator) : NULL;
    double creator_ms = (c ? c : s->leader)->period_ms;
    p->node_stamp = ms_to_cycles(nb->k, MIN(nb->max_ms, creator_ms * s->tasks));
  } else {
    s->leader = p;
  }
  s->tasks++;
  g_hash_table_insert(nb->tasks, (gpointer)t, p);
  *task_slot(nb, t) = (TaskCacheEntry){ t, p };
  return p;
}

void numa_balance_task_new(NumaBalance *nb, const Thread *t, const Thread *creator)
{
  if (nb && nb->active && t && !task_find(nb, t))
    task_new(nb, t, creator);
}

static NumaTask *task_of(NumaBalance *nb, const Thread *t)
{
  NumaTask *p = task_find(nb, t);
  return p ? p : task_new(nb, t, NULL);
}

/* The clock at which the run time of p, running on cpu since
 * cpu->cur_since, passes node_stamp + period. */
static void set_due(NumaBalance *nb, KCpu *cpu, const Thread *t, const NumaTask *p)
{
  uint64_t due = p->node_stamp + p->period_cycles + 1;
  uint64_t ran = thread_runtime(t, cpu);
  cpu->numa_due = due > ran ? kcpu_now(cpu) + (due - ran) : kcpu_now(cpu);
}

/* The task of t, running on cpu, whose due time is to be set (cleared to
 * never until it is); NULL when balancing has nothing to do for it. */
static NumaTask *task_on(NumaBalance *nb, KCpu *cpu, const Thread *t)
{
  cpu->numa_due = UINT64_MAX;
  return nb && nb->active && t ? task_of(nb, t) : NULL;
}

void numa_balance_switch_in(NumaBalance *nb, KCpu *cpu, const Thread *t)
{
  NumaTask *p = task_on(nb, cpu, t);
  if (!p)
    return;
  if (!p->mm->started) { /* init_numa_balancing of the address space */
    p->mm->started = TRUE;
    p->mm->next_scan = kcpu_now(cpu) + ms_to_cycles(nb->k, nb->delay_ms);
  }
  set_due(nb, cpu, t, p);
}

gboolean numa_balance_task_info(NumaBalance *nb, const Thread *t, NumaTaskInfo *info)
{
  NumaTask *p = nb && nb->active && t ? task_find(nb, t) : NULL;
  if (!p)
    return FALSE;
  info->node_stamp = p->node_stamp;
  info->period_ms = p->period_ms;
  info->mm_next_scan = p->mm->next_scan;
  info->mm_seq = p->mm->seq;
  return TRUE;
}

/* ---- page-table helpers ------------------------------------------------------ */

/* The table holding the PMD entry of va (*idx its index), or NULL when a
 * level above has no table there. */
static PtNode *pmd_table(const PageTable *pt, uint64_t va, unsigned *idx)
{
  PtNode *n = pt->root;
  for (unsigned l = pt->g.levels; l > 2; l--) {
    unsigned i = pgtable_index(&pt->g, l, va);
    if (!(n->e[i] & PTE_P) || (n->e[i] & PTE_PS) || !n->child[i])
      return NULL;
    n = n->child[i];
  }
  *idx = pgtable_index(&pt->g, 2, va);
  return n;
}

static inline gboolean is_huge(uint64_t e)
{
  return (e & (PTE_P | PTE_PS)) == (PTE_P | PTE_PS);
}

static inline int last_node(uint64_t e)
{
  return (int)((e & NUMA_LAST_MASK) >> NUMA_LAST_SHIFT) - 1;
}

static inline uint64_t with_last_node(uint64_t e, int node)
{
  return (e & ~NUMA_LAST_MASK) | ((uint64_t)(node + 1) << NUMA_LAST_SHIFT);
}

/* A page the scanner may mark: present, its own (not the zero page), not
 * marked yet. */
static inline gboolean markable(uint64_t e)
{
  return (e & (PTE_P | PTE_SW_ZERO | PTE_SW_NUMA)) == PTE_P;
}

gboolean numa_balance_marked(const Mm *mm, uint64_t va)
{
  unsigned idx;
  PtNode *n = pmd_table(&mm->pt, va, &idx);
  if (!n)
    return FALSE;
  uint64_t e = n->e[idx];
  if (!(e & PTE_P))
    return FALSE;
  if (e & PTE_SW_NUMA)
    return TRUE; /* a huge PMD, or a table marked whole */
  if ((e & PTE_PS) || !n->child[idx])
    return FALSE;
  return (n->child[idx]->e[pgtable_index(&mm->pt.g, 1, va)] & (PTE_P | PTE_SW_NUMA)) == (PTE_P | PTE_SW_NUMA);
}

gboolean numa_balance_marked_found(const PtFound *f)
{
  /* pmd_table() descends as pgtable_find() does: it finds the PMD table
   * exactly when the lookup reached level 2 or 1.  At level 2 the PMD entry
   * ended the lookup (not present, huge, or no table under it): marked when
   * present with the bit; at level 1 it was a present table entry, up_entry,
   * marked whole, or the PTE is marked. */
  const uint64_t marked = PTE_P | PTE_SW_NUMA;
  uint64_t e = f->table->e[f->index];
  if (f->level > 2)
    return FALSE;
  return (f->level == 1 && (f->up_entry & PTE_SW_NUMA)) || (e & marked) == marked;
}

/* ---- the scanner's walk, shared by the schemes (numa_balance_impl.h) ---- */

/* The scanner's walk over one PMD range (change_pmd_range for one PMD,
 * change_pte_range below it). */
typedef struct {
  NumaBalance *nb;
  KCpu *cpu;
  uint64_t *entries;
  int skip_node;        /* pages already on this node stay (-1: none) */
  gboolean whole;       /* pmd scheme: a table marked whole is left alone */
  uint64_t huge;        /* base pages a huge PMD made PROT_NONE (mark_huge) */
  uint64_t ptes;        /* PTEs made PROT_NONE */
  PtNode *pmd;          /* the PMD's table, when its PTE table was entered */
  unsigned pmd_index;
} MarkWalk;

/* change_huge_pmd(prot_numa): a huge PMD wholly in the range. */
static uint64_t mark_huge(NumaBalance *nb, KCpu *cpu, PtNode *n, unsigned idx, uint64_t start, uint64_t end,
                          uint64_t *entries)
{
  Kernel *k = nb->k;
  uint64_t e = n->e[idx];
  if (!markable(e) || (start & (k->pmd_bytes - 1)) || end - start != k->pmd_bytes)
    return 0;
  pgtable_entry_set(n, idx, e | PTE_SW_NUMA);
  (*entries)++;
  cpu->ctr->c[CTR_NUMA_PTE_UPDATES] += k->pmd_subpages;
  cpu->ctr->c[CTR_NUMA_HUGE_PTE_UPDATES]++;
  return k->pmd_subpages;
}

/* change_pte_range(prot_numa): one PTE of the range. */
static int mark_pte(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  MarkWalk *mw = w->ctx;
  Kernel *k = mw->nb->k;
  if (!markable(e))
    return 0;
  if (mw->skip_node >= 0 && physmem_node_of(k->pm, pte_pfn(e)) == mw->skip_node)
    return 0;
  pgtable_walk_set(w, e | PTE_SW_NUMA);
  mw->ptes++;
  return 0;
}

/* The PMD of the range: a huge one is marked whole, a table's PTEs one by
 * one (pmd scheme: unless the table is marked whole already). */
static int mark_pmd_entry(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  MarkWalk *mw = w->ctx;
  if (!pte_present(e)) {
    w->action = PT_WALK_SKIP;
  } else if (pte_huge(e, 2)) {
    mw->huge += mark_huge(mw->nb, mw->cpu, w->table, w->index, addr, next, mw->entries);
  } else if (w->below && mw->whole && (e & PTE_SW_NUMA)) {
    w->action = PT_WALK_SKIP;
  } else if (w->below) {
    mw->pmd = w->table;
    mw->pmd_index = w->index;
  }
  return 0;
}

static const PtWalkOps mark_ops = { .pmd_entry = mark_pmd_entry, .pte_entry = mark_pte };

/* Walk [start, end) of mm and count the PTEs it marked (a huge PMD counts
 * in mark_huge). */
void numa_balance_mark_range(NumaBalance *nb, KCpu *cpu, Mm *mm, uint64_t start, uint64_t end,
                             gboolean skip_marked_table, uint64_t *entries, NumaMarked *out)
{
  MarkWalk mw = {
    .nb = nb, .cpu = cpu, .entries = entries, .skip_node = nb->scan_node, .whole = skip_marked_table,
  };
  pgtable_walk(&mm->pt, start, end, &mark_ops, &mw);
  uint64_t marked = mw.ptes;
  *entries += marked;
  cpu->ctr->c[CTR_NUMA_PTE_UPDATES] += marked;
  *out = (NumaMarked){ .huge = mw.huge, .ptes = mw.ptes, .pmd = mw.pmd, .pmd_index = mw.pmd_index };
}

/* ---- the scanner ------------------------------------------------------------------ */

/* task_numa_placement / update_task_scan_period, without the
 * shared/private ratio: p's first hinting fault since a pass ended. */
static void adapt_period(NumaBalance *nb, KCpu *cpu, NumaTask *p)
{
  p->seq = p->mm->seq;
  if (p->local + p->remote == 0 || p->failed) {
    set_period(nb, p, MIN(nb->max_ms, p->period_ms * 2));
    p->mm->next_scan = kcpu_now(cpu) + p->period_cycles;
    return; /* the kernel returns before clearing the counts */
  }
  double slot = p->period_ms / NUMA_PERIOD_SLOTS;
  double lr = (double)((p->local * NUMA_PERIOD_SLOTS) / (p->local + p->remote));
  double diff;
  if (lr >= nb->threshold_slots) {
    double slots = lr - nb->threshold_slots;
    diff = (slots < 1 ? 1 : slots) * slot;
  } else {
    diff = -(nb->threshold_slots - lr) * slot;
  }
  set_period(nb, p, CLAMP(p->period_ms + diff, nb->min_ms, nb->max_ms));
  p->local = p->remote = p->failed = 0;
}

/* Threads of mm (mm_users): the scanner skips pages already on the node of
 * a process that runs alone. */
static unsigned mm_threads(const Mm *mm)
{
  return mm->users;
}


/* Whether policy p carries MPOL_F_MOF: the default local policy does, and
 * a user's policy with MPOL_F_NUMA_BALANCING (sanitize_mpol_flags). */
static gboolean mpol_mof(MemPolicy p)
{
  return p.mode == MPOL_DEFAULT_LOCAL || (p.flags & MEMPOLICY_F_BALANCING);
}

/* vma_policy_mof: whether the policy in force over v (its own, else the
 * process's) carries MPOL_F_MOF.  task_numa_work scans no other VMA: a
 * range under a user's policy without =balancing takes no hinting
 * faults. */
static gboolean policy_mof(const Mm *mm, const Vma *v)
{
  return mpol_mof(mempolicy_effective(mm, v, NULL));
}

/* task_numa_work for task p, its address space's scan due: scan the next
 * numa.scan_size_mb from the offset. */
static void scan(NumaBalance *nb, KCpu *cpu, NumaTask *p)
{
  Kernel *k = nb->k;
  NumaMm *s = p->mm;
  Mm *mm = s->mm;
  s->next_scan = kcpu_now(cpu) + p->period_cycles;
  nb->scan_node = nb->pol->skip_local_single_thread && mm_threads(mm) == 1 ? cpu->node : -1;

  int64_t pages = (int64_t)nb->budget_pages;
  int64_t virt = pages * NUMA_VIRT_SCAN_FACTOR;
  uint64_t entries = 0, marked_total = 0, start = s->offset;
  uint64_t before_stall = kcpu_now(cpu);
  gboolean done = FALSE;
  guint i;
  for (i = mm_vma_index_from(mm, start); i < mm_vma_count(mm) && !done; i++) {
    const Vma *v = mm_vma(mm, i);
    if ((v->flags & MAP_F_HUGETLB) || !(v->prot & (PROT_R | PROT_W | PROT_X)) || !policy_mof(mm, v))
      continue; /* is_vm_hugetlb_page, !vma_is_accessible, !vma_policy_mof */
    uint64_t cur = MAX(start, v->start), piece = cur, marked = 0;
    while (cur < v->end) {
      uint64_t end = MIN((cur & ~(k->pmd_bytes - 1)) + k->pmd_bytes, v->end);
      uint64_t n = nb->pol->mark_pmd(nb, cpu, mm, v, cur, end, &entries);
      int64_t span = (int64_t)((end - cur) >> k->base_shift);
      if (n)
        pages -= span;
      virt -= span;
      marked += n;
      cur = end;
      if (pages <= 0 || virt <= 0) {
        done = TRUE;
        break;
      }
    }
    if (marked)
      kernel_flush_tlb(k, cpu, mm, piece, cur, k->base_shift, FALSE);
    marked_total += marked;
    start = cur;
  }
  if (done) {
    s->offset = start; /* the next scan resumes here */
  } else {
    s->offset = 0; /* reset_ptenuma_scan */
    s->seq++;
  }
  uint64_t work = (uint64_t)llround((double)entries * nb->pte_cycles);
  kernel_stall(k, cpu, work);
  uint64_t spent = kcpu_now(cpu) - before_stall;
  p->node_stamp += NUMA_SCAN_RUNTIME_FACTOR * spent;
  cpu->ctr->c[CTR_NUMA_SCANS]++;
  cpu->ctr->c[CTR_NUMA_CYCLES] += spent;
  kernel_event(k, cpu, mm->pid, "numa_scan",
                "pages=%" G_GUINT64_FORMAT " entries=%" G_GUINT64_FORMAT " offset=%#" G_GINT64_MODIFIER
                "x period_ms=%g cycles=%" G_GUINT64_FORMAT,
                marked_total, entries, s->offset, p->period_ms, spent);
}

void numa_balance_tick(NumaBalance *nb, KCpu *cpu, Thread *t)
{
  NumaTask *p = task_on(nb, cpu, t);
  if (!p)
    return;
  uint64_t period = p->period_cycles;
  if (thread_runtime(t, cpu) > p->node_stamp + period) { /* task_tick_numa */
    if (!p->node_stamp)
      set_period(nb, p, nb->min_ms); /* task_scan_start */
    p->node_stamp += period;
    if (kcpu_now(cpu) >= p->mm->next_scan)
      scan(nb, cpu, p);
  }
  set_due(nb, cpu, t, p);
}

/* ---- the hinting fault -------------------------------------------------------------- */

/* mpol_misplaced's rule for a hinting fault from a CPU of `node`, by the
 * policy in force (the VMA's, else the process's).  Only MPOL_F_MOF with
 * MPOL_F_MORON moves a page, towards the faulting CPU's node: the default
 * local policy has them (preferred_node_policy, MPOL_PREFERRED on that
 * node: a page already there is not misplaced, and the filter is not
 * asked), and bind=balancing and preferred_many=balancing get them
 * (sanitize_mpol_flags): the CPU's node must then be one of the policy's,
 * and the filter is asked even for a page on it.  Any other user policy
 * has no MPOL_F_MOF: its pages stay. */
typedef enum {
  MISPLACED_NEVER,     /* no MPOL_F_MOF, or the CPU's node is outside the mask */
  MISPLACED_PREFERRED, /* the default: the filter for a page on another node */
  MISPLACED_MASK,      /* =balancing with the CPU's node in the mask: the filter always */
} MisplacedRule;

static MisplacedRule misplaced_rule(const Mm *mm, const Vma *v, int node)
{
  MemPolicy p = mempolicy_effective(mm, v, NULL);
  if (p.mode == MPOL_DEFAULT_LOCAL)
    return MISPLACED_PREFERRED;
  return mpol_mof(p) && (p.nodes >> node & 1) ? MISPLACED_MASK : MISPLACED_NEVER;
}

/* Whether the filter is asked about a hinting fault (should_numa_migrate_
 * memory, which also records the faulting node), under rule r, by the
 * scheme's filter_local_faults: the 2012 scheme keeps its own time's rule
 * (Linux 3.8's mpol_misplaced: the default policy's MPOL_F_MORON step
 * records the node of every fault, local or not); the pte scheme today's
 * (since Linux 5.14 the default is MPOL_PREFERRED on the CPU's node, and a
 * page already there is not misplaced). */
static gboolean misplaced_asks_filter(const NumaBalance *nb, MisplacedRule r, gboolean local)
{
  if (nb->pol->filter_local_faults)
    return r != MISPLACED_NEVER;
  return r == MISPLACED_MASK || (r == MISPLACED_PREFERRED && !local);
}

/* The two-stage filter on entry *e (its last-node field is updated). */
static gboolean filter_passes(NumaBalance *nb, uint64_t *e, int node)
{
  int last = last_node(*e);
  *e = with_last_node(*e, node);
  return !nb->filter || last == node;
}

/* migrate_misplaced_folio: a page of 2^order frames from `old` to the
 * faulting CPU's node; the copy (which reads the old node's DRAM and writes
 * the new one's, waiting where they are loaded) and the fixed cost go to
 * *cycles.  The copy starts when the fault's work so far (*cycles) is done:
 * the pages of a pmd-scheme group are copied one after the other, not all
 * at the fault's start, where each would queue behind all the others.
 * FALSE (counted, and for task s) when the node has none. */
static gboolean migrate_alloc(NumaBalance *nb, KCpu *cpu, unsigned order, uint64_t old, uint64_t *pfn,
                              uint64_t *cycles, NumaTask *s)
{
  Kernel *k = nb->k;
  if (!physmem_alloc_on(k->pm, cpu->node, order, MT_MOVABLE, pfn)) {
    cpu->ctr->c[CTR_PGMIGRATE_FAIL]++;
    if (s)
      s->failed++; /* TNF_MIGRATE_FAIL: the task's period doubles */
    return FALSE;
  }
  uint64_t bytes = UINT64_C(4096) << order;
  uint64_t copy = kernel_copy_cycles(k, bytes);
  copy += kernel_dram_bulk(k, cpu, old, bytes, *cycles, copy);
  copy += kernel_dram_bulk(k, cpu, *pfn, bytes, *cycles, copy);
  kernel_fill_copy(k, cpu, *pfn, old, bytes); /* migrate_folio -> folio_copy on the faulting CPU */
  *cycles += copy + nb->migrate_cycles;
  return TRUE;
}

/* A base page at va of mm, mapped by entry *e (restored already): migrate
 * it unless it belongs to a THP.  `accessible`: the entry was not PROT_NONE
 * before the fault, so TLBs may hold it; try_to_unmap's ptep_clear_flush
 * shoots it down before the old frame is freed.  Returns TRUE when it
 * moved. */
static gboolean migrate_base(NumaBalance *nb, KCpu *cpu, Mm *mm, uint64_t va, gboolean accessible, uint64_t *e,
                             uint64_t *cycles, NumaTask *s)
{
  Kernel *k = nb->k;
  uint64_t old = pte_pfn(*e), pfn;
  if (thp_page_of(k, old, NULL))
    return FALSE;
  if (!migrate_alloc(nb, cpu, k->base_order, old, &pfn, cycles, s))
    return FALSE;
  if (accessible)
    kernel_flush_tlb_4k(k, cpu, mm, va, va + k->base_bytes);
  *e = pte_make(pfn, *e & ~PTE_PFN_MASK);
  physmem_release(k->pm, old, k->base_order);
  cpu->ctr->c[CTR_NUMA_PAGES_MIGRATED]++;
  return TRUE;
}

static void count_fault(KCpu *cpu, NumaTask *s, gboolean local, uint64_t pages)
{
  cpu->ctr->c[CTR_NUMA_HINT_FAULTS]++;
  if (local)
    cpu->ctr->c[CTR_NUMA_HINT_FAULTS_LOCAL]++;
  if (s) {
    if (local)
      s->local += pages;
    else
      s->remote += pages;
  }
}

static void emit_hint(Kernel *k, KCpu *cpu, Mm *mm, const char *what, uint64_t va, int page_node, uint64_t moved,
                      uint64_t cycles)
{
  kernel_event(k, cpu, mm->pid, "numa_hint_fault",
                "kind=%s va=%#" G_GINT64_MODIFIER "x page_node=%d cpu_node=%d migrated=%" G_GUINT64_FORMAT
                " cycles=%" G_GUINT64_FORMAT, what, va, page_node, cpu->node, moved, cycles);
}

/* do_numa_page */
static FaultResult pte_fault(NumaBalance *nb, KCpu *cpu, Mm *mm, const Vma *v, PtNode *t, uint64_t va,
                             uint64_t *cycles, NumaTask *s)
{
  Kernel *k = nb->k;
  unsigned i = pgtable_index(&k->geo, 1, va);
  uint64_t e = t->e[i] & ~PTE_SW_NUMA;
  int page_node = physmem_node_of(k->pm, pte_pfn(e));
  gboolean local = page_node == cpu->node;
  count_fault(cpu, s, local, UINT64_C(1));
  uint64_t moved = 0;
  if (misplaced_asks_filter(nb, misplaced_rule(mm, v, cpu->node), local)) {
    gboolean pass = filter_passes(nb, &e, cpu->node);
    if (!local && !pass)
      cpu->ctr->c[CTR_NUMA_MIGRATE_FILTERED]++;
    else if (!local && migrate_base(nb, cpu, mm, va & ~(k->base_bytes - 1), FALSE, &e, cycles, s))
      moved = 1;
  }
  pgtable_entry_set(t, i, e);
  emit_hint(k, cpu, mm, "pte", va, page_node, moved, *cycles);
  return FAULT_MAPPED;
}

/* do_huge_pmd_numa_page: the THP moves whole. */
static FaultResult huge_fault(NumaBalance *nb, KCpu *cpu, Mm *mm, const Vma *v, PtNode *n, unsigned idx,
                              uint64_t va, uint64_t *cycles, NumaTask *s)
{
  Kernel *k = nb->k;
  uint64_t e = n->e[idx] & ~PTE_SW_NUMA;
  uint64_t old = pte_pfn(e);
  int page_node = physmem_node_of(k->pm, old);
  gboolean local = page_node == cpu->node;
  count_fault(cpu, s, local, k->pmd_subpages);
  uint64_t moved = 0, pfn;
  if (misplaced_asks_filter(nb, misplaced_rule(mm, v, cpu->node), local)) {
    gboolean pass = filter_passes(nb, &e, cpu->node);
    if (!local && !pass) {
      cpu->ctr->c[CTR_NUMA_MIGRATE_FILTERED]++;
    } else if (!local && migrate_alloc(nb, cpu, k->pmd_order, old, &pfn, cycles, s)) {
      thp_unmap_pmd(k, old); /* frees the old THP and its registration */
      thp_page_add(k, pfn);
      e = pte_make(pfn, e & ~PTE_PFN_MASK);
      moved = k->pmd_subpages;
      cpu->ctr->c[CTR_NUMA_PAGES_MIGRATED] += moved;
    }
  }
  pgtable_entry_set(n, idx, e);
  emit_hint(k, cpu, mm, "thp", va, page_node, moved, *cycles);
  return FAULT_MAPPED;
}

/* do_pmd_numa_page of the 2012 scheme: one fault restores every PTE of the
 * table and handles its pages as one group, the filter applied once (on
 * the PMD's last-node field).  A table may span VMAs: each page follows
 * the policy of its own VMA, and a page the scan left unmarked may sit in
 * TLBs, so migrate_base shoots it down. */
static FaultResult pmd_group_fault(NumaBalance *nb, KCpu *cpu, Mm *mm, const Vma *v, PtNode *n, unsigned idx,
                                   uint64_t va, uint64_t *cycles, NumaTask *s)
{
  Kernel *k = nb->k;
  uint64_t pmd = n->e[idx] & ~PTE_SW_NUMA;
  PtNode *t = n->child[idx];
  uint64_t base = va & ~(k->pmd_bytes - 1);
  uint64_t restored = 0, pages = 0;
  int group_node = -1;
  for (unsigned i = 0; i < k->pmd_subpages; i++) {
    uint64_t e = t->e[i];
    restored += (e & PTE_SW_NUMA) != 0;
    if ((e & (PTE_P | PTE_SW_ZERO)) == PTE_P && group_node < 0)
      group_node = physmem_node_of(k->pm, pte_pfn(e));
    pages += (e & (PTE_P | PTE_SW_ZERO)) == PTE_P;
  }
  *cycles += (uint64_t)llround((double)restored * nb->pte_cycles);
  count_fault(cpu, s, group_node == cpu->node, MAX(pages, UINT64_C(1)));
  gboolean pass = filter_passes(nb, &pmd, cpu->node);
  uint64_t moved = 0;
  for (unsigned i = 0; i < k->pmd_subpages; i++) {
    /* An entry the scan left unmarked (a page of a VMA it did not reach,
     * under a PMD it marked whole) was never flushed: TLBs may hold it. */
    gboolean accessible = !(t->e[i] & PTE_SW_NUMA);
    uint64_t e = t->e[i] & ~PTE_SW_NUMA;
    pgtable_entry_set(t, i, e);
    uint64_t pva = base + ((uint64_t)i << k->base_shift);
    if (group_node == cpu->node || (e & (PTE_P | PTE_SW_ZERO)) != PTE_P ||
        physmem_node_of(k->pm, pte_pfn(e)) == cpu->node)
      continue;
    const Vma *pv = pva >= v->start && pva < v->end ? v : mm_find_vma(mm, pva);
    if (!pv || misplaced_rule(mm, pv, cpu->node) == MISPLACED_NEVER)
      continue;
    if (!pass) {
      cpu->ctr->c[CTR_NUMA_MIGRATE_FILTERED]++;
    } else if (migrate_base(nb, cpu, mm, pva, accessible, &e, cycles, s)) {
      pgtable_entry_set(t, i, e);
      moved++;
    }
  }
  pgtable_entry_set(n, idx, pmd);
  emit_hint(k, cpu, mm, "pmd", va, group_node, moved, *cycles);
  return FAULT_MAPPED;
}

FaultResult numa_balance_fault(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t va, AccessKind kind,
                               uint64_t *cycles)
{
  (void)kind;
  NumaBalance *nb = k->numa_balance;
  uint64_t before = *cycles;
  *cycles += nb->hint_cycles;
  /* The faulting task (task_numa_fault): it adapts its period first when
   * a pass ended since it last did. */
  NumaTask *s = cpu->cur && cpu->cur->mm == mm ? task_find(nb, cpu->cur) : NULL;
  if (s && s->seq != s->mm->seq) {
    adapt_period(nb, cpu, s);
    set_due(nb, cpu, cpu->cur, s); /* by the new period */
  }
  unsigned idx;
  PtNode *n = pmd_table(&mm->pt, va, &idx);
  FaultResult r = FAULT_MAPPED;
  if (n && is_huge(n->e[idx]) && (n->e[idx] & PTE_SW_NUMA))
    r = huge_fault(nb, cpu, mm, v, n, idx, va, cycles, s);
  else if (n && (n->e[idx] & PTE_P) && (n->e[idx] & PTE_SW_NUMA) && n->child[idx])
    r = pmd_group_fault(nb, cpu, mm, v, n, idx, va, cycles, s);
  else if (n && (n->e[idx] & PTE_P) && n->child[idx] &&
           (n->child[idx]->e[pgtable_index(&k->geo, 1, va)] & (PTE_P | PTE_SW_NUMA)) == (PTE_P | PTE_SW_NUMA))
    r = pte_fault(nb, cpu, mm, v, n->child[idx], va, cycles, s);
  cpu->ctr->c[CTR_NUMA_CYCLES] += *cycles - before;
  return r;
}
