/*
 * buddy.c - the binary buddy allocator of one zone, after mm/page_alloc.c.
 *
 * Models: free lists per order and migratetype; allocation from the smallest
 * order that has a block, halving it and keeping the upper halves free one
 * order lower (expand); free merging with the buddy pfn ^ (1 << order) while
 * it is free at the same order (__free_one_page), blocks above a pageblock
 * freed one pageblock at a time (split_large_buddy); migratetype ownership per
 * pageblock, every pageblock MOVABLE at boot (memmap_init); and the fallback of
 * __rmqueue: first claim a whole foreign pageblock, searching from the largest
 * order down (__rmqueue_claim, try_to_claim_block), then steal one block,
 * searching from the smallest order up (__rmqueue_steal).  As since Linux 6.10
 * a free block always sits on the list of its pageblock's type, and a free
 * block of pageblock size or more covers pageblocks of one type only.
 * Leaves out: per-CPU lists, watermarks and their boosting, the highatomic
 * reserve, CMA and page isolation (those types exist but no pageblock ever
 * becomes one, so allocations of them fail), shuffling, page reporting, and
 * the head-or-tail choice when a block is queued (lists are LIFO here).
 *
 * Host memory.  The zone is cut into "chunks", its max-order blocks (aligned
 * in absolute pfns, so the first and last may be partial).  The untouched
 * upper part of the zone, the frontier, is a run of implicit free max-order
 * MOVABLE blocks described by two pfns; when a request needs one, the lowest
 * is carved off and its chunk materialised.  So chunks in use are the head
 * chunk, a contiguous run behind it, and the tail chunk, and the directory is
 * a plain array.  A materialised page costs 8 host bytes (BuddyPage), each of
 * its pageblocks 1 byte, and each free block an 8-byte slot in a list array
 * (at most twice that while the array has room to grow); memory grows with
 * the max-order blocks ever handed out, never with the zone size.
 */
#include "config.h"
#include "buddy.h"

#include <string.h>

/* Largest max_order the per-page bookkeeping supports: BuddyPage.order is a
 * byte and a chunk of 2^20 pages costs 8 MiB; settings.def caps buddy.max_order
 * at the same value. */
#define BUDDY_ORDER_LIMIT 20

/* Free lists hold at most this many blocks each (BuddyPage.pos is 32 bits);
 * reaching it needs 32 GiB of host memory for that list alone. */
#define BUDDY_LIST_LIMIT UINT32_MAX

/* Blocks listed per free list by buddy_draw before it abbreviates. */
#define BUDDY_DRAW_LIMIT 16

typedef enum {
  PAGE_NONE,  /* not the head of a block: inside one, or outside the zone */
  PAGE_FREE,  /* head of a free block, on free list (order, mt) at pos */
  PAGE_ALLOC, /* head of a block buddy_alloc handed out */
} PageState;

/* Bookkeeping of one pfn; only block heads carry information. */
typedef struct {
  uint32_t pos;   /* PAGE_FREE: index in its free list */
  uint8_t state;  /* PageState */
  uint8_t order;  /* order of the block this pfn heads */
  uint8_t mt;     /* PAGE_FREE: list it is on; PAGE_ALLOC: type requested */
  uint8_t unused;
} BuddyPage;

/* One materialised max-order block of pfns. */
typedef struct {
  uint8_t *pageblock_mt; /* MigrateType of each pageblock, after page[] */
  BuddyPage page[];      /* one per pfn of the block */
} BuddyChunk;

/* Free blocks of one order and migratetype: an array used as a LIFO stack,
 * removal from the middle by moving the last entry into the hole. */
typedef struct {
  uint64_t *pfn;
  uint32_t len, cap;
} FreeList;

struct BuddyZone {
  ZoneType type;
  int node;
  uint64_t start_pfn, end_pfn;
  unsigned max_order, pageblock_order;

  uint64_t base_pfn;       /* start_pfn rounded down to max order: chunk 0 */
  BuddyChunk **dir;        /* chunks 0 .. dir_len - 1, all materialised */
  uint64_t dir_len, dir_cap;
  BuddyChunk *tail;        /* partial last chunk, NULL if end is aligned */
  uint64_t tail_index;     /* its chunk number */
  uint64_t chunk_bytes;    /* host bytes of one chunk */
  uint64_t n_chunks;       /* materialised, dir and tail */

  /* The frontier: implicit free MOVABLE blocks of max order covering
   * [frontier_pfn, frontier_end_pfn).  Invariant: dir_len chunks lie below
   * frontier_pfn, i.e. dir_len == (frontier_pfn - base_pfn) >> max_order. */
  uint64_t frontier_pfn, frontier_end_pfn;

  FreeList *lists;         /* [order * N_MIGRATETYPES + mt] */
  uint64_t free_pages;     /* pages on the free lists (frontier excluded) */
  uint64_t alloc_pages;    /* pages handed out and not freed */
};

