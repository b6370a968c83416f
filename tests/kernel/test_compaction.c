/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_compaction.c - direct compaction of one zone: the deferral counters
 * step by step, the suitability checks (compact gap, fragmentation index
 * against extfrag_threshold), the two scanners on hand-built zones (what
 * they move, what they count, where they stop and start again), pageblocks
 * the workload's own pages pin unless a migrator takes them, and unmovable
 * background pages.
 */
#include "config.h"
#include "testutil.h"
#include "compaction.h"

static void assert_valid(const BuddyZone *z)
{
  g_autoptr(GString) why = g_string_new(NULL);
  if (!buddy_check(z, why)) {
    g_autoptr(GString) d = g_string_new(NULL);
    buddy_draw(z, d);
    ck_abort_msg("buddy_check: %s\n%s", why->str, d->str);
  }
}

/* A zone of `pageblocks` pageblocks of 512 pages (max order 10), with one
 * background page at offset 100 of each, of type mt. */
static BuddyZone *pinned_zone(unsigned pageblocks, MigrateType mt)
{
  BuddyZone *z = buddy_zone_new(ZONE_NORMAL, 0, 0, (uint64_t)pageblocks * 512, 10, 9);
  for (unsigned i = 0; i < pageblocks; i++)
    ck_assert(buddy_take(z, (uint64_t)i * 512 + 100, mt));
  return z;
}

/* After the n-th failure in a row, 2^n - 1 attempts are skipped (n <= 6);
 * orders below the lowest that failed since the last success are never
 * deferred; a success with an allocation resets it all. */
START_TEST(test_deferral_counts)
{
  CompactZone cz;
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 1024, 10, 9);
  compact_zone_init(&cz, z);
  ck_assert(!compaction_deferred(&cz, 9));
  GString *runs = g_string_new(NULL);
  for (unsigned attempt = 1; attempt <= 200; attempt++) {
    if (compaction_deferred(&cz, 9))
      continue;
    g_string_append_printf(runs, "%u ", attempt);
    compaction_defer(&cz, 9); /* every compaction fails */
  }
  /* Runs at 1, 3, 7, 15, 31, 63, 127, then every 64. */
  ck_assert_str_eq(runs->str, "1 3 7 15 31 63 127 191 ");
  g_string_free(runs, TRUE);
  ck_assert_uint_eq(cz.defer_shift, COMPACT_MAX_DEFER_SHIFT);
  ck_assert(compaction_deferred(&cz, 8)); /* order_failed starts at 0: every order waits */
  compaction_defer_reset(&cz, 9, FALSE);  /* compaction worked, the allocation not yet */
  ck_assert_uint_eq(cz.defer_shift, COMPACT_MAX_DEFER_SHIFT);
  ck_assert_uint_eq(cz.order_failed, 10);
  ck_assert(!compaction_deferred(&cz, 9));
  compaction_defer(&cz, 9);
  ck_assert_uint_eq(cz.order_failed, 9);
  ck_assert(compaction_deferred(&cz, 9));
  ck_assert(!compaction_deferred(&cz, 8));
  compaction_defer_reset(&cz, 9, TRUE);
  ck_assert_uint_eq(cz.defer_shift, 0);
  ck_assert(!compaction_deferred(&cz, 9));
}
END_TEST

/* Eight pageblocks with a page each: 72 free blocks (orders 0..8 in each),
 * 4088 free pages; for order 9 the index is
 * 1000 - (1000 + 4088000 / 512) / 72 = 1000 - 8984 / 72 = 876. */
START_TEST(test_suitable_follows_extfrag_threshold)
{
  g_autoptr(BuddyZone) z = pinned_zone(8, MT_MOVABLE);
  ck_assert_int_eq(buddy_fragmentation_index(z, 9), 876);
  ck_assert_int_eq(compaction_suitable(z, 9, 500), COMPACT_CONTINUE);
  ck_assert_int_eq(compaction_suitable(z, 9, 875), COMPACT_CONTINUE);
  ck_assert_int_eq(compaction_suitable(z, 9, 876), COMPACT_SKIPPED);
  /* Orders up to PAGE_ALLOC_COSTLY_ORDER ignore the index. */
  ck_assert_int_eq(compaction_suitable(z, 3, 1000), COMPACT_CONTINUE);
  ck_assert_int_eq(compaction_suitable(z, 11, 500), COMPACT_SKIPPED);
  CompactZone cz;
  compact_zone_init(&cz, z);
  CompactResult cr = { 0 };
  ck_assert_int_eq(compact_zone(z, &cz, 9, 900, &cr), COMPACT_SKIPPED);
  ck_assert_uint_eq(cr.scanned, 0);
}
END_TEST

