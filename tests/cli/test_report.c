/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_report.c - the perf-stat-like text report, JSON, CSV, the repeat
 * statistics, and the --events writer.
 *
 * Reports are built by hand from known counters; expected lines and ratios
 * are worked out by hand (the comments show the arithmetic).
 */
#include "config.h"
#include <errno.h>
#include "testutil.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "events.h"
#include "report.h"

/* ---- fixtures ------------------------------------------------------------ */

typedef struct {
  RunReport r;
  Settings *settings;
} Fixture;

/* One x86_64 run whose notes are easy to check by hand. */
static void fixture_init(Fixture *f)
{
  memset(f, 0, sizeof *f);
  f->settings = settings_new();
  double *v = f->r.mean.v;
  v[CTR_ACCESSES] = 1300000;
  v[CTR_LOADS] = 1000000;
  v[CTR_STORES] = 250000;
  v[CTR_IFETCHES] = 50000;
  v[CTR_INSTRUCTIONS] = 246913578;
  v[CTR_CYCLES] = 123456789;
  v[CTR_SECONDS] = 0.05;
  v[CTR_NS_PER_ACCESS] = 0.05 * 1e9 / 1300000; /* 38.4615... */
  v[CTR_IPC] = 2.0;
  v[CTR_DTLB_LOADS] = 1000000;
  v[CTR_DTLB_LOAD_MISSES] = 812345;
  v[CTR_PAGE_WALKS] = 812345;
  v[CTR_WALK_CYCLES] = 12345678;
  v[CTR_PAGE_FAULTS] = 1000;
  v[CTR_MEM_TOUCHED_BYTES] = 1073741824;
  v[CTR_SLB_MISSES] = 77;
  f->r.machine = "skylake";
  f->r.workload = "ptrchase:size=1G,accesses=1M";
  f->r.arch = "x86_64";
  f->r.runs = 1;
  f->r.settings = f->settings;
  f->r.host_seconds = 1.234;
  f->r.host_accesses_per_second = 12.34e6;
  f->r.host_roi_accesses_per_second = 4.56e6;
  f->r.host_peak_rss_bytes = 45ull * 1024 * 1024;
}

static void fixture_clear(Fixture *f)
{
  settings_free(f->settings);
}

typedef void (*Printer)(const RunReport *r, FILE *out);

static char *render(Printer print, const RunReport *r)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(out);
  print(r, out);
  fclose(out);
  return buf;
}

/* The whole line, not a part of a longer one. */
static void assert_has_line(const char *text, const char *line)
{
  g_autofree char *needle = g_strdup_printf("\n%s\n", line);
  ck_assert_msg(strstr(text, needle) != NULL, "line\n[%s]\nnot in report:\n%s", line, text);
}

/* TRUE if `line` is a counter line ("<count>      <name> ...") for `name`. */
static gboolean is_counter_line(const char *line, const char *name)
{
  const char *p = line;
  while (*p == ' ')
    p++;
  if (!g_ascii_isdigit(*p))
    return FALSE;
  while (*p && *p != ' ')
    p++;
  if (strncmp(p, "      ", 6) != 0)
    return FALSE;
  p += 6;
  size_t n = strlen(name);
  return strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\0');
}

/* The line of the counter, or NULL. */
static char *find_counter_line(const char *text, const char *name)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (int i = 0; lines[i]; i++)
    if (is_counter_line(lines[i], name))
      return g_strdup(lines[i]);
  return NULL;
}

/* The line just before the counter's line. */
static char *line_before_counter(const char *text, const char *name)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (int i = 1; lines[i]; i++)
    if (is_counter_line(lines[i], name))
      return g_strdup(lines[i - 1]);
  return NULL;
}

/* ---- report_aggregate ------------------------------------------------------ */

START_TEST(test_aggregate_three_runs)
{
  CounterValues runs[3];
  memset(runs, 0, sizeof runs);
  /* cycles 100, 110, 120: mean 110; sample stddev sqrt((100 + 0 + 100) / 2)
   * = 10; stddev of the mean 10 / sqrt(3) = 5.7735; relative 5.7735 / 110 =
   * 0.0524864. */
  runs[0].v[CTR_CYCLES] = 100;
  runs[1].v[CTR_CYCLES] = 110;
  runs[2].v[CTR_CYCLES] = 120;
  /* accesses all equal: no noise. */
  for (int k = 0; k < 3; k++)
    runs[k].v[CTR_ACCESSES] = 5000;
  /* page_walks 0, 0, 0: mean 0 and relative stddev 0, not NaN. */
  CounterValues mean, rsd;
  report_aggregate(runs, 3, &mean, &rsd);
  ck_assert_double_eq_tol(mean.v[CTR_CYCLES], 110.0, 1e-12);
  ck_assert_double_eq_tol(rsd.v[CTR_CYCLES], 0.0524863881, 1e-9);
  ck_assert_double_eq(mean.v[CTR_ACCESSES], 5000.0);
  ck_assert_double_eq(rsd.v[CTR_ACCESSES], 0.0);
  ck_assert_double_eq(mean.v[CTR_PAGE_WALKS], 0.0);
  ck_assert_double_eq(rsd.v[CTR_PAGE_WALKS], 0.0);
}
END_TEST

START_TEST(test_aggregate_two_runs)
{
  /* 1 and 3: mean 2; s = sqrt((1 + 1) / 1) = sqrt(2); s / sqrt(2) = 1;
   * relative 1 / 2 = 0.5 exactly.  seconds 0.04 and 0.06: mean 0.05, s =
   * sqrt(2) * 0.01, relative 0.01 / 0.05 = 0.2. */
  CounterValues runs[2];
  memset(runs, 0, sizeof runs);
  runs[0].v[CTR_STLB_MISSES] = 1;
  runs[1].v[CTR_STLB_MISSES] = 3;
  runs[0].v[CTR_SECONDS] = 0.04;
  runs[1].v[CTR_SECONDS] = 0.06;
  CounterValues mean, rsd;
  report_aggregate(runs, 2, &mean, &rsd);
  ck_assert_double_eq(mean.v[CTR_STLB_MISSES], 2.0);
  ck_assert_double_eq_tol(rsd.v[CTR_STLB_MISSES], 0.5, 1e-12);
  ck_assert_double_eq_tol(mean.v[CTR_SECONDS], 0.05, 1e-15);
  ck_assert_double_eq_tol(rsd.v[CTR_SECONDS], 0.2, 1e-12);
}
END_TEST

