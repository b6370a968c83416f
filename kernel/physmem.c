/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * physmem.c - the machine's physical memory: nodes, their zones, and the
 * zonelist an allocation walks.
 *
 * Models the x86-64 zone layout (arch/x86/include/asm/dma.h: ZONE_DMA below
 * 16 MiB, ZONE_DMA32 below 4 GiB, both on node 0 only, ZONE_NORMAL above),
 * memory the kernel keeps from boot (mem.kernel_reserved, taken from node 0
 * just above the DMA zone and never given to the buddy allocator), and the
 * node-ordered zonelist of mm/page_alloc.c build_zonelists: the local node's
 * zones from Normal down to DMA, then every other node's the same way, nearest
 * node first.  A lower zone keeps a lowmem reserve (mem.lowmem_reserve_ratio,
 * setup_per_zone_lowmem_reserve): the managed pages of the zones above it
 * divided by the ratio, which on any machine above 4 GiB is all of ZONE_DMA.
 * Leaves out: watermarks and reclaim (a zone either serves the request or is
 * passed over), ZONE_MOVABLE (never populated), and memory holes other than
 * the reserved range.
 * Zones with no pages are not created.  mem.kernel_reserved is rounded up to
 * whole 4K pages.
 *
 * Memory under pressure (the end of this file).  A long-running machine has
 * pages of other tenants (page cache, slab) scattered over its memory, so
 * few pageblocks are free as a whole.  mem.fragmentation models them: each
 * whole pageblock of the Normal and DMA32 zones gets one background page
 * with that probability, independently, at a random offset inside it, and
 * each such page is movable with probability mem.fragmentation_movable
 * (unmovable ones claim their pageblock, as a slab allocation falling back
 * into a free movable pageblock does).  The pageblocks are drawn from a
 * fixed seed per zone, walking the zone by geometric skips, so the same
 * settings give the same layout on every run and the cost is proportional
 * to the pages placed.  The DMA zone is left alone (16M, kept from user
 * memory by its lowmem reserve).  A
 * huge allocation that fails may run direct compaction (kernel/compaction.c)
 * on the zones it tried, which migrates the movable background pages and
 * the processes' anonymous pages (physmem_set_migrator), and
 * then tries once more (__alloc_pages_direct_compact): an async pass, then
 * a second one, sync-light unless __GFP_NORETRY (alloc_after_compaction).
 */
#include "config.h"
#include "physmem.h"
#include "errors.h"
#include "compaction.h"

#include <math.h>
#include <string.h>

/* x86-64 zone limits in bytes (MAX_DMA_PFN, MAX_DMA32_PFN): architecture,
 * not policy. */
#define X86_DMA_LIMIT_BYTES (UINT64_C(16) << 20)
#define X86_DMA32_LIMIT_BYTES (UINT64_C(4) << 30)

/* The order a node's zones are tried in (highest usable zone first). */
static const ZoneType zone_try_order[] = { ZONE_NORMAL, ZONE_DMA32, ZONE_DMA };

struct PhysMem {
  int nodes;
  uint64_t pages_per_node;
  BuddyZone **zones;  /* [node * N_ZONE_TYPES + type], NULL where empty */
  Topology *topo;     /* distances between nodes (owned) */
  CompactZone *compact;  /* [node * N_ZONE_TYPES + type]: deferral and scanner positions */
  int extfrag_threshold; /* compact.extfrag_threshold */
  uint64_t *lowmem_reserve; /* [node * N_ZONE_TYPES + type]: free pages an allocation must leave there */
  /* last_cpupid of each base page (physmem_xchg_last_cpupid), in chunks of
   * CPUPID_CHUNK pages made when a page of theirs is first given one. */
  uint16_t **cpupid;
  uint64_t cpupid_chunks;
  /* The reverse map (physmem_rmap_set), chunked as cpupid: RMAP_WORDS
   * words per frame, the pid and the page number + 1 (0: none). */
  uint32_t **rmap;
  const PhysMigrator *migrator;
};

/* Words of PhysMem.rmap per frame: pid, page number + 1 (low, high). */
#define RMAP_WORDS 3

/* Pages per chunk of PhysMem.cpupid. */
#define CPUPID_CHUNK_SHIFT 16

static void place_background(PhysMem *pm, double fraction, double movable);
static uint64_t frame_chunks(const PhysMem *pm);
static gboolean alloc_after_compaction(PhysMem *pm, int node, unsigned order, gboolean this_node, CompactMode mode,
                                       uint64_t *pfn, CompactResult *cr);