/* Less free memory than compact_gap (2 << order = 1024 pages): skipped. */
START_TEST(test_suitable_needs_the_compact_gap)
{
  g_autoptr(BuddyZone) z = pinned_zone(2, MT_MOVABLE);
  ck_assert_uint_eq(buddy_free_pages(z), 1022);
  ck_assert_int_eq(compaction_suitable(z, 9, 500), COMPACT_SKIPPED);
  g_autoptr(BuddyZone) z3 = pinned_zone(3, MT_MOVABLE);
  ck_assert_int_eq(compaction_suitable(z3, 9, 500), COMPACT_CONTINUE);
}
END_TEST

/* The migrate scanner takes pageblock 0's page (pfn 100) to the lowest free
 * page of the last pageblock (3584, whose own page is at 3684), and block 0
 * merges into a free order-9 block.  Each pageblock is ten steps: the page
 * and the nine free blocks around it.  The second compaction starts where
 * the first stopped: pageblock 1 moves into pageblock 7 too (3585). */
START_TEST(test_scanners_move_one_page_per_pageblock)
{
  g_autoptr(BuddyZone) z = pinned_zone(8, MT_MOVABLE);
  CompactZone cz;
  compact_zone_init(&cz, z);
  CompactResult cr = { 0 };
  ck_assert_int_eq(compact_zone(z, &cz, 9, 500, &cr), COMPACT_SUCCESS);
  ck_assert_uint_eq(cr.migrated, 1);
  ck_assert_uint_eq(cr.scanned, 20);
  ck_assert_uint_eq(buddy_free_blocks(z, 9), 1);
  ck_assert(buddy_is_free(z, 100) && buddy_is_taken(z, 3584, NULL) && buddy_is_taken(z, 3684, NULL));
  ck_assert_uint_eq(buddy_taken_pages(z), 8);
  ck_assert_uint_eq(cz.migrate_pfn, 512);
  ck_assert_uint_eq(cz.free_end_pfn, 4096); /* pageblock 7 still has free pages */
  assert_valid(z);

  uint64_t pfn;
  ck_assert(buddy_alloc(z, 9, MT_MOVABLE, &pfn));
  ck_assert_uint_eq(pfn, 0);
  CompactResult cr2 = { 0 };
  ck_assert_int_eq(compact_zone(z, &cz, 9, 500, &cr2), COMPACT_SUCCESS);
  ck_assert_uint_eq(cr2.migrated, 1);
  ck_assert(buddy_is_taken(z, 3585, NULL) && buddy_is_free(z, 612));
  ck_assert_uint_eq(cz.migrate_pfn, 1024);
  assert_valid(z);
}
END_TEST

/* Two free pageblocks at the top are not targets (they are already the
 * block compaction wants to make, suitable_migration_target), and are not
 * even needed: compaction finds them at once.  Here the top two pageblocks
 * hold unmovable pages instead, so they are passed over as targets, one
 * step each, and pageblock 5 takes the page. */
START_TEST(test_free_scanner_passes_unmovable_pageblocks)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 4096, 10, 9);
  for (unsigned i = 0; i < 8; i++)
    ck_assert(buddy_take(z, (uint64_t)i * 512 + 100, i >= 6 ? MT_UNMOVABLE : MT_MOVABLE));
  CompactZone cz;
  compact_zone_init(&cz, z);
  CompactResult cr = { 0 };
  ck_assert_int_eq(compact_zone(z, &cz, 9, 500, &cr), COMPACT_SUCCESS);
  ck_assert_uint_eq(cr.migrated, 1);
  ck_assert_uint_eq(cr.scanned, 10 + 1 + 1 + 10);
  ck_assert(buddy_is_taken(z, 5 * 512, NULL));
  assert_valid(z);
}
END_TEST

/* Unmovable background pages: their pageblocks are not sources (not
 * MOVABLE) nor targets, so the scanners pass every pageblock with one step
 * and meet; nothing moves, the cached positions go back to the ends. */
