/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_physmem.c - nodes and zones of the machine: the x86-64 zone layout,
 * the kernel's reserved range, the zonelist order across nodes, the
 * /proc/buddyinfo text, machines that cannot be built, a 1 TiB machine
 * that costs little host memory, the background pages of mem.fragmentation,
 * and huge allocations that compact.
 */
#include "config.h"
#include "testutil.h"
#include "errors.h"
#include "physmem.h"

#include <string.h>

/* Settings from "key=value" pairs, up to a NULL. */
static Settings *settings_va(const char *first, va_list ap)
{
  Settings *s = settings_new();
  for (const char *pair = first; pair; pair = va_arg(ap, const char *)) {
    GError *err = NULL;
    ck_assert_msg(settings_set_pair(s, pair, "test", &err), "%s: %s", pair, err ? err->message : "");
  }
  return s;
}

/* physmem_new on settings from "key=value" pairs, up to a NULL. */
static PhysMem *physmem_va(GError **error, const char *first, va_list ap)
{
  g_autoptr(Settings) s = settings_va(first, ap);
  PhysMem *pm = physmem_new(s, error);
  if (pm)
    physmem_fragment(pm, s);
  return pm;
}

static PhysMem *machine(const char *first, ...)
{
  va_list ap;
  va_start(ap, first);
  GError *err = NULL;
  PhysMem *pm = physmem_va(&err, first, ap);
  va_end(ap);
  ck_assert_no_error(err);
  return pm;
}

static PhysMem *physmem_try(GError **error, const char *first, ...)
{
  va_list ap;
  va_start(ap, first);
  PhysMem *pm = physmem_va(error, first, ap);
  va_end(ap);
  return pm;
}

static void assert_zone(const PhysMem *pm, int node, ZoneType t, uint64_t start, uint64_t end)
{
  const BuddyZone *z = physmem_zone(pm, node, t);
  ck_assert_msg(z != NULL, "node %d has no %s zone", node, buddy_zone_name(t));
  ck_assert_uint_eq(buddy_start_pfn(z), start);
  ck_assert_uint_eq(buddy_end_pfn(z), end);
  ck_assert_int_eq(buddy_node(z), node);
  ck_assert_int_eq(buddy_zone_type(z), t);
}

/* Two 8G nodes, 64M reserved: node 0 is DMA [0, 4096), reserved
 * [4096, 20480), DMA32 [20480, 1M), Normal [1M, 2M); node 1 Normal [2M, 4M)
 * (pfns; M = 2^20). */
START_TEST(test_layout_of_two_nodes)
{
  g_autoptr(PhysMem) pm = machine("machine.nodes=2", "machine.mem_per_node=8G", "mem.kernel_reserved=64M", NULL);
  ck_assert_int_eq(physmem_nodes(pm), 2);
  ck_assert_uint_eq(physmem_pages_per_node(pm), 2097152);
  assert_zone(pm, 0, ZONE_DMA, 0, 4096);
  assert_zone(pm, 0, ZONE_DMA32, 20480, 1048576);
  assert_zone(pm, 0, ZONE_NORMAL, 1048576, 2097152);
  assert_zone(pm, 1, ZONE_NORMAL, 2097152, 4194304);
  ck_assert(physmem_zone(pm, 1, ZONE_DMA) == NULL);
  ck_assert(physmem_zone(pm, 1, ZONE_DMA32) == NULL);
  ck_assert(physmem_zone(pm, 0, ZONE_MOVABLE) == NULL);
  ck_assert(physmem_zone(pm, 2, ZONE_NORMAL) == NULL);
  /* 4096 + (1048576 - 20480) + 1048576 */
  ck_assert_uint_eq(physmem_free_pages(pm, 0), 2080768);
  ck_assert_uint_eq(physmem_free_pages(pm, 1), 2097152);
  ck_assert_int_eq(physmem_node_of(pm, 2097151), 0);
  ck_assert_int_eq(physmem_node_of(pm, 2097152), 1);
  ck_assert_int_eq(physmem_node_of(pm, 4194304), -1);
}
END_TEST

/* 128M node with 64M reserved: DMA [0, 4096) and DMA32 [20480, 32768).
 * Draining the node hands out each of its 16384 pages once and none of the
 * reserved range; releasing them all restores the free count. */
