/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_host_bench.c - the pure parts of `mmusim host bench` and `host
 * validate`: the chain is one cycle over every slot in ptrchase's order, the
 * smaps parser reads AnonHugePages of the right mappings, the statistics,
 * the span list, the JSON shape, and the latency fit.  No timing is asserted.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include "host_bench.h"
#include "host_validate.h"
#include <glib/gstdio.h>
#include <string.h>
#include "runner.h"
#include "settings.h"
#include "perm.h"
#include "testutil.h"

/* Follow the chain n steps from its start: every slot once, back at the start. */
static void check_cycle(uint64_t n, uint64_t slot_words, uint64_t seed)
{
  uintptr_t *buf = g_new0(uintptr_t, n * slot_words);
  uintptr_t start = host_bench_chain_build(buf, n, slot_words, seed);
  guint8 *seen = g_new0(guint8, n);
  uintptr_t p = start;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t slot = (p - (uintptr_t)buf) / (slot_words * sizeof(uintptr_t));
    ck_assert_uint_lt(slot, n);
    ck_assert_msg(!seen[slot], "slot %" G_GUINT64_FORMAT " visited twice (step %" G_GUINT64_FORMAT ")",
                  (guint64)slot, (guint64)k);
    seen[slot] = 1;
    p = host_bench_chase(p, 1);
  }
  ck_assert_msg(p == start, "the chain is not one cycle of %" G_GUINT64_FORMAT " slots", (guint64)n);
  g_free(seen);
  g_free(buf);
}

START_TEST(test_chain_single_cycle)
{
  check_cycle(1, 8, 1);
  check_cycle(2, 8, 1);
  check_cycle(1000, 8, 1);
  check_cycle(4099, 1, 7);
  check_cycle(16384, 8, 42);
}
END_TEST

/* Step k of the native chase is slot perm(k) of ptrchase's permutation with
 * the same seed: the model's generated chase and the native one are the
 * same access pattern. */
START_TEST(test_chain_is_ptrchase_order)
{
  const uint64_t n = 5000, words = HOST_BENCH_SLOT_BYTES / sizeof(uintptr_t);
  uintptr_t *buf = g_new0(uintptr_t, n * words);
  Perm perm;
  perm_init(&perm, n, HOST_BENCH_SEED);
  uintptr_t p = host_bench_chain_build(buf, n, words, HOST_BENCH_SEED);
  for (uint64_t k = 0; k < 2 * n; k++) {
    uint64_t slot = (p - (uintptr_t)buf) / HOST_BENCH_SLOT_BYTES;
    loop_assert_uint_eq(slot, perm_apply(&perm, k % n));
    p = host_bench_chase(p, 1);
  }
  g_free(buf);
}
END_TEST

START_TEST(test_random_in_bounds)
{
  /* Every load lands in the buffer: a sum of slot values equal to the sum
   * of the slots drawn proves nothing was read outside. */
  const uint64_t n = 1000, words = 8;
  uintptr_t *buf = g_new0(uintptr_t, n * words);
  for (uint64_t i = 0; i < n; i++)
    buf[i * words] = 1;
  uint64_t state = 1;
  ck_assert_uint_eq(host_bench_random(buf, n, words, 100000, &state), 100000);
  g_free(buf);
}
END_TEST

static const char SMAPS[] =
  "55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234    /usr/bin/mmusim\n"
  "Size:                132 kB\n"
  "AnonHugePages:      4096 kB\n"
  "7f0000000000-7f0040000000 rw-p 00000000 00:00 0 \n"
  "Size:            1048576 kB\n"
  "Rss:             1048576 kB\n"
  "AnonHugePages:    develop kB\n";

static const char SMAPS_OK[] =
  "55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234    /usr/bin/mmusim\n"
  "AnonHugePages:      4096 kB\n"
  "7f0000000000-7f0020000000 rw-p 00000000 00:00 0 \n"
  "Size:             524288 kB\n"
  "AnonHugePages:    522240 kB\n"
  "FilePmdMapped:         0 kB\n"
  "7f0020000000-7f0040000000 rw-p 00000000 00:00 0 \n"
  "AnonHugePages:      2048 kB\n"
  "VmFlags: rd wr mr mw me ac hg\n"
  "7fff00000000-7fff00021000 rw-p 00000000 00:00 0          [stack]\n"
  "AnonHugePages:      8192 kB\n";

START_TEST(test_smaps_parser)
{
  uint64_t bytes = 1;
  GError *err = NULL;
  /* Both mappings that overlap the buffer count, the others do not. */
  ck_assert(host_bench_smaps_anon_huge(SMAPS_OK, 0x7f0000000000, 0x7f0040000000, &bytes, &err));
  ck_assert_uint_eq(bytes, (522240ULL + 2048) * 1024);
  ck_assert(host_bench_smaps_anon_huge(SMAPS_OK, 0x7f0000000000, 0x7f0000200000, &bytes, &err));
  ck_assert_uint_eq(bytes, 522240ULL * 1024);
  ck_assert(host_bench_smaps_anon_huge(SMAPS_OK, 0x1000, 0x2000, &bytes, &err));
  ck_assert_uint_eq(bytes, 0);
  /* A malformed value in the buffer's mapping is an error naming the line. */
  ck_assert(!host_bench_smaps_anon_huge(SMAPS, 0x7f0000000000, 0x7f0040000000, &bytes, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "line 7"));
  g_clear_error(&err);
  /* Text with no mapping line is not smaps. */
  ck_assert(!host_bench_smaps_anon_huge("MemTotal: 1 kB\n", 0, 1, &bytes, &err));
  g_clear_error(&err);
}
END_TEST

