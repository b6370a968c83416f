/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_buddy.c - the buddy allocator of one zone: split and merge by hand,
 * migratetype fallback and pageblock claiming, the fragmentation index on
 * hand-built states, zones with unaligned ends, random sequences checked
 * against an independent record of what was handed out, and host memory that
 * stays small for a huge zone.  Failures draw the free lists per order.
 */
#include "config.h"
#include "testutil.h"
#include "buddy.h"

#include <string.h>

static char *drawing(const BuddyZone *z)
{
  GString *s = g_string_new("\n");
  buddy_draw(z, s);
  return g_string_free(s, FALSE);
}

static void assert_valid(const BuddyZone *z)
{
  g_autoptr(GString) why = g_string_new(NULL);
  if (!buddy_check(z, why)) {
    g_autofree char *d = drawing(z);
    ck_abort_msg("buddy_check: %s%s", why->str, d);
  }
}

/* Free blocks per order equal `want[0..max_order]`. */
static void assert_blocks(const BuddyZone *z, const uint64_t *want)
{
  for (unsigned o = 0; o <= buddy_max_order(z); o++) {
    if (buddy_free_blocks(z, o) != want[o]) {
      g_autofree char *d = drawing(z);
      ck_abort_msg("order %u: %" G_GUINT64_FORMAT " free blocks, expected %" G_GUINT64_FORMAT "%s", o,
                   buddy_free_blocks(z, o), want[o], d);
    }
  }
}

static uint64_t alloc_ok(BuddyZone *z, unsigned order, MigrateType mt)
{
  uint64_t pfn = UINT64_MAX;
  if (!buddy_alloc(z, order, mt, &pfn)) {
    g_autofree char *d = drawing(z);
    ck_abort_msg("order-%u %s allocation failed%s", order, buddy_migratetype_name(mt), d);
  }
  return pfn;
}

START_TEST(test_fresh_zone_is_one_frontier)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 4096, 10, 9);
  static const uint64_t want[11] = { [10] = 4 };
  assert_blocks(z, want);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 10, MT_MOVABLE), 4);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 10, MT_UNMOVABLE), 0);
  ck_assert_uint_eq(buddy_free_pages(z), 4096);
  ck_assert_uint_eq(buddy_managed_pages(z), 4096);
  ck_assert(buddy_is_free(z, 0) && buddy_is_free(z, 4095));
  ck_assert(!buddy_is_free(z, 4096));
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 2048), MT_MOVABLE);
  ck_assert_str_eq(buddy_zone_name(buddy_zone_type(z)), "Normal");
  ck_assert_int_eq(buddy_node(z), 0);
  assert_valid(z);
}
END_TEST

/* Splitting the order-10 block at 0 down to order 0 keeps 0 and leaves the
 * upper halves 512 (order 9), 256 (8), ..., 2 (1), 1 (0). */
START_TEST(test_split_to_order0_leaves_one_block_per_order)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 1024, 10, 9);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_MOVABLE), 0);
  static const uint64_t want[11] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
  assert_blocks(z, want);
  for (unsigned o = 0; o < 10; o++) {
    uint64_t upper = UINT64_C(1) << o;
    ck_assert_msg(buddy_is_free(z, upper) && buddy_is_free(z, 2 * upper - 1), "order %u half at %u not free", o,
                  (unsigned)upper);
  }
  ck_assert(!buddy_is_free(z, 0));
  ck_assert_uint_eq(buddy_free_pages(z), 1023);
  assert_valid(z);

  buddy_free(z, 0, 0);
  static const uint64_t merged[11] = { [10] = 1 };
  assert_blocks(z, merged);
  ck_assert_uint_eq(buddy_free_pages(z), 1024);
  ck_assert(buddy_is_free(z, 0));
  assert_valid(z);
}
END_TEST

/* Four order-0 allocations come out as 0, 1, 2, 3 (each split keeps the lower
 * half).  Freeing 1 and 2 merges nothing (buddies 0 and 3 are in use); 0 then
 * merges with 1 into an order-1 block; 3 merges with 2, then with 0..1, and
 * so on up to one order-10 block. */
START_TEST(test_merge_step_by_step)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 1024, 10, 9);
  for (uint64_t i = 0; i < 4; i++)
    ck_assert_uint_eq(alloc_ok(z, 0, MT_MOVABLE), i);
  static const uint64_t after_alloc[11] = { 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
  assert_blocks(z, after_alloc);

  buddy_free(z, 1, 0);
  buddy_free(z, 2, 0);
  static const uint64_t two_singles[11] = { 2, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
  assert_blocks(z, two_singles);
  assert_valid(z);

  buddy_free(z, 0, 0);
  static const uint64_t pair[11] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
  assert_blocks(z, pair);
  ck_assert(buddy_is_free(z, 0) && buddy_is_free(z, 1) && buddy_is_free(z, 2) && !buddy_is_free(z, 3));
  assert_valid(z);

  buddy_free(z, 3, 0);
  static const uint64_t whole[11] = { [10] = 1 };
  assert_blocks(z, whole);
  assert_valid(z);
}
END_TEST

START_TEST(test_requests_that_cannot_be_served)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 1024, 10, 9);
  uint64_t pfn;
  ck_assert(!buddy_alloc(z, 11, MT_MOVABLE, &pfn));
  /* No pageblock is ever HIGHATOMIC or CMA, and those types do not fall back. */
  ck_assert(!buddy_alloc(z, 0, MT_HIGHATOMIC, &pfn));
  ck_assert(!buddy_alloc(z, 0, MT_CMA, &pfn));
  ck_assert_uint_eq(alloc_ok(z, 10, MT_MOVABLE), 0);
  ck_assert(!buddy_alloc(z, 0, MT_MOVABLE, &pfn));
  ck_assert(!buddy_alloc(z, 0, MT_UNMOVABLE, &pfn));
  ck_assert_uint_eq(buddy_free_pages(z), 0);
  assert_valid(z);
}
END_TEST

