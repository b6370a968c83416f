/*
 * cache.c - one set-associative cache array: tags and LRU order, no data.
 *
 * Notes on what the model assumes and leaves out:
 *  - A line is named by its line number (physical address >> line shift); the
 *    whole line number is kept as the tag, so no tag/index split is needed and
 *    the set count need not be a power of two (12 MB, 16-way LLCs have 12288
 *    sets).  The set index is `line & mask` when the set count is a power of
 *    two and `line % sets` otherwise.
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
 * lookup, and has a fully unrolled copy for 4, 8 and 16 ways and, behind
 * those, for 11, 20 and 24: the associativities of the presets.  The 4, 8 and
 * 16-way copies search first and then move (a miss moves the set 16 bytes at
 * a time); the others search and shift in one pass.
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

#include <string.h>

G_DEFINE_QUARK(mmusim-sim-error-quark, mmusim_sim_error)

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
  c->tags = g_new(uint64_t, sets * ways);
  cache_invalidate_all(c);
  return c;
}

void cache_free(Cache *c)
{
  if (c == NULL)
    return;
  g_free(c->tags);
  g_free(c->name);
  g_free(c);
}

gboolean cache_contains(const Cache *c, uint64_t line)
{
  return cache_set_find(cache_set_of(c, line), c->ways, line) < c->ways;
}

void cache_invalidate(Cache *c, uint64_t line)
{
  uint64_t *set = cache_set_of(c, line);
  unsigned w = cache_set_find(set, c->ways, line);
  if (w == c->ways)
    return;
  /* Close the gap and put the empty way at the tail. */
  memmove(set + w, set + w + 1, (c->ways - 1 - w) * sizeof *set);
  set[c->ways - 1] = CACHE_EMPTY;
}

void cache_invalidate_all(Cache *c)
{
  size_t n = (size_t)c->sets * c->ways;
  for (size_t i = 0; i < n; i++)
    c->tags[i] = CACHE_EMPTY;
}

unsigned cache_sets(const Cache *c)
{
  return c->sets;
}

unsigned cache_ways(const Cache *c)
{
  return c->ways;
}
