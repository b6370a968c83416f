/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memsys.c - the cache hierarchy behind one CPU: private L1I, L1D and L2, the
 * shared LLC of its node, an L2 prefetcher and DRAM.
 *
 * What it models: which level serves a reference, and what that level costs
 * when idle.  A reference walks down L1 (L1I for instruction fetches, L1D for
 * everything else, page-walk reads included), L2, LLC, DRAM and fills every
 * level it missed on the way (non-exclusive: nothing is invalidated on the way
 * back, and an LLC eviction does not back-invalidate the private levels).
 * Stores are write-allocate and are looked up like loads.
 *
 * Latency returned: the load-to-use latency of the level that served the
 * reference, not a sum over the levels it passed (vendor guides quote each
 * level's figure that way, mmu-facts section 7):
 *   L1 hit   cache.l1d_hit_cycles (cache.l1i_hit_cycles for instruction fetches)
 *   L2 hit   cache.l2_hit_cycles
 *   LLC hit  cache.llc_hit_cycles
 *   DRAM     cache.llc_hit_cycles + ceil(dram.latency_ns * cpu.freq_mhz / 1000),
 *            or cache.l2_hit_cycles + the same DRAM cycles without an LLC.
 *
 * With a Dram attached (memsys_attach_dram, as every machine does), the DRAM
 * part is sim/dram.c's: idle latency by the distance to the page's node plus
 * queueing at loaded controllers and links, timed by the CPU's clock.
 *
 * Left out: coherence between the private levels of different CPUs, dirty
 * lines and the bandwidth of write-backs, demand MSHR occupancy and
 * queueing.  Overlap of independent misses is the core model's business
 * (sim/cpu.c).
 *
 * Prefetch timing (cache.prefetch_model).  timed, the default, after
 * ChampSim's L2 (src/cache.cc: a prefetch waits in the PQ for an MSHR,
 * fills when its miss returns, and a demand to a line in the MSHR merges
 * with it): a prefetch takes one of cache.prefetch_slots slots, or is
 * dropped when all are in flight (prefetch_drops); it fills the L2 and the
 * LLC at once, as the ideal model does, but its line arrives only after
 * the LLC hit cycles, or the DRAM latency with the queueing of the moment
 * (dram_prefetch), so a prefetch issued while memory is busy arrives late;
 * a reference that hits the L2 (or the LLC) on a line still in flight
 * waits for the rest of it (prefetch_late), and its latency is then the
 * larger of the level's and the rest.  Times are the CPU's clock when the
 * prefetch is issued and when the reference looks up, as DRAM's queueing
 * takes them.  Left out: demand misses taking the same slots (the core's
 * cpu.mshrs bound those), an L1 hit on a line whose prefetch a first
 * reference already waited for (it is there for the core from then on).
 * ideal: prefetches are timely, fill at once and cost no cycles; lines
 * they bring from DRAM still load the Dram's queues.  Without a clock
 * (memsys_attach_dram not called: unit tests of the caches) prefetches
 * are ideal.
 *
 * Prefetchers (cache.prefetcher), after the Intel Optimization Reference
 * Manual's L2 streamer and adjacent-line prefetcher:
 *   nextline  every data L2 miss on line X prefetches line X+1.
 *   stream    a data L2 miss that belongs to no stream starts one; a second
 *             miss next to it (+1 or -1 line) fixes its direction, and from
 *             then on the stream keeps cache.prefetch_degree lines ahead of
 *             demand.  It advances on a data L2 miss inside its window and on
 *             a data L2 hit on a line it prefetched itself (the miss it
 *             removed), so a covered stream keeps running instead of missing
 *             once every degree + 1 lines.  32 streams: up to 16 pages
 *             tracked at once, fully associative with LRU replacement, each
 *             with one forward and one backward stream; a new stream in a
 *             tracked page replaces the less recently used of its two, a
 *             stream in a new page takes the least recently used page.
 * Neither crosses a 4K physical page boundary unless cache.prefetch_cross_page
 * is set: a line beyond the page of the triggering reference is dropped and
 * counted in prefetch_page_stops (once per line), and streams are then tracked
 * per 4K page, so a stream that runs into the next page is detected anew there.
 */
#include "config.h"
#include "memsys.h"
#include "memsys-hot.h"

#include <math.h>
#include <string.h>

/* ---- the prefetcher registry (base/registry.h) ---------------------------- */

static const MemPrefetcherRow pf_none = {
  .name = "none",
  .help = "no prefetch: every line comes on demand",
  .source = "the prefetchers off (BIOS setting; MSR 0x1a4 on Intel cores)",
  .rule = MEMSYS_PF_NONE,
};

