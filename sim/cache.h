/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache.h - one set-associative cache array (tags only, no data).
 *
 * Lines are identified by line number (physical address >> line shift).  LRU
 * replacement within a set.  The hot path (cache_access) allocates nothing and
 * calls nothing (but for the 64-bit layout below, out of line); the geometry
 * is checked once in cache_new().
 */
#ifndef MMUSIM_CACHE_H
#define MMUSIM_CACHE_H

#include <glib.h>
#include <stdint.h>
#include <string.h>
#include "cache-ways.h"  /* generated: the way counts of the defaults and the presets */
#include "errors.h"
#ifdef __SSE2__
#include <emmintrin.h>  /* always there on x86-64; a plain C fallback below */
#endif

typedef struct Cache Cache;

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
/* TRUE once the cache holds 64-bit tags (below); cache_widen() makes it so
 * at once (for tests: the two layouts must agree). */
gboolean cache_is_wide(const Cache *c);
void cache_widen(Cache *c);

/* ---- private: the hot path, inline so that memsys_access() has no calls --- */

/* Two layouts of the same tag array, with the same LRU order and so the same
 * hits and victims:
 *  - narrow (the default): a way holds the line's tag, line >> 6 with a
 *    power-of-two set count of at least 64 (CACHE_TAG_SHIFT), line >>
 *    log2(sets) with fewer, line / sets for other set counts, in 32 bits: a
 *    16-way set is 64 bytes, one host cache line, and 4, 8, 16, 20 and
 *    24-way sets are searched and moved four ways at a time (SSE2);
 *  - wide: a way holds the whole line number in 64 bits.
 * A cache starts narrow and turns wide, once and for good, when a line's
 * tag does not fit below CACHE_EMPTY32: 32-bit tags hold every line of a
 * machine of up to 16 TiB of 64-byte lines (with 64 sets or more), but the
 * settings allow 64 nodes of 64 TiB.  Deciding on the line itself makes the switch
 * exact for any address, whatever reaches the cache; it costs one compare
 * of the tag already computed.  The wide layout's code is out of line
 * (cache.c). */
#define CACHE_EMPTY32 UINT32_MAX
/* Tag of an empty way of a wide cache.  Line numbers are physical addresses
 * shifted right by at least 4 bits, so no real line has this number. */
#define CACHE_EMPTY UINT64_MAX

struct Cache {
  uint32_t *tags32;   /* narrow: sets * ways, each set most recently used first; NULL when wide */
  /* Lines below this have a narrow tag line >> CACHE_TAG_SHIFT: with a
   * power-of-two set count of at least 2^CACHE_TAG_SHIFT,
   * CACHE_EMPTY32 << CACHE_TAG_SHIFT, else 0.  One compare of the line
   * decides the common case, instead of a test of set_mask and then one of
   * the tag (cache_set_index()). */
  uint64_t line_limit;
  /* Tags below this go to tags32: CACHE_EMPTY32 while narrow, 0 once wide
   * (every tag then takes the out-of-line path). */
  uint64_t tag_limit;
  /* sets - 1 when sets is a power of two, else CACHE_SETS_DIVIDE: the one
   * field tells both which way to index and the mask (the flag and the mask
   * apart were one more load per lookup). */
  uint64_t set_mask;
  unsigned set_shift; /* log2(sets) when a power of two */
  unsigned tag_shift; /* MIN(set_shift, CACHE_TAG_SHIFT) when a power of two */
  unsigned sets;
  unsigned ways;
  uint64_t *tags;     /* wide: sets * ways whole line numbers; NULL while narrow */
  char *name;         /* for messages */
};

/* The narrow array starts on a host cache line, so that every 16-way set is
 * one host line (and every 4 or 8-way set within one). */
#define CACHE_HOST_LINE 64

/* set_mask of a set count that is not a power of two (sets - 1 never is:
 * cache_new() bounds sets * ways to an unsigned). */
#define CACHE_SETS_DIVIDE UINT64_MAX

/* The narrow tag of a line in a power-of-two set count of at least 64 is
 * line >> 6, not line >> log2(sets): the lines of one set agree in their
 * low log2(sets) bits, so dropping fewer keeps their tags apart, and a
 * constant shift takes two instructions fewer per lookup and fill than
 * the cache's own (the count to load and the move around the shift's
 * register).  Tags then fit 32 bits below line 2^38, 16 TiB of 64-byte
 * lines, where a 64-set L1 already turned wide before.  Fewer sets keep
 * line >> log2(sets), out of the inline path. */
#define CACHE_TAG_SHIFT 6