static gboolean layout_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean layout_error(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, msg);
  return FALSE;
}

/* Reject machines the layout cannot be built for; messages name the
 * settings, where their values came from, and what they may be. */
static gboolean check_machine(const Settings *s, uint64_t mem_per_node, uint64_t reserved, int64_t max_order,
                              int64_t pb_order, GError **error)
{
  g_autofree char *max_w = settings_blame(s, SET_BUDDY_MAX_ORDER);
  g_autofree char *mem_w = settings_blame(s, SET_MACHINE_MEM_PER_NODE);
  if (pb_order > max_order) {
    g_autofree char *pb_w = settings_blame(s, SET_BUDDY_PAGEBLOCK_ORDER);
    return layout_error(error,
                         "%s exceeds %s: a pageblock must fit in the largest buddy block, so it may be at most %"
                         G_GINT64_FORMAT, pb_w, max_w, max_order);
  }
  uint64_t block_bytes = UINT64_C(1) << (PAGE_SHIFT_4K + max_order);
  g_autofree char *block_s = settings_format_size(block_bytes);
  if (mem_per_node % block_bytes)
    return layout_error(error,
                         "%s is not a multiple of the largest buddy block (%s with %s); it must be a multiple of %s",
                         mem_w, block_s, max_w, block_s);
  uint64_t room = mem_per_node > X86_DMA_LIMIT_BYTES ? mem_per_node - X86_DMA_LIMIT_BYTES : 0;
  if (reserved > room) {
    g_autofree char *res_w = settings_blame(s, SET_MEM_KERNEL_RESERVED);
    g_autofree char *room_s = settings_format_size(room);
    return layout_error(error, "%s does not fit in node 0 above its 16M DMA zone with %s: it may be at most %s", res_w,
                         mem_w, room_s);
  }
  return TRUE;
}

static void add_zone(PhysMem *pm, int node, ZoneType t, uint64_t start_pfn, uint64_t end_pfn, unsigned max_order,
                     unsigned pb_order)
{
  if (start_pfn >= end_pfn)
    return;
  pm->zones[node * N_ZONE_TYPES + t] = buddy_zone_new(t, node, start_pfn, end_pfn, max_order, pb_order);
}

PhysMem *physmem_new(const Settings *s, GError **error)
{
  int nodes = (int)settings_int(s, SET_MACHINE_NODES);
  uint64_t mem_per_node = (uint64_t)settings_int(s, SET_MACHINE_MEM_PER_NODE);
  uint64_t reserved = (uint64_t)settings_int(s, SET_MEM_KERNEL_RESERVED);
  int64_t max_order = settings_int(s, SET_BUDDY_MAX_ORDER);
  int64_t pb_order = settings_int(s, SET_BUDDY_PAGEBLOCK_ORDER);
  /* Like the kernel (pageblock_order is at most MAX_PAGE_ORDER), a default
   * pageblock shrinks with a smaller max_order; only an explicit one is wrong. */
  if (pb_order > max_order && !settings_is_set(s, SET_BUDDY_PAGEBLOCK_ORDER))
    pb_order = max_order;
  if (!check_machine(s, mem_per_node, reserved, max_order, pb_order, error))
    return NULL;
  Topology *topo = topology_new(s, error);
  if (!topo)
    return NULL;

  PhysMem *pm = g_new0(PhysMem, 1);
  pm->topo = topo;
  pm->nodes = nodes;
  pm->pages_per_node = mem_per_node >> PAGE_SHIFT_4K;
  pm->zones = g_new0(BuddyZone *, (gsize)nodes * N_ZONE_TYPES);

  uint64_t page_bytes = UINT64_C(1) << PAGE_SHIFT_4K;
  uint64_t dma_end = X86_DMA_LIMIT_BYTES >> PAGE_SHIFT_4K;
  uint64_t dma32_end = X86_DMA32_LIMIT_BYTES >> PAGE_SHIFT_4K;
  uint64_t reserved_pages = (reserved + page_bytes - 1) >> PAGE_SHIFT_4K; /* whole pages */
  for (int n = 0; n < nodes; n++) {
    uint64_t start = (uint64_t)n * pm->pages_per_node, end = start + pm->pages_per_node;
    if (n == 0) {
      uint64_t usable = dma_end + reserved_pages; /* first pfn above the reserved range */
      add_zone(pm, n, ZONE_DMA, start, MIN(dma_end, end), (unsigned)max_order, (unsigned)pb_order);
      add_zone(pm, n, ZONE_DMA32, usable, MIN(dma32_end, end), (unsigned)max_order, (unsigned)pb_order);
      add_zone(pm, n, ZONE_NORMAL, MAX(usable, dma32_end), end, (unsigned)max_order, (unsigned)pb_order);
    } else {
      add_zone(pm, n, ZONE_NORMAL, start, end, (unsigned)max_order, (unsigned)pb_order);
    }
  }
  pm->extfrag_threshold = (int)settings_int(s, SET_COMPACT_EXTFRAG_THRESHOLD);
  /* setup_per_zone_lowmem_reserve: every allocation here may use Normal
   * (GFP_HIGHUSER_MOVABLE, GFP_KERNEL), so a lower zone keeps the pages of
   * the zones above it divided by the ratio; ZONE_DMA keeps all of itself
   * on any machine of more than 4 GiB. */
  int64_t ratio = settings_int(s, SET_MEM_LOWMEM_RESERVE_RATIO);
  pm->lowmem_reserve = g_new0(uint64_t, (gsize)nodes * N_ZONE_TYPES);
  for (int n = 0; n < nodes; n++)
    for (int t = 0; t < N_ZONE_TYPES; t++) {
      uint64_t above = 0;
      for (int u = t + 1; u < N_ZONE_TYPES; u++)
        if (pm->zones[n * N_ZONE_TYPES + u])
          above += buddy_managed_pages(pm->zones[n * N_ZONE_TYPES + u]);
      pm->lowmem_reserve[n * N_ZONE_TYPES + t] = ratio > 0 ? above / (uint64_t)ratio : 0;
    }
  pm->compact = g_new0(CompactZone, (gsize)nodes * N_ZONE_TYPES);
  for (int i = 0; i < nodes * N_ZONE_TYPES; i++)
    if (pm->zones[i])
      compact_zone_init(&pm->compact[i], pm->zones[i]);
  return pm;
}

