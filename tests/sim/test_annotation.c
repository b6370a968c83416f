/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of run --annotate's bookkeeping (sim/annotation.h): the rows
 * add up to the run's counters, the run's counters are the same with
 * annotation on and off, accesses go to the instruction of their last
 * fetch (text) or their own ip (ChampSim) and to the mapping they touch,
 * and only the counted region (after --warmup) is attributed.
 */
#include "config.h"
#include "annotation.h"
#include "champsim.h"
#include "machine_fixture.h"

/* Two mappings, code fetched from two blocks, a region of interest with
 * accesses before it, and two threads on two CPUs. */
static char *annotate_trace(void)
{
  GString *t = g_string_new("# mmusim text trace v1\n"
                            "mmap 0x400000 2M rx\n"
                            "mmap 0x7f0000000000 64M rw\n"
                            "mmap 0x7ff000000000 1M rw stack\n"
                            "X 0x401000 4\nW 0x7f0000000000 8\n" /* before the region: not attributed */
                            "roi begin\n");
  for (unsigned i = 0; i < 2000; i++) {
    g_string_append_printf(t, "thread %u\n", 1 + i % 2);
    g_string_append_printf(t, "X 0x%x 4\n", i % 3 ? 0x401000 : 0x402040);
    g_string_append_printf(t, "R 0x%" G_GINT64_MODIFIER "x 8 +3\n", (uint64_t)(0x7f0000000000ULL + (uint64_t)i * 20011 * 64 % (60u << 20)));
    g_string_append_printf(t, "W 0x%" G_GINT64_MODIFIER "x 8\n", (uint64_t)(0x7ff000000000ULL + (uint64_t)(i % 200) * 4096));
  }
  g_string_append(t, "roi end\nR 0x7f0000000000 8\n");
  return g_string_free(t, FALSE);
}

static void run_text(const char *text, Annotation *ann, uint64_t warmup, Counters *counted)
{
  static const char *const sets[] = { "machine.cpus_per_node=2", "thp.enabled=never", NULL };
  Machine *m = fixture_machine("skylake", sets);
  GError *err = NULL;
  TraceSource *src = text_source_from_string("ann.txt", text, &err);
  ck_assert_no_error(err);
  EngineOptions opt = { .annotate = ann, .warmup = warmup };
  EngineResult res;
  ck_assert_msg(engine_run(m, src, &opt, &res, &err), "%s", err ? err->message : "");
  *counted = res.counted;
  engine_result_clear(&res);
  trace_source_free(src);
  machine_free(m);
}

static void assert_rows_add_up(const Annotation *a, const Counters *counted)
{
  AnnCounts run, total, rows;
  annotation_counts_of(counted, &run);
  annotation_total(a, &total);
  for (unsigned i = 0; i < N_ANN; i++)
    ck_assert_msg(total.v[i] == run.v[i], "%s: rows %" G_GUINT64_FORMAT ", run %" G_GUINT64_FORMAT,
                  annotation_metric_name((AnnMetric)i), total.v[i], run.v[i]);
  /* The mapping rows add up to the same. */
  guint n;
  g_autofree AnnRow *r = annotation_by_region(a, ANN_WALK_CYCLES, &n);
  memset(&rows, 0, sizeof rows);
  for (guint k = 0; k < n; k++)
    for (unsigned i = 0; i < N_ANN; i++)
      rows.v[i] += r[k].c.v[i];
  ck_assert_mem_eq(rows.v, total.v, sizeof rows.v);
}

START_TEST(test_rows_add_up_and_change_nothing)
{
  g_autofree char *text = annotate_trace();
  Counters off, on;
  run_text(text, NULL, 0, &off);
  Annotation *a = annotation_new();
  run_text(text, a, 0, &on);
  /* Annotation takes the full path for every access: the same counters. */
  ck_assert_mem_eq(off.c, on.c, sizeof off.c);
  ck_assert_uint_eq(on.c[CTR_ACCESSES], 2000 * 3);
  ck_assert_uint_gt(on.c[CTR_WALK_CYCLES], 0);
  ck_assert_uint_gt(on.c[CTR_PAGE_FAULTS], 0);
  assert_rows_add_up(a, &on);
  annotation_free(a);
}
END_TEST

