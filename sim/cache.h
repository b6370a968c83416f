/*
 * cache.h - one set-associative cache array (tags only, no data).
 *
 * Lines are identified by line number (physical address >> line shift).  LRU
 * replacement within a set.  The hot path (cache_access) allocates nothing and
 * calls nothing; the geometry is checked once in cache_new().
 */
#ifndef MMUSIM_CACHE_H
#define MMUSIM_CACHE_H

#include <glib.h>
#include <stdint.h>
#include <string.h>

typedef struct Cache Cache;

#define MMUSIM_SIM_ERROR (mmusim_sim_error_quark())
GQuark mmusim_sim_error_quark(void);
typedef enum {
  SIM_ERROR_MACHINE,  /* impossible machine description */
  SIM_ERROR_USAGE,    /* bad command line */
  SIM_ERROR_IO,       /* cannot write output */
} SimError;

/* `name` ("L1D") is used in error messages.  size_bytes must be a multiple of
 * ways * line_bytes; the number of sets need not be a power of two. */
Cache *cache_new(const char *name, uint64_t size_bytes, unsigned ways, unsigned line_bytes, GError **error);
void cache_free(Cache *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Cache, cache_free)

/* Look the line up; on a miss, insert it, evicting the LRU line of its set.
 * Returns TRUE on a hit.  Updates LRU either way.  Inline (below). */
static inline gboolean cache_access(Cache *c, uint64_t line);
/* TRUE if present; changes nothing. */
gboolean cache_contains(const Cache *c, uint64_t line);
/* Host prefetch of the set the line maps to (no effect on the model).
 * Inline (below). */
static inline void cache_host_prefetch(const Cache *c, uint64_t line);
/* Insert without counting as a use if already present (prefetch fill).
 * TRUE if the line was inserted, FALSE if it was there already.  Inline
 * (below). */
static inline gboolean cache_fill(Cache *c, uint64_t line);
void cache_invalidate(Cache *c, uint64_t line);
void cache_invalidate_all(Cache *c);
unsigned cache_sets(const Cache *c);
unsigned cache_ways(const Cache *c);

/* ---- private: the hot path, inline so that memsys_access() has no calls --- */

/* Tag of an empty way.  Line numbers are physical addresses shifted right by
 * at least 4 bits, so no real line has this number. */
#define CACHE_EMPTY UINT64_MAX

struct Cache {
  uint64_t *tags;     /* sets * ways, each set most recently used first */
  /* sets - 1 when sets is a power of two, else CACHE_SETS_DIVIDE: the one
   * field tells both which way to index and the mask (the flag and the mask
   * apart were one more load per lookup). */
  uint64_t set_mask;
  unsigned sets;
  unsigned ways;
  char *name;         /* for messages */
};

/* set_mask of a set count that is not a power of two (sets - 1 never is:
 * cache_new() bounds sets * ways to an unsigned). */
#define CACHE_SETS_DIVIDE UINT64_MAX

static inline uint64_t *cache_set_of(const Cache *c, uint64_t line)
{
  uint64_t mask = c->set_mask;
  uint64_t set = G_LIKELY(mask != CACHE_SETS_DIVIDE) ? (line & mask) : (line % c->sets);
  return c->tags + set * c->ways;
}

static inline void cache_host_prefetch(const Cache *c, uint64_t line)
{
  const uint64_t *set = cache_set_of(c, line);
  /* A set's tags span ways * 8 bytes: touch each host line of it. */
  for (unsigned w = 0; w < c->ways; w += 8)
    __builtin_prefetch(set + w, 1);
}

/* Put `line` at way 0 of `set`, shifting ways 0..ways-2 down; the last way
 * falls out.  Returns TRUE if the line was already in the set (then only the
 * ways in front of it move).  One pass: search and shift together, fully
 * unrolled when `ways` is a constant (a load, a store, a compare and a
 * branch a way; the loop's own counting doubled that). */
static inline __attribute__((always_inline)) gboolean cache_set_touch(uint64_t *set, unsigned ways, uint64_t line)
{
  uint64_t prev = set[0];
#pragma GCC unroll 24
  for (unsigned w = 1; w < ways; w++) {
    uint64_t cur = set[w];
    set[w] = prev;
    if (cur == line) {
      set[0] = line;
      return TRUE;
    }
    prev = cur;
  }
  set[0] = line;
  return FALSE;
}

/* Way of `line` in `set`, or `ways`; unrolled when `ways` is a constant. */
static inline __attribute__((always_inline)) unsigned cache_set_find(const uint64_t *set, unsigned ways, uint64_t line)
{
  unsigned w = 0;
#pragma GCC unroll 24
  for (; w < ways; w++)
    if (set[w] == line)
      break;
  return w;
}

/* Largest way count whose fills move the set through a copy. */
#define CACHE_FIXED_WAYS_MAX 24