START_TEST(test_aggregate_one_run)
{
  CounterValues run, mean, rsd;
  memset(&run, 0, sizeof run);
  for (int i = 0; i < N_COUNTERS; i++)
    run.v[i] = 3 * i + 1;
  report_aggregate(&run, 1, &mean, &rsd);
  for (int i = 0; i < N_COUNTERS; i++) {
    ck_assert_double_eq(mean.v[i], 3 * i + 1);
    ck_assert_double_eq(rsd.v[i], 0.0);
  }
}
END_TEST

START_TEST(test_aggregate_many_runs_invariants)
{
  /* Random runs: the mean lies between min and max, the relative stddev is
   * finite and not negative, and recomputing it independently agrees. */
  enum { N = 17 };
  CounterValues runs[N];
  GRand *rng = g_rand_new_with_seed(42);
  for (int k = 0; k < N; k++)
    for (int i = 0; i < N_COUNTERS; i++)
      runs[k].v[i] = g_rand_int_range(rng, 0, 1000000);
  g_rand_free(rng);
  CounterValues mean, rsd;
  report_aggregate(runs, N, &mean, &rsd);
  for (int i = 0; i < N_COUNTERS; i++) {
    double lo = runs[0].v[i], hi = lo, sum = 0, sq = 0;
    for (int k = 0; k < N; k++) {
      lo = MIN(lo, runs[k].v[i]);
      hi = MAX(hi, runs[k].v[i]);
      sum += runs[k].v[i];
      sq += runs[k].v[i] * runs[k].v[i];
    }
    double m = sum / N;
    double var = (sq - sum * sum / N) / (N - 1);
    ck_assert(mean.v[i] >= lo && mean.v[i] <= hi);
    ck_assert(isfinite(rsd.v[i]) && rsd.v[i] >= 0);
    ck_assert_double_eq_tol(rsd.v[i], sqrt(var / N) / m, 1e-9);
  }
}
END_TEST

/* ---- report_counter_applies ---------------------------------------------- */

START_TEST(test_applies)
{
  ck_assert(report_counter_applies(CTR_CYCLES, "x86_64"));
  ck_assert(report_counter_applies(CTR_CYCLES, "ppc64"));
  ck_assert(report_counter_applies(CTR_SECONDS, "x86_64"));
  ck_assert(!report_counter_applies(CTR_SLB_MISSES, "x86_64"));
  ck_assert(!report_counter_applies(CTR_HPTE_EVICTIONS, "x86_64"));
  ck_assert(!report_counter_applies(CTR_SLB_MISSES, NULL));
  ck_assert(report_counter_applies(CTR_SLB_MISSES, "ppc64"));
  ck_assert(report_counter_applies(CTR_HPTE_EVICTIONS, "ppc64"));
  for (int i = 0; i < N_COUNTERS; i++)
    ck_assert_int_eq(report_counter_applies((CounterId)i, "x86_64"), !(counter_def((CounterId)i)->flags & CF_PPC64));
}
END_TEST

/* ---- text ------------------------------------------------------------------ */

START_TEST(test_text_single_run)
{
  Fixture f;
  fixture_init(&f);
  g_autofree char *text = render(report_text, &f.r);

  ck_assert_msg(g_str_has_prefix(text, "\n Performance counter stats for 'ptrchase:size=1G,accesses=1M' on skylake:\n\n"),
                "header: %s", text);
  /* 0.05 s * 1e9 / 1.3e6 accesses = 38.462 ns */
  assert_has_line(text, "         1,300,000      accesses                  #   38.462 ns per access");
  /* 1e6 / 1.3e6 = 76.92% */
  assert_has_line(text, "         1,000,000      loads                     #   76.92% of accesses");
  /* 123456789 cycles at 3 GHz = 41.15 ms of CPU time in 0.05 s: 0.823 CPUs;
   * per second of CPU time the cycles are the clock */
  assert_has_line(text, "             41.15 msec task-clock                #    0.823 CPUs utilized");
  assert_has_line(text, "       123,456,789      cycles                    #    3.000 GHz");
  assert_has_line(text, "       246,913,578      instructions              #     2.00  insn per cycle");
  /* 812345 / 1e6 = 81.23% */
  assert_has_line(text, "           812,345      dTLB-load-misses          #   81.23% of all dTLB loads");
  /* 12345678 / 812345 = 15.2 cycles per walk; 12345678 / 123456789 = 10.00% */
  assert_has_line(text, "           812,345      page_walks                #     15.2 cycles per walk");
  assert_has_line(text, "        12,345,678      walk_cycles               #   10.00% of all cycles");
  /* 1000 faults in 0.05 s = 20 K/sec */
  assert_has_line(text, "             1,000      page-faults               #   20.000 K/sec");
  assert_has_line(text, "     1,073,741,824      mem_touched_bytes         #      1.0 GiB");
  /* zero denominators leave the note out */
  assert_has_line(text, "                 0      dTLB-store-misses");
  assert_has_line(text, "                 0      L1-dcache-load-misses");
  /* the footer; nothing of the host: that is report_host_text's line */
  assert_has_line(text, "       0.050000000 seconds time elapsed (simulated)");
  ck_assert_ptr_null(strstr(text, "host"));
  ck_assert_ptr_null(strstr(text, "partial"));
  g_autofree char *host = render(report_host_text, &f.r);
  ck_assert_str_eq(host, " host: 1.23 s, 12.3 M accesses/s (4.6 M/s counted), peak RSS 45 MiB\n");
  /* a partial run says so */
  f.r.partial = "stopped by SIGINT after 12 records";
  g_autofree char *part = render(report_text, &f.r);
  ck_assert_ptr_nonnull(strstr(part, "(simulated)\n\n (partial: stopped by SIGINT after 12 records)\n"));
  g_autofree char *json = render(report_json, &f.r);
  ck_assert_ptr_nonnull(strstr(json, "\"partial\" : \"stopped by SIGINT after 12 records\""));
  /* one run: no noise column */
  ck_assert_ptr_null(strstr(text, "( +-"));
  ck_assert_ptr_null(strstr(text, "runs)"));
  fixture_clear(&f);
}
END_TEST

START_TEST(test_text_every_counter_once)
{
  Fixture f;
  fixture_init(&f);
  g_autofree char *text = render(report_text, &f.r);
  for (int i = 0; i < N_COUNTERS; i++) {
    const CounterDef *d = counter_def((CounterId)i);
    g_autofree char *line = find_counter_line(text, d->name);
    /* (a CF_TEXT_NONZERO counter is 0 here, so it stays out) */
    gboolean expected = !(d->flags & (CF_PPC64 | CF_NUMA | CF_TEXT_NONZERO)) && !report_counter_gate((CounterId)i) &&
                        i != CTR_SECONDS && i != CTR_IPC && i != CTR_NS_PER_ACCESS;
    ck_assert_msg((line != NULL) == expected, "counter %s %s", d->name, expected ? "missing" : "shown");
  }
  /* On a machine of several CPUs the NUMA and shootdown counters show too. */
  f.r.cpus = 2;
  g_autofree char *smp = render(report_text, &f.r);
  for (int i = 0; i < N_COUNTERS; i++) {
    const CounterDef *d = counter_def((CounterId)i);
    g_autofree char *line = find_counter_line(smp, d->name);
    if (d->flags & CF_NUMA)
      ck_assert_msg(line != NULL, "counter %s missing with 2 CPUs", d->name);
  }
  fixture_clear(&f);
}
END_TEST