START_TEST(test_instructions_and_mappings)
{
  g_autofree char *text = annotate_trace();
  Counters on;
  Annotation *a = annotation_new();
  run_text(text, a, 0, &on);
  ck_assert(annotation_has_ips(a));
  guint n;
  g_autofree AnnRow *ips = annotation_by_ip(a, ANN_ACCESSES, &n);
  ck_assert_uint_eq(n, 2); /* each access after its thread's fetch */
  ck_assert_uint_eq(ips[0].ip, 0x401000);
  ck_assert_uint_eq(ips[0].c.v[ANN_ACCESSES], 3 * 1333); /* the 1333 i with i % 3 != 0 */
  ck_assert_uint_eq(ips[1].ip, 0x402040);
  ck_assert_uint_eq(ips[0].c.v[ANN_ACCESSES] + ips[1].c.v[ANN_ACCESSES], 6000);
  g_autofree AnnRow *maps = annotation_by_region(a, ANN_ACCESSES, &n);
  ck_assert_uint_eq(n, 3);
  for (guint i = 0; i < n; i++) {
    ck_assert_uint_eq(maps[i].c.v[ANN_ACCESSES], 2000);
    ck_assert_uint_eq(maps[i].pid, 1);
    if (maps[i].start == 0x7ff000000000ULL) {
      ck_assert(maps[i].flags & MAP_F_STACK);
      ck_assert_uint_eq(maps[i].end, 0x7ff000100000ULL);
      ck_assert_uint_eq(maps[i].c.v[ANN_PAGE_FAULTS], 200); /* one a page, first touched in the region */
    } else {
      ck_assert(!(maps[i].flags & MAP_F_STACK));
    }
  }
  /* Sorted by the metric asked, descending. */
  g_autofree AnnRow *by_walks = annotation_by_region(a, ANN_WALK_CYCLES, &n);
  for (guint i = 1; i < n; i++)
    ck_assert_uint_ge(by_walks[i - 1].c.v[ANN_WALK_CYCLES], by_walks[i].c.v[ANN_WALK_CYCLES]);
  annotation_free(a);
}
END_TEST

START_TEST(test_warmup_left_out)
{
  g_autofree char *text = annotate_trace();
  Counters on;
  Annotation *a = annotation_new();
  run_text(text, a, 1000, &on);
  ck_assert_uint_eq(on.c[CTR_ACCESSES], 5000);
  assert_rows_add_up(a, &on);
  annotation_free(a);
}
END_TEST

/* What no access caused is not attributed: an munmap's flush in the
 * region, and the rows still never exceed the run. */
START_TEST(test_events_not_attributed)
{
  const char *text = "mmap 0x7f0000000000 8M rw\n"
                     "roi begin\n"
                     "W 0x7f0000000000 8\nW 0x7f0000001000 8\n"
                     "munmap 0x7f0000000000 4K\n"
                     "R 0x7f0000001000 8\n"
                     "R 0x7f0000000000 8\n" /* SIGSEGV: no mapping */
                     "roi end\n";
  Counters on;
  Annotation *a = annotation_new();
  run_text(text, a, 0, &on);
  assert_rows_add_up(a, &on);
  ck_assert(!annotation_has_ips(a)); /* no fetch, no ip */
  guint n;
  g_autofree AnnRow *maps = annotation_by_region(a, ANN_ACCESSES, &n);
  ck_assert_uint_eq(n, 3); /* the munmap split the VMA: two rows, and the SIGSEGV's */
  ck_assert_uint_eq(maps[0].start, 0x7f0000000000ULL);
  ck_assert_uint_eq(maps[0].c.v[ANN_ACCESSES], 2);
  ck_assert_uint_eq(maps[1].start, 0); /* ties by address: the SIGSEGV's row first */
  ck_assert_uint_eq(maps[1].end, 0);
  ck_assert_uint_eq(maps[1].c.v[ANN_PAGE_FAULTS], 1);
  ck_assert_uint_eq(maps[2].start, 0x7f0000001000ULL);
  ck_assert_uint_eq(maps[2].c.v[ANN_ACCESSES], 1);
  annotation_free(a);
}
END_TEST

/* ChampSim: each access goes to its own record's ip, not its block's. */
START_TEST(test_champsim_ips)
{
  enum { N = 64 };
  uint8_t buf[N * CHAMPSIM_RECORD_BYTES];
  memset(buf, 0, sizeof buf);
  for (unsigned i = 0; i < N; i++) {
    uint8_t *r = buf + i * CHAMPSIM_RECORD_BYTES;
    uint64_t ip = 0x400000 + 4 * (i % 4), addr = 0x7f0000000000ULL + (uint64_t)i * 4096;
    memcpy(r, &ip, 8);
    memcpy(r + 32, &addr, 8); /* source_memory[0] */
  }
  Machine *m = fixture_machine("skylake", NULL);
  TraceSource *src = champsim_source_from_input(trace_input_from_memory("t.champsim", buf, sizeof buf, FALSE));
  Annotation *a = annotation_new();
  EngineOptions opt = { .annotate = a };
  EngineResult res;
  GError *err = NULL;
  ck_assert_msg(engine_run(m, src, &opt, &res, &err), "%s", err ? err->message : "");
  assert_rows_add_up(a, &res.counted);
  guint n;
  g_autofree AnnRow *ips = annotation_by_ip(a, ANN_ACCESSES, &n);
  ck_assert_uint_eq(n, 4);
  ck_assert_uint_eq(ips[0].ip, 0x400000); /* its 16 loads and the one fetch of the block */
  ck_assert_uint_eq(ips[0].c.v[ANN_ACCESSES], N / 4 + 1);
  for (guint i = 1; i < n; i++)
    ck_assert_uint_eq(ips[i].c.v[ANN_ACCESSES], N / 4);
  engine_result_clear(&res);
  trace_source_free(src);
  machine_free(m);
  annotation_free(a);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("annotation");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_rows_add_up_and_change_nothing);
  tcase_add_test(tc, test_instructions_and_mappings);
  tcase_add_test(tc, test_warmup_left_out);
  tcase_add_test(tc, test_events_not_attributed);
  tcase_add_test(tc, test_champsim_ips);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(suite)
