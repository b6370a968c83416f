/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_memsys.c - the per-CPU hierarchy on a tiny, hand-made machine:
 * latencies, serving levels and counters worked out by hand, the prefetchers
 * and their 4K page rule, walks, the shared LLC, and counter invariants after
 * a random sequence.
 *
 * The tiny machine (line 64 B):
 *   L1I 1K 2-way (8 sets), 3 cycles     L1D 1K 2-way (8 sets), 4 cycles
 *   L2  4K 4-way (16 sets), 12 cycles   LLC 16K 4-way (64 sets), 40 cycles
 *   DRAM 20 ns at 1500 MHz = 30 cycles, so a DRAM reference costs 40 + 30 = 70.
 * Line n sits in L1 set n % 8, L2 set n % 16, LLC set n % 64.
 */
#include "config.h"
#include "memsys.h"
#include "memsys-hot.h"
#include "machine_fixture.h"

#include <string.h>

enum { L1D_CYC = 4, L1I_CYC = 3, L2_CYC = 12, LLC_CYC = 40, DRAM_CYC = 70 };

static const char *const tiny_machine[] = {
  "cache.line_bytes=64",
  "cache.l1i_size=1K", "cache.l1i_ways=2", "cache.l1i_hit_cycles=3",
  "cache.l1d_size=1K", "cache.l1d_ways=2", "cache.l1d_hit_cycles=4",
  "cache.l2_size=4K", "cache.l2_ways=4", "cache.l2_hit_cycles=12",
  "cache.llc_size=16K", "cache.llc_ways=4", "cache.llc_hit_cycles=40",
  "cache.prefetcher=none",
  "dram.latency_ns=20", "cpu.freq_mhz=1500",
  NULL,
};

/* The tiny machine, then `extra` ("KEY=VALUE", NULL-terminated, may be NULL). */
static Settings *tiny_settings(const char *const *extra)
{
  Settings *s = settings_new();
  fixture_settings_apply(s, tiny_machine);
  fixture_settings_apply(s, extra);
  return s;
}

typedef struct {
  Settings *s;
  Cache *llc;
  MemHier *h;
  Counters ctr;
} Tiny;

static void tiny_open(Tiny *t, const char *const *extra)
{
  memset(t, 0, sizeof *t);
  g_autoptr(GError) err = NULL;
  t->s = tiny_settings(extra);
  t->llc = memsys_llc_new(t->s, &err);
  ck_assert_no_error(err);
  t->h = memsys_new(t->s, t->llc, &t->ctr, &err);
  ck_assert_no_error(err);
  ck_assert_ptr_nonnull(t->h);
}

static void tiny_close(Tiny *t)
{
  memsys_free(t->h);
  cache_free(t->llc);
  settings_free(t->s);
}

/* One reference; checks the level that served it and its latency. */
#define ACCESS(h, pa, kind, want_level, want_cycles)                                     \
  do {                                                                                   \
    MemLevel got_level_ = (MemLevel)-1;                                                  \
    uint32_t got_cycles_ = memsys_access((h), (pa), (kind), &got_level_);                \
    ck_assert_msg(got_level_ == (want_level), "pa 0x%llx: served by %s, expected %s",   \
                  (unsigned long long)(pa), memsys_level_name(got_level_),               \
                  memsys_level_name(want_level));                                        \
    ck_assert_uint_eq(got_cycles_, (want_cycles));                                       \
  } while (0)

#define LINE(n) ((uint64_t)(n) * 64)

/* The counters memsys counts; EXPECT_COUNTS checks them all, and every one it
 * does not name must be 0. */
typedef struct {
  uint64_t loads, load_misses, stores, store_misses, ifetch_misses;
  uint64_t l2_misses, llc_loads, llc_misses, prefetches, page_stops;
} MemCounts;

static void expect_counts(const Counters *c, MemCounts e, int line)
{
  const struct { CounterId id; uint64_t want; } rows[] = {
    { CTR_L1_DCACHE_LOADS, e.loads }, { CTR_L1_DCACHE_LOAD_MISSES, e.load_misses },
    { CTR_L1_DCACHE_STORES, e.stores }, { CTR_L1_DCACHE_STORE_MISSES, e.store_misses },
    { CTR_L1_ICACHE_LOAD_MISSES, e.ifetch_misses }, { CTR_L2_MISSES, e.l2_misses },
    { CTR_LLC_LOADS, e.llc_loads }, { CTR_LLC_LOAD_MISSES, e.llc_misses },
    { CTR_PREFETCHES, e.prefetches }, { CTR_PREFETCH_PAGE_STOPS, e.page_stops },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(rows); i++)
    ck_assert_msg(c->c[rows[i].id] == rows[i].want, "line %d: %s is %llu, expected %llu", line,
                  counter_def(rows[i].id)->name, (unsigned long long)c->c[rows[i].id],
                  (unsigned long long)rows[i].want);
}

#define EXPECT_COUNTS(ctr, ...) expect_counts(&(ctr), (MemCounts){ __VA_ARGS__ }, __LINE__)