START_TEST(test_reserved_range_is_never_handed_out)
{
  g_autoptr(PhysMem) pm = machine("machine.mem_per_node=128M", "mem.kernel_reserved=64M", "mem.lowmem_reserve_ratio=0", NULL);
  assert_zone(pm, 0, ZONE_DMA32, 20480, 32768);
  ck_assert(physmem_zone(pm, 0, ZONE_NORMAL) == NULL);
  g_autofree guint8 *seen = g_new0(guint8, 32768);
  g_autoptr(GArray) got = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  uint64_t pfn;
  while (physmem_alloc_on(pm, 0, 0, MT_MOVABLE, &pfn)) {
    ck_assert_msg(pfn < 4096 || (pfn >= 20480 && pfn < 32768), "pfn %#lx handed out", (unsigned long)pfn);
    ck_assert(!seen[pfn]);
    seen[pfn] = 1;
    g_array_append_val(got, pfn);
  }
  ck_assert_uint_eq(got->len, 16384);
  ck_assert_uint_eq(physmem_free_pages(pm, 0), 0);
  for (guint i = 0; i < got->len; i++)
    physmem_release(pm, g_array_index(got, uint64_t, i), 0);
  ck_assert_uint_eq(physmem_free_pages(pm, 0), 16384);
  ck_assert_uint_eq(buddy_free_blocks(physmem_zone(pm, 0, ZONE_DMA32), 10), 12);
}
END_TEST

/* 1M + 1 byte reserved is 257 pages: DMA32 starts at 4096 + 257. */
START_TEST(test_reserved_rounds_up_to_pages)
{
  g_autoptr(PhysMem) pm = machine("machine.mem_per_node=64M", "mem.kernel_reserved=1048577", NULL);
  assert_zone(pm, 0, ZONE_DMA32, 4353, 16384);
  g_autoptr(PhysMem) none = machine("machine.mem_per_node=64M", "mem.kernel_reserved=0", NULL);
  assert_zone(none, 0, ZONE_DMA32, 4096, 16384);
}
END_TEST

/* Which node and zone a pfn belongs to, as "n2/Normal". */
static char *where(const PhysMem *pm, uint64_t pfn)
{
  int node = physmem_node_of(pm, pfn);
  for (ZoneType t = 0; t < N_ZONE_TYPES; t++) {
    const BuddyZone *z = physmem_zone(pm, node, t);
    if (z && pfn >= buddy_start_pfn(z) && pfn < buddy_end_pfn(z))
      return g_strdup_printf("n%d/%s", node, buddy_zone_name(t));
  }
  return g_strdup("nowhere");
}

/* Allocate order-10 blocks from `node` until none is left and describe the
 * run as "n2/Normal x16, n1/Normal x16, ...". */
static char *drain(PhysMem *pm, int node, gboolean only_there)
{
  GString *out = g_string_new(NULL);
  g_autofree char *last = NULL;
  unsigned run = 0;
  uint64_t pfn;
  while (only_there ? physmem_alloc_on(pm, node, 10, MT_MOVABLE, &pfn) : physmem_alloc(pm, node, 10, MT_MOVABLE, &pfn)) {
    char *w = where(pm, pfn);
    if (last && strcmp(w, last) == 0) {
      run++;
      g_free(w);
      continue;
    }
    if (last)
      g_string_append_printf(out, "%s x%u, ", last, run);
    g_free(last);
    last = w;
    run = 1;
  }
  if (last)
    g_string_append_printf(out, "%s x%u", last, run);
  return g_string_free(out, FALSE);
}

/* setup_per_zone_lowmem_reserve: on an 8G node the DMA zone keeps
 * (DMA32 + Normal) / 256 = 32M > its 16M, so nothing here ever comes from
 * it; DMA32 keeps Normal / 256 = 4M (1024 pages) of itself. */
START_TEST(test_lowmem_reserve)
{
  g_autoptr(PhysMem) pm = machine("machine.mem_per_node=8G", NULL);
  BuddyZone *dma = physmem_zone(pm, 0, ZONE_DMA), *dma32 = physmem_zone(pm, 0, ZONE_DMA32);
  uint64_t dma_free = buddy_free_pages(dma);
  uint64_t pfn, n = 0;
  while (physmem_alloc_on(pm, 0, 9, MT_MOVABLE, &pfn)) {
    ck_assert_uint_ge(pfn, 4096);
    n++;
  }
  ck_assert_uint_gt(n, 0);
  ck_assert_uint_eq(buddy_free_pages(dma), dma_free);
  uint64_t normal = buddy_managed_pages(physmem_zone(pm, 0, ZONE_NORMAL));
  ck_assert_uint_ge(buddy_free_pages(dma32), normal / 256);
  ck_assert_uint_lt(buddy_free_pages(dma32), normal / 256 + 512);
}
END_TEST

