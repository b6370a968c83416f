/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compaction.c - direct compaction of one zone, after mm/compaction.c.
 *
 * Models: compaction_suitable (enough free memory to migrate into,
 * compact_gap = 2 << order, and for orders above PAGE_ALLOC_COSTLY_ORDER a
 * fragmentation index above vm.extfrag_threshold); the deferral after
 * failures (defer_compaction, compaction_deferred, compaction_defer_reset:
 * after the n-th failure in a row, 2^n - 1 attempts are skipped, n at most
 * COMPACT_MAX_DEFER_SHIFT); and compact_zone as asynchronous direct
 * compaction runs it, pageblock by pageblock.  The migrate scanner walks up
 * from the zone's first whole pageblock and passes over pageblocks that are
 * not MOVABLE or are free as a whole (suitable_migration_source); in the
 * others it isolates the movable pages and gives the pageblock up at the
 * first page it cannot isolate (skip_on_failure), so only pageblocks that
 * can come free are migrated.  The free scanner walks down from the zone's
 * last whole pageblock, using MOVABLE pageblocks that are not already a free
 * block of the wanted order (suitable_migration_target) and taking their
 * free pages lowest first.  Between pageblocks compaction stops when a free
 * block of the order exists (compact_finished) or when the scanners meet.
 * Scanner positions are kept between compactions (compact_cached_*_pfn) and
 * go back to the zone's ends when the scanners meet or when compaction
 * restarts after the longest deferral.
 *
 * What moves (isolate_migratepages_block, 6.12).  The movable background
 * pages of the fragmentation model (buddy_take, MT_MOVABLE; kernel/physmem.c
 * places them), and the order-0 pages the zone's migrator accepts
 * (CompactZone.mig: the kernel's, kernel/rmap.c, which takes the processes'
 * private anonymous pages it finds through its reverse map and copies and
 * remaps them).  Everything else (page tables, THPs and mTHP folios, the
 * zero page, hugetlb pages) cannot be isolated: a pageblock holding one is
 * given up as async compaction gives up a pageblock with a page it cannot
 * isolate (skip_on_failure), the pages isolated so far going back.  Each
 * page moved takes one free page of the free scanner.
 *
 * What "scanned" counts: the steps of the kernel's pfn walks (the
 * compact_migrate_scanned and compact_free_scanned events): a pageblock
 * passed over on its type or because it is free as a whole is one step; a
 * pageblock walked is one step per block in it, a free block or an
 * allocated page (the walks skip a free buddy block in one step); a source
 * pageblock given up counts its steps up to the page that stopped it.
 *
 * Priorities (try_to_compact_pages, mm/compaction.c 6.12): every pass asks
 * compaction_deferred first (each asking counts as an attempt), and only a
 * synchronous pass (prio != COMPACT_PRIO_ASYNC) defers a zone it fails in;
 * a failed async pass leaves the deferral as it was.  kernel/physmem.c runs
 * the passes an allocation's slow path runs (an async one, then async again
 * under __GFP_NORETRY or sync-light without it).  A sync-light pass scans
 * and migrates as the async one does here.
 *
 * kcompactd (kcompactd_do_work, mm/compaction.c 6.12) compacts each zone of
 * its node that compaction_suit_allocation_order finds worth it (no free
 * block of the order yet, compaction_suitable) and is not deferred, at
 * MIGRATE_SYNC_LIGHT, and defers a zone it fails in: compact_zone_kcompactd.
 *
 * Leaves out: the synchronous priorities' own rules (a sync pass would also
 * take movable pages out of unmovable pageblocks), the pageblock
 * skip bits, the fast search of the free lists (fast_isolate_freepages,
 * fast_find_migrateblock), capture of the freed block, proactive
 * compaction, lock contention, and watermarks (the free-memory
 * check uses the compact gap alone).
 */
#include "config.h"
#include "compaction.h"

/* mm/internal.h compact_gap: free pages compaction wants to migrate into. */
static inline uint64_t compact_gap(unsigned order)
{
  return UINT64_C(2) << order;
}