START_TEST(test_levels_and_latencies)
{
  Tiny t;
  tiny_open(&t, NULL);
  MemHier *h = t.h;
  const uint64_t a = LINE(1024);  /* L1 set 0, L2 set 0, LLC set 0 */

  ACCESS(h, a, MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert(memsys_holds(h, a, MREQ_LOAD, MEM_L1));  /* a miss fills every level */
  ck_assert(memsys_holds(h, a, MREQ_LOAD, MEM_L2));
  ck_assert(memsys_holds(h, a, MREQ_LOAD, MEM_LLC));
  ACCESS(h, a + 63, MREQ_LOAD, MEM_L1, L1D_CYC);     /* same line */

  /* Two more lines of L1 set 0 push a out of the 2-way L1D; the L2 keeps it. */
  ACCESS(h, LINE(1032), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(h, LINE(1040), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert(!memsys_holds(h, a, MREQ_LOAD, MEM_L1));
  ACCESS(h, a, MREQ_LOAD, MEM_L2, L2_CYC);

  /* L2 set 0 holds a, 1040 (a most recent); four more lines of that set push
   * out 1040 and then a; the 4-way LLC set 0 only gets 1088 besides a. */
  for (uint64_t n = 1056; n <= 1104; n += 16)
    ACCESS(h, LINE(n), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert(!memsys_holds(h, a, MREQ_LOAD, MEM_L1));
  ck_assert(!memsys_holds(h, a, MREQ_LOAD, MEM_L2));
  ck_assert(memsys_holds(h, a, MREQ_LOAD, MEM_LLC));
  ACCESS(h, a, MREQ_LOAD, MEM_LLC, LLC_CYC);

  EXPECT_COUNTS(t.ctr, .loads = 10, .load_misses = 9, .l2_misses = 8, .llc_loads = 8, .llc_misses = 7);

  ck_assert_uint_eq(memsys_level_cycles(h, MEM_L1), L1D_CYC);
  ck_assert_uint_eq(memsys_level_cycles(h, MEM_L2), L2_CYC);
  ck_assert_uint_eq(memsys_level_cycles(h, MEM_LLC), LLC_CYC);
  ck_assert_uint_eq(memsys_level_cycles(h, MEM_DRAM), DRAM_CYC);
  ck_assert_uint_eq(memsys_line_bytes(h), 64);
  ck_assert(memsys_has_llc(h));
  tiny_close(&t);
}
END_TEST

START_TEST(test_stores_write_allocate)
{
  Tiny t;
  tiny_open(&t, NULL);
  ACCESS(t.h, LINE(7), MREQ_STORE, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, LINE(7), MREQ_LOAD, MEM_L1, L1D_CYC);  /* the store allocated the line */
  ACCESS(t.h, LINE(7), MREQ_STORE, MEM_L1, L1D_CYC);
  EXPECT_COUNTS(t.ctr, .stores = 2, .store_misses = 1, .loads = 1, .l2_misses = 1, .llc_loads = 1, .llc_misses = 1);
  tiny_close(&t);
}
END_TEST

START_TEST(test_ifetch_uses_l1i)
{
  Tiny t;
  tiny_open(&t, NULL);
  ACCESS(t.h, LINE(9), MREQ_IFETCH, MEM_DRAM, DRAM_CYC);
  ck_assert(memsys_holds(t.h, LINE(9), MREQ_IFETCH, MEM_L1));
  ck_assert(!memsys_holds(t.h, LINE(9), MREQ_LOAD, MEM_L1));
  ACCESS(t.h, LINE(9), MREQ_IFETCH, MEM_L1, L1I_CYC);
  /* A load of the same line misses the L1D and finds it in the shared L2. */
  ACCESS(t.h, LINE(9), MREQ_LOAD, MEM_L2, L2_CYC);
  EXPECT_COUNTS(t.ctr, .ifetch_misses = 1, .loads = 1, .load_misses = 1, .l2_misses = 1, .llc_loads = 1,
                .llc_misses = 1);
  tiny_close(&t);
}
END_TEST

START_TEST(test_walks_not_dcache_loads)
{
  Tiny t;
  tiny_open(&t, NULL);
  ACCESS(t.h, LINE(300), MREQ_WALK, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, LINE(300) + 8, MREQ_WALK, MEM_L1, L1D_CYC);
  /* No L1-dcache-loads, but they do count below the L1. */
  EXPECT_COUNTS(t.ctr, .l2_misses = 1, .llc_loads = 1, .llc_misses = 1);
  /* Walks go through the L1D: a data load of that line hits. */
  ACCESS(t.h, LINE(300), MREQ_LOAD, MEM_L1, L1D_CYC);
  EXPECT_COUNTS(t.ctr, .loads = 1, .l2_misses = 1, .llc_loads = 1, .llc_misses = 1);
  tiny_close(&t);
}
END_TEST

START_TEST(test_no_llc)
{
  static const char *const no_llc[] = { "cache.llc_size=0", NULL };
  Tiny t;
  tiny_open(&t, no_llc);
  ck_assert_ptr_null(t.llc);
  ck_assert(!memsys_has_llc(t.h));
  ck_assert_uint_eq(memsys_level_cycles(t.h, MEM_DRAM), L2_CYC + 30);
  ck_assert_uint_eq(memsys_level_cycles(t.h, MEM_LLC), 0);
  ACCESS(t.h, LINE(5), MREQ_LOAD, MEM_DRAM, L2_CYC + 30);
  ck_assert(!memsys_holds(t.h, LINE(5), MREQ_LOAD, MEM_LLC));
  EXPECT_COUNTS(t.ctr, .loads = 1, .load_misses = 1, .l2_misses = 1);
  tiny_close(&t);
}
END_TEST

START_TEST(test_dram_cycles)
{
  /* Defaults: 80 ns at 3000 MHz is exactly 240 cycles, behind a 40-cycle LLC. */
  g_autoptr(Settings) def = settings_new();
  g_autoptr(GError) err = NULL;
  g_autoptr(Cache) llc = memsys_llc_new(def, &err);
  ck_assert_no_error(err);
  g_autoptr(MemHier) h = memsys_new(def, llc, NULL, &err);  /* no counters: allowed */
  ck_assert_no_error(err);
  ck_assert_uint_eq(memsys_level_cycles(h, MEM_L1), 4);
  ck_assert_uint_eq(memsys_level_cycles(h, MEM_L2), 12);
  ck_assert_uint_eq(memsys_level_cycles(h, MEM_LLC), 40);
  ck_assert_uint_eq(memsys_level_cycles(h, MEM_DRAM), 280);
  ck_assert_uint_eq(memsys_access(h, 0x1234, MREQ_LOAD, NULL), 280);

  /* 10.5 ns at 1000 MHz is 10.5 cycles: rounded up to 11. */
  static const char *const frac[] = { "dram.latency_ns=10.5", "cpu.freq_mhz=1000", NULL };
  Tiny t;
  tiny_open(&t, frac);
  ck_assert_uint_eq(memsys_level_cycles(t.h, MEM_DRAM), LLC_CYC + 11);
  tiny_close(&t);

  /* 33.2 ns at 7500 MHz is 249 cycles, but 33.2 * 7500 / 1000 in binary
   * floating point is 249.00000000000003: it must not round up to 250. */
  static const char *const whole[] = { "dram.latency_ns=33.2", "cpu.freq_mhz=7500", NULL };
  tiny_open(&t, whole);
  ck_assert_uint_eq(memsys_level_cycles(t.h, MEM_DRAM), LLC_CYC + 249);
  tiny_close(&t);
}
END_TEST

START_TEST(test_shared_llc)
{
  Tiny t;
  tiny_open(&t, NULL);
  Counters ctr1 = { { 0 } };
  g_autoptr(GError) err = NULL;
  g_autoptr(MemHier) h1 = memsys_new(t.s, t.llc, &ctr1, &err);
  ck_assert_no_error(err);

  ACCESS(t.h, LINE(77), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(h1, LINE(77), MREQ_LOAD, MEM_LLC, LLC_CYC);   /* CPU 0 brought it into the LLC */
  ACCESS(h1, LINE(78), MREQ_STORE, MEM_DRAM, DRAM_CYC);
  ck_assert(!memsys_holds(t.h, LINE(78), MREQ_LOAD, MEM_L2));  /* private levels stay private */
  ck_assert(memsys_holds(t.h, LINE(78), MREQ_LOAD, MEM_LLC));
  ACCESS(t.h, LINE(78), MREQ_LOAD, MEM_LLC, LLC_CYC);

  EXPECT_COUNTS(t.ctr, .loads = 2, .load_misses = 2, .l2_misses = 2, .llc_loads = 2, .llc_misses = 1);
  EXPECT_COUNTS(ctr1, .loads = 1, .load_misses = 1, .stores = 1, .store_misses = 1, .l2_misses = 2,
                .llc_loads = 2, .llc_misses = 1);
  memsys_free(g_steal_pointer(&h1));  /* before the LLC it shares */
  tiny_close(&t);
}
END_TEST

START_TEST(test_flush)
{
  Tiny t;
  tiny_open(&t, NULL);
  ACCESS(t.h, LINE(3), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, LINE(4), MREQ_IFETCH, MEM_DRAM, DRAM_CYC);
  memsys_flush(t.h);
  for (MemLevel l = MEM_L1; l <= MEM_LLC; l++) {
    ck_assert(!memsys_holds(t.h, LINE(3), MREQ_LOAD, l));
    ck_assert(!memsys_holds(t.h, LINE(4), MREQ_IFETCH, l));
  }
  ck_assert(memsys_holds(t.h, LINE(3), MREQ_LOAD, MEM_DRAM));
  ACCESS(t.h, LINE(3), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, LINE(4), MREQ_IFETCH, MEM_DRAM, DRAM_CYC);
  tiny_close(&t);
}
END_TEST

static void expect_build_error(const char *const *extra, gboolean llc, const char *needle)
{
  g_autoptr(Settings) s = tiny_settings(extra);
  g_autoptr(GError) err = NULL;
  if (llc) {
    ck_assert_ptr_null(memsys_llc_new(s, &err));
  } else {
    ck_assert_ptr_null(memsys_new(s, NULL, NULL, &err));
  }
  ck_assert_ptr_nonnull(err);
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE));
  ck_assert_msg(strstr(err->message, needle) != NULL, "expected \"%s\" in: %s", needle, err->message);
}

START_TEST(test_build_errors)
{
  static const char *const l1d[] = { "cache.l1d_ways=3", NULL };
  static const char *const l2[] = { "cache.l2_ways=3", NULL };
  static const char *const line[] = { "cache.line_bytes=48", NULL };
  static const char *const llc[] = { "cache.llc_size=1000", NULL };
  expect_build_error(l1d, FALSE, "L1D: cache.l1d_size = 1K (from test) is not a multiple of cache.l1d_ways = 3 (from test) x "
                                         "cache.line_bytes = 64 (from test) = 192 bytes: give cache.l1d_ways a number that divides 16");
  expect_build_error(l2, FALSE, "L2: cache.l2_size = 4K (from test)");
  expect_build_error(line, FALSE, "cache.line_bytes = 48 (from test) is not a power of two");
  expect_build_error(llc, TRUE, "LLC: cache.llc_size = 1000 (from test) is not a multiple of");
}
END_TEST

/* The way counts the lookups test first (a host shortcut) are the
 * settings' defaults, as memsys-hot.h says: a new default must move them. */
START_TEST(test_usual_ways_are_the_defaults)
{
  g_autoptr(Settings) def = settings_new();
  ck_assert_int_eq(settings_int(def, SET_CACHE_L2_WAYS), MEMSYS_L2_WAYS_USUAL);
  ck_assert_int_eq(settings_int(def, SET_CACHE_LLC_WAYS), MEMSYS_LLC_WAYS_USUAL);
}
END_TEST

START_TEST(test_level_names)
{
  ck_assert_str_eq(memsys_level_name(MEM_L1), "L1");
  ck_assert_str_eq(memsys_level_name(MEM_L2), "L2");
  ck_assert_str_eq(memsys_level_name(MEM_LLC), "LLC");
  ck_assert_str_eq(memsys_level_name(MEM_DRAM), "DRAM");
}
END_TEST

/* ---- prefetchers --------------------------------------------------------- */

/* A 16K 4-way L2 (64 sets) so a whole 4K page of prefetches fits. */
#define PF_MACHINE "cache.l2_size=16K", "cache.llc_size=64K", "cache.llc_ways=8"
#define PAGE_P 0x40000  /* a 4K page: lines 4096..4159 */

static uint64_t pline(int k)
{
  return PAGE_P + (uint64_t)(int64_t)k * 64;
}

/* `n` references to lines first, first + step, ... of page P (negative lines
 * are in the pages below): the first `misses` go to DRAM, the rest must find
 * their line in the L2, put there by the prefetcher. */
static void walk_lines(MemHier *h, int first, int step, int n, int misses, MemReqKind kind)
{
  for (int i = 0; i < n; i++) {
    gboolean miss = i < misses;
    ACCESS(h, pline(first + i * step), kind, miss ? MEM_DRAM : MEM_L2, miss ? DRAM_CYC : L2_CYC);
  }
}

START_TEST(test_stream_ascending_stops_at_page)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=2", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  /* Line 0 starts a stream, line 1 fixes its direction and prefetches 2 and 3;
   * each later line, found in the L2, prefetches the line two ahead. */
  ACCESS(t.h, pline(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 0);
  ACCESS(t.h, pline(1), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 2);
  ck_assert(memsys_holds(t.h, pline(3), MREQ_LOAD, MEM_L2));
  ck_assert(memsys_holds(t.h, pline(3), MREQ_LOAD, MEM_LLC));  /* fills the LLC too */
  ck_assert(!memsys_holds(t.h, pline(3), MREQ_LOAD, MEM_L1));   /* but not the L1 */
  ck_assert(!memsys_holds(t.h, pline(4), MREQ_LOAD, MEM_L2));
  walk_lines(t.h, 2, 1, 62, 0, MREQ_LOAD);
  /* Prefetched 2..63; 64 and 65 would be in the next page. */
  EXPECT_COUNTS(t.ctr, .loads = 64, .load_misses = 64, .l2_misses = 2, .llc_loads = 2, .llc_misses = 2,
                .prefetches = 62, .page_stops = 2);
  ck_assert(!memsys_holds(t.h, pline(64), MREQ_LOAD, MEM_L2));

  /* The next page is a new stream: two misses, then prefetches again. */
  walk_lines(t.h, 64, 1, 3, 2, MREQ_LOAD);
  EXPECT_COUNTS(t.ctr, .loads = 67, .load_misses = 67, .l2_misses = 4, .llc_loads = 4, .llc_misses = 4,
                .prefetches = 65 /* 66, 67, 68 */, .page_stops = 2);
  tiny_close(&t);
}
END_TEST

START_TEST(test_stream_cross_page)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=2",
                                     "cache.prefetch_cross_page=true", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  walk_lines(t.h, 0, 1, 70, 2, MREQ_LOAD);
  /* 2, 3 at line 1, then k + 2 for k = 2..69. */
  EXPECT_COUNTS(t.ctr, .loads = 70, .load_misses = 70, .l2_misses = 2, .llc_loads = 2, .llc_misses = 2,
                .prefetches = 70);

  /* Descending from the second line of P into the page below. */
  memsys_flush(t.h);
  memset(&t.ctr, 0, sizeof t.ctr);
  walk_lines(t.h, 1, -1, 71, 2, MREQ_LOAD);  /* 1, 0, -1..-69 */
  EXPECT_COUNTS(t.ctr, .loads = 71, .load_misses = 71, .l2_misses = 2, .llc_loads = 2, .llc_misses = 2,
                .prefetches = 71 /* -1..-71 */);
  tiny_close(&t);
}
END_TEST

START_TEST(test_stream_descending)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=2", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  walk_lines(t.h, 63, -1, 64, 2, MREQ_LOAD);
  EXPECT_COUNTS(t.ctr, .loads = 64, .load_misses = 64, .l2_misses = 2, .llc_loads = 2, .llc_misses = 2,
                .prefetches = 62, .page_stops = 2 /* -1 and -2 */);
  ck_assert(!memsys_holds(t.h, pline(-1), MREQ_LOAD, MEM_L2));
  tiny_close(&t);
}
END_TEST

START_TEST(test_stream_degree_four)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=4", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  walk_lines(t.h, 0, 1, 2, 2, MREQ_LOAD);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 4);  /* 2..5 */
  walk_lines(t.h, 2, 1, 62, 0, MREQ_STORE);  /* stores train too */
  EXPECT_COUNTS(t.ctr, .loads = 2, .load_misses = 2, .stores = 62, .store_misses = 62, .l2_misses = 2,
                .llc_loads = 2, .llc_misses = 2, .prefetches = 62, .page_stops = 4 /* 64..67, each once */);
  tiny_close(&t);
}
END_TEST

