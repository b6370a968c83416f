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
 * Returns TRUE on a hit.  Updates LRU either way. */
gboolean cache_access(Cache *c, uint64_t line);
/* TRUE if present; changes nothing. */
gboolean cache_contains(const Cache *c, uint64_t line);
/* Host prefetch of the set the line maps to (no effect on the model). */
void cache_host_prefetch(const Cache *c, uint64_t line);
/* Insert without counting as a use if already present (prefetch fill).
 * TRUE if the line was inserted, FALSE if it was there already. */
gboolean cache_fill(Cache *c, uint64_t line);
void cache_invalidate(Cache *c, uint64_t line);
void cache_invalidate_all(Cache *c);
unsigned cache_sets(const Cache *c);
unsigned cache_ways(const Cache *c);

#endif
