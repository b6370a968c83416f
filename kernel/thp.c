/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thp.c - transparent huge pages: the rules every THP policy shares
 * (hugepage_vma_check() and transhuge_vma_suitable() of mm/huge_memory.c),
 * the policy table, and the mechanism the fault path and the system calls
 * use: the defrag table, the order-9 allocation and its compaction, the huge
 * zero page, the split of a huge PMD into the deposited page table, and the
 * life of a THP once parts of it are unmapped (the deferred split queue).
 *
 * Multi-size THP (Linux 6.8 on; 6.12's rules): the per-size controls
 * thp.hugepages_<size>kB read into order masks (thp_orders_init), the
 * orders a VMA may have (thp_vma_allowable_orders, whose PMD order's answer
 * is thp_vma_allowed), and the allocation at any order; an mTHP folio is a
 * registry entry like a THP, never PMD-mapped.
 *
 * Models (mm/huge_memory.c, mm/rmap.c, mm/mempolicy.c): one registry entry
 * per THP with a bit per mapped subpage (the folio's mapcounts, with no
 * sharing between processes since there is no fork); a THP partly unmapped
 * joins the deferred split queue once (deferred_split_folio) and is split
 * into order-0 pages when the queue is processed, its unmapped subpages then
 * freed; a THP whose every subpage is unmapped is freed at order 9 at once.
 * Leaves out: the per-memcg and per-node queues (one queue), the shrinker's
 * batch limits (the whole queue is processed), splitting a THP that is still
 * PMD-mapped (the queue never holds one), freeing the huge zero page when it
 * falls out of use (it stays once allocated), and the khugepaged side
 * (kernel/khugepaged.c).
 */
#include "config.h"
#include "thp.h"
#include "errors.h"

#include "events.h"
#include "hugetlb.h"
#include "kcompactd.h"
#include "kernel.h"
#include "mempolicy.h"
#include "rmap.h"

#include <string.h>

/* One THP: a large folio, PMD-sized (order 9 on x86-64) or an mTHP folio
 * of a smaller order mapped by PTEs. */
typedef struct {
  uint64_t head;                         /* first pfn; the registry key */
  unsigned order;                        /* of 4K frames, as the buddy allocator counts */
  unsigned nr;                           /* base subpages */
  unsigned nr_mapped;
  gboolean pmd_mapped;                   /* FALSE once split */
  gboolean in_batch;                     /* in the unmap batch being gathered */
  GList *queued;                         /* link in the deferred split queue, or NULL */
  uint64_t mapped[];                     /* base subpages mapped (by the PMD or a PTE) */
} ThpPage;

struct ThpState {
  GHashTable *pages;      /* &ThpPage.head -> ThpPage */
  GQueue deferred;        /* of ThpPage, oldest first (ds_queue->split_queue) */
  uint32_t orders;        /* bit n: a folio of order n (4K frames) was registered */
  gboolean zero_allocated;
  uint64_t zero_pfn;      /* the huge zero page, once allocated */
};

/* The registry of THP policies (base/registry.h), in the order of
 * thp.policy's choices in settings.def.  A policy is one file, thp_NAME.c
 * defining thp_policy_NAME, and one row here: its extern and its place in
 * the table. */
extern const ThpPolicy thp_policy_linux;
extern const ThpPolicy thp_policy_ingens;
static const ThpPolicy *const thp_policy_rows[] = {
  &thp_policy_linux,
  &thp_policy_ingens,
};

const ThpPolicy *const *thp_policies(unsigned *n)
{
  *n = G_N_ELEMENTS(thp_policy_rows);
  return thp_policy_rows;
}

const ThpPolicy *thp_policy_from_settings(const Settings *s, GError **error)
{
  const char *name = settings_str(s, SET_THP_POLICY);
  int i = registry_find(REGISTRY_ROWS(thp_policy_rows), G_N_ELEMENTS(thp_policy_rows), name);
  if (i < 0) {
    registry_set_unknown(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "setting 'thp.policy'",
                         REGISTRY_ROWS(thp_policy_rows), G_N_ELEMENTS(thp_policy_rows), name);
    return NULL;
  }
  return thp_policy_rows[i];
}

/* ---- which orders: thp.enabled and thp.hugepages_* ------------------------ */

/* The size setting of a folio of `bytes`, or N_SETTINGS when none is
 * declared (the rows run from 16kB up, doubling). */
static SettingId size_setting(uint64_t bytes)
{
  SettingId id = SET_THP_HUGEPAGES_16KB;
  for (uint64_t b = 16 * 1024; id <= SET_THP_HUGEPAGES_16384KB; b <<= 1, id++)
    if (b == bytes)
      return id;
  return N_SETTINGS;
}

ThpSizeMode thp_size_mode(const Kernel *k, SettingId id)
{
  /* hugepage_init_sysfs (6.12): "Default to setting PMD-sized THP to
   * inherit the global setting and disable all other sizes"; the default
   * of settings.def is x86-64's, whose PMD size is 2048kB. */
  if (!settings_is_set(k->s, id))
    return size_setting(k->pmd_bytes) == id ? THP_SIZE_INHERIT : THP_SIZE_NEVER;
  return (ThpSizeMode)settings_int(k->s, id);
}

/* A size setting kernel.version's release cannot have: it must be `want`;
 * `why` ends with the release that brought mTHP. */
static gboolean version_refuses(const Kernel *k, SettingId id, const char *want, const char *why, GError **error)
{
  g_autofree char *at = settings_prefix(k->s, id);
  char v[16];
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
              "%ssetting '%s' must be %s under kernel.version=%s: %s Linux %s (set kernel.version=%s)", at,
              settings_def(id)->name, want, kernel_version_name(k->version, v), why,
              kernel_rule_def(KR_MTHP)->since_name, kernel_version_first_with(KR_MTHP));
  return FALSE;
}

