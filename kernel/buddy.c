/* SPDX-License-Identifier: GPL-2.0-or-later */
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
 * Besides: taking one given free page (buddy_take, for the background pages
 * of the fragmentation model), splitting the free block around it and
 * claiming a free pageblock for an unmovable page; and the read-only view of
 * a pageblock that compaction's scanners need (buddy_pageblock).
 * Leaves out: per-CPU lists, watermarks and their boosting, the highatomic
 * reserve, CMA and page isolation (those types exist but no pageblock ever
 * becomes one, so allocations of them fail), shuffling, page reporting, and
 * the head-or-tail choice when a block is queued (lists are LIFO here).
 *
 * Host memory.  The zone is cut into "chunks", its max-order blocks (aligned
 * in absolute pfns, so the first and last may be partial).  A full chunk no
 * operation has reached yet is implicit: a free max-order MOVABLE block
 * ("clean"), or that block split around the background pages buddy_take
 * placed in it ("dirty"; kernel/physmem.c places them for its fragmentation
 * model), which a sorted array of those pages describes.  The full chunks
 * start implicit and form the frontier [frontier_pfn, frontier_end_pfn).  A
 * chunk is materialised when a request needs a block only it holds (the
 * lowest clean chunk for a max-order MOVABLE block; the lowest dirty chunk
 * with a free block of the wanted order and type otherwise) or when an
 * operation names one of its pfns.  The materialised chunks are the head
 * chunk, a contiguous run behind it (dir[]; frontier_pfn is where the run
 * ends), the tail chunk, and a hash table of chunks materialised out of order
 * above the run.  The free blocks inside implicit chunks are counted per
 * order and type, so /proc/buddyinfo, the fragmentation index and the
 * allocator see them as the kernel sees free blocks.  A materialised page
 * costs 8 host bytes (BuddyPage), each of its pageblocks 1 byte, each free
 * block an 8-byte slot in a list array (at most twice that while the array
 * has room to grow), and a background page of an implicit chunk 8 bytes;
 * memory grows with the chunks ever touched, never with the zone size.
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
  PAGE_TAKEN, /* an order-0 page buddy_take placed (a background page) */
} PageState;

/* Bookkeeping of one pfn; only block heads carry information. */
typedef struct {
  uint32_t pos;   /* PAGE_FREE: index in its free list */
  uint8_t state;  /* PageState */
  uint8_t order;  /* order of the block this pfn heads */
  uint8_t mt;     /* PAGE_FREE: list it is on; PAGE_ALLOC, PAGE_TAKEN: type requested */
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
  uint64_t n_chunks;       /* materialised: dir, tail and sparse */

  /* The frontier: the full chunks [frontier_pfn, frontier_end_pfn), each
   * implicit or in `sparse`.  Invariant: dir_len chunks lie below
   * frontier_pfn, i.e. dir_len == (frontier_pfn - base_pfn) >> max_order,
   * and the chunk at frontier_pfn is never in `sparse`. */
  uint64_t frontier_pfn, frontier_end_pfn;
  GHashTable *sparse;      /* chunk index -> BuddyChunk * materialised inside the frontier; NULL if none */
  uint64_t n_clean;        /* implicit chunks without background pages (free max-order MOVABLE blocks) */
  uint64_t n_dirty;        /* implicit chunks with background pages */
  uint64_t clean_cursor;   /* chunk index: no clean implicit chunk lies below it */

  /* Background pages placed in implicit chunks: pfn << PIN_MT_BITS | type,
   * ascending.  An entry is live while its chunk is implicit; materialising
   * the chunk applies and retires its entries. */
  uint64_t *pins;
  uint64_t n_pins, pins_cap;
  /* Inside dirty implicit chunks, [order * N_MIGRATETYPES + mt]: free blocks,
   * and the first pins[] index whose chunk may hold such a block (no live
   * chunk of an earlier entry does).  NULL until the first pin. */
  uint64_t *imp_blocks, *imp_cursor;
  uint64_t imp_free_pages;  /* free pages inside dirty implicit chunks */
  uint64_t imp_taken_pages; /* live pins */

  FreeList *lists;         /* [order * N_MIGRATETYPES + mt] */
  uint64_t free_pages;     /* pages on the free lists (implicit chunks excluded) */
  uint64_t alloc_pages;    /* pages handed out or taken in materialised chunks, not freed */
  uint64_t n_taken;        /* of those, PAGE_TAKEN pages */
};

/* Bits of a pins[] entry that hold the MigrateType. */
#define PIN_MT_BITS 3

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

static inline gpointer chunk_key(uint64_t c)
{
  return GSIZE_TO_POINTER((gsize)c);
}

