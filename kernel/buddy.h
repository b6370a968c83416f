/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * buddy.h - the binary buddy allocator of one zone, as mm/page_alloc.c does it.
 *
 * Orders 0..max_order; free lists per order and per migratetype; split returns
 * upper halves one order lower; free merges with the buddy (pfn ^ (1 << order))
 * while it is free at the same order.  Fallback between migratetypes follows
 * the kernel's fallback table and steals a whole pageblock for large or
 * unmovable requests.
 *
 * Simulated state is never host memory of the simulated size: the part of a
 * zone no allocation has reached yet is a "frontier" of implicit max-order
 * blocks, materialised one block at a time.  Host memory grows with the pages
 * that were ever allocated, not with the zone size.
 */
#ifndef MMUSIM_BUDDY_H
#define MMUSIM_BUDDY_H

#include <glib.h>
#include <stdint.h>

typedef enum {
  MT_UNMOVABLE,
  MT_MOVABLE,
  MT_RECLAIMABLE,
  MT_HIGHATOMIC,
  MT_CMA,
  MT_ISOLATE,
  N_MIGRATETYPES
} MigrateType;

typedef enum { ZONE_DMA, ZONE_DMA32, ZONE_NORMAL, ZONE_MOVABLE, N_ZONE_TYPES } ZoneType;

typedef struct BuddyZone BuddyZone;

/* A zone of pfns [start_pfn, end_pfn).  Blocks are aligned to their order in
 * absolute pfns, as in the kernel; a partial max-order block at either end is
 * handed to the free lists as smaller aligned blocks. */
BuddyZone *buddy_zone_new(ZoneType type, int node, uint64_t start_pfn, uint64_t end_pfn,
                          unsigned max_order, unsigned pageblock_order);
void buddy_zone_free(BuddyZone *z);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(BuddyZone, buddy_zone_free)

/* Allocate 2^order pages.  FALSE when no block of that order or larger is
 * free in any allowed migratetype: a result, not an error. */
gboolean buddy_alloc(BuddyZone *z, unsigned order, MigrateType mt, uint64_t *pfn);
/* Free a block that buddy_alloc returned (same order). */
void buddy_free(BuddyZone *z, uint64_t pfn, unsigned order);

/* /proc/buddyinfo: free blocks of exactly this order (all migratetypes). */
uint64_t buddy_free_blocks(const BuddyZone *z, unsigned order);
uint64_t buddy_free_blocks_mt(const BuddyZone *z, unsigned order, MigrateType mt);
uint64_t buddy_free_pages(const BuddyZone *z);
uint64_t buddy_managed_pages(const BuddyZone *z);
unsigned buddy_max_order(const BuddyZone *z);
uint64_t buddy_start_pfn(const BuddyZone *z);
uint64_t buddy_end_pfn(const BuddyZone *z);
ZoneType buddy_zone_type(const BuddyZone *z);
int buddy_node(const BuddyZone *z);
const char *buddy_zone_name(ZoneType t);
const char *buddy_migratetype_name(MigrateType mt);

/* The kernel's fragmentation index for an allocation of `order`
 * (mm/vmstat.c __fragmentation_index): -1000 when a suitable block is free,
 * otherwise 0..1000, towards 1000 when failure is due to fragmentation rather
 * than lack of memory; 0 when the zone has no free pages. */
int buddy_fragmentation_index(const BuddyZone *z, unsigned order);

/* TRUE if pfn is inside a free block (for tests and the fault path). */
gboolean buddy_is_free(const BuddyZone *z, uint64_t pfn);

/* Take the specific aligned block [pfn, pfn + 2^order) (order <= max_order)
 * when it lies wholly inside one free block, splitting that block around it
 * as expand() does; FALSE, changing nothing, when any page of it is in use.
 * The block is then allocated as if buddy_alloc had returned it (free it with
 * buddy_free at the same order).  The frontier is materialised up to it.  For
 * ranges the caller picks: gigantic hugetlb pages (alloc_contig_range, the
 * boot-time memblock reservation). */
gboolean buddy_alloc_at(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt);
/* split_page(): the allocated block of `order` at pfn becomes 2^order
 * allocated order-0 pages, each freed on its own with buddy_free(z, p, 0). */