/* `line`, not in the set, goes in front and ways 0..ways-2 move to
 * 1..ways-1, two tags (16 bytes) at a time from the top down: each pair is
 * read before anything below it is written.  For a constant `ways`.  (A copy
 * through a local array left its stores in the code, twice the stores of
 * this.) */
static inline __attribute__((always_inline)) void cache_set_push(uint64_t *set, unsigned ways, uint64_t line)
{
  unsigned d = ways - 2;  /* the lower destination way of the top pair */
#pragma GCC unroll 12
  for (; d >= 1 && d < ways; d -= 2) {
    uint64_t pair[2];
    memcpy(pair, set + d - 1, sizeof pair);
    memcpy(set + d, pair, sizeof pair);
  }
  if (d == 0)  /* an odd count: way 0 to way 1 alone */
    set[1] = set[0];
  set[0] = line;
}

/* As cache_set_touch(), but search, then move: a hit at way w moves ways
 * 0..w-1, a miss the whole set by pairs (half the stores of the one pass).
 * For a constant `ways`; set[0] is known not to be `line`.  Measured against
 * the one pass (callgrind, skylake, 4K pages): seq:size=16M 2,547 -> 2,525 M
 * instructions, random:size=16M 1,615 -> 1,609 M. */
static inline __attribute__((always_inline)) gboolean cache_set_lookup(uint64_t *set, unsigned ways, uint64_t line)
{
  unsigned w = 1;
#pragma GCC unroll 24
  for (; w < ways; w++)
    if (set[w] == line)
      break;
  if (w == ways) {
    cache_set_push(set, ways, line);
    return FALSE;
  }
  for (; w > 0; w--)
    set[w] = set[w - 1];
  set[0] = line;
  return TRUE;
}

/* A line that is not in the set goes in front and every way moves down:
 * empty ways are at the tail, so this fills the first empty way, or evicts
 * the last (LRU) one when there is none.  With `ways` a constant the move
 * goes through a copy, which the compiler does with a few wide moves (a
 * memmove of the set itself is a library call). */
static inline __attribute__((always_inline)) gboolean cache_set_fill(uint64_t *set, unsigned ways, uint64_t line)
{
  if (cache_set_find(set, ways, line) < ways)
    return FALSE;
  if (__builtin_constant_p(ways) && ways <= CACHE_FIXED_WAYS_MAX) {
    cache_set_push(set, ways, line);
  } else {
    cache_set_touch(set, ways, line);
  }
  return TRUE;
}

/* The other associativities of the presets' caches: 11 (skylake-2s LLC), 20
 * (power9, uv-16n) and 24 (westmere-4n), a second switch behind the first so
 * that the 4, 8 and 16-way arrays do not pay for it.  Measured on
 * random:size=16M (callgrind): skylake-2s 1,719 -> 1,659 M
 * instructions, westmere-4n 1,726 -> 1,655 M. */
static inline __attribute__((always_inline)) gboolean cache_set_fill_more(uint64_t *set, unsigned ways, uint64_t line)
{
  switch (ways) {
  case 11:
    return cache_set_fill(set, 11, line);
  case 20:
    return cache_set_fill(set, 20, line);
  case 24:
    return cache_set_fill(set, 24, line);
  default:
    return cache_set_fill(set, ways, line);
  }
}

static inline __attribute__((always_inline)) gboolean cache_set_touch_more(uint64_t *set, unsigned ways, uint64_t line)
{
  switch (ways) {
  case 11:
    return cache_set_touch(set, 11, line);
  case 20:
    return cache_set_touch(set, 20, line);
  case 24:
    return cache_set_touch(set, 24, line);
  default:
    return cache_set_touch(set, ways, line);
  }
}

static inline __attribute__((always_inline)) gboolean cache_fill(Cache *c, uint64_t line)
{
  uint64_t *set = cache_set_of(c, line);
  switch (c->ways) {  /* as cache_access() */
  case 4:
    return cache_set_fill(set, 4, line);
  case 8:
    return cache_set_fill(set, 8, line);
  case 16:
    return cache_set_fill(set, 16, line);
  default:
    return cache_set_fill_more(set, c->ways, line);
  }
}

static inline __attribute__((always_inline)) gboolean cache_access(Cache *c, uint64_t line)
{
  uint64_t *set = cache_set_of(c, line);
  if (G_LIKELY(set[0] == line))
    return TRUE;
  /* The associativities of the presets get a copy with the way count
   * fixed; the others the general loop.  Measured on a random run
   * (callgrind, random:size=16M on skylake): 319 M -> 193 M instructions
   * in the cache lookups. */
  switch (c->ways) {
  case 4:
    return cache_set_lookup(set, 4, line);
  case 8:
    return cache_set_lookup(set, 8, line);
  case 16:
    return cache_set_lookup(set, 16, line);
  default:
    return cache_set_touch_more(set, c->ways, line);
  }
}

#endif