/* The set index of `line`; its narrow tag goes to *tag. */
static inline __attribute__((always_inline)) uint64_t cache_index(const Cache *c, uint64_t line, uint64_t *tag)
{
  uint64_t mask = c->set_mask;
  if (G_LIKELY(mask != CACHE_SETS_DIVIDE)) {
    *tag = line >> c->tag_shift;
    return line & mask;
  }
  *tag = line / c->sets;
  return line % c->sets;
}

/* The narrow set index of `line` in *s and its tag in *t; FALSE when the
 * line takes the wide path (a wide cache, or a tag that does not fit).  A
 * flag, not a NULL set, so that the test folds into the branches above it.
 * The index, not the set: the callers take the set's address,
 * `tags32 + s * ways`, after their test of the way count, with the count a
 * constant (a shift, where the product with c->ways was a load, a multiply
 * and a move on every lookup and fill). */
static inline __attribute__((always_inline)) gboolean cache_set_index(const Cache *c, uint64_t line, uint64_t *s, uint32_t *t)
{
  uint64_t tag;
  if (G_LIKELY(line < c->line_limit)) {
    tag = line >> CACHE_TAG_SHIFT;
    *s = line & c->set_mask;
  } else {
    if (c->set_mask != CACHE_SETS_DIVIDE) {
      if (c->tag_shift == CACHE_TAG_SHIFT)
        return FALSE;  /* line_limit was the tag limit */
      tag = line >> c->tag_shift;  /* fewer than 2^CACHE_TAG_SHIFT sets */
      *s = line & c->set_mask;
    } else {
      tag = line / c->sets;
      *s = line % c->sets;
    }
    if (tag >= c->tag_limit)
      return FALSE;
  }
  *t = (uint32_t)tag;
  return TRUE;
}

/* The wide layout, and a narrow cache meeting a tag that does not fit. */
gboolean cache_access_wide(Cache *c, uint64_t line);
gboolean cache_fill_wide(Cache *c, uint64_t line);

/* The host address of the tags of `line`'s set, whichever the layout, and
 * their size in bytes in *bytes: what cache_host_prefetch() touches.  Inline
 * for a narrow cache with a power-of-two set count of at least
 * 2^CACHE_TAG_SHIFT, the line below line_limit (0 once wide): one compare, a
 * mask and a multiply; any other case out of line. */
const void *cache_host_set_any(const Cache *c, uint64_t line, unsigned *bytes);
static inline G_ALWAYS_INLINE const void *cache_host_set(const Cache *c, uint64_t line, unsigned *bytes)
{
  if (G_LIKELY(line < c->line_limit)) {
    unsigned ways = c->ways;
    *bytes = ways * (unsigned)sizeof *c->tags32;
    return c->tags32 + (line & c->set_mask) * ways;
  }
  return cache_host_set_any(c, line, bytes);
}

/* Touch each host line of the `bytes` of tags at `set` (one for up to 16
 * narrow ways).  Always inline, as are the helpers below: a helper that
 * holds nothing but __builtin_prefetch calls may be judged free of side
 * effects and its calls dropped. */
static inline G_ALWAYS_INLINE void cache_host_prefetch_span(const char *set, unsigned bytes)
{
  __builtin_prefetch(set, 1);
  for (unsigned off = CACHE_HOST_LINE; G_UNLIKELY(off < bytes); off += CACHE_HOST_LINE)
    __builtin_prefetch(set + off, 1);
}

/* cache_host_prefetch() of a line cache_host_set() finds out of line. */
void cache_host_prefetch_any(const Cache *c, uint64_t line);

/* Inline in its common case, so that its callers keep nothing across a
 * call; the rest is one tail call. */
static inline G_ALWAYS_INLINE void cache_host_prefetch(const Cache *c, uint64_t line)
{
  if (G_LIKELY(line < c->line_limit)) {
    unsigned bytes;
    const char *set = cache_host_set(c, line, &bytes);
    cache_host_prefetch_span(set, bytes);
  } else {
    cache_host_prefetch_any(c, line);
  }
}

/* ---- any way count, one way at a time ---- */

/* Way of `t` in `set`, or `ways`; unrolled when `ways` is a constant. */
static inline __attribute__((always_inline)) unsigned cache_set_find32(const uint32_t *set, unsigned ways, uint32_t t)
{
  unsigned w = 0;
#pragma GCC unroll 24
  for (; w < ways; w++)
    if (set[w] == t)
      break;
  return w;
}