START_TEST(test_stream_bottom_of_memory)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_cross_page=true", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  ACCESS(t.h, LINE(1), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, LINE(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* descending, nothing below */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 0);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_PAGE_STOPS], 0);
  tiny_close(&t);
}
END_TEST

START_TEST(test_stream_two_streams_and_noise)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=2", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  const uint64_t q = PAGE_P + 0x10000;  /* another page */
  /* Lines that are not neighbours start streams but never fix a direction. */
  ACCESS(t.h, pline(10), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(20), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(12), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(30), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 0);
  /* An ascending stream in P and a descending one in Q, interleaved. */
  ACCESS(t.h, pline(40), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, q + LINE(50), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(41), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, q + LINE(49), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 4);  /* P 42, 43; Q 48, 47 */
  ACCESS(t.h, pline(42), MREQ_LOAD, MEM_L2, L2_CYC);
  ACCESS(t.h, q + LINE(48), MREQ_LOAD, MEM_L2, L2_CYC);
  ACCESS(t.h, pline(43), MREQ_LOAD, MEM_L2, L2_CYC);
  ACCESS(t.h, q + LINE(47), MREQ_LOAD, MEM_L2, L2_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 8);  /* P 44, 45; Q 46, 45 */
  ck_assert(memsys_holds(t.h, q + LINE(45), MREQ_LOAD, MEM_L2));
  ck_assert(memsys_holds(t.h, pline(45), MREQ_LOAD, MEM_L2));
  tiny_close(&t);
}
END_TEST

/* The window of a stream that one miss on line x started: x and its
 * neighbours, within x's page unless prefetches cross pages (then down to
 * line 0).  Checked on the stream itself: a neighbour outside the page is
 * never looked up in x's entry, so no reference would tell. */