/* Where an allocation of one type looks when its own lists are empty
 * (mm/page_alloc.c fallbacks[]).  Only the three types that pages are
 * allocated with have fallbacks. */
#define N_FALLBACK_TYPES 3
static const MigrateType fallbacks[N_FALLBACK_TYPES][2] = {
  [MT_UNMOVABLE] = { MT_RECLAIMABLE, MT_MOVABLE },
  [MT_MOVABLE] = { MT_RECLAIMABLE, MT_UNMOVABLE },
  [MT_RECLAIMABLE] = { MT_UNMOVABLE, MT_MOVABLE },
};

static const char *const zone_names[N_ZONE_TYPES] = { "DMA", "DMA32", "Normal", "Movable" };
static const char *const migratetype_names[N_MIGRATETYPES] = {
  "Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA", "Isolate",
};

/* ---- geometry and the sparse per-pfn map -------------------------------- */

static inline uint64_t block_pages(unsigned order)
{
  return UINT64_C(1) << order;
}

static inline gboolean in_zone(const BuddyZone *z, uint64_t pfn)
{
  return pfn >= z->start_pfn && pfn < z->end_pfn;
}

static inline uint64_t chunk_index(const BuddyZone *z, uint64_t pfn)
{
  return (pfn - z->base_pfn) >> z->max_order;
}

static inline uint64_t chunk_offset(const BuddyZone *z, uint64_t pfn)
{
  return (pfn - z->base_pfn) & (block_pages(z->max_order) - 1);
}

/* NULL while pfn is in the frontier. */
static inline BuddyChunk *chunk_of(const BuddyZone *z, uint64_t pfn)
{
  uint64_t c = chunk_index(z, pfn);
  if (c < z->dir_len)
    return z->dir[c];
  if (z->tail && c == z->tail_index)
    return z->tail;
  return NULL;
}

static inline BuddyPage *page_of(const BuddyZone *z, uint64_t pfn)
{
  BuddyChunk *ch = chunk_of(z, pfn);
  return ch ? &ch->page[chunk_offset(z, pfn)] : NULL;
}

static BuddyChunk *chunk_new(BuddyZone *z)
{
  uint64_t pages = block_pages(z->max_order);
  uint64_t pageblocks = block_pages(z->max_order - z->pageblock_order);
  BuddyChunk *ch = g_malloc0(z->chunk_bytes);
  ch->pageblock_mt = (uint8_t *)&ch->page[pages];
  memset(ch->pageblock_mt, MT_MOVABLE, pageblocks);
  z->n_chunks++;
  return ch;
}

static MigrateType pageblock_mt(const BuddyZone *z, uint64_t pfn)
{
  BuddyChunk *ch = chunk_of(z, pfn);
  if (!ch)
    return MT_MOVABLE; /* the frontier keeps its boot-time type */
  return ch->pageblock_mt[chunk_offset(z, pfn) >> z->pageblock_order];
}

/* Set the type of every pageblock the block (pfn, order) touches: its own
 * pageblock when it is smaller (set_pageblock_migratetype), all of them when
 * it is larger (change_pageblock_range). */
static void set_pageblock_range(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt)
{
  BuddyChunk *ch = chunk_of(z, pfn);
  unsigned span = MAX(order, z->pageblock_order);
  uint64_t first = chunk_offset(z, pfn) >> z->pageblock_order;
  uint64_t n = block_pages(span - z->pageblock_order);
  memset(&ch->pageblock_mt[first], mt, n);
}

/* ---- free lists ---------------------------------------------------------- */

static inline FreeList *list_of(const BuddyZone *z, unsigned order, MigrateType mt)
{
  return &z->lists[order * N_MIGRATETYPES + mt];
}

static void list_add(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt)
{
  FreeList *l = list_of(z, order, mt);
  if (l->len == l->cap) {
    g_assert(l->cap < BUDDY_LIST_LIMIT / 2);
    l->cap = l->cap ? l->cap * 2 : 8;
    l->pfn = g_renew(uint64_t, l->pfn, l->cap);
  }
  BuddyPage *p = page_of(z, pfn);
  p->state = PAGE_FREE;
  p->order = (uint8_t)order;
  p->mt = (uint8_t)mt;
  p->pos = l->len;
  l->pfn[l->len++] = pfn;
  z->free_pages += block_pages(order);
}

/* Take the free block headed by pfn off its list; its head becomes NONE. */
static void list_del(BuddyZone *z, uint64_t pfn)
{
  BuddyPage *p = page_of(z, pfn);
  FreeList *l = list_of(z, p->order, p->mt);
  uint64_t last = l->pfn[--l->len];
  if (p->pos != l->len) {
    l->pfn[p->pos] = last;
    page_of(z, last)->pos = p->pos;
  }
  z->free_pages -= block_pages(p->order);
  p->state = PAGE_NONE;
}