/* Four 64M nodes on a ring (SLIT 10/20/30), nothing reserved: node 0 has DMA
 * (4 blocks of 4M) and DMA32 (12), nodes 1..3 Normal (16 each).  From node
 * 2: itself, then nodes 1 and 3 (distance 20, lower first), then node 0
 * (distance 30) from DMA32 down to DMA. */
#define RING4 "numa.distances=10,20,30,20;20,10,20,30;30,20,10,20;20,30,20,10"
START_TEST(test_zonelist_order)
{
  g_autoptr(PhysMem) pm = machine("machine.nodes=4", "machine.mem_per_node=64M", "mem.kernel_reserved=0",
                                  "mem.lowmem_reserve_ratio=0", RING4, NULL);
  g_autofree char *from2 = drain(pm, 2, FALSE);
  ck_assert_str_eq(from2, "n2/Normal x16, n1/Normal x16, n3/Normal x16, n0/DMA32 x12, n0/DMA x4");

  g_autoptr(PhysMem) pm0 = machine("machine.nodes=4", "machine.mem_per_node=64M", "mem.kernel_reserved=0",
                                   "mem.lowmem_reserve_ratio=0", RING4, NULL);
  g_autofree char *from0 = drain(pm0, 0, FALSE);
  ck_assert_str_eq(from0, "n0/DMA32 x12, n0/DMA x4, n1/Normal x16, n3/Normal x16, n2/Normal x16");

  g_autoptr(PhysMem) pm3 = machine("machine.nodes=4", "machine.mem_per_node=64M", "mem.kernel_reserved=0", NULL);
  g_autofree char *only1 = drain(pm3, 1, TRUE);
  ck_assert_str_eq(only1, "n1/Normal x16");
  ck_assert_uint_eq(physmem_free_pages(pm3, 0), 16384);
  ck_assert_uint_eq(physmem_free_pages(pm3, 1), 0);
}
END_TEST

/* A malformed SLIT is a machine error naming numa.distances. */
START_TEST(test_bad_distances)
{
  static const char *bad[] = {
    "numa.distances=10,20;20,10",                          /* 2 rows for 4 nodes */
    "numa.distances=10,20,20,20;20,10,20;20,20,10,20;20,20,20,10", /* short row */
    "numa.distances=10,20,20,20;20,11,20,20;20,20,10,20;20,20,20,10", /* diagonal */
    "numa.distances=10,20,20,20;20,10,20,20;20,20,10,9;20,20,20,10",  /* below local */
    "numa.distances=10,x,20,20;20,10,20,20;20,20,10,20;20,20,20,10",  /* not a number */
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
    GError *err = NULL;
    PhysMem *pm = physmem_try(&err, "machine.nodes=4", "machine.mem_per_node=64M", "mem.kernel_reserved=0", bad[i], NULL);
    ck_assert_ptr_null(pm);
    ck_assert_msg(err && strstr(err->message, "numa.distances"), "%s: %s", bad[i], err ? err->message : "no error");
    g_clear_error(&err);
  }
}
END_TEST

/* Two 64M nodes, 1M reserved.  DMA [0, 4096): four order-10 blocks.  DMA32
 * [4352, 16384): 4352 (order 8), 4608 (order 9), then 11 blocks of order 10
 * from 5120.  Node 1: 16 blocks of order 10.  Counts are "%6lu " per order
 * after "Node %d, zone %8s ", as mm/vmstat.c prints them. */
