/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * khugepaged.c - the khugepaged daemon and the collapse of a 2M range into a
 * huge page, shared with madvise(MADV_COLLAPSE).
 *
 * Models (mm/khugepaged.c, Linux 6.x):
 * - The scan list of mms (__khugepaged_enter appends behind the cursor) and
 *   the one cursor (mm, address).  A wake (khugepaged_do_scan) calls
 *   khugepaged_scan_mm_slot with what is left of khugepaged.pages_to_scan
 *   until that budget is spent, or the list head was passed twice.
 * - Progress as the kernel charges it: 1 for each visit of an mm, 1 for each
 *   VMA skipped (THP not allowed, or the cursor past its last aligned
 *   range), 512 for each 2M range scanned.  After a range went on to a
 *   collapse (the mmap lock was dropped) the mm walk returns and the wake
 *   calls it again with the budget left: a wake goes on after a collapse.
 * - Sleeps: khugepaged.scan_sleep_millisecs after each wake, and from the
 *   start of one wake to the next at least khugepaged.min_wake_gap_us (a
 *   scheduler tick: at 0 ms khugepaged_wait_work does not sleep);
 *   khugepaged.alloc_sleep_millisecs in the middle of a wake at its first
 *   failed huge allocation, after which the wake resumes where it stopped;
 *   a second failure in the same wake ends it.  The first mm registered on
 *   an empty list wakes the daemon at once.  With thp.enabled=never the
 *   thread does not run.
 * - One range (hpage_collapse_scan_pmd): the VMA checks of
 *   hugepage_vma_revalidate (SCAN_ADDRESS_RANGE, SCAN_VMA_CHECK), the PMD
 *   (SCAN_PMD_NULL, SCAN_PMD_NONE, SCAN_PMD_MAPPED), the 512 PTEs summed in
 *   ThpRangeStats,
 *   then the THP policy's verdict.  MADV_COLLAPSE ignores the sysfs knobs
 *   (thp.enabled, max_ptes_*, the young-page rule and the policy) and needs
 *   only one writable page, as with cc->is_khugepaged false.
 * - The collapse (collapse_huge_page): an order-9 page from the node holding
 *   most source pages or a node tied with it (hpage_collapse_find_target_node,
 *   alloc_charge_folio; 3.8: the first page's node), compacting when
 *   khugepaged.defrag is set (always for MADV_COLLAPSE); the PMD cleared
 *   with its PTE table unhooked and a TLB shootdown of the 2M range
 *   (pmdp_collapse_flush); the present pages copied, holes and zero-page
 *   PTEs cleared; the huge PMD installed accessed, dirty and writable when
 *   the VMA is (mk_huge_pmd, pmd_mkdirty, maybe_pmd_mkwrite); the old table
 *   deposited; the old pages freed.
 * Costs: khugepaged.scan_pte_ns for each entry the scan examines (one for an
 * mm visit, a skipped VMA or a range's PMD, 512 for its PTE table); the
 * copy at mem.copy_*, the clearing at mem.clear_*, the shootdown at
 * tlb.*; compaction as compact.scan_page_ns and compact.migrate_page_ns.
 * The daemon's work stalls the CPU of khugepaged.cpu.
 * Leaves out: the mmap lock (a collapse never waits for, nor blocks, the
 * workload's faults), swap-in (no swap), file and shmem collapse, the
 * anon_vma condition of hugepage_vma_check (a never-written VMA is scanned,
 * not skipped), page isolation and LRU work, and the switch into the kthread.
 * doc/khugepaged.md has the details.
 */
#include "config.h"
#include "errors.h"
#include "khugepaged.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include "events.h"
#include "kernel.h"
#include "mempolicy.h"

/* next_wake when the daemon is due at once: the caller's `now` is the time. */
#define KH_WAKE_NOW UINT64_C(0)
#define KH_IDLE UINT64_MAX

/* Who asks for a collapse (struct collapse_control; its node_load[] is
 * Khugepaged.node_load, its alloc_nmask is made by target_node()). */
typedef struct {
  gboolean is_khugepaged;
} CollapseControl;

struct Khugepaged {
  Kernel *k;
  GPtrArray *mms;         /* Mm *, scan order (khugepaged_scan.mm_head) */
  int cur;                /* index in mms of the mm under the cursor; -1: at the head */
  uint64_t address;       /* next address to scan in that mm */
  uint64_t next_wake;     /* cycles; KH_WAKE_NOW or KH_IDLE */
  CollapseControl cc;     /* the daemon's (khugepaged_collapse_control) */
  /* A wake interrupted by the alloc sleep resumes with this state. */
  gboolean resuming;
  unsigned resume_progress, resume_passes;
  /* settings, read once */
  gboolean running;       /* thp.enabled is not never: the kthread exists */
  unsigned pages_to_scan;
  uint64_t scan_sleep_cycles, alloc_sleep_cycles;
  uint64_t min_gap_cycles;  /* khugepaged.min_wake_gap_us, at least 1 */
  double entry_cycles;    /* khugepaged.scan_pte_ns in cycles */

  gboolean defrag;
  unsigned cpu;
  /* geometry: a PMD maps pmd_nr base pages of page_bytes, order pmd_order */
  uint64_t pmd_bytes, page_bytes;
  unsigned pmd_nr, pmd_order;
  /* scratch, sized once */
  unsigned *node_load;    /* source pages per node of the range scanned */
  int first_node;         /* node of its first mapped page, -1 before one */
  uint64_t *old;          /* the PTEs of a table being collapsed */
};

static uint64_t ms_to_cycles(const Kernel *k, int64_t ms)
{
  return (uint64_t)llround((double)ms * 1e6 * k->cycles_per_ns);
}

Khugepaged *khugepaged_new(Kernel *k, GError **error)
{
  g_return_val_if_fail(k != NULL && k->s != NULL, NULL);
  const Settings *s = k->s;
  int64_t n_cpus = settings_int(s, SET_MACHINE_NODES) * settings_int(s, SET_MACHINE_CPUS_PER_NODE);
  int64_t cpu;
  if (!kernel_cpu_setting(s, SET_KHUGEPAGED_CPU, "the last one", &cpu, error))
    return NULL;
  Khugepaged *kh = g_new0(Khugepaged, 1);
  kh->k = k;
  kh->mms = g_ptr_array_new();
  kh->cur = -1;
  kh->next_wake = KH_IDLE;
  kh->cc = (CollapseControl){ .is_khugepaged = TRUE };
  kh->running = thp_pmd_enabled(k);
  kh->pages_to_scan = (unsigned)settings_int(s, SET_KHUGEPAGED_PAGES_TO_SCAN);
  kh->scan_sleep_cycles = ms_to_cycles(k, settings_int(s, SET_KHUGEPAGED_SCAN_SLEEP_MS));
  kh->alloc_sleep_cycles = ms_to_cycles(k, settings_int(s, SET_KHUGEPAGED_ALLOC_SLEEP_MS));
  kh->min_gap_cycles = MAX((uint64_t)llround((double)settings_int(s, SET_KHUGEPAGED_MIN_WAKE_GAP_US) * 1e3 * k->cycles_per_ns), 1);
  kh->entry_cycles = settings_double(s, SET_KHUGEPAGED_PAGE_SCAN_NS) * k->cycles_per_ns;
  kh->defrag = settings_bool(s, SET_KHUGEPAGED_DEFRAG);
  kh->cpu = (unsigned)(cpu < 0 ? n_cpus - 1 : cpu);
  kh->page_bytes = UINT64_C(1) << k->geo.page_shift;
  kh->pmd_bytes = pgtable_entry_span(&k->geo, 2);
  kh->pmd_nr = 1u << k->geo.bits[1];
  kh->pmd_order = k->pmd_order; /* in 4K frames of the buddy allocator */
  kh->node_load = g_new0(unsigned, (gsize)settings_int(s, SET_MACHINE_NODES));
  kh->old = g_new(uint64_t, kh->pmd_nr);
  return kh;
}

void khugepaged_free(Khugepaged *kh)
{
  if (!kh)
    return;
  g_ptr_array_free(kh->mms, TRUE);
  g_free(kh->node_load);
  g_free(kh->old);
  g_free(kh);
}

KCpu *khugepaged_cpu(const Khugepaged *kh)
{
  g_return_val_if_fail(kh != NULL && kh->cpu < kh->k->n_cpus, NULL);
  return kh->k->cpus[kh->cpu];
}

guint khugepaged_mm_count(const Khugepaged *kh)
{
  return kh->mms->len;
}

uint64_t khugepaged_next_wake(const Khugepaged *kh)
{
  return kh->next_wake;
}

const uint64_t *khugepaged_next_wake_ptr(const Khugepaged *kh)
{
  return &kh->next_wake;
}

/* ---- the scan list ---------------------------------------------------------- */

void khugepaged_enter(Khugepaged *kh, Mm *mm)
{
  g_return_if_fail(kh != NULL && mm != NULL);
  if (!kh->running || mm->khugepaged_listed)
    return;
  gboolean wakeup = kh->mms->len == 0;
  g_ptr_array_add(kh->mms, mm); /* list_add_tail: just behind the cursor */
  mm->khugepaged_listed = TRUE;
  if (wakeup)
    kh->next_wake = KH_WAKE_NOW;
}

void khugepaged_enter_vma(Khugepaged *kh, Mm *mm, const Vma *v)
{
  g_return_if_fail(kh != NULL && mm != NULL && v != NULL);
  if (!mm->khugepaged_listed && thp_vma_allowed(kh->k, mm, v))
    khugepaged_enter(kh, mm);
}

void khugepaged_exit(Khugepaged *kh, Mm *mm)
{
  g_return_if_fail(kh != NULL && mm != NULL);
  guint i;
  if (!mm->khugepaged_listed || !g_ptr_array_find(kh->mms, mm, &i))
    return;
  g_ptr_array_remove_index(kh->mms, i);
  mm->khugepaged_listed = FALSE;
  if (kh->cur == (int)i) {
    /* The cursor moves to the next mm, as collect_mm_slot leaves it. */
    kh->address = 0;
    if (i >= kh->mms->len)
      kh->cur = -1;
  } else if (kh->cur > (int)i) {
    kh->cur--;
  }
  if (kh->mms->len == 0) {
    kh->cur = -1;
    kh->resuming = FALSE;
    kh->next_wake = KH_IDLE;
  }
}

/* ---- one range -------------------------------------------------------------- */

static void charge_entries(Khugepaged *kh, KCpu *cpu, unsigned entries)
{
  kernel_stall(kh->k, cpu, (uint64_t)llround(entries * kh->entry_cycles));
}

/* find_vma(): the first VMA ending above va, or NULL. */
static const Vma *vma_from(const Mm *mm, uint64_t va, guint *index)
{
  guint lo = mm_vma_index_from(mm, va);
  if (index)
    *index = lo;
  return lo < mm_vma_count(mm) ? mm_vma(mm, lo) : NULL;
}

/* hugepage_vma_check() as khugepaged (sysfs enforced) or MADV_COLLAPSE (not)
 * calls it. */
static gboolean collapse_vma_allowed(const Kernel *k, const Mm *mm, const Vma *v, const CollapseControl *cc)
{
  if (cc->is_khugepaged)
    return thp_vma_allowed(k, mm, v);
  return !(v->flags & (MAP_F_HUGETLB | MAP_F_FILE)) && !mm->thp_disable && v->thp != VMA_THP_NOHUGEPAGE;
}

/* Where the huge page of a collapse may come from.
 * 6.12 (mm/khugepaged.c hpage_collapse_find_target_node and
 * alloc_charge_folio, read in the 6.x source): the first node with the most
 * source pages in node_load[]; the allocation's node mask (cc->alloc_nmask)
 * is every node whose count equals that maximum (all nodes when the range
 * holds no page of its own), and __folio_alloc(gfp, order, node, nmask)
 * tries the target, then the other nodes of the mask nearest to it.
 * 3.8 (mm/huge_memory.c khugepaged_scan_pmd and khugepaged_alloc_page): the
 * node of the first page the scan met, passed as the local node to
 * alloc_hugepage_vma, so the VMA's policy places the page and it may fall
 * back to any node the policy allows. */
static void target_node(Khugepaged *kh, Mm *mm, const Vma *v, uint64_t haddr, MemPlacement *p)
{
  Kernel *k = kh->k;
  int nodes = physmem_nodes(k->pm), target = 0;
  if (!kernel_has(k, KR_KHUGEPAGED_TARGET_NODE)) {
    mempolicy_place(k, mm, v, haddr, kh->pmd_order, (unsigned)MAX(kh->first_node, 0), p);
    return;
  }
  unsigned max = 0;
  for (int n = 0; n < nodes; n++)
    if (kh->node_load[n] > max) {
      max = kh->node_load[n];
      target = n;
    }
  *p = (MemPlacement){ .node = target, .from = target };
  for (int n = 0; n < nodes; n++)
    if (kh->node_load[n] == max)
      p->allowed |= UINT64_C(1) << n;
}

static void emit_collapse(Khugepaged *kh, const CollapseControl *cc, KCpu *cpu, Mm *mm, uint64_t haddr, ScanResult r,
                          const ThpRangeStats *st, int node, uint64_t cycles)
{
  Kernel *k = kh->k;
  if (!events_enabled(k->ev))
    return;
  events_emit(k->ev, kernel_now_ns(k, cpu), cpu->id, mm->pid, 0, "collapse",
              "va=%#" G_GINT64_MODIFIER "x result=%s by=%s present=%u none=%u zero=%u node=%d cycles=%" G_GUINT64_FORMAT,
              haddr, thp_scan_result_name(r), cc->is_khugepaged ? "khugepaged" : "madvise",
              st->present, st->none, st->zero, node, cycles);
}

/* collapse_huge_page(): the range passed the scan; `table` is its PTE table. */
static ScanResult collapse_huge_page(Khugepaged *kh, CollapseControl *cc, KCpu *cpu, Mm *mm, const Vma *v,
                                     uint64_t haddr, const PtNode *table, const ThpRangeStats *st)
{
  Kernel *k = kh->k;
  MemPlacement where;
  target_node(kh, mm, v, haddr, &where);
  int node = where.node;
  uint64_t hpfn, compact_cycles = 0;
  /* alloc_hugepage_khugepaged_gfpmask: GFP_TRANSHUGE (direct compaction)
   * with khugepaged.defrag, else GFP_TRANSHUGE_LIGHT; GFP_TRANSHUGE always
   * for MADV_COLLAPSE. */
  CompactMode compact = !cc->is_khugepaged || kh->defrag ? COMPACT_MODE_SYNC : COMPACT_MODE_NONE;
  gboolean got = thp_alloc_nodemask(k, cpu, &where, compact, &hpfn, &compact_cycles);
  if (compact_cycles)
    kernel_stall(k, cpu, compact_cycles);
  if (!got) {
    cpu->ctr->c[CTR_THP_COLLAPSE_ALLOC_FAILED]++;
    emit_collapse(kh, cc, cpu, mm, haddr, SCAN_ALLOC_HUGE_PAGE_FAIL, st, node, 0);
    return SCAN_ALLOC_HUGE_PAGE_FAIL;
  }
  cpu->ctr->c[CTR_THP_COLLAPSE_ALLOC]++;
  node = physmem_node_of(k->pm, hpfn);
  kernel_drain(kh->k, cpu);
  uint64_t t0 = kcpu_now(cpu);

  /* pmdp_collapse_flush: the PMD is cleared, its table kept for the deposit,
   * every CPU that ran the mm drops the range. */
  memcpy(kh->old, table->e, kh->pmd_nr * sizeof *kh->old);
  uint64_t table_pfn;
  if (!pgtable_take_table(&mm->pt, haddr, 1, &table_pfn)) {
    g_critical("collapse at %#" G_GINT64_MODIFIER "x: the PTE table vanished", haddr);
    physmem_release(k->pm, hpfn, kh->pmd_order);
    return SCAN_PMD_NULL;
  }
  /* The old table goes: no walk cache may point at it. */
  kernel_flush_tlb(k, cpu, mm, haddr, haddr + kh->pmd_bytes, PAGE_SHIFT_4K, TRUE);

  /* __collapse_huge_page_copy: copy what is mapped, clear the rest.  The
   * copy reads the old pages and writes the new one; both are charged to
   * the new page's node, where most old pages are (target_node). */
  uint64_t own = st->present, holes = kh->pmd_nr - st->present;
  uint64_t copy = kernel_copy_cycles(k, own * kh->page_bytes) + kernel_clear_cycles(k, holes * kh->page_bytes);
  copy += kernel_dram_bulk(k, cpu, hpfn, (2 * own + holes) * kh->page_bytes, 0, copy);
  kernel_stall(kh->k, cpu, copy);
  /* Its lines in the daemon CPU's caches: __collapse_huge_page_copy (Linux
   * 6.12) goes up the PTEs, clear_user_highpage for a none or zero-page
   * entry, copy_mc_user_highpage (source read, destination written) for
   * the others. */
  if (k->clear_cached) {
    uint64_t frames = kh->page_bytes >> 12;
    kernel_fills_begin(k);
    for (unsigned i = 0; i < kh->pmd_nr; i++) {
      uint64_t e = kh->old[i];
      gboolean clear = !(e & PTE_P) || (e & PTE_SW_ZERO);
      kernel_fills_add(k, hpfn + i * frames, clear ? KERNEL_FILL_CLEAR : pte_pfn(e), kh->page_bytes);
    }
    kernel_fills_end(k, cpu);
  }

  uint64_t flags = PTE_P | PTE_US | PTE_PS | PTE_A | PTE_D;
  if (v->prot & PROT_W)
    flags |= PTE_RW;
  if (!(v->prot & PROT_X))
    flags |= PTE_NX;
  if (!pgtable_set(&mm->pt, haddr, 2, pte_make(hpfn, flags), NULL))
    g_critical("collapse at %#" G_GINT64_MODIFIER "x: the huge PMD could not be installed", haddr);
  mm_deposit(mm, haddr, table_pfn);
  thp_page_add(k, hpfn); /* a PMD-mapped THP like one from a fault */
  /* The base pages touched before count as touched in the huge page. */
  for (unsigned i = 0; i < kh->pmd_nr; i++)
    if (kh->old[i] & PTE_P)
      kernel_touch_mark(k, mm, haddr, kh->pmd_bytes, haddr + (uint64_t)i * kh->page_bytes);

  /* The old pages go back to the buddy allocator (the zero page stays).
   * Subpages of an earlier, split THP settle with it: the THP is freed when
   * none of it stays mapped, else it waits on the deferred split queue. */
  GPtrArray *thps = NULL;
  uint64_t freed = 0; /* 4K frames */
  for (unsigned i = 0; i < kh->pmd_nr; i++) {
    uint64_t e = kh->old[i];
    if (!(e & PTE_P) || (e & PTE_SW_ZERO))
      continue;
    if (!thp_unmap_pte(k, pte_pfn(e), &thps)) {
      physmem_release(k->pm, pte_pfn(e), k->base_order);
      freed += UINT64_C(1) << k->base_order;
    }
  }
  if (thps) {
    freed += thp_unmap_settle(k, cpu, thps);
    g_ptr_array_free(thps, TRUE);
  }
  /* __collapse_huge_page_copy_succeeded: add_mm_counter(MM_ANONPAGES, 1)
   * for each empty or zero-page PTE (6.12); the present pages stay counted. */
  mm->rss_pages += kh->pmd_nr - st->present;
  /* Memory in use grows by the huge page and shrinks by what was freed:
   * with only base pages before, the bloat of max_ptes_none (the holes). */
  cpu->ctr->c[CTR_MEM_USED_BYTES] += kh->pmd_nr * kh->page_bytes;
  cpu->ctr->c[CTR_MEM_USED_BYTES] -= MIN(cpu->ctr->c[CTR_MEM_USED_BYTES], freed * 4096);
  uint64_t cycles = kcpu_now(cpu) - t0;
  cpu->ctr->c[CTR_COLLAPSE_CYCLES] += cycles;
  emit_collapse(kh, cc, cpu, mm, haddr, SCAN_SUCCEED, st, node, cycles);
  return SCAN_SUCCEED;
}

/* hpage_collapse_scan_pmd()'s walk of one PMD range: the PMD as
 * find_pmd_or_thp_or_none() sees it, then every PTE of its table. */
typedef struct {
  Khugepaged *kh;
  ScanResult r;        /* SCAN_PMD_NULL until the PMD is found */
  const PtNode *table; /* that table */
  ThpRangeStats st;
} ScanWalk;

/* find_pmd_or_thp_or_none() (mm/khugepaged.c, 6.12): no PMD table
 * (mm_find_pmd finds no PUD entry) is SCAN_PMD_NULL; an empty PMD entry in
 * a PMD table is SCAN_PMD_NONE; a PMD not present is SCAN_PMD_NULL; a huge
 * one SCAN_PMD_MAPPED. */
static int scan_pmd_hole(PtWalk *w, uint64_t addr, uint64_t next, unsigned level)
{
  ScanWalk *sw = w->ctx;
  sw->r = level == 2 ? SCAN_PMD_NONE : SCAN_PMD_NULL;
  return 1;
}

static int scan_pmd_entry(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  ScanWalk *sw = w->ctx;
  if (pte_huge(e, 2)) {
    sw->r = SCAN_PMD_MAPPED;
    return 1;
  }
  if (!pte_present(e) || !w->below)
    return 1; /* not present: SCAN_PMD_NULL */
  sw->r = SCAN_SUCCEED;
  sw->table = w->below;
  return 0;
}

/* Reading the PTEs leaves their accessed bits alone, as
 * hpage_collapse_scan_pmd does (it tests pte_young, clears nothing). */
static int scan_pte(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  ScanWalk *sw = w->ctx;
  ThpRangeStats *st = &sw->st;
  if (pte_none(e)) {
    st->none++;
  } else if (!pte_present(e)) {
    st->swap++; /* a non-present entry that is not empty: none exist without swap */
  } else if (pte_zero_page(e)) {
    st->zero++;
  } else {
    st->present++;
    st->writable += pte_write(e);
    st->young += pte_young(e);
    /* st->shared stays 0: no anonymous page is mapped by two mms (no fork) */
    /* hpage_collapse_scan_abort() never stops the scan: it needs
     * node_reclaim_mode, which the model does not have (its default, 0). */
    int node = physmem_node_of(sw->kh->k->pm, pte_pfn(e));
    if (node >= 0) {
      sw->kh->node_load[node]++;
      if (sw->kh->first_node < 0)
        sw->kh->first_node = node;
    }
  }
  return 0;
}

static const PtWalkOps scan_ops = { .pmd_entry = scan_pmd_entry, .pte_entry = scan_pte, .pte_hole = scan_pmd_hole };

/* hpage_collapse_scan_pmd() and, when the range qualifies, the collapse.
 * *collapsing tells whether collapse_huge_page ran (the kernel drops the
 * mmap lock there, which ends the mm walk). */
static ScanResult scan_range(Khugepaged *kh, CollapseControl *cc, KCpu *cpu, Mm *mm, uint64_t haddr,
                             gboolean *collapsing)
{
  Kernel *k = kh->k;
  *collapsing = FALSE;
  unsigned entries = 1; /* the VMA and PMD look-up */
  ScanResult r;
  const Vma *v = vma_from(mm, haddr, NULL);
  ScanWalk sw = { .kh = kh, .r = SCAN_PMD_NULL };
  if (!v) {
    r = SCAN_VMA_CHECK; /* the kernel's SCAN_VMA_NULL */
  } else if (!thp_range_in_vma(k, v, haddr)) {
    r = SCAN_ADDRESS_RANGE;
  } else if (!collapse_vma_allowed(k, mm, v, cc)) {
    r = SCAN_VMA_CHECK;
  } else {
    memset(kh->node_load, 0, (gsize)physmem_nodes(k->pm) * sizeof *kh->node_load);
    kh->first_node = -1;
    pgtable_walk(&mm->pt, haddr, haddr + kh->pmd_bytes, &scan_ops, &sw);
    r = sw.r;
  }
  if (r != SCAN_SUCCEED) {
    charge_entries(kh, cpu, entries);
    cpu->ctr->c[CTR_SCAN_PMD_NULL + r]++;
    return r;
  }

  /* The PTEs, counted by the walk (scan_pte). */
  ThpRangeStats st = sw.st;
  entries += kh->pmd_nr;
  charge_entries(kh, cpu, entries);
  if (cc->is_khugepaged)
    r = k->thp->collapse_check(k, mm, v, &st);
  else
    r = st.writable ? SCAN_SUCCEED : SCAN_PAGE_RO; /* MADV_COLLAPSE: only SCAN_PAGE_RO applies */
  if (r == SCAN_SUCCEED && st.swap)
    r = SCAN_EXCEED_SWAP_PTE; /* swap-in is not modelled */
  if (r == SCAN_SUCCEED) {
    *collapsing = TRUE;
    r = collapse_huge_page(kh, cc, cpu, mm, v, haddr, sw.table, &st);
  }
  if (r != SCAN_SUCCEED)
    cpu->ctr->c[CTR_SCAN_PMD_NULL + r]++;
  return r;
}

ScanResult khugepaged_collapse(Khugepaged *kh, KCpu *cpu, Mm *mm, uint64_t haddr, gboolean madv_collapse)
{
  g_return_val_if_fail(kh != NULL && cpu != NULL && mm != NULL, SCAN_VMA_CHECK);
  g_return_val_if_fail((haddr & (kh->pmd_bytes - 1)) == 0, SCAN_ADDRESS_RANGE);
  CollapseControl madv = { .is_khugepaged = FALSE };
  gboolean collapsing;
  return scan_range(kh, madv_collapse ? &madv : &kh->cc, cpu, mm, haddr, &collapsing);
}

/* madvise_collapse_errno() (mm/khugepaged.c, 6.12): what madvise returns
 * when a range of the VMA was not collapsed, from the last failure. */
static int madvise_collapse_errno(ScanResult r)
{
  switch (r) {
  case SCAN_ALLOC_HUGE_PAGE_FAIL:
    return -ENOMEM;
  case SCAN_EXCEED_NONE_PTE:
    return -EBUSY;
  default:
    return -EINVAL;
  }
}

/* madvise_collapse() (mm/khugepaged.c, 6.12) for one VMA's part
 * [start, end) of the advised range. */
static int madvise_collapse_vma(Khugepaged *kh, KCpu *cpu, Mm *mm, const Vma *v, uint64_t start, uint64_t end)
{
  CollapseControl cc = { .is_khugepaged = FALSE };
  /* thp_vma_allowable_order without the sysfs knobs: EINVAL before any
   * range is looked at (counted here as a VMA-check refusal). */
  if (!collapse_vma_allowed(kh->k, mm, v, &cc)) {
    cpu->ctr->c[CTR_SCAN_VMA_CHECK]++;
    return -EINVAL;
  }
  uint64_t mask = kh->pmd_bytes - 1;
  uint64_t hstart = (start + mask) & ~mask, hend = end & ~mask;
  uint64_t thps = 0, ranges = hend > hstart ? (hend - hstart) / kh->pmd_bytes : 0;
  ScanResult last_fail = SCAN_VMA_CHECK; /* the kernel's SCAN_FAIL: EINVAL */
  for (uint64_t a = hstart; a < hend; a += kh->pmd_bytes) {
    gboolean collapsing;
    ScanResult r = scan_range(kh, &cc, cpu, mm, a, &collapsing);
    switch (r) {
    case SCAN_SUCCEED:
    case SCAN_PMD_MAPPED:
      thps++;
      break;
    /* The results after which the kernel goes on to the next range (of
     * those the model meets; SCAN_PTE_NON_PRESENT, SCAN_PTE_UFFD_WP and
     * the page-state ones cannot happen here). */
    case SCAN_PMD_NULL:
    case SCAN_PAGE_RO:
    case SCAN_LACK_REFERENCED_PAGE:
      last_fail = r;
      break;
    default: /* SCAN_PMD_NONE, SCAN_ALLOC_HUGE_PAGE_FAIL, ...: the call ends */
      return madvise_collapse_errno(r);
    }
  }
  return thps == ranges ? 0 : madvise_collapse_errno(last_fail);
}

int khugepaged_madvise_collapse(Khugepaged *kh, KCpu *cpu, Mm *mm, uint64_t start, uint64_t end)
{
  g_return_val_if_fail(kh != NULL && cpu != NULL && mm != NULL, -EINVAL);
  guint i;
  vma_from(mm, start, &i);
  /* madvise_walk_vmas: each VMA's part of the range, in order; an error
   * from one ends the call, a hole in the range is ENOMEM at the end. */
  int unmapped = 0;
  uint64_t at = start;
  for (; i < mm_vma_count(mm) && mm_vma(mm, i)->start < end; i++) {
    const Vma *v = mm_vma(mm, i);
    if (v->start > at)
      unmapped = -ENOMEM;
    uint64_t lo = MAX(start, v->start), hi = MIN(end, v->end);
    int err = madvise_collapse_vma(kh, cpu, mm, v, lo, hi);
    if (err)
      return err;
    at = hi;
  }
  return at < end ? -ENOMEM : unmapped;
}

/* ---- the daemon ------------------------------------------------------------- */

/* khugepaged_scan_mm_slot(): walk the mm under the cursor from its address
 * until `pages` of progress, a collapse, or the end of its VMAs. */
static unsigned scan_mm_slot(Khugepaged *kh, KCpu *cpu, unsigned pages, ScanResult *result)
{
  Kernel *k = kh->k;
  if (kh->cur < 0) {
    kh->cur = 0;
    kh->address = 0;
  }
  Mm *mm = g_ptr_array_index(kh->mms, kh->cur);
  unsigned progress = 1, looked = 1; /* the visit of the mm */
  gboolean walked_all = TRUE;
  guint i;
  vma_from(mm, kh->address, &i);
  for (; i < mm_vma_count(mm); i++) {
    const Vma *v = mm_vma(mm, i);
    if (!thp_vma_allowed(k, mm, v)) {
      progress++, looked++;
      continue;
    }
    uint64_t mask = kh->pmd_bytes - 1;
    uint64_t hstart = (v->start + mask) & ~mask, hend = v->end & ~mask;
    if (kh->address > hend) {
      progress++, looked++;
      continue;
    }
    if (kh->address < hstart)
      kh->address = hstart;
    while (kh->address < hend) {
      gboolean collapsing;
      *result = scan_range(kh, &kh->cc, cpu, mm, kh->address, &collapsing);
      if (*result == SCAN_SUCCEED)
        cpu->ctr->c[CTR_PAGES_COLLAPSED]++;
      kh->address += kh->pmd_bytes;
      progress += kh->pmd_nr;
      if (collapsing || progress >= pages) {
        walked_all = FALSE;
        goto out;
      }
    }
  }
out:
  charge_entries(kh, cpu, looked);
  cpu->ctr->c[CTR_KHUGEPAGED_PAGES_SCANNED] += progress;
  if (walked_all) {
    /* Every VMA done: on to the next mm, or past the head (a full scan). */
    kh->address = 0;
    if ((guint)kh->cur + 1 < kh->mms->len) {
      kh->cur++;
    } else {
      kh->cur = -1;
      cpu->ctr->c[CTR_FULL_SCANS]++;
    }
  }
  return progress;
}

/* khugepaged_do_scan(): one wake.  TRUE when it stopped for the alloc sleep
 * (it resumes at the next wake). */
static gboolean do_scan(Khugepaged *kh, KCpu *cpu)
{
  unsigned pages = kh->pages_to_scan, progress = 0, passes = 0;
  gboolean wait = TRUE;
  if (kh->resuming) {
    progress = kh->resume_progress;
    passes = kh->resume_passes;
    wait = FALSE;
    kh->resuming = FALSE;
  }
  for (;;) {
    ScanResult result = SCAN_SUCCEED;
    if (kh->cur < 0)
      passes++;
    if (kh->mms->len && passes < 2)
      progress += scan_mm_slot(kh, cpu, pages - progress, &result);
    else
      progress = pages;
    if (progress >= pages)
      return FALSE;
    if (result == SCAN_ALLOC_HUGE_PAGE_FAIL) {
      if (!wait)
        return FALSE; /* hit again: give up this wake */
      kh->resuming = TRUE;
      kh->resume_progress = progress;
      kh->resume_passes = passes;
      return TRUE;
    }
  }
}

void khugepaged_run(Khugepaged *kh, uint64_t now)
{
  g_return_if_fail(kh != NULL);
  while (kh->next_wake <= now) {
    uint64_t start = kh->next_wake == KH_WAKE_NOW ? now : kh->next_wake;
    KCpu *cpu = khugepaged_cpu(kh);
    if (!cpu)
      return;
    kernel_drain(kh->k, cpu);
    uint64_t before = kcpu_now(cpu);
    gboolean alloc_sleep = do_scan(kh, cpu);
    uint64_t work = kcpu_now(cpu) - before;
    cpu->ctr->c[CTR_KHUGEPAGED_CYCLES] += work;
    uint64_t sleep = alloc_sleep ? kh->alloc_sleep_cycles : kh->scan_sleep_cycles;
    /* The next wake is after the work of this one and the sleep.  With
     * scan_sleep_millisecs=0 khugepaged_wait_work() (mm/khugepaged.c, Linux
     * 6.6) returns at once, and the nice-19 kthread runs again once the
     * scheduler gives it the CPU: not before the next tick
     * (khugepaged.min_wake_gap_us), so that a daemon with little to scan
     * does not wake every cycle and starve the run. */
    kh->next_wake = start + MAX(work + sleep, kh->min_gap_cycles);
    if (events_enabled(kh->k->ev)) /* at the end of the wake, after its collapses */
      events_emit(kh->k->ev, (uint64_t)((double)(start + work) / kh->k->cycles_per_ns), cpu->id, 0, 0, "khugepaged",
                  "start_ns=%" G_GUINT64_FORMAT " cycles=%" G_GUINT64_FORMAT " sleep_ms=%" G_GINT64_FORMAT " mms=%u",
                  (uint64_t)((double)start / kh->k->cycles_per_ns), work,
                  settings_int(kh->k->s, alloc_sleep ? SET_KHUGEPAGED_ALLOC_SLEEP_MS : SET_KHUGEPAGED_SCAN_SLEEP_MS),
                  kh->mms->len);
  }
}