/* NULL while pfn's chunk is implicit. */
static inline BuddyChunk *chunk_of(const BuddyZone *z, uint64_t pfn)
{
  uint64_t c = chunk_index(z, pfn);
  if (c < z->dir_len)
    return z->dir[c];
  if (z->tail && c == z->tail_index)
    return z->tail;
  if (z->sparse)
    return g_hash_table_lookup(z->sparse, chunk_key(c));
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

static MigrateType implicit_pageblock_mt(const BuddyZone *z, uint64_t pfn);

static MigrateType pageblock_mt(const BuddyZone *z, uint64_t pfn)
{
  BuddyChunk *ch = chunk_of(z, pfn);
  if (!ch)
    return implicit_pageblock_mt(z, pfn);
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

static inline void list_add(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt)
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
static inline void list_del(BuddyZone *z, uint64_t pfn)
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

/* ---- implicit chunks ----------------------------------------------------- */

static inline uint64_t chunk_base(const BuddyZone *z, uint64_t c)
{
  return z->base_pfn + (c << z->max_order);
}

static inline uint64_t pin_pfn(uint64_t pin)
{
  return pin >> PIN_MT_BITS;
}

static inline MigrateType pin_mt(uint64_t pin)
{
  return (MigrateType)(pin & ((1u << PIN_MT_BITS) - 1));
}

/* The type a pageblock gets from its first background page: buddy_take of
 * an unmovable or reclaimable page claims the free pageblock it lands in. */
static inline MigrateType claim_type(MigrateType mt)
{
  return mt == MT_MOVABLE ? MT_MOVABLE : mt;
}

/* A full chunk that is neither in dir[] nor in `sparse`. */
static gboolean chunk_is_implicit(const BuddyZone *z, uint64_t c)
{
  uint64_t pfn = chunk_base(z, c);
  if (pfn < z->frontier_pfn || pfn >= z->frontier_end_pfn)
    return FALSE;
  return !(z->sparse && g_hash_table_contains(z->sparse, chunk_key(c)));
}

/* First pins[] index whose pfn is >= pfn. */
static uint64_t pins_lower_bound(const BuddyZone *z, uint64_t pfn)
{
  uint64_t lo = 0, hi = z->n_pins;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (pin_pfn(z->pins[mid]) < pfn)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* pins[*i .. *j) lie in [from, to). */
static void pins_range(const BuddyZone *z, uint64_t from, uint64_t to, uint64_t *i, uint64_t *j)
{
  *i = pins_lower_bound(z, from);
  *j = pins_lower_bound(z, to);
}

static gboolean pins_contain(const BuddyZone *z, uint64_t pfn)
{
  uint64_t i = pins_lower_bound(z, pfn);
  return i < z->n_pins && pin_pfn(z->pins[i]) == pfn;
}

static MigrateType implicit_pageblock_mt(const BuddyZone *z, uint64_t pfn)
{
  uint64_t pb = pfn & ~(block_pages(z->pageblock_order) - 1);
  uint64_t i, j;
  pins_range(z, pb, pb + block_pages(z->pageblock_order), &i, &j);
  return i < j ? claim_type(pin_mt(z->pins[i])) : MT_MOVABLE;
}

/* What an implicit chunk holds, block by block in address order: a free
 * block (taken FALSE) or one background page (taken TRUE, order 0). */
typedef void (*ImplicitVisit)(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt, gboolean taken,
                              gpointer data);

/* The block (pfn, order) with the background pages pins[i .. j) in it, cut
 * as the buddy allocator leaves it: a block without pages is one free block;
 * otherwise its halves, recursively.  Free blocks below pageblock size take
 * their pageblock's type (pb_mt); larger ones are MOVABLE, as no page ever
 * claimed them.  Worked example, max order 3, pageblock order 2, one page at
 * 5: free 0 (order 2, MOVABLE), 4 (order 0), 6 (order 1), page 5. */
static void implicit_walk(BuddyZone *z, uint64_t pfn, unsigned order, uint64_t i, uint64_t j, MigrateType pb_mt,
                          ImplicitVisit visit, gpointer data)
{
  if (i == j) {
    visit(z, pfn, order, order >= z->pageblock_order ? MT_MOVABLE : pb_mt, FALSE, data);
    return;
  }
  if (order == 0) {
    g_assert(j == i + 1);
    visit(z, pfn, 0, pin_mt(z->pins[i]), TRUE, data);
    return;
  }
  if (order == z->pageblock_order)
    pb_mt = claim_type(pin_mt(z->pins[i]));
  uint64_t mid = pfn + block_pages(order - 1);
  uint64_t k = i;
  while (k < j && pin_pfn(z->pins[k]) < mid)
    k++;
  implicit_walk(z, pfn, order - 1, i, k, pb_mt, visit, data);
  implicit_walk(z, mid, order - 1, k, j, pb_mt, visit, data);
}

/* Walk the whole of implicit chunk c, whose live pins are pins[i .. j). */
static void implicit_walk_chunk(BuddyZone *z, uint64_t c, uint64_t i, uint64_t j, ImplicitVisit visit, gpointer data)
{
  implicit_walk(z, chunk_base(z, c), z->max_order, i, j, MT_MOVABLE, visit, data);
}

static void visit_account(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt, gboolean taken, gpointer data)
{
  (void)pfn;
  int64_t sign = *(const int64_t *)data;
  if (taken) {
    z->imp_taken_pages += (uint64_t)sign;
    return;
  }
  z->imp_blocks[order * N_MIGRATETYPES + mt] += (uint64_t)sign;
  z->imp_free_pages += (uint64_t)sign * block_pages(order);
}

/* Add (sign +1) or remove (-1) a dirty chunk's blocks in the counts. */
static void implicit_account(BuddyZone *z, uint64_t c, uint64_t i, uint64_t j, int64_t sign)
{
  implicit_walk_chunk(z, c, i, j, visit_account, &sign);
}

typedef struct {
  unsigned order;
  MigrateType mt;
  gboolean found;
} HasBlock;

static void visit_has(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt, gboolean taken, gpointer data)
{
  (void)z;
  (void)pfn;
  HasBlock *h = data;
  if (!taken && order == h->order && mt == h->mt)
    h->found = TRUE;
}

static void dir_append(BuddyZone *z, BuddyChunk *ch)
{
  if (z->dir_len == z->dir_cap) {
    z->dir_cap = z->dir_cap ? z->dir_cap * 2 : 4;
    z->dir = g_renew(BuddyChunk *, z->dir, z->dir_cap);
  }
  z->dir[z->dir_len++] = ch;
  z->frontier_pfn += block_pages(z->max_order);
}

static gboolean take_page(BuddyZone *z, uint64_t pfn, MigrateType mt);

/* Materialise implicit chunk c: a free max-order block, then its background
 * pages taken in the order they were placed.  The chunk joins dir[] when it
 * is the next of the run (with any chunks of `sparse` that then follow),
 * `sparse` otherwise. */
static void chunk_materialise(BuddyZone *z, uint64_t c)
{
  g_assert(chunk_is_implicit(z, c));
  uint64_t cbase = chunk_base(z, c);
  uint64_t i, j;
  pins_range(z, cbase, cbase + block_pages(z->max_order), &i, &j);
  if (i < j) {
    implicit_account(z, c, i, j, -1);
    z->n_dirty--;
  } else {
    z->n_clean--;
  }
  BuddyChunk *ch = chunk_new(z);
  if (cbase == z->frontier_pfn) {
    dir_append(z, ch);
    BuddyChunk *next;
    while (z->sparse && (next = g_hash_table_lookup(z->sparse, chunk_key(z->dir_len)))) {
      g_hash_table_steal(z->sparse, chunk_key(z->dir_len));
      dir_append(z, next);
    }
  } else {
    if (!z->sparse)
      z->sparse = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_hash_table_insert(z->sparse, chunk_key(c), ch);
  }
  list_add(z, cbase, z->max_order, MT_MOVABLE);
  for (uint64_t k = i; k < j; k++) {
    gboolean ok = take_page(z, pin_pfn(z->pins[k]), pin_mt(z->pins[k]));
    g_assert(ok);
  }
}

/* The free area (order, mt): its list, the clean implicit chunks for the
 * max-order MOVABLE area, and the blocks inside dirty implicit chunks. */
static inline gboolean area_empty(const BuddyZone *z, unsigned order, MigrateType mt)
{
  if (list_of(z, order, mt)->len)
    return FALSE;
  if (order == z->max_order && mt == MT_MOVABLE && z->n_clean)
    return FALSE;
  return !(z->imp_blocks && z->imp_blocks[order * N_MIGRATETYPES + mt]);
}

/* Put a block of (order, mt) on its empty list by materialising the chunk
 * that holds one: the lowest clean chunk for a max-order MOVABLE block, else
 * the lowest dirty chunk with such a block. */
static void area_fill(BuddyZone *z, unsigned order, MigrateType mt)
{
  if (order == z->max_order && mt == MT_MOVABLE && z->n_clean) {
    uint64_t c = MAX(z->clean_cursor, chunk_index(z, z->frontier_pfn));
    uint64_t i, j;
    for (;; c++) {
      if (!chunk_is_implicit(z, c))
        continue;
      pins_range(z, chunk_base(z, c), chunk_base(z, c + 1), &i, &j);
      if (i == j)
        break;
    }
    z->clean_cursor = c + 1;
    chunk_materialise(z, c);
    return;
  }
  uint64_t *cursor = &z->imp_cursor[order * N_MIGRATETYPES + mt];
  for (uint64_t i = *cursor; i < z->n_pins;) {
    uint64_t c = chunk_index(z, pin_pfn(z->pins[i]));
    uint64_t j = i + 1;
    while (j < z->n_pins && chunk_index(z, pin_pfn(z->pins[j])) == c)
      j++;
    if (chunk_is_implicit(z, c)) {
      HasBlock h = { order, mt, FALSE };
      implicit_walk_chunk(z, c, i, j, visit_has, &h);
      if (h.found) {
        *cursor = j;
        chunk_materialise(z, c);
        return;
      }
    }
    i = j;
  }
  g_assert_not_reached();
}

/* The most recently freed block of a non-empty area, left on its list. */
static uint64_t area_peek(BuddyZone *z, unsigned order, MigrateType mt)
{
  FreeList *l = list_of(z, order, mt);
  if (!l->len)
    area_fill(z, order, mt);
  return l->pfn[l->len - 1];
}

/* Remove one block from a non-empty area, the most recently freed first,
 * implicit chunks last.  Its head is left PAGE_NONE for the caller to set. */
static uint64_t area_take(BuddyZone *z, unsigned order, MigrateType mt)
{
  uint64_t pfn = area_peek(z, order, mt);
  list_del(z, pfn);
  return pfn;
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
    if (claim_pageblock(z, area_peek(z, (unsigned)o, block_mt), order, start, block_mt, pfn))
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
  z->n_clean = (z->frontier_end_pfn - z->frontier_pfn) >> max_order;
  z->clean_cursor = chunk_index(z, first_full);

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
  if (z->sparse) {
    GHashTableIter it;
    gpointer key, ch;
    g_hash_table_iter_init(&it, z->sparse);
    while (g_hash_table_iter_next(&it, &key, &ch))
      g_free(ch);
    g_hash_table_destroy(z->sparse);
  }
  g_free(z->pins);
  g_free(z->imp_blocks);
  g_free(z->imp_cursor);
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
    n += z->n_clean;
  if (z->imp_blocks)
    n += z->imp_blocks[order * N_MIGRATETYPES + mt];
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
  return z->free_pages + (z->n_clean << z->max_order) + z->imp_free_pages;
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
  if (!chunk_of(z, pfn))
    return !pins_contain(z, pfn); /* implicit */
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
  /* A block nobody has asked for yet exists only as counts: give it its
   * pages first, as boot would have. */
  if (!chunk_of(z, pfn))
    chunk_materialise(z, chunk_index(z, pfn));
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
  /* GHashTable: a key, a value and a hash per slot, at most half empty. */
  if (z->sparse)
    bytes += 2 * g_hash_table_size(z->sparse) * (2 * sizeof(gpointer) + sizeof(guint));
  bytes += z->pins_cap * sizeof(uint64_t);
  if (z->imp_blocks)
    bytes += 2 * (z->max_order + 1) * N_MIGRATETYPES * sizeof(uint64_t);
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
    if (o == z->max_order && z->n_clean)
      g_string_append_printf(out, " frontier[%#" G_GINT64_MODIFIER "x.. %" G_GUINT64_FORMAT " blocks]",
                             z->frontier_pfn, z->n_clean);
    g_string_append_c(out, '\n');
  }
  if (z->n_dirty) {
    g_string_append_printf(out, "implicit: %" G_GUINT64_FORMAT " chunks hold %" G_GUINT64_FORMAT
                           " background pages and free blocks of orders",
                           z->n_dirty, z->imp_taken_pages);
    for (unsigned o = 0; o <= z->max_order; o++) {
      uint64_t n = 0;
      for (MigrateType mt = 0; mt < N_MIGRATETYPES; mt++)
        n += z->imp_blocks[o * N_MIGRATETYPES + mt];
      g_string_append_printf(out, " %" G_GUINT64_FORMAT, n);
    }
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

/* Recounts of the implicit chunks, for buddy_check. */
typedef struct {
  uint64_t *blocks;  /* [order * N_MIGRATETYPES + mt] */
  uint64_t free_pages, taken_pages;
  uint64_t first_pin; /* pins[] index of the chunk being walked */
  const uint64_t *cursor;
  gboolean cursor_ok;
} ImplicitCount;

static void visit_count(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt, gboolean taken, gpointer data)
{
  (void)z;
  (void)pfn;
  ImplicitCount *n = data;
  if (taken) {
    n->taken_pages++;
    return;
  }
  n->blocks[order * N_MIGRATETYPES + mt]++;
  n->free_pages += block_pages(order);
  if (n->cursor[order * N_MIGRATETYPES + mt] > n->first_pin)
    n->cursor_ok = FALSE;
}

/* Implicit chunks: background pages ascending and inside the frontier, the
 * counts of clean and dirty chunks and of their free blocks, and the
 * cursors that skip chunks when looking for a block. */
static gboolean check_implicit(const BuddyZone *z, GString *why)
{
  for (uint64_t k = 0; k < z->n_pins; k++) {
    uint64_t pfn = pin_pfn(z->pins[k]);
    CHECK(pfn < z->frontier_end_pfn, "background page " PFN " was placed after the frontier", pfn);
    CHECK(k == 0 || pin_pfn(z->pins[k - 1]) < pfn, "background page " PFN " is out of order", pfn);
    CHECK(in_zone(z, pfn) && pin_mt(z->pins[k]) < N_FALLBACK_TYPES, "background page " PFN " is outside the zone or of type %u",
          pfn, pin_mt(z->pins[k]));
  }
  unsigned n_areas = (z->max_order + 1) * N_MIGRATETYPES;
  g_autofree uint64_t *blocks = g_new0(uint64_t, n_areas);
  g_autofree uint64_t *no_cursor = g_new0(uint64_t, n_areas);
  ImplicitCount n = { blocks, 0, 0, 0, z->imp_cursor ? z->imp_cursor : no_cursor, TRUE };
  uint64_t clean = 0, dirty = 0;
  for (uint64_t c = chunk_index(z, z->frontier_pfn); chunk_base(z, c) < z->frontier_end_pfn; c++) {
    if (!chunk_is_implicit(z, c))
      continue;
    uint64_t i, j;
    pins_range(z, chunk_base(z, c), chunk_base(z, c + 1), &i, &j);
    if (i == j) {
      CHECK(c >= z->clean_cursor, "clean chunk " PFN " lies below the clean cursor", chunk_base(z, c));
      clean++;
      continue;
    }
    dirty++;
    n.first_pin = i;
    implicit_walk_chunk((BuddyZone *)z, c, i, j, visit_count, &n);
    CHECK(n.cursor_ok, "a search cursor has passed chunk " PFN ", which holds a block it looks for", chunk_base(z, c));
  }
  CHECK(clean == z->n_clean && dirty == z->n_dirty,
        "%" G_GUINT64_FORMAT " clean and %" G_GUINT64_FORMAT " dirty implicit chunks, counters say %" G_GUINT64_FORMAT
        " and %" G_GUINT64_FORMAT, clean, dirty, z->n_clean, z->n_dirty);
  CHECK(n.free_pages == z->imp_free_pages && n.taken_pages == z->imp_taken_pages,
        "implicit chunks hold %" G_GUINT64_FORMAT " free and %" G_GUINT64_FORMAT " background pages, counters say %"
        G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT, n.free_pages, n.taken_pages, z->imp_free_pages, z->imp_taken_pages);
  for (unsigned a = 0; a < n_areas; a++)
    CHECK(blocks[a] == (z->imp_blocks ? z->imp_blocks[a] : 0),
          "implicit chunks hold %" G_GUINT64_FORMAT " free blocks of order %u %s, counter says %" G_GUINT64_FORMAT,
          blocks[a], a / N_MIGRATETYPES, migratetype_names[a % N_MIGRATETYPES], z->imp_blocks ? z->imp_blocks[a] : 0);
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
  uint64_t n_sparse = z->sparse ? g_hash_table_size(z->sparse) : 0;
  CHECK(z->n_chunks == z->dir_len + (z->tail != NULL) + n_sparse, "chunk count %" G_GUINT64_FORMAT " is off",
        z->n_chunks);

  uint64_t n_listed;
  if (!check_lists(z, why, &n_listed))
    return FALSE;

  uint64_t n_free = 0, n_alloc_pages = 0;
  for (uint64_t c = 0; c < z->dir_len; c++)
    if (!check_chunk(z, why, c, &n_free, &n_alloc_pages))
      return FALSE;
  if (z->tail && !check_chunk(z, why, z->tail_index, &n_free, &n_alloc_pages))
    return FALSE;
  if (z->sparse) {
    GHashTableIter it;
    gpointer key, ch;
    g_hash_table_iter_init(&it, z->sparse);
    while (g_hash_table_iter_next(&it, &key, &ch)) {
      uint64_t c = GPOINTER_TO_SIZE(key);
      CHECK(chunk_base(z, c) > z->frontier_pfn && chunk_base(z, c) < z->frontier_end_pfn,
            "chunk " PFN " is materialised out of order but lies outside (frontier, end)", chunk_base(z, c));
      if (!check_chunk(z, why, c, &n_free, &n_alloc_pages))
        return FALSE;
    }
  }
  if (!check_implicit(z, why))
    return FALSE;

  CHECK(n_free == n_listed, "%" G_GUINT64_FORMAT " free heads but %" G_GUINT64_FORMAT " list entries", n_free,
        n_listed);
  CHECK(n_alloc_pages == z->alloc_pages, "allocated blocks cover %" G_GUINT64_FORMAT " pages, counter says %" G_GUINT64_FORMAT,
        n_alloc_pages, z->alloc_pages);
  uint64_t implicit_pages = (z->n_clean << z->max_order) + z->imp_free_pages + z->imp_taken_pages;
  CHECK(z->free_pages + z->alloc_pages + implicit_pages == buddy_managed_pages(z),
        "free %" G_GUINT64_FORMAT " + allocated %" G_GUINT64_FORMAT " + implicit %" G_GUINT64_FORMAT
        " pages != %" G_GUINT64_FORMAT " managed",
        z->free_pages, z->alloc_pages, implicit_pages, buddy_managed_pages(z));
  return TRUE;
}

/* ---- background pages, and what compaction reads and moves ---------------- */

/* The block holding pfn in a materialised chunk: its head entry, pfn and
 * order (the first head at or below pfn whose block reaches pfn). */
static BuddyPage *block_containing(const BuddyZone *z, uint64_t pfn, uint64_t *head, unsigned *order)
{
  for (unsigned o = 0; o <= z->max_order; o++) {
    uint64_t h = pfn & ~(block_pages(o) - 1);
    BuddyPage *e = page_of(z, h);
    if (e->state != PAGE_NONE && e->order >= o) {
      *head = h;
      *order = e->order;
      return e;
    }
  }
  return NULL;
}

/* Take the free page pfn of a materialised chunk as an order-0 page of type
 * mt: split the free block holding it towards pfn, the halves without pfn
 * staying free one order lower each time.  A page landing in a wholly free
 * pageblock of another type claims the pageblock for its own, as the
 * kernel's fallback does for an unmovable request (try_to_claim_block);
 * inside a partly used pageblock it is a steal and the type stays. */
static gboolean take_page(BuddyZone *z, uint64_t pfn, MigrateType mt)
{
  uint64_t head;
  unsigned o;
  BuddyPage *e = block_containing(z, pfn, &head, &o);
  if (!e || e->state != PAGE_FREE)
    return FALSE;
  MigrateType block_mt = e->mt;
  gboolean claim = o >= z->pageblock_order && claim_type(mt) != block_mt;
  MigrateType inner = claim ? claim_type(mt) : block_mt; /* pfn's pageblock from now on */
  list_del(z, head);
  while (o > 0) {
    o--;
    uint64_t other = (pfn & ~(block_pages(o) - 1)) ^ block_pages(o);
    list_add(z, other, o, o >= z->pageblock_order ? block_mt : inner);
  }
  if (claim)
    set_pageblock_range(z, pfn, 0, inner);
  BuddyPage *p = page_of(z, pfn);
  p->state = PAGE_TAKEN;
  p->order = 0;
  p->mt = (uint8_t)mt;
  z->alloc_pages++;
  z->n_taken++;
  return TRUE;
}

/* The order of the largest aligned block around pfn, inside its chunk, that
 * holds no background page, knowing the block of `order` holds none. */
static unsigned implicit_free_order(const BuddyZone *z, uint64_t pfn, unsigned order)
{
  while (order < z->max_order) {
    uint64_t b = pfn & ~(block_pages(order + 1) - 1);
    uint64_t i, j;
    pins_range(z, b, b + block_pages(order + 1), &i, &j);
    if (i < j)
      break;
    order++;
  }
  return order;
}

/* Place a background page in implicit chunk c above every other one: the
 * free block around it splits as take_page would split it, and the counts
 * change by that split only (O(max_order) binary searches). */
static void pin_add(BuddyZone *z, uint64_t pfn, MigrateType mt)
{
  unsigned n_areas = (z->max_order + 1) * N_MIGRATETYPES;
  if (!z->imp_blocks) {
    z->imp_blocks = g_new0(uint64_t, n_areas);
    z->imp_cursor = g_new0(uint64_t, n_areas);
  }
  uint64_t c = chunk_index(z, pfn);
  uint64_t i, j;
  pins_range(z, chunk_base(z, c), chunk_base(z, c + 1), &i, &j);
  unsigned of = implicit_free_order(z, pfn, 0);
  unsigned pb = z->pageblock_order;
  MigrateType pb_mt = implicit_pageblock_mt(z, pfn);
  if (i == j) {
    z->n_clean--;
    z->n_dirty++;
  } else {
    z->imp_blocks[of * N_MIGRATETYPES + (of >= pb ? MT_MOVABLE : pb_mt)]--;
    z->imp_free_pages -= block_pages(of);
  }
  MigrateType inner = of >= pb ? claim_type(mt) : pb_mt;
  for (unsigned o = of; o-- > 0;) {
    z->imp_blocks[o * N_MIGRATETYPES + (o >= pb ? MT_MOVABLE : inner)]++;
    z->imp_free_pages += block_pages(o);
  }
  z->imp_taken_pages++;
  if (z->n_pins == z->pins_cap) {
    z->pins_cap = z->pins_cap ? 2 * z->pins_cap : 64;
    z->pins = g_renew(uint64_t, z->pins, z->pins_cap);
  }
  z->pins[z->n_pins++] = pfn << PIN_MT_BITS | (uint64_t)mt;
  for (unsigned a = 0; a < n_areas; a++)
    z->imp_cursor[a] = MIN(z->imp_cursor[a], i);
}

gboolean buddy_take(BuddyZone *z, uint64_t pfn, MigrateType mt)
{
  g_return_val_if_fail(z != NULL && mt < N_FALLBACK_TYPES, FALSE);
  if (!in_zone(z, pfn))
    return FALSE;
  if (!chunk_of(z, pfn)) {
    /* Above every background page so far: stay implicit. */
    if (!z->n_pins || pfn > pin_pfn(z->pins[z->n_pins - 1])) {
      pin_add(z, pfn, mt);
      return TRUE;
    }
    if (pins_contain(z, pfn))
      return FALSE;
    chunk_materialise(z, chunk_index(z, pfn));
  }
  return take_page(z, pfn, mt);
}

gboolean buddy_release(BuddyZone *z, uint64_t pfn)
{
  g_return_val_if_fail(z != NULL, FALSE);
  if (!in_zone(z, pfn))
    return FALSE;
  if (!chunk_of(z, pfn)) {
    if (!pins_contain(z, pfn))
      return FALSE;
    chunk_materialise(z, chunk_index(z, pfn));
  }
  BuddyPage *p = page_of(z, pfn);
  if (p->state != PAGE_TAKEN)
    return FALSE;
  p->state = PAGE_NONE;
  z->alloc_pages--;
  z->n_taken--;
  free_one(z, pfn, 0, pageblock_mt(z, pfn));
  return TRUE;
}

gboolean buddy_is_taken(const BuddyZone *z, uint64_t pfn, MigrateType *mt)
{
  g_return_val_if_fail(z != NULL, FALSE);
  if (!in_zone(z, pfn))
    return FALSE;
  if (!chunk_of(z, pfn)) {
    uint64_t i = pins_lower_bound(z, pfn);
    if (i == z->n_pins || pin_pfn(z->pins[i]) != pfn)
      return FALSE;
    if (mt)
      *mt = pin_mt(z->pins[i]);
    return TRUE;
  }
  const BuddyPage *p = page_of(z, pfn);
  if (p->state != PAGE_TAKEN)
    return FALSE;
  if (mt)
    *mt = (MigrateType)p->mt;
  return TRUE;
}

uint64_t buddy_taken_pages(const BuddyZone *z)
{
  g_return_val_if_fail(z != NULL, 0);
  return z->imp_taken_pages + z->n_taken;
}

/* One block met by the walk of a pageblock, in address order. */
static void pageblock_step(BuddyPageblock *pb, uint64_t pages, gboolean is_free, gboolean movable_taken)
{
  pb->steps++;
  if (is_free)
    pb->free_pages += pages;
  else if (movable_taken)
    pb->movable_taken++;
  else {
    if (!pb->fixed_pages)
      pb->steps_to_fixed = pb->steps;
    pb->fixed_pages += pages;
  }
}

static void visit_pageblock(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt, gboolean taken, gpointer data)
{
  (void)z;
  (void)pfn;
  pageblock_step(data, block_pages(order), !taken, taken && mt == MT_MOVABLE);
}

gboolean buddy_pageblock(const BuddyZone *z, uint64_t pfn, BuddyPageblock *pb)
{
  g_return_val_if_fail(z != NULL && pb != NULL, FALSE);
  uint64_t pb_pages = block_pages(z->pageblock_order);
  uint64_t start = pfn & ~(pb_pages - 1);
  if (start < z->start_pfn || start + pb_pages > z->end_pfn)
    return FALSE;
  *pb = (BuddyPageblock){ .mt = pageblock_mt(z, start), .free_order = -1 };
  if (!chunk_of(z, start)) {
    uint64_t i, j;
    pins_range(z, start, start + pb_pages, &i, &j);
    if (i == j) {
      pb->free_order = (int)implicit_free_order(z, start, z->pageblock_order);
      pageblock_step(pb, pb_pages, TRUE, FALSE);
    } else {
      implicit_walk((BuddyZone *)z, start, z->pageblock_order, i, j, MT_MOVABLE, visit_pageblock, pb);
    }
  } else {
    uint64_t head;
    unsigned o;
    const BuddyPage *e = block_containing(z, start, &head, &o);
    if (o >= z->pageblock_order) {
      /* One block covers the pageblock. */
      if (e->state == PAGE_FREE)
        pb->free_order = (int)o;
      pageblock_step(pb, pb_pages, e->state == PAGE_FREE, e->state == PAGE_TAKEN && e->mt == MT_MOVABLE);
    } else {
      /* Blocks below pageblock size tile it from its first pfn. */
      for (uint64_t p = start; p < start + pb_pages; p += block_pages(e->order)) {
        e = page_of(z, p);
        pageblock_step(pb, block_pages(e->order), e->state == PAGE_FREE,
                       e->state == PAGE_TAKEN && e->mt == MT_MOVABLE);
      }
    }
  }
  if (!pb->fixed_pages)
    pb->steps_to_fixed = pb->steps;
  return TRUE;
}

typedef struct {
  BuddyBlock *out;
  uint64_t n, max;
} BlockList;

static void block_list_add(BlockList *l, uint64_t pfn, unsigned order, BuddyBlockState state, MigrateType mt)
{
  if (l->n < l->max)
    l->out[l->n++] = (BuddyBlock){ pfn, (uint8_t)order, (uint8_t)state, (uint8_t)mt };
}

static void visit_block(BuddyZone *z, uint64_t pfn, unsigned order, MigrateType mt, gboolean taken, gpointer data)
{
  (void)z;
  block_list_add(data, pfn, order, taken ? BUDDY_BLOCK_TAKEN : BUDDY_BLOCK_FREE, mt);
}

uint64_t buddy_pageblock_blocks(const BuddyZone *z, uint64_t pfn, BuddyBlock *out, uint64_t max)
{
  g_return_val_if_fail(z != NULL && (out != NULL || max == 0), 0);
  uint64_t pb_pages = block_pages(z->pageblock_order);
  uint64_t start = pfn & ~(pb_pages - 1);
  if (start < z->start_pfn || start + pb_pages > z->end_pfn)
    return 0;
  BlockList l = { out, 0, max };
  if (!chunk_of(z, start)) {
    uint64_t i, j;
    pins_range(z, start, start + pb_pages, &i, &j);
    if (i == j)
      block_list_add(&l, start, z->pageblock_order, BUDDY_BLOCK_FREE, MT_MOVABLE);
    else
      implicit_walk((BuddyZone *)z, start, z->pageblock_order, i, j, MT_MOVABLE, visit_block, &l);
    return l.n;
  }
  static const BuddyBlockState of_state[] = { [PAGE_FREE] = BUDDY_BLOCK_FREE, [PAGE_ALLOC] = BUDDY_BLOCK_ALLOC,
                                              [PAGE_TAKEN] = BUDDY_BLOCK_TAKEN };
  uint64_t head;
  unsigned o;
  const BuddyPage *e = block_containing(z, start, &head, &o);
  if (o >= z->pageblock_order) {
    block_list_add(&l, head, o, of_state[e->state], (MigrateType)e->mt); /* one block covers it */
    return l.n;
  }
  /* Blocks below pageblock size tile it from its first pfn. */
  for (uint64_t p = start; p < start + pb_pages; p += block_pages(e->order)) {
    e = page_of(z, p);
    block_list_add(&l, p, e->order, of_state[e->state], (MigrateType)e->mt);
  }
  return l.n;
}

gboolean buddy_next_free(const BuddyZone *z, uint64_t from, uint64_t to, uint64_t *pfn)
{
  g_return_val_if_fail(z != NULL && pfn != NULL, FALSE);
  if (from >= to || !in_zone(z, from))
    return FALSE;
  to = MIN(to, chunk_base(z, chunk_index(z, from) + 1));
  to = MIN(to, z->end_pfn);
  if (!chunk_of(z, from)) {
    uint64_t k = pins_lower_bound(z, from), p = from;
    while (p < to && k < z->n_pins && pin_pfn(z->pins[k]) == p) {
      p++;
      k++;
    }
    *pfn = p;
    return p < to;
  }
  uint64_t head;
  unsigned o;
  const BuddyPage *e = block_containing(z, from, &head, &o);
  if (e->state == PAGE_FREE) {
    *pfn = from;
    return TRUE;
  }
  for (uint64_t p = head + block_pages(o); p < to; p += block_pages(e->order)) {
    e = page_of(z, p);
    if (e->state == PAGE_FREE) {
      *pfn = p;
      return TRUE;
    }
  }
  return FALSE;
}