static const MemPrefetcherRow pf_nextline = {
  .name = "nextline",
  .help = "every data L2 miss on line X prefetches line X+1",
  .source = "Intel Optimization Reference Manual: the adjacent-line (spatial) prefetcher",
  .rule = MEMSYS_PF_NEXTLINE,
};

static const MemPrefetcherRow pf_stream = {
  .name = "stream",
  .help = "ascending and descending streams per 4K page, cache.prefetch_degree lines ahead",
  .source = "Intel Optimization Reference Manual: the L2 streamer",
  .rule = MEMSYS_PF_STREAM,
};

/* In the order of cache.prefetcher's choices in settings.def. */
static const MemPrefetcherRow *const prefetchers[] = { &pf_none, &pf_nextline, &pf_stream };

const MemPrefetcherRow *const *memsys_prefetchers(unsigned *n)
{
  *n = G_N_ELEMENTS(prefetchers);
  return prefetchers;
}

static unsigned memsys_log2(uint64_t pow2)
{
  unsigned s = 0;
  while ((1ull << s) < pow2)
    s++;
  return s;
}

static void memsys_stream_reset(MemHier *h)
{
  memset(h->streams, 0, sizeof h->streams);
  for (unsigned i = 0; i < MEMSYS_STREAM_SETS; i++)
    for (unsigned w = 0; w < MEMSYS_STREAM_WAYS; w++)
      h->streams[i].way[w].win_lo = h->streams[i].way[w].hit_lo = UINT64_MAX;  /* no line is UINT64_MAX */
  for (unsigned i = 0; i < MEMSYS_STREAM_SETS; i++) {
    h->stream_page[i] = UINT64_MAX;
    h->stream_chain[i] = MEMSYS_STREAM_NONE;
  }
  memset(h->stream_bucket, MEMSYS_STREAM_NONE, sizeof h->stream_bucket);
  /* Entries 0 .. stream_pages - 1 from least to most recently used, so that
   * the never-used ones are taken in index order. */
  unsigned n = h->stream_pages;
  for (unsigned i = 0; i < n; i++) {
    h->stream_older[i] = (uint8_t)(i == 0 ? n - 1 : i - 1);
    h->stream_newer[i] = (uint8_t)(i + 1 == n ? 0 : i + 1);
  }
  h->stream_lru = 0;
  h->stream_hot = h->stream_hot_first = &h->streams[n - 1].way[0];  /* newest entry, mru 0 */
  h->stream_steady_x = MEMSYS_STREAM_UNSTEADY;
}

/* A cache built from the settings that give its geometry.  cache_new()
 * checks the numbers too, for callers without settings; here a bad geometry
 * is reported by the settings at fault and where each value came from, the
 * one set last first. */
static Cache *cache_from_settings(const Settings *s, const char *name, SettingId size_id, SettingId ways_id,
                                  GError **error)
{
  uint64_t size = (uint64_t)settings_int(s, size_id);
  uint64_t ways = (uint64_t)settings_int(s, ways_id);
  uint64_t line = (uint64_t)settings_int(s, SET_CACHE_LINE_BYTES);
  if (line & (line - 1)) {
    g_autofree char *where = settings_blame(s, SET_CACHE_LINE_BYTES);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s is not a power of two: every cache indexes its sets by address bits; "
                "give cache.line_bytes a power of two such as 64 or 128", where);
    return NULL;
  }
  uint64_t set_bytes = ways * line;
  if (size % set_bytes != 0) {
    SettingId ids[] = { size_id, ways_id, SET_CACHE_LINE_BYTES };
    SettingId fault = settings_latest(s, ids, G_N_ELEMENTS(ids));
    g_autofree char *size_where = settings_blame(s, size_id);
    g_autofree char *ways_where = settings_blame(s, ways_id);
    g_autofree char *line_where = settings_blame(s, SET_CACHE_LINE_BYTES);
    g_autofree char *fix = NULL;
    if (fault == ways_id && size % line == 0)
      fix = g_strdup_printf("give %s a number that divides %" G_GUINT64_FORMAT ", the lines in %s",
                            settings_def(ways_id)->name, size / line, settings_str(s, size_id));
    else
      fix = g_strdup_printf("give %s a multiple of %" G_GUINT64_FORMAT " bytes", settings_def(size_id)->name,
                            set_bytes);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s: %s is not a multiple of %s x %s = %" G_GUINT64_FORMAT " bytes: %s",
                name, size_where, ways_where, line_where, set_bytes, fix);
    return NULL;
  }
  return cache_new(name, size, (unsigned)ways, (unsigned)line, error);
}