/* An unmovable request on a fresh zone claims a whole max-order block: the
 * fallback starts at the largest order.  Block 0 was already split for a
 * movable page, so the claim takes the frontier block at 1024. */
START_TEST(test_unmovable_claims_largest_block)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 2048, 10, 9);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_MOVABLE), 0);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_UNMOVABLE), 1024);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 1024), MT_UNMOVABLE);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 1536), MT_UNMOVABLE);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 0), MT_MOVABLE);
  for (unsigned o = 0; o < 10; o++) {
    ck_assert_uint_eq(buddy_free_blocks_mt(z, o, MT_UNMOVABLE), 1);
    ck_assert_uint_eq(buddy_free_blocks_mt(z, o, MT_MOVABLE), 1);
  }
  assert_valid(z);

  /* Each page goes back to its pageblock's list and merges there. */
  buddy_free(z, 1024, 0);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 10, MT_UNMOVABLE), 1);
  buddy_free(z, 0, 0);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 10, MT_MOVABLE), 1);
  assert_valid(z);
}
END_TEST

/* Within one order the fallback table decides: RECLAIMABLE tries UNMOVABLE
 * before MOVABLE.  Setup: 0..511 unmovable in use, 512 free unmovable at
 * order 9; 1024..1535 movable in use, 1536 free movable at order 9. */
START_TEST(test_fallback_table_order)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 2048, 10, 9);
  ck_assert_uint_eq(alloc_ok(z, 9, MT_UNMOVABLE), 0);
  ck_assert_uint_eq(alloc_ok(z, 9, MT_MOVABLE), 1024);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 9, MT_UNMOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 9, MT_MOVABLE), 1);
  ck_assert_uint_eq(alloc_ok(z, 9, MT_RECLAIMABLE), 512);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 512), MT_RECLAIMABLE);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 1536), MT_MOVABLE);
  assert_valid(z);
}
END_TEST

/* A larger foreign block wins over the preferred type at a smaller order:
 * RECLAIMABLE order 0 with an order-9 unmovable block and an order-10 movable
 * frontier block claims the order-10 one. */
START_TEST(test_fallback_prefers_largest_order)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 2048, 10, 9);
  ck_assert_uint_eq(alloc_ok(z, 9, MT_UNMOVABLE), 0);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_RECLAIMABLE), 1024);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 1024), MT_RECLAIMABLE);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 1536), MT_RECLAIMABLE);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 9, MT_UNMOVABLE), 1);
  assert_valid(z);
}
END_TEST

/* Fill the zone (1024 pages, pageblocks of 16) with movable pages; return
 * with every page in use. */
static BuddyZone *full_zone(MigrateType mt)
{
  BuddyZone *z = buddy_zone_new(ZONE_NORMAL, 0, 0, 1024, 10, 4);
  uint64_t pfn;
  for (unsigned i = 0; i < 1024; i++)
    ck_assert(buddy_alloc(z, 0, mt, &pfn));
  ck_assert(!buddy_alloc(z, 0, mt, &pfn));
  return z;
}

/* Pageblock 0..15 has 10 free pages (0..7 at order 3, 8..9 at order 1) and 6
 * movable ones.  An unmovable page claims it: 10 free >= 8, half the block.
 * The pages then come from the unmovable lists: 8..9 splits, 8 is returned. */
START_TEST(test_claim_pageblock_when_half_free)
{
  g_autoptr(BuddyZone) z = full_zone(MT_MOVABLE);
  for (uint64_t p = 0; p < 10; p++)
    buddy_free(z, p, 0);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 3, MT_MOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 1, MT_MOVABLE), 1);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_UNMOVABLE), 8);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 0), MT_UNMOVABLE);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 16), MT_MOVABLE);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 3, MT_UNMOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 0, MT_UNMOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 3, MT_MOVABLE), 0);
  assert_valid(z);
}
END_TEST

/* Pageblock 16..31 has only 16..19 free: too little to claim, so one block is
 * stolen and split on the movable lists (17 at order 0, 18..19 at order 1);
 * the pageblock stays movable and the page comes back to the movable list. */
START_TEST(test_steal_single_block_when_claim_fails)
{
  g_autoptr(BuddyZone) z = full_zone(MT_MOVABLE);
  for (uint64_t p = 16; p < 20; p++)
    buddy_free(z, p, 0);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_UNMOVABLE), 16);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 16), MT_MOVABLE);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 0, MT_MOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 1, MT_MOVABLE), 1);
  ck_assert(buddy_is_free(z, 17) && !buddy_is_free(z, 16));
  assert_valid(z);
  buddy_free(z, 16, 0);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 2, MT_MOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks(z, 0), 0);
  assert_valid(z);
}
END_TEST

/* A pageblock that sticks out of the zone is never claimed.  Zone [4, 1024)
 * with pageblocks of 16: 4..15 free (4 at order 2, 8 at order 3) would be 12
 * free pages of 16, yet pageblock 0 starts outside the zone, so the
 * unmovable page is stolen from the smallest block and 0..15 stays movable. */
START_TEST(test_no_claim_of_pageblock_outside_zone)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 4, 1024, 10, 4);
  uint64_t pfn;
  while (buddy_alloc(z, 0, MT_MOVABLE, &pfn))
    ;
  for (uint64_t p = 4; p < 16; p++)
    buddy_free(z, p, 0);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 2, MT_MOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 3, MT_MOVABLE), 1);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_UNMOVABLE), 4);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 4), MT_MOVABLE);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 0, MT_MOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 1, MT_MOVABLE), 1);
  assert_valid(z);
}
END_TEST

/* A movable request claims only from orders >= pageblock_order / 2 (2 here).
 * Pageblock 0 is unmovable with 8 single free pages (0, 2, ..., 14): enough to
 * claim, but order 0 is too small for a movable claim, so the last freed page
 * is stolen and the pageblock stays unmovable. */