gboolean thp_orders_init(Kernel *k, GError **error)
{
  unsigned pmd_order = k->pmd_order - k->base_order; /* PMD_ORDER, in base pages */
  /* Before 6.8 there are no sizes: thp.enabled alone rules the PMD's. */
  gboolean mthp = kernel_has(k, KR_MTHP);
  k->anon_orders_always = k->anon_orders_madvise = k->anon_orders_inherit = 0;
  for (SettingId id = SET_THP_HUGEPAGES_16KB; id <= SET_THP_HUGEPAGES_16384KB; id++) {
    ThpSizeMode m = thp_size_mode(k, id);
    uint64_t bytes = (UINT64_C(16) * 1024) << (id - SET_THP_HUGEPAGES_16KB);
    unsigned order = 0;
    while ((k->base_bytes << order) < bytes)
      order++;
    /* THP_ORDERS_ALL_ANON (include/linux/huge_mm.h, 6.12): orders 2 to
     * PMD_ORDER; order 1 has no room for the deferred list.  Only those
     * sizes have a hugepages-<size>kB/enabled. */
    gboolean exists = (k->base_bytes << order) == bytes && order >= 2 && order <= pmd_order;
    if (exists && order == pmd_order && m != THP_SIZE_INHERIT && !mthp)
      return version_refuses(k, id, "inherit", "only thp.enabled chose the PMD-sized THP before", error);
    if (m == THP_SIZE_NEVER)
      continue;
    if (!exists) {
      g_autofree char *at = settings_prefix(k->s, id);
      g_autofree char *base = settings_format_size(k->base_bytes);
      g_autofree char *lo = settings_format_size(k->base_bytes << 2);
      g_autofree char *hi = settings_format_size(k->pmd_bytes);
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                  "%ssetting '%s' must be never on %s with %s base pages: Linux has no such anonymous THP size "
                  "there, its sizes are %s to %s, 4 base pages to the PMD's (THP_ORDERS_ALL_ANON)",
                  at, settings_def(id)->name, k->arch_name, base, lo, hi);
      return FALSE;
    }
    if (order < pmd_order && !mthp)
      return version_refuses(k, id, "never", "multi-size THP came with", error);
    uint32_t bit = UINT32_C(1) << order;
    if (m == THP_SIZE_ALWAYS)
      k->anon_orders_always |= bit;
    else if (m == THP_SIZE_MADVISE)
      k->anon_orders_madvise |= bit;
    else
      k->anon_orders_inherit |= bit;
  }
  return TRUE;
}

