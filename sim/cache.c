/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache.c - one set-associative cache array: tags and LRU order, no data.
 *
 * Notes on what the model assumes and leaves out:
 *  - A line is named by its line number (physical address >> line shift).
 *    A way holds the line's tag, line >> 6 with 64 sets or more, a power of
 *    two (line >> log2(sets) with fewer, line / sets when the set count is
 *    not a power of two, as in 12 MB, 16-way LLCs with 12288 sets), in 32
 *    bits; the set index is `line & mask` or `line % sets`.  A cache that
 *    meets a tag of 32 bits or more (a machine past 16 TiB of 64-byte
 *    lines) turns wide for good: 64-bit ways holding whole line numbers,
 *    out of line and one way at a time (see cache.h).
 *  - True LRU within a set.  No dirty state, no write-backs, no coherence
 *    state, no pseudo-LRU or re-reference prediction: the levels above decide
 *    what an access costs, this array only says hit or miss.
 *  - The geometry is checked once, in cache_new(); the hot path trusts it.
 *
 * Layout: the tags of a set are contiguous in one flat array and kept in
 * recency order, most recently used first.  A hit on way 0 (the common case
 * for a loop over a line) costs one compare; any other access shifts the ways
 * in front of the hit (or all of them, on a miss) down by one and puts the
 * line at way 0.  Empty ways are always at the tail, so a miss fills an empty
 * way before it evicts a valid line.  That search-and-shift (cache_access) is
 * inline in cache.h, so that the levels of sim/memsys.c make no call per
 * lookup.  The way counts of the settings' defaults and of the presets
 * (cache-ways.h, written from them at build time: 4, 8, 16, 11, 20 and 24
 * today) have a copy with the count fixed: a multiple of four is compared
 * four ways at a time and moved as whole 16-byte vectors, with no branch per
 * way, another count (11) is unrolled in one pass; any other count a loop.  32-bit tags against the 64-bit line numbers kept
 * before (callgrind counts about the same instructions, the vector ones
 * replacing a compare and branch per way): `seq:size=64M,accesses=20M`
 * 0.83 -> 0.75 s user, `random:size=4G,accesses=10M` 5.4 -> 4.8 s (medians
 * of three, alternating), the latter also from the LLC's tag array, now 512
 * KiB instead of 1 MiB of the host's caches.
 *
 * Measured against age stamps (per-set MRU way, global clock, victim = oldest
 * stamp; both give identical hit counts) on 50M-access line streams, gcc -O2,
 * x86-64: MRU hits cost about the same (2.0-2.5 ns vs 1.7-2.3 ns per access),
 * but every access that searches is cheaper with move-to-front: 8M/16-way and
 * 12M/16-way arrays missing on random lines 15-19 ns vs 28-31 ns, a 32K/8-way
 * L1 missing 6 ns vs 8 ns.  Misses dominate the cost of a run, so
 * move-to-front stays, and it needs no stamp array.
 *
 * Source of the rules: cachegrind's cg_sim.c uses the same move-to-front LRU.
 */
#include "config.h"
#include "cache.h"

#include <stdlib.h>
#include <string.h>


Cache *cache_new(const char *name, uint64_t size_bytes, unsigned ways, unsigned line_bytes, GError **error)
{
  g_return_val_if_fail(name != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);

  if (line_bytes == 0 || (line_bytes & (line_bytes - 1)) != 0) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s: line size %u bytes is not a power of two", name, line_bytes);
    return NULL;
  }
  if (ways == 0) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s: a cache needs at least one way", name);
    return NULL;
  }
  uint64_t set_bytes = (uint64_t)ways * line_bytes;
  if (size_bytes == 0 || size_bytes % set_bytes != 0) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s: size %" G_GUINT64_FORMAT " bytes is not a positive multiple of ways x line "
                "(%u x %u = %" G_GUINT64_FORMAT " bytes)",
                name, size_bytes, ways, line_bytes, set_bytes);
    return NULL;
  }
  uint64_t sets = size_bytes / set_bytes;
  if (sets > G_MAXUINT / ways) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s: %" G_GUINT64_FORMAT " sets of %u ways is more lines than can be modelled",
                name, sets, ways);
    return NULL;
  }

  Cache *c = g_new0(Cache, 1);
  c->name = g_strdup(name);
  c->sets = (unsigned)sets;
  c->ways = ways;
  c->set_mask = (sets & (sets - 1)) == 0 ? sets - 1 : CACHE_SETS_DIVIDE;
  c->set_shift = (unsigned)__builtin_ctzll(sets);  /* used only when sets is a power of two */
  c->tag_shift = MIN(c->set_shift, CACHE_TAG_SHIFT);
  void *mem = NULL;
  if (posix_memalign(&mem, CACHE_HOST_LINE, sets * ways * sizeof *c->tags32) != 0)
    g_error("%s: out of host memory for %" G_GUINT64_FORMAT " tags", name, sets * ways);
  c->tags32 = mem;
  c->tag_limit = CACHE_EMPTY32;
  c->line_limit = c->set_mask != CACHE_SETS_DIVIDE && c->tag_shift == CACHE_TAG_SHIFT
                    ? (uint64_t)CACHE_EMPTY32 << CACHE_TAG_SHIFT : 0;
  cache_invalidate_all(c);
  return c;
}