static inline uint64_t frontier_blocks(const BuddyZone *z)
{
  return (z->frontier_end_pfn - z->frontier_pfn) >> z->max_order;
}

/* The free area (order, mt): its list, plus the frontier for the max-order
 * MOVABLE area. */
static gboolean area_empty(const BuddyZone *z, unsigned order, MigrateType mt)
{
  if (list_of(z, order, mt)->len)
    return FALSE;
  return !(order == z->max_order && mt == MT_MOVABLE && frontier_blocks(z));
}

/* Materialise the lowest frontier block and return its pfn. */
static uint64_t frontier_carve(BuddyZone *z)
{
  g_assert(z->frontier_pfn < z->frontier_end_pfn);
  if (z->dir_len == z->dir_cap) {
    z->dir_cap = z->dir_cap ? z->dir_cap * 2 : 4;
    z->dir = g_renew(BuddyChunk *, z->dir, z->dir_cap);
  }
  z->dir[z->dir_len++] = chunk_new(z);
  uint64_t pfn = z->frontier_pfn;
  z->frontier_pfn += block_pages(z->max_order);
  return pfn;
}

/* Remove one block from a non-empty area, the most recently freed first,
 * the frontier last.  Its head is left PAGE_NONE for the caller to set. */
static uint64_t area_take(BuddyZone *z, unsigned order, MigrateType mt)
{
  FreeList *l = list_of(z, order, mt);
  if (l->len) {
    uint64_t pfn = l->pfn[l->len - 1];
    list_del(z, pfn);
    return pfn;
  }
  return frontier_carve(z);
}

/* ---- allocation ---------------------------------------------------------- */

/* Split the block (pfn, high) down to order low, keeping the lower half each
 * time.  Worked example, low 0, high 3, pfn 8: 12..15 goes on the order-2
 * list, 10..11 on order 1, 9 on order 0, and 8 is returned. */
static void expand(BuddyZone *z, uint64_t pfn, unsigned low, unsigned high, MigrateType mt)
{
  while (high > low) {
    high--;
    list_add(z, pfn + block_pages(high), high, mt);
  }
}

/* __rmqueue_smallest */
static gboolean rmqueue_smallest(BuddyZone *z, unsigned order, MigrateType mt, uint64_t *pfn)
{
  for (unsigned o = order; o <= z->max_order; o++) {
    if (area_empty(z, o, mt))
      continue;
    uint64_t p = area_take(z, o, mt);
    expand(z, p, order, o, mt);
    *pfn = p;
    return TRUE;
  }
  return FALSE;
}

/* should_try_claim_block: a large block will leave more free pages in its
 * pageblock, and unmovable or reclaimable pages polluting a movable pageblock
 * hurt more than the other way round. */
static gboolean should_try_claim(const BuddyZone *z, unsigned order, MigrateType start)
{
  return order >= z->pageblock_order || order >= z->pageblock_order / 2 ||
         start == MT_RECLAIMABLE || start == MT_UNMOVABLE;
}

enum { FALLBACK_NONE = -1, FALLBACK_TOO_SMALL = -2 };

/* find_suitable_fallback: the first fallback type with a block of `order`,
 * FALLBACK_NONE, or FALLBACK_TOO_SMALL when claiming and the order is too
 * small to claim a pageblock for `start`. */
static int find_fallback(const BuddyZone *z, unsigned order, MigrateType start, gboolean claim)
{
  if (claim && !should_try_claim(z, order, start))
    return FALLBACK_TOO_SMALL;
  for (unsigned i = 0; i < G_N_ELEMENTS(fallbacks[start]); i++)
    if (!area_empty(z, order, fallbacks[start][i]))
      return (int)fallbacks[start][i];
  return FALLBACK_NONE;
}

/* try_to_claim_block, for a free block smaller than a pageblock: convert the
 * whole pageblock when at least half of it is free or already holds pages
 * like ours, then allocate from our own lists. */