uint32_t thp_vma_allowable_orders(const Kernel *k, const Mm *mm, const Vma *v, uint32_t orders)
{
  /* thp_vma_allowable_orders (include/linux/huge_mm.h, 6.12): the sizes
   * set always, madvise ones in a VM_HUGEPAGE VMA, inherit ones as
   * thp.enabled says (always; madvise with VM_HUGEPAGE). */
  gboolean madvised = v->thp == VMA_THP_HUGEPAGE;
  uint32_t mask = k->anon_orders_always | (madvised ? k->anon_orders_madvise : 0);
  ThpEnabled global = (ThpEnabled)settings_int(k->s, SET_THP_ENABLED);
  if (global == THP_ENABLED_ALWAYS || (madvised && global == THP_ENABLED_MADVISE))
    mask |= k->anon_orders_inherit;
  orders &= mask;
  /* __thp_vma_allowable_orders: hugetlbfs has its own pool and fault path
   * (not anonymous); VM_NOHUGEPAGE and MMF_DISABLE_THP refuse every order. */
  if (!orders || (v->flags & MAP_F_HUGETLB) || mm->thp_disable || v->thp == VMA_THP_NOHUGEPAGE)
    return 0;
  /* A file mapping: 6.12 gives a file VMA huge pages only through the
   * page cache's large folios (a filesystem that supports them) or, for
   * read-only text, khugepaged with CONFIG_READ_ONLY_THP_FOR_FS
   * (file_thp_enabled, include/linux/huge_mm.h); neither is modelled, so
   * a file VMA is never THP-eligible. */
  if (v->flags & MAP_F_FILE)
    return 0;
  return orders;
}

gboolean thp_pmd_enabled(const Kernel *k)
{
  /* hugepage_pmd_enabled (mm/khugepaged.c, 6.12), anonymous memory only. */
  uint32_t pmd = UINT32_C(1) << (k->pmd_order - k->base_order);
  return ((k->anon_orders_always | k->anon_orders_madvise) & pmd) ||
         ((k->anon_orders_inherit & pmd) && settings_int(k->s, SET_THP_ENABLED) != THP_ENABLED_NEVER);
}

gboolean thp_vma_allowed(const Kernel *k, const Mm *mm, const Vma *v)
{
  uint32_t pmd = UINT32_C(1) << (k->pmd_order - k->base_order);
  return thp_vma_allowable_orders(k, mm, v, pmd) != 0;
}

gboolean thp_range_in_vma(const Kernel *k, const Vma *v, uint64_t haddr)
{
  return (haddr & (k->pmd_bytes - 1)) == 0 && haddr >= v->start && haddr + k->pmd_bytes <= v->end &&
         haddr + k->pmd_bytes > haddr;
}

ScanResult thp_collapse_rules(const Kernel *k, const ThpRangeStats *st)
{
  const Settings *s = k->s;
  if (st->swap > (unsigned)settings_int(s, SET_KHUGEPAGED_MAX_PTES_SWAP))
    return SCAN_EXCEED_SWAP_PTE;
  if (st->shared > (unsigned)settings_int(s, SET_KHUGEPAGED_MAX_PTES_SHARED))
    return SCAN_EXCEED_SHARED_PTE;
  if (st->writable == 0)
    return SCAN_PAGE_RO;
  if (st->young == 0)
    return SCAN_LACK_REFERENCED_PAGE;
  return SCAN_SUCCEED;
}

const char *thp_scan_result_name(ScanResult r)
{
  static const char *const names[SCAN_N_RESULTS] = {
    "pmd_null", "pmd_mapped", "vma_check", "address_range", "exceed_none_pte", "exceed_swap_pte",
    "exceed_shared_pte", "page_ro", "lack_referenced_page", "alloc_huge_page_fail", "policy", "pmd_none",
  };
  if (r == SCAN_SUCCEED)
    return "succeed";
  g_return_val_if_fail(r >= 0 && r < SCAN_N_RESULTS, "?");
  return names[r];
}