/* Put `t` at way 0 of `set`, shifting ways 0..ways-2 down; the last way
 * falls out.  Returns TRUE if the tag was already in the set (then only the
 * ways in front of it move); set[0] must not be t (the callers test it
 * first).  One pass: search and shift together, fully
 * unrolled when `ways` is a constant (a load, a store, a compare and a
 * branch a way; the loop's own counting doubled that). */
static inline __attribute__((always_inline)) gboolean cache_set_touch32(uint32_t *set, unsigned ways, uint32_t t)
{
  uint32_t prev = set[0];
#pragma GCC unroll 24
  for (unsigned w = 1; w < ways; w++) {
    uint32_t cur = set[w];
    set[w] = prev;
    if (cur == t) {
      set[0] = t;
      return TRUE;
    }
    prev = cur;
  }
  set[0] = t;
  return FALSE;
}

/* Fill one way at a time: nothing changes when t is there; else t goes in
 * front. */
static inline __attribute__((always_inline)) gboolean cache_set_fill32_scalar(uint32_t *set, unsigned ways, uint32_t t)
{
  if (cache_set_find32(set, ways, t) < ways)
    return FALSE;
  cache_set_touch32(set, ways, t);
  return TRUE;
}

/* ---- 4, 8, 16, 20 and 24 ways: four at a time ---- */

/* Way counts with a vector copy: a multiple of 4, at most this. */
#define CACHE_VECTOR_WAYS_MAX 24

#ifdef __SSE2__

/* The n vectors of a set (16-byte aligned) into v; returns the set as vectors. */
static inline __attribute__((always_inline)) __m128i *cache_vec_load(uint32_t *set, unsigned n, __m128i *v)
{
  __m128i *p = (__m128i *)__builtin_assume_aligned(set, 16);
#pragma GCC unroll 6
  for (unsigned k = 0; k < n; k++)
    v[k] = _mm_load_si128(p + k);
  return p;
}

static inline __attribute__((always_inline)) void cache_vec_store(__m128i *p, unsigned n, const __m128i *s)
{
#pragma GCC unroll 6
  for (unsigned k = 0; k < n; k++)
    _mm_store_si128(p + k, s[k]);
}

/* Non-zero when a way of the set in v[0 .. n-1] holds t, and the first such
 * way is cache_vec_way() of the result: bit w set when way w holds t, but
 * for two vectors (8 ways), where bits 2w and 2w + 1 are (their compares
 * narrowed once, to 16 bits a way: two instructions fewer per 8-way
 * lookup). */
static inline __attribute__((always_inline)) unsigned cache_vec_match(const __m128i *v, unsigned n, uint32_t t)
{
  __m128i key = _mm_set1_epi32((int)t), zero = _mm_setzero_si128();
  __m128i e[CACHE_VECTOR_WAYS_MAX / 4];
#pragma GCC unroll 6
  for (unsigned k = 0; k < n; k++)
    e[k] = _mm_cmpeq_epi32(v[k], key);
  if (n == 1)
    return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(e[0]));
  if (n == 2)
    return (unsigned)_mm_movemask_epi8(_mm_packs_epi32(e[0], e[1]));
  /* Four compares narrowed to one byte a way: 16 ways in one mask. */
  unsigned m = 0;
#pragma GCC unroll 6
  for (unsigned g = 0; g < n; g += 4) {
    __m128i lo = _mm_packs_epi32(e[g], g + 1 < n ? e[g + 1] : zero);
    __m128i hi = g + 2 < n ? _mm_packs_epi32(e[g + 2], g + 3 < n ? e[g + 3] : zero) : zero;
    m |= (unsigned)_mm_movemask_epi8(_mm_packs_epi16(lo, hi)) << (4 * g);
  }
  return m;
}

/* The first way that holds t, from m = cache_vec_match() != 0. */
static inline __attribute__((always_inline)) unsigned cache_vec_way(unsigned m, unsigned n)
{
  return n == 2 ? (unsigned)__builtin_ctz(m) / 2 : (unsigned)__builtin_ctz(m);
}

/* s = the set v with t in front and every way moved down one (the last
 * falls out). */
static inline __attribute__((always_inline)) void cache_vec_push(const __m128i *v, unsigned n, uint32_t t, __m128i *s)
{
  s[0] = _mm_or_si128(_mm_slli_si128(v[0], 4), _mm_cvtsi32_si128((int)t));
#pragma GCC unroll 6
  for (unsigned k = 1; k < n; k++)
    s[k] = _mm_or_si128(_mm_slli_si128(v[k], 4), _mm_srli_si128(v[k - 1], 12));
}