void physmem_fragment(PhysMem *pm, const Settings *s)
{
  place_background(pm, settings_double(s, SET_MEM_FRAGMENTATION), settings_double(s, SET_MEM_FRAGMENTATION_MOVABLE));
}

void physmem_free(PhysMem *pm)
{
  if (!pm)
    return;
  for (int i = 0; i < pm->nodes * N_ZONE_TYPES; i++)
    buddy_zone_free(pm->zones[i]);
  g_free(pm->zones);
  topology_free(pm->topo);
  g_free(pm->lowmem_reserve);
  for (uint64_t i = 0; i < pm->cpupid_chunks; i++)
    g_free(pm->cpupid[i]);
  g_free(pm->cpupid);
  for (uint64_t i = 0; pm->rmap && i < frame_chunks(pm); i++)
    g_free(pm->rmap[i]);
  g_free(pm->rmap);
  g_free(pm->compact);
  g_free(pm);
}

gboolean physmem_alloc_on(PhysMem *pm, int node, unsigned order, MigrateType mt, uint64_t *pfn)
{
  g_return_val_if_fail(pm != NULL && node >= 0 && node < pm->nodes, FALSE);
  for (unsigned i = 0; i < G_N_ELEMENTS(zone_try_order); i++) {
    int slot = node * N_ZONE_TYPES + zone_try_order[i];
    BuddyZone *z = pm->zones[slot];
    if (z && buddy_free_pages(z) >= pm->lowmem_reserve[slot] + (UINT64_C(1) << order) &&
        buddy_alloc(z, order, mt, pfn))
      return TRUE;
  }
  return FALSE;
}

static BuddyZone *zone_of(const PhysMem *pm, uint64_t pfn);

gboolean physmem_alloc_range(PhysMem *pm, uint64_t pfn, unsigned order, MigrateType mt)
{
  g_return_val_if_fail(pm != NULL && order < 64 && (pfn & ((UINT64_C(1) << order) - 1)) == 0, FALSE);
  BuddyZone *z = zone_of(pm, pfn);
  uint64_t pages = UINT64_C(1) << order;
  if (!z || pfn + pages > buddy_end_pfn(z))
    return FALSE;
  unsigned piece = MIN(order, buddy_max_order(z));
  uint64_t step = UINT64_C(1) << piece;
  for (uint64_t p = pfn; p < pfn + pages; p += step) {
    if (!buddy_alloc_at(z, p, piece, mt)) {
      for (uint64_t q = pfn; q < p; q += step)
        buddy_free(z, q, piece); /* give back what was taken */
      return FALSE;
    }
  }
  return TRUE;
}