START_TEST(test_text_groups)
{
  Fixture f;
  fixture_init(&f);
  f.r.arch = "ppc64";
  g_autofree char *text = render(report_text, &f.r);
  /* A blank line opens each group, and only a group. */
  static const char *first[] = { "dTLB-loads", "L1-dcache-loads", "page-faults", "thp_fault_alloc", "slb_misses" };
  for (unsigned k = 0; k < G_N_ELEMENTS(first); k++) {
    g_autofree char *before = line_before_counter(text, first[k]);
    ck_assert_msg(before != NULL && *before == '\0', "no blank line before %s", first[k]);
  }
  g_autofree char *before_cycles = line_before_counter(text, "cycles");
  ck_assert_str_ne(before_cycles, "");
  g_autofree char *before_stlb = line_before_counter(text, "stlb_misses");
  ck_assert_str_ne(before_stlb, "");
  /* 77 SLB misses in 1.3M accesses = 0.059 per 1K */
  g_autofree char *slb = find_counter_line(text, "slb_misses");
  ck_assert_str_eq(slb, "                77      slb_misses                #    0.059 per 1K accesses");
  fixture_clear(&f);
}
END_TEST

START_TEST(test_text_repeated_runs)
{
  Fixture f;
  fixture_init(&f);
  f.r.runs = 3;
  f.r.rel_stddev.v[CTR_DTLB_LOAD_MISSES] = 0.0012;
  f.r.rel_stddev.v[CTR_SECONDS] = 0.005;
  f.r.mean.v[CTR_STLB_MISSES] = 1234.5; /* a mean need not be whole */
  g_autofree char *text = render(report_text, &f.r);
  ck_assert(strstr(text, "' on skylake (3 runs):\n") != NULL);
  /* noise column at 84, in percent */
  assert_has_line(text, "           812,345      dTLB-load-misses          #   81.23% of all dTLB loads      ( +-  0.12% )");
  assert_has_line(text, "         1,300,000      accesses                  #   38.462 ns per access          ( +-  0.00% )");
  assert_has_line(text, "       0.050000000 seconds time elapsed (simulated)                                 ( +-  0.50% )");
  g_autofree char *stlb = find_counter_line(text, "stlb_misses");
  ck_assert_msg(g_str_has_prefix(stlb, "          1,234.50      stlb_misses"), "%s", stlb);
  /* every counter line carries the column */
  g_autofree char *seg = find_counter_line(text, "segv");
  ck_assert_msg(g_str_has_suffix(seg, "( +-  0.00% )") && strlen(seg) == 84 + strlen("( +-  0.00% )"), "%s", seg);
  fixture_clear(&f);
}
END_TEST

START_TEST(test_text_several_cpus)
{
  /* 4 CPUs at 3 GHz for 0.05 s: 600M cycles are 200 ms of CPU time, so
   * task-clock says 4 CPUs were busy, as perf stat does; cycles show the
   * clock. */
  Fixture f;
  fixture_init(&f);
  f.r.mean.v[CTR_CYCLES] = 600000000;
  g_autofree char *text = render(report_text, &f.r);
  assert_has_line(text, "            200.00 msec task-clock                #    4.000 CPUs utilized");
  assert_has_line(text, "       600,000,000      cycles                    #    3.000 GHz");
  fixture_clear(&f);
}
END_TEST

START_TEST(test_text_big_numbers)
{
  Fixture f;
  fixture_init(&f);
  f.r.mean.v[CTR_WALK_REFS] = 18446744073709551615.0; /* beyond 2^53: printed as a real */
  f.r.mean.v[CTR_PWC_HITS] = 999;
  f.r.mean.v[CTR_WALK_REFS_L1] = 1000;
  g_autofree char *text = render(report_text, &f.r);
  g_autofree char *refs = find_counter_line(text, "walk_refs");
  ck_assert_msg(g_str_has_prefix(refs, "18,446,744,073,709,551,616.00      walk_refs"), "%s", refs);
  g_autofree char *pwc = find_counter_line(text, "pwc_hits");
  ck_assert_msg(g_str_has_prefix(pwc, "               999      pwc_hits"), "%s", pwc);
  g_autofree char *l1 = find_counter_line(text, "walk_refs_l1");
  ck_assert_msg(g_str_has_prefix(l1, "             1,000      walk_refs_l1"), "%s", l1);
  fixture_clear(&f);
}
END_TEST

/* ---- JSON ------------------------------------------------------------------ */

static JsonParser *parse_json_report(const RunReport *r)
{
  g_autofree char *text = render(report_json, r);
  JsonParser *p = json_parser_new();
  g_autoptr(GError) err = NULL;
  ck_assert_msg(json_parser_load_from_data(p, text, -1, &err), "JSON does not parse: %s\n%s", err ? err->message : "",
                text);
  return p;
}

START_TEST(test_json_top_level)
{
  Fixture f;
  fixture_init(&f);
  g_autoptr(JsonParser) p = parse_json_report(&f.r);
  JsonObject *o = json_node_get_object(json_parser_get_root(p));
  static const char *keys[] = { "version", "machine", "workload", "runs", "settings", "counters", "stddev", "host" };
  ck_assert_int_eq(json_object_get_size(o), G_N_ELEMENTS(keys));
  for (unsigned k = 0; k < G_N_ELEMENTS(keys); k++)
    ck_assert_msg(json_object_has_member(o, keys[k]), "no %s", keys[k]);
  ck_assert_str_eq(json_object_get_string_member(o, "version"), PACKAGE_VERSION);
  ck_assert_str_eq(json_object_get_string_member(o, "machine"), "skylake");
  ck_assert_str_eq(json_object_get_string_member(o, "workload"), "ptrchase:size=1G,accesses=1M");
  ck_assert_int_eq(json_object_get_int_member(o, "runs"), 1);

  JsonObject *host = json_object_get_object_member(o, "host");
  ck_assert_int_eq(json_object_get_size(host), 4);
  ck_assert_double_eq(json_object_get_double_member(host, "counted_accesses_per_second"), 4.56e6);
  ck_assert_double_eq(json_object_get_double_member(host, "seconds"), 1.234);
  ck_assert_double_eq(json_object_get_double_member(host, "accesses_per_second"), 12.34e6);
  ck_assert_int_eq(json_object_get_int_member(host, "peak_rss_bytes"), 45 * 1024 * 1024);
  fixture_clear(&f);
}
END_TEST