START_TEST(test_stream_first_window)
{
  static const char *const in_page[] = { PF_MACHINE, "cache.prefetcher=stream", NULL };
  static const char *const cross[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_cross_page=true", NULL };
  static const int lines[] = { 0, 1, 30, 62, 63 };  /* of the page */
  for (int c = 0; c < 2; c++)
    for (uint64_t page = 0; page < 2; page++)
      for (unsigned i = 0; i < G_N_ELEMENTS(lines); i++) {
        Tiny t;
        tiny_open(&t, c == 0 ? in_page : cross);
        uint64_t x = PAGE_P / 64 * page + (uint64_t)lines[i];
        ACCESS(t.h, LINE(x), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
        const MemStream *st = t.h->stream_hot;
        uint64_t lo = x - (x > 0), hi = x + 1;
        if (c == 0) {
          lo = lines[i] == 0 ? x : x - 1;
          hi = lines[i] == 63 ? x : x + 1;
        }
        ck_assert(st->valid && st->last == x && st->dir == 0);
        ck_assert_msg(st->win_lo == lo && st->win_span == hi - lo,
                      "cfg %d line %" G_GUINT64_FORMAT ": window %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT
                      ", expected %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT,
                      c, x, st->win_lo, st->win_span, lo, hi - lo);
        ck_assert(st->hit_lo == UINT64_MAX && st->hit_span == 0);
        tiny_close(&t);
      }
}
END_TEST

/* A hit on a line that two streams of one page prefetched follows the one
 * in the entry's first way, even right after the other one matched. */
START_TEST(test_stream_hit_overlap_first_way)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=4", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  walk_lines(t.h, 10, 1, 2, 2, MREQ_LOAD);   /* ascending, first way: 12..15 */
  walk_lines(t.h, 18, -1, 2, 2, MREQ_LOAD);  /* descending, second way: 16 (13..15 were there) */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 5);
  /* Both prefetched 14; the ascending stream follows it, to frontier 18
   * (all there already), so that 19 is in its window and prefetches 20..23.
   * Had the descending one followed, 19 would start a new stream. */
  ACCESS(t.h, pline(14), MREQ_LOAD, MEM_L2, L2_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 5);
  ACCESS(t.h, pline(19), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 9);
  ck_assert(memsys_holds(t.h, pline(23), MREQ_LOAD, MEM_L2));
  tiny_close(&t);
}
END_TEST

/* The table tracks 16 pages, whatever their addresses: pages 16 apart keep
 * their streams side by side (a table indexed by page number modulo 16
 * would make them evict each other), and the 17th page takes the least
 * recently used page's place. */
START_TEST(test_stream_table_pages)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=2", NULL };
  const uint64_t b = PAGE_P + 0x10000, c = PAGE_P + 0x20000;
  Tiny t;
  tiny_open(&t, cfg);
  ACCESS(t.h, pline(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(1), MREQ_LOAD, MEM_DRAM, DRAM_CYC);      /* A: 2, 3 */
  ACCESS(t.h, b + LINE(10), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, b + LINE(11), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* B: 12, 13 */
  ACCESS(t.h, c + LINE(20), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, c + LINE(21), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* C: 22, 23 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 6);
  ACCESS(t.h, pline(2), MREQ_LOAD, MEM_L2, L2_CYC);          /* A: 4 */
  ACCESS(t.h, b + LINE(12), MREQ_LOAD, MEM_L2, L2_CYC);      /* B: 14 */
  ACCESS(t.h, c + LINE(22), MREQ_LOAD, MEM_L2, L2_CYC);      /* C: 24 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 9);
  /* 13 more pages fill the table: A, B and C stay. */
  for (unsigned i = 0; i < 13; i++)
    ACCESS(t.h, PAGE_P + 0x100000 + i * 0x1000 + LINE(i), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(5), MREQ_LOAD, MEM_DRAM, DRAM_CYC);      /* in A's window: A runs on, 6, 7 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 11);
  /* A 17th page evicts the least recently used page, B's. */
  ACCESS(t.h, PAGE_P + 0x200000, MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, c + LINE(25), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* C was used after B: still there, 26, 27 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 13);
  ACCESS(t.h, b + LINE(15), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* B forgotten: a new stream, no prefetch */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 13);
  tiny_close(&t);
}
END_TEST

/* cache.prefetch_pages sets how many pages are tracked: with two, a third
 * page takes the place of the least recently used one. */
START_TEST(test_stream_table_size_setting)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=2",
                                     "cache.prefetch_pages=2", NULL };
  const uint64_t b = PAGE_P + 0x10000, c = PAGE_P + 0x20000;
  Tiny t;
  tiny_open(&t, cfg);
  ACCESS(t.h, pline(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(1), MREQ_LOAD, MEM_DRAM, DRAM_CYC);      /* A: 2, 3 */
  ACCESS(t.h, b + LINE(10), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, b + LINE(11), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* B: 12, 13 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 4);
  ACCESS(t.h, c + LINE(20), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* C takes A's place */
  ACCESS(t.h, pline(2), MREQ_LOAD, MEM_L2, L2_CYC);          /* prefetched, but A is gone */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 4);
  ACCESS(t.h, b + LINE(12), MREQ_LOAD, MEM_L2, L2_CYC);      /* B runs on: 14 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 5);
  tiny_close(&t);
}
END_TEST

/* The largest table, 64 pages, found by page and replaced in LRU order
 * whatever the page numbers: 64 pages are tracked at once, 64 new ones
 * replace them oldest first and are tracked in turn, and the old ones are
 * forgotten.  (Entries are found through hash chains; enough pages to make
 * chains share buckets and to unlink entries from them.) */
START_TEST(test_stream_table_64_pages)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", "cache.prefetch_degree=2",
                                     "cache.prefetch_pages=64", NULL };
#define PG(i) (UINT64_C(0x1000000) + (uint64_t)(i) * (i) * 131 * 0x1000)  /* chains of up to 3 */
  Tiny t;
  tiny_open(&t, cfg);
  for (unsigned i = 0; i < 64; i++) {
    ACCESS(t.h, PG(i) + LINE(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
    ACCESS(t.h, PG(i) + LINE(1), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* 2, 3 */
  }
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 128);
  for (unsigned i = 0; i < 64; i++)
    ACCESS(t.h, PG(i) + LINE(4), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* in the window: 5, 6 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 256);
  for (unsigned i = 64; i < 128; i++)
    ACCESS(t.h, PG(i) + LINE(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* replaces page i - 64 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 256);
  for (unsigned i = 64; i < 128; i++)
    ACCESS(t.h, PG(i) + LINE(1), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* tracked: 2, 3 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 384);
  for (unsigned i = 0; i < 64; i++)
    ACCESS(t.h, PG(i) + LINE(7), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* forgotten: a new stream */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 384);
#undef PG
  tiny_close(&t);
}
END_TEST

START_TEST(test_prefetch_ignores_walks_and_ifetches)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", NULL };
  static const char *const nl[] = { PF_MACHINE, "cache.prefetcher=nextline", NULL };
  const char *const *cfgs[] = { cfg, nl };
  for (unsigned i = 0; i < G_N_ELEMENTS(cfgs); i++) {
    Tiny t;
    tiny_open(&t, cfgs[i]);
    for (int k = 0; k < 4; k++)
      ACCESS(t.h, pline(k), MREQ_WALK, MEM_DRAM, DRAM_CYC);
    for (int k = 8; k < 12; k++)
      ACCESS(t.h, pline(k), MREQ_IFETCH, MEM_DRAM, DRAM_CYC);
    ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 0);
    tiny_close(&t);
  }
}
END_TEST