/* What freeing pages forgets of them: page_cpupid_reset_last
 * (free_pages_prepare), and the mapping the reverse map recorded. */
static void frames_forget(PhysMem *pm, uint64_t pfn, unsigned order)
{
  uint64_t mask = (UINT64_C(1) << CPUPID_CHUNK_SHIFT) - 1;
  for (uint64_t p = pfn; p < pfn + (UINT64_C(1) << order) && (pm->cpupid || pm->rmap); p++) {
    uint16_t *c = pm->cpupid ? pm->cpupid[p >> CPUPID_CHUNK_SHIFT] : NULL;
    if (c)
      c[p & mask] = 0;
    uint32_t *r = pm->rmap ? pm->rmap[p >> CPUPID_CHUNK_SHIFT] : NULL;
    if (r)
      memset(&r[(p & mask) * RMAP_WORDS], 0, RMAP_WORDS * sizeof *r);
  }
}

/* The chunks of per-frame state: as many as cover the machine's frames. */
static uint64_t frame_chunks(const PhysMem *pm)
{
  return (((uint64_t)pm->nodes * pm->pages_per_node) >> CPUPID_CHUNK_SHIFT) + 1;
}

void physmem_rmap_set(PhysMem *pm, uint64_t pfn, uint32_t pid, uint64_t va)
{
  g_return_if_fail(pm != NULL);
  uint64_t chunk = pfn >> CPUPID_CHUNK_SHIFT;
  if (!pm->rmap)
    pm->rmap = g_new0(uint32_t *, frame_chunks(pm));
  g_return_if_fail(chunk < frame_chunks(pm));
  if (!pm->rmap[chunk])
    pm->rmap[chunk] = g_new0(uint32_t, (UINT64_C(1) << CPUPID_CHUNK_SHIFT) * RMAP_WORDS);
  uint32_t *r = &pm->rmap[chunk][(pfn & ((UINT64_C(1) << CPUPID_CHUNK_SHIFT) - 1)) * RMAP_WORDS];
  uint64_t vpn = (va >> PAGE_SHIFT_4K) + 1;
  r[0] = pid;
  r[1] = (uint32_t)vpn;
  r[2] = (uint32_t)(vpn >> 32);
}

gboolean physmem_rmap_get(const PhysMem *pm, uint64_t pfn, uint32_t *pid, uint64_t *va)
{
  g_return_val_if_fail(pm != NULL && pid != NULL && va != NULL, FALSE);
  uint64_t chunk = pfn >> CPUPID_CHUNK_SHIFT;
  const uint32_t *c = pm->rmap && chunk < frame_chunks(pm) ? pm->rmap[chunk] : NULL;
  if (!c)
    return FALSE;
  const uint32_t *r = &c[(pfn & ((UINT64_C(1) << CPUPID_CHUNK_SHIFT) - 1)) * RMAP_WORDS];
  uint64_t vpn = (uint64_t)r[2] << 32 | r[1];
  if (!vpn)
    return FALSE;
  *pid = r[0];
  *va = (vpn - 1) << PAGE_SHIFT_4K;
  return TRUE;
}

void physmem_set_migrator(PhysMem *pm, const PhysMigrator *m)
{
  g_return_if_fail(pm != NULL);
  pm->migrator = m;
  for (int i = 0; i < pm->nodes * N_ZONE_TYPES; i++)
    pm->compact[i].mig = m;
}

uint16_t physmem_last_cpupid(const PhysMem *pm, uint64_t pfn)
{
  const uint16_t *c = pm->cpupid && (pfn >> CPUPID_CHUNK_SHIFT) < pm->cpupid_chunks
                        ? pm->cpupid[pfn >> CPUPID_CHUNK_SHIFT] : NULL;
  /* Kept inverted, so that a page never given one reads all ones (-1). */
  return c ? (uint16_t)~c[pfn & ((UINT64_C(1) << CPUPID_CHUNK_SHIFT) - 1)] : PHYSMEM_CPUPID_UNSET;
}

