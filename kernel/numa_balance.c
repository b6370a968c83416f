/* SPDX-License-Identifier: GPL-2.0-or-later */
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
 * The period (task_numa_fault, task_numa_placement, update_task_scan_period,
 * kernel/sched/fair.c of Linux 6.12, read for this model): each hinting
 * fault is counted for its task as private or shared (the page's
 * last_cpupid, kept in physmem) and local or remote; at the task's first
 * fault after a pass ended the period doubles or moves by the private and
 * local ratios, between task_scan_min and task_scan_max, which scale with
 * the RSS.  Under kernel.version=3.8 (KR_NUMA_SCAN_PERIOD_ADAPT) Linux
 * 3.8's task_numa_fault step and numa_next_reset instead.  doc/numa.md
 * states the rules.
 *
 * The filter: should_numa_migrate_memory of 6.12 on the page's
 * last_cpupid (KR_NUMA_LAST_CPUPID), or 3.8's page_xchg_last_nid; the pmd
 * scheme's group keeps its node in the table's PMD (NUMA_LAST_*).
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
 * Leaves out: task placement and numa_group (no task moves to its memory;
 * a task only knows whether it has a preferred node), the scheduler tick,
 * rate limiting of migrations, memory tiering, and the per-VMA access
 * history of recent kernels.
 */
#include "config.h"
#include "errors.h"
#include "numa_balance.h"
#include "numa_balance_impl.h"

#include "mempolicy.h"

#include <math.h>
#include "events.h"
#include "thp.h"
#include "rmap.h"

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
  uint64_t next_reset;    /* Linux 3.8's numa_next_reset (cycles): the next reset of the scan period */
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
  uint64_t seq;           /* the mm's pass count when it last adapted (p->numa_scan_seq) */
  /* numa_faults_locality[]: remote, local and failed-migration base pages
   * since the period last moved by the ratios (the doubling keeps them). */
  uint64_t local, remote, failed;
  /* Private and shared fault pages since the last placement (the
   * NUMA_MEMBUF part of numa_faults, summed over nodes). */
  uint64_t priv, shared;
  double period_max_ms;   /* numa_scan_period_max: task_scan_max at the last placement */
  gboolean preferred;     /* numa_preferred_nid is set: a placement saw faults */
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
  double scan_size_mb, window_mb_s, reset_ms, step_ms;
  /* The period's settings are whole milliseconds, as the kernel's unsigned
   * ints are: its divisions round down (ms_div).  A fractional one (a scaled
   * experiment) makes them exact. */
  gboolean integral_ms;
  /* kernel_has(KR_NUMA_SCAN_PERIOD_ADAPT), asked once: 6.12's
   * update_task_scan_period; FALSE: Linux 3.8's task_numa_fault step and
   * numa_next_reset. */
  gboolean adapt;
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
  /* change_pmd_protnuma and do_pmd_numa_page were removed in Linux 3.13. */
  if (numa_balance_rows[row] == &numa_balance_pmd && kernel_has(k, KR_NUMA_PTE_ONLY)) {
    g_autofree char *bal_w = settings_blame(s, SET_NUMA_BALANCING);
    g_autofree char *ver_w = settings_blame(s, SET_KERNEL_VERSION);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s: the PMD-granular scheme was in Linux 3.8 to 3.12, not in %s; set kernel.version=3.8 or "
                "numa.balancing=pte", bal_w, ver_w);
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
  nb->scan_size_mb = settings_double(s, SET_NUMA_SCAN_SIZE_MB);
  nb->window_mb_s = settings_double(s, SET_NUMA_MAX_SCAN_WINDOW_MB_S);
  nb->reset_ms = settings_double(s, SET_NUMA_SCAN_PERIOD_RESET_MS);
  nb->step_ms = settings_double(s, SET_NUMA_PERIOD_STEP_MS);
  nb->adapt = kernel_has(k, KR_NUMA_SCAN_PERIOD_ADAPT);
  nb->integral_ms = TRUE;
  const double whole[] = { nb->delay_ms, min_ms, max_ms, nb->scan_size_mb, nb->window_mb_s, nb->threshold_slots };
  for (unsigned i = 0; i < G_N_ELEMENTS(whole); i++)
    nb->integral_ms = nb->integral_ms && whole[i] == floor(whole[i]);
  double bytes = nb->scan_size_mb * 1024.0 * 1024.0;
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