START_TEST(test_movable_does_not_claim_from_small_orders)
{
  g_autoptr(BuddyZone) z = full_zone(MT_UNMOVABLE);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 0), MT_UNMOVABLE);
  for (uint64_t p = 0; p < 16; p += 2)
    buddy_free(z, p, 0);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 0, MT_UNMOVABLE), 8);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_MOVABLE), 14);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 0), MT_UNMOVABLE);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 0, MT_UNMOVABLE), 7);
  assert_valid(z);
}
END_TEST

/* ...but from order 2 up it claims: unmovable pageblock 0 with 0..3 and 8..11
 * free (two order-2 blocks, half the pageblock) turns movable, and the page
 * comes from the movable lists: the last block moved, 8, split. */
START_TEST(test_movable_claims_from_half_pageblock_order)
{
  g_autoptr(BuddyZone) z = full_zone(MT_UNMOVABLE);
  for (uint64_t p = 0; p < 4; p++) {
    buddy_free(z, p, 0);
    buddy_free(z, 8 + p, 0);
  }
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 2, MT_UNMOVABLE), 2);
  ck_assert_uint_eq(alloc_ok(z, 0, MT_MOVABLE), 8);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 0), MT_MOVABLE);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 2, MT_MOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 1, MT_MOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 0, MT_MOVABLE), 1);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 2, MT_UNMOVABLE), 0);
  assert_valid(z);
}
END_TEST

/* Buddies in pageblocks of different (mergeable) types merge; the merged
 * block takes the type of the half being freed.  0..511 unmovable, 512..1023
 * claimed back to movable; freeing 512 then 0 leaves one unmovable order-10. */
START_TEST(test_merge_across_pageblock_types)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 1024, 10, 9);
  ck_assert_uint_eq(alloc_ok(z, 9, MT_UNMOVABLE), 0);
  ck_assert_uint_eq(alloc_ok(z, 9, MT_MOVABLE), 512);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 512), MT_MOVABLE);
  buddy_free(z, 512, 9);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 9, MT_MOVABLE), 1);
  buddy_free(z, 0, 9);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 10, MT_UNMOVABLE), 1);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 512), MT_UNMOVABLE);
  assert_valid(z);
}
END_TEST

static void count_message(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
  (void)domain;
  (void)message;
  if (level & G_LOG_LEVEL_CRITICAL)
    (*(unsigned *)data)++;
}

/* Free an already free page: refused with one critical, nothing changes. */
static unsigned count_criticals_of_double_free(BuddyZone *z, uint64_t pfn)
{
  unsigned n = 0;
  GLogFunc old = g_log_set_default_handler(count_message, &n);
  buddy_free(z, pfn, 0);
  g_log_set_default_handler(old, NULL);
  assert_valid(z);
  return n;
}

/* 16 pages, max order 4: all allocated, then chosen pages freed.
 *   {0,2,4,6,8,9}: blocks 4 x order 0 + 8..9 order 1 = 5 blocks, 6 pages.
 *     order 2: 1000 - (1000 + 6000/4) / 5 = 1000 - 2500/5 = 500
 *     order 3: 1000 - (1000 + 6000/8) / 5 = 1000 - 1750/5 = 650
 *     order 4: 1000 - (1000 + 6000/16) / 5 = 1000 - 1375/5 = 725
 *   {0,2,4,6}: order 1: 1000 - (1000 + 4000/2) / 4 = 1000 - 750 = 250
 *   {5}:       order 1: 1000 - (1000 + 1000/2) / 1 = -500
 *              order 4: 1000 - (1000 + 1000/16) / 1 = -62 */
START_TEST(test_fragmentation_index)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 16, 4, 2);
  ck_assert_int_eq(buddy_fragmentation_index(z, 4), -1000);
  uint64_t pfn;
  for (unsigned i = 0; i < 16; i++)
    ck_assert(buddy_alloc(z, 0, MT_MOVABLE, &pfn));
  for (unsigned o = 0; o <= 4; o++)
    ck_assert_int_eq(buddy_fragmentation_index(z, o), 0);

  buddy_free(z, 5, 0);
  ck_assert_int_eq(buddy_fragmentation_index(z, 0), -1000);
  ck_assert_int_eq(buddy_fragmentation_index(z, 1), -500);
  ck_assert_int_eq(buddy_fragmentation_index(z, 4), -62);
  ck_assert_uint_eq(count_criticals_of_double_free(z, 5), 1);
  ck_assert_uint_eq(buddy_free_pages(z), 1);
  ck_assert(buddy_alloc(z, 0, MT_MOVABLE, &pfn));
  ck_assert_uint_eq(pfn, 5);

  for (uint64_t p = 0; p < 8; p += 2)
    buddy_free(z, p, 0);
  ck_assert_int_eq(buddy_fragmentation_index(z, 1), 250);
  buddy_free(z, 8, 0);
  buddy_free(z, 9, 0);
  ck_assert_uint_eq(buddy_free_blocks(z, 1), 1);
  ck_assert_int_eq(buddy_fragmentation_index(z, 0), -1000);
  ck_assert_int_eq(buddy_fragmentation_index(z, 1), -1000);
  ck_assert_int_eq(buddy_fragmentation_index(z, 2), 500);
  ck_assert_int_eq(buddy_fragmentation_index(z, 3), 650);
  ck_assert_int_eq(buddy_fragmentation_index(z, 4), 725);
  ck_assert_int_eq(buddy_fragmentation_index(z, 5), 0);
  assert_valid(z);
}
END_TEST

/* [3, 1000) is handed out as the largest aligned blocks that fit:
 * 3(o0) 4(o2) 8(o3) 16(o4) 32(o5) 64(o6) 128(o7) 256(o8) 512(o8) 768(o7)
 * 896(o6) 960(o5) 992(o3). */
