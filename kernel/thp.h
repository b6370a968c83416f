/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thp.h - transparent huge pages: which VMAs may have them, and the policy
 * interface that decides fault-time page size and collapse candidates.
 *
 * The rules every policy shares live in thp.c (hugepage_vma_check() of
 * mm/huge_memory.c): thp.enabled, the VMA's MADV_HUGEPAGE/NOHUGEPAGE advice,
 * the process's PR_SET_THP_DISABLE, hugetlb VMAs excluded, and the aligned
 * 2M range lying wholly inside the VMA.  A policy (thp.policy) decides only
 * what is left: whether a fault in an allowed range tries a huge page, and
 * whether a scanned range is worth a collapse.  Each policy is one file:
 *   linux   kernel/thp_linux.c  (mm/huge_memory.c, mm/khugepaged.c)
 *   ingens  kernel/thp_ingens.c (Kwon et al., OSDI 2016: base pages at fault,
 *           promotion once thp.util_threshold of the range is in use)
 */
#ifndef MMUSIM_THP_H
#define MMUSIM_THP_H

#include <glib.h>
#include <stdint.h>
#include "hooks.h"
#include "mm.h"
#include "physmem.h"
#include "registry.h"
#include "settings.h"
#include "stats.h"

typedef struct Kernel Kernel;

/* Order of the choices of thp.enabled and thp.defrag in settings.def. */
typedef enum { THP_ENABLED_ALWAYS, THP_ENABLED_MADVISE, THP_ENABLED_NEVER } ThpEnabled;
typedef enum {
  THP_DEFRAG_ALWAYS,
  THP_DEFRAG_DEFER,
  THP_DEFRAG_DEFER_MADVISE,
  THP_DEFRAG_MADVISE,
  THP_DEFRAG_NEVER,
} ThpDefrag;

/* khugepaged's verdict on a range (enum scan_result of mm/khugepaged.c, the
 * refusals mmusim can meet).  Every refusal has a counter (counters.def,
 * CTR_SCAN_*), in this order, from CTR_SCAN_PMD_NULL on. */
typedef enum {
  SCAN_SUCCEED = -1,
  SCAN_PMD_NULL = 0,
  SCAN_PMD_MAPPED,
  SCAN_VMA_CHECK,
  SCAN_ADDRESS_RANGE,
  SCAN_EXCEED_NONE_PTE,
  SCAN_EXCEED_SWAP_PTE,
  SCAN_EXCEED_SHARED_PTE,
  SCAN_PAGE_RO,
  SCAN_LACK_REFERENCED_PAGE,
  SCAN_ALLOC_HUGE_PAGE_FAIL,
  SCAN_POLICY,
  SCAN_PMD_NONE, /* a PMD table is there, its entry for the range empty */
  SCAN_N_RESULTS
} ScanResult;

/* What khugepaged's scan of one PMD range found (hpage_collapse_scan_pmd). */
typedef struct {
  unsigned none;      /* empty PTEs */
  unsigned zero;      /* PTEs mapping the zero page (counted with none, as the kernel does) */
  unsigned present;   /* PTEs mapping a page of their own */
  unsigned writable;  /* of those, writable */
  unsigned young;     /* of those, accessed bit set */
  unsigned shared;    /* of those, mapped by another mm too */
  unsigned swap;      /* swapped out: always 0, no swap is modelled */
} ThpRangeStats;

/* A THP policy: one file, thp_NAME.c defining thp_policy_NAME, and one
 * row of the registry in thp.c (base/registry.h); code outside them reaches
 * a policy through the registry (thp_policies(), thp_policy_from_settings(),
 * Kernel.thp), never by its symbol. */
typedef struct {
  REGISTRY_ROW; /* name: the choice of thp.policy */
  /* Fault in an allowed range [haddr, haddr + 2M) of v: TRUE to try a huge
   * page first (thp_fault_fallback follows if that fails). */
  gboolean (*fault_huge)(const Kernel *k, const Mm *mm, const Vma *v, uint64_t haddr);
  /* A range khugepaged scanned (VMA checks passed, a PTE table present):
   * SCAN_SUCCEED to collapse it, else the reason not to. */
  ScanResult (*collapse_check)(const Kernel *k, const Mm *mm, const Vma *v, const ThpRangeStats *st);
} ThpPolicy;