START_TEST(test_summarise)
{
  const double v[] = { 5, 1, 3, 2, 4 };
  double med, min, max, sd;
  host_bench_summarise(v, 5, &med, &min, &max, &sd);
  ck_assert_double_eq(med, 3);
  ck_assert_double_eq(min, 1);
  ck_assert_double_eq(max, 5);
  ck_assert_double_eq_tol(sd, sqrt(2.5), 1e-12);
  host_bench_summarise(v, 4, &med, &min, &max, &sd);
  ck_assert_double_eq(med, 2.5);
  host_bench_summarise(v, 1, &med, &min, &max, &sd);
  ck_assert_double_eq(med, 5);
  ck_assert_double_eq(sd, 0);
}
END_TEST

START_TEST(test_parse_spans)
{
  GArray *a = NULL;
  GError *err = NULL;
  ck_assert(host_bench_parse_spans("1M, 64K,4G", &a, &err));
  ck_assert_uint_eq(a->len, 3);
  ck_assert_uint_eq(g_array_index(a, uint64_t, 0), 1 << 20);
  ck_assert_uint_eq(g_array_index(a, uint64_t, 1), 64 << 10);
  ck_assert_uint_eq(g_array_index(a, uint64_t, 2), 4ULL << 30);
  g_array_unref(a);
  const char *bad[] = { "", "1X", "0", "100", "1M,,2M", "512G" };
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
    ck_assert_msg(!host_bench_parse_spans(bad[i], &a, &err), "'%s' accepted", bad[i]);
    ck_assert_ptr_nonnull(strstr(err->message, "--spans"));
    g_clear_error(&err);
  }
}
END_TEST

START_TEST(test_json_shape)
{
  double ns[2][2] = { { 10, 12 }, { 8, 9 } };
  HostBenchPoint pts[2] = {
    { .kind = HOST_BENCH_CHASE, .pages = HOST_BENCH_4K, .span_bytes = 1 << 20, .accesses = 100, .repeats = 2,
      .ns_per_access = ns[0], .median_ns = 11 },
    { .kind = HOST_BENCH_CHASE, .pages = HOST_BENCH_THP, .span_bytes = 1 << 20, .accesses = 100, .repeats = 2,
      .ns_per_access = ns[1], .median_ns = 8.5, .huge_fraction = 0.5 },
  };
  uint64_t skipped = 8ULL << 30;
  HostBenchResult r = { .points = pts, .n_points = 2, .skipped_spans = &skipped, .n_skipped = 1,
                        .thp_enabled = "[madvise]", .kernel = "6.1", .seed = 1 };
  g_autofree char *text = host_bench_json(&r);
  g_autoptr(JsonParser) parser = json_parser_new();
  ck_assert(json_parser_load_from_data(parser, text, -1, NULL));
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  JsonObject *host = json_object_get_object_member(root, "host");
  ck_assert_str_eq(json_object_get_string_member(host, "kernel"), "6.1");
  ck_assert(json_object_has_member(host, "virtualised"));
  ck_assert(json_object_has_member(host, "date"));
  JsonArray *points = json_object_get_array_member(root, "points");
  ck_assert_uint_eq(json_array_get_length(points), 2);
  JsonObject *p1 = json_array_get_object_element(points, 1);
  ck_assert_str_eq(json_object_get_string_member(p1, "kind"), "chase");
  ck_assert_str_eq(json_object_get_string_member(p1, "pages"), "THP");
  ck_assert_int_eq(json_object_get_int_member(p1, "span_bytes"), 1 << 20);
  ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(p1, "ns_per_access")), 2);
  ck_assert_double_eq(json_object_get_double_member(p1, "median_ns"), 8.5);
  ck_assert(json_object_get_boolean_member(p1, "fewer_huge_pages"));
  ck_assert(!json_object_get_boolean_member(json_array_get_object_element(points, 0), "fewer_huge_pages"));
  ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(root, "skipped_spans")), 1);
}
END_TEST

/* A real run, tiny: each point holds every buffer's repeats and one median
 * per buffer, and the range spans the buffer medians.  Nothing here depends
 * on how fast the host is. */