static gboolean claim_pageblock(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType start,
                                MigrateType block_mt, uint64_t *out)
{
  uint64_t pb_pages = block_pages(z->pageblock_order);
  uint64_t pb_start = pfn & ~(pb_pages - 1);
  /* prep_move_freepages_block: the pageblock must lie inside the zone. */
  if (pb_start < z->start_pfn || pb_start + pb_pages > z->end_pfn)
    return FALSE;

  /* Blocks are aligned to their size, so those smaller than a pageblock tile
   * it from its first pfn. */
  uint64_t free = 0, movable = 0;
  for (uint64_t p = pb_start; p < pb_start + pb_pages;) {
    const BuddyPage *e = page_of(z, p);
    if (e->state == PAGE_FREE)
      free += block_pages(e->order);
    else if (e->mt == MT_MOVABLE)
      movable += block_pages(e->order);
    p += block_pages(e->order);
  }
  uint64_t alike = 0;
  if (start == MT_MOVABLE)
    alike = movable;
  else if (block_mt == MT_MOVABLE)
    alike = pb_pages - (free + movable);
  if (free + alike < pb_pages / 2)
    return FALSE;

  for (uint64_t p = pb_start; p < pb_start + pb_pages;) {
    const BuddyPage *e = page_of(z, p);
    unsigned o = e->order;
    if (e->state == PAGE_FREE) {
      list_del(z, p);
      list_add(z, p, o, start);
    }
    p += block_pages(o);
  }
  set_pageblock_range(z, pb_start, z->pageblock_order, start);
  return rmqueue_smallest(z, order, start, out);
}

/* __rmqueue_claim */
static gboolean rmqueue_claim(BuddyZone *z, unsigned order, MigrateType start, uint64_t *pfn)
{
  for (int o = (int)z->max_order; o >= (int)order; o--) {
    int fb = find_fallback(z, (unsigned)o, start, TRUE);
    if (fb == FALLBACK_NONE)
      continue;
    if (fb == FALLBACK_TOO_SMALL)
      break;
    MigrateType block_mt = (MigrateType)fb;
    if ((unsigned)o >= z->pageblock_order) {
      /* Take ownership of every pageblock of the block. */
      uint64_t p = area_take(z, (unsigned)o, block_mt);
      set_pageblock_range(z, p, (unsigned)o, start);
      expand(z, p, order, (unsigned)o, start);
      *pfn = p;
      return TRUE;
    }
    FreeList *l = list_of(z, (unsigned)o, block_mt);
    if (claim_pageblock(z, l->pfn[l->len - 1], order, start, block_mt, pfn))
      return TRUE;
  }
  return FALSE;
}

/* __rmqueue_steal: take one block of a fallback type, smallest first, and
 * leave the rest of it where its pageblock says. */
static gboolean rmqueue_steal(BuddyZone *z, unsigned order, MigrateType start, uint64_t *pfn)
{
  for (unsigned o = order; o <= z->max_order; o++) {
    int fb = find_fallback(z, o, start, FALSE);
    if (fb == FALLBACK_NONE)
      continue;
    uint64_t p = area_take(z, o, (MigrateType)fb);
    expand(z, p, order, o, (MigrateType)fb);
    *pfn = p;
    return TRUE;
  }
  return FALSE;
}

gboolean buddy_alloc(BuddyZone *z, unsigned order, MigrateType mt, uint64_t *pfn)
{
  g_return_val_if_fail(z != NULL && pfn != NULL, FALSE);
  g_return_val_if_fail(mt < N_MIGRATETYPES, FALSE);
  if (order > z->max_order)
    return FALSE;
  uint64_t p;
  gboolean ok = rmqueue_smallest(z, order, mt, &p);
  if (!ok && mt < N_FALLBACK_TYPES)
    ok = rmqueue_claim(z, order, mt, &p) || rmqueue_steal(z, order, mt, &p);
  if (!ok)
    return FALSE;
  BuddyPage *head = page_of(z, p);
  head->state = PAGE_ALLOC;
  head->order = (uint8_t)order;
  head->mt = (uint8_t)mt;
  z->alloc_pages += block_pages(order);
  *pfn = p;
  return TRUE;
}

/* ---- free ---------------------------------------------------------------- */

static inline gboolean mt_mergeable(MigrateType mt)
{
  return mt < N_FALLBACK_TYPES;
}

/* __free_one_page: merge with the buddy while it is free at the same order.
 * Worked example: freeing pfn 9 at order 0 with 8 free at order 0 gives the
 * order-1 block 8 (9 & 8); with 10..11 free at order 1 that gives 8..11 at
 * order 2, and so on up to max_order. */
static void free_one(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt)
{
  while (order < z->max_order) {
    uint64_t buddy = pfn ^ block_pages(order);
    if (!in_zone(z, buddy))
      break;
    /* Below max order the buddy is in the same chunk, so materialised. */
    const BuddyPage *b = page_of(z, buddy);
    if (b->state != PAGE_FREE || b->order != order)
      break;
    MigrateType buddy_mt = b->mt;
    if (buddy_mt != mt && (!mt_mergeable(mt) || !mt_mergeable(buddy_mt)))
      break;
    list_del(z, buddy);
    if (buddy_mt != mt)
      set_pageblock_range(z, buddy, order, mt); /* so expand() matches later */
    pfn &= buddy;
    order++;
  }
  list_add(z, pfn, order, mt);
}