/* The registry's rows, in the order of thp.policy's choices (*n of them). */
const ThpPolicy *const *thp_policies(unsigned *n);
/* The row thp.policy names; an error naming the choices when no row has
 * that name. */
const ThpPolicy *thp_policy_from_settings(const Settings *s, GError **error);

/* The choices of thp.hugepages_<size>kB (hugepages-<size>kB/enabled). */
typedef enum { THP_SIZE_ALWAYS, THP_SIZE_INHERIT, THP_SIZE_MADVISE, THP_SIZE_NEVER } ThpSizeMode;

/* The mode of size setting id (SET_THP_HUGEPAGES_*): its value when set;
 * unset, inherit for the PMD size and never for the others, as Linux
 * boots (hugepage_init_sysfs). */
ThpSizeMode thp_size_mode(const Kernel *k, SettingId id);

/* Read thp.hugepages_* into k->anon_orders_* (bit n: a folio of 2^n base
 * pages).  An error when a size that is not never does not exist on the
 * machine (THP_ORDERS_ALL_ANON: 4 base pages to the PMD's), or when the
 * kernel predates multi-size THP (kernel.version; the PMD size must then
 * inherit). */
gboolean thp_orders_init(Kernel *k, GError **error);

/* thp_vma_allowable_orders (6.12, include/linux/huge_mm.h and
 * mm/huge_memory.c): of `orders` (bit n: 2^n base pages), those v may
 * have at a fault: the sizes set always, madvise ones with MADV_HUGEPAGE,
 * inherit ones as thp.enabled says; none in a hugetlb VMA, with
 * MADV_NOHUGEPAGE or PR_SET_THP_DISABLE. */
uint32_t thp_vma_allowable_orders(const Kernel *k, const Mm *mm, const Vma *v, uint32_t orders);

/* The PMD order's answer (thp_vma_allowable_order(..., PMD_ORDER)): may v
 * have PMD-sized huge pages at all? */
gboolean thp_vma_allowed(const Kernel *k, const Mm *mm, const Vma *v);

/* hugepage_pmd_enabled (mm/khugepaged.c): may any VMA have PMD-sized THP
 * (khugepaged runs only then)? */
gboolean thp_pmd_enabled(const Kernel *k);

/* TRUE when the PMD-aligned range [haddr, haddr + k->pmd_bytes) lies inside v. */
gboolean thp_range_in_vma(const Kernel *k, const Vma *v, uint64_t haddr);

/* The rules both policies keep from hpage_collapse_scan_pmd after their own
 * test of how full the range is: swap PTEs <= max_ptes_swap, shared pages
 * <= max_ptes_shared, one writable PTE, one young PTE. */
ScanResult thp_collapse_rules(const Kernel *k, const ThpRangeStats *st);

/* The name of a scan result, as the kernel spells it in lower case
 * ("exceed_none_pte"). */
const char *thp_scan_result_name(ScanResult r);

/* ---- the mechanism (mm/huge_memory.c), kernel/thp.c -------------------------
 *
 * A THP is an order-9 block of 4K pages that the kernel allocated as one
 * (a folio); an mTHP folio (multi-size THP, Linux 6.8 on) is a smaller
 * one, mapped by PTEs from its fault on, and lives the PTE-mapped half of
 * this life.  A THP lives in one of these states:
 *
 *   PMD-mapped --split (thp_split_pmd)--> PTE-mapped, all 512 mapped
 *        |                                     | some subpages unmapped
 *        | unmapped whole                      v
 *        |                          on the deferred split queue
 *        |                                     | thp_deferred_split_scan
 *        v                                     v
 *   freed at order 9                 split into 512 order-0 pages; those
 *   (with its deposited table)       unmapped freed, the others live on
 *
 * and a PTE-mapped THP whose last subpage is unmapped is freed at order 9
 * wherever it is.  Every order-9 page a PMD maps in an anonymous VMA must be
 * registered (thp_page_add) so that unmapping finds it. */

/* The sizes are the Kernel's (pmd_bytes, pmd_order, pmd_subpages), from
 * the page table: on x86-64 a THP is 2M, an order-9 block of 512 4K
 * subpages; on ppc64 hash with 64K base pages it is 16M, an order-12 block
 * of 4K frames holding 256 64K subpages (hash-64k.h: a PMD maps 16M). */

typedef struct KCpu KCpu;
typedef struct ThpState ThpState;