START_TEST(test_json_settings)
{
  Fixture f;
  fixture_init(&f);
  g_autoptr(GError) err = NULL;
  ck_assert(settings_set(f.settings, "cache.prefetcher", "NextLine", "-s", &err));
  ck_assert(settings_set(f.settings, "cpu.cpi", "0.75", "-s", &err));
  ck_assert(settings_set(f.settings, "tlb.pcid", "off", "-s", &err));
  ck_assert_no_error(err);
  g_autoptr(JsonParser) p = parse_json_report(&f.r);
  JsonObject *o = json_node_get_object(json_parser_get_root(p));
  JsonObject *s = json_object_get_object_member(o, "settings");
  ck_assert_int_eq(json_object_get_size(s), N_SETTINGS);
  for (int i = 0; i < N_SETTINGS; i++) {
    const SettingDef *d = settings_def((SettingId)i);
    JsonNode *n = json_object_get_member(s, d->name);
    ck_assert_msg(n != NULL, "setting %s missing", d->name);
    ck_assert_int_eq(JSON_NODE_TYPE(n), JSON_NODE_VALUE);
    GType want = G_TYPE_STRING;
    switch (d->type) {
    case SETTING_INT:
    case SETTING_SIZE: want = G_TYPE_INT64; break;
    case SETTING_DOUBLE: want = G_TYPE_DOUBLE; break;
    case SETTING_BOOL: want = G_TYPE_BOOLEAN; break;
    case SETTING_ENUM:
    case SETTING_STRING: want = G_TYPE_STRING; break;
    }
    ck_assert_msg(json_node_get_value_type(n) == want, "setting %s is %s in JSON", d->name,
                  g_type_name(json_node_get_value_type(n)));
  }
  /* sizes in bytes, the rest in their natural type */
  ck_assert_int_eq(json_object_get_int_member(s, "cache.l1d_size"), 32 * 1024);
  ck_assert_int_eq(json_object_get_int_member(s, "machine.mem_per_node"), 16ll << 30);
  ck_assert_int_eq(json_object_get_int_member(s, "cpu.freq_mhz"), 3000);
  ck_assert_double_eq(json_object_get_double_member(s, "cpu.cpi"), 0.75);
  ck_assert_double_eq(json_object_get_double_member(s, "dram.latency_ns"), 80.0);
  ck_assert(!json_object_get_boolean_member(s, "tlb.pcid"));
  ck_assert(!json_object_get_boolean_member(s, "tlb.l1_mixed"));
  ck_assert_str_eq(json_object_get_string_member(s, "cache.prefetcher"), "nextline");
  ck_assert_str_eq(json_object_get_string_member(s, "machine.arch"), "x86_64");
  fixture_clear(&f);
}
END_TEST

START_TEST(test_json_counters)
{
  Fixture f;
  fixture_init(&f);
  f.r.runs = 2;
  f.r.rel_stddev.v[CTR_CYCLES] = 0.25;
  f.r.mean.v[CTR_STLB_MISSES] = 1234.5;
  g_autoptr(JsonParser) p = parse_json_report(&f.r);
  JsonObject *o = json_node_get_object(json_parser_get_root(p));
  JsonObject *c = json_object_get_object_member(o, "counters");
  JsonObject *sd = json_object_get_object_member(o, "stddev");
  ck_assert_int_eq(json_object_get_int_member(o, "runs"), 2);
  int applicable = 0;
  for (int i = 0; i < N_COUNTERS; i++) {
    const CounterDef *d = counter_def((CounterId)i);
    /* gated ones (oom_kill, the coalescing ones) only when their setting is on */
    gboolean ppc = (d->flags & CF_PPC64) || report_counter_gate((CounterId)i);
    ck_assert_msg(json_object_has_member(c, d->name) == !ppc, "counters.%s", d->name);
    ck_assert_msg(json_object_has_member(sd, d->name) == !ppc, "stddev.%s", d->name);
    applicable += !ppc;
  }
  ck_assert_int_eq(json_object_get_size(c), applicable);
  ck_assert_int_eq(json_object_get_size(sd), applicable);
  /* counted values are integers, derived ones doubles */
  JsonNode *cycles = json_object_get_member(c, "cycles");
  ck_assert(json_node_get_value_type(cycles) == G_TYPE_INT64);
  ck_assert_int_eq(json_node_get_int(cycles), 123456789);
  ck_assert_int_eq(json_object_get_int_member(c, "mem_touched_bytes"), 1073741824);
  JsonNode *ipc = json_object_get_member(c, "ipc");
  ck_assert(json_node_get_value_type(ipc) == G_TYPE_DOUBLE);
  ck_assert_double_eq(json_node_get_double(ipc), 2.0);
  ck_assert_double_eq(json_object_get_double_member(c, "seconds"), 0.05);
  /* a mean over runs that is not whole stays exact */
  ck_assert_double_eq(json_object_get_double_member(c, "stlb_misses"), 1234.5);
  /* stddev as a fraction */
  ck_assert_double_eq(json_object_get_double_member(sd, "cycles"), 0.25);
  ck_assert_double_eq(json_object_get_double_member(sd, "accesses"), 0.0);
  fixture_clear(&f);
}
END_TEST

/* Counters a setting gates (report_counter_gate), which a report without
 * settings leaves out. */
static int gated_counters(void)
{
  int n = 0;
  for (int i = 0; i < N_COUNTERS; i++)
    n += report_counter_gate((CounterId)i) != NULL;
  return n;
}

START_TEST(test_json_ppc64)
{
  Fixture f;
  fixture_init(&f);
  f.r.arch = "ppc64";
  g_autoptr(JsonNode) root = report_json_node(&f.r);
  JsonObject *c = json_object_get_object_member(json_node_get_object(root), "counters");
  ck_assert_int_eq(json_object_get_int_member(c, "slb_misses"), 77);
  ck_assert(json_object_has_member(c, "hpte_evictions"));
  ck_assert_int_eq(json_object_get_size(c), N_COUNTERS - gated_counters()); /* all but the gated ones */
  fixture_clear(&f);
}
END_TEST

/* mem.oom_policy=kill: the oom_kill counter in every report, the kills in
 * the text (the kernel log's line) and in JSON's oom_kills; each says what
 * ran the killer, a fault or a new process's creation. */