Cache *memsys_llc_new(const Settings *s, GError **error)
{
  if (settings_int(s, SET_CACHE_LLC_SIZE) == 0)
    return NULL;
  return cache_from_settings(s, "LLC", SET_CACHE_LLC_SIZE, SET_CACHE_LLC_WAYS, error);
}

MemHier *memsys_new(const Settings *s, Cache *llc, Counters *ctr, GError **error)
{
  g_return_val_if_fail(s != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);

  unsigned line_bytes = (unsigned)settings_int(s, SET_CACHE_LINE_BYTES);
  g_autoptr(Cache) l1i = cache_from_settings(s, "L1I", SET_CACHE_L1I_SIZE, SET_CACHE_L1I_WAYS, error);
  if (l1i == NULL)
    return NULL;
  g_autoptr(Cache) l1d = cache_from_settings(s, "L1D", SET_CACHE_L1D_SIZE, SET_CACHE_L1D_WAYS, error);
  if (l1d == NULL)
    return NULL;
  g_autoptr(Cache) l2 = cache_from_settings(s, "L2", SET_CACHE_L2_SIZE, SET_CACHE_L2_WAYS, error);
  if (l2 == NULL)
    return NULL;

  const char *pf_name = settings_str(s, SET_CACHE_PREFETCHER);
  int pf = registry_find(REGISTRY_ROWS(prefetchers), G_N_ELEMENTS(prefetchers), pf_name);
  if (pf < 0) {
    registry_set_unknown(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "setting 'cache.prefetcher'",
                         REGISTRY_ROWS(prefetchers), G_N_ELEMENTS(prefetchers), pf_name);
    return NULL;
  }

  MemHier *h = g_new0(MemHier, 1);
  h->l1i = g_steal_pointer(&l1i);
  h->l1d = g_steal_pointer(&l1d);
  h->l2 = g_steal_pointer(&l2);
  h->llc = llc;
  h->ctr = ctr != NULL ? ctr : &h->own_ctr;
  h->line_shift = memsys_log2(line_bytes);  /* a power of two: cache_new checked */
  h->page_line_shift = line_bytes < MEMSYS_PREFETCH_PAGE_BYTES
                         ? memsys_log2(MEMSYS_PREFETCH_PAGE_BYTES / line_bytes) : 0;

  uint32_t l1i_cycles = (uint32_t)settings_int(s, SET_CACHE_L1I_HIT_CYCLES);
  uint32_t l1d_cycles = (uint32_t)settings_int(s, SET_CACHE_L1D_HIT_CYCLES);
  h->l2_cycles = (uint32_t)settings_int(s, SET_CACHE_L2_HIT_CYCLES);
  h->llc_cycles = llc != NULL ? (uint32_t)settings_int(s, SET_CACHE_LLC_HIT_CYCLES) : 0;
  /* The small subtraction keeps a product that is whole in decimal from
   * rounding up: 33.2 ns at 7500 MHz is 249 cycles, 249.00000000000003 in
   * binary floating point. */
  double dram = settings_double(s, SET_DRAM_LATENCY_NS) * settings_double(s, SET_CPU_FREQ_MHZ) / 1000.0;
  h->dram_base = llc != NULL ? h->llc_cycles : h->l2_cycles;
  h->dram_cycles = h->dram_base + (uint32_t)ceil(dram - 1e-9);

  h->prefetcher = prefetchers[pf]->rule;
  h->prefetch_degree = settings_int(s, SET_CACHE_PREFETCH_DEGREE);
  h->prefetch_cross_page = settings_bool(s, SET_CACHE_PREFETCH_CROSS_PAGE);
  h->page_bits = h->prefetch_cross_page ? 0 : ~((UINT64_C(1) << h->page_line_shift) - 1);
  h->stream_pages = (unsigned)settings_int(s, SET_CACHE_PREFETCH_PAGES); /* <= MEMSYS_STREAM_SETS (settings.def) */
  h->pf_slots = (unsigned)settings_int(s, SET_CACHE_PREFETCH_SLOTS);
  h->pf_line = g_new0(uint64_t, h->pf_slots);
  h->pf_ready = g_new0(uint64_t, h->pf_slots);
  h->pf_want_timed = strcmp(settings_str(s, SET_CACHE_PREFETCH_MODEL), "timed") == 0;
  memsys_stream_reset(h);

  uint64_t *c = h->ctr->c;
  gboolean streams = h->prefetcher == MEMSYS_PF_STREAM;
  h->path[MREQ_LOAD] = (MemPath){ h->l1d, l1d_cycles, TRUE, streams, &c[CTR_L1_DCACHE_LOADS], &c[CTR_L1_DCACHE_LOAD_MISSES] };
  h->path[MREQ_STORE] = (MemPath){ h->l1d, l1d_cycles, TRUE, streams, &c[CTR_L1_DCACHE_STORES], &c[CTR_L1_DCACHE_STORE_MISSES] };
  h->path[MREQ_IFETCH] = (MemPath){ h->l1i, l1i_cycles, FALSE, FALSE, &h->sink, &c[CTR_L1_ICACHE_LOAD_MISSES] };
  h->path[MREQ_WALK] = (MemPath){ h->l1d, l1d_cycles, FALSE, FALSE, &h->sink, &h->sink };
  return h;
}

