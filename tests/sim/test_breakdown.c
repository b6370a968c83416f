/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_breakdown.c - the engine's breakdowns (EngineOptions per_cpu,
 * per_thread, interval_cycles): the rows of each sum to the counted
 * region's counters, counter by counter; the intervals are consecutive,
 * of the asked length but the last; a region cut by roi marks and a
 * warmup keeps only its own intervals; none of it changes the counters.
 */
#include "config.h"
#include "engine.h"
#include "machine_fixture.h"
#include "text.h"
#include "workload.h"

/* Four threads on two nodes, THP collapse by khugepaged and NUMA
 * balancing on, so that kernel counters move during the run too. */
static const char *const two_nodes[] = { "machine.nodes=2", "machine.cpus_per_node=2",
                                         "khugepaged.scan_sleep_millisecs=1", "numa.balancing=pte",
                                         "numa.scan_delay_ms=0.1", "numa.scan_period_min_ms=0.05", NULL };

static void run(const char *const *set, TraceSource *src, const EngineOptions *opt, EngineResult *res)
{
  Machine *m = fixture_machine("skylake", set);
  GError *err = NULL;
  ck_assert_msg(engine_run(m, src, opt, res, &err), "%s", err ? err->message : "");
  trace_source_free(src);
  machine_free(m);
}

static TraceSource *threads_src(void)
{
  GError *err = NULL;
  uint64_t seed = 3;
  TraceSource *src = workload_open("threads:threads=4,size=16M,accesses=200K,rw=0.5", &seed, &err);
  ck_assert_msg(src, "%s", err ? err->message : "");
  return src;
}

static void assert_counters_eq(const Counters *a, const Counters *b, const char *what)
{
  for (int i = 0; i < N_COUNTERS; i++)
    ck_assert_msg(a->c[i] == b->c[i], "%s: %s is %" G_GUINT64_FORMAT ", the region counted %" G_GUINT64_FORMAT, what,
                  counter_def((CounterId)i)->name, a->c[i], b->c[i]);
}

/* The intervals of res: consecutive, of `len` cycles each but the last
 * (or one that a long stall stretched over several: a multiple of len),
 * summing to the counted region; with per-CPU counters, each interval's
 * CPUs sum to its total. */
static void check_intervals(const EngineResult *res, uint64_t len, gboolean per_cpu)
{
  ck_assert_uint_gt(res->n_intervals, 2);
  Counters sum = { 0 };
  for (unsigned i = 0; i < res->n_intervals; i++) {
    const EngineInterval *iv = &res->intervals[i];
    ck_assert_uint_gt(iv->end, iv->start);
    if (i > 0)
      ck_assert_uint_eq(iv->start, res->intervals[i - 1].end);
    if (i + 1 < res->n_intervals)
      ck_assert_uint_eq(iv->end % len, 0);
    counters_add(&sum, &iv->total);
    if (per_cpu) {
      ck_assert_ptr_nonnull(iv->per_cpu);
      Counters cpus = { 0 };
      for (unsigned c = 0; c < res->n_cpus; c++)
        counters_add(&cpus, &iv->per_cpu[c]);
      assert_counters_eq(&cpus, &iv->total, "an interval's CPUs");
    } else {
      ck_assert_ptr_null(iv->per_cpu);
    }
  }
  assert_counters_eq(&sum, &res->counted, "the intervals");
}

START_TEST(test_rows_sum_to_the_region)
{
  EngineResult plain, res;
  EngineOptions off = { 0 };
  run(two_nodes, threads_src(), &off, &plain);
  ck_assert_ptr_null(plain.per_cpu);
  ck_assert_ptr_null(plain.threads);
  ck_assert_ptr_null(plain.intervals);
  uint64_t len = 4000; /* cycles: several intervals in the run */
  EngineOptions all = { .per_cpu = TRUE, .per_thread = TRUE, .interval_cycles = len };
  run(two_nodes, threads_src(), &all, &res);
  /* Breakdowns watch; they change nothing of the run. */
  assert_counters_eq(&res.counted, &plain.counted, "with breakdowns");
  ck_assert_uint_eq(res.elapsed_cycles, plain.elapsed_cycles);
  ck_assert_uint_gt(res.counted.c[CTR_ACCESSES], 0);

  ck_assert_uint_eq(res.n_cpus, 4);
  Counters cpus = { 0 };
  for (unsigned c = 0; c < res.n_cpus; c++)
    counters_add(&cpus, &res.per_cpu[c]);
  assert_counters_eq(&cpus, &res.counted, "the CPUs");

  ck_assert_uint_ge(res.n_threads, 4);
  Counters threads = { 0 };
  for (unsigned t = 0; t < res.n_threads; t++) {
    counters_add(&threads, &res.threads[t].ctr);
    if (t > 0 && res.threads[t].pid) /* by pid, tid; pid 0 last */
      ck_assert(res.threads[t - 1].pid < res.threads[t].pid ||
                (res.threads[t - 1].pid == res.threads[t].pid && res.threads[t - 1].tid < res.threads[t].tid));
  }
  assert_counters_eq(&threads, &res.counted, "the threads");
  for (unsigned t = 0; t < 4; t++) /* each thread made its share of the accesses */
    ck_assert_uint_eq(res.threads[t].ctr.c[CTR_ACCESSES], 50000);

  check_intervals(&res, len, TRUE);
  engine_result_clear(&res);
  engine_result_clear(&plain);
  ck_assert_ptr_null(res.intervals);
}
END_TEST