uint16_t physmem_xchg_last_cpupid(PhysMem *pm, uint64_t pfn, uint16_t cpupid)
{
  uint16_t last = physmem_last_cpupid(pm, pfn);
  uint64_t chunk = pfn >> CPUPID_CHUNK_SHIFT;
  if (!pm->cpupid) {
    pm->cpupid_chunks = frame_chunks(pm);
    pm->cpupid = g_new0(uint16_t *, pm->cpupid_chunks);
  }
  g_return_val_if_fail(chunk < pm->cpupid_chunks, last);
  if (!pm->cpupid[chunk])
    pm->cpupid[chunk] = g_new0(uint16_t, UINT64_C(1) << CPUPID_CHUNK_SHIFT);
  pm->cpupid[chunk][pfn & ((UINT64_C(1) << CPUPID_CHUNK_SHIFT) - 1)] = (uint16_t)~cpupid;
  return last;
}

void physmem_release_range(PhysMem *pm, uint64_t pfn, unsigned order)
{
  g_return_if_fail(pm != NULL && order < 64);
  frames_forget(pm, pfn, order);
  BuddyZone *z = zone_of(pm, pfn);
  if (!z) {
    g_critical("physmem_release_range: pfn %#" G_GINT64_MODIFIER "x is in no zone", pfn);
    return;
  }
  unsigned piece = MIN(order, buddy_max_order(z));
  for (uint64_t p = pfn; p < pfn + (UINT64_C(1) << order); p += UINT64_C(1) << piece)
    buddy_free(z, p, piece);
}

void physmem_split(PhysMem *pm, uint64_t pfn, unsigned order)
{
  g_return_if_fail(pm != NULL);
  BuddyZone *z = zone_of(pm, pfn);
  if (!z) {
    g_critical("physmem_split: pfn %#" G_GINT64_MODIFIER "x is in no zone", pfn);
    return;
  }
  buddy_split_alloc(z, pfn, order);
}

void physmem_split_to(PhysMem *pm, uint64_t pfn, unsigned order, unsigned piece, MigrateType mt)
{
  g_return_if_fail(pm != NULL && piece <= order);
  if (piece == 0) {
    physmem_split(pm, pfn, order);
    return;
  }
  BuddyZone *z = zone_of(pm, pfn);
  if (!z) {
    g_critical("physmem_split_to: pfn %#" G_GINT64_MODIFIER "x is in no zone", pfn);
    return;
  }
  /* The buddy allocator records one order per block: give the block back
   * and take its pieces at once; nothing runs in between. */
  buddy_free(z, pfn, order);
  for (uint64_t p = pfn; p < pfn + (UINT64_C(1) << order); p += UINT64_C(1) << piece)
    if (!buddy_alloc_at(z, p, piece, mt))
      g_critical("physmem_split_to: pfn %#" G_GINT64_MODIFIER "x could not be taken back", p);
}

gboolean physmem_alloc(PhysMem *pm, int node, unsigned order, MigrateType mt, uint64_t *pfn)
{
  g_return_val_if_fail(pm != NULL && node >= 0 && node < pm->nodes, FALSE);
  /* Nodes nearest first, as build_zonelists() orders them. */
  const unsigned *row = topology_order(pm->topo, (unsigned)node);
  for (int i = 0; i < pm->nodes; i++)
    if (physmem_alloc_on(pm, (int)row[i], order, mt, pfn))
      return TRUE;
  return FALSE;
}

gboolean physmem_alloc_huge(PhysMem *pm, int node, unsigned order, gboolean this_node, CompactMode mode,
                            uint64_t *pfn, CompactResult *cr)
{
  g_return_val_if_fail(pm != NULL && pfn != NULL && cr != NULL, FALSE);
  *cr = (CompactResult){ 0 };
  if (this_node ? physmem_alloc_on(pm, node, order, MT_MOVABLE, pfn)
                : physmem_alloc(pm, node, order, MT_MOVABLE, pfn))
    return TRUE;
  return mode != COMPACT_MODE_NONE && alloc_after_compaction(pm, node, order, this_node, mode, pfn, cr);
}

/* The zone holding pfn, or NULL (reserved, or beyond the last node). */
static BuddyZone *zone_of(const PhysMem *pm, uint64_t pfn)
{
  int node = physmem_node_of(pm, pfn);
  if (node < 0)
    return NULL;
  for (ZoneType t = 0; t < N_ZONE_TYPES; t++) {
    BuddyZone *z = pm->zones[node * N_ZONE_TYPES + t];
    if (z && pfn >= buddy_start_pfn(z) && pfn < buddy_end_pfn(z))
      return z;
  }
  return NULL;
}