START_TEST(test_nextline)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=nextline", "cache.prefetch_degree=4", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  ACCESS(t.h, pline(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* prefetches 1 only */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 1);
  ACCESS(t.h, pline(1), MREQ_LOAD, MEM_L2, L2_CYC);      /* an L2 hit triggers nothing */
  ACCESS(t.h, pline(2), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* prefetches 3 */
  ACCESS(t.h, pline(3), MREQ_LOAD, MEM_L2, L2_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 2);
  /* A line already in the L2 is not prefetched again. */
  ACCESS(t.h, pline(21), MREQ_STORE, MEM_DRAM, DRAM_CYC);  /* prefetches 22 */
  ACCESS(t.h, pline(20), MREQ_LOAD, MEM_DRAM, DRAM_CYC);   /* 21 is there */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 3);
  /* The last line of the page: the next one is in another page. */
  ACCESS(t.h, pline(63), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 3);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_PAGE_STOPS], 1);
  ACCESS(t.h, pline(64), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  tiny_close(&t);

  static const char *const cross[] = { PF_MACHINE, "cache.prefetcher=nextline", "cache.prefetch_cross_page=yes", NULL };
  tiny_open(&t, cross);
  ACCESS(t.h, pline(63), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(64), MREQ_LOAD, MEM_L2, L2_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 1);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_PAGE_STOPS], 0);
  tiny_close(&t);
}
END_TEST

/* cache.prefetch_model=timed (the default) once a clock is attached: a
 * prefetched line arrives after its DRAM latency, a demand that finds it
 * in flight waits for the rest, and a prefetch that finds every slot in
 * flight is dropped; ideal: there at once. */
START_TEST(test_prefetch_timed)
{
  static const char *const timed[] = { PF_MACHINE, "cache.prefetcher=nextline", NULL };
  Tiny t;
  uint64_t clock = 0;
  tiny_open(&t, timed);
  memsys_attach_dram(t.h, NULL, 0, &clock);
  ACCESS(t.h, pline(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* prefetches 1: there at 70 */
  clock = 10;
  ACCESS(t.h, pline(1), MREQ_LOAD, MEM_L2, DRAM_CYC - 10); /* waits for the rest */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_LATE], 1);
  clock = 100;
  ACCESS(t.h, pline(2), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* prefetches 3: there at 170 */
  clock = 170;
  ACCESS(t.h, pline(3), MREQ_LOAD, MEM_L2, L2_CYC);      /* arrived */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_LATE], 1);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 2);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_DROPS], 0);
  /* A flush forgets what is in flight. */
  ACCESS(t.h, pline(10), MREQ_LOAD, MEM_DRAM, DRAM_CYC); /* prefetches 11 */
  memsys_flush(t.h);
  ACCESS(t.h, pline(11), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  tiny_close(&t);

  /* One slot: the second prefetch while the first is in flight is dropped,
   * and its line then comes on demand. */
  static const char *const one_slot[] = { PF_MACHINE, "cache.prefetcher=nextline", "cache.prefetch_slots=1", NULL };
  tiny_open(&t, one_slot);
  clock = 0;
  memsys_attach_dram(t.h, NULL, 0, &clock);
  ACCESS(t.h, pline(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* prefetches 1 */
  ACCESS(t.h, pline(4), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* 5: no slot */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 1);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_DROPS], 1);
  ACCESS(t.h, pline(5), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  clock = DRAM_CYC;                                       /* the slot is free again */
  ACCESS(t.h, pline(8), MREQ_LOAD, MEM_DRAM, DRAM_CYC);  /* prefetches 9 */
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 2);
  tiny_close(&t);

  /* ideal: the prefetched line is there at once. */
  static const char *const ideal[] = { PF_MACHINE, "cache.prefetcher=nextline", "cache.prefetch_model=ideal", NULL };
  tiny_open(&t, ideal);
  clock = 0;
  memsys_attach_dram(t.h, NULL, 0, &clock);
  ACCESS(t.h, pline(0), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ACCESS(t.h, pline(1), MREQ_LOAD, MEM_L2, L2_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_LATE], 0);
  tiny_close(&t);
}
END_TEST

/* A timed prefetch from DRAM takes DRAM's queueing of the moment: on a
 * loaded controller it arrives later than on an idle one. */
START_TEST(test_prefetch_timed_queues)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=nextline", "dram.bandwidth_gbps=1", NULL };
  uint32_t wait[2];
  for (int loaded = 0; loaded < 2; loaded++) {
    Tiny t;
    tiny_open(&t, cfg);
    g_autoptr(GError) err = NULL;
    Topology *topo = topology_new(t.s, &err);
    ck_assert_no_error(err);
    Dram *d = dram_new(t.s, topo, 1 << 20, 64, 1.5, &err);
    ck_assert_no_error(err);
    uint64_t clock = 0;
    memsys_attach_dram(t.h, d, 0, &clock);
    if (loaded) /* other lines just before load the controller */
      for (int i = 0; i < 200; i++)
        memsys_access(t.h, (uint64_t)(1 << 20) + 4096ULL * (uint64_t)i, MREQ_WALK, NULL);
    clock = 3000; /* two windows of dram.window_ns (1500 cycles here) later: the backlog is carried in */
    memsys_access(t.h, pline(0), MREQ_WALK, NULL); /* a walk trains nothing ... */
    memsys_access(t.h, pline(2), MREQ_LOAD, NULL); /* ... a load prefetches 3 */
    wait[loaded] = memsys_access(t.h, pline(3), MREQ_LOAD, NULL);
    ck_assert_uint_gt(wait[loaded], L2_CYC);
    dram_free(d);
    topology_free(topo);
    tiny_close(&t);
  }
  ck_assert_uint_gt(wait[1], wait[0]);
}
END_TEST

START_TEST(test_prefetcher_none)
{
  static const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=none", NULL };
  Tiny t;
  tiny_open(&t, cfg);
  for (int k = 0; k < 8; k++)
    ACCESS(t.h, pline(k), MREQ_LOAD, MEM_DRAM, DRAM_CYC);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCHES], 0);
  ck_assert_uint_eq(t.ctr.c[CTR_PREFETCH_PAGE_STOPS], 0);
  tiny_close(&t);
}
END_TEST

/* ---- invariants after a random sequence ---------------------------------- */

START_TEST(test_random_invariants)
{
  static const char *const stream[] = { "cache.prefetcher=stream", "cache.prefetch_degree=2", NULL };
  static const char *const nextline_no_llc[] = { "cache.prefetcher=nextline", "cache.llc_size=0", NULL };
  const char *const *cfgs[] = { stream, nextline_no_llc };
  for (unsigned c = 0; c < G_N_ELEMENTS(cfgs); c++) {
    Tiny t;
    tiny_open(&t, cfgs[c]);
    GRand *rng = g_rand_new_with_seed(7 + c);
    uint64_t served[MREQ_WALK + 1][MEM_DRAM + 1] = { { 0 } };
    uint64_t pa = 0;
    for (int i = 0; i < 20000; i++) {
      MemReqKind kind = (MemReqKind)g_rand_int_range(rng, 0, MREQ_WALK + 1);
      if (g_rand_boolean(rng))
        pa += 64;  /* runs of neighbours feed the prefetcher */
      else
        pa = (uint64_t)g_rand_int_range(rng, 0, 64 * 1024) * 8;  /* 512 KB of lines */
      MemLevel lv;
      uint32_t cyc = memsys_access(t.h, pa, kind, &lv);
      served[kind][lv]++;
      uint32_t want = lv == MEM_L1 && kind == MREQ_IFETCH ? (uint32_t)L1I_CYC : memsys_level_cycles(t.h, lv);
      loop_assert_uint_eq(cyc, want);
      /* The line is now in every level it passed on the way. */
      loop_assert(memsys_holds(t.h, pa, kind, MEM_L1));
      if (lv >= MEM_L2)
        loop_assert(memsys_holds(t.h, pa, kind, MEM_L2));
      if (lv >= MEM_LLC && memsys_has_llc(t.h))
        loop_assert(memsys_holds(t.h, pa, kind, MEM_LLC));
      loop_assert(lv != MEM_LLC || memsys_has_llc(t.h));
    }
    const uint64_t *n = t.ctr.c;
    uint64_t loads = 0, stores = 0, below_l2 = 0, dram = 0;
    for (int l = MEM_L1; l <= MEM_DRAM; l++) {
      loads += served[MREQ_LOAD][l];
      stores += served[MREQ_STORE][l];
    }
    for (int k = 0; k <= MREQ_WALK; k++) {
      below_l2 += served[k][MEM_LLC] + served[k][MEM_DRAM];
      dram += served[k][MEM_DRAM];
    }
    loop_assert_uint_eq(n[CTR_L1_DCACHE_LOADS], loads);
    loop_assert_uint_eq(n[CTR_L1_DCACHE_LOAD_MISSES], loads - served[MREQ_LOAD][MEM_L1]);
    loop_assert_uint_eq(n[CTR_L1_DCACHE_STORES], stores);
    loop_assert_uint_eq(n[CTR_L1_DCACHE_STORE_MISSES], stores - served[MREQ_STORE][MEM_L1]);
    loop_assert_uint_eq(n[CTR_L1_ICACHE_LOAD_MISSES],
                      served[MREQ_IFETCH][MEM_L2] + served[MREQ_IFETCH][MEM_LLC] + served[MREQ_IFETCH][MEM_DRAM]);
    loop_assert_uint_eq(n[CTR_L2_MISSES], below_l2);
    loop_assert_uint_eq(n[CTR_LLC_LOADS], memsys_has_llc(t.h) ? below_l2 : 0);
    loop_assert_uint_eq(n[CTR_LLC_LOAD_MISSES], memsys_has_llc(t.h) ? dram : 0);
    ck_assert_uint_gt(n[CTR_PREFETCHES], 0);
    ck_assert_uint_gt(n[CTR_PREFETCH_PAGE_STOPS], 0);
    for (int l = MEM_L1; l <= MEM_DRAM; l++)
      if (l != MEM_LLC || memsys_has_llc(t.h))
        loop_assert_msg(served[MREQ_LOAD][l] > 0, "no load served by %s", memsys_level_name(l));
    g_rand_free(rng);
    tiny_close(&t);
  }
}
END_TEST