START_TEST(test_unmovable_pages_defeat_compaction)
{
  g_autoptr(BuddyZone) z = pinned_zone(8, MT_UNMOVABLE);
  CompactZone cz;
  compact_zone_init(&cz, z);
  CompactResult cr = { 0 };
  ck_assert_int_eq(compact_zone(z, &cz, 9, 500, &cr), COMPACT_COMPLETE);
  ck_assert_uint_eq(cr.migrated, 0);
  ck_assert_uint_eq(cr.scanned, 8);
  ck_assert_uint_eq(buddy_free_blocks(z, 9), 0);
  ck_assert_uint_eq(cz.migrate_pfn, 0);
  ck_assert_uint_eq(cz.free_end_pfn, 4096);
  /* Through compact_zone_direct a synchronous failure defers the zone. */
  CompactResult cr2 = { 0 };
  ck_assert_int_eq(compact_zone_direct(z, &cz, 9, 500, TRUE, &cr2), COMPACT_COMPLETE);
  ck_assert_int_eq(compact_zone_direct(z, &cz, 9, 500, TRUE, &cr2), COMPACT_DEFERRED);
  ck_assert_int_eq(compact_zone_direct(z, &cz, 9, 500, TRUE, &cr2), COMPACT_COMPLETE);
  assert_valid(z);
}
END_TEST

/* try_to_compact_pages (mm/compaction.c 6.12) calls defer_compaction only
 * when prio != COMPACT_PRIO_ASYNC: async passes that fail, however many,
 * never defer the zone, though each asks compaction_deferred (and so counts
 * as an attempt); the first sync-light failure does. */
START_TEST(test_async_failure_does_not_defer)
{
  g_autoptr(BuddyZone) z = pinned_zone(8, MT_UNMOVABLE);
  CompactZone cz;
  compact_zone_init(&cz, z);
  CompactResult cr = { 0 };
  for (unsigned i = 0; i < 10; i++)
    ck_assert_int_eq(compact_zone_direct(z, &cz, 9, 500, FALSE, &cr), COMPACT_COMPLETE);
  ck_assert_uint_eq(cz.defer_shift, 0);
  ck_assert_uint_eq(cz.considered, 1);
  ck_assert_uint_eq(cr.scanned, 10 * 8);
  ck_assert_int_eq(compact_zone_direct(z, &cz, 9, 500, TRUE, &cr), COMPACT_COMPLETE);
  ck_assert_uint_eq(cz.defer_shift, 1);
  /* Deferred now for async and sync passes alike. */
  ck_assert_int_eq(compact_zone_direct(z, &cz, 9, 500, FALSE, &cr), COMPACT_DEFERRED);
  ck_assert_int_eq(compact_zone_direct(z, &cz, 9, 500, FALSE, &cr), COMPACT_COMPLETE);
  ck_assert_uint_eq(cz.defer_shift, 1);
  assert_valid(z);
}
END_TEST

/* A page of the workload (buddy_alloc) in a pageblock cannot be migrated
 * without a migrator (or when it refuses the page): the migrate scanner
 * gives that pageblock up at the page and goes on.  Pageblock 0 holds the
 * workload's page at 0 before the background page at 100, so it stops at
 * step 1; pageblock 1 moves. */
static BuddyZone *workload_page_zone(void)
{
  BuddyZone *z = buddy_zone_new(ZONE_NORMAL, 0, 0, 4096, 10, 9);
  uint64_t pfn;
  ck_assert(buddy_alloc(z, 0, MT_MOVABLE, &pfn));
  ck_assert_uint_eq(pfn, 0);
  for (unsigned i = 0; i < 8; i++)
    ck_assert(buddy_take(z, (uint64_t)i * 512 + 100, MT_MOVABLE));
  return z;
}

START_TEST(test_workload_pages_pin_their_pageblock)
{
  g_autoptr(BuddyZone) z = workload_page_zone();
  CompactZone cz;
  compact_zone_init(&cz, z);
  CompactResult cr = { 0 };
  ck_assert_int_eq(compact_zone(z, &cz, 9, 500, &cr), COMPACT_SUCCESS);
  ck_assert_uint_eq(cr.migrated, 1);
  ck_assert(buddy_is_taken(z, 100, NULL));
  ck_assert(buddy_is_free(z, 612));
  ck_assert_uint_eq(cr.scanned, 1 + 10 + 10);
  assert_valid(z);
}
END_TEST