ThpState *thp_state_new(void);
/* Frees the bookkeeping, not the pages (the kernel frees physical memory). */
void thp_state_free(ThpState *ts);

/* The defrag table (thp.defrag, mmu-facts 4; vma_thp_gfp_mask, 6.12): how
 * may a fault in v compact memory directly?  always: async then sync-light
 * in a MADV_HUGEPAGE VMA (GFP_TRANSHUGE), async only elsewhere
 * (__GFP_NORETRY); defer+madvise and madvise: async then sync-light in a
 * MADV_HUGEPAGE VMA, not at all elsewhere; defer and never: not at all. */
CompactMode thp_defrag_compact(const Kernel *k, const Vma *v);

/* Allocate an order-9 page for a fault on `cpu`, placed by the memory
 * policy (mempolicy_place at the PMD order; kernel/mempolicy.h), as
 * alloc_pages_mpol does: unless the policy interleaves or binds to nodes
 * without the faulting CPU's, first from its node alone (__GFP_THISNODE |
 * __GFP_NORETRY: async compaction at most), and only when `compact` allows
 * compaction on; then from the nodes the policy allows, nearest first, with
 * the direct compaction `compact` allows.
 * When that fails and the deferred split queue holds pages, the queue is
 * processed (the shrinker that reclaim would run) and the allocation tried
 * once more.  Compaction is counted (compact_*) and its cost added to
 * *cycles and compact_cycles; the allocation counts numa_hit or numa_miss. */
typedef struct MemPlacement MemPlacement;
gboolean thp_alloc(Kernel *k, KCpu *cpu, const MemPlacement *p, CompactMode compact, uint64_t *pfn, uint64_t *cycles);
/* The same at any order of 4K frames (vma_alloc_folio of an mTHP order:
 * the node-alone first try is the PMD order's only). */
gboolean thp_alloc_order(Kernel *k, KCpu *cpu, const MemPlacement *p, unsigned order, CompactMode compact,
                         uint64_t *pfn, uint64_t *cycles);
/* __folio_alloc(gfp, HPAGE_PMD_ORDER, p->node, nodemask) as khugepaged and
 * MADV_COLLAPSE call it (alloc_charge_folio, mm/khugepaged.c 6.12): p->node
 * first, then the nodes of p->allowed nearest to p->from, then, when
 * `compact` allows (GFP_TRANSHUGE: COMPACT_MODE_SYNC), the direct compaction of each in the same
 * order.  No __GFP_THISNODE, no first try of p->node alone.  Counts
 * numa_hit / numa_miss against p->node and the compaction (*cycles). */
gboolean thp_alloc_nodemask(Kernel *k, KCpu *cpu, const MemPlacement *p, CompactMode compact, uint64_t *pfn,
                            uint64_t *cycles);

/* Count what one allocation's direct compaction did (a compact_stall per
 * pass that ran, each _fail but a last _success,
 * _migrated, _cycles) on `cpu` and return its cost in cycles:
 * scanned * compact.scan_page_ns + migrated * (compact.migrate_page_ns +
 * copying 4K at mem.copy_hot_bytes_per_ns).  0 when it did not run. */
uint64_t thp_count_compaction(Kernel *k, KCpu *cpu, const CompactResult *cr);
/* One of the per-size stats of /sys/kernel/mm/transparent_hugepage/
 * hugepages-<size>kB/stats/ (enum mthp_stat_item, mm/huge_memory.c 6.12),
 * in counters.def's order within a size's block. */
typedef enum {
  MTHP_STAT_ANON_FAULT_ALLOC,
  MTHP_STAT_ANON_FAULT_FALLBACK,
  MTHP_STAT_ANON_FAULT_FALLBACK_CHARGE,
  MTHP_STAT_SPLIT,
  MTHP_STAT_SPLIT_DEFERRED,
  MTHP_STAT_N
} MthpStat;
G_STATIC_ASSERT(CTR_MTHP_16384KB_SPLIT_DEFERRED - CTR_MTHP_16KB_ANON_FAULT_ALLOC == 11 * MTHP_STAT_N - 1);
G_STATIC_ASSERT(CTR_MTHP_32KB_ANON_FAULT_ALLOC - CTR_MTHP_16KB_ANON_FAULT_ALLOC == MTHP_STAT_N);

/* count_mthp_stat: stat of the folio of 2^frame_order 4K frames (16kB:
 * order 2, to 16384kB: order 12), whatever the base page; other orders
 * have no stats. */