/* ---- registry ------------------------------------------------------------ */

ThpState *thp_state_new(void)
{
  ThpState *ts = g_new0(ThpState, 1);
  ts->pages = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  g_queue_init(&ts->deferred);
  return ts;
}

void thp_state_free(ThpState *ts)
{
  if (!ts)
    return;
  g_queue_clear(&ts->deferred);
  g_hash_table_destroy(ts->pages);
  g_free(ts);
}

/* The folio holding pfn.  Folios never overlap, so the first registered
 * one found whose range holds pfn is it; the orders are tried smallest
 * first, one hash lookup when only PMD-sized THPs were made. */
static ThpPage *page_lookup(const Kernel *k, uint64_t pfn)
{
  for (uint32_t orders = k->thps->orders; orders; orders &= orders - 1) {
    unsigned order = (unsigned)__builtin_ctz(orders);
    uint64_t head = pfn & ~((UINT64_C(1) << order) - 1);
    ThpPage *p = g_hash_table_lookup(k->thps->pages, &head);
    if (p && pfn - p->head < (UINT64_C(1) << p->order))
      return p;
  }
  return NULL;
}

void thp_folio_add(Kernel *k, uint64_t head_pfn, unsigned order, gboolean pmd_mapped)
{
  g_return_if_fail((head_pfn & ((UINT64_C(1) << order) - 1)) == 0 && order > k->base_order);
  g_return_if_fail(!page_lookup(k, head_pfn));
  unsigned nr = 1u << (order - k->base_order);
  size_t words = (nr + 63) / 64;
  ThpPage *p = g_malloc0(sizeof(ThpPage) + words * sizeof(uint64_t));
  p->head = head_pfn;
  p->order = order;
  p->nr = nr;
  for (unsigned i = 0; i < nr; i++)
    p->mapped[i / 64] |= UINT64_C(1) << (i % 64);
  p->nr_mapped = nr;
  p->pmd_mapped = pmd_mapped;
  k->thps->orders |= UINT32_C(1) << order;
  g_hash_table_insert(k->thps->pages, &p->head, p);
}

void thp_page_add(Kernel *k, uint64_t head_pfn)
{
  thp_folio_add(k, head_pfn, k->pmd_order, TRUE);
}

gboolean thp_page_of(const Kernel *k, uint64_t pfn, uint64_t *head)
{
  const ThpPage *p = page_lookup(k, pfn);
  if (p && head)
    *head = p->head;
  return p != NULL;
}

guint thp_page_count(const Kernel *k)
{
  return g_hash_table_size(k->thps->pages);
}

guint thp_deferred_count(const Kernel *k)
{
  return k->thps->deferred.length;
}

/* Forget p and give its block back whole. */
static void page_free_whole(Kernel *k, ThpPage *p)
{
  if (p->queued)
    g_queue_delete_link(&k->thps->deferred, p->queued);
  uint64_t head = p->head;
  unsigned order = p->order;
  g_hash_table_remove(k->thps->pages, &head); /* frees p */
  physmem_release(k->pm, head, order);
}

/* ---- allocation ------------------------------------------------------------ */

/* vma_thp_gfp_mask, mm/huge_memory.c 6.12: GFP_TRANSHUGE is
 * GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM. */
CompactMode thp_defrag_compact(const Kernel *k, const Vma *v)
{
  gboolean madvised = v->thp == VMA_THP_HUGEPAGE;
  switch ((ThpDefrag)settings_int(k->s, SET_THP_DEFRAG)) {
  case THP_DEFRAG_ALWAYS:
    /* GFP_TRANSHUGE | (vma_madvised ? 0 : __GFP_NORETRY) */
    return madvised ? COMPACT_MODE_SYNC : COMPACT_MODE_ASYNC;
  case THP_DEFRAG_DEFER:
    return COMPACT_MODE_NONE; /* GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM: the fault does not wait */
  case THP_DEFRAG_DEFER_MADVISE: /* madvised: __GFP_DIRECT_RECLAIM, else __GFP_KSWAPD_RECLAIM */
  case THP_DEFRAG_MADVISE:       /* madvised: __GFP_DIRECT_RECLAIM, else nothing */
    return madvised ? COMPACT_MODE_SYNC : COMPACT_MODE_NONE;
  case THP_DEFRAG_NEVER:
    return COMPACT_MODE_NONE; /* GFP_TRANSHUGE_LIGHT */
  }
  return COMPACT_MODE_NONE;
}