/* A migrator that takes the pages at pfns below `limit` and records its
 * moves; it frees the source as kernel/rmap.c does. */
typedef struct {
  BuddyZone *z;
  uint64_t limit;
  uint64_t src[8], dst[8], n;
} StubMigrator;

static gboolean stub_isolate(void *ctx, uint64_t pfn, unsigned order)
{
  const StubMigrator *m = ctx;
  return order == 0 && pfn < m->limit;
}

static uint64_t stub_migrate(void *ctx, uint64_t src, uint64_t dst, uint64_t after)
{
  StubMigrator *m = ctx;
  ck_assert_uint_eq(after, m->n * 7); /* the copies so far */
  ck_assert(!buddy_is_free(m->z, dst)); /* taken for it already */
  m->src[m->n] = src;
  m->dst[m->n++] = dst;
  buddy_free(m->z, src, 0);
  return 7;
}

/* With a migrator that takes the workload's page at 0, pageblock 0 is
 * emptied: the page and the background page at 100 move to the top
 * pageblock's first free pages, the migrator's copy cost is added, and
 * both moved pages and their two targets count as isolated. */
START_TEST(test_migrator_moves_the_workloads_pages)
{
  for (uint64_t limit = 0; limit <= 1; limit++) {
    g_autoptr(BuddyZone) z = workload_page_zone();
    StubMigrator sm = { .z = z, .limit = limit };
    PhysMigrator mig = { stub_isolate, stub_migrate, &sm };
    CompactZone cz;
    compact_zone_init(&cz, z);
    cz.mig = &mig;
    CompactResult cr = { 0 };
    ck_assert_int_eq(compact_zone(z, &cz, 9, 500, &cr), COMPACT_SUCCESS);
    if (!limit) { /* refused: as without a migrator */
      ck_assert_uint_eq(sm.n, 0);
      ck_assert_uint_eq(cr.migrated, 1);
      ck_assert_uint_eq(cr.scanned, 1 + 10 + 10);
      assert_valid(z);
      continue;
    }
    ck_assert_uint_eq(sm.n, 1);
    ck_assert_uint_eq(sm.src[0], 0);
    ck_assert_uint_eq(sm.dst[0], 7 * 512);
    ck_assert_uint_eq(cr.migrated, 2);
    ck_assert_uint_eq(cr.anon_migrated, 1);
    ck_assert_uint_eq(cr.copy_cycles, 7);
    ck_assert_uint_eq(cr.isolated, 4);
    ck_assert(buddy_is_taken(z, 7 * 512 + 1, NULL)); /* the background page, next free page up */
    ck_assert(buddy_is_free(z, 0) && buddy_is_free(z, 100) && buddy_is_free(z, 511));
    assert_valid(z);
  }
}
END_TEST

/* Sixteen pageblocks: 0..3 with a movable page each (sources), 4..7 full
 * of movable pages but for their last page (targets with room for one),
 * 8..15 with an unmovable page each (neither; they keep enough free memory
 * for the compact gap).  Each compaction frees the next source into the
 * next target down, the free scanner examining the full target again first.
 * The fourth pass frees source 3 into target 4 and then the scanners meet
 * (COMPACT_COMPLETE, though a block came free); the fifth finds nothing. */