static inline uint64_t pageblock_pages(const BuddyZone *z)
{
  return UINT64_C(1) << buddy_pageblock_order(z);
}

/* The zone's whole pageblocks: [*lo, *hi). */
static void whole_pageblocks(const BuddyZone *z, uint64_t *lo, uint64_t *hi)
{
  uint64_t pb = pageblock_pages(z);
  *lo = (buddy_start_pfn(z) + pb - 1) & ~(pb - 1);
  *hi = buddy_end_pfn(z) & ~(pb - 1);
  if (*hi < *lo)
    *hi = *lo;
}

static void reset_cached_positions(CompactZone *cz, const BuddyZone *z)
{
  whole_pageblocks(z, &cz->migrate_pfn, &cz->free_end_pfn);
}

void compact_zone_init(CompactZone *cz, const BuddyZone *z)
{
  g_return_if_fail(cz != NULL && z != NULL);
  *cz = (CompactZone){ 0 };
  reset_cached_positions(cz, z);
}

/* ---- deferral ------------------------------------------------------------ */

gboolean compaction_deferred(CompactZone *cz, unsigned order)
{
  unsigned limit = 1u << cz->defer_shift;
  if (order < cz->order_failed)
    return FALSE;
  if (++cz->considered >= limit) {
    cz->considered = limit;
    return FALSE;
  }
  return TRUE;
}

void compaction_defer(CompactZone *cz, unsigned order)
{
  cz->considered = 0;
  cz->defer_shift = MIN(cz->defer_shift + 1, COMPACT_MAX_DEFER_SHIFT);
  if (order < cz->order_failed)
    cz->order_failed = order;
}

void compaction_defer_reset(CompactZone *cz, unsigned order, gboolean alloc_success)
{
  if (alloc_success) {
    cz->considered = 0;
    cz->defer_shift = 0;
  }
  if (order >= cz->order_failed)
    cz->order_failed = order + 1;
}

/* compaction_restarting: the longest deferral has just run out. */
static gboolean compaction_restarting(const CompactZone *cz, unsigned order)
{
  return order >= cz->order_failed && cz->defer_shift == COMPACT_MAX_DEFER_SHIFT &&
         cz->considered >= 1u << cz->defer_shift;
}

/* ---- suitability --------------------------------------------------------- */

CompactStatus compaction_suitable(const BuddyZone *z, unsigned order, int extfrag_threshold)
{
  g_return_val_if_fail(z != NULL, COMPACT_SKIPPED);
  if (order > buddy_max_order(z) || buddy_free_pages(z) < compact_gap(order))
    return COMPACT_SKIPPED;
  if (order > COMPACT_COSTLY_ORDER) {
    int index = buddy_fragmentation_index(z, order);
    if (index >= 0 && index <= extfrag_threshold)
      return COMPACT_SKIPPED;
  }
  return COMPACT_CONTINUE;
}

/* ---- the scanners -------------------------------------------------------- */

typedef struct {
  BuddyZone *z;
  unsigned order;
  uint64_t pb;           /* pages per pageblock */
  uint64_t migrate_pfn;  /* the pageblock the migrate scanner is on or examines next */
  uint64_t free_end_pfn; /* pageblocks below this, down to migrate_pfn, are not examined yet */
  uint64_t target_pfn;   /* the free scanner's pageblock, or UINT64_MAX */
  uint64_t target_next;  /* the lowest pfn of it that may still be free */
  const PhysMigrator *mig; /* moves the processes' pages, or NULL */
  CompactResult *cr;
} Scanners;

/* compact_finished: a free block of the order, of any type (a movable
 * allocation may claim a foreign block this large). */
static gboolean free_block_exists(const BuddyZone *z, unsigned order)
{
  for (unsigned o = order; o <= buddy_max_order(z); o++)
    if (buddy_free_blocks(z, o))
      return TRUE;
  return FALSE;
}