START_TEST(test_buddyinfo_text)
{
  g_autoptr(PhysMem) pm = machine("machine.nodes=2", "machine.mem_per_node=64M", "mem.kernel_reserved=1M", NULL);
  g_autoptr(GString) out = g_string_new(NULL);
  physmem_buddyinfo(pm, out);
  ck_assert_str_eq(out->str,
                   "Node 0, zone      DMA      0      0      0      0      0      0      0      0      0      0      4 \n"
                   "Node 0, zone    DMA32      0      0      0      0      0      0      0      0      1      1     11 \n"
                   "Node 1, zone   Normal      0      0      0      0      0      0      0      0      0      0     16 \n");
  uint64_t pfn;
  ck_assert(physmem_alloc(pm, 1, 0, MT_MOVABLE, &pfn));
  ck_assert_uint_eq(pfn, 16384);
  g_string_truncate(out, 0);
  physmem_buddyinfo(pm, out);
  ck_assert_msg(strstr(out->str, "Node 1, zone   Normal      1      1      1      1      1      1      1      1      1"
                                 "      1     15 \n") != NULL,
                "after one page: %s", out->str);
  physmem_release(pm, pfn, 0);
  ck_assert_uint_eq(physmem_free_pages(pm, 1), 16384);
}
END_TEST

/* 16 nodes of 64G.  Nothing is materialised until used: the whole machine's
 * bookkeeping fits in a few tens of KiB, and one page on each node adds one
 * 4M chunk (8 KiB) per node. */
START_TEST(test_terabyte_machine_is_sparse)
{
  g_autoptr(PhysMem) pm = machine("machine.nodes=16", "machine.mem_per_node=64G", NULL);
  uint64_t start_bytes = physmem_host_bytes(pm);
  ck_assert_uint_lt(start_bytes, 64 * 1024);
  uint64_t free_total = 0;
  for (int n = 0; n < 16; n++)
    free_total += physmem_free_pages(pm, n);
  ck_assert_uint_eq(free_total, (UINT64_C(16) << 24) - 16384); /* 1T in pages minus 64M reserved */
  for (int n = 0; n < 16; n++) {
    uint64_t pfn;
    ck_assert(physmem_alloc_on(pm, n, 0, MT_MOVABLE, &pfn));
    ck_assert_int_eq(physmem_node_of(pm, pfn), n);
  }
  uint64_t grown = physmem_host_bytes(pm) - start_bytes;
  ck_assert_uint_ge(grown, 16 * 8 * 1024);
  ck_assert_uint_lt(grown, 16 * 12 * 1024);
}
END_TEST

static void assert_rejected(const char *setting, const char *says, const char *first, ...)
{
  va_list ap;
  va_start(ap, first);
  GError *err = NULL;
  PhysMem *pm = physmem_va(&err, first, ap);
  va_end(ap);
  ck_assert_msg(pm == NULL, "machine accepted");
  ck_assert(err != NULL);
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE));
  ck_assert_msg(strstr(err->message, setting) != NULL, "'%s' does not name %s", err->message, setting);
  ck_assert_msg(strstr(err->message, says) != NULL, "'%s' does not say '%s'", err->message, says);
  g_error_free(err);
}

START_TEST(test_bad_machines_are_rejected)
{
  assert_rejected("machine.mem_per_node = 66M", "multiple of 4M", "machine.mem_per_node=66M", NULL);
  assert_rejected("machine.mem_per_node = 64M", "multiple of 4G", "machine.mem_per_node=64M", "buddy.max_order=20",
                  "buddy.pageblock_order=9", NULL);
  assert_rejected("mem.kernel_reserved = 64M", "at most 48M", "machine.mem_per_node=64M", NULL);
  assert_rejected("buddy.pageblock_order = 9", "at most 8", "buddy.max_order=8", "buddy.pageblock_order=9", NULL);
}
END_TEST

/* Edge machines that are possible: all of node 0 above DMA reserved, and a
 * default pageblock that shrinks with a smaller max_order. */
START_TEST(test_edge_machines_are_accepted)
{
  g_autoptr(PhysMem) pm = machine("machine.mem_per_node=64M", "mem.kernel_reserved=48M", NULL);
  ck_assert(physmem_zone(pm, 0, ZONE_DMA32) == NULL && physmem_zone(pm, 0, ZONE_NORMAL) == NULL);
  ck_assert_uint_eq(physmem_free_pages(pm, 0), 4096);

  g_autoptr(PhysMem) small = machine("buddy.max_order=8", "machine.mem_per_node=1G", NULL);
  const BuddyZone *z = physmem_zone(small, 0, ZONE_DMA32);
  ck_assert_uint_eq(buddy_max_order(z), 8);
  ck_assert_uint_eq(buddy_pageblock_order(z), 8);

  g_autoptr(PhysMem) three = machine("machine.nodes=3", NULL);
  ck_assert_int_eq(physmem_nodes(three), 3);
}
END_TEST