void memsys_attach_dram(MemHier *h, Dram *d, unsigned node, const uint64_t *clock)
{
  g_return_if_fail(h != NULL && (d == NULL || clock != NULL));
  h->dram = d;
  h->node = node;
  h->clock = clock;
  h->pf_timed = h->pf_want_timed && clock != NULL;
}

void memsys_free(MemHier *h)
{
  if (h == NULL)
    return;
  cache_free(h->l1i);
  cache_free(h->l1d);
  cache_free(h->l2);
  g_free(h->pf_line);
  g_free(h->pf_ready);
  g_free(h);
}

/* ---- prefetcher ---------------------------------------------------------- */

/* The prefetched line from DRAM when dram_prefetch_open() did not take it:
 * out of line, so that the prefetch loop computes no arguments for it. */
__attribute__((noinline)) void memsys_prefetch_dram(MemHier *h, uint64_t line)
{
  dram_prefetch(h->dram, h->node, line << h->line_shift, *h->clock);
}

/* A prefetch of `line` in the timed model (see the top of this file):
 * nothing when the L2 holds it, dropped when every slot is in flight, else
 * filled with the time it arrives in a free slot. */
__attribute__((noinline)) void memsys_prefetch_timed(MemHier *h, uint64_t line)
{
  if (cache_contains(h->l2, line))
    return;
  uint64_t now = *h->clock, busy = 0;
  unsigned slot = h->pf_slots;
  for (unsigned i = 0; i < h->pf_slots; i++) {
    if (h->pf_ready[i] <= now) {
      if (slot == h->pf_slots)
        slot = i;
    } else {
      busy = MAX(busy, h->pf_ready[i]);
    }
  }
  if (slot == h->pf_slots) {
    h->ctr->c[CTR_PREFETCH_DROPS]++;
    return;
  }
  cache_fill(h->l2, line);
  uint32_t cycles;
  if (h->llc != NULL && !cache_fill(h->llc, line))
    cycles = h->llc_cycles;
  else if (h->dram != NULL)
    cycles = h->dram_base + dram_prefetch(h->dram, h->node, line << h->line_shift, now);
  else
    cycles = h->dram_cycles;
  h->pf_line[slot] = line;
  h->pf_ready[slot] = now + cycles;
  h->pf_busy_until = MAX(busy, now + cycles);
  h->ctr->c[CTR_PREFETCHES]++;
}

/* A reference that found `line` in the L2 or the LLC, at `cycles`, while
 * timed prefetches are in flight: if its line is one of them, it waits for
 * the rest. */
__attribute__((noinline)) uint32_t memsys_prefetch_wait(MemHier *h, uint64_t line, uint32_t cycles)
{
  uint64_t now = *h->clock;
  for (unsigned i = 0; i < h->pf_slots; i++)
    if (h->pf_line[i] == line && h->pf_ready[i] > now) {
      h->ctr->c[CTR_PREFETCH_LATE]++;
      return (uint32_t)MAX((uint64_t)cycles, h->pf_ready[i] - now);
    }
  return cycles;
}

/* The lines a stream that has seen one miss, line st->last, may match: its
 * neighbours and itself, never outside the 4K page of st->last unless
 * prefetches may cross pages; no hit while its direction is open.  A
 * stream with a direction gets its window in memsys_stream_follow_dir_any()
 * (sim/memsys-hot.h). */
static inline void memsys_stream_window_first(const MemHier *h, MemStream *st)
{
  /* x - 1 unless x is the first line of its page, x + 1 unless it is the
   * last; the bits of a line within its page are ~page_bits, every bit
   * when prefetches cross pages (then x - 1 unless x is line 0).  No
   * branch on page_bits and no clamps: a random run's every data L2 miss
   * starts a stream. */
  uint64_t x = st->last, in_page = ~h->page_bits;
  uint64_t lo = x - ((x & in_page) != 0), hi = x + ((~x & in_page) != 0);
  st->win_lo = lo;
  st->win_span = hi - lo;
  st->hit_lo = UINT64_MAX;
  st->hit_span = 0;
}