/* vma_thp_gfp_mask, mm/huge_memory.c 6.12: defer gives every VMA
 * __GFP_KSWAPD_RECLAIM, defer+madvise the VMAs without MADV_HUGEPAGE; the
 * other modes never set it on a THP allocation. */
gboolean thp_defrag_wakes_kcompactd(const Kernel *k, const Vma *v)
{
  switch ((ThpDefrag)settings_int(k->s, SET_THP_DEFRAG)) {
  case THP_DEFRAG_DEFER:
    return TRUE;
  case THP_DEFRAG_DEFER_MADVISE:
    return v->thp != VMA_THP_HUGEPAGE;
  default:
    return FALSE;
  }
}

void thp_wake_kcompactd(Kernel *k, const KCpu *cpu, const Vma *v, const MemPlacement *p, unsigned order)
{
  if (!thp_defrag_wakes_kcompactd(k, v))
    return;
  /* wake_all_kswapds: each node of the zonelist the nodemask allows. */
  for (int node = 0; node < physmem_nodes(k->pm); node++)
    if (p->allowed & (UINT64_C(1) << node))
      kcompactd_wakeup(k->kcompactd, cpu, node, order);
}

uint64_t thp_compact_cycles(const Kernel *k, const CompactResult *cr)
{
  /* A background page at compact.migrate_page_ns and a hot 4K copy; a
   * process's page at compact.migrate_page_ns and the copy kernel/rmap.c
   * priced. */
  double ns = (double)cr->scanned * k->compact_scan_ns +
              (double)(cr->migrated - cr->anon_migrated) * k->compact_migrate_ns +
              (double)cr->anon_migrated * k->compact_migrate_fixed_ns;
  return kernel_ns_to_cycles(k, ns) + cr->copy_cycles;
}

void thp_count_compact_work(KCpu *cpu, const CompactResult *cr)
{
  /* compact_zone: COMPACTMIGRATE_SCANNED, COMPACTFREE_SCANNED, whoever
   * runs it; isolate_migratepages_block and isolate_freepages_block:
   * COMPACTISOLATED; migrate_pages: COMPACTMIGRATED, PGMIGRATE_SUCCESS. */
  cpu->ctr->c[CTR_COMPACT_MIGRATE_SCANNED] += cr->scanned - cr->free_scanned;
  cpu->ctr->c[CTR_COMPACT_FREE_SCANNED] += cr->free_scanned;
  cpu->ctr->c[CTR_COMPACT_ISOLATED] += cr->isolated;
  cpu->ctr->c[CTR_COMPACT_MIGRATED] += cr->migrated;
  cpu->ctr->c[CTR_PGMIGRATE_SUCCESS] += cr->migrated;
}

/* Count one direct compaction and charge its work. */
uint64_t thp_count_compaction(Kernel *k, KCpu *cpu, const CompactResult *cr)
{
  if (!cr->ran)
    return 0;
  /* __alloc_pages_direct_compact counts each call that ran compaction. */
  cpu->ctr->c[CTR_COMPACT_STALL] += cr->stalls;
  cpu->ctr->c[CTR_COMPACT_SUCCESS] += cr->success ? 1 : 0;
  cpu->ctr->c[CTR_COMPACT_FAIL] += cr->stalls - (cr->success ? 1 : 0);
  thp_count_compact_work(cpu, cr);
  uint64_t c = thp_compact_cycles(k, cr);
  cpu->ctr->c[CTR_COMPACT_CYCLES] += c;
  return c;
}

static void count_compaction(Kernel *k, KCpu *cpu, const CompactResult *cr, uint64_t *cycles)
{
  *cycles += thp_count_compaction(k, cpu, cr);
}