/* ---- fragmentation and compaction ------------------------------------------ */

/* Free blocks of pageblock order or more in a zone. */
static uint64_t huge_blocks(const BuddyZone *z)
{
  uint64_t n = 0;
  for (unsigned o = buddy_pageblock_order(z); o <= buddy_max_order(z); o++)
    n += buddy_free_blocks(z, o);
  return n;
}

static void assert_zone_valid(const BuddyZone *z)
{
  g_autoptr(GString) why = g_string_new(NULL);
  ck_assert_msg(buddy_check(z, why), "%s", why->str);
}

/* The DMA zone is not fragmented, but its lowmem reserve keeps it from
 * every allocation here: huge allocations have only the fragmented zones. */
static void drain_dma(PhysMem *pm)
{
  uint64_t pfn;
  CompactResult cr;
  uint64_t dma_free = buddy_free_pages(physmem_zone(pm, 0, ZONE_DMA));
  ck_assert(!physmem_alloc_huge(pm, 0, 9, FALSE, COMPACT_MODE_NONE, &pfn, &cr));
  ck_assert_uint_eq(buddy_free_pages(physmem_zone(pm, 0, ZONE_DMA)), dma_free);
}

/* An 8G node: DMA32 [20480, 1M) has 2008 whole pageblocks, Normal [1M, 2M)
 * 2048.  With mem.fragmentation=0 every pageblock is free. */
START_TEST(test_fragmentation_zero_leaves_huge_blocks)
{
  g_autoptr(PhysMem) pm = machine("machine.mem_per_node=8G", NULL);
  const BuddyZone *normal = physmem_zone(pm, 0, ZONE_NORMAL);
  ck_assert_uint_eq(buddy_free_blocks(normal, 10), 1024);
  ck_assert_uint_eq(buddy_taken_pages(normal), 0);
  uint64_t pfn;
  CompactResult cr = { .ran = TRUE, .scanned = 7 };
  ck_assert(physmem_alloc_huge(pm, 0, 9, FALSE, COMPACT_MODE_SYNC, &pfn, &cr));
  ck_assert(!cr.ran && !cr.success && cr.scanned == 0 && cr.migrated == 0);
  ck_assert_int_eq(physmem_node_of(pm, pfn), 0);
}
END_TEST

/* mem.fragmentation=1: one background page in every pageblock of DMA32 and
 * Normal, so no block of order 9 or more is free there; the huge
 * allocations beyond DMA's eight fail without compaction, and succeed with
 * it by moving one page. */
START_TEST(test_fragmentation_one_leaves_none_until_compaction)
{
  g_autoptr(PhysMem) pm = machine("machine.mem_per_node=8G", "mem.fragmentation=1", NULL);
  const BuddyZone *dma32 = physmem_zone(pm, 0, ZONE_DMA32);
  const BuddyZone *normal = physmem_zone(pm, 0, ZONE_NORMAL);
  ck_assert_uint_eq(huge_blocks(dma32), 0);
  ck_assert_uint_eq(huge_blocks(normal), 0);
  ck_assert_uint_eq(buddy_taken_pages(dma32), 2008);
  ck_assert_uint_eq(buddy_taken_pages(normal), 2048);
  for (unsigned o = 0; o < 9; o++)
    ck_assert_uint_eq(buddy_free_blocks(normal, o), 2048);
  ck_assert_int_eq(buddy_pageblock_migratetype(normal, 1048576), MT_MOVABLE);
  ck_assert_uint_eq(physmem_free_pages(pm, 0), 2080768 - 2008 - 2048);
  assert_zone_valid(normal);

  drain_dma(pm);
  uint64_t pfn;
  CompactResult cr;
  ck_assert(!physmem_alloc_huge(pm, 0, 9, FALSE, COMPACT_MODE_NONE, &pfn, &cr));
  ck_assert(!cr.ran);
  ck_assert(physmem_alloc_huge(pm, 0, 9, FALSE, COMPACT_MODE_SYNC, &pfn, &cr));
  ck_assert(cr.ran && cr.success);
  ck_assert_uint_eq(cr.migrated, 1);
  ck_assert_uint_ge(cr.scanned, 20);
  /* Normal is tried first; its first pageblock came free. */
  ck_assert_uint_eq(pfn, 1048576);
  ck_assert_uint_eq(buddy_taken_pages(normal), 2048);
  assert_zone_valid(normal);
  /* Each further one moves one more page. */
  for (int i = 1; i < 20; i++) {
    ck_assert(physmem_alloc_huge(pm, 0, 9, FALSE, COMPACT_MODE_SYNC, &pfn, &cr));
    ck_assert(cr.ran && cr.success && cr.migrated == 1);
    ck_assert_uint_eq(pfn, 1048576 + (uint64_t)i * 512);
  }
  assert_zone_valid(normal);
}
END_TEST