START_TEST(test_unaligned_zone_inside_one_block)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_DMA, 0, 3, 1000, 10, 9);
  static const uint64_t want[11] = { 1, 0, 1, 2, 1, 2, 2, 2, 2, 0, 0 };
  assert_blocks(z, want);
  ck_assert_uint_eq(buddy_free_pages(z), 997);
  ck_assert(!buddy_is_free(z, 2) && buddy_is_free(z, 3) && buddy_is_free(z, 999) && !buddy_is_free(z, 1000));
  assert_valid(z);

  /* Every page can be handed out once, then all of it merges back. */
  uint64_t pfn, n = 0;
  g_autofree guint8 *seen = g_new0(guint8, 1024);
  while (buddy_alloc(z, 0, MT_MOVABLE, &pfn)) {
    ck_assert(pfn >= 3 && pfn < 1000 && !seen[pfn]);
    seen[pfn] = 1;
    n++;
  }
  ck_assert_uint_eq(n, 997);
  assert_valid(z);
  for (pfn = 3; pfn < 1000; pfn++)
    buddy_free(z, pfn, 0);
  assert_blocks(z, want);
  assert_valid(z);
}
END_TEST

/* [1000, 5000): head 1000(o3) 1008(o4); three frontier blocks 1024..4095;
 * tail 4096(o9) 4608(o8) 4864(o7) 4992(o3). */
START_TEST(test_unaligned_zone_with_frontier)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 1, 1000, 5000, 10, 9);
  static const uint64_t want[11] = { 0, 0, 0, 2, 1, 0, 0, 1, 1, 1, 3 };
  assert_blocks(z, want);
  ck_assert_uint_eq(buddy_free_pages(z), 4000);
  assert_valid(z);
  /* The order-10 requests come from the frontier, lowest first. */
  ck_assert_uint_eq(alloc_ok(z, 10, MT_MOVABLE), 1024);
  ck_assert_uint_eq(alloc_ok(z, 10, MT_MOVABLE), 2048);
  ck_assert_uint_eq(alloc_ok(z, 9, MT_MOVABLE), 4096);
  assert_valid(z);
  buddy_free(z, 2048, 10);
  buddy_free(z, 1024, 10);
  buddy_free(z, 4096, 9);
  assert_blocks(z, want);
  assert_valid(z);
}
END_TEST

typedef struct {
  uint64_t pfn;
  unsigned order;
} Held;

/* Random allocations and frees: every block handed out lies in the zone, is
 * aligned, overlaps nothing else in use, and is not free; a refused request
 * really had no block large enough; the invariants hold after every step; and
 * freeing everything restores the zone's first state. */
static void random_run(uint64_t start, uint64_t end, unsigned max_order, unsigned pb_order, guint32 seed,
                       int check_every)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, start, end, max_order, pb_order);
  uint64_t first[21];
  for (unsigned o = 0; o <= max_order; o++)
    first[o] = buddy_free_blocks(z, o);
  g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
  g_autofree guint8 *owned = g_new0(guint8, end);
  g_autoptr(GArray) held = g_array_new(FALSE, FALSE, sizeof(Held));
  unsigned refused = 0;

  for (int step = 0; step < 3000; step++) {
    gboolean do_alloc = held->len == 0 || g_rand_int_range(rng, 0, 100) < 55;
    if (do_alloc) {
      /* Small orders mostly, as real workloads ask. */
      unsigned order = g_rand_int_range(rng, 0, 4) ? (unsigned)g_rand_int_range(rng, 0, 3)
                                                   : (unsigned)g_rand_int_range(rng, 0, (gint32)max_order + 1);
      MigrateType mt = (MigrateType)g_rand_int_range(rng, 0, 3);
      uint64_t pfn;
      if (buddy_alloc(z, order, mt, &pfn)) {
        uint64_t n = UINT64_C(1) << order;
        ck_assert_msg(pfn >= start && pfn + n <= end && pfn % n == 0, "bad block %#lx order %u", (unsigned long)pfn,
                      order);
        /* Plain tests in the per-page loops: Check's assertions are costly. */
        for (uint64_t p = pfn; p < pfn + n; p++) {
          if (owned[p])
            ck_abort_msg("step %d: pfn %#lx handed out twice", step, (unsigned long)p);
          if (buddy_is_free(z, p))
            ck_abort_msg("step %d: pfn %#lx handed out but still free", step, (unsigned long)p);
          owned[p] = 1;
        }
        Held h = { pfn, order };
        g_array_append_val(held, h);
      } else {
        refused++;
        for (unsigned o = order; o <= max_order; o++)
          if (buddy_free_blocks(z, o))
            ck_abort_msg("refused order %u with an order-%u block free", order, o);
      }
    } else {
      guint i = (guint)g_rand_int_range(rng, 0, (gint32)held->len);
      Held h = g_array_index(held, Held, i);
      g_array_remove_index_fast(held, i);
      buddy_free(z, h.pfn, h.order);
      for (uint64_t p = h.pfn; p < h.pfn + (UINT64_C(1) << h.order); p++) {
        owned[p] = 0;
        if (!buddy_is_free(z, p))
          ck_abort_msg("step %d: pfn %#lx freed but not free", step, (unsigned long)p);
      }
    }
    if (step % check_every == 0)
      assert_valid(z);
  }
  ck_assert_msg(refused > 0 || end - start > 4096, "the zone was never full: the run tests too little");
  for (guint i = 0; i < held->len; i++) {
    Held h = g_array_index(held, Held, i);
    buddy_free(z, h.pfn, h.order);
  }
  assert_valid(z);
  ck_assert_uint_eq(buddy_free_pages(z), end - start);
  assert_blocks(z, first);
}

START_TEST(test_random_aligned)
{
  random_run(0, 2048, 10, 9, 1, 1);
}
END_TEST