void buddy_free(BuddyZone *z, uint64_t pfn, unsigned order)
{
  g_return_if_fail(z != NULL);
  g_return_if_fail(order <= z->max_order && in_zone(z, pfn) && (pfn & (block_pages(order) - 1)) == 0);
  BuddyPage *head = page_of(z, pfn);
  if (!head || head->state != PAGE_ALLOC || head->order != order) {
    g_critical("buddy_free: pfn %#" G_GINT64_MODIFIER "x was not allocated at order %u", pfn, order);
    return;
  }
  head->state = PAGE_NONE;
  z->alloc_pages -= block_pages(order);
  /* split_large_buddy: each pageblock goes back to the list of its type. */
  unsigned piece = MIN(order, z->pageblock_order);
  for (uint64_t p = pfn; p < pfn + block_pages(order); p += block_pages(piece))
    free_one(z, p, piece, pageblock_mt(z, p));
}

/* ---- zone ---------------------------------------------------------------- */

/* Hand [from, to) to the free lists as the largest aligned blocks that fit. */
static void free_range(BuddyZone *z, uint64_t from, uint64_t to)
{
  while (from < to) {
    unsigned o = z->max_order;
    while (o > 0 && ((from & (block_pages(o) - 1)) || from + block_pages(o) > to))
      o--;
    list_add(z, from, o, MT_MOVABLE);
    from += block_pages(o);
  }
}

BuddyZone *buddy_zone_new(ZoneType type, int node, uint64_t start_pfn, uint64_t end_pfn,
                          unsigned max_order, unsigned pageblock_order)
{
  g_return_val_if_fail(type < N_ZONE_TYPES, NULL);
  g_return_val_if_fail(start_pfn < end_pfn, NULL);
  g_return_val_if_fail(max_order <= BUDDY_ORDER_LIMIT, NULL);
  g_return_val_if_fail(pageblock_order <= max_order, NULL);

  BuddyZone *z = g_new0(BuddyZone, 1);
  z->type = type;
  z->node = node;
  z->start_pfn = start_pfn;
  z->end_pfn = end_pfn;
  z->max_order = max_order;
  z->pageblock_order = pageblock_order;
  z->lists = g_new0(FreeList, (max_order + 1) * N_MIGRATETYPES);
  uint64_t bsize = block_pages(max_order);
  z->chunk_bytes = sizeof(BuddyChunk) + bsize * sizeof(BuddyPage) + block_pages(max_order - pageblock_order);

  z->base_pfn = start_pfn & ~(bsize - 1);
  uint64_t first_full = (start_pfn + bsize - 1) & ~(bsize - 1);
  uint64_t last_full_end = end_pfn & ~(bsize - 1);
  z->frontier_pfn = first_full;
  z->frontier_end_pfn = MAX(first_full, last_full_end);

  uint64_t head_end = MIN(first_full, end_pfn);
  if (start_pfn < head_end) {
    z->dir_cap = 4;
    z->dir = g_new(BuddyChunk *, z->dir_cap);
    z->dir[z->dir_len++] = chunk_new(z);
    free_range(z, start_pfn, head_end);
  }
  if (end_pfn > last_full_end && last_full_end >= first_full) {
    z->tail_index = chunk_index(z, last_full_end);
    z->tail = chunk_new(z);
    free_range(z, last_full_end, end_pfn);
  }
  return z;
}

void buddy_zone_free(BuddyZone *z)
{
  if (!z)
    return;
  for (uint64_t c = 0; c < z->dir_len; c++)
    g_free(z->dir[c]);
  g_free(z->dir);
  g_free(z->tail);
  for (unsigned i = 0; i < (z->max_order + 1) * N_MIGRATETYPES; i++)
    g_free(z->lists[i].pfn);
  g_free(z->lists);
  g_free(z);
}

/* ---- queries ------------------------------------------------------------- */

uint64_t buddy_free_blocks_mt(const BuddyZone *z, unsigned order, MigrateType mt)
{
  g_return_val_if_fail(z != NULL && mt < N_MIGRATETYPES, 0);
  if (order > z->max_order)
    return 0;
  uint64_t n = list_of(z, order, mt)->len;
  if (order == z->max_order && mt == MT_MOVABLE)
    n += frontier_blocks(z);
  return n;
}

uint64_t buddy_free_blocks(const BuddyZone *z, unsigned order)
{
  uint64_t n = 0;
  for (MigrateType mt = 0; mt < N_MIGRATETYPES; mt++)
    n += buddy_free_blocks_mt(z, order, mt);
  return n;
}

uint64_t buddy_free_pages(const BuddyZone *z)
{
  return z->free_pages + (z->frontier_end_pfn - z->frontier_pfn);
}

uint64_t buddy_managed_pages(const BuddyZone *z)
{
  return z->end_pfn - z->start_pfn;
}

unsigned buddy_max_order(const BuddyZone *z)
{
  return z->max_order;
}