START_TEST(test_oom_kills)
{
  Fixture f;
  fixture_init(&f);
  g_autoptr(GError) err = NULL;
  ck_assert(settings_set(f.settings, "mem.oom_policy", "kill", "-s", &err));
  OomKill kills[] = { { .pid = 2, .by_pid = 1, .cpu = 3, .time_ns = 1500000, .badness = 1030, .rss_pages = 1025,
                        .pgtable_pages = 5, .freed_pages = 1031, .dropped_records = 12345 },
                      { .pid = 1, .by_pid = 4, .trigger = OOM_TRIGGER_CREATION, .cpu = 0, .time_ns = 2000000,
                        .badness = 7, .rss_pages = 4, .pgtable_pages = 3, .freed_pages = 8 } };
  f.r.oom_kills = kills;
  f.r.n_oom_kills = G_N_ELEMENTS(kills);
  f.r.mean.v[CTR_OOM_KILL] = 1;
  g_autofree char *text = render(report_text, &f.r);
  g_autofree char *line = find_counter_line(text, "oom_kill");
  ck_assert_ptr_nonnull(line);
  assert_has_line(text, " Out of memory: killed process 2 at 0.001500000 s (fault of process 1 on CPU 3): badness 1,030 "
                        "pages (1,025 resident, 5 page tables), 1,031 pages freed, 12,345 of its records dropped");
  assert_has_line(text, " Out of memory: killed process 1 at 0.002000000 s (creation of process 4 on CPU 0): badness 7 "
                        "pages (4 resident, 3 page tables), 8 pages freed, 0 of its records dropped");
  g_autoptr(JsonNode) root = report_json_node(&f.r);
  JsonObject *o = json_node_get_object(root);
  ck_assert_int_eq(json_object_get_int_member(json_object_get_object_member(o, "counters"), "oom_kill"), 1);
  JsonArray *a = json_object_get_array_member(o, "oom_kills");
  ck_assert_int_eq(json_array_get_length(a), 2);
  JsonObject *k = json_array_get_object_element(a, 0);
  ck_assert_int_eq(json_object_get_int_member(k, "pid"), 2);
  ck_assert_int_eq(json_object_get_int_member(k, "by_pid"), 1);
  ck_assert_int_eq(json_object_get_int_member(k, "cpu"), 3);
  ck_assert_int_eq(json_object_get_int_member(k, "time_ns"), 1500000);
  ck_assert_int_eq(json_object_get_int_member(k, "badness"), 1030);
  ck_assert_int_eq(json_object_get_int_member(k, "rss_pages"), 1025);
  ck_assert_int_eq(json_object_get_int_member(k, "pgtable_pages"), 5);
  ck_assert_int_eq(json_object_get_int_member(k, "freed_pages"), 1031);
  ck_assert_int_eq(json_object_get_int_member(k, "dropped_records"), 12345);
  ck_assert_str_eq(json_object_get_string_member(k, "trigger"), "fault");
  JsonObject *k2 = json_array_get_object_element(a, 1);
  ck_assert_int_eq(json_object_get_int_member(k2, "by_pid"), 4);
  ck_assert_str_eq(json_object_get_string_member(k2, "trigger"), "creation");
  g_autofree char *csv = render(report_csv_header, &f.r);
  ck_assert_ptr_nonnull(strstr(csv, ",oom_kill,"));
  /* fail (the default): no counter, no member, no line */
  f.r.n_oom_kills = 0;
  ck_assert(settings_set(f.settings, "mem.oom_policy", "fail", "-s", &err));
  g_autoptr(JsonNode) plain = report_json_node(&f.r);
  ck_assert(!json_object_has_member(json_node_get_object(plain), "oom_kills"));
  g_autofree char *plain_text = render(report_text, &f.r);
  g_autofree char *none = find_counter_line(plain_text, "oom_kill");
  ck_assert_ptr_null(none);
  ck_assert_ptr_null(strstr(plain_text, "Out of memory"));
  fixture_clear(&f);
}
END_TEST

/* ---- CSV ------------------------------------------------------------------- */

/* Split one CSV line (RFC 4180 quoting) into fields. */
static GPtrArray *csv_split(const char *line)
{
  GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
  GString *cur = g_string_new(NULL);
  gboolean quoted = FALSE;
  for (const char *p = line;; p++) {
    if (quoted) {
      if (*p == '"' && p[1] == '"') {
        g_string_append_c(cur, '"');
        p++;
      } else if (*p == '"') {
        quoted = FALSE;
      } else {
        ck_assert_msg(*p != '\0', "unterminated quote in %s", line);
        g_string_append_c(cur, *p);
      }
    } else if (*p == '"') {
      quoted = TRUE;
    } else if (*p == ',' || *p == '\0') {
      g_ptr_array_add(fields, g_string_free(g_steal_pointer(&cur), FALSE));
      cur = g_string_new(NULL);
      if (*p == '\0')
        break;
    } else {
      g_string_append_c(cur, *p);
    }
  }
  g_string_free(cur, TRUE);
  return fields;
}

static const char *csv_value(GPtrArray *header, GPtrArray *row, const char *column)
{
  for (unsigned i = 0; i < header->len; i++)
    if (strcmp(g_ptr_array_index(header, i), column) == 0)
      return g_ptr_array_index(row, i);
  ck_abort_msg("no column %s", column);
  return NULL;
}