/* Store at p the set v[0 .. n-1] moved down one way with t in front (the
 * last way falls out): what cache_vec_store() of cache_vec_push() stores,
 * for a set that does not hold t.  Vector k > 0 of the moved set is the 16
 * bytes that start one way before vector k, one unaligned load, stored from
 * the top down so that each load comes before the store that overlaps it;
 * only vector 0 is built in registers (the shifts, ors and copies that
 * build every vector were 11 instructions more per 16-way fill). */
static inline __attribute__((always_inline)) void cache_vec_push_store(__m128i *p, unsigned n, __m128i v0, uint32_t t)
{
  const uint32_t *set = (const uint32_t *)p;
#pragma GCC unroll 6
  for (unsigned k = n; k-- > 1;)
    _mm_store_si128(p + k, _mm_loadu_si128((const __m128i *)(set + 4 * k - 1)));
  _mm_store_si128(p, _mm_or_si128(_mm_slli_si128(v0, 4), _mm_cvtsi32_si128((int)t)));
}

/* Non-zero when a way of the set in v[0 .. n-1] holds t (a fill needs no
 * way number: the compares are or-ed, not packed). */
static inline __attribute__((always_inline)) unsigned cache_vec_any(const __m128i *v, unsigned n, uint32_t t)
{
  __m128i key = _mm_set1_epi32((int)t);
  __m128i e = _mm_cmpeq_epi32(v[0], key);
#pragma GCC unroll 6
  for (unsigned k = 1; k < n; k++)
    e = _mm_or_si128(e, _mm_cmpeq_epi32(v[k], key));
  return (unsigned)_mm_movemask_epi8(e);
}

/* cache_set_touch32() for a constant `ways` that is a multiple of 4, up to
 * CACHE_VECTOR_WAYS_MAX, and set[0] known not to be t: compare all ways,
 * then store the moved set, or on a hit at way w the moved set up to w and
 * the old one beyond (a blend, no branch on w). */
static inline __attribute__((always_inline)) gboolean cache_set_lookup32(uint32_t *set, unsigned ways, uint32_t t)
{
  unsigned n = ways / 4;
  __m128i v[CACHE_VECTOR_WAYS_MAX / 4], s[CACHE_VECTOR_WAYS_MAX / 4];
  __m128i *p = cache_vec_load(set, n, v);
  unsigned m = cache_vec_match(v, n, t);
  if (m == 0) {
    cache_vec_push_store(p, n, v[0], t);
    return FALSE;
  }
  cache_vec_push(v, n, t, s);
  __m128i upto = _mm_set1_epi32((int)cache_vec_way(m, n) + 1); /* ways below take s */
#pragma GCC unroll 6
  for (unsigned k = 0; k < n; k++) {
    __m128i way = _mm_setr_epi32((int)(4 * k), (int)(4 * k + 1), (int)(4 * k + 2), (int)(4 * k + 3));
    __m128i take = _mm_cmpgt_epi32(upto, way);
    _mm_store_si128(p + k, _mm_or_si128(_mm_and_si128(take, s[k]), _mm_andnot_si128(take, v[k])));
  }
  return TRUE;
}

/* Fill: nothing changes when t is there; else t goes in front. */
static inline __attribute__((always_inline)) gboolean cache_set_fill32(uint32_t *set, unsigned ways, uint32_t t)
{
  unsigned n = ways / 4;
  __m128i v[CACHE_VECTOR_WAYS_MAX / 4];
  __m128i *p = cache_vec_load(set, n, v);
  if (cache_vec_any(v, n, t) != 0)
    return FALSE;
  cache_vec_push_store(p, n, v[0], t);
  return TRUE;
}

#else /* no SSE2: the same, one way at a time */

static inline __attribute__((always_inline)) gboolean cache_set_lookup32(uint32_t *set, unsigned ways, uint32_t t)
{
  return cache_set_touch32(set, ways, t);
}

static inline __attribute__((always_inline)) gboolean cache_set_fill32(uint32_t *set, unsigned ways, uint32_t t)
{
  return cache_set_fill32_scalar(set, ways, t);
}

#endif

/* The copy for a constant way count: in vectors when it has one, else
 * unrolled.  Folds to one of the two at compile time. */
static inline __attribute__((always_inline)) gboolean cache_set_lookup32_const(uint32_t *set, unsigned ways, uint32_t t)
{
  if (ways % 4 == 0 && ways <= CACHE_VECTOR_WAYS_MAX)
    return cache_set_lookup32(set, ways, t);
  return cache_set_touch32(set, ways, t);
}