/* __alloc_pages with a node mask: the allowed nodes in their order, then,
 * when `compact`, each compacted in turn (the slow path's direct compaction
 * of the zonelist, limited to the mask). */
static gboolean alloc_masked(Kernel *k, KCpu *cpu, const MemPlacement *p, unsigned order, CompactMode compact,
                             uint64_t *pfn, uint64_t *cycles)
{
  int nodes[64];
  unsigned n = mempolicy_nodes(k, p, nodes);
  for (unsigned i = 0; i < n; i++)
    if (physmem_alloc_on(k->pm, nodes[i], order, MT_MOVABLE, pfn))
      return TRUE;
  for (unsigned i = 0; compact != COMPACT_MODE_NONE && i < n; i++) {
    CompactResult cr;
    gboolean ok = physmem_alloc_huge(k->pm, nodes[i], order, TRUE, compact, pfn, &cr);
    count_compaction(k, cpu, &cr, cycles);
    if (ok)
      return TRUE;
  }
  return FALSE;
}

/* alloc_pages_mpol: at HPAGE_PMD_ORDER only (an mTHP order goes the
 * standard way at once), a policy that is not interleave and
 * allows the node it names tries that node alone first (__GFP_THISNODE |
 * __GFP_NORETRY), and gives up there unless it may compact; then the
 * standard way over the nodes the policy allows.  A then_any placement
 * (alloc_pages_preferred_many) tries its nodes without compaction, then
 * every node the standard way.  *got is the placement the page is counted
 * against. */
static gboolean alloc_once(Kernel *k, KCpu *cpu, const MemPlacement *p, unsigned order, CompactMode compact,
                           uint64_t *pfn, uint64_t *cycles, MemPlacement *got)
{
  CompactResult cr;
  gboolean ok;
  *got = *p;
  if (p->then_any) {
    got->then_any = FALSE;
    if (alloc_masked(k, cpu, got, order, COMPACT_MODE_NONE, pfn, cycles))
      return TRUE;
    mempolicy_then_any(k, p, got);
  } else if (order == k->pmd_order && !p->interleaved && p->node == p->from) {
    /* gfp | __GFP_THISNODE | __GFP_NORETRY: async compaction at most */
    ok = physmem_alloc_huge(k->pm, p->node, order, TRUE, MIN(compact, COMPACT_MODE_ASYNC), pfn, &cr);
    count_compaction(k, cpu, &cr, cycles);
    if (ok || compact == COMPACT_MODE_NONE)
      return ok;
  }
  if (got->allowed != (UINT64_MAX >> (64 - physmem_nodes(k->pm))))
    return alloc_masked(k, cpu, got, order, compact, pfn, cycles);
  ok = physmem_alloc_huge(k->pm, got->node, order, FALSE, compact, pfn, &cr);
  count_compaction(k, cpu, &cr, cycles);
  return ok;
}

gboolean thp_alloc_order(Kernel *k, KCpu *cpu, const MemPlacement *p, unsigned order, CompactMode compact,
                         uint64_t *pfn, uint64_t *cycles)
{
  MemPlacement got;
  KCpu *was = rmap_compact_cpu(k, cpu); /* direct compaction runs on the allocating CPU */
  gboolean ok = alloc_once(k, cpu, p, order, compact, pfn, cycles, &got);
  if (!ok && thp_deferred_count(k) && thp_deferred_split_scan(k, cpu, cycles))
    ok = alloc_once(k, cpu, p, order, compact, pfn, cycles, &got);
  rmap_compact_cpu(k, was);
  if (ok)
    mempolicy_count(cpu, &got, physmem_node_of(k->pm, *pfn));
  return ok;
}

gboolean thp_alloc(Kernel *k, KCpu *cpu, const MemPlacement *p, CompactMode compact, uint64_t *pfn, uint64_t *cycles)
{
  return thp_alloc_order(k, cpu, p, k->pmd_order, compact, pfn, cycles);
}