START_TEST(test_csv)
{
  Fixture f;
  fixture_init(&f);
  f.r.runs = 3;
  f.r.rel_stddev.v[CTR_CYCLES] = 0.0125;
  f.r.mean.v[CTR_STLB_MISSES] = 1234.5;
  f.r.workload = "ptrchase:size=1G,accesses=1M";
  f.r.machine = "my \"odd\" machine.ini";
  g_autofree char *text = render(report_csv, &f.r);
  ck_assert(g_str_has_suffix(text, "\n"));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  ck_assert_int_eq(g_strv_length(lines), 3); /* header, row, "" after the last newline */
  ck_assert_str_eq(lines[2], "");
  g_autoptr(GPtrArray) header = csv_split(lines[0]);
  g_autoptr(GPtrArray) row = csv_split(lines[1]);

  int applicable = 0;
  for (int i = 0; i < N_COUNTERS; i++)
    applicable += report_counter_applies((CounterId)i, "x86_64") && !report_counter_gate((CounterId)i);
  ck_assert_int_eq(header->len, 3 + 2 * applicable);
  ck_assert_int_eq(row->len, header->len);
  ck_assert_str_eq(g_ptr_array_index(header, 0), "machine");
  ck_assert_str_eq(g_ptr_array_index(header, 1), "workload");
  ck_assert_str_eq(g_ptr_array_index(header, 2), "runs");
  ck_assert_str_eq(g_ptr_array_index(header, 3), "accesses");
  ck_assert_str_eq(g_ptr_array_index(header, 3 + applicable), "accesses_rsd");
  ck_assert_str_eq(g_ptr_array_index(header, header->len - 1), "mem_used_bytes_rsd");

  /* quoted where needed, and read back whole */
  ck_assert(strstr(lines[1], "\"ptrchase:size=1G,accesses=1M\"") != NULL);
  ck_assert(g_str_has_prefix(lines[1], "\"my \"\"odd\"\" machine.ini\","));
  ck_assert_str_eq(csv_value(header, row, "machine"), "my \"odd\" machine.ini");
  ck_assert_str_eq(csv_value(header, row, "workload"), "ptrchase:size=1G,accesses=1M");
  ck_assert_str_eq(csv_value(header, row, "runs"), "3");
  ck_assert_str_eq(csv_value(header, row, "cycles"), "123456789");
  ck_assert_str_eq(csv_value(header, row, "mem_touched_bytes"), "1073741824");
  ck_assert_str_eq(csv_value(header, row, "seconds"), "0.05");
  ck_assert_str_eq(csv_value(header, row, "ipc"), "2");
  ck_assert_str_eq(csv_value(header, row, "stlb_misses"), "1234.5");
  ck_assert_str_eq(csv_value(header, row, "cycles_rsd"), "0.0125");
  ck_assert_str_eq(csv_value(header, row, "accesses_rsd"), "0");
  /* exact round trip of a value with no short decimal form */
  ck_assert_double_eq(g_ascii_strtod(csv_value(header, row, "ns_per_access"), NULL), 0.05 * 1e9 / 1300000);
  for (unsigned i = 0; i < header->len; i++)
    ck_assert_msg(strstr(g_ptr_array_index(header, i), "slb") == NULL, "ppc64 column on x86_64");
  fixture_clear(&f);
}
END_TEST

START_TEST(test_csv_ppc64_columns)
{
  Fixture f;
  fixture_init(&f);
  f.r.arch = "ppc64";
  g_autofree char *text = render(report_csv_header, &f.r);
  g_autoptr(GPtrArray) header = csv_split(g_strchomp(text));
  const int shown = N_COUNTERS - gated_counters(); /* all but the gated ones */
  ck_assert_int_eq(header->len, 3 + 2 * shown);
  ck_assert_str_eq(g_ptr_array_index(header, 3 + shown - 1), "hcall_cycles");
  ck_assert_str_eq(g_ptr_array_index(header, header->len - 1), "hcall_cycles_rsd");
  g_autofree char *row = render(report_csv_row, &f.r);
  g_autoptr(GPtrArray) fields = csv_split(g_strchomp(row));
  ck_assert_int_eq(fields->len, header->len);
  ck_assert_str_eq(csv_value(header, fields, "slb_misses"), "77");
  fixture_clear(&f);
}
END_TEST

/* virt.nested=true: the 2D walk's counters in the text, the JSON and the
 * CSV; without it (every preset) in none of them. */
START_TEST(test_nested_gate)
{
  static const char *const names[] = { "walk_guest_refs", "walk_host_refs", "ntlb_hits", "ntlb_misses", "host_pwc_hits" };
  for (int on = 1; on >= 0; on--) {
    Fixture f;
    fixture_init(&f);
    f.r.mean.v[CTR_NTLB_HITS] = 4242;
    g_autoptr(GError) err = NULL;
    ck_assert(settings_set(f.settings, "virt.nested", on ? "true" : "false", "-s", &err));
    g_autofree char *text = render(report_text, &f.r);
    g_autoptr(JsonNode) root = report_json_node(&f.r);
    JsonObject *c = json_object_get_object_member(json_node_get_object(root), "counters");
    g_autofree char *header = render(report_csv_header, &f.r);
    for (unsigned k = 0; k < G_N_ELEMENTS(names); k++) {
      g_autofree char *line = find_counter_line(text, names[k]);
      ck_assert_msg((line != NULL) == on, "text %s, virt.nested=%d", names[k], on);
      ck_assert_msg(json_object_has_member(c, names[k]) == on, "counters.%s, virt.nested=%d", names[k], on);
      ck_assert_msg((strstr(header, names[k]) != NULL) == on, "CSV column %s, virt.nested=%d", names[k], on);
    }
    if (on)
      ck_assert_int_eq(json_object_get_int_member(c, "ntlb_hits"), 4242);
    fixture_clear(&f);
  }
}
END_TEST

/* tlb.coalesce=true: stlb_coalesced_hits and stlb_coalesced_fills in the
 * text (after stlb_misses, as shares of STLB hits and of walks), the JSON
 * and the CSV; without it (the default, every Intel preset) in none. */
START_TEST(test_coalesce_gate)
{
  Fixture f;
  fixture_init(&f);
  f.r.mean.v[CTR_STLB_HITS] = 400;
  f.r.mean.v[CTR_STLB_COALESCED_HITS] = 300;
  f.r.mean.v[CTR_STLB_COALESCED_FILLS] = 162469; /* 162469 / 812345 = 20.00% */
  const char *names[] = { "stlb_coalesced_hits", "stlb_coalesced_fills" };
  for (int on = 1; on >= 0; on--) {
    g_autoptr(GError) err = NULL;
    ck_assert(settings_set(f.settings, "tlb.coalesce", on ? "true" : "false", "-s", &err));
    g_autofree char *text = render(report_text, &f.r);
    g_autoptr(JsonNode) root = report_json_node(&f.r);
    JsonObject *c = json_object_get_object_member(json_node_get_object(root), "counters");
    JsonObject *sd = json_object_get_object_member(json_node_get_object(root), "stddev");
    g_autofree char *csv = render(report_csv, &f.r);
    g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
    g_autoptr(GPtrArray) header = csv_split(lines[0]);
    g_autoptr(GPtrArray) row = csv_split(lines[1]);
    for (unsigned k = 0; k < G_N_ELEMENTS(names); k++) {
      g_autofree char *line = find_counter_line(text, names[k]);
      ck_assert_msg((line != NULL) == on, "text %s, tlb.coalesce=%d", names[k], on);
      ck_assert_msg(json_object_has_member(c, names[k]) == on, "counters.%s, tlb.coalesce=%d", names[k], on);
      ck_assert_msg(json_object_has_member(sd, names[k]) == on, "stddev.%s, tlb.coalesce=%d", names[k], on);
      gboolean column = FALSE;
      for (unsigned i = 0; i < header->len; i++)
        column |= strstr(g_ptr_array_index(header, i), names[k]) != NULL;
      ck_assert_msg(column == on, "CSV column %s, tlb.coalesce=%d", names[k], on);
    }
    ck_assert_int_eq(row->len, header->len);
    if (!on)
      continue;
    assert_has_line(text, "               300      stlb_coalesced_hits       #   75.00% of STLB hits");
    assert_has_line(text, "           162,469      stlb_coalesced_fills      #   20.00% of page walks");
    ck_assert_int_eq(json_object_get_int_member(c, "stlb_coalesced_hits"), 300);
    ck_assert_int_eq(json_object_get_int_member(c, "stlb_coalesced_fills"), 162469);
    ck_assert_str_eq(csv_value(header, row, "stlb_coalesced_hits"), "300");
    ck_assert_str_eq(csv_value(header, row, "stlb_coalesced_fills_rsd"), "0");
  }
  fixture_clear(&f);
}
END_TEST