void physmem_release(PhysMem *pm, uint64_t pfn, unsigned order)
{
  g_return_if_fail(pm != NULL);
  BuddyZone *z = zone_of(pm, pfn);
  if (!z) {
    g_critical("physmem_release: pfn %#" G_GINT64_MODIFIER "x is in no zone", pfn);
    return;
  }
  frames_forget(pm, pfn, order);
  buddy_free(z, pfn, order);
}

int physmem_nodes(const PhysMem *pm)
{
  return pm->nodes;
}

const Topology *physmem_topology(const PhysMem *pm)
{
  return pm->topo;
}

int physmem_node_of(const PhysMem *pm, uint64_t pfn)
{
  uint64_t n = pfn / pm->pages_per_node;
  return n < (uint64_t)pm->nodes ? (int)n : -1;
}

uint64_t physmem_pages_per_node(const PhysMem *pm)
{
  return pm->pages_per_node;
}

uint64_t physmem_free_pages(const PhysMem *pm, int node)
{
  g_return_val_if_fail(node >= 0 && node < pm->nodes, 0);
  uint64_t pages = 0;
  for (ZoneType t = 0; t < N_ZONE_TYPES; t++) {
    const BuddyZone *z = pm->zones[node * N_ZONE_TYPES + t];
    if (z)
      pages += buddy_free_pages(z);
  }
  return pages;
}

BuddyZone *physmem_zone(const PhysMem *pm, int node, ZoneType t)
{
  if (node < 0 || node >= pm->nodes || t >= N_ZONE_TYPES)
    return NULL;
  return pm->zones[node * N_ZONE_TYPES + t];
}

/* mm/vmstat.c frag_show_print: "Node %d, zone %8s " then "%6lu " per order. */
void physmem_buddyinfo(const PhysMem *pm, GString *out)
{
  for (int n = 0; n < pm->nodes; n++) {
    for (ZoneType t = 0; t < N_ZONE_TYPES; t++) {
      const BuddyZone *z = pm->zones[n * N_ZONE_TYPES + t];
      if (!z)
        continue;
      g_string_append_printf(out, "Node %d, zone %8s ", n, buddy_zone_name(t));
      for (unsigned o = 0; o <= buddy_max_order(z); o++)
        g_string_append_printf(out, "%6" G_GUINT64_FORMAT " ", buddy_free_blocks(z, o));
      g_string_append_c(out, '\n');
    }
  }
}

uint64_t physmem_host_bytes(const PhysMem *pm)
{
  uint64_t bytes = sizeof(*pm) + (uint64_t)pm->nodes * N_ZONE_TYPES * sizeof(BuddyZone *) +
                   (uint64_t)pm->nodes * pm->nodes * sizeof(int) +
                   (uint64_t)pm->nodes * N_ZONE_TYPES * sizeof(CompactZone);
  for (int i = 0; i < pm->nodes * N_ZONE_TYPES; i++)
    if (pm->zones[i])
      bytes += buddy_host_bytes(pm->zones[i]);
  return bytes;
}

/* ---- memory under pressure ------------------------------------------------ */

/* Seed of the background layout: a fixed value, so the layout belongs to the
 * machine and not to the run; mixed with the node and zone of each zone. */
#define BACKGROUND_SEED UINT64_C(0x6d656d2e66726167)