START_TEST(test_random_unaligned_small_pageblocks)
{
  random_run(37, 1500, 6, 3, 2, 1);
}
END_TEST

START_TEST(test_random_tiny_orders)
{
  random_run(5, 300, 3, 0, 3, 1);
}
END_TEST

START_TEST(test_random_large_zone)
{
  random_run(4096, 4096 + 65536, 10, 9, 4, 50);
}
END_TEST

/* A 1 TiB zone costs a few KiB until used, and a max-order chunk
 * (8 bytes a page) per block handed out. */
START_TEST(test_huge_zone_is_sparse)
{
  uint64_t pages = UINT64_C(1) << 28;
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 3, pages, 2 * pages, 10, 9);
  uint64_t before = buddy_host_bytes(z);
  ck_assert_uint_lt(before, 8 * 1024);
  ck_assert_uint_eq(buddy_free_blocks(z, 10), UINT64_C(1) << 18);
  ck_assert_uint_eq(buddy_free_pages(z), pages);
  uint64_t pfn;
  for (unsigned i = 0; i < 1000; i++)
    ck_assert(buddy_alloc(z, 0, MT_MOVABLE, &pfn));
  ck_assert_uint_eq(buddy_free_pages(z), pages - 1000);
  ck_assert_uint_eq(buddy_free_blocks(z, 10), (UINT64_C(1) << 18) - 1);
  uint64_t after = buddy_host_bytes(z);
  ck_assert_uint_ge(after - before, 1024 * 8);
  ck_assert_uint_lt(after - before, 1024 * 8 + 4096);
  assert_valid(z);
}
END_TEST

START_TEST(test_names)
{
  ck_assert_str_eq(buddy_zone_name(ZONE_DMA), "DMA");
  ck_assert_str_eq(buddy_zone_name(ZONE_DMA32), "DMA32");
  ck_assert_str_eq(buddy_zone_name(ZONE_MOVABLE), "Movable");
  ck_assert_str_eq(buddy_migratetype_name(MT_UNMOVABLE), "Unmovable");
  ck_assert_str_eq(buddy_migratetype_name(MT_RECLAIMABLE), "Reclaimable");
  ck_assert_str_eq(buddy_migratetype_name(MT_ISOLATE), "Isolate");
}
END_TEST

START_TEST(test_draw)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 32, 3, 2);
  ck_assert_uint_eq(alloc_ok(z, 1, MT_MOVABLE), 0);
  g_autoptr(GString) s = g_string_new(NULL);
  buddy_draw(z, s);
  ck_assert_str_eq(s->str, "order  0:\n"
                           "order  1: Movable[0x2]\n"
                           "order  2: Movable[0x4]\n"
                           "order  3: frontier[0x8.. 3 blocks]\n");
}
END_TEST

/* ---- background pages (buddy_take) ---------------------------------------- */

/* Free blocks of every order and type, and the type of every pageblock, as
 * one string: two zones that print the same hold the same free memory. */
static char *census(const BuddyZone *z)
{
  GString *s = g_string_new(NULL);
  for (unsigned o = 0; o <= buddy_max_order(z); o++) {
    g_string_append_printf(s, "%u:", o);
    for (MigrateType mt = 0; mt < 3; mt++)
      g_string_append_printf(s, " %" G_GUINT64_FORMAT, buddy_free_blocks_mt(z, o, mt));
    g_string_append_c(s, '\n');
  }
  uint64_t pb = UINT64_C(1) << buddy_pageblock_order(z);
  for (uint64_t p = buddy_start_pfn(z) & ~(pb - 1); p < buddy_end_pfn(z); p += pb)
    if (p >= buddy_start_pfn(z))
      g_string_append_printf(s, "%c", "UMR"[buddy_pageblock_migratetype(z, p)]);
  g_string_append_printf(s, "\nfree %" G_GUINT64_FORMAT " taken %" G_GUINT64_FORMAT, buddy_free_pages(z),
                         buddy_taken_pages(z));
  return g_string_free(s, FALSE);
}

/* Materialise every chunk of the zone: allocate all max-order blocks, free
 * them again. */
static void touch_all(BuddyZone *z)
{
  g_autoptr(GArray) got = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  uint64_t pfn;
  unsigned max = buddy_max_order(z);
  while (buddy_alloc(z, max, MT_MOVABLE, &pfn))
    g_array_append_val(got, pfn);
  for (guint i = 0; i < got->len; i++)
    buddy_free(z, g_array_index(got, uint64_t, i), max);
}

/* One page taken at 5 of a fresh 2-chunk zone splits chunk 0 around it:
 * 0 (order 2), 4 (0), 6 (1), 8 (3), 16 (4), ... 512 (9), one block of each
 * order below 10, while chunk 1 stays whole.  The chunk stays implicit until
 * a request needs one of its blocks: an order-0 page then comes from it (4),
 * not from the whole chunk 1, as the kernel takes the smallest block. */
START_TEST(test_take_splits_around_the_page)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 2048, 10, 9);
  uint64_t before = buddy_host_bytes(z);
  ck_assert(buddy_take(z, 5, MT_MOVABLE));
  static const uint64_t want[11] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
  assert_blocks(z, want);
  ck_assert(!buddy_is_free(z, 5) && buddy_is_free(z, 4) && buddy_is_free(z, 6) && buddy_is_free(z, 1024));
  MigrateType mt = MT_CMA;
  ck_assert(buddy_is_taken(z, 5, &mt));
  ck_assert_int_eq(mt, MT_MOVABLE);
  ck_assert(!buddy_is_taken(z, 4, NULL));
  ck_assert_uint_eq(buddy_free_pages(z), 2047);
  ck_assert_uint_eq(buddy_taken_pages(z), 1);
  ck_assert_uint_lt(buddy_host_bytes(z) - before, 2048); /* counts and one pin, no chunk */
  assert_valid(z);

  ck_assert_uint_eq(alloc_ok(z, 0, MT_MOVABLE), 4);
  ck_assert_uint_ge(buddy_host_bytes(z) - before, 8192);
  static const uint64_t after[11] = { 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
  assert_blocks(z, after);
  ck_assert(buddy_is_taken(z, 5, NULL));
  assert_valid(z);
}
END_TEST