static inline __attribute__((always_inline)) gboolean cache_set_fill32_const(uint32_t *set, unsigned ways, uint32_t t)
{
  if (ways % 4 == 0 && ways <= CACHE_VECTOR_WAYS_MAX)
    return cache_set_fill32(set, ways, t);
  return cache_set_fill32_scalar(set, ways, t);
}

/* Fixed-way copies come from cache-ways.h, which sim/cache-ways.sh writes
 * from the machine descriptions: CACHE_WAYS_OF_DEFAULTS lists the defaults
 * of cache.*_ways in base/settings.def (4, 8 and 16), CACHE_WAYS_OF_PRESETS
 * the other way counts of the presets' caches (11, 20 and 24 today:
 * skylake-2s, power9 and uv-16n, westmere-4n).  A multiple of 4 up to
 * CACHE_VECTOR_WAYS_MAX gets a vector copy, any other an unrolled one; a
 * count in neither list takes the loop. */
#define CACHE_FILL_CASE(w) \
  case w:                  \
    return cache_set_fill32_const(c->tags32 + s * (w), (w), t);
#define CACHE_ACCESS_CASE(w) \
  case w:                    \
    return cache_set_access32(c->tags32 + s * (w), (w), t);

/* The presets' other way counts, and any other one in a loop: a second
 * switch behind the first so that the defaults' copies do not pay for it.
 * `s` is the set index. */
static inline __attribute__((always_inline)) gboolean cache_set_fill32_more(Cache *c, uint64_t s, uint32_t t)
{
  switch (c->ways) {
  CACHE_WAYS_OF_PRESETS(CACHE_FILL_CASE)
  default:
    return cache_set_fill32_scalar(c->tags32 + s * c->ways, c->ways, t);
  }
}

/* The same for a lookup; set[0] is tested in each copy, after the way
 * count that gives the set's address. */
static inline __attribute__((always_inline)) gboolean cache_set_access32(uint32_t *set, unsigned ways, uint32_t t)
{
  if (G_LIKELY(set[0] == t))
    return TRUE;
  return cache_set_lookup32_const(set, ways, t);
}

static inline __attribute__((always_inline)) gboolean cache_set_access32_more(Cache *c, uint64_t s, uint32_t t)
{
  switch (c->ways) {
  CACHE_WAYS_OF_PRESETS(CACHE_ACCESS_CASE)
  default: {
    uint32_t *set = c->tags32 + s * c->ways;
    if (set[0] == t)
      return TRUE;
    return cache_set_touch32(set, c->ways, t);
  }
  }
}

/* cache_fill() with the copy for `likely` ways (a constant, 0 for none)
 * tested first.  The switch below tests 8, 16 and 4 in that order whatever
 * the cache, so a caller that knows the usual way count of its level (the
 * default of its setting) passes it: the 4-way L2's lookups and fills took
 * three compares. */
static inline __attribute__((always_inline)) gboolean cache_fill_likely(Cache *c, uint64_t line, unsigned likely)
{
  uint64_t s;
  uint32_t t;
  if (G_UNLIKELY(!cache_set_index(c, line, &s, &t)))
    return cache_fill_wide(c, line);
  if (likely != 0 && G_LIKELY(c->ways == likely))
    return cache_set_fill32_const(c->tags32 + s * likely, likely, t);
  switch (c->ways) {  /* as cache_access() */
  CACHE_WAYS_OF_DEFAULTS(CACHE_FILL_CASE)
  default:
    return cache_set_fill32_more(c, s, t);
  }
}

static inline __attribute__((always_inline)) gboolean cache_fill(Cache *c, uint64_t line)
{
  return cache_fill_likely(c, line, 0);
}

/* cache_access() with the copy for `likely` ways tested first, as
 * cache_fill_likely(). */
static inline __attribute__((always_inline)) gboolean cache_access_likely(Cache *c, uint64_t line, unsigned likely)
{
  uint64_t s;
  uint32_t t;
  if (G_UNLIKELY(!cache_set_index(c, line, &s, &t)))
    return cache_access_wide(c, line);
  if (likely != 0 && G_LIKELY(c->ways == likely))
    return cache_set_access32(c->tags32 + s * likely, likely, t);
  /* The associativities of the defaults and the presets get a copy with
   * the way count fixed; the others the general loop. */
  switch (c->ways) {
  CACHE_WAYS_OF_DEFAULTS(CACHE_ACCESS_CASE)
  default:
    return cache_set_access32_more(c, s, t);
  }
}

static inline __attribute__((always_inline)) gboolean cache_access(Cache *c, uint64_t line)
{
  return cache_access_likely(c, line, 0);
}

#endif