unsigned buddy_pageblock_order(const BuddyZone *z)
{
  return z->pageblock_order;
}

uint64_t buddy_start_pfn(const BuddyZone *z)
{
  return z->start_pfn;
}

uint64_t buddy_end_pfn(const BuddyZone *z)
{
  return z->end_pfn;
}

ZoneType buddy_zone_type(const BuddyZone *z)
{
  return z->type;
}

int buddy_node(const BuddyZone *z)
{
  return z->node;
}

const char *buddy_zone_name(ZoneType t)
{
  g_return_val_if_fail(t < N_ZONE_TYPES, "?");
  return zone_names[t];
}

const char *buddy_migratetype_name(MigrateType mt)
{
  g_return_val_if_fail(mt < N_MIGRATETYPES, "?");
  return migratetype_names[mt];
}

MigrateType buddy_pageblock_migratetype(const BuddyZone *z, uint64_t pfn)
{
  g_return_val_if_fail(z != NULL && in_zone(z, pfn), MT_MOVABLE);
  return pageblock_mt(z, pfn);
}

/* mm/vmstat.c fill_contig_page_info and __fragmentation_index, with the
 * same unsigned integer arithmetic: with a single free block the result can
 * go below zero, as it does in the kernel. */
int buddy_fragmentation_index(const BuddyZone *z, unsigned order)
{
  if (order > z->max_order)
    return 0;
  uint64_t free_pages = 0, blocks_total = 0, blocks_suitable = 0;
  for (unsigned o = 0; o <= z->max_order; o++) {
    uint64_t blocks = buddy_free_blocks(z, o);
    blocks_total += blocks;
    free_pages += blocks << o;
    if (o >= order)
      blocks_suitable += blocks << (o - order);
  }
  if (!blocks_total)
    return 0;
  if (blocks_suitable)
    return -1000;
  uint64_t requested = block_pages(order);
  return 1000 - (int)((1000 + free_pages * 1000 / requested) / blocks_total);
}

gboolean buddy_is_free(const BuddyZone *z, uint64_t pfn)
{
  if (!in_zone(z, pfn))
    return FALSE;
  if (pfn >= z->frontier_pfn && pfn < z->frontier_end_pfn)
    return TRUE;
  /* The first head at or below pfn whose block reaches pfn. */
  for (unsigned o = 0; o <= z->max_order; o++) {
    const BuddyPage *e = page_of(z, pfn & ~(block_pages(o) - 1));
    if (e->state != PAGE_NONE && e->order >= o)
      return e->state == PAGE_FREE;
  }
  g_return_val_if_reached(FALSE);
}

gboolean buddy_alloc_at(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt)
{
  g_return_val_if_fail(z != NULL && order <= z->max_order && mt < N_MIGRATETYPES, FALSE);
  g_return_val_if_fail((pfn & (block_pages(order) - 1)) == 0, FALSE);
  if (!in_zone(z, pfn) || pfn + block_pages(order) > z->end_pfn)
    return FALSE;
  /* The frontier is carved lowest block first, so everything up to pfn's
   * block goes on the free lists, as boot would have put it there. */
  while (pfn >= z->frontier_pfn && pfn < z->frontier_end_pfn)
    list_add(z, frontier_carve(z), z->max_order, MT_MOVABLE);
  /* A wholly free aligned range lies inside one free block of its order or
   * more (mergeable free buddies are always merged): find its head. */
  uint64_t head = 0;
  unsigned o = order;
  for (; o <= z->max_order; o++) {
    head = pfn & ~(block_pages(o) - 1);
    if (head < z->start_pfn)
      return FALSE;
    const BuddyPage *e = page_of(z, head);
    if (e->state == PAGE_FREE && e->order == o)
      break;
    if (e->state == PAGE_ALLOC && e->order >= o)
      return FALSE; /* an allocated block covers pfn */
  }
  if (o > z->max_order)
    return FALSE;
  MigrateType block_mt = (MigrateType)page_of(z, head)->mt;
  list_del(z, head);
  /* Split towards pfn, freeing the other half at each step.  Worked example,
   * pfn 12 order 1 inside the free order-3 block 8: 8..11 goes on the
   * order-2 list, 14..15 on order 1, and 12..13 is taken. */
  while (o > order) {
    o--;
    uint64_t upper = head + block_pages(o);
    if (pfn >= upper) {
      list_add(z, head, o, block_mt);
      head = upper;
    } else {
      list_add(z, upper, o, block_mt);
    }
  }
  BuddyPage *p = page_of(z, pfn);
  p->state = PAGE_ALLOC;
  p->order = (uint8_t)order;
  p->mt = (uint8_t)mt;
  z->alloc_pages += block_pages(order);
  return TRUE;
}