/* An unmovable page claims the free pageblock it lands in (600 in 512..1023):
 * the pieces split off inside it go on the unmovable lists, the rest stays
 * movable; a second page there, movable, does not change the type. */
START_TEST(test_take_unmovable_claims_its_pageblock)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 1024, 10, 9);
  ck_assert(buddy_take(z, 600, MT_UNMOVABLE));
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 512), MT_UNMOVABLE);
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 0), MT_MOVABLE);
  ck_assert_uint_eq(buddy_free_blocks_mt(z, 9, MT_MOVABLE), 1);
  for (unsigned o = 0; o < 9; o++) {
    ck_assert_uint_eq(buddy_free_blocks_mt(z, o, MT_UNMOVABLE), 1);
    ck_assert_uint_eq(buddy_free_blocks_mt(z, o, MT_MOVABLE), 0);
  }
  assert_valid(z);
  ck_assert(buddy_take(z, 700, MT_MOVABLE));
  ck_assert_int_eq(buddy_pageblock_migratetype(z, 700), MT_UNMOVABLE);
  assert_valid(z);
  /* Both give back: everything merges into one order-10 block again. */
  ck_assert(buddy_release(z, 600));
  ck_assert(buddy_release(z, 700));
  static const uint64_t whole[11] = { [10] = 1 };
  assert_blocks(z, whole);
  ck_assert_uint_eq(buddy_taken_pages(z), 0);
  assert_valid(z);
}
END_TEST

START_TEST(test_take_refuses_what_is_not_free)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 2048, 10, 9);
  ck_assert(buddy_take(z, 1500, MT_MOVABLE));
  ck_assert(!buddy_take(z, 1500, MT_MOVABLE)); /* taken, implicit chunk */
  uint64_t pfn = alloc_ok(z, 0, MT_MOVABLE);
  ck_assert(!buddy_take(z, pfn, MT_MOVABLE)); /* handed out */
  ck_assert(!buddy_take(z, 2048, MT_MOVABLE)); /* outside */
  ck_assert(buddy_take(z, 1000, MT_MOVABLE)); /* below the last: the chunk is materialised first */
  ck_assert(!buddy_take(z, 1000, MT_MOVABLE));
  ck_assert(!buddy_release(z, pfn)); /* not a taken page */
  ck_assert(!buddy_release(z, 3));
  ck_assert(!buddy_release(z, 4096));
  ck_assert(buddy_release(z, 1500));
  ck_assert(!buddy_release(z, 1500));
  assert_valid(z);
}
END_TEST

/* The same pages taken into implicit chunks and into materialised ones leave
 * the same free blocks and pageblock types, and materialising the implicit
 * chunks later changes nothing either. */
static void lazy_equals_eager(uint64_t start, uint64_t end, unsigned max_order, unsigned pb_order, guint32 seed)
{
  g_autoptr(BuddyZone) lazy = buddy_zone_new(ZONE_NORMAL, 0, start, end, max_order, pb_order);
  g_autoptr(BuddyZone) eager = buddy_zone_new(ZONE_NORMAL, 0, start, end, max_order, pb_order);
  touch_all(eager);
  g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
  uint64_t pfn = start;
  for (;;) {
    pfn += (uint64_t)g_rand_int_range(rng, 1, 200);
    if (pfn >= end)
      break;
    MigrateType mt = (MigrateType)g_rand_int_range(rng, 0, 3);
    ck_assert(buddy_take(lazy, pfn, mt));
    ck_assert(buddy_take(eager, pfn, mt));
  }
  assert_valid(lazy);
  assert_valid(eager);
  g_autofree char *a = census(lazy);
  g_autofree char *b = census(eager);
  ck_assert_str_eq(a, b);
  touch_all(lazy);
  assert_valid(lazy);
  g_autofree char *c = census(lazy);
  ck_assert_str_eq(c, b);
}

START_TEST(test_lazy_take_equals_eager_take)
{
  lazy_equals_eager(0, 8192, 10, 9, 1);
  lazy_equals_eager(100, 9000, 10, 9, 2);
  lazy_equals_eager(5, 3000, 6, 3, 3);
  lazy_equals_eager(0, 2048, 4, 4, 4);
  lazy_equals_eager(7, 1200, 3, 0, 5);
}
END_TEST

/* Random allocations, frees, takes and releases over a zone that starts with
 * background pages in half its pageblocks: the invariants hold throughout,
 * nothing is handed out twice, a refused request had no block, and giving
 * everything back restores one free block per chunk. */