/* Entry v now tracks `page`: move it to that page's chain. */
static inline void memsys_stream_retag(MemHier *h, unsigned v, uint64_t page)
{
  if (h->stream_page[v] != UINT64_MAX) {
    uint8_t *link = &h->stream_bucket[h->stream_hashed[v]];
    while (*link != v)
      link = &h->stream_chain[*link];
    *link = h->stream_chain[v];
  }
  h->stream_page[v] = page;
  unsigned b = memsys_stream_hash(page);
  h->stream_hashed[v] = (uint8_t)b;
  h->stream_chain[v] = h->stream_bucket[b];
  h->stream_bucket[b] = (uint8_t)v;
}

/* A way for a new stream in `line`'s page, whose entry is xi
 * (memsys_stream_index, or MEMSYS_STREAM_SETS when the page is not
 * tracked): a free way of that entry, else its least recently used.  A
 * page not tracked takes the least recently used entry and drops its
 * streams; its way 0 is returned as it is, because both callers set every
 * field of the way they get (a random run's data L2 misses nearly all come
 * here: clearing that way and searching the entry for a free one were a
 * third of this function). */
static inline __attribute__((always_inline)) MemStream *memsys_stream_alloc(MemHier *h, uint64_t line, unsigned xi)
{
  MemStreamSet *set;
  unsigned v;
  if (xi < MEMSYS_STREAM_SETS) {
    set = &h->streams[xi];
    memsys_stream_touch(h, xi);
    v = set->mru == 0 ? 1 : 0;
    for (unsigned w = 0; w < MEMSYS_STREAM_WAYS; w++)
      if (!set->way[w].valid) {
        v = w;
        break;
      }
  } else {
    unsigned e = h->stream_lru;
    h->stream_lru = h->stream_newer[e];  /* memsys_stream_touch(h, e) */
    set = &h->streams[e];
    memsys_stream_retag(h, e, line >> h->page_line_shift);
    for (unsigned w = 1; w < MEMSYS_STREAM_WAYS; w++) {
      set->way[w].valid = FALSE;
      set->way[w].win_lo = set->way[w].hit_lo = UINT64_MAX;
      set->way[w].win_span = set->way[w].hit_span = 0;
    }
    /* The tail below with way 0, a constant (a random run's every miss). */
    set->mru = 0;
    h->stream_hot = h->stream_hot_first = &set->way[0];
    return &set->way[0];
  }
  set->mru = v;
  h->stream_hot = &set->way[v];
  h->stream_hot_first = &set->way[0];
  return &set->way[v];
}

/* Stream st follows demand line x: prefetch ahead, and refile the stream
 * under x's page if that page belongs to another set (only possible when
 * prefetches may cross pages). */
static __attribute__((noinline)) void memsys_stream_refile(MemHier *h, MemStream *st, uint64_t x)
{
  MemStream moved = *st;
  st->valid = FALSE;
  st->win_lo = st->hit_lo = UINT64_MAX;
  st->win_span = st->hit_span = 0;
  *memsys_stream_alloc(h, x, memsys_stream_index(h, x >> h->page_line_shift)) = moved;
}

/* A stream that may leave its page (cache.prefetch_cross_page): follow, as
 * one that stays does (page_bits is 0: x's page is every line), and refile
 * it when x is in another page.  Out of line, so that the common copies
 * keep no flag across the prefetch loop (it was spilled around the loop's
 * call, with another register); the step inline here, as in the common
 * copies (a call to memsys_stream_follow_far() cost 20 instructions an
 * access of a sequential run). */
__attribute__((noinline)) void memsys_stream_follow_cross(MemHier *h, MemStream *st, uint64_t x)
{
  gboolean moves = (st->last >> h->page_line_shift) != (x >> h->page_line_shift);
  if (st->dir > 0)
    memsys_stream_follow_dir_any(h, st, x, 1);
  else
    memsys_stream_follow_dir_any(h, st, x, -1);
  if (G_UNLIKELY(moves))
    memsys_stream_refile(h, st, x);
}

/* The first n of the lines memsys_stream_follow_dir_any() issues from
 * frontier f, in the page [page_lo, page_hi] (a stream that starts, or that
 * demand overtook, or one that may cross pages, whose page is every line);
 * returns the frontier, which stops at line 0 descending. */