/* One gate per gated flag, each naming a setting and a value it can take. */
START_TEST(test_counter_gates)
{
  ck_assert_ptr_null(report_counter_gate(CTR_STLB_HITS));
  ck_assert_ptr_null(report_counter_gate(CTR_SLB_MISSES));
  ck_assert_int_eq(report_counter_gate(CTR_OOM_KILL)->setting, SET_MEM_OOM_POLICY);
  ck_assert_int_eq(report_counter_gate(CTR_STLB_COALESCED_HITS)->setting, SET_TLB_COALESCE);
  ck_assert_ptr_eq(report_counter_gate(CTR_STLB_COALESCED_HITS), report_counter_gate(CTR_STLB_COALESCED_FILLS));
  for (int i = 0; i < N_COUNTERS; i++) {
    const CounterGate *g = report_counter_gate((CounterId)i);
    if (!g)
      continue;
    g_autoptr(Settings) s = settings_new();
    g_autoptr(GError) err = NULL;
    ck_assert_msg(settings_set(s, settings_def(g->setting)->name, g->value, "-s", &err), "%s", counter_def((CounterId)i)->name);
    ck_assert_str_eq(settings_str(s, g->setting), g->value);
    ck_assert_str_ne(settings_def(g->setting)->def, g->value); /* off by default: default reports do not change */
    if (g->on) {
      /* The example turns the counters on; the defaults do not. */
      g_autoptr(Settings) d = settings_new();
      ck_assert(g->on(s));
      ck_assert(!g->on(d));
      ck_assert_ptr_nonnull(g->when);
    }
  }
  /* The mTHP counters: any thp.hugepages_* changed from its default. */
  ck_assert_ptr_nonnull(report_counter_gate(CTR_MTHP_ANON_FAULT_ALLOC)->on);
  g_autoptr(Settings) s = settings_new();
  ck_assert(settings_set(s, "thp.hugepages_16kB", "madvise", "-s", NULL));
  ck_assert(report_counter_gate(CTR_MTHP_SPLIT)->on(s));
}
END_TEST

/* The per-size mTHP stats (CF_TEXT_NONZERO): with mTHP on, the text report
 * shows a size's stat only when it is not 0; JSON carries them all. */
START_TEST(test_mthp_sizes_text_when_nonzero)
{
  Fixture f;
  fixture_init(&f);
  ck_assert(settings_set(f.settings, "thp.hugepages_64kB", "always", "-s", NULL));
  f.r.mean.v[CTR_MTHP_64KB_ANON_FAULT_ALLOC] = 3;
  g_autofree char *text = render(report_text, &f.r);
  ck_assert_ptr_nonnull(strstr(text, "mthp_64kB_anon_fault_alloc"));
  ck_assert_ptr_null(strstr(text, "mthp_16kB_anon_fault_alloc"));
  ck_assert_ptr_null(strstr(text, "mthp_64kB_split"));
  ck_assert_ptr_nonnull(strstr(text, "mthp_anon_fault_fallback")); /* the sums keep their 0 */
  g_autoptr(JsonNode) root = report_json_node(&f.r);
  JsonObject *c = json_object_get_object_member(json_node_get_object(root), "counters");
  ck_assert_int_eq(json_object_get_int_member(c, "mthp_64kB_anon_fault_alloc"), 3);
  ck_assert(json_object_has_member(c, "mthp_16384kB_split_deferred"));
  fixture_clear(&f);
}
END_TEST

/* OWASP's CSV injection rule: text that a spreadsheet would evaluate is
 * made text; numbers stay numbers; RFC 4180 quoting as before. */
START_TEST(test_csv_quote)
{
  static const struct { const char *in, *out; } cases[] = {
    { "plain", "plain" }, { "-5", "-5" }, { "+1.5e3", "+1.5e3" }, { "-0.25", "-0.25" }, { "", "" },
    { "=1+1", "\"'=1+1\"" }, { "+cmd", "\"'+cmd\"" }, { "-2+3", "\"'-2+3\"" }, { "@SUM(A1)", "\"'@SUM(A1)\"" },
    { "\tx", "\"'\tx\"" }, { "\rx", "\"'\rx\"" }, { "=\"a\",b", "\"'=\"\"a\"\",b\"" },
    { "a,b", "\"a,b\"" }, { "say \"hi\"", "\"say \"\"hi\"\"\"" }, { "x=1", "x=1" },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *q = report_csv_quote(cases[i].in);
    ck_assert_str_eq(q, cases[i].out);
  }
}
END_TEST

/* ---- events ----------------------------------------------------------------- */

static char *temp_path(void)
{
  g_autoptr(GError) err = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp("mmusim-events-XXXXXX", &path, &err);
  ck_assert_no_error(err);
  close(fd);
  return path;
}

START_TEST(test_events_lines)
{
  g_autofree char *path = temp_path();
  g_autoptr(GError) err = NULL;
  EventLog *log = events_open(path, &err);
  ck_assert_no_error(err);
  ck_assert(events_enabled(log));
  events_emit(log, 1234, 0, 1, 1, "fault", "va=0x%llx kind=%s cycles=%u", 0x7f0000001000ull, "anon", 7800u);
  events_emit(log, 99999999999ull, 3, 4242, 4243, "walk", "va=0x%x levels=%d", 0x400000, 4);
  events_emit(log, 5, 1, 2, 3, "tlb_flush", NULL);
  events_emit(log, 6, 1, 2, 3, "segv", "%s", "");
  ck_assert_int_eq(events_count(log), 4);
  ck_assert(events_flush(log, &err));
  ck_assert_no_error(err);
  ck_assert(events_finish(log, &err));
  ck_assert_no_error(err);

  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, &err));
  ck_assert_str_eq(text,
                   "1234 cpu=0 pid=1 tid=1 fault va=0x7f0000001000 kind=anon cycles=7800\n"
                   "99999999999 cpu=3 pid=4242 tid=4243 walk va=0x400000 levels=4\n"
                   "5 cpu=1 pid=2 tid=3 tlb_flush\n"
                   "6 cpu=1 pid=2 tid=3 segv\n");
  g_unlink(path);
}
END_TEST