START_TEST(test_compaction_until_the_scanners_meet)
{
  g_autoptr(BuddyZone) z = buddy_zone_new(ZONE_NORMAL, 0, 0, 16 * 512, 10, 9);
  for (uint64_t pb = 0; pb < 16; pb++) {
    uint64_t base = pb * 512;
    if (pb < 4 || pb >= 8)
      ck_assert(buddy_take(z, base + 100, pb < 4 ? MT_MOVABLE : MT_UNMOVABLE));
    else
      for (uint64_t p = base; p < base + 511; p++)
        ck_assert(buddy_take(z, p, MT_MOVABLE));
  }
  CompactZone cz;
  compact_zone_init(&cz, z);
  unsigned got = 0;
  uint64_t migrated = 0;
  CompactStatus st;
  for (;;) {
    CompactResult cr = { 0 };
    st = compact_zone(z, &cz, 9, 500, &cr);
    /* The first: source 0 (10 steps), eight unmovable pageblocks passed
     * over, target 7 walked (511 pages and one free page). */
    if (got == 0)
      ck_assert_uint_eq(cr.scanned, 10 + 8 + 512);
    migrated += cr.migrated;
    assert_valid(z);
    /* As __alloc_pages_direct_compact, try whatever the outcome: the pass
     * that meets the scanners may have freed a block on its way. */
    uint64_t pfn;
    if (!buddy_alloc(z, 9, MT_MOVABLE, &pfn))
      break;
    ck_assert_int_eq(st, got < 3 ? COMPACT_SUCCESS : COMPACT_COMPLETE);
    ck_assert_uint_eq(pfn, got * 512);
    ck_assert(buddy_is_taken(z, (7 - got) * 512 + 511, NULL));
    got++;
  }
  ck_assert_int_eq(st, COMPACT_COMPLETE);
  ck_assert_uint_eq(got, 4);
  ck_assert_uint_eq(migrated, 4);
  ck_assert_uint_eq(cz.migrate_pfn, 0); /* back to the zone's ends */
  ck_assert_uint_eq(cz.free_end_pfn, 16 * 512);
}
END_TEST

/* kcompactd's pass over a zone (kcompactd_do_work, 6.12): nothing to do
 * where a block of the order is free (compaction_suit_allocation_order);
 * a failure defers the zone at once, unlike an async direct pass; a
 * success resets the deferral without an allocation (order_failed only:
 * compaction_defer_reset(zone, order, false)).  The free scanner's steps are counted apart. */
START_TEST(test_kcompactd_pass_defers_on_failure)
{
  g_autoptr(BuddyZone) fresh = buddy_zone_new(ZONE_NORMAL, 0, 0, 8 * 512, 10, 9);
  ck_assert_int_eq(compaction_suit_allocation_order(fresh, 9, 500), COMPACT_SUCCESS);
  g_autoptr(BuddyZone) z = pinned_zone(8, MT_UNMOVABLE);
  ck_assert_int_eq(compaction_suit_allocation_order(z, 9, 500), COMPACT_CONTINUE);
  CompactZone cz;
  compact_zone_init(&cz, z);
  CompactResult cr = { 0 };
  ck_assert_int_eq(compact_zone_kcompactd(z, &cz, 9, 500, &cr), COMPACT_COMPLETE);
  ck_assert_uint_eq(cz.defer_shift, 1);
  ck_assert_int_eq(compact_zone_kcompactd(z, &cz, 9, 500, &cr), COMPACT_DEFERRED);
  g_autoptr(BuddyZone) m = pinned_zone(8, MT_MOVABLE);
  compact_zone_init(&cz, m);
  cz.defer_shift = 2;
  cz.considered = 4; /* the deferral has run out */
  CompactResult mr = { 0 };
  ck_assert_int_eq(compact_zone_kcompactd(m, &cz, 9, 500, &mr), COMPACT_SUCCESS);
  ck_assert_uint_eq(cz.defer_shift, 2);
  ck_assert_uint_eq(cz.order_failed, 10);
  ck_assert_uint_eq(mr.migrated, 1);
  /* Source pageblock 0 and target 7 walked, 10 steps each (a page and the free blocks around it). */
  ck_assert_uint_eq(mr.scanned, 20);
  ck_assert_uint_eq(mr.free_scanned, 10);
  assert_valid(m);
}
END_TEST

static Suite *compaction_suite(void)
{
  Suite *s = suite_create("compaction");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_deferral_counts);
  tcase_add_test(tc, test_suitable_follows_extfrag_threshold);
  tcase_add_test(tc, test_suitable_needs_the_compact_gap);
  tcase_add_test(tc, test_scanners_move_one_page_per_pageblock);
  tcase_add_test(tc, test_free_scanner_passes_unmovable_pageblocks);
  tcase_add_test(tc, test_unmovable_pages_defeat_compaction);
  tcase_add_test(tc, test_async_failure_does_not_defer);
  tcase_add_test(tc, test_workload_pages_pin_their_pageblock);
  tcase_add_test(tc, test_migrator_moves_the_workloads_pages);
  tcase_add_test(tc, test_compaction_until_the_scanners_meet);
  tcase_add_test(tc, test_kcompactd_pass_defers_on_failure);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(compaction_suite)