__attribute__((noinline)) uint64_t memsys_stream_issue_ahead(MemHier *h, uint64_t f, uint64_t page_lo,
                                                             uint64_t page_hi, int64_t n, int dir)
{
  for (; n > 0; n--) {
    if (dir < 0 && f == 0)
      break;
    f += (uint64_t)(int64_t)dir;
    if (f >= page_lo && f <= page_hi)
      memsys_prefetch_line(h, f);
    else
      h->ctr->c[CTR_PREFETCH_PAGE_STOPS]++;
  }
  return f;
}

/* memsys_stream_follow_dir() of any step but the steady one: a stream that
 * starts, that demand overtook, or that reaches the end of its page. */
__attribute__((noinline)) void memsys_stream_follow_far(MemHier *h, MemStream *st, uint64_t x, int dir)
{
  if (dir > 0)
    memsys_stream_follow_dir_any(h, st, x, 1);
  else
    memsys_stream_follow_dir_any(h, st, x, -1);
}

/* A data L2 miss on line x inside stream st's window: fix its direction
 * if it had none, and follow.  Out of line: a random run's misses nearly
 * all start a stream instead, and memsys_stream_miss() stays small enough
 * to be inline in memsys_access(). */
static __attribute__((noinline)) void memsys_stream_advance(MemHier *h, MemStream *st, uint64_t x)
{
  if (st->dir == 0) {
    if (x == st->last)  /* the same line again: nothing learnt */
      return;
    st->dir = x > st->last ? 1 : -1;
    st->frontier = x;
  }
  memsys_stream_follow(h, st, x);
}

/* A data L2 miss on line x: advance the stream it belongs to, or start one. */
static inline __attribute__((always_inline)) void memsys_stream_miss(MemHier *h, uint64_t x)
{
  h->stream_steady_x = MEMSYS_STREAM_UNSTEADY;  /* the streams change below */
  unsigned xi;
  MemStream *st = memsys_stream_find(h, x, FALSE, &xi);
  if (st == NULL) {
    /* Field by field: a compound literal compiles to `rep stos` here, which
     * cost 10 ns per random miss. */
    st = memsys_stream_alloc(h, x, xi);
    st->last = x;
    st->frontier = x;
    st->dir = 0;
    st->valid = TRUE;
    memsys_stream_window_first(h, st);
    return;
  }
  memsys_stream_advance(h, st, x);
}

static inline __attribute__((always_inline)) void memsys_prefetch_on_miss(MemHier *h, uint64_t x)
{
  switch (h->prefetcher) {
  case MEMSYS_PF_NONE:
    break;
  case MEMSYS_PF_NEXTLINE:
    if (memsys_same_page(h, x + 1, x))
      memsys_prefetch_line(h, x + 1);
    else
      h->ctr->c[CTR_PREFETCH_PAGE_STOPS]++;
    break;
  case MEMSYS_PF_STREAM:
    memsys_stream_miss(h, x);
    break;
  }
}

/* ---- the reference path -------------------------------------------------- */

/* A reference DRAM serves, by dram_access_open() or out of line. */
static __attribute__((noinline)) uint32_t memsys_dram_any(MemHier *h, uint64_t pa)
{
  return dram_access(h->dram, h->node, pa, *h->clock, h->ctr);
}

static inline __attribute__((always_inline)) uint32_t memsys_dram(MemHier *h, uint64_t pa)
{
  uint32_t cycles;
  if (G_LIKELY(dram_access_open(h->dram, *h->clock, h->ctr, &cycles)))
    return cycles;
  return memsys_dram_any(h, pa);
}

/* The part of a reference below the L2 (p: its path), inline in the
 * callers below; *served gets the level that served it.  `walk` (a
 * constant): p is the walks' path, which does not train the prefetcher. */
static inline __attribute__((always_inline)) uint32_t memsys_beyond_l2(MemHier *h, uint64_t pa, uint64_t line,
                                                                       const MemPath *p, MemLevel *served,
                                                                       gboolean walk)
{
  uint32_t cycles;
  h->ctr->c[CTR_L2_MISSES]++;
  *served = MEM_DRAM;
  if (h->llc != NULL) {
    h->ctr->c[CTR_LLC_LOADS]++;
    if (cache_access_likely(h->llc, line, MEMSYS_LLC_WAYS_USUAL)) {
      *served = MEM_LLC;
    } else {
      h->ctr->c[CTR_LLC_LOAD_MISSES]++;
    }
  }
  if (*served == MEM_LLC)
    cycles = G_UNLIKELY(memsys_prefetch_busy(h)) ? memsys_prefetch_wait(h, line, h->llc_cycles) : h->llc_cycles;
  else if (h->dram != NULL)
    cycles = h->dram_base + memsys_dram(h, pa);
  else
    cycles = h->dram_cycles;
  if (!walk && p->trains)
    memsys_prefetch_on_miss(h, line);
  return cycles;
}