gboolean thp_alloc_nodemask(Kernel *k, KCpu *cpu, const MemPlacement *p, CompactMode compact, uint64_t *pfn,
                            uint64_t *cycles)
{
  KCpu *was = rmap_compact_cpu(k, cpu);
  gboolean ok = alloc_masked(k, cpu, p, k->pmd_order, compact, pfn, cycles);
  rmap_compact_cpu(k, was);
  if (ok)
    mempolicy_count(cpu, p, physmem_node_of(k->pm, *pfn));
  return ok;
}

gboolean thp_huge_zero_page(Kernel *k, KCpu *cpu, uint64_t *pfn, uint64_t *cycles)
{
  ThpState *ts = k->thps;
  if (!ts->zero_allocated) {
    /* get_huge_zero_page: GFP_TRANSHUGE without __GFP_MOVABLE, zeroed. */
    if (!physmem_alloc(k->pm, cpu->node, k->pmd_order, MT_UNMOVABLE, &ts->zero_pfn))
      return FALSE;
    ts->zero_allocated = TRUE;
    uint64_t clear = kernel_clear_cycles(k, k->pmd_bytes);
    kernel_fill_clear(k, cpu, ts->zero_pfn, k->pmd_bytes); /* __GFP_ZERO: kernel_init_pages, in order */
    cpu->ctr->c[CTR_THP_ZERO_PAGE_ALLOC]++;
    cpu->ctr->c[CTR_ZEROING_CYCLES] += clear;
    *cycles += clear;
  }
  *pfn = ts->zero_pfn;
  return TRUE;
}

/* ---- split ---------------------------------------------------------------- */

gboolean thp_split_pmd(Kernel *k, KCpu *cpu, Mm *mm, uint64_t haddr, uint64_t *cycles)
{
  haddr &= ~(k->pmd_bytes - 1);
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&mm->pt, haddr, &level, &idx);
  uint64_t e = n->e[idx];
  if (level != 2 || !(e & PTE_P) || !(e & PTE_PS) || hugetlb_owns(k->hugetlb, pte_pfn(e), NULL))
    return FALSE; /* no THP PMD here (hugetlb pages are never split) */
  uint64_t table;
  if (!mm_withdraw(mm, haddr, &table)) {
    /* Every huge PMD made here has a table deposited; one installed
     * without gets a new table, as the split of a DAX PMD would. */
    if (!mm->pt.a.alloc(mm->pt.a.ctx, 1, &table))
      return FALSE;
    cpu->ctr->c[CTR_PGTABLE_PAGES_ALLOC]++;
  }
  pgtable_set(&mm->pt, haddr, 2, 0, NULL);
  /* The withdrawn table becomes the PTE table (pmd_populate). */
  k->pt_reserved = TRUE;
  k->pt_reserved_pfn = table;
  gboolean zero = (e & PTE_SW_ZERO) != 0;
  uint64_t flags = e & ~(PTE_PFN_MASK | PTE_PS);
  for (unsigned i = 0; i < k->pmd_subpages; i++) {
    uint64_t pfn = zero ? k->zero_pfn : pte_pfn(e) + ((uint64_t)i << k->base_order);
    gboolean ok = pgtable_set(&mm->pt, haddr + ((uint64_t)i << k->base_shift), 1, pte_make(pfn, flags), NULL);
    g_assert(ok); /* the table is at hand: nothing can fail */
  }
  g_warn_if_fail(!k->pt_reserved);
  k->pt_reserved = FALSE;
  ThpPage *p = zero ? NULL : page_lookup(k, pte_pfn(e));
  if (p)
    p->pmd_mapped = FALSE;
  kernel_flush_tlb(k, cpu, mm, haddr, haddr + k->pmd_bytes, k->geo.shift[2], FALSE);
  cpu->ctr->c[CTR_THP_SPLIT_PMD]++;
  *cycles += k->split_cycles;
  kernel_event(k, cpu, mm->pid, "thp_split_pmd",
                "va=%#" G_GINT64_MODIFIER "x zero=%d", haddr, zero);
  return TRUE;
}