static void random_run_with_background(uint64_t start, uint64_t end, unsigned max_order, unsigned pb_order,
                                       guint32 seed)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, start, end, max_order, pb_order);
  uint64_t first[21];
  for (unsigned o = 0; o <= max_order; o++)
    first[o] = buddy_free_blocks(z, o);
  g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
  g_autofree guint8 *owned = g_new0(guint8, end);
  uint64_t pb = UINT64_C(1) << pb_order;
  for (uint64_t p = (start + pb - 1) & ~(pb - 1); p + pb <= end; p += pb)
    if (g_rand_boolean(rng)) {
      uint64_t at = p + (uint64_t)g_rand_int_range(rng, 0, (gint32)pb);
      ck_assert(buddy_take(z, at, (MigrateType)g_rand_int_range(rng, 0, 2)));
      owned[at] = 2;
    }
  assert_valid(z);
  g_autoptr(GArray) held = g_array_new(FALSE, FALSE, sizeof(Held));
  for (int step = 0; step < 2000; step++) {
    int what = g_rand_int_range(rng, 0, 100);
    if (what < 45) {
      unsigned order = (unsigned)g_rand_int_range(rng, 0, (gint32)max_order + 1);
      MigrateType mt = (MigrateType)g_rand_int_range(rng, 0, 3);
      uint64_t pfn;
      if (buddy_alloc(z, order, mt, &pfn)) {
        for (uint64_t p = pfn; p < pfn + (UINT64_C(1) << order); p++) {
          if (owned[p])
            ck_abort_msg("step %d: pfn %#lx handed out twice", step, (unsigned long)p);
          owned[p] = 1;
        }
        Held h = { pfn, order };
        g_array_append_val(held, h);
      } else {
        for (unsigned o = order; o <= max_order; o++)
          if (buddy_free_blocks(z, o))
            ck_abort_msg("refused order %u with an order-%u block free", order, o);
      }
    } else if (what < 80 && held->len) {
      guint i = (guint)g_rand_int_range(rng, 0, (gint32)held->len);
      Held h = g_array_index(held, Held, i);
      g_array_remove_index_fast(held, i);
      buddy_free(z, h.pfn, h.order);
      memset(&owned[h.pfn], 0, UINT64_C(1) << h.order);
    } else {
      uint64_t p = start + (uint64_t)g_rand_int_range(rng, 0, (gint32)(end - start));
      gboolean was_free = buddy_is_free(z, p);
      if (owned[p] == 2) {
        ck_assert(buddy_release(z, p));
        owned[p] = 0;
      } else if (buddy_take(z, p, (MigrateType)g_rand_int_range(rng, 0, 3))) {
        ck_assert(was_free && !owned[p]);
        owned[p] = 2;
      } else {
        ck_assert(!was_free);
      }
    }
    assert_valid(z);
  }
  for (guint i = 0; i < held->len; i++) {
    Held h = g_array_index(held, Held, i);
    buddy_free(z, h.pfn, h.order);
  }
  for (uint64_t p = start; p < end; p++)
    if (owned[p] == 2)
      ck_assert(buddy_release(z, p));
  assert_valid(z);
  ck_assert_uint_eq(buddy_free_pages(z), end - start);
  ck_assert_uint_eq(buddy_taken_pages(z), 0);
  /* Pageblock types may differ from the start (claimed ones stay claimed),
   * but the blocks per order merge back. */
  assert_blocks(z, first);
}

START_TEST(test_random_with_background_pages)
{
  random_run_with_background(0, 8192, 10, 9, 11);
  random_run_with_background(37, 5000, 6, 3, 12);
  random_run_with_background(5, 700, 3, 0, 13);
}
END_TEST

/* A 64G zone with a background page in every pageblock: no block of
 * pageblock order or more is free, the free memory is one block of each
 * order below per pageblock, and the zone costs 8 host bytes per page. */
START_TEST(test_background_in_every_pageblock_stays_small)
{
  uint64_t pages = UINT64_C(1) << 24, pbs = pages >> 9;
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 1, pages, 2 * pages, 10, 9);
  uint64_t before = buddy_host_bytes(z);
  for (uint64_t pb = 0; pb < pbs; pb++)
    ck_assert(buddy_take(z, pages + (pb << 9) + (pb * 37) % 512, pb % 4 ? MT_MOVABLE : MT_UNMOVABLE));
  ck_assert_uint_eq(buddy_free_blocks(z, 10), 0);
  ck_assert_uint_eq(buddy_free_blocks(z, 9), 0);
  for (unsigned o = 0; o < 9; o++)
    ck_assert_uint_eq(buddy_free_blocks(z, o), pbs);
  ck_assert_uint_eq(buddy_free_pages(z), pages - pbs);
  ck_assert_int_gt(buddy_fragmentation_index(z, 9), 500);
  uint64_t grown = buddy_host_bytes(z) - before;
  ck_assert_uint_le(grown, pbs * 16 + 4096);
  /* A small request uses a hole and materialises one chunk, not 8192. */
  uint64_t pfn;
  ck_assert(buddy_alloc(z, 3, MT_MOVABLE, &pfn));
  ck_assert_uint_lt(buddy_host_bytes(z) - before - grown, 3 * 8192);
  ck_assert(!buddy_alloc(z, 9, MT_MOVABLE, &pfn));
  assert_valid(z);
}
END_TEST