/* isolate_freepages: the next free page above the migrate scanner's
 * pageblock, moving down one pageblock at a time; FALSE when the scanners
 * have met. */
static gboolean next_target(Scanners *s, uint64_t *pfn)
{
  for (;;) {
    if (s->target_pfn != UINT64_MAX) {
      if (buddy_next_free(s->z, s->target_next, s->target_pfn + s->pb, pfn)) {
        s->target_next = *pfn + 1;
        return TRUE;
      }
      s->target_pfn = UINT64_MAX;
    }
    if (s->free_end_pfn <= s->migrate_pfn + s->pb)
      return FALSE;
    s->free_end_pfn -= s->pb;
    uint64_t t = s->free_end_pfn;
    BuddyPageblock pb;
    buddy_pageblock(s->z, t, &pb);
    if (pb.mt != MT_MOVABLE || pb.free_order >= (int)s->order) {
      s->cr->scanned++; /* suitable_migration_target said no */
      s->cr->free_scanned++;
      continue;
    }
    s->cr->scanned += pb.steps;
    s->cr->free_scanned += pb.steps;
    if (pb.free_pages) {
      s->target_pfn = t;
      s->target_next = t;
    }
  }
}

/* isolate_migratepages_block's test of one block met in a source
 * pageblock: a movable background page, or a page the migrator can move
 * (an order-0 page: PageCompound pages, THPs and mTHP folios, are left
 * where they are, see the header). */
static gboolean isolable(const Scanners *s, const BuddyBlock *b)
{
  if (b->state == BUDDY_BLOCK_TAKEN)
    return b->mt == MT_MOVABLE;
  return b->state == BUDDY_BLOCK_ALLOC && b->order == 0 && b->mt == MT_MOVABLE && s->mig &&
         s->mig->isolate(s->mig->ctx, b->pfn, b->order);
}

/* Move one isolated page to the free page dst: a background page is taken
 * there and released here; a process's page is copied and remapped by the
 * migrator, which frees the source. */
static void move_page(Scanners *s, const BuddyBlock *b, uint64_t dst)
{
  CompactResult *cr = s->cr;
  if (b->state == BUDDY_BLOCK_TAKEN) {
    gboolean moved = buddy_take(s->z, dst, MT_MOVABLE) && buddy_release(s->z, b->pfn);
    g_assert(moved);
  } else {
    gboolean taken = buddy_alloc_at(s->z, dst, 0, MT_MOVABLE);
    g_assert(taken);
    cr->copy_cycles += s->mig->migrate(s->mig->ctx, b->pfn, dst, cr->copy_cycles);
    cr->anon_migrated++;
  }
  cr->migrated++;
  cr->isolated++; /* the free page isolate_freepages_block took for it */
}

/* isolate_migratepages_block and migrate_pages for the pageblock at
 * migrate_pfn.  FALSE when the free scanner ran out of pages on the way
 * (scanners met). */
static gboolean migrate_pageblock(Scanners *s, BuddyBlock *blocks)
{
  BuddyPageblock pb;
  buddy_pageblock(s->z, s->migrate_pfn, &pb);
  if (pb.mt != MT_MOVABLE || pb.free_order >= 0) {
    s->cr->scanned++; /* suitable_migration_source said no, or nothing to do */
    return TRUE;
  }
  if (pb.fixed_pages && !s->mig) {
    s->cr->scanned += pb.steps_to_fixed; /* skip_on_failure */
    return TRUE;
  }
  uint64_t n = buddy_pageblock_blocks(s->z, s->migrate_pfn, blocks, s->pb), isolated = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (blocks[i].state == BUDDY_BLOCK_FREE)
      continue;
    if (!isolable(s, &blocks[i])) {
      s->cr->scanned += i + 1; /* skip_on_failure: the isolated pages go back */
      return TRUE;
    }
    blocks[isolated++] = blocks[i];
  }
  s->cr->scanned += n;
  s->cr->isolated += isolated;
  for (uint64_t i = 0; i < isolated; i++) {
    uint64_t dst;
    if (!next_target(s, &dst))
      return FALSE;
    move_page(s, &blocks[i], dst);
  }
  return TRUE;
}