uint64_t memsys_access_beyond_l2(MemHier *h, uint64_t pa, MemReqKind kind)
{
  MemLevel served;
  uint32_t cycles = memsys_beyond_l2(h, pa, pa >> h->line_shift, &h->path[kind], &served, FALSE);
  return (uint64_t)served << 32 | cycles;
}

/* The steps of a reference of any kind but a walk's, inline in the two
 * copies below. */
static inline __attribute__((always_inline)) uint64_t memsys_access_kind(MemHier *h, uint64_t pa, MemReqKind kind)
{
  const MemPath *p = &h->path[kind];
  uint64_t line = pa >> h->line_shift;
  MemLevel served;
  uint32_t cycles;

  (*p->lookups)++;
  if (!memsys_near(h, p, line, p->misses, &served, &cycles, FALSE))
    cycles = memsys_beyond_l2(h, pa, line, p, &served, FALSE);
  return (uint64_t)served << 32 | cycles;
}

uint64_t memsys_access_any(MemHier *h, uint64_t pa, MemReqKind kind)
{
  g_return_val_if_fail((unsigned)kind <= MREQ_WALK, 0);
  return memsys_access_kind(h, pa, kind);
}

/* A load's path is a constant offset into h. */
uint64_t memsys_access_load(MemHier *h, uint64_t pa)
{
  return memsys_access_kind(h, pa, MREQ_LOAD);
}

/* memsys_access_any() of a walk, whose path is known: its lookups and L1
 * misses count nowhere (MemHier.sink), and it neither follows nor trains a
 * stream, so none of that is loaded or tested. */
uint64_t memsys_access_walk(MemHier *h, uint64_t pa)
{
  const MemPath *p = &h->path[MREQ_WALK];
  uint64_t line = pa >> h->line_shift;
  MemLevel served;
  uint32_t cycles;

  if (!memsys_near(h, p, line, NULL, &served, &cycles, TRUE))
    cycles = memsys_beyond_l2(h, pa, line, p, &served, TRUE);
  return (uint64_t)served << 32 | cycles;
}

/* ---- lines the kernel writes ------------------------------------------- */

/* Lines ahead whose simulated set memsys_fill_cache() prefetches into the
 * host's caches (host only, no effect on the model). */
#define MEMSYS_FILL_HOST_AHEAD 8

struct MemFillScratch {
  /* Per set: pass << 8 | lines it keeps in that pass (cache.*_ways is at
   * most 128: a byte).  32 bits, not 64: an LLC's array is walked for
   * every line of a clear and should stay in the host's caches. */
  uint32_t *set_kept;
  unsigned n_sets;
  uint32_t pass;       /* a set's count is of this pass when its high bits are pass */
  uint64_t *kept;      /* the lines kept, the last referenced first */
  uint64_t kept_cap;
};
#define MEMSYS_FILL_PASS_MAX (UINT32_MAX >> 8)

MemFillScratch *memsys_fill_scratch_new(void)
{
  return g_new0(MemFillScratch, 1);
}

void memsys_fill_scratch_free(MemFillScratch *sc)
{
  if (sc == NULL)
    return;
  g_free(sc->set_kept);
  g_free(sc->kept);
  g_free(sc);
}

/* One pass of memsys_fill_cache(), its fields in locals (stores to kept[]
 * would otherwise reload them on every line). */
typedef struct {
  const Cache *c;
  uint32_t *set_kept;
  uint64_t *kept;
  uint64_t n_kept;
  uint32_t pass, ways;
  unsigned full, sets;
} MemFillPass;

/* Line `line`, met walking the fills from their end: kept when its set
 * keeps fewer than `ways` lines so far (the LRU order of a set after a run
 * of references holds the last `ways` distinct lines that map to it).
 * TRUE when every set is full: nothing met earlier can stay. */
static inline gboolean memsys_fill_keep(MemFillPass *p, uint64_t line)
{
  uint64_t tag;
  uint64_t s = cache_index(p->c, line, &tag);
  uint32_t v = p->set_kept[s];
  uint32_t k = v >> 8 == p->pass ? v & 0xff : 0;
  if (k == p->ways)
    return FALSE;
  p->kept[p->n_kept++] = line;
  p->set_kept[s] = p->pass << 8 | ++k;
  if (k == p->ways)
    p->full++;
  return p->full == p->sets;
}

/* memsys_fill() in one cache: the lines that stay, found walking back from
 * the last one referenced, then referenced in their order.  `lines`: how
 * many the fills reference. */