static inline void thp_count_mthp(KCpu *cpu, unsigned frame_order, MthpStat stat)
{
  if (frame_order >= 2 && frame_order <= 12)
    cpu->ctr->c[CTR_MTHP_16KB_ANON_FAULT_ALLOC + (frame_order - 2) * MTHP_STAT_N + stat]++;
}

/* The cost in cycles of what a compaction (direct or kcompactd's) did. */
uint64_t thp_compact_cycles(const Kernel *k, const CompactResult *cr);
/* The vm events of what a compaction scanned, isolated and moved, direct
 * or kcompactd's (compact_*_scanned, compact_isolated, compact_migrated,
 * pgmigrate_success). */
void thp_count_compact_work(KCpu *cpu, const CompactResult *cr);
/* Whether a failed huge allocation in v wakes kcompactd (thp.defrag=defer,
 * or defer+madvise outside MADV_HUGEPAGE: __GFP_KSWAPD_RECLAIM without
 * __GFP_DIRECT_RECLAIM). */
gboolean thp_defrag_wakes_kcompactd(const Kernel *k, const Vma *v);
/* A huge allocation of 2^order 4K frames placed by p failed in v: wake
 * the kcompactd of each node p allows when the defrag mode says so
 * (kernel/kcompactd.c). */
void thp_wake_kcompactd(Kernel *k, const KCpu *cpu, const Vma *v, const MemPlacement *p, unsigned order);

/* The shared huge zero page, allocated on first use (thp_zero_page_alloc,
 * its clearing added to *cycles).  FALSE when no order-9 block is free. */
gboolean thp_huge_zero_page(Kernel *k, KCpu *cpu, uint64_t *pfn, uint64_t *cycles);

/* A new THP now mapped by a PMD. */
void thp_page_add(Kernel *k, uint64_t head_pfn);
/* A new folio of `order` 4K frames at head_pfn, every subpage mapped, by a
 * PMD or (an mTHP folio) by PTEs. */
void thp_folio_add(Kernel *k, uint64_t head_pfn, unsigned order, gboolean pmd_mapped);
/* TRUE when pfn lies in a registered THP; *head gets its first page. */
gboolean thp_page_of(const Kernel *k, uint64_t pfn, uint64_t *head);
/* THPs alive, and those on the deferred split queue (for tests). */
guint thp_page_count(const Kernel *k);
guint thp_deferred_count(const Kernel *k);

/* __split_huge_pmd_locked: replace the huge PMD mapping haddr (a THP or the
 * huge zero page) by the deposited page table holding 512 PTEs with the
 * PMD's flags, A and D included, shoot the huge translation down and count
 * thp_split_pmd.  The work (thp.split_ns) is added to *cycles for the
 * caller to charge.  FALSE when no huge PMD maps haddr. */
gboolean thp_split_pmd(Kernel *k, KCpu *cpu, Mm *mm, uint64_t haddr, uint64_t *cycles);
/* split_huge_pmd_address at a VMA edge: split the huge PMD around addr when
 * addr is not 2M aligned. */
void thp_split_at(Kernel *k, KCpu *cpu, Mm *mm, uint64_t addr, uint64_t *cycles);

/* Unmapping (called by kernel_unmap_*): the PMD mapping of THP head is
 * gone, free it; a PTE mapping of subpage pfn is gone, gather its THP in
 * *batch (a GPtrArray made on first use; FALSE when pfn is in no THP and
 * the caller frees it as a base page); settle the batch: free THPs no
 * longer mapped, queue partly mapped ones (thp_deferred_split_page).
 * The pmd and settle calls return the 4K pages freed. */
uint64_t thp_unmap_pmd(Kernel *k, uint64_t head_pfn);
gboolean thp_unmap_pte(Kernel *k, uint64_t pfn, GPtrArray **batch);
uint64_t thp_unmap_settle(Kernel *k, KCpu *cpu, GPtrArray *batch);

/* deferred_split_scan: split every queued THP into order-0 pages and free
 * the unmapped ones.  The model runs it when a huge allocation or a 4K
 * allocation fails, before giving up (the shrinker under memory pressure).
 * Each split costs thp.split_ns, added to *cycles.  Returns pages freed. */
uint64_t thp_deferred_split_scan(Kernel *k, KCpu *cpu, uint64_t *cycles);

#endif
