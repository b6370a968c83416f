/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hugetlb.c - the hugetlbfs pools (mm/hugetlb.c).
 *
 * Models: the persistent pools of 2M and 1G pages filled at start
 * (hugetlb_hstate_alloc_pages), node by node in turn as
 * for_each_node_mask_to_alloc does (page i tries node next_nid first, then
 * the following nodes, and next_nid moves on); 2M pages come from the buddy
 * allocator at order 9 on that node only (__GFP_THISNODE, movable as
 * htlb_alloc_mask gives on x86); 1G pages need an aligned order-18 range
 * that the buddy allocator cannot hand out (buddy.max_order is 10), so they
 * are taken as a whole free range, the lowest one that fits on the node
 * (memblock at boot, alloc_contig_pages at run time).  A fault takes a free
 * page from the first node of the list the memory policy gives (huge_node,
 * then dequeue_hugetlb_folio_nodemask: the policy's node, then the allowed
 * nodes nearest first) that has one, and munmap puts it back on its node's
 * free list (free_huge_folio).
 * Leaves out: reservations at mmap time (a mapping that will not be served
 * is found out at fault, as with MAP_NORESERVE), surplus pages and
 * overcommit, resizing the pools while running, demotion of 1G pages, and
 * the per-node sysfs counts as inputs.  Where Linux reserves 1G pages from
 * memblock top-down, the model takes the lowest free range, so that the
 * buddy allocator's lazy frontier stays lazy.
 */
#include "config.h"
#include "hugetlb.h"

#include "errors.h"

typedef struct {
  uint64_t pfn;   /* first 4K page; the key of by_pfn */
  uint8_t size;   /* HugetlbSize */
  gboolean in_use;
  int node;
} PoolPage;

struct Hugetlb {
  int nodes;
  PoolPage *pages;        /* every pool page, 1G ones first */
  uint64_t n_pages;
  GHashTable *by_pfn;     /* &pages[i].pfn -> &pages[i] */
  GArray **free;          /* [size * nodes + node]: indices into pages, a LIFO stack */
  uint64_t total[N_HPAGE_SIZES], nfree[N_HPAGE_SIZES];
  unsigned order[N_HPAGE_SIZES]; /* in 4K frames: a PMD's span, a PUD's */
};

static const SettingId hpage_setting[N_HPAGE_SIZES] = { SET_HUGETLB_NR_HUGEPAGES, SET_HUGETLB_NR_HUGEPAGES_1G };

unsigned hugetlb_order(const Hugetlb *h, HugetlbSize size)
{
  g_return_val_if_fail(h != NULL && size < N_HPAGE_SIZES, 0);
  return h->order[size];
}

static GArray *free_list(const Hugetlb *h, HugetlbSize size, int node)
{
  return h->free[size * h->nodes + node];
}

/* The lowest wholly free aligned range of `order` on `node`, searched zone
 * by zone from the highest (Normal first, as the zonelist tries them). */
static gboolean take_range(PhysMem *pm, int node, unsigned order, uint64_t *pfn)
{
  static const ZoneType zones[] = { ZONE_NORMAL, ZONE_DMA32, ZONE_DMA };
  uint64_t pages = UINT64_C(1) << order;
  for (unsigned i = 0; i < G_N_ELEMENTS(zones); i++) {
    BuddyZone *z = physmem_zone(pm, node, zones[i]);
    if (!z)
      continue;
    uint64_t end = buddy_end_pfn(z);
    for (uint64_t p = (buddy_start_pfn(z) + pages - 1) & ~(pages - 1); p + pages <= end; p += pages) {
      if (physmem_alloc_range(pm, p, order, MT_MOVABLE)) {
        *pfn = p;
        return TRUE;
      }
    }
  }
  return FALSE;
}

static gboolean take_page(PhysMem *pm, int node, unsigned order, unsigned max_order, uint64_t *pfn)
{
  if (order <= max_order)
    return physmem_alloc_on(pm, node, order, MT_MOVABLE, pfn);
  return take_range(pm, node, order, pfn);
}

static void release_page(const Hugetlb *h, PhysMem *pm, const PoolPage *p)
{
  physmem_release_range(pm, p->pfn, h->order[p->size]);
}