START_TEST(test_events_reopen_truncates)
{
  g_autofree char *path = temp_path();
  ck_assert(g_file_set_contents(path, "old content\nmore\n", -1, NULL));
  g_autoptr(EventLog) log = events_open(path, NULL);
  ck_assert_ptr_nonnull(log);
  events_emit(log, 1, 0, 1, 1, "fault", "va=0x1000");
  ck_assert(events_finish(g_steal_pointer(&log), NULL));
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  ck_assert_str_eq(text, "1 cpu=0 pid=1 tid=1 fault va=0x1000\n");
  g_unlink(path);
}
END_TEST

/* A run that failed: events_close() leaves the older file as it was and no
 * temporary file beside it. */
START_TEST(test_events_close_keeps_old)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-events-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  g_autofree char *path = g_build_filename(dir, "ev.txt", NULL);
  ck_assert(g_file_set_contents(path, "old\n", -1, NULL));
  EventLog *log = events_open(path, NULL);
  ck_assert_ptr_nonnull(log);
  events_emit(log, 1, 0, 1, 1, "fault", "va=0x1000");
  events_close(log);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  ck_assert_str_eq(text, "old\n");
  GDir *d = g_dir_open(dir, 0, NULL);
  unsigned n = 0;
  while (g_dir_read_name(d))
    n++;
  g_dir_close(d);
  ck_assert_uint_eq(n, 1);
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

START_TEST(test_events_disabled)
{
  ck_assert(!events_enabled(NULL));
  events_emit(NULL, 1, 0, 1, 1, "fault", "va=0x%x", 1); /* no effect, no crash */
  ck_assert_int_eq(events_count(NULL), 0);
  ck_assert(events_flush(NULL, NULL));
  events_close(NULL);
}
END_TEST

START_TEST(test_events_open_error)
{
  g_autoptr(GError) err = NULL;
  EventLog *log = events_open("/nonexistent-dir/mmusim/events.txt", &err);
  ck_assert_ptr_null(log);
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_IO));
  ck_assert_msg(strstr(err->message, "/nonexistent-dir/mmusim/events.txt") != NULL, "%s", err->message);
  ck_assert_msg(strstr(err->message, "No such file or directory") != NULL, "%s", err->message);
}
END_TEST

START_TEST(test_events_write_error)
{
  /* /dev/full takes the open and fails every write with ENOSPC. */
  if (!g_file_test("/dev/full", G_FILE_TEST_EXISTS))
    return;
  g_autoptr(GError) err = NULL;
  g_autoptr(EventLog) log = events_open("/dev/full", &err);
  ck_assert_no_error(err);
  for (int i = 0; i < 10000; i++) /* more than one stdio buffer */
    events_emit(log, (uint64_t)i, 0, 1, 1, "walk", "va=0x%x", i);
  ck_assert(!events_flush(log, &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE));
  ck_assert_msg(strstr(err->message, "/dev/full") != NULL, "%s", err->message);
  g_clear_error(&err);
  /* and once more when the run finishes: the status is 1, not success */
  ck_assert(!events_finish(g_steal_pointer(&log), &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE));
  ck_assert_msg(strstr(err->message, g_strerror(ENOSPC)) != NULL, "%s", err->message);
}
END_TEST

START_TEST(test_events_stdout)
{
  /* "-" writes to standard output: point descriptor 1 at a file meanwhile. */
  g_autofree char *path = temp_path();
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  int fd = open(path, O_WRONLY | O_TRUNC);
  ck_assert(saved >= 0 && fd >= 0);
  dup2(fd, STDOUT_FILENO);
  close(fd);

  g_autoptr(GError) err = NULL;
  EventLog *log = events_open("-", &err);
  ck_assert_no_error(err);
  events_emit(log, 42, 2, 7, 8, "tlb_flush", "pages=%d", 33);
  ck_assert(events_finish(log, NULL)); /* flushes, leaves standard output open */
  gboolean still_open = fcntl(STDOUT_FILENO, F_GETFD) != -1;

  dup2(saved, STDOUT_FILENO);
  close(saved);
  ck_assert(still_open);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  ck_assert_str_eq(text, "42 cpu=2 pid=7 tid=8 tlb_flush pages=33\n");
  g_unlink(path);
}
END_TEST

static Suite *report_suite(void)
{
  Suite *s = suite_create("report");
  TCase *tc = tcase_create("aggregate");
  tcase_add_test(tc, test_aggregate_three_runs);
  tcase_add_test(tc, test_aggregate_two_runs);
  tcase_add_test(tc, test_aggregate_one_run);
  tcase_add_test(tc, test_aggregate_many_runs_invariants);
  tcase_add_test(tc, test_applies);
  suite_add_tcase(s, tc);

  tc = tcase_create("text");
  tcase_add_test(tc, test_text_single_run);
  tcase_add_test(tc, test_text_every_counter_once);
  tcase_add_test(tc, test_text_groups);
  tcase_add_test(tc, test_text_repeated_runs);
  tcase_add_test(tc, test_text_several_cpus);
  tcase_add_test(tc, test_text_big_numbers);
  suite_add_tcase(s, tc);

  tc = tcase_create("json");
  tcase_add_test(tc, test_json_top_level);
  tcase_add_test(tc, test_json_settings);
  tcase_add_test(tc, test_json_counters);
  tcase_add_test(tc, test_json_ppc64);
  tcase_add_test(tc, test_oom_kills);
  tcase_add_test(tc, test_coalesce_gate);
  tcase_add_test(tc, test_nested_gate);
  tcase_add_test(tc, test_counter_gates);
  tcase_add_test(tc, test_mthp_sizes_text_when_nonzero);
  suite_add_tcase(s, tc);

  tc = tcase_create("csv");
  tcase_add_test(tc, test_csv);
  tcase_add_test(tc, test_csv_ppc64_columns);
  suite_add_tcase(s, tc);

  tc = tcase_create("events");
  tcase_add_test(tc, test_events_lines);
  tcase_add_test(tc, test_csv_quote);
  tcase_add_test(tc, test_events_reopen_truncates);
  tcase_add_test(tc, test_events_close_keeps_old);
  tcase_add_test(tc, test_events_disabled);
  tcase_add_test(tc, test_events_open_error);
  tcase_add_test(tc, test_events_write_error);
  tcase_add_test(tc, test_events_stdout);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(report_suite)