void buddy_split_alloc(BuddyZone *z, uint64_t pfn, unsigned order);

/* Check every invariant (free counts match the lists, no overlapping or
 * mergeable-but-unmerged blocks, every page accounted for exactly once).
 * On failure appends the reason to `why` and returns FALSE.  For tests. */
gboolean buddy_check(const BuddyZone *z, GString *why);

/* Host bytes used by the zone's bookkeeping (for the memory-per-page figure). */
uint64_t buddy_host_bytes(const BuddyZone *z);

/* ---- additions beyond the original contract ---- */

unsigned buddy_pageblock_order(const BuddyZone *z);
/* The migratetype that owns the pageblock of pfn (pfn inside the zone). */
MigrateType buddy_pageblock_migratetype(const BuddyZone *z, uint64_t pfn);
/* Append the free lists, one line per order ("order  3: Movable[0x8 0x18]"),
 * the untouched frontier on the max-order line.  For test failure messages. */
void buddy_draw(const BuddyZone *z, GString *out);

/* ---- background pages and compaction ---- */

/* Take the free page pfn as an order-0 page of type mt (MT_UNMOVABLE,
 * MT_MOVABLE or MT_RECLAIMABLE), splitting the free block that holds it; a
 * page of another type landing in a wholly free pageblock claims it.  Such
 * pages stand for memory of the machine's other tenants (page cache, slab):
 * buddy_free refuses them, buddy_release gives them back, and compaction may
 * migrate the MT_MOVABLE ones.  FALSE when pfn is outside the zone or not
 * free.  Placed in ascending pfn order into untouched chunks they cost 8 host
 * bytes each and leave the chunk implicit. */
gboolean buddy_take(BuddyZone *z, uint64_t pfn, MigrateType mt);
/* Free a page buddy_take placed; FALSE when pfn is not one. */
gboolean buddy_release(BuddyZone *z, uint64_t pfn);
/* TRUE when pfn is a page buddy_take placed (and *mt its type, if mt). */
gboolean buddy_is_taken(const BuddyZone *z, uint64_t pfn, MigrateType *mt);
/* Pages buddy_take placed and buddy_release did not give back. */
uint64_t buddy_taken_pages(const BuddyZone *z);

/* What one pageblock holds, as compaction's scanners see it. */
typedef struct {
  MigrateType mt;          /* the pageblock's migratetype */
  int free_order;          /* order of the free block covering all of it, or -1 */
  uint64_t free_pages;
  uint64_t movable_taken;  /* buddy_take pages of type MT_MOVABLE: compaction may move them */
  uint64_t fixed_pages;    /* every other allocated page (buddy_alloc's, unmovable taken ones) */
  uint64_t steps;          /* blocks a pfn walk across it visits, free or allocated, one each */
  uint64_t steps_to_fixed; /* of those, up to and including the first fixed block (all when none) */
} BuddyPageblock;

/* Describe the pageblock holding pfn; FALSE when it is not wholly inside
 * the zone.  Reads implicit chunks without materialising them. */
gboolean buddy_pageblock(const BuddyZone *z, uint64_t pfn, BuddyPageblock *pb);
/* One block of a pageblock, as isolate_migratepages_block meets it. */
typedef enum { BUDDY_BLOCK_FREE, BUDDY_BLOCK_ALLOC, BUDDY_BLOCK_TAKEN } BuddyBlockState;
typedef struct {
  uint64_t pfn;
  uint8_t order;
  uint8_t state; /* BuddyBlockState: free, buddy_alloc's, buddy_take's */
  uint8_t mt;    /* the type it was allocated or taken with; free: its list */
} BuddyBlock;
/* The blocks of pfn's pageblock in address order, at most max of them into
 * out (a block covering the whole pageblock, or more, is one); returns how
 * many, 0 when the pageblock is not wholly inside the zone. */
uint64_t buddy_pageblock_blocks(const BuddyZone *z, uint64_t pfn, BuddyBlock *out, uint64_t max);
/* The lowest free pfn in [from, to) within from's max-order block. */
gboolean buddy_next_free(const BuddyZone *z, uint64_t from, uint64_t to, uint64_t *pfn);

#endif