/* What compaction's scanners read of a pageblock, implicit and not. */
START_TEST(test_pageblock_view)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 4096, 10, 9);
  BuddyPageblock pb;
  ck_assert(buddy_pageblock(z, 700, &pb));
  ck_assert_int_eq(pb.free_order, 10);
  ck_assert_uint_eq(pb.free_pages, 512);
  ck_assert_uint_eq(pb.steps, 1);
  ck_assert(!buddy_pageblock(z, 4096, &pb));
  /* Implicit: a movable page at 1029 and an unmovable one at 1100. */
  ck_assert(buddy_take(z, 1029, MT_MOVABLE));
  ck_assert(buddy_take(z, 1100, MT_UNMOVABLE));
  ck_assert(buddy_pageblock(z, 1024, &pb));
  ck_assert_int_eq(pb.mt, MT_MOVABLE);
  ck_assert_int_eq(pb.free_order, -1);
  ck_assert_uint_eq(pb.free_pages, 510);
  ck_assert_uint_eq(pb.movable_taken, 1);
  ck_assert_uint_eq(pb.fixed_pages, 1);
  /* 1024(o2) 1028(o0) 1029 1030(o1) 1032(o3) 1040(o4) 1056(o5) 1088(o3)
   * 1096(o2) 1100 ...: the unmovable page is the 10th step. */
  ck_assert_uint_eq(pb.steps_to_fixed, 10);
  /* The same blocks, one by one; the unmovable page claimed its
   * pageblock, so the free blocks are on the unmovable lists. */
  BuddyBlock implicit_blocks[512], real_blocks[512];
  uint64_t n = buddy_pageblock_blocks(z, 1024, implicit_blocks, 512);
  ck_assert_uint_eq(n, pb.steps);
  ck_assert_uint_eq(implicit_blocks[2].pfn, 1029);
  ck_assert_uint_eq(implicit_blocks[2].state, BUDDY_BLOCK_TAKEN);
  ck_assert_uint_eq(implicit_blocks[2].mt, MT_MOVABLE);
  ck_assert_uint_eq(implicit_blocks[9].pfn, 1100);
  ck_assert_uint_eq(implicit_blocks[9].state, BUDDY_BLOCK_TAKEN);
  ck_assert_uint_eq(implicit_blocks[9].mt, MT_UNMOVABLE);
  ck_assert_uint_eq(implicit_blocks[4].pfn, 1032);
  ck_assert_uint_eq(implicit_blocks[4].order, 3);
  ck_assert_uint_eq(implicit_blocks[4].state, BUDDY_BLOCK_FREE);
  uint64_t pfn;
  ck_assert(buddy_next_free(z, 1029, 1536, &pfn));
  ck_assert_uint_eq(pfn, 1030);
  ck_assert(buddy_pageblock(z, 1536, &pb));
  ck_assert_int_eq(pb.free_order, 9);
  BuddyPageblock implicit = pb;
  ck_assert(buddy_pageblock(z, 1024, &implicit));
  /* Materialised, the same pageblock reads the same. */
  touch_all(z);
  BuddyPageblock real;
  ck_assert(buddy_pageblock(z, 1024, &real));
  ck_assert_mem_eq(&real, &implicit, sizeof real);
  ck_assert_uint_eq(buddy_pageblock_blocks(z, 1024, real_blocks, 512), n);
  for (uint64_t i = 0; i < n; i++) {
    ck_assert_uint_eq(real_blocks[i].pfn, implicit_blocks[i].pfn);
    ck_assert_uint_eq(real_blocks[i].order, implicit_blocks[i].order);
    ck_assert_uint_eq(real_blocks[i].state, implicit_blocks[i].state);
    ck_assert_uint_eq(real_blocks[i].mt, implicit_blocks[i].mt);
  }
  ck_assert(buddy_next_free(z, 1029, 1536, &pfn));
  ck_assert_uint_eq(pfn, 1030);
  /* A page handed out by buddy_alloc is fixed too: the order-0 list holds
   * 1028 and 1101, the last split off first. */
  ck_assert_uint_eq(alloc_ok(z, 0, MT_MOVABLE), 1101);
  ck_assert(buddy_pageblock(z, 1024, &real));
  ck_assert_uint_eq(real.fixed_pages, 2);
  ck_assert_uint_eq(real.movable_taken, 1);
  ck_assert_uint_eq(real.steps_to_fixed, 10);
  /* A whole allocated pageblock is one fixed step. */
  uint64_t h = alloc_ok(z, 9, MT_MOVABLE);
  ck_assert(buddy_pageblock(z, h, &real));
  ck_assert_uint_eq(real.steps, 1);
  ck_assert_uint_eq(real.fixed_pages, 512);
  ck_assert_uint_eq(buddy_pageblock_blocks(z, h, real_blocks, 512), 1);
  ck_assert_uint_eq(real_blocks[0].pfn, h);
  ck_assert_uint_eq(real_blocks[0].order, 9);
  ck_assert_uint_eq(real_blocks[0].state, BUDDY_BLOCK_ALLOC);
  ck_assert(!buddy_next_free(z, h, h + 512, &pfn));
  assert_valid(z);
}
END_TEST

static Suite *buddy_suite(void)
{
  Suite *s = suite_create("buddy");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_fresh_zone_is_one_frontier);
  tcase_add_test(tc, test_split_to_order0_leaves_one_block_per_order);
  tcase_add_test(tc, test_merge_step_by_step);
  tcase_add_test(tc, test_requests_that_cannot_be_served);
  tcase_add_test(tc, test_unmovable_claims_largest_block);
  tcase_add_test(tc, test_fallback_table_order);
  tcase_add_test(tc, test_fallback_prefers_largest_order);
  tcase_add_test(tc, test_claim_pageblock_when_half_free);
  tcase_add_test(tc, test_steal_single_block_when_claim_fails);
  tcase_add_test(tc, test_no_claim_of_pageblock_outside_zone);
  tcase_add_test(tc, test_movable_does_not_claim_from_small_orders);
  tcase_add_test(tc, test_movable_claims_from_half_pageblock_order);
  tcase_add_test(tc, test_merge_across_pageblock_types);
  tcase_add_test(tc, test_fragmentation_index);
  tcase_add_test(tc, test_unaligned_zone_inside_one_block);
  tcase_add_test(tc, test_unaligned_zone_with_frontier);
  tcase_add_test(tc, test_random_aligned);
  tcase_add_test(tc, test_random_unaligned_small_pageblocks);
  tcase_add_test(tc, test_random_tiny_orders);
  tcase_add_test(tc, test_random_large_zone);
  tcase_add_test(tc, test_huge_zone_is_sparse);
  tcase_add_test(tc, test_names);
  tcase_add_test(tc, test_draw);
  tcase_add_test(tc, test_take_splits_around_the_page);
  tcase_add_test(tc, test_take_unmovable_claims_its_pageblock);
  tcase_add_test(tc, test_take_refuses_what_is_not_free);
  tcase_add_test(tc, test_lazy_take_equals_eager_take);
  tcase_add_test(tc, test_random_with_background_pages);
  tcase_add_test(tc, test_background_in_every_pageblock_stays_small);
  tcase_add_test(tc, test_pageblock_view);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(buddy_suite)
