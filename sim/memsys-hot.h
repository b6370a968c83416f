/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memsys-hot.h - private to sim/memsys.c and the core's quick path: the
 * hierarchy's layout and the part of the reference path a data reference
 * that hits the L1 or the L2 runs, inline.
 *
 * memsys_access_data() is memsys_access() for a load or a store, inline in
 * cpu_access_quick() (sim/cpu.h) and so in the engine's solo loop: a
 * sequential run's every access (an L1 miss, an L2 hit that follows a
 * stream and prefetches one line) then costs no call, no prologue saving
 * six registers and no level returned through memory, about 30 host
 * instructions of 400.  A reference that misses the L2 calls
 * memsys_access_beyond_l2() out of line (sim/memsys.c).  Nothing else
 * should include this header (but memsys's unit test): the layout is
 * memsys.c's business.
 */
#ifndef MMUSIM_MEMSYS_HOT_H
#define MMUSIM_MEMSYS_HOT_H

#include <glib.h>
#include <stdint.h>
#include "cache.h"
#include "dram.h"
#include "memsys.h"
#include "registry.h"
#include "stats.h"

/* The stream table: cache.prefetch_pages pages (16 on Intel) x 2 streams,
 * one forward and one backward per 4K page (Intel Optimization Reference
 * Manual, "Data Prefetch to the L2 and Last Level Cache").  A reference
 * compares its page with the page tags (one compare each, contiguous) and
 * then looks at that page's two streams, not at all the windows: scanning
 * 32 windows cost 20 ns per access on random misses, more than the three
 * cache lookups.  MEMSYS_STREAM_SETS bounds the setting. */
#define MEMSYS_STREAM_WAYS 2
#define MEMSYS_STREAM_SETS 64
/* Host side of the table, no effect on the model: the entries are found by
 * page through MEMSYS_STREAM_BUCKETS hash chains, and kept in a list from
 * least to most recently used.  Comparing all 16 page tags on every L2 miss
 * and searching 16 stamps for the least recently used entry on every random
 * miss cost 15% of a random run's instructions; a chain is almost always
 * empty or one entry long, and the list's head is the victim the stamps
 * gave (ties between never-used entries: the lowest index first). */
#define MEMSYS_STREAM_BUCKETS 256
#define MEMSYS_STREAM_NONE 0xff  /* end of a chain; > MEMSYS_STREAM_SETS */
/* Hardware prefetchers see physical addresses and stop at this boundary
 * (same manual: the streamer does not cross 4K pages). */
#define MEMSYS_PREFETCH_PAGE_BYTES 4096u

/* Way counts the L2 and LLC lookups test first (cache_access_likely()):
 * the defaults of cache.l2_ways and cache.llc_ways, as cache-ways.h reads
 * them from base/settings.def.  Host only: any other count takes the
 * general switch, with the same result. */
#define MEMSYS_L2_WAYS_USUAL SETTINGS_DEFAULT_CACHE_L2_WAYS
#define MEMSYS_LLC_WAYS_USUAL SETTINGS_DEFAULT_CACHE_LLC_WAYS

/* MemHier.stream_steady_x when no line is steady: no line is UINT64_MAX. */
#define MEMSYS_STREAM_UNSTEADY UINT64_MAX

/* The prefetcher rules of the hot path (memsys_prefetch_on_miss()). */
typedef enum { MEMSYS_PF_NONE = 0, MEMSYS_PF_NEXTLINE = 1, MEMSYS_PF_STREAM = 2 } MemPrefetcher;

/* A prefetcher: one row of the registry in memsys.c (base/registry.h),
 * named by cache.prefetcher.  Its rule is inline on the L2 miss path, so
 * the row names the case of that path that serves it, as TLB replacement's
 * built-ins do. */
typedef struct {
  REGISTRY_ROW;       /* name: the choice of cache.prefetcher */
  MemPrefetcher rule; /* the case of memsys_prefetch_on_miss() */
} MemPrefetcherRow;

/* The registry's rows, in the order of cache.prefetcher's choices (*n of
 * them). */
const MemPrefetcherRow *const *memsys_prefetchers(unsigned *n);

typedef struct {
  /* Lines a miss may belong to: x - win_lo <= win_span (unsigned); see
   * memsys_stream_window_first() and memsys_stream_follow_dir_any().  An
   * invalid stream matches nothing. */
  uint64_t win_lo;
  uint64_t win_span;
  /* Lines a hit may follow, those the stream prefetched: x - hit_lo <=
   * hit_span, the part of the window between its last line (excluded) and
   * its frontier, kept with the window (one test per way on every L2 hit
   * instead of the window's and two products of the direction). */
  uint64_t hit_lo;
  uint64_t hit_span;
  uint64_t last;      /* last demand line the stream followed */
  uint64_t frontier;  /* furthest line prefetched, or dropped at a page boundary */
  int dir;            /* +1 ascending, -1 descending, 0 one miss seen */
  gboolean valid;
} MemStream;

typedef struct {
  MemStream way[MEMSYS_STREAM_WAYS];
  unsigned mru;       /* way matched or allocated last */
} MemStreamSet;

/* What one kind of reference looks up first and where it counts.  32
 * bytes, flags in bytes: the entry of a kind is a shift away (40 bytes were
 * two address computations at each of the path's reloads). */
typedef struct {
  Cache *l1;
  uint32_t l1_cycles;
  uint8_t trains;     /* data reference: trains the prefetcher */
  uint8_t follows;    /* trains a stream prefetcher: an L2 hit may follow a stream */
  uint64_t *lookups;  /* counter, or MemHier.sink */
  uint64_t *misses;
} MemPath;
G_STATIC_ASSERT(sizeof(MemPath) == 32);

struct MemHier {
  MemPath path[MREQ_WALK + 1];  /* indexed by MemReqKind */
  Cache *l1i, *l1d, *l2;        /* owned */
  Cache *llc;                   /* shared, not owned; NULL: no LLC */
  Counters *ctr;
  uint32_t l2_cycles;
  uint32_t llc_cycles;          /* 0 without an LLC */
  uint32_t dram_cycles;         /* total latency of a reference DRAM serves (idle, local) */
  uint32_t dram_base;           /* the LLC (or L2) part of it */
  Dram *dram;                   /* not owned; NULL: the fixed dram_cycles */
  unsigned node;                /* of the CPU, for dram */
  const uint64_t *clock;        /* of the CPU, for dram */
  unsigned line_shift;
  unsigned page_line_shift;     /* log2(lines per prefetch page) */
  /* Bits of a line number that name its prefetch page, or 0 when prefetches
   * may cross pages: two lines may be prefetched from one another when
   * (a ^ b) & page_bits is 0 (one test per prefetched line instead of the
   * setting's test and a shift). */
  uint64_t page_bits;
  MemPrefetcher prefetcher;
  int64_t prefetch_degree;
  gboolean prefetch_cross_page;
  unsigned stream_pages;        /* cache.prefetch_pages: entries in use */
  MemStreamSet streams[MEMSYS_STREAM_SETS];
  uint64_t stream_page[MEMSYS_STREAM_SETS]; /* page each entry tracks; UINT64_MAX: none */
  uint8_t stream_bucket[MEMSYS_STREAM_BUCKETS]; /* first entry of each hash chain */
  uint8_t stream_chain[MEMSYS_STREAM_SETS];     /* next entry in its chain */
  uint8_t stream_hashed[MEMSYS_STREAM_SETS];    /* the chain of an entry that tracks a page */
  /* Recency ring of the entries in use, from stream_lru, the least recently
   * used, to stream_older[stream_lru], the most.  A ring, not a list with an
   * anchor: making the least recently used entry the most recently used,
   * what a random run's every data L2 miss does, is one step of
   * stream_lru. */
  uint8_t stream_newer[MEMSYS_STREAM_SETS];
  uint8_t stream_older[MEMSYS_STREAM_SETS];
  uint8_t stream_lru;
  /* The way matched or allocated last: the most recently used way of the
   * most recently used entry, and the first way of that entry (see
   * memsys_stream_hit()). */
  MemStream *stream_hot, *stream_hot_first;
  /* Host shortcut, no effect on the model: after an ascending steady step
   * of stream_hot at line x (memsys_stream_follow_dir()), x + 1 when an L2
   * hit on it would take the same step again (memsys_stream_hit()'s tests
   * and the step's all pass: it is in stream_hot's hit window, no way
   * before it holds it, and the line the step issues and the one past it
   * are in its page), else MEMSYS_STREAM_UNSTEADY.  Only those steps set
   * it; any other change of the streams (memsys_stream_hit()'s other
   * path, a data L2 miss, a reset) unsets it first.  A sequential run's
   * hit then tests one line against it and stores what changes, where the
   * tests took some 20 instructions. */
  uint64_t stream_steady_x;
  /* Timed prefetches (cache.prefetch_model=timed, once a clock is attached:
   * memsys_attach_dram): the line each of pf_slots slots fetches and the
   * cycle it arrives; a slot whose line has arrived is free.
   * pf_busy_until is the latest arrival (0: ideal prefetches, or none yet),
   * so that a reference while nothing is in flight tests one number. */
  gboolean pf_timed, pf_want_timed; /* the model in use, the one asked for */
  unsigned pf_slots;
  uint64_t *pf_line, *pf_ready;
  uint64_t pf_busy_until;
  uint64_t sink;                /* counts that are not counted (walk lookups) */
  Counters own_ctr;             /* used when no counters were given */
};

/* Out of line in sim/memsys.c, the rare steps of the path below: the
 * prefetched line that DRAM's open window does not take, the first lines of
 * a stream that starts or was overtaken, and a stream that may leave its
 * page. */
void memsys_prefetch_dram(MemHier *h, uint64_t line);
void memsys_prefetch_timed(MemHier *h, uint64_t line);
uint32_t memsys_prefetch_wait(MemHier *h, uint64_t line, uint32_t cycles);
uint64_t memsys_stream_issue_ahead(MemHier *h, uint64_t f, uint64_t page_lo, uint64_t page_hi, int64_t n, int dir);
void memsys_stream_follow_cross(MemHier *h, MemStream *st, uint64_t x);
void memsys_stream_follow_far(MemHier *h, MemStream *st, uint64_t x, int dir);

/* ---- prefetcher: the steps of an L2 hit ---------------------------------- */

/* TRUE if the prefetcher may go from line a to line b. */
static inline gboolean memsys_same_page(const MemHier *h, uint64_t a, uint64_t b)
{
  return ((a ^ b) & h->page_bits) == 0;
}

/* TRUE when a timed prefetch may still be in flight: a reference that
 * hits the L2 or the LLC then asks memsys_prefetch_wait() whether its line
 * is one of them. */
static inline gboolean memsys_prefetch_busy(const MemHier *h)
{
  return h->pf_busy_until != 0 && h->pf_busy_until > *h->clock;
}

/* Inline in the prefetcher's loop: a call per prefetched line (one per
 * access of a sequential run) cost its prologue and the reloads of h. */
static inline __attribute__((always_inline)) void memsys_prefetch_line(MemHier *h, uint64_t line)
{
  if (h->pf_timed) {
    memsys_prefetch_timed(h, line);
    return;
  }
  if (!cache_fill_likely(h->l2, line, MEMSYS_L2_WAYS_USUAL))
    return; /* already there */
  gboolean from_dram = h->llc == NULL || cache_fill_likely(h->llc, line, MEMSYS_LLC_WAYS_USUAL);
  if (from_dram && h->dram != NULL && !dram_prefetch_open(h->dram, *h->clock))
    memsys_prefetch_dram(h, line);
  h->ctr->c[CTR_PREFETCHES]++;
}

static inline unsigned memsys_stream_hash(uint64_t page)
{
  /* Fibonacci hashing: the top bits of page x 2^64 / phi. */
  return (unsigned)((page * UINT64_C(0x9e3779b97f4a7c15)) >> 56);
}
G_STATIC_ASSERT(MEMSYS_STREAM_BUCKETS == 1 << 8);
G_STATIC_ASSERT(MEMSYS_STREAM_SETS < MEMSYS_STREAM_NONE);

/* Index of the entry tracking `page`, or MEMSYS_STREAM_SETS. */
static inline unsigned memsys_stream_index(const MemHier *h, uint64_t page)
{
  for (unsigned i = h->stream_bucket[memsys_stream_hash(page)]; i != MEMSYS_STREAM_NONE; i = h->stream_chain[i])
    if (h->stream_page[i] == page)
      return i;
  return MEMSYS_STREAM_SETS;
}

/* Entry v was used: make it the most recently used. */
static inline void memsys_stream_touch(MemHier *h, unsigned v)
{
  unsigned lru = h->stream_lru;
  if (v == lru) {  /* the ring turns by one */
    h->stream_lru = h->stream_newer[v];
    return;
  }
  unsigned newest = h->stream_older[lru];
  if (newest == v)
    return;
  unsigned older = h->stream_older[v], newer = h->stream_newer[v];
  h->stream_newer[older] = (uint8_t)newer;
  h->stream_older[newer] = (uint8_t)older;
  h->stream_older[v] = (uint8_t)newest;
  h->stream_newer[v] = (uint8_t)lru;
  h->stream_newer[newest] = (uint8_t)v;
  h->stream_older[lru] = (uint8_t)v;
}


/* The stream of entry i that line x belongs to, or NULL.  A miss belongs to
 * a stream when x is in its window; a hit only when the stream prefetched x,
 * that is when x lies between its last line (excluded) and its frontier. */
static inline __attribute__((always_inline)) MemStream *memsys_stream_match(MemHier *h, unsigned i, uint64_t x, gboolean hit)
{
  if (i >= MEMSYS_STREAM_SETS)
    return NULL;
  MemStreamSet *set = &h->streams[i];
  for (unsigned w = 0; w < MEMSYS_STREAM_WAYS; w++) {
    MemStream *st = &set->way[w];
    if (hit ? x - st->hit_lo > st->hit_span : x - st->win_lo > st->win_span)
      continue;
    set->mru = w;
    memsys_stream_touch(h, i);
    h->stream_hot = st;
    h->stream_hot_first = &set->way[0];
    return st;
  }
  return NULL;
}

/* The stream line x belongs to, or NULL; *xi is the entry of x's own page
 * (or MEMSYS_STREAM_SETS), for memsys_stream_alloc.  Streams are filed by
 * the page of their last line; one that may cross pages can reach x from
 * the page before or after x's (its window spans at most prefetch_degree + 1
 * lines, so a farther one is missed and a new stream is trained instead).
 * Inline in its two callers, where `hit` is a constant: a call per data L2
 * hit and miss and the test of `hit` cost 3% of a sequential run. */
static inline __attribute__((always_inline)) MemStream *memsys_stream_find(MemHier *h, uint64_t x, gboolean hit, unsigned *xi)
{
  unsigned shift = h->page_line_shift;
  *xi = memsys_stream_index(h, x >> shift);
  MemStream *st = memsys_stream_match(h, *xi, x, hit);
  if (st != NULL || !h->prefetch_cross_page)
    return st;
  uint64_t page_lines = UINT64_C(1) << shift;
  st = memsys_stream_match(h, memsys_stream_index(h, (x - page_lines) >> shift), x, hit);
  if (st == NULL)
    st = memsys_stream_match(h, memsys_stream_index(h, (x + page_lines) >> shift), x, hit);
  return st;
}


/* The general step of a stream that follows, inline in its out-of-line
 * callers in sim/memsys.c (the steady step, below, is the one inline in
 * the L2 hit path).  A stream that follows has a
 * direction: one copy for each, where the products and tests of st->dir
 * fold away.  A stream that stays in its page (page_bits != 0) only
 * follows lines of that page: its windows lie in it; one that may cross
 * pages (page_bits 0) takes the same steps out of line, x's "page" then
 * being every line (memsys_stream_follow_cross()).
 *
 * Issue prefetch_degree lines ahead of x, then recompute the lines the
 * stream may match, from its last line to one past its frontier, with the
 * frontier, the degree and x's page bounds in locals: the counters the loop
 * increments might alias the stream and h as far as the compiler knows, so
 * separate functions stored the frontier and reloaded the degree on every
 * line and reloaded the stream after the loop.  Ascending, the frontier
 * starts at or past x and only grows, so "in x's page" is frontier <=
 * page_hi (descending, >= page_lo); the window's page clamp is the same
 * bound. */
static inline __attribute__((always_inline)) void memsys_stream_follow_dir_any(MemHier *h, MemStream *st, uint64_t x, int dir)
{
  uint64_t page_lo = x & h->page_bits, page_hi = page_lo | ~h->page_bits;
  int64_t degree = h->prefetch_degree;
  uint64_t f = st->frontier;
  gboolean issue = FALSE;  /* line f, after the window below */
  st->last = x;
  int64_t ahead = dir > 0 ? (int64_t)(f - x) : (int64_t)(x - f);
  if (ahead < 0) {  /* demand overtook the prefetches */
    ahead = 0;
    f = x;
  }
  if (ahead < degree) {
    /* All but the last line out of line: the usual step issues one, and a
     * loop kept its counters in saved registers, moved in and out around
     * it. */
    if (ahead + 1 < degree)
      f = memsys_stream_issue_ahead(h, f, page_lo, page_hi, degree - 1 - ahead, dir);
    if (dir > 0 || f > 0) {
      f += (uint64_t)(int64_t)dir;
      if (dir > 0 ? f <= page_hi : f >= page_lo)
        issue = TRUE;
      else
        h->ctr->c[CTR_PREFETCH_PAGE_STOPS]++;
    }
  }
  st->frontier = f;
  /* The window: the lines from x to one past the frontier, in x's page. */
  uint64_t lo, hi, hit_lo = 1, hit_hi = 0;
  if (dir > 0) {
    lo = x;
    hi = MIN(f + 1, page_hi);
    hit_lo = x + 1;
    hit_hi = MIN(hi, f);
  } else {
    lo = MAX(f - (f > 0), page_lo);
    hi = x;
    if (x > 0) {
      hit_lo = MAX(lo, f);
      hit_hi = x - 1;
    }
  }
  st->win_lo = lo;
  st->win_span = hi - lo;
  st->hit_lo = hit_hi >= hit_lo ? hit_lo : UINT64_MAX;
  st->hit_span = hit_hi >= hit_lo ? hit_hi - hit_lo : 0;
  /* The last line's fill after the stream's bookkeeping, which the fill
   * does not read: the stream and x's page bounds then need no register
   * across the fill's out-of-line calls (they were spilled around it and
   * reloaded, 7 instructions a sequential access). */
  if (issue)
    memsys_prefetch_line(h, f);
}

/* After an ascending steady step of stream_hot, st, at x with frontier f:
 * MemHier.stream_steady_x.  The next line's L2 hit would find x + 1 in
 * st's hit window (x + 1 .. f) and st one line short of its degree ahead;
 * left to test are the page of the line past the one it would issue (f +
 * 2), and the first way of st's entry, which the search would find first
 * if it is not st and its hit window holds x + 1. */
static inline __attribute__((always_inline)) void memsys_stream_steady_arm(MemHier *h, const MemStream *st, uint64_t x,
                                                                           uint64_t f)
{
  const MemStream *first = h->stream_hot_first;
  uint64_t next = x + 1;
  gboolean steady = (((f + 2) ^ next) & h->page_bits) == 0 &&
                    (st == first || next - first->hit_lo > first->hit_span);
  h->stream_steady_x = steady ? next : MEMSYS_STREAM_UNSTEADY;
}

/* The steady step, inline: the stream is exactly one line short of its
 * degree ahead of x (a sequential run's every hit on a prefetched line),
 * and the line it issues, f, and the one past it are in x's page.  Then
 * memsys_stream_follow_dir_any() issues f and clamps nothing, and the
 * windows are the degree's constant spans from x (ascending: the window x
 * .. f + 1, the hit window x + 1 .. f; descending: f - 1 .. x and f .. x -
 * 1): a few stores instead of its overtaking test, issue test and page
 * clamps.  Every other step, and a stream whose f would wrap below line 0
 * (f - 1 is then outside x's page), out of line (the stream is then in no
 * register across a call: it was spilled for the whole step and reloaded
 * four times). */
static inline __attribute__((always_inline)) void memsys_stream_follow_dir(MemHier *h, MemStream *st, uint64_t x, int dir)
{
  uint64_t degree = (uint64_t)h->prefetch_degree;
  uint64_t f = st->frontier + (uint64_t)(int64_t)dir;
  if (G_UNLIKELY((dir > 0 ? f - x : x - f) != degree ||
                 ((f + (uint64_t)(int64_t)dir) ^ x) & h->page_bits)) {
    memsys_stream_follow_far(h, st, x, dir);
    return;
  }
  st->last = x;
  st->frontier = f;
  st->win_lo = dir > 0 ? x : f - 1;
  st->win_span = degree + 1;
  st->hit_lo = dir > 0 ? x + 1 : f;
  st->hit_span = degree - 1;
  if (dir > 0 && st == h->stream_hot)  /* not a test's stray stream */
    memsys_stream_steady_arm(h, st, x, f);
  memsys_prefetch_line(h, f);
}

/* The ascending steady step of stream_hot at x = MemHier.stream_steady_x:
 * what memsys_stream_hit() and memsys_stream_follow_dir() do then, their
 * tests known to pass.  The spans stay as the step before left them. */
static inline __attribute__((always_inline)) void memsys_stream_steady_next(MemHier *h, uint64_t x)
{
  MemStream *st = h->stream_hot;
  uint64_t f = x + (uint64_t)h->prefetch_degree;
  st->last = x;
  st->frontier = f;
  st->win_lo = x;
  st->hit_lo = x + 1;
  memsys_stream_steady_arm(h, st, x, f);
  memsys_prefetch_line(h, f);
}

static inline __attribute__((always_inline)) void memsys_stream_follow(MemHier *h, MemStream *st, uint64_t x)
{
  if (G_UNLIKELY(h->page_bits == 0))
    memsys_stream_follow_cross(h, st, x);
  else if (st->dir > 0)
    memsys_stream_follow_dir(h, st, x, 1);
  else
    memsys_stream_follow_dir(h, st, x, -1);
}

/* A data L2 hit on line x: if a stream prefetched it, keep that stream ahead.
 * A sequential run follows the same stream 64 times a page: when the way
 * matched last holds x and no way before it does, the search would find
 * it, and its entry and way are already the most recently used, so the
 * search changes nothing and is skipped.  Exact only while streams stay in
 * their page: a stream's hit window then lies in the page its entry tracks,
 * so x's page is that entry's. */
static inline __attribute__((always_inline)) void memsys_stream_hit(MemHier *h, uint64_t x)
{
  if (G_LIKELY(x == h->stream_steady_x)) {
    memsys_stream_steady_next(h, x);
    return;
  }
  h->stream_steady_x = MEMSYS_STREAM_UNSTEADY;  /* the streams may change below */
  MemStream *st = h->stream_hot, *first = h->stream_hot_first;
  G_STATIC_ASSERT(MEMSYS_STREAM_WAYS == 2);  /* the way before hot is first */
  if (G_UNLIKELY(x - st->hit_lo > st->hit_span || h->page_bits == 0 ||
                 (st != first && x - first->hit_lo <= first->hit_span))) {
    unsigned xi;
    st = memsys_stream_find(h, x, TRUE, &xi);
    if (st == NULL)
      return;
  }
  memsys_stream_follow(h, st, x);
}
/* ---- the reference path of a load or store ------------------------------- */

/* A data reference that missed the L1 and the L2: the LLC, DRAM and the
 * prefetcher's training, as memsys_access() does them.  Returns the cycles
 * in the low 32 bits and the level that served it above: a level returned
 * through a pointer kept the caller's level in memory, stored on every
 * L1 miss and L2 hit too. */
uint64_t memsys_access_beyond_l2(MemHier *h, uint64_t pa, MemReqKind kind);

/* The L1 and L2 steps of a reference along path p, shared by
 * memsys_access(), memsys_access_walk() and memsys_access_data(): TRUE
 * with *level and *cycles when one of them served the line, FALSE (having
 * filled both) when it goes below the L2.  An L1 miss is counted in
 * *l1_misses unless that is NULL (memsys_access_data's caller counts its
 * own, a walk's are not counted).  `walk` (a constant): p is the walks'
 * path, whose L2 hits follow no stream. */
static inline __attribute__((always_inline)) gboolean memsys_near(MemHier *h, const MemPath *p, uint64_t line,
                                                                  uint64_t *l1_misses, MemLevel *level, uint32_t *cycles,
                                                                  gboolean walk)
{
  if (G_LIKELY(cache_access(p->l1, line))) {
    *level = MEM_L1;
    *cycles = p->l1_cycles;
    return TRUE;
  }
  if (l1_misses != NULL)
    (*l1_misses)++;
  if (G_LIKELY(cache_access_likely(h->l2, line, MEMSYS_L2_WAYS_USUAL))) {
    if (!walk && p->follows)
      memsys_stream_hit(h, line);
    *level = MEM_L2;
    *cycles = h->l2_cycles;
    if (G_UNLIKELY(memsys_prefetch_busy(h)))
      *cycles = memsys_prefetch_wait(h, line, *cycles);
    return TRUE;
  }
  return FALSE;
}

/* memsys_access() of a load or a store (kind MREQ_LOAD or MREQ_STORE), the
 * same steps and result, inline for the core's quick path; but the L1D's
 * counts of the reference, l1d_loads or l1d_stores and their misses, are
 * the caller's to add (into the same Counters, the Cpu's): the quick path
 * keeps them in locals with its accesses (CpuQuickCounts), which saved a
 * counter's address loaded and a memory add for each (4% of a sequential
 * record).  A load's and a store's paths differ only in those counters. */
static inline __attribute__((always_inline)) uint32_t memsys_access_data(MemHier *h, uint64_t pa, MemReqKind kind,
                                                                         MemLevel *level)
{
  uint32_t cycles;
  if (G_LIKELY(memsys_near(h, &h->path[MREQ_LOAD], pa >> h->line_shift, NULL, level, &cycles, FALSE)))
    return cycles;
  uint64_t both = memsys_access_beyond_l2(h, pa, kind);
  *level = (MemLevel)(both >> 32);
  return (uint32_t)both;
}

/* Host prefetch of the simulated L2 and LLC sets that a reference to pa
 * would search; changes nothing in the model.  Inline (for cpu_prefetch):
 * out of line it was a call and a prologue for two masks and prefetches. */
static inline G_ALWAYS_INLINE void memsys_host_prefetch(const MemHier *h, uint64_t pa)
{
  uint64_t line = pa >> h->line_shift;
  cache_host_prefetch(h->l2, line);
  if (h->llc != NULL)
    cache_host_prefetch(h->llc, line);
}

#endif