/* a / b as the kernel divides its unsigned int milliseconds (rounding
 * down), or exactly when a setting is fractional (integral_ms). */
static double ms_div(const NumaBalance *nb, double a, double b)
{
  return nb->integral_ms ? floor(a / b) : a / b;
}

/* task_nr_scan_windows (kernel/sched/fair.c, 6.12): the address space's
 * RSS (get_mm_rss) in numa.scan_size_mb windows, rounded up; at least one. */
static uint64_t scan_windows(const NumaBalance *nb, const NumaMm *s)
{
  uint64_t win = nb->budget_pages, rss = s->mm->rss_pages;
  if (!rss)
    rss = win;
  return (rss + win - 1) / win;
}

/* task_scan_min (6.12): numa.scan_period_min_ms shared among the windows,
 * but no faster than MAX_SCAN_WINDOW MB/s (numa.max_scan_window_mb_s). */
static double task_scan_min(const NumaBalance *nb, const NumaMm *s)
{
  double windows = 1;
  if (nb->scan_size_mb < nb->window_mb_s)
    windows = ms_div(nb, nb->window_mb_s, nb->scan_size_mb);
  double floor_ms = ms_div(nb, 1000, windows);
  double scan = ms_div(nb, nb->min_ms, (double)scan_windows(nb, s));
  return MAX(floor_ms, scan);
}

/* task_scan_max (6.12) without a numa_group (whose shared faults scale it
 * up): numa.scan_period_max_ms shared among the windows, not below the
 * minimum. */
static double task_scan_max(const NumaBalance *nb, const NumaMm *s)
{
  double smin = task_scan_min(nb, s);
  double smax = ms_div(nb, nb->max_ms, (double)scan_windows(nb, s));
  return MAX(smin, smax);
}

/* init_numa_balancing (6.12): the first task of an address space starts at
 * once (node_stamp 0); a later one, cloned by `creator` (its leader when
 * the creator is of another address space), is staggered by
 *   min_t(unsigned int, task_scan_max(current),
 *         current->numa_scan_period * mm_users * NSEC_PER_MSEC)
 * nanoseconds, as the source reads: task_scan_max's milliseconds count as
 * nanoseconds there, and the product is cut to 32 bits (the two ticks the
 * kernel adds are left out with the tick).  Linux 3.8's sched_fork had no
 * stagger (not modelled: list under doc/model.md's version table). */
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
    /* mm_users before copy_mm takes the new thread's reference: the tasks there. */
    double product_ns = creator_ms * (double)s->tasks * 1e6;
    if (nb->integral_ms)
      product_ns = (double)(uint32_t)(uint64_t)product_ns;
    double delay_ns = MIN(task_scan_max(nb, s), product_ns);
    p->node_stamp = kernel_ns_to_cycles(nb->k, delay_ns);
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
    p->mm->next_reset = kcpu_now(cpu); /* Linux 3.8 __sched_fork */
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
  info->scan_min_ms = task_scan_min(nb, p->mm);
  info->scan_max_ms = task_scan_max(nb, p->mm);
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