/* memsys_access_data(), the core's inline copy of a load or store, and
 * memsys_access_walk(), the walks' copy, against memsys_access_any() (a
 * kind not written as a constant) on a twin hierarchy: the same levels,
 * cycles, counters
 * (the caller adding the L1D counts memsys_access_data() leaves to it) and
 * contents, with each prefetcher, the degree's bounds, the vector way
 * counts (8-way L1D, 4-way L2, 16-way LLC) and others as well as the tiny
 * machine's, and with a DRAM model of one node (whose open window
 * memsys_access_data()'s prefetches and misses take inline) attached to
 * each twin, its clock moving on a few cycles a reference. */
START_TEST(test_access_data_twin)
{
  static const char *const stream[] = { "cache.prefetcher=stream", "cache.prefetch_degree=2", NULL };
  static const char *const cross[] = { "cache.prefetcher=stream", "cache.prefetch_cross_page=true",
                                       "cache.prefetch_degree=3", NULL };
  static const char *const wide_ways[] = { "cache.prefetcher=stream", "cache.l1d_size=4K", "cache.l1d_ways=8",
                                           "cache.l2_size=16K", "cache.l2_ways=4", "cache.llc_size=64K",
                                           "cache.llc_ways=16", NULL };
  static const char *const odd_ways[] = { "cache.prefetcher=stream", "cache.l1d_size=6K", "cache.l1d_ways=12",
                                          "cache.l2_size=24K", "cache.l2_ways=12", "cache.llc_size=32K",
                                          "cache.llc_ways=8", "cache.prefetch_degree=1", NULL };
  static const char *const far[] = { "cache.prefetcher=stream", "cache.prefetch_degree=64", "cache.l2_size=16K",
                                     "cache.l2_ways=16", NULL };
  static const char *const far_cross[] = { "cache.prefetcher=stream", "cache.prefetch_degree=64",
                                           "cache.prefetch_cross_page=true", "cache.prefetch_pages=1", NULL };
  static const char *const nextline_no_llc[] = { "cache.prefetcher=nextline", "cache.llc_size=0", NULL };
  static const char *const none[] = { "cache.prefetcher=none", NULL };
  static const struct {
    const char *const *sets;
    gboolean dram;
  } cfgs[] = {
    { stream, FALSE },         { cross, FALSE },  { wide_ways, FALSE }, { odd_ways, FALSE }, { far, FALSE },
    { far_cross, FALSE },      { none, FALSE },   { nextline_no_llc, FALSE },
    { stream, TRUE },          { far, TRUE },     { nextline_no_llc, TRUE }, { none, TRUE },
  };
  for (unsigned c = 0; c < G_N_ELEMENTS(cfgs); c++) {
    Tiny a, b;
    tiny_open(&a, cfgs[c].sets);
    tiny_open(&b, cfgs[c].sets);
    Topology *topo = NULL;
    Dram *da = NULL, *db = NULL;
    uint64_t clock = 0;
    if (cfgs[c].dram) {
      g_autoptr(GError) err = NULL;
      /* 32 cycles a line: the misses queue. */
      loop_assert(settings_set_pair(a.s, "dram.bandwidth_gbps=2", "test", &err));
      topo = topology_new(a.s, &err);
      ck_assert_no_error(err);
      da = dram_new(a.s, topo, 1024, 64, 1.0, &err);
      ck_assert_no_error(err);
      db = dram_new(a.s, topo, 1024, 64, 1.0, &err);
      ck_assert_no_error(err);
      memsys_attach_dram(a.h, da, 0, &clock);
      memsys_attach_dram(b.h, db, 0, &clock);
    }
    GRand *rng = g_rand_new_with_seed(11 + c);
    uint64_t pa = 0;
    for (int i = 0; i < 20000; i++) {
      MemReqKind kind = (MemReqKind)g_rand_int_range(rng, 0, MREQ_WALK + 1);
      int step = g_rand_int_range(rng, 0, 4);
      if (step < 2)
        pa += step == 0 ? 64 : (uint64_t)-64;  /* runs both ways feed the streams */
      else if (step == 2)
        pa = (uint64_t)g_rand_int_range(rng, 0, 64 * 1024) * 8;  /* 512 KB of lines */
      clock += (uint64_t)g_rand_int_range(rng, 0, 8);
      MemLevel la, lb;
      uint32_t ca = memsys_access(a.h, pa, kind, &la), cb;
      if (kind == MREQ_LOAD || kind == MREQ_STORE) {
        cb = memsys_access_data(b.h, pa, kind, &lb);
        b.ctr.c[kind == MREQ_LOAD ? CTR_L1_DCACHE_LOADS : CTR_L1_DCACHE_STORES]++;
        if (lb != MEM_L1)
          b.ctr.c[kind == MREQ_LOAD ? CTR_L1_DCACHE_LOAD_MISSES : CTR_L1_DCACHE_STORE_MISSES]++;
      } else if (kind == MREQ_WALK) {
        uint64_t both = memsys_access_walk(b.h, pa);
        cb = (uint32_t)both;
        lb = (MemLevel)(both >> 32);
      } else {
        cb = memsys_access(b.h, pa, kind, &lb);
      }
      loop_assert_msg(la == lb, "cfg %u ref %d: level %d against %d", c, i, (int)la, (int)lb);
      loop_assert_msg(ca == cb, "cfg %u ref %d: %u cycles against %u", c, i, ca, cb);
    }
    loop_assert_mem_eq(a.ctr.c, b.ctr.c, sizeof a.ctr.c);
    if (strcmp(cfgs[c].sets[0], "cache.prefetcher=none") != 0)
      ck_assert_uint_gt(a.ctr.c[CTR_PREFETCHES], 0);
    if (cfgs[c].dram)
      ck_assert_uint_gt(a.ctr.c[CTR_DRAM_QUEUE_CYCLES], 0);
    for (uint64_t line = 0; line < 64 * 1024 / 8; line++)
      for (int l = MEM_L1; l <= MEM_LLC; l++)
        loop_assert(memsys_holds(a.h, LINE(line), MREQ_LOAD, (MemLevel)l) ==
                  memsys_holds(b.h, LINE(line), MREQ_LOAD, (MemLevel)l));
    g_rand_free(rng);
    tiny_close(&a);
    tiny_close(&b);
    dram_free(da);
    dram_free(db);
    topology_free(topo);
  }
}
END_TEST