void buddy_split_alloc(BuddyZone *z, uint64_t pfn, unsigned order)
{
  g_return_if_fail(z != NULL && in_zone(z, pfn));
  BuddyPage *head = page_of(z, pfn);
  if (!head || head->state != PAGE_ALLOC || head->order != order) {
    g_critical("buddy_split_alloc: pfn %#" G_GINT64_MODIFIER "x was not allocated at order %u", pfn, order);
    return;
  }
  for (uint64_t q = pfn; q < pfn + block_pages(order); q++) {
    BuddyPage *e = page_of(z, q);
    e->state = PAGE_ALLOC;
    e->order = 0;
    e->mt = head->mt;
  }
}

uint64_t buddy_host_bytes(const BuddyZone *z)
{
  uint64_t bytes = sizeof(*z) + (z->max_order + 1) * N_MIGRATETYPES * sizeof(FreeList);
  for (unsigned i = 0; i < (z->max_order + 1) * N_MIGRATETYPES; i++)
    bytes += z->lists[i].cap * sizeof(uint64_t);
  bytes += z->dir_cap * sizeof(BuddyChunk *);
  bytes += z->n_chunks * z->chunk_bytes;
  return bytes;
}

void buddy_draw(const BuddyZone *z, GString *out)
{
  for (unsigned o = 0; o <= z->max_order; o++) {
    g_string_append_printf(out, "order %2u:", o);
    for (MigrateType mt = 0; mt < N_MIGRATETYPES; mt++) {
      const FreeList *l = list_of(z, o, mt);
      if (!l->len)
        continue;
      g_string_append_printf(out, " %s[", migratetype_names[mt]);
      for (uint32_t i = 0; i < l->len && i < BUDDY_DRAW_LIMIT; i++)
        g_string_append_printf(out, "%s%#" G_GINT64_MODIFIER "x", i ? " " : "", l->pfn[i]);
      if (l->len > BUDDY_DRAW_LIMIT)
        g_string_append_printf(out, " ... %u in all", l->len);
      g_string_append_c(out, ']');
    }
    if (o == z->max_order && frontier_blocks(z))
      g_string_append_printf(out, " frontier[%#" G_GINT64_MODIFIER "x.. %" G_GUINT64_FORMAT " blocks]",
                             z->frontier_pfn, frontier_blocks(z));
    g_string_append_c(out, '\n');
  }
}

/* ---- invariants ---------------------------------------------------------- */

#define CHECK(cond, ...)                              \
  do {                                                \
    if (!(cond)) {                                    \
      g_string_append_printf(why, __VA_ARGS__);       \
      g_string_append_c(why, '\n');                   \
      return FALSE;                                   \
    }                                                 \
  } while (0)

#define PFN "%#" G_GINT64_MODIFIER "x"

/* Every list entry is the head of a free block of that order and type, at
 * the position it claims, and the counters match the lists. */
static gboolean check_lists(const BuddyZone *z, GString *why, uint64_t *n_listed)
{
  uint64_t pages = 0;
  *n_listed = 0;
  for (unsigned o = 0; o <= z->max_order; o++) {
    for (MigrateType mt = 0; mt < N_MIGRATETYPES; mt++) {
      const FreeList *l = list_of(z, o, mt);
      for (uint32_t i = 0; i < l->len; i++) {
        uint64_t pfn = l->pfn[i];
        CHECK(in_zone(z, pfn) && pfn + block_pages(o) <= z->end_pfn,
              "free list %u/%s: block " PFN " lies outside the zone", o, migratetype_names[mt], pfn);
        CHECK((pfn & (block_pages(o) - 1)) == 0, "free list %u/%s: block " PFN " is not aligned to its order", o,
              migratetype_names[mt], pfn);
        const BuddyPage *e = page_of(z, pfn);
        CHECK(e != NULL, "free list %u/%s: block " PFN " is in the frontier", o, migratetype_names[mt], pfn);
        CHECK(e->state == PAGE_FREE && e->order == o && e->mt == mt && e->pos == i,
              "free list %u/%s: entry %u (" PFN ") is marked state %u order %u type %u pos %u", o,
              migratetype_names[mt], i, pfn, e->state, e->order, e->mt, e->pos);
        pages += block_pages(o);
      }
      *n_listed += l->len;
    }
  }
  CHECK(pages == z->free_pages, "free lists hold %" G_GUINT64_FORMAT " pages, counter says %" G_GUINT64_FORMAT,
        pages, z->free_pages);
  return TRUE;
}

/* A free block sits on its pageblock's list and has no free buddy it should
 * have merged with. */