Hugetlb *hugetlb_new(const Settings *s, PhysMem *pm, const PtGeometry *g, GError **error)
{
  g_return_val_if_fail(g != NULL && g->levels >= 3, NULL);
  Hugetlb *h = g_new0(Hugetlb, 1);
  h->nodes = physmem_nodes(pm);
  h->order[HPAGE_2M] = g->shift[2] - 12;
  h->order[HPAGE_1G] = g->shift[3] - 12;
  unsigned max_order = (unsigned)settings_int(s, SET_BUDDY_MAX_ORDER);
  uint64_t want[N_HPAGE_SIZES];
  for (HugetlbSize sz = 0; sz < N_HPAGE_SIZES; sz++)
    want[sz] = (uint64_t)settings_int(s, hpage_setting[sz]);
  h->pages = g_new0(PoolPage, want[HPAGE_2M] + want[HPAGE_1G]);
  h->by_pfn = g_hash_table_new(g_int64_hash, g_int64_equal);
  h->free = g_new0(GArray *, (gsize)N_HPAGE_SIZES * h->nodes);
  for (int i = 0; i < N_HPAGE_SIZES * h->nodes; i++)
    h->free[i] = g_array_new(FALSE, FALSE, sizeof(guint64));

  /* Gigantic pages first: the kernel reserves them from memblock before the
   * buddy allocator holds memory, so they are not lost to fragmentation. */
  for (int sz = N_HPAGE_SIZES - 1; sz >= 0; sz--) {
    int next_nid = 0;
    for (uint64_t i = 0; i < want[sz]; i++) {
      uint64_t pfn = 0;
      gboolean ok = FALSE;
      int node = next_nid;
      for (int tries = 0; tries < h->nodes && !ok; tries++) {
        node = (next_nid + tries) % h->nodes;
        ok = take_page(pm, node, h->order[sz], max_order, &pfn);
      }
      next_nid = (node + 1) % h->nodes;
      if (!ok) {
        g_autofree char *mem = settings_blame(s, SET_MACHINE_MEM_PER_NODE);
        g_autofree char *pool = settings_blame(s, hpage_setting[sz]);
        g_autofree char *size = settings_format_size(UINT64_C(4096) << h->order[sz]);
        g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                    "%s cannot be reserved: only %" G_GUINT64_FORMAT
                    " free aligned %s pages fit in %d node(s) of %s%s; lower it or add memory",
                    pool, i, size, h->nodes, mem, sz == HPAGE_2M && want[HPAGE_1G] ? " next to the 1G pool" : "");
        hugetlb_free(h, pm);
        return NULL;
      }
      PoolPage *p = &h->pages[h->n_pages];
      *p = (PoolPage){ .pfn = pfn, .size = (uint8_t)sz, .node = physmem_node_of(pm, pfn) };
      guint64 idx = h->n_pages++;
      g_hash_table_insert(h->by_pfn, &p->pfn, p);
      g_array_append_val(free_list(h, (HugetlbSize)sz, p->node), idx);
      h->total[sz]++;
      h->nfree[sz]++;
    }
  }
  return h;
}

void hugetlb_free(Hugetlb *h, PhysMem *pm)
{
  if (!h)
    return;
  for (uint64_t i = 0; i < h->n_pages; i++)
    release_page(h, pm, &h->pages[i]);
  for (int i = 0; i < N_HPAGE_SIZES * h->nodes; i++)
    g_array_free(h->free[i], TRUE);
  g_free(h->free);
  g_hash_table_destroy(h->by_pfn);
  g_free(h->pages);
  g_free(h);
}

gboolean hugetlb_alloc(Hugetlb *h, HugetlbSize size, const int *nodes, unsigned n_nodes, uint64_t *pfn)
{
  g_return_val_if_fail(h != NULL && size < N_HPAGE_SIZES && nodes != NULL, FALSE);
  if (!h->nfree[size])
    return FALSE;
  for (unsigned i = 0; i < n_nodes; i++) {
    g_return_val_if_fail(nodes[i] >= 0 && nodes[i] < h->nodes, FALSE);
    GArray *fl = free_list(h, size, nodes[i]);
    if (!fl->len)
      continue;
    guint64 idx = g_array_index(fl, guint64, fl->len - 1);
    g_array_set_size(fl, fl->len - 1);
    PoolPage *p = &h->pages[idx];
    p->in_use = TRUE;
    h->nfree[size]--;
    *pfn = p->pfn;
    return TRUE;
  }
  return FALSE; /* free pages only on nodes the policy does not allow */
}

void hugetlb_put(Hugetlb *h, uint64_t pfn)
{
  g_return_if_fail(h != NULL);
  PoolPage *p = g_hash_table_lookup(h->by_pfn, &pfn);
  if (!p || !p->in_use) {
    g_critical("hugetlb_put: pfn %#" G_GINT64_MODIFIER "x is not a pool page in use", pfn);
    return;
  }
  p->in_use = FALSE;
  guint64 idx = (guint64)(p - h->pages);
  g_array_append_val(free_list(h, (HugetlbSize)p->size, p->node), idx);
  h->nfree[p->size]++;
}

gboolean hugetlb_owns(const Hugetlb *h, uint64_t pfn, HugetlbSize *size)
{
  if (!h || !h->n_pages)
    return FALSE;
  const PoolPage *p = g_hash_table_lookup(h->by_pfn, &pfn);
  if (!p)
    return FALSE;
  if (size)
    *size = (HugetlbSize)p->size;
  return TRUE;
}

uint64_t hugetlb_total(const Hugetlb *h, HugetlbSize size)
{
  g_return_val_if_fail(h != NULL && size < N_HPAGE_SIZES, 0);
  return h->total[size];
}

uint64_t hugetlb_free_count(const Hugetlb *h, HugetlbSize size)
{
  g_return_val_if_fail(h != NULL && size < N_HPAGE_SIZES, 0);
  return h->nfree[size];
}

uint64_t hugetlb_free_on(const Hugetlb *h, HugetlbSize size, int node)
{
  g_return_val_if_fail(h != NULL && size < N_HPAGE_SIZES && node >= 0 && node < h->nodes, 0);
  return free_list(h, size, node)->len;
}