/* A stream's step as memsys_access_data() takes it inline
 * (memsys_stream_follow_dir(), whose steady step stores the windows
 * without the general path's tests), against the general step
 * (memsys_stream_follow_far()) on a twin hierarchy: the same stream
 * afterwards, the same counters and the same lines prefetched, for every
 * frontier from three lines behind x to three past its degree, x at both
 * ends and in the middle of a page (the one at line 0 included), both
 * directions and several degrees; the twins go on from case to case, so
 * that some lines are prefetched again. */
START_TEST(test_stream_steady_step)
{
  static const int64_t degrees[] = { 1, 2, 3, 4, 64 };
  static const int64_t xs[] = { 0, 1, 2, 3, 5, 30, 60, 61, 62, 63 };  /* lines of a page */
  unsigned steady = 0;
  for (unsigned d = 0; d < G_N_ELEMENTS(degrees); d++) {
    char degree[64];
    g_snprintf(degree, sizeof degree, "cache.prefetch_degree=%" G_GINT64_FORMAT, degrees[d]);
    const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", degree, NULL };
    Tiny a, b;  /* twins kept from case to case: the same lines cached */
    tiny_open(&a, cfg);
    tiny_open(&b, cfg);
    for (uint64_t page = 0; page < 2; page++)
      for (unsigned i = 0; i < G_N_ELEMENTS(xs); i++)
        for (int dir = -1; dir <= 1; dir += 2)
          for (int64_t ahead = -3; ahead <= degrees[d] + 3; ahead++) {
            uint64_t x = PAGE_P / 64 * page + (uint64_t)xs[i];
            if ((int64_t)x + dir * ahead < 0)
              continue;  /* a frontier below line 0 */
            uint64_t frontier = x + (uint64_t)(dir * ahead);
            MemStream sa = { .last = x - (uint64_t)dir, .frontier = frontier, .dir = dir, .valid = TRUE,
                             .win_lo = 7, .win_span = 9, .hit_lo = 11, .hit_span = 13 };
            MemStream sb = sa;
            steady += (uint64_t)(dir * ahead) + (uint64_t)dir == (uint64_t)(dir * degrees[d]) &&
                      xs[i] + dir * (degrees[d] + 1) >= 0 && xs[i] + dir * (degrees[d] + 1) < 64;
            memsys_stream_follow_dir(a.h, &sa, x, dir);
            memsys_stream_follow_far(b.h, &sb, x, dir);
            loop_assert_msg(sa.last == sb.last && sa.frontier == sb.frontier && sa.win_lo == sb.win_lo &&
                            sa.win_span == sb.win_span && sa.hit_lo == sb.hit_lo && sa.hit_span == sb.hit_span &&
                            sa.dir == sb.dir && sa.valid == sb.valid,
                          "degree %" G_GINT64_FORMAT " x %" G_GUINT64_FORMAT " dir %d ahead %" G_GINT64_FORMAT
                          ": frontier %" G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT ", window %" G_GUINT64_FORMAT
                          "+%" G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT
                          ", hits %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT
                          "+%" G_GUINT64_FORMAT,
                          degrees[d], x, dir, ahead, sa.frontier, sb.frontier, sa.win_lo, sa.win_span, sb.win_lo,
                          sb.win_span, sa.hit_lo, sa.hit_span, sb.hit_lo, sb.hit_span);
            loop_assert_mem_eq(a.ctr.c, b.ctr.c, sizeof a.ctr.c);
            for (uint64_t line = x - MIN(x, 80); line < x + 80; line++)
              for (int l = MEM_L2; l <= MEM_LLC; l++)
                loop_assert(memsys_holds(a.h, LINE(line), MREQ_LOAD, (MemLevel)l) ==
                          memsys_holds(b.h, LINE(line), MREQ_LOAD, (MemLevel)l));
          }
    tiny_close(&a);
    tiny_close(&b);
  }
  /* Cases where the steady step applies, counted by its condition: no
   * result tells which step ran, so this only says that the cases cover
   * it. */
  ck_assert_uint_gt(steady, 50);
}
END_TEST

/* The shortcut of a steady ascending stream (MemHier.stream_steady_x)
 * against the tests it skips: twin hierarchies take the same loads and
 * stores through memsys_access_data(), one forgetting the steady line
 * before each, and must agree on the level, cycles, counters, stream table
 * and contents after every reference.  Two runs go on at once, mostly
 * ascending, sometimes in one page side by side (the second way of an
 * entry, whose first way's hit window may hold the line), with steps back,
 * repeats, jumps to a page's last lines, jumps anywhere in 1 MB and
 * flushes, for several degrees and stream table sizes. */
START_TEST(test_stream_steady_shortcut)
{
  static const char *const degrees[] = { "cache.prefetch_degree=1", "cache.prefetch_degree=2",
                                         "cache.prefetch_degree=3", "cache.prefetch_degree=7" };
  static const char *const pages[] = { "cache.prefetch_pages=16", "cache.prefetch_pages=1" };
  unsigned shortcuts = 0;
  for (unsigned c = 0; c < G_N_ELEMENTS(degrees) * G_N_ELEMENTS(pages); c++) {
    const char *const cfg[] = { PF_MACHINE, "cache.prefetcher=stream", degrees[c % G_N_ELEMENTS(degrees)],
                                pages[c / G_N_ELEMENTS(degrees)], NULL };
    Tiny a, b;
    tiny_open(&a, cfg);
    tiny_open(&b, cfg);
    GRand *rng = g_rand_new_with_seed(23 + c);
    uint64_t run[2] = { PAGE_P, PAGE_P + 32 * 64 };
    for (int i = 0; i < 20000; i++) {
      unsigned k = (unsigned)g_rand_int_range(rng, 0, 2), what = (unsigned)g_rand_int_range(rng, 0, 40);
      if (what < 34)
        run[k] += 64;
      else if (what < 35)
        run[k] -= 64;
      else if (what < 36)
        ; /* the same line again */
      else if (what < 37)
        run[k] = run[1 - k] + 64 * (uint64_t)g_rand_int_range(rng, 1, 4); /* beside the other */
      else if (what < 38)
        run[k] = (run[k] | 4095) - 64 * (uint64_t)g_rand_int_range(rng, 0, 10); /* its page's last lines */
      else
        run[k] = PAGE_P + (uint64_t)g_rand_int_range(rng, 0, 16 * 1024) * 64;
      if (i % 2000 == 1999) { /* a flush in the middle of a run */
        memsys_flush(a.h);
        memsys_flush(b.h);
      }
      MemReqKind kind = g_rand_boolean(rng) ? MREQ_STORE : MREQ_LOAD;
      shortcuts += a.h->stream_steady_x == run[k] / 64;
      b.h->stream_steady_x = MEMSYS_STREAM_UNSTEADY;
      MemLevel la, lb;
      uint32_t ca = memsys_access_data(a.h, run[k], kind, &la), cb = memsys_access_data(b.h, run[k], kind, &lb);
      loop_assert_msg(la == lb && ca == cb, "cfg %u ref %d: level %d against %d, %u cycles against %u", c, i, (int)la,
                    (int)lb, ca, cb);
      loop_assert_msg(memcmp(a.h->streams, b.h->streams, sizeof a.h->streams) == 0, "cfg %u ref %d: streams differ",
                    c, i);
      loop_assert_mem_eq(a.h->stream_page, b.h->stream_page, sizeof a.h->stream_page);
      loop_assert_int_eq(a.h->stream_hot - a.h->streams[0].way, b.h->stream_hot - b.h->streams[0].way);
      loop_assert_int_eq(a.h->stream_hot_first - a.h->streams[0].way, b.h->stream_hot_first - b.h->streams[0].way);
    }
    loop_assert_mem_eq(a.ctr.c, b.ctr.c, sizeof a.ctr.c);
    for (uint64_t line = PAGE_P / 64; line < PAGE_P / 64 + 16 * 1024 + 64; line++)
      for (int l = MEM_L1; l <= MEM_LLC; l++)
        loop_assert(memsys_holds(a.h, LINE(line), MREQ_LOAD, (MemLevel)l) ==
                  memsys_holds(b.h, LINE(line), MREQ_LOAD, (MemLevel)l));
    g_rand_free(rng);
    tiny_close(&a);
    tiny_close(&b);
  }
  ck_assert_uint_gt(shortcuts, 10000); /* the shortcut was taken */
}
END_TEST