/* update_task_scan_period (kernel/sched/fair.c, 6.12), from p's
 * numa_faults_locality and the shared and private fault pages its
 * placement gathered.  No local and no shared fault, or a failed
 * migration: the period doubles up to numa_scan_period_max and the address
 * space's next scan moves to now plus the new period, the counts kept
 * (the kernel returns before clearing them).  Otherwise, with
 * period_slot = DIV_ROUND_UP(period, NUMA_PERIOD_SLOTS), lr_ratio and
 * ps_ratio the local and private tenths and T = NUMA_PERIOD_THRESHOLD:
 * ps_ratio >= T grows it by max(ps_ratio - T, 1) slots, else lr_ratio >= T
 * by max(lr_ratio - T, 1) slots, else it shrinks by T - max(lr_ratio,
 * ps_ratio) slots; clamped to [task_scan_min, task_scan_max], and the
 * locality counts start again. */
static void update_task_scan_period(NumaBalance *nb, KCpu *cpu, NumaTask *p, uint64_t shared, uint64_t priv)
{
  uint64_t remote = p->remote, local = p->local;
  if (local + shared == 0 || p->failed) {
    set_period(nb, p, MIN(p->period_max_ms, p->period_ms * 2));
    p->mm->next_scan = kcpu_now(cpu) + p->period_cycles;
    return;
  }
  double t = nb->threshold_slots;
  double period_slot = nb->integral_ms ? ceil(p->period_ms / NUMA_PERIOD_SLOTS) : p->period_ms / NUMA_PERIOD_SLOTS;
  double lr_ratio = (double)(local * NUMA_PERIOD_SLOTS / (local + remote));
  /* priv + shared > 0 here: the placement runs at a fault, counted after
   * it, so every placement but the first has one (the first has local 0). */
  double ps_ratio = priv + shared ? (double)(priv * NUMA_PERIOD_SLOTS / (priv + shared)) : 0;
  double diff;
  if (ps_ratio >= t) {
    double slot = ps_ratio - t;
    diff = (slot == 0 ? 1 : slot) * period_slot;
  } else if (lr_ratio >= t) {
    double slot = lr_ratio - t;
    diff = (slot == 0 ? 1 : slot) * period_slot;
  } else {
    diff = -(t - MAX(lr_ratio, ps_ratio)) * period_slot;
  }
  set_period(nb, p, CLAMP(p->period_ms + diff, task_scan_min(nb, p->mm), task_scan_max(nb, p->mm)));
  p->local = p->remote = p->failed = 0;
}

/* task_numa_placement (6.12) as far as the model has it, at p's first
 * hinting fault after a pass over its address space ended (the kernel asks
 * at each fault once numa_migrate_retry has passed, and returns while
 * numa_scan_seq is unchanged): numa_scan_period_max = task_scan_max, the
 * buffered shared and private faults go to update_task_scan_period, and a
 * task that has taken faults has a preferred node from then on (the node
 * itself is not modelled: no task moves to its memory). */
static void task_numa_placement(NumaBalance *nb, KCpu *cpu, NumaTask *p)
{
  if (p->seq == p->mm->seq)
    return;
  p->seq = p->mm->seq;
  p->period_max_ms = task_scan_max(nb, p->mm);
  uint64_t shared = p->shared, priv = p->priv;
  p->shared = p->priv = 0;
  if (shared + priv)
    p->preferred = TRUE;
  update_task_scan_period(nb, cpu, p, shared, priv);
}

/* What a hinting fault tells task_numa_fault. */
typedef struct {
  uint64_t pages;       /* base pages of the folio (of the pmd scheme's group) */
  gboolean local;       /* TNF_FAULT_LOCAL: it was on the faulting CPU's node */
  gboolean failed;      /* TNF_MIGRATE_FAIL */
  uint16_t last_cpupid; /* the page's last_cpupid before the fault */
  /* Linux 3.8: calls of task_numa_fault for pages that did not move (one
   * for a page or THP fault; the pmd scheme's group calls per misplaced
   * page it tried). */
  uint64_t unmoved_calls;
} NumaFaultInfo;

/* cpupid as the model keeps it in a page (physmem_xchg_last_cpupid): the
 * node of the faulting CPU (cpupid_to_nid) in the high byte and the low
 * 8 bits of the task's pid (LAST__PID_SHIFT 8) in the low one; all ones
 * is the kernel's -1, unset. */