/* A region marked in the input, with a warmup: the intervals are of the
 * region after its warmup alone, and still sum to what it counted. */
START_TEST(test_intervals_of_a_marked_region)
{
  GString *t = g_string_new("mmap 0x7f0000000000 8M rw\n");
  for (unsigned i = 0; i < 2048; i++) /* setup: uncounted */
    g_string_append_printf(t, "W 0x%" G_GINT64_MODIFIER "x 8\n", 0x7f0000000000 + 4096 * (uint64_t)i);
  g_string_append(t, "roi begin\n");
  for (unsigned r = 0; r < 4; r++)
    for (unsigned i = 0; i < 2048; i++)
      g_string_append_printf(t, "R 0x%" G_GINT64_MODIFIER "x 8\ncompute 20\n", 0x7f0000000000 + 4096 * (uint64_t)i);
  g_string_append(t, "roi end\n");
  for (unsigned i = 0; i < 512; i++) /* after the region: uncounted */
    g_string_append_printf(t, "W 0x%" G_GINT64_MODIFIER "x 8\n", 0x7f0000000000 + 4096 * (uint64_t)i);
  GError *err = NULL;
  TraceSource *src = text_source_from_string("region.txt", t->str, &err);
  ck_assert_no_error(err);
  g_string_free(t, TRUE);
  uint64_t len = 10000;
  EngineOptions opt = { .warmup = 1000, .interval_cycles = len };
  EngineResult res;
  run(NULL, src, &opt, &res);
  ck_assert_uint_eq(res.counted.c[CTR_ACCESSES], 4 * 2048 - 1000);
  check_intervals(&res, len, FALSE);
  ck_assert_ptr_null(res.per_cpu);
  engine_result_clear(&res);
}
END_TEST

/* What EngineOptions.on_interval and on_region were given, in order. */
typedef struct {
  GArray *ivs;         /* EngineInterval, without per_cpu */
  unsigned regions;    /* on_region calls */
  uint64_t region_start;
  guint mark;          /* ivs->len at the last on_region */
} Got;

static void got_interval(const EngineInterval *iv, unsigned n_cpus, void *data)
{
  Got *g = data;
  EngineInterval c = *iv;
  c.per_cpu = NULL;
  g_array_append_val(g->ivs, c);
}

static void got_region(uint64_t start, void *data)
{
  Got *g = data;
  g->regions++;
  g->region_start = start;
  g->mark = g->ivs->len;
}

/* The intervals passed on from index `from`: consecutive, summing to what
 * the region counted. */
static void check_passed(const Got *g, guint from, const EngineResult *res)
{
  Counters sum = { 0 };
  ck_assert_uint_gt(g->ivs->len, from + 2);
  for (guint i = from; i < g->ivs->len; i++) {
    const EngineInterval *iv = &g_array_index(g->ivs, EngineInterval, i);
    ck_assert_uint_gt(iv->end, iv->start);
    if (i > from)
      ck_assert_uint_eq(iv->start, g_array_index(g->ivs, EngineInterval, i - 1).end);
    counters_add(&sum, &iv->total);
  }
  assert_counters_eq(&sum, &res->counted, "the intervals passed on");
}

/* A text trace: `setup` writes, then with `roi` a marked region of `reads`
 * reads (twice with `two`, a second region after the first), else the
 * reads unmarked. */
static TraceSource *region_src(unsigned setup, unsigned reads, gboolean roi, gboolean two)
{
  GString *t = g_string_new("mmap 0x7f0000000000 8M rw\n");
  for (unsigned i = 0; i < setup; i++)
    g_string_append_printf(t, "W 0x%" G_GINT64_MODIFIER "x 8\n", 0x7f0000000000 + 4096 * (uint64_t)(i % 2048));
  for (unsigned r = 0; r < (two ? 2u : 1u); r++) {
    if (roi)
      g_string_append(t, "roi begin\n");
    for (unsigned i = 0; i < reads; i++)
      g_string_append_printf(t, "R 0x%" G_GINT64_MODIFIER "x 8\ncompute 20\n", 0x7f0000000000 + 4096 * (uint64_t)(i % 2048));
    if (roi)
      g_string_append(t, "roi end\n");
  }
  GError *err = NULL;
  TraceSource *src = text_source_from_string("region.txt", t->str, &err);
  ck_assert_no_error(err);
  g_string_free(t, TRUE);
  return src;
}

/* Each interval goes to on_interval as it closes, the same as those kept;
 * the setup before `roi begin` is held and dropped, never passed on. */