/* splitmix64 (Steele, Lea, Flood 2014). */
static uint64_t background_next(uint64_t *state)
{
  uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double background_unit(uint64_t *state)
{
  return (double)(background_next(state) >> 11) * 0x1.0p-53;
}

/* One background page in each whole pageblock of z with probability
 * `fraction`: the gap to the next chosen pageblock is geometric, drawn as
 * floor(log(u) / log(1 - fraction)) for u uniform in (0, 1]. */
static void place_in_zone(BuddyZone *z, double fraction, double movable)
{
  uint64_t pb = UINT64_C(1) << buddy_pageblock_order(z);
  uint64_t first = (buddy_start_pfn(z) + pb - 1) & ~(pb - 1);
  uint64_t end = buddy_end_pfn(z) & ~(pb - 1);
  if (end <= first)
    return;
  uint64_t n = (end - first) / pb;
  uint64_t state = BACKGROUND_SEED ^ ((uint64_t)buddy_node(z) << 8 | (uint64_t)buddy_zone_type(z));
  (void)background_next(&state);
  double log_keep = fraction < 1 ? log1p(-fraction) : 0;
  for (uint64_t k = 0;; k++) {
    if (fraction < 1) {
      double skip = floor(log(1 - background_unit(&state)) / log_keep);
      if (!(skip < (double)(n - k)))
        break;
      k += (uint64_t)skip;
    }
    if (k >= n)
      break;
    uint64_t pfn = first + k * pb + (background_next(&state) & (pb - 1));
    MigrateType mt = background_unit(&state) < movable ? MT_MOVABLE : MT_UNMOVABLE;
    /* A page the boot reservations (zero page, hugetlb pools) hold already
     * keeps its pageblock from being free as a whole anyway. */
    (void)buddy_take(z, pfn, mt);
  }
}

static void place_background(PhysMem *pm, double fraction, double movable)
{
  if (fraction <= 0)
    return;
  for (int node = 0; node < pm->nodes; node++)
    for (ZoneType t = ZONE_DMA32; t <= ZONE_NORMAL; t++) {
      BuddyZone *z = pm->zones[node * N_ZONE_TYPES + t];
      if (z)
        place_in_zone(z, fraction, movable);
    }
}

/* __alloc_pages_direct_compact (mm/page_alloc.c 6.12) at one priority:
 * try_to_compact_pages over the zones the allocation tried, in the same
 * order, stopping at the first that has a block of the order (a
 * synchronous pass defers each zone it fails in); then, if compaction ran
 * anywhere (not deferred or skipped everywhere: a compact_stall), one more
 * attempt.  Returns try_to_compact_pages's result; *got when the block was
 * had. */
static CompactStatus direct_compact(PhysMem *pm, int node, unsigned order, gboolean this_node, gboolean sync,
                                    uint64_t *pfn, CompactResult *cr, gboolean *got)
{
  CompactStatus best = COMPACT_SKIPPED;
  int n_nodes = this_node ? 1 : pm->nodes;
  const unsigned *row = topology_order(pm->topo, (unsigned)node); /* row[0] is node itself */
  *got = FALSE;
  for (int i = 0; i < n_nodes && best != COMPACT_SUCCESS; i++) {
    for (unsigned k = 0; k < G_N_ELEMENTS(zone_try_order); k++) {
      int slot = (int)row[i] * N_ZONE_TYPES + zone_try_order[k];
      /* compaction_suitable: a zone the lowmem reserve keeps from this
       * allocation is not worth compacting. */
      if (!pm->zones[slot] || buddy_managed_pages(pm->zones[slot]) < pm->lowmem_reserve[slot] + (UINT64_C(1) << order))
        continue;
      CompactStatus st =
          compact_zone_direct(pm->zones[slot], &pm->compact[slot], order, pm->extfrag_threshold, sync, cr);
      best = MAX(best, st);
      if (st == COMPACT_SUCCESS)
        break;
    }
  }
  if (best <= COMPACT_DEFERRED)
    return best;
  cr->ran = TRUE;
  cr->stalls++;
  if (!(this_node ? physmem_alloc_on(pm, node, order, MT_MOVABLE, pfn)
                  : physmem_alloc(pm, node, order, MT_MOVABLE, pfn)))
    return best;
  cr->success = TRUE;
  *got = TRUE;
  BuddyZone *z = zone_of(pm, *pfn);
  compaction_defer_reset(&pm->compact[buddy_node(z) * N_ZONE_TYPES + buddy_zone_type(z)], order, TRUE);
  return best;
}

/* The direct compaction of a costly allocation's slow path
 * (__alloc_pages_slowpath, mm/page_alloc.c 6.12).  First an async pass
 * (INIT_COMPACT_PRIORITY).  Under __GFP_NORETRY, when that pass was skipped
 * or deferred everywhere the allocation fails at once; otherwise it stays
 * async (compact_priority = INIT_COMPACT_PRIORITY).  After direct reclaim
 * (not modelled: it frees nothing here) the retry compacts once more, async
 * under __GFP_NORETRY, else at DEF_COMPACT_PRIORITY (sync-light); then
 * __GFP_NORETRY, or a costly order without __GFP_RETRY_MAYFAIL, ends it. */
static gboolean alloc_after_compaction(PhysMem *pm, int node, unsigned order, gboolean this_node, CompactMode mode,
                                       uint64_t *pfn, CompactResult *cr)
{
  gboolean got;
  CompactStatus st = direct_compact(pm, node, order, this_node, FALSE, pfn, cr, &got);
  if (got)
    return TRUE;
  if (mode == COMPACT_MODE_ASYNC && (st == COMPACT_SKIPPED || st == COMPACT_DEFERRED))
    return FALSE;
  direct_compact(pm, node, order, this_node, mode == COMPACT_MODE_SYNC, pfn, cr, &got);
  return got;
}

/* ---- kcompactd (mm/compaction.c 6.12) ---------------------------------- */

/* A zone of node worth compacting for `order` at all: present, and not kept
 * from the allocation by its lowmem reserve (as direct_compact asks). */
static BuddyZone *kcompactd_zone(const PhysMem *pm, int node, ZoneType t, unsigned order)
{
  int slot = node * N_ZONE_TYPES + t;
  BuddyZone *z = pm->zones[slot];
  if (!z || buddy_managed_pages(z) < pm->lowmem_reserve[slot] + (UINT64_C(1) << order))
    return NULL;
  return z;
}

gboolean physmem_kcompactd_suitable(const PhysMem *pm, int node, unsigned order)
{
  g_return_val_if_fail(pm != NULL && node >= 0 && node < pm->nodes, FALSE);
  for (ZoneType t = ZONE_DMA; t < N_ZONE_TYPES; t++) {
    const BuddyZone *z = kcompactd_zone(pm, node, t, order);
    if (z && compaction_suit_allocation_order(z, order, pm->extfrag_threshold) == COMPACT_CONTINUE)
      return TRUE;
  }
  return FALSE;
}

void physmem_kcompactd_work(PhysMem *pm, int node, unsigned order, CompactResult *cr)
{
  g_return_if_fail(pm != NULL && node >= 0 && node < pm->nodes && cr != NULL);
  /* for (zoneid = 0; zoneid <= cc.highest_zoneidx; zoneid++) */
  for (ZoneType t = ZONE_DMA; t < N_ZONE_TYPES; t++) {
    BuddyZone *z = kcompactd_zone(pm, node, t, order);
    if (z)
      compact_zone_kcompactd(z, &pm->compact[node * N_ZONE_TYPES + t], order, pm->extfrag_threshold, cr);
  }
}

/* ---- contiguous boot allocations (the ppc64 hashed page table) ---------- */

/* A naturally aligned run of 2^order pages on `node`, order possibly above
 * buddy.max_order: what memblock_phys_alloc_range(size, size, ...) gives
 * early boot code (arch/powerpc/mm/book3s64/hash_utils.c htab_initialize()
 * allocates the HPT so).  Max-order blocks are taken from one zone until
 * 2^(order - max_order) of them form an aligned run; the others go back.
 * Meant for machine start, when a zone hands its blocks out in address
 * order, so the first run completes after a few blocks. */
gboolean physmem_alloc_contig(PhysMem *pm, int node, unsigned order, uint64_t *pfn)
{
  g_return_val_if_fail(pm != NULL && pfn != NULL && node >= 0 && node < pm->nodes, FALSE);
  for (unsigned i = 0; i < G_N_ELEMENTS(zone_try_order); i++) {
    BuddyZone *z = pm->zones[node * N_ZONE_TYPES + zone_try_order[i]];
    if (!z)
      continue;
    unsigned max = buddy_max_order(z);
    if (order <= max) {
      if (buddy_alloc(z, order, MT_UNMOVABLE, pfn))
        return TRUE;
      continue;
    }
    uint64_t need = UINT64_C(1) << (order - max), run_mask = (UINT64_C(1) << order) - 1;
    GArray *taken = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GHashTable *runs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL); /* run -> blocks */
    gboolean found = FALSE;
    uint64_t run = 0, p;
    while (!found && buddy_alloc(z, max, MT_UNMOVABLE, &p)) {
      g_array_append_val(taken, p);
      run = p & ~run_mask;
      guint n = GPOINTER_TO_UINT(g_hash_table_lookup(runs, &run)) + 1;
      g_hash_table_insert(runs, g_memdup2(&run, sizeof run), GUINT_TO_POINTER(n));
      found = n == need;
    }
    for (guint j = 0; j < taken->len; j++) {
      uint64_t b = g_array_index(taken, uint64_t, j);
      if (!found || (b & ~run_mask) != run)
        buddy_free(z, b, max);
    }
    g_array_free(taken, TRUE);
    g_hash_table_destroy(runs);
    if (found) {
      *pfn = run;
      return TRUE;
    }
  }
  return FALSE;
}