/* ---- memsys_fill: the kernel's clears and copies ------------------------- */

/* The lines of fills[0..n) referenced one by one, in order, in each level
 * of t: what memsys_fill() must leave behind. */
static void fill_one_by_one(Tiny *t, const MemFill *fills, unsigned n)
{
  Cache *levels[] = { t->h->l1d, t->h->l2, t->h->llc };
  for (unsigned i = 0; i < n; i++)
    for (uint64_t j = 0; j < fills[i].bytes / 64; j++)
      for (unsigned l = 0; l < G_N_ELEMENTS(levels); l++) {
        if (fills[i].src_pa != MEMSYS_FILL_CLEAR)
          cache_access(levels[l], fills[i].src_pa / 64 + j);
        cache_access(levels[l], fills[i].pa / 64 + j);
      }
}

/* Every line below `lines` is in the same levels of a and b. */
static void assert_same_lines(const Tiny *a, const Tiny *b, uint64_t lines)
{
  for (uint64_t x = 0; x < lines; x++)
    for (MemLevel l = MEM_L1; l <= MEM_LLC; l++)
      ck_assert_msg(memsys_holds(a->h, LINE(x), MREQ_LOAD, l) == memsys_holds(b->h, LINE(x), MREQ_LOAD, l),
                    "line %" G_GUINT64_FORMAT " in %s: %d after the fill, %d one by one", x, memsys_level_name(l),
                    memsys_holds(a->h, LINE(x), MREQ_LOAD, l), memsys_holds(b->h, LINE(x), MREQ_LOAD, l));
}

/* A fill of stretches in no simple order, larger than the L1D and the L2
 * (a copy among them), over caches holding other lines: looking up only
 * the lines that stay leaves each level as referencing every line in turn
 * does, down to the LRU order (the same references afterwards evict the
 * same lines).  And it counts nothing. */
START_TEST(test_fill_as_one_by_one)
{
  Tiny a, b;
  tiny_open(&a, NULL);
  tiny_open(&b, NULL);
  GRand *r = g_rand_new_with_seed(7);
  for (unsigned i = 0; i < 400; i++) {
    uint64_t pa = LINE(g_rand_int_range(r, 0, 4000));
    memsys_access(a.h, pa, MREQ_LOAD, NULL);
    memsys_access(b.h, pa, MREQ_LOAD, NULL);
  }
  Counters before = a.ctr;
  const MemFill fills[] = {
    { LINE(2048), MEMSYS_FILL_CLEAR, 1024 },  /* 16 lines, every L1D set once */
    { LINE(1024), LINE(3000), 2048 },         /* a copy: 32 lines read, 32 written */
    { LINE(512), MEMSYS_FILL_CLEAR, 64 * 3 }, /* a partial page */
    { LINE(4096), MEMSYS_FILL_CLEAR, 8192 },  /* twice the L2 */
    { LINE(100), MEMSYS_FILL_CLEAR, 4096 },   /* the L2's size, the last */
  };
  MemFillScratch *sc = memsys_fill_scratch_new();
  memsys_fill(a.h, fills, G_N_ELEMENTS(fills), sc);
  fill_one_by_one(&b, fills, G_N_ELEMENTS(fills));
  ck_assert_mem_eq(&before, &a.ctr, sizeof before);
  assert_same_lines(&a, &b, 5000);
  /* The LRU order too: new references evict the same lines from both. */
  for (unsigned i = 0; i < 200; i++) {
    uint64_t pa = LINE(g_rand_int_range(r, 0, 5000));
    memsys_access(a.h, pa, MREQ_LOAD, NULL);
    memsys_access(b.h, pa, MREQ_LOAD, NULL);
  }
  assert_same_lines(&a, &b, 5000);
  /* A second fill reuses the scratch (its counts of the last pass are stale). */
  memsys_fill(a.h, fills + 3, 2, sc);
  fill_one_by_one(&b, fills + 3, 2);
  assert_same_lines(&a, &b, 5000);
  memsys_fill_scratch_free(sc);
  g_rand_free(r);
  tiny_close(&a);
  tiny_close(&b);
}
END_TEST

/* A clear of the L1D's size leaves every one of its lines in the L1D, the
 * last line most recently used; a clear of twice the L2 leaves only its
 * second half in the L2 and the last 1K in the L1D. */
START_TEST(test_fill_keeps_the_last)
{
  Tiny t;
  tiny_open(&t, NULL);
  MemFillScratch *sc = memsys_fill_scratch_new();
  MemFill f = { LINE(64), MEMSYS_FILL_CLEAR, 8192 }; /* lines 64 .. 191 */
  memsys_fill(t.h, &f, 1, sc);
  for (uint64_t x = 64; x < 192; x++) {
    ck_assert_int_eq(memsys_holds(t.h, LINE(x), MREQ_LOAD, MEM_L1), x >= 192 - 16);
    ck_assert_int_eq(memsys_holds(t.h, LINE(x), MREQ_LOAD, MEM_L2), x >= 192 - 64);
    ck_assert(memsys_holds(t.h, LINE(x), MREQ_LOAD, MEM_LLC));
  }
  ACCESS(t.h, LINE(191), MREQ_STORE, MEM_L1, L1D_CYC);
  memsys_fill_scratch_free(sc);
  tiny_close(&t);
}
END_TEST

static Suite *memsys_suite(void)
{
  Suite *s = suite_create("memsys");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_levels_and_latencies);
  tcase_add_test(tc, test_stores_write_allocate);
  tcase_add_test(tc, test_ifetch_uses_l1i);
  tcase_add_test(tc, test_walks_not_dcache_loads);
  tcase_add_test(tc, test_no_llc);
  tcase_add_test(tc, test_dram_cycles);
  tcase_add_test(tc, test_shared_llc);
  tcase_add_test(tc, test_flush);
  tcase_add_test(tc, test_build_errors);
  tcase_add_test(tc, test_level_names);
  tcase_add_test(tc, test_usual_ways_are_the_defaults);
  tcase_add_test(tc, test_stream_ascending_stops_at_page);
  tcase_add_test(tc, test_stream_cross_page);
  tcase_add_test(tc, test_stream_descending);
  tcase_add_test(tc, test_stream_degree_four);
  tcase_add_test(tc, test_stream_bottom_of_memory);
  tcase_add_test(tc, test_stream_two_streams_and_noise);
  tcase_add_test(tc, test_stream_first_window);
  tcase_add_test(tc, test_stream_hit_overlap_first_way);
  tcase_add_test(tc, test_stream_table_pages);
  tcase_add_test(tc, test_stream_table_size_setting);
  tcase_add_test(tc, test_stream_table_64_pages);
  tcase_add_test(tc, test_prefetch_ignores_walks_and_ifetches);
  tcase_add_test(tc, test_nextline);
  tcase_add_test(tc, test_prefetch_timed);
  tcase_add_test(tc, test_prefetch_timed_queues);
  tcase_add_test(tc, test_prefetcher_none);
  tcase_add_test(tc, test_random_invariants);
  suite_add_tcase(s, tc);
  TCase *steps = tcase_create("steps");
  tcase_add_test(steps, test_access_data_twin);
  tcase_add_test(steps, test_stream_steady_step);
  tcase_add_test(steps, test_stream_steady_shortcut);
  suite_add_tcase(s, steps);
  TCase *fill = tcase_create("fill");
  tcase_add_test(fill, test_fill_as_one_by_one);
  tcase_add_test(fill, test_fill_keeps_the_last);
  suite_add_tcase(s, fill);
  return s;
}

TEST_MAIN(memsys_suite)