/* With mem.fragmentation_movable=0 the background pages are unmovable:
 * compaction runs, moves nothing and fails, and then is deferred.  Each
 * allocation (GFP_TRANSHUGE) asks compaction_deferred twice, for its async
 * and its sync-light pass, and only the sync-light failure defers
 * (try_to_compact_pages, __alloc_pages_slowpath, 6.12): the first attempt
 * runs both passes, and from then on the sync-light pass runs at every
 * 2^n-th asking. */
START_TEST(test_unmovable_background_defeats_compaction)
{
  g_autoptr(PhysMem) pm = machine("machine.mem_per_node=8G", "mem.fragmentation=1", "mem.fragmentation_movable=0", NULL);
  const BuddyZone *normal = physmem_zone(pm, 0, ZONE_NORMAL);
  ck_assert_int_eq(buddy_pageblock_migratetype(normal, 1048576), MT_UNMOVABLE);
  ck_assert_uint_eq(buddy_free_blocks_mt(normal, 0, MT_UNMOVABLE), 2048);
  drain_dma(pm);
  uint64_t pfn;
  CompactResult cr;
  GString *ran = g_string_new(NULL);
  for (unsigned attempt = 1; attempt <= 20; attempt++) {
    ck_assert(!physmem_alloc_huge(pm, 0, 9, FALSE, COMPACT_MODE_SYNC, &pfn, &cr));
    ck_assert(!cr.success && cr.migrated == 0);
    if (cr.ran) {
      g_string_append_printf(ran, "%u:%u ", attempt, cr.stalls);
      /* Both zones, one step per pageblock: neither scanner finds a
       * movable pageblock. */
      ck_assert_uint_eq(cr.scanned, cr.stalls * (2048 + 2008));
    }
  }
  ck_assert_str_eq(ran->str, "1:2 2:1 4:1 8:1 16:1 ");
  g_string_free(ran, TRUE);
  assert_zone_valid(normal);
}
END_TEST

/* A zone whose failure is due to lack of memory is not compacted: with
 * compact.extfrag_threshold=1000 no fragmented zone qualifies. */
START_TEST(test_extfrag_threshold_skips_compaction)
{
  g_autoptr(PhysMem) pm = machine("machine.mem_per_node=8G", "mem.fragmentation=1", "compact.extfrag_threshold=1000", NULL);
  drain_dma(pm);
  uint64_t pfn;
  CompactResult cr;
  ck_assert(!physmem_alloc_huge(pm, 0, 9, FALSE, COMPACT_MODE_SYNC, &pfn, &cr));
  ck_assert(!cr.ran && cr.scanned == 0);
  ck_assert(!physmem_alloc_huge(pm, 0, 9, FALSE, COMPACT_MODE_SYNC, &pfn, &cr));
  ck_assert(!cr.ran);
}
END_TEST

/* Only the node asked for is compacted when this_node is set. */
START_TEST(test_this_node_compacts_its_own_zones)
{
  g_autoptr(PhysMem) pm = machine("machine.nodes=2", "machine.mem_per_node=4G", "mem.fragmentation=1", NULL);
  uint64_t pfn;
  CompactResult cr;
  ck_assert(physmem_alloc_huge(pm, 1, 9, TRUE, COMPACT_MODE_SYNC, &pfn, &cr));
  ck_assert(cr.ran && cr.success);
  ck_assert_int_eq(physmem_node_of(pm, pfn), 1);
  /* Node 0 (DMA and DMA32 only) was neither compacted nor used. */
  ck_assert_uint_eq(huge_blocks(physmem_zone(pm, 0, ZONE_DMA32)), 0);
  ck_assert_uint_eq(buddy_free_blocks(physmem_zone(pm, 0, ZONE_DMA), 10), 4);
}
END_TEST