void cache_free(Cache *c)
{
  if (c == NULL)
    return;
  free(c->tags32);
  g_free(c->tags);
  g_free(c->name);
  g_free(c);
}

/* Line of narrow tag `tag` in set `s`: cache_index() undone. */
static uint64_t cache_line_of(const Cache *c, uint64_t tag, uint64_t s)
{
  if (c->set_mask != CACHE_SETS_DIVIDE)  /* s holds the tag_shift bits the tag dropped */
    return (tag << c->tag_shift) | (s & ((UINT64_C(1) << c->tag_shift) - 1));
  return tag * c->sets + s;
}

const void *cache_host_set_any(const Cache *c, uint64_t line, unsigned *bytes)
{
  uint64_t tag, s = cache_index(c, line, &tag);
  if (c->tags32 == NULL) {
    *bytes = c->ways * (unsigned)sizeof *c->tags;
    return c->tags + s * c->ways;
  }
  *bytes = c->ways * (unsigned)sizeof *c->tags32;
  return c->tags32 + s * c->ways;
}

void cache_host_prefetch_any(const Cache *c, uint64_t line)
{
  unsigned bytes;
  const char *set = cache_host_set_any(c, line, &bytes);
  cache_host_prefetch_span(set, bytes);
}

void cache_widen(Cache *c)
{
  if (c->tags32 == NULL)
    return;
  size_t n = (size_t)c->sets * c->ways;
  c->tags = g_new(uint64_t, n);
  for (size_t i = 0; i < n; i++) {
    uint32_t t = c->tags32[i];
    c->tags[i] = t == CACHE_EMPTY32 ? CACHE_EMPTY : cache_line_of(c, t, i / c->ways);
  }
  free(c->tags32);
  c->tags32 = NULL;
  c->tag_limit = 0;
  c->line_limit = 0;
}

gboolean cache_is_wide(const Cache *c)
{
  return c->tags32 == NULL;
}

/* ---- the wide layout: whole line numbers, one way at a time ---- */

static uint64_t *cache_set64(const Cache *c, uint64_t line)
{
  uint64_t tag;
  return c->tags + cache_index(c, line, &tag) * c->ways;
}

static unsigned cache_set_find64(const uint64_t *set, unsigned ways, uint64_t line)
{
  unsigned w = 0;
  for (; w < ways; w++)
    if (set[w] == line)
      break;
  return w;
}

/* As cache_set_touch32(), which leaves way 0 to its caller. */
static gboolean cache_set_touch64(uint64_t *set, unsigned ways, uint64_t line)
{
  uint64_t prev = set[0];
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

gboolean cache_access_wide(Cache *c, uint64_t line)
{
  cache_widen(c);
  uint64_t *set = cache_set64(c, line);
  return set[0] == line || cache_set_touch64(set, c->ways, line);
}

gboolean cache_fill_wide(Cache *c, uint64_t line)
{
  cache_widen(c);
  uint64_t *set = cache_set64(c, line);
  if (cache_set_find64(set, c->ways, line) < c->ways)
    return FALSE;
  cache_set_touch64(set, c->ways, line);
  return TRUE;
}

/* ---- both layouts ---- */

gboolean cache_contains(const Cache *c, uint64_t line)
{
  uint64_t tag, s = cache_index(c, line, &tag);
  if (c->tags32 == NULL)
    return cache_set_find64(c->tags + s * c->ways, c->ways, line) < c->ways;
  /* A tag that does not fit was never stored in the narrow array. */
  return tag < c->tag_limit && cache_set_find32(c->tags32 + s * c->ways, c->ways, (uint32_t)tag) < c->ways;
}

void cache_invalidate(Cache *c, uint64_t line)
{
  uint64_t tag, s = cache_index(c, line, &tag);
  unsigned ways = c->ways;
  /* Close the gap and put the empty way at the tail. */
  if (c->tags32 == NULL) {
    uint64_t *set = c->tags + s * ways;
    unsigned w = cache_set_find64(set, ways, line);
    if (w == ways)
      return;
    memmove(set + w, set + w + 1, (ways - 1 - w) * sizeof *set);
    set[ways - 1] = CACHE_EMPTY;
    return;
  }
  if (tag >= c->tag_limit)
    return;
  uint32_t *set = c->tags32 + s * ways;
  unsigned w = cache_set_find32(set, ways, (uint32_t)tag);
  if (w == ways)
    return;
  memmove(set + w, set + w + 1, (ways - 1 - w) * sizeof *set);
  set[ways - 1] = CACHE_EMPTY32;
}

void cache_invalidate_all(Cache *c)
{
  size_t n = (size_t)c->sets * c->ways;
  if (c->tags32 == NULL) {
    for (size_t i = 0; i < n; i++)
      c->tags[i] = CACHE_EMPTY;
  } else {
    memset(c->tags32, 0xff, n * sizeof *c->tags32);  /* CACHE_EMPTY32 */
  }
}

unsigned cache_sets(const Cache *c)
{
  return c->sets;
}

unsigned cache_ways(const Cache *c)
{
  return c->ways;
}