START_TEST(test_intervals_passed_on)
{
  Got g = { g_array_new(FALSE, TRUE, sizeof(EngineInterval)) };
  uint64_t len = 10000;
  EngineOptions opt = { .interval_cycles = len, .on_interval = got_interval, .on_region = got_region,
                        .interval_data = &g, .keep_intervals = TRUE };
  EngineResult res;
  run(NULL, region_src(2048, 8192, TRUE, FALSE), &opt, &res);
  check_intervals(&res, len, FALSE);
  ck_assert_uint_eq(g.ivs->len, res.n_intervals);
  for (unsigned i = 0; i < res.n_intervals; i++) {
    const EngineInterval *a = &g_array_index(g.ivs, EngineInterval, i), *b = &res.intervals[i];
    ck_assert_uint_eq(a->start, b->start);
    ck_assert_uint_eq(a->end, b->end);
    assert_counters_eq(&a->total, &b->total, "an interval passed on");
  }
  check_passed(&g, 0, &res);
  ck_assert_uint_eq(g.regions, 0);
  engine_result_clear(&res);
  /* Not kept unless asked: a long run holds none of them. */
  g_array_set_size(g.ivs, 0);
  opt.keep_intervals = FALSE;
  run(NULL, region_src(2048, 8192, TRUE, FALSE), &opt, &res);
  ck_assert_ptr_null(res.intervals);
  ck_assert_uint_eq(res.n_intervals, 0);
  check_passed(&g, 0, &res);
  engine_result_clear(&res);
  g_array_free(g.ivs, TRUE);
}
END_TEST

/* Two marked regions: the first one's intervals went out as they closed;
 * on_region says where the second, the one counted, begins, and the
 * intervals after it sum to what it counted. */
START_TEST(test_intervals_of_a_second_region)
{
  Got g = { g_array_new(FALSE, TRUE, sizeof(EngineInterval)) };
  EngineOptions opt = { .interval_cycles = 10000, .on_interval = got_interval, .on_region = got_region,
                        .interval_data = &g };
  EngineResult res;
  run(NULL, region_src(256, 4096, TRUE, TRUE), &opt, &res);
  ck_assert_uint_eq(g.regions, 1);
  ck_assert_uint_gt(g.mark, 2);
  ck_assert_uint_ge(g.region_start, g_array_index(g.ivs, EngineInterval, g.mark - 1).end);
  ck_assert_uint_eq(g_array_index(g.ivs, EngineInterval, g.mark).start, g.region_start);
  check_passed(&g, g.mark, &res);
  ck_assert_uint_eq(res.counted.c[CTR_ACCESSES], 4096);
  engine_result_clear(&res);
  g_array_free(g.ivs, TRUE);
}
END_TEST

/* More intervals than are kept: memory stays bounded, neighbours merged in
 * pairs (each kept one the sum of interval_merged), still consecutive and
 * summing to the region; every one still passed on, in order.  An input
 * that marks no region holds its intervals until engine_intervals_max()
 * of them, then passes them on as they close. */
START_TEST(test_intervals_bounded)
{
  Got g = { g_array_new(FALSE, TRUE, sizeof(EngineInterval)) };
  uint64_t len = 8; /* cycles: about one interval a record */
  EngineOptions opt = { .interval_cycles = len, .on_interval = got_interval, .on_region = got_region,
                        .interval_data = &g, .keep_intervals = TRUE };
  EngineResult res;
  run(NULL, region_src(0, 16384, FALSE, FALSE), &opt, &res);
  unsigned max = engine_intervals_max(0);
  ck_assert_uint_gt(g.ivs->len, 2 * max);
  ck_assert_uint_le(res.n_intervals, max);
  ck_assert_uint_ge(res.interval_merged, 2);
  ck_assert_uint_ge(res.n_intervals * res.interval_merged, g.ivs->len);
  check_intervals(&res, len, FALSE);
  check_passed(&g, 0, &res);
  ck_assert_uint_eq(res.intervals[0].start, g_array_index(g.ivs, EngineInterval, 0).start);
  ck_assert_uint_eq(res.intervals[0].end, g_array_index(g.ivs, EngineInterval, res.interval_merged - 1).end);
  ck_assert_uint_eq(g.regions, 0);
  engine_result_clear(&res);
  g_array_free(g.ivs, TRUE);
  /* With a row per CPU each, fewer are kept. */
  ck_assert_uint_lt(engine_intervals_max(64), max);
  ck_assert_uint_eq(engine_intervals_max(1u << 20), 2);
  ck_assert_uint_eq(engine_intervals_max(63) % 2, 0);
}
END_TEST

static Suite *breakdown_suite(void)
{
  Suite *s = suite_create("breakdown");
  TCase *tc = tcase_create("engine");
  tcase_add_test(tc, test_rows_sum_to_the_region);
  tcase_add_test(tc, test_intervals_of_a_marked_region);
  tcase_add_test(tc, test_intervals_passed_on);
  tcase_add_test(tc, test_intervals_of_a_second_region);
  tcase_add_test(tc, test_intervals_bounded);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(breakdown_suite)