START_TEST(test_parse_stat)
{
  uint64_t busy, total;
  ck_assert(host_bench_parse_stat("cpu  100 5 20 800 50 3 2 10 0 0\ncpu0 50 2 10 400 25 1 1 5 0 0\n", &busy, &total));
  ck_assert_uint_eq(total, 990);
  ck_assert_uint_eq(busy, 140); /* all but idle (800) and iowait (50) */
  ck_assert(host_bench_parse_stat("cpu 1 2 3 4\n", &busy, &total)); /* kernels before 2.5.41: four fields */
  ck_assert_uint_eq(total, 10);
  ck_assert_uint_eq(busy, 6);
  ck_assert(!host_bench_parse_stat("intr 1 2 3\n", &busy, &total));
  ck_assert(!host_bench_parse_stat("", &busy, &total));
  ck_assert(!host_bench_parse_stat(NULL, &busy, &total));
}
END_TEST

START_TEST(test_buffers)
{
  uint64_t span = 256 << 10;
  HostBenchSpec spec = { .spans = &span, .n_spans = 1, .repeats = 2, .buffers = 3, .target_s = 0.001,
                         .seed = HOST_BENCH_SEED, .chase_only = TRUE };
  HostBenchResult r;
  GError *err = NULL;
  ck_assert_msg(host_bench_run(&spec, &r, &err), "%s", err ? err->message : "");
  ck_assert_uint_eq(r.n_points, 2); /* chase 4K and chase THP */
  for (guint i = 0; i < r.n_points; i++) {
    const HostBenchPoint *pt = &r.points[i];
    ck_assert_uint_eq(pt->buffers, 3);
    ck_assert_uint_eq(pt->repeats, 6);
    double lo, hi;
    host_bench_buffer_range(pt, &lo, &hi);
    ck_assert(lo > 0 && lo <= hi);
    for (unsigned b = 0; b < pt->buffers; b++)
      ck_assert(pt->buffer_median_ns[b] >= lo && pt->buffer_median_ns[b] <= hi);
    ck_assert(pt->min_ns <= lo && hi <= pt->max_ns);
    ck_assert(pt->others_busy >= 0 && pt->others_busy <= 1);
  }
  ck_assert_ptr_nonnull(host_bench_find(&r, HOST_BENCH_CHASE, HOST_BENCH_THP, span));
  host_bench_result_clear(&r);
}
END_TEST

START_TEST(test_fit_latency)
{
  /* Two points exactly affine in the latency, measured at 100 ns: the fit
   * finds it whatever the slopes. */
  const double a[] = { 20, 30 }, b[] = { 0.5, 1.2 };
  double native[2], x;
  for (int i = 0; i < 2; i++)
    native[i] = a[i] + b[i] * 100;
  ck_assert(host_validate_fit_latency(a, b, native, 2, &x));
  ck_assert_double_eq_tol(x, 100, 1e-9);
  /* A point that does not depend on it does not move the fit. */
  const double a3[] = { 20, 5 }, b3[] = { 0.5, 0 }, n3[] = { 70, 7 };
  ck_assert(host_validate_fit_latency(a3, b3, n3, 2, &x));
  ck_assert_double_eq_tol(x, 100, 1e-9);
  /* No slope: no fit. */
  const double zero[] = { 0, 0 };
  ck_assert(!host_validate_fit_latency(a, zero, native, 2, &x));
  ck_assert_double_eq_tol(host_validate_error(110, 100), 0.1, 1e-12);
}
END_TEST

/* Without -m, the machine is this host as `host detect` writes it: a
 * temporary file holding that text, which loads as a machine. */
START_TEST(test_default_machine)
{
  g_autofree char *path = NULL, *text = NULL;
  GError *err = NULL;
  ck_assert_msg(host_validate_default_machine(&path, &text, &err), "%s", err ? err->message : "");
  g_autofree char *back = NULL;
  ck_assert(g_file_get_contents(path, &back, NULL, NULL));
  ck_assert_str_eq(back, text);
  ck_assert_ptr_nonnull(strstr(text, "Written by `mmusim host detect`"));
  RunSpec check = { .machine = path };
  Settings *s = runner_settings(&check, &err);
  ck_assert_msg(s != NULL, "%s", err ? err->message : "");
  settings_free(s);
  g_unlink(path);
}
END_TEST

static Suite *host_bench_suite(void)
{
  Suite *s = suite_create("host_bench");
  TCase *tc = tcase_create("chain");
  tcase_add_test(tc, test_chain_single_cycle);
  tcase_add_test(tc, test_chain_is_ptrchase_order);
  tcase_add_test(tc, test_random_in_bounds);
  suite_add_tcase(s, tc);
  tc = tcase_create("parse");
  tcase_add_test(tc, test_smaps_parser);
  tcase_add_test(tc, test_summarise);
  tcase_add_test(tc, test_parse_spans);
  tcase_add_test(tc, test_json_shape);
  tcase_add_test(tc, test_parse_stat);
  suite_add_tcase(s, tc);
  tc = tcase_create("run");
  tcase_add_test(tc, test_buffers);
  suite_add_tcase(s, tc);
  tc = tcase_create("validate");
  tcase_add_test(tc, test_fit_latency);
  tcase_add_test(tc, test_default_machine);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(host_bench_suite)