static void memsys_fill_cache(Cache *c, unsigned line_shift, const MemFill *fills, unsigned n, uint64_t lines,
                              MemFillScratch *sc)
{
  unsigned sets = cache_sets(c), ways = cache_ways(c);
  if (sc->n_sets < sets) {
    g_free(sc->set_kept);
    sc->set_kept = g_new0(uint32_t, sets);
    sc->n_sets = sets;
    sc->pass = 0;
  }
  if (++sc->pass > MEMSYS_FILL_PASS_MAX) { /* the passes wrapped: no count may look current */
    memset(sc->set_kept, 0, sc->n_sets * sizeof *sc->set_kept);
    sc->pass = 1;
  }
  uint64_t cap = MIN(lines, (uint64_t)sets * ways);
  if (sc->kept_cap < cap) {
    g_free(sc->kept);
    sc->kept = g_new(uint64_t, cap);
    sc->kept_cap = cap;
  }
  MemFillPass p = { c, sc->set_kept, sc->kept, 0, sc->pass, ways, 0, sets };
  for (unsigned i = n; i-- > 0;) {
    const MemFill *f = &fills[i];
    uint64_t dst = f->pa >> line_shift, src = f->src_pa >> line_shift;
    gboolean copy = f->src_pa != MEMSYS_FILL_CLEAR;
    for (uint64_t j = f->bytes >> line_shift; j-- > 0;) {
      if (memsys_fill_keep(&p, dst + j))
        goto walked;
      if (copy && memsys_fill_keep(&p, src + j))
        goto walked;
    }
  }
walked:
  /* Host only: each line's set is fetched a few lines ahead (a 2M clear
   * touches 32K sets of an LLC, most of them not in the host's caches). */
  for (uint64_t i = p.n_kept; i-- > 0;) {
    if (i >= MEMSYS_FILL_HOST_AHEAD)
      cache_host_prefetch(c, p.kept[i - MEMSYS_FILL_HOST_AHEAD]);
    cache_access(c, p.kept[i]);
  }
}

void memsys_fill(MemHier *h, const MemFill *fills, unsigned n, MemFillScratch *sc)
{
  g_return_if_fail(h != NULL && sc != NULL && (fills != NULL || n == 0));
  uint64_t lines = 0;
  for (unsigned i = 0; i < n; i++)
    lines += (fills[i].bytes >> h->line_shift) * (fills[i].src_pa != MEMSYS_FILL_CLEAR ? 2 : 1);
  if (lines == 0)
    return;
  memsys_fill_cache(h->l1d, h->line_shift, fills, n, lines, sc);
  memsys_fill_cache(h->l2, h->line_shift, fills, n, lines, sc);
  if (h->llc != NULL)
    memsys_fill_cache(h->llc, h->line_shift, fills, n, lines, sc);
}

/* ---- queries ------------------------------------------------------------- */

uint32_t memsys_level_cycles(const MemHier *h, MemLevel level)
{
  switch (level) {
  case MEM_L1:
    return h->path[MREQ_LOAD].l1_cycles;
  case MEM_L2:
    return h->l2_cycles;
  case MEM_LLC:
    return h->llc_cycles;
  case MEM_DRAM:
    return h->dram_cycles;
  }
  g_return_val_if_reached(0);
}

const char *memsys_level_name(MemLevel level)
{
  static const char *const names[] = { "L1", "L2", "LLC", "DRAM" };
  g_return_val_if_fail((unsigned)level <= MEM_DRAM, "?");
  return names[level];
}

unsigned memsys_line_bytes(const MemHier *h)
{
  return 1u << h->line_shift;
}

gboolean memsys_has_llc(const MemHier *h)
{
  return h->llc != NULL;
}

gboolean memsys_holds(const MemHier *h, uint64_t pa, MemReqKind kind, MemLevel level)
{
  g_return_val_if_fail((unsigned)kind <= MREQ_WALK, FALSE);
  uint64_t line = pa >> h->line_shift;
  switch (level) {
  case MEM_L1:
    return cache_contains(h->path[kind].l1, line);
  case MEM_L2:
    return cache_contains(h->l2, line);
  case MEM_LLC:
    return h->llc != NULL && cache_contains(h->llc, line);
  case MEM_DRAM:
    return TRUE;
  }
  g_return_val_if_reached(FALSE);
}

void memsys_flush(MemHier *h)
{
  cache_invalidate_all(h->l1i);
  cache_invalidate_all(h->l1d);
  cache_invalidate_all(h->l2);
  if (h->llc != NULL)
    cache_invalidate_all(h->llc);
  memsys_stream_reset(h);
  memset(h->pf_ready, 0, h->pf_slots * sizeof *h->pf_ready);
  h->pf_busy_until = 0;
}