CompactStatus compact_zone(BuddyZone *z, CompactZone *cz, unsigned order, int extfrag_threshold, CompactResult *cr)
{
  g_return_val_if_fail(z != NULL && cz != NULL && cr != NULL, COMPACT_SKIPPED);
  CompactStatus status = compaction_suitable(z, order, extfrag_threshold);
  if (status == COMPACT_SKIPPED)
    return status;
  uint64_t lo, hi;
  whole_pageblocks(z, &lo, &hi);
  if (compaction_restarting(cz, order) || cz->migrate_pfn < lo || cz->free_end_pfn > hi ||
      cz->migrate_pfn > cz->free_end_pfn)
    reset_cached_positions(cz, z);

  Scanners s = { z, order, pageblock_pages(z), cz->migrate_pfn, cz->free_end_pfn, UINT64_MAX, 0, cz->mig, cr };
  g_autofree BuddyBlock *buf = g_new(BuddyBlock, s.pb);
  for (;;) {
    if (s.migrate_pfn >= s.free_end_pfn) {
      status = COMPACT_COMPLETE;
      break;
    }
    if (free_block_exists(z, order)) {
      status = COMPACT_SUCCESS;
      break;
    }
    if (!migrate_pageblock(&s, buf)) {
      status = COMPACT_COMPLETE;
      break;
    }
    s.migrate_pfn += s.pb;
  }
  if (status == COMPACT_SUCCESS) {
    cz->migrate_pfn = s.migrate_pfn;
    /* A target with free pages left is examined again next time. */
    cz->free_end_pfn = s.target_pfn != UINT64_MAX ? s.target_pfn + s.pb : s.free_end_pfn;
  } else {
    reset_cached_positions(cz, z);
  }
  return status;
}

CompactStatus compact_zone_direct(BuddyZone *z, CompactZone *cz, unsigned order, int extfrag_threshold,
                                  gboolean sync, CompactResult *cr)
{
  g_return_val_if_fail(z != NULL && cz != NULL && cr != NULL, COMPACT_SKIPPED);
  if (compaction_deferred(cz, order))
    return COMPACT_DEFERRED;
  CompactStatus status = compact_zone(z, cz, order, extfrag_threshold, cr);
  if (status == COMPACT_SUCCESS)
    compaction_defer_reset(cz, order, FALSE);
  else if (sync && status == COMPACT_COMPLETE)
    compaction_defer(cz, order); /* try_to_compact_pages: prio != COMPACT_PRIO_ASYNC */
  return status;
}

CompactStatus compaction_suit_allocation_order(const BuddyZone *z, unsigned order, int extfrag_threshold)
{
  g_return_val_if_fail(z != NULL, COMPACT_SKIPPED);
  if (free_block_exists(z, order))
    return COMPACT_SUCCESS; /* zone_watermark_ok at the order */
  return compaction_suitable(z, order, extfrag_threshold);
}

CompactStatus compact_zone_kcompactd(BuddyZone *z, CompactZone *cz, unsigned order, int extfrag_threshold,
                                     CompactResult *cr)
{
  g_return_val_if_fail(z != NULL && cz != NULL && cr != NULL, COMPACT_SKIPPED);
  if (compaction_deferred(cz, order))
    return COMPACT_DEFERRED;
  if (compaction_suit_allocation_order(z, order, extfrag_threshold) != COMPACT_CONTINUE)
    return COMPACT_SKIPPED;
  CompactStatus status = compact_zone(z, cz, order, extfrag_threshold, cr);
  if (status == COMPACT_SUCCESS)
    compaction_defer_reset(cz, order, FALSE);
  else if (status == COMPACT_COMPLETE)
    compaction_defer(cz, order); /* kcompactd_do_work: COMPACT_PARTIAL_SKIPPED or COMPACT_COMPLETE */
  return status;
}