#define CPUPID_PID_MASK 0xffu
static inline uint16_t cpupid_make(int node, uint32_t pid)
{
  return (uint16_t)(((unsigned)node & 0xffu) << 8 | (pid & CPUPID_PID_MASK));
}
static inline gboolean cpupid_pid_unset(uint16_t c)
{
  return (c & CPUPID_PID_MASK) == CPUPID_PID_MASK;
}
static inline int cpupid_to_nid(uint16_t c)
{
  return c >> 8;
}
static inline gboolean cpupid_match_pid(uint32_t pid, uint16_t c)
{
  return (pid & CPUPID_PID_MASK) == (c & CPUPID_PID_MASK);
}

/* task_numa_fault (kernel/sched/fair.c) for the task p of the faulting
 * thread, pid its pid.  6.12: the placement first, then the fault is
 * private when the page's last_cpupid was unset or names this pid
 * (cpupid_match_pid; task_numa_group, which may make a shared fault count
 * otherwise, is not modelled), and its pages go to the private or shared
 * count and to numa_faults_locality (local or remote, failed).  Linux 3.8:
 * each call that migrated nothing adds numa.period_step_ms to the period,
 * up to numa.scan_period_max_ms, and the placement only notes the pass. */
static void task_numa_fault(NumaBalance *nb, KCpu *cpu, NumaTask *p, uint32_t pid, const NumaFaultInfo *fi)
{
  if (!nb->adapt) {
    if (fi->unmoved_calls)
      set_period(nb, p, MIN(nb->max_ms, p->period_ms + (double)fi->unmoved_calls * nb->step_ms));
    p->seq = p->mm->seq;
    return;
  }
  task_numa_placement(nb, cpu, p);
  if (cpupid_pid_unset(fi->last_cpupid) || cpupid_match_pid(pid, fi->last_cpupid))
    p->priv += fi->pages;
  else
    p->shared += fi->pages;
  if (fi->failed)
    p->failed += fi->pages;
  if (fi->local)
    p->local += fi->pages;
  else
    p->remote += fi->pages;
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
  /* change_pte_range's target_node (Linux 4.9 on). */
  nb->scan_node = kernel_has(k, KR_NUMA_SCAN_SKIP_LOCAL) && mm_threads(mm) == 1 ? cpu->node : -1;

  int64_t pages = (int64_t)nb->budget_pages;
  int64_t virt = pages * NUMA_VIRT_SCAN_FACTOR;
  uint64_t entries = 0, marked_total = 0, start = s->offset;
  uint64_t before_stall = kcpu_now(cpu);
  gboolean done = FALSE;
  guint i;
  for (i = mm_vma_index_from(mm, start); i < mm_vma_count(mm) && !done; i++) {
    const Vma *v = mm_vma(mm, i);
    /* A file VMA: 6.12 skips the read-only ones (shared library pages)
     * and scans the others; migrating a page-cache page is not modelled
     * (its frame is the page cache's, kernel/filemap.h), so none is scanned. */
    if ((v->flags & (MAP_F_HUGETLB | MAP_F_FILE)) || !(v->prot & (PROT_R | PROT_W | PROT_X)) || !policy_mof(mm, v))
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
    if (!p->node_stamp) /* task_scan_start (6.12), sysctl_numa_balancing_scan_period_min (3.8) */
      set_period(nb, p, nb->adapt ? task_scan_min(nb, p->mm) : nb->min_ms);
    p->node_stamp += period;
    if (kcpu_now(cpu) >= p->mm->next_scan) {
      if (!nb->adapt && kcpu_now(cpu) > p->mm->next_reset) {
        /* Linux 3.8 task_numa_work: "Reset the scan period if enough time
         * has gone by" (numa_next_reset starts at the fork, so the first
         * scan resets). */
        set_period(nb, p, nb->min_ms);
        p->mm->next_reset = kcpu_now(cpu) + ms_to_cycles(nb->k, nb->reset_ms);
      }
      scan(nb, cpu, p);
    }
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

/* Whether the filter is asked about a hinting fault (it records the
 * faulting CPU in the page as it decides), under rule r.  Since Linux 5.14
 * (KR_NUMA_MISPLACED_LOCAL) the default policy is MPOL_PREFERRED on the
 * CPU's node and mpol_misplaced leaves a page already there before the
 * filter; before, the default policy's MPOL_F_MORON step ran for every
 * fault, local or not (Linux 3.8's mpol_misplaced). */
static gboolean misplaced_asks_filter(const NumaBalance *nb, MisplacedRule r, gboolean local)
{
  if (!kernel_has(nb->k, KR_NUMA_MISPLACED_LOCAL))
    return r != MISPLACED_NEVER;
  return r == MISPLACED_MASK || (r == MISPLACED_PREFERRED && !local);
}

/* The two-stage filter on the last-node field of entry *e, which it
 * updates: the pmd scheme's group, whose node Linux 3.8 to 3.12 kept per
 * page table (the model keeps it in the table's PMD). */
static gboolean filter_passes(NumaBalance *nb, uint64_t *e, int node)
{
  int last = last_node(*e);
  *e = with_last_node(*e, node);
  return !nb->filter || last == node;
}

/* The migrate filter on the folio whose first frame is `folio`, for a
 * fault of thread pid (task p, NULL when the thread has none) from a CPU
 * of `node`; the folio's last_cpupid becomes this fault's.
 *
 * 6.12 (KR_NUMA_LAST_CPUPID), should_numa_migrate_memory without memory
 * tiering: a task without a preferred node, or in its first passes
 * (p->numa_scan_seq <= 4), migrates a page at a first or private fault at
 * once; otherwise a page whose last fault came from another node stays
 * (the two-stage filter), a private fault migrates, and a shared one too:
 * "A shared fault, but p->numa_group has not been set up yet" (numa_group
 * is not modelled, so the group rules after it are never reached).
 *
 * Linux 3.8, mpol_misplaced's MPOL_F_MORON step: page_xchg_last_nid, and
 * the page moves when its last fault came from this node (never at the
 * first, whose last_nid is -1).
 *
 * numa.migrate_filter=false keeps the recording and lets every misplaced
 * page through. */
static gboolean should_numa_migrate(NumaBalance *nb, const NumaTask *p, uint32_t pid, uint64_t folio, int node)
{
  PhysMem *pm = nb->k->pm;
  if (!kernel_has(nb->k, KR_NUMA_LAST_CPUPID)) {
    uint16_t last = physmem_xchg_last_cpupid(pm, folio, cpupid_make(node, CPUPID_PID_MASK));
    return !nb->filter || (last != PHYSMEM_CPUPID_UNSET && cpupid_to_nid(last) == node);
  }
  uint16_t last = physmem_xchg_last_cpupid(pm, folio, cpupid_make(node, pid));
  if (!nb->filter)
    return TRUE;
  gboolean young = !p || !p->preferred || p->seq <= 4;
  if (young && (cpupid_pid_unset(last) || cpupid_match_pid(pid, last)))
    return TRUE;
  if (!cpupid_pid_unset(last) && cpupid_to_nid(last) != node)
    return FALSE;
  return TRUE; /* private (cpupid_match_pid), or shared without a numa_group */
}

/* The first frame of the folio holding pfn: the THP's head, or pfn. */
static uint64_t folio_of(const Kernel *k, uint64_t pfn)
{
  uint64_t head;
  return thp_page_of(k, pfn, &head) ? head : pfn;
}

/* migrate_misplaced_folio: a page of 2^order frames from `old` to the
 * faulting CPU's node; the copy (which reads the old node's DRAM and writes
 * the new one's, waiting where they are loaded) and the fixed cost go to
 * *cycles.  The copy starts when the fault's work so far (*cycles) is done:
 * the pages of a pmd-scheme group are copied one after the other, not all
 * at the fault's start, where each would queue behind all the others.
 * FALSE (counted, and for task s) when the node has none. */
static gboolean migrate_alloc(NumaBalance *nb, KCpu *cpu, unsigned order, uint64_t old, uint64_t *pfn,
                              uint64_t *cycles, NumaFaultInfo *fi)
{
  Kernel *k = nb->k;
  if (!physmem_alloc_on(k->pm, cpu->node, order, MT_MOVABLE, pfn)) {
    cpu->ctr->c[CTR_PGMIGRATE_FAIL]++;
    fi->failed = TRUE; /* TNF_MIGRATE_FAIL: the task's period doubles */
    return FALSE;
  }
  /* folio_migrate_flags: the new folio takes the old one's last_cpupid. */
  physmem_xchg_last_cpupid(k->pm, *pfn, physmem_last_cpupid(k->pm, old));
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
                             uint64_t *cycles, NumaFaultInfo *fi)
{
  Kernel *k = nb->k;
  uint64_t old = pte_pfn(*e), pfn;
  if (thp_page_of(k, old, NULL))
    return FALSE;
  if (!migrate_alloc(nb, cpu, k->base_order, old, &pfn, cycles, fi))
    return FALSE;
  if (accessible)
    kernel_flush_tlb_4k(k, cpu, mm, va, va + k->base_bytes);
  *e = pte_make(pfn, *e & ~PTE_PFN_MASK);
  rmap_move(k, old, pfn); /* remove_migration_ptes: the new page is mapped where the old one was */
  physmem_release(k->pm, old, k->base_order);
  cpu->ctr->c[CTR_NUMA_PAGES_MIGRATED]++;
  cpu->ctr->c[CTR_PGMIGRATE_SUCCESS]++; /* migrate_pages: PGMIGRATE_SUCCESS per base page */
  return TRUE;
}

/* numa_migrate_check's vm events, and what task_numa_fault will be told. */
static void count_fault(KCpu *cpu, NumaFaultInfo *fi, gboolean local, uint64_t pages)
{
  cpu->ctr->c[CTR_NUMA_HINT_FAULTS]++;
  if (local)
    cpu->ctr->c[CTR_NUMA_HINT_FAULTS_LOCAL]++;
  fi->local = local;
  fi->pages = pages;
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
                             uint64_t *cycles, NumaTask *s, uint32_t pid, NumaFaultInfo *fi)
{
  Kernel *k = nb->k;
  unsigned i = pgtable_index(&k->geo, 1, va);
  uint64_t e = t->e[i] & ~PTE_SW_NUMA;
  uint64_t folio = folio_of(k, pte_pfn(e));
  int page_node = physmem_node_of(k->pm, pte_pfn(e));
  gboolean local = page_node == cpu->node;
  count_fault(cpu, fi, local, UINT64_C(1));
  fi->last_cpupid = physmem_last_cpupid(k->pm, folio);
  uint64_t moved = 0;
  if (misplaced_asks_filter(nb, misplaced_rule(mm, v, cpu->node), local)) {
    gboolean pass = should_numa_migrate(nb, s, pid, folio, cpu->node);
    if (!local && !pass)
      cpu->ctr->c[CTR_NUMA_MIGRATE_FILTERED]++;
    else if (!local && migrate_base(nb, cpu, mm, va & ~(k->base_bytes - 1), FALSE, &e, cycles, fi))
      moved = 1;
  }
  fi->unmoved_calls = !moved;
  pgtable_entry_set(t, i, e);
  emit_hint(k, cpu, mm, "pte", va, page_node, moved, *cycles);
  return FAULT_MAPPED;
}

/* do_huge_pmd_numa_page: the THP moves whole. */
static FaultResult huge_fault(NumaBalance *nb, KCpu *cpu, Mm *mm, const Vma *v, PtNode *n, unsigned idx,
                              uint64_t va, uint64_t *cycles, NumaTask *s, uint32_t pid, NumaFaultInfo *fi)
{
  Kernel *k = nb->k;
  uint64_t e = n->e[idx] & ~PTE_SW_NUMA;
  uint64_t old = pte_pfn(e);
  int page_node = physmem_node_of(k->pm, old);
  gboolean local = page_node == cpu->node;
  count_fault(cpu, fi, local, k->pmd_subpages);
  fi->last_cpupid = physmem_last_cpupid(k->pm, old);
  uint64_t moved = 0, pfn;
  if (misplaced_asks_filter(nb, misplaced_rule(mm, v, cpu->node), local)) {
    gboolean pass = should_numa_migrate(nb, s, pid, old, cpu->node);
    if (!local && !pass) {
      cpu->ctr->c[CTR_NUMA_MIGRATE_FILTERED]++;
    } else if (!local && migrate_alloc(nb, cpu, k->pmd_order, old, &pfn, cycles, fi)) {
      thp_unmap_pmd(k, old); /* frees the old THP and its registration */
      thp_page_add(k, pfn);
      e = pte_make(pfn, e & ~PTE_PFN_MASK);
      moved = k->pmd_subpages;
      cpu->ctr->c[CTR_NUMA_PAGES_MIGRATED] += moved;
      cpu->ctr->c[CTR_PGMIGRATE_SUCCESS] += moved;
    }
  }
  fi->unmoved_calls = !moved;
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
                                   uint64_t va, uint64_t *cycles, NumaFaultInfo *fi)
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
  count_fault(cpu, fi, group_node == cpu->node, MAX(pages, UINT64_C(1)));
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
    } else if (migrate_base(nb, cpu, mm, pva, accessible, &e, cycles, fi)) {
      pgtable_entry_set(t, i, e);
      moved++;
    } else {
      fi->unmoved_calls++; /* do_pmd_numa_page: task_numa_fault(curr_nid, 1, false) */
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
  /* The faulting task (current): its pid goes into the page's last_cpupid. */
  NumaTask *s = cpu->cur && cpu->cur->mm == mm ? task_find(nb, cpu->cur) : NULL;
  uint32_t pid = cpu->cur ? cpu->cur->tid : mm->pid;
  NumaFaultInfo fi = { .last_cpupid = PHYSMEM_CPUPID_UNSET };
  unsigned idx;
  PtNode *n = pmd_table(&mm->pt, va, &idx);
  FaultResult r = FAULT_MAPPED;
  gboolean handled = TRUE;
  if (n && is_huge(n->e[idx]) && (n->e[idx] & PTE_SW_NUMA))
    r = huge_fault(nb, cpu, mm, v, n, idx, va, cycles, s, pid, &fi);
  else if (n && (n->e[idx] & PTE_P) && (n->e[idx] & PTE_SW_NUMA) && n->child[idx])
    r = pmd_group_fault(nb, cpu, mm, v, n, idx, va, cycles, &fi);
  else if (n && (n->e[idx] & PTE_P) && n->child[idx] &&
           (n->child[idx]->e[pgtable_index(&k->geo, 1, va)] & (PTE_P | PTE_SW_NUMA)) == (PTE_P | PTE_SW_NUMA))
    r = pte_fault(nb, cpu, mm, v, n->child[idx], va, cycles, s, pid, &fi);
  else
    handled = FALSE;
  /* task_numa_fault, after the migration as do_numa_page calls it. */
  if (s && handled) {
    double period = s->period_ms;
    task_numa_fault(nb, cpu, s, pid, &fi);
    if (s->period_ms != period)
      set_due(nb, cpu, cpu->cur, s); /* by the new period */
  }
  cpu->ctr->c[CTR_NUMA_CYCLES] += *cycles - before;
  return r;
}