void thp_split_at(Kernel *k, KCpu *cpu, Mm *mm, uint64_t addr, uint64_t *cycles)
{
  if (addr & (k->pmd_bytes - 1))
    thp_split_pmd(k, cpu, mm, addr, cycles);
}

/* ---- unmapping and the deferred split queue -------------------------------- */

uint64_t thp_unmap_pmd(Kernel *k, uint64_t head_pfn)
{
  ThpPage *p = page_lookup(k, head_pfn);
  if (p && p->head == head_pfn)
    page_free_whole(k, p);
  else
    physmem_release(k->pm, head_pfn, k->pmd_order); /* a PMD page nobody registered */
  return UINT64_C(1) << k->pmd_order;
}

gboolean thp_unmap_pte(Kernel *k, uint64_t pfn, GPtrArray **batch)
{
  ThpPage *p = page_lookup(k, pfn);
  if (!p)
    return FALSE;
  unsigned i = (unsigned)((pfn - p->head) >> k->base_order);
  uint64_t bit = UINT64_C(1) << (i % 64);
  if (p->mapped[i / 64] & bit) {
    p->mapped[i / 64] &= ~bit;
    p->nr_mapped--;
  }
  if (!p->in_batch) {
    if (!*batch)
      *batch = g_ptr_array_new();
    g_ptr_array_add(*batch, p);
    p->in_batch = TRUE;
  }
  return TRUE;
}

uint64_t thp_unmap_settle(Kernel *k, KCpu *cpu, GPtrArray *batch)
{
  uint64_t freed = 0;
  for (guint i = 0; batch && i < batch->len; i++) {
    ThpPage *p = g_ptr_array_index(batch, i);
    p->in_batch = FALSE;
    if (!p->nr_mapped) {
      freed += UINT64_C(1) << p->order;
      page_free_whole(k, p);
    } else if (!p->queued) {
      /* deferred_split_folio (mm/huge_memory.c, 6.12): thp_deferred_split_page
       * for a PMD-sized folio, the size's split_deferred for any. */
      g_queue_push_tail(&k->thps->deferred, p);
      p->queued = k->thps->deferred.tail;
      cpu->ctr->c[p->order == k->pmd_order ? CTR_THP_DEFERRED_SPLIT_PAGE : CTR_MTHP_SPLIT_DEFERRED]++;
      thp_count_mthp(cpu, p->order, MTHP_STAT_SPLIT_DEFERRED);
    }
  }
  return freed;
}

uint64_t thp_deferred_split_scan(Kernel *k, KCpu *cpu, uint64_t *cycles)
{
  uint64_t freed = 0, split = 0;
  ThpPage *p;
  while ((p = g_queue_pop_head(&k->thps->deferred))) {
    p->queued = NULL;
    /* split_folio: base pages (512 of 4K, or 256 of 64K, for a PMD-sized
     * one); the unmapped ones are freed.  split_huge_page_to_list_to_order
     * counts an mTHP folio's split in its size's stats. */
    physmem_split_to(k->pm, p->head, p->order, k->base_order, MT_MOVABLE);
    if (p->order != k->pmd_order)
      cpu->ctr->c[CTR_MTHP_SPLIT]++;
    thp_count_mthp(cpu, p->order, MTHP_STAT_SPLIT);
    for (unsigned i = 0; i < p->nr; i++)
      if (!(p->mapped[i / 64] & (UINT64_C(1) << (i % 64)))) {
        physmem_release(k->pm, p->head + ((uint64_t)i << k->base_order), k->base_order);
        freed += UINT64_C(1) << k->base_order;
      }
    uint64_t head = p->head;
    g_hash_table_remove(k->thps->pages, &head);
    split++;
  }
  cpu->ctr->c[CTR_MEM_USED_BYTES] -= MIN(cpu->ctr->c[CTR_MEM_USED_BYTES], freed << 12);
  *cycles += split * k->split_cycles;
  if (split)
    kernel_event(k, cpu, cpu->cur ? cpu->cur->pid : 0, "deferred_split", "thps=%" G_GUINT64_FORMAT " freed_pages=%" G_GUINT64_FORMAT, split, freed);
  return freed;
}