/* The layout is a fixed function of the settings; the pageblocks taken and
 * the unmovable share follow the two fractions (2048 pageblocks at 0.3:
 * 614 expected, a standard deviation of 21). */
START_TEST(test_fragmentation_is_deterministic_and_proportional)
{
  g_autoptr(PhysMem) a = machine("machine.mem_per_node=8G", "mem.fragmentation=0.3", "mem.fragmentation_movable=0.5", NULL);
  g_autoptr(PhysMem) b = machine("machine.mem_per_node=8G", "mem.fragmentation=0.3", "mem.fragmentation_movable=0.5", NULL);
  g_autoptr(GString) ia = g_string_new(NULL);
  g_autoptr(GString) ib = g_string_new(NULL);
  physmem_buddyinfo(a, ia);
  physmem_buddyinfo(b, ib);
  ck_assert_str_eq(ia->str, ib->str);
  const BuddyZone *normal = physmem_zone(a, 0, ZONE_NORMAL);
  uint64_t taken = buddy_taken_pages(normal), unmovable = 0, one_page = 0;
  ck_assert_uint_ge(taken, 550);
  ck_assert_uint_le(taken, 680);
  for (uint64_t pb = 1048576; pb < 2097152; pb += 512) {
    BuddyPageblock v;
    ck_assert(buddy_pageblock(normal, pb, &v));
    unmovable += v.mt == MT_UNMOVABLE;
    one_page += v.free_order < 0;
    ck_assert(v.free_order >= 0 || v.movable_taken + v.fixed_pages == 1);
  }
  ck_assert_uint_eq(one_page, taken);
  ck_assert_uint_ge(unmovable * 100, taken * 40);
  ck_assert_uint_le(unmovable * 100, taken * 60);
}
END_TEST

/* 16 nodes of 64G with a background page in a tenth of the pageblocks:
 * about 52,000 pages placed at 8 host bytes each (16 while the array grows)
 * instead of a 4M chunk's 8 KiB of bookkeeping per page. */
START_TEST(test_terabyte_machine_with_fragmentation_is_cheap)
{
  g_autoptr(PhysMem) pm = machine("machine.nodes=16", "machine.mem_per_node=64G", "mem.fragmentation=0.1", NULL);
  uint64_t taken = 0;
  for (int n = 0; n < 16; n++)
    for (ZoneType t = ZONE_DMA32; t <= ZONE_NORMAL; t++)
      if (physmem_zone(pm, n, t))
        taken += buddy_taken_pages(physmem_zone(pm, n, t));
  ck_assert_uint_ge(taken, 50000);
  ck_assert_uint_le(taken, 55000);
  ck_assert_uint_lt(physmem_host_bytes(pm), 64 * 1024 + 16 * taken);
  uint64_t pfn;
  CompactResult cr;
  ck_assert(physmem_alloc_huge(pm, 9, 9, TRUE, COMPACT_MODE_SYNC, &pfn, &cr));
  ck_assert(!cr.ran);
  ck_assert_int_eq(physmem_node_of(pm, pfn), 9);
}
END_TEST

static Suite *physmem_suite(void)
{
  Suite *s = suite_create("physmem");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_layout_of_two_nodes);
  tcase_add_test(tc, test_reserved_range_is_never_handed_out);
  tcase_add_test(tc, test_reserved_rounds_up_to_pages);
  tcase_add_test(tc, test_zonelist_order);
  tcase_add_test(tc, test_bad_distances);
  tcase_add_test(tc, test_lowmem_reserve);
  tcase_add_test(tc, test_buddyinfo_text);
  tcase_add_test(tc, test_terabyte_machine_is_sparse);
  tcase_add_test(tc, test_bad_machines_are_rejected);
  tcase_add_test(tc, test_edge_machines_are_accepted);
  tcase_add_test(tc, test_fragmentation_zero_leaves_huge_blocks);
  tcase_add_test(tc, test_fragmentation_one_leaves_none_until_compaction);
  tcase_add_test(tc, test_unmovable_background_defeats_compaction);
  tcase_add_test(tc, test_extfrag_threshold_skips_compaction);
  tcase_add_test(tc, test_this_node_compacts_its_own_zones);
  tcase_add_test(tc, test_fragmentation_is_deterministic_and_proportional);
  tcase_add_test(tc, test_terabyte_machine_with_fragmentation_is_cheap);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(physmem_suite)