static gboolean check_free_block(const BuddyZone *z, GString *why, uint64_t pfn, const BuddyPage *e)
{
  unsigned o = e->order;
  uint64_t pb_step = block_pages(z->pageblock_order);
  for (uint64_t p = pfn; p < pfn + block_pages(o); p += pb_step)
    CHECK(pageblock_mt(z, p) == e->mt, "free block " PFN " order %u is on the %s list but pageblock " PFN " is %s",
          pfn, o, migratetype_names[e->mt], p, migratetype_names[pageblock_mt(z, p)]);
  if (o == z->max_order)
    return TRUE;
  uint64_t buddy = pfn ^ block_pages(o);
  if (!in_zone(z, buddy))
    return TRUE;
  const BuddyPage *b = page_of(z, buddy);
  gboolean mergeable = b->mt == e->mt || (mt_mergeable(b->mt) && mt_mergeable(e->mt));
  CHECK(!(b->state == PAGE_FREE && b->order == o && mergeable),
        "free blocks " PFN " and " PFN " are buddies of order %u and should have merged", pfn, buddy, o);
  return TRUE;
}

/* Tile one materialised chunk with blocks: every in-zone pfn belongs to
 * exactly one block, whose head alone is marked. */
static gboolean check_chunk(const BuddyZone *z, GString *why, uint64_t c, uint64_t *n_free, uint64_t *n_alloc_pages)
{
  uint64_t bsize = block_pages(z->max_order);
  uint64_t cbase = z->base_pfn + c * bsize;
  uint64_t from = MAX(cbase, z->start_pfn), to = MIN(cbase + bsize, z->end_pfn);
  for (uint64_t p = cbase; p < from; p++)
    CHECK(page_of(z, p)->state == PAGE_NONE, "pfn " PFN " before the zone is marked", p);
  for (uint64_t p = to; p < cbase + bsize; p++)
    CHECK(page_of(z, p)->state == PAGE_NONE, "pfn " PFN " after the zone is marked", p);
  for (uint64_t p = from; p < to;) {
    const BuddyPage *e = page_of(z, p);
    CHECK(e->state != PAGE_NONE, "pfn " PFN " belongs to no block", p);
    unsigned o = e->order;
    CHECK(o <= z->max_order && (p & (block_pages(o) - 1)) == 0 && p + block_pages(o) <= to,
          "block " PFN " order %u is misaligned or crosses the zone end", p, o);
    for (uint64_t q = p + 1; q < p + block_pages(o); q++)
      CHECK(page_of(z, q)->state == PAGE_NONE, "pfn " PFN " inside block " PFN " order %u is marked as a head", q,
            p, o);
    if (e->state == PAGE_FREE) {
      if (!check_free_block(z, why, p, e))
        return FALSE;
      (*n_free)++;
    } else {
      *n_alloc_pages += block_pages(o);
    }
    p += block_pages(o);
  }
  return TRUE;
}

gboolean buddy_check(const BuddyZone *z, GString *why)
{
  uint64_t bsize = block_pages(z->max_order);
  CHECK((z->frontier_pfn & (bsize - 1)) == 0 && (z->frontier_end_pfn & (bsize - 1)) == 0 &&
            z->frontier_pfn <= z->frontier_end_pfn,
        "frontier [" PFN ", " PFN ") is not a run of max-order blocks", z->frontier_pfn, z->frontier_end_pfn);
  CHECK(z->dir_len == (z->frontier_pfn - z->base_pfn) >> z->max_order,
        "%" G_GUINT64_FORMAT " chunks materialised below the frontier at " PFN, z->dir_len, z->frontier_pfn);
  CHECK(z->n_chunks == z->dir_len + (z->tail != NULL), "chunk count %" G_GUINT64_FORMAT " is off", z->n_chunks);

  uint64_t n_listed;
  if (!check_lists(z, why, &n_listed))
    return FALSE;

  uint64_t n_free = 0, n_alloc_pages = 0;
  for (uint64_t c = 0; c < z->dir_len; c++)
    if (!check_chunk(z, why, c, &n_free, &n_alloc_pages))
      return FALSE;
  if (z->tail && !check_chunk(z, why, z->tail_index, &n_free, &n_alloc_pages))
    return FALSE;

  CHECK(n_free == n_listed, "%" G_GUINT64_FORMAT " free heads but %" G_GUINT64_FORMAT " list entries", n_free,
        n_listed);
  CHECK(n_alloc_pages == z->alloc_pages, "allocated blocks cover %" G_GUINT64_FORMAT " pages, counter says %" G_GUINT64_FORMAT,
        n_alloc_pages, z->alloc_pages);
  uint64_t frontier_pages = z->frontier_end_pfn - z->frontier_pfn;
  CHECK(z->free_pages + z->alloc_pages + frontier_pages == buddy_managed_pages(z),
        "free %" G_GUINT64_FORMAT " + allocated %" G_GUINT64_FORMAT " + frontier %" G_GUINT64_FORMAT
        " pages != %" G_GUINT64_FORMAT " managed",
        z->free_pages, z->alloc_pages, frontier_pages, buddy_managed_pages(z));
  return TRUE;
}
