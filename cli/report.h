/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - what a run prints: perf-stat-like text, JSON, CSV.
 *
 * A RunReport holds the aggregated counters of one configuration (mean and
 * relative standard deviation over -r repeats) plus what the host did.
 * `counters` are simulated quantities only; host time and memory go under
 * `host` so that the same input, settings and seed give the same counters on
 * any host.
 */
#ifndef MMUSIM_REPORT_H
#define MMUSIM_REPORT_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include "oom_kill.h"
#include "settings.h"
#include "stats.h"

typedef struct {
  const char *machine;      /* preset name or .ini path */
  const char *workload;     /* workload spec or trace path */
  const char *arch;         /* "x86_64", "ppc64" */
  unsigned cpus;            /* CPUs of the machine: CF_NUMA counters show when > 1 */
  unsigned runs;
  const Settings *settings; /* every resolved setting */
  CounterValues mean;       /* per counter, mean over runs */
  CounterValues rel_stddev; /* per counter, stddev / mean (0 when runs == 1 or mean == 0) */
  double host_seconds;
  double host_accesses_per_second;      /* every record read, setup included */
  double host_roi_accesses_per_second;  /* counted accesses in the counted region */
  uint64_t host_peak_rss_bytes;
  /* mem.oom_policy=kill: the processes killed (of the last run when runs > 1) */
  const OomKill *oom_kills;
  unsigned n_oom_kills;
  /* NULL, or why the run stopped before the end of its input ("interrupted
   * by SIGINT after 1234 records"): the counters are those of the part
   * simulated, and every format says so. */
  const char *partial;
} RunReport;

/* mean and relative stddev of n runs' values, counter by counter. */
void report_aggregate(const CounterValues *runs, unsigned n, CounterValues *mean, CounterValues *rel_stddev);

/* TRUE if the counter belongs in this architecture's report. */
gboolean report_counter_applies(CounterId id, const char *arch);

/* A counter reported only when a setting turns on what it counts, so that
 * the reports of every other run stay as they were: its flag in
 * counters.def, the setting, and the value (as settings_str() gives it)
 * that turns it on.  Text, JSON and CSV show it then only; a sweep's
 * results.csv has its column when some configuration reports it. */
typedef struct {
  unsigned flag;
  SettingId setting;
  const char *value;
  /* When set, the test instead of setting=value (which is then one
   * example that turns the counters on), and what it asks, for `list
   * counters`. */
  gboolean (*on)(const Settings *s);
  const char *when;
} CounterGate;

/* The gate of counter id, NULL for a counter every run reports. */
const CounterGate *report_counter_gate(CounterId id);

/* The counters, as perf stat prints them.  Nothing of the host: that is
 * report_host_text's line, which run prints on standard error so that two
 * identical runs print the same standard output. */
void report_text(const RunReport *r, FILE *out);
void report_host_text(const RunReport *r, FILE *out);
/* { "version", "machine", "workload", "runs", "settings", "counters",
 *   "stddev", "host" } as DESIGN.md specifies. */
JsonNode *report_json_node(const RunReport *r);
void report_json(const RunReport *r, FILE *out);
/* A report's JSON (report_json_node's, perhaps with members added) as
 * report_json prints it: indented by 2, a newline at the end. */
void report_json_print(JsonNode *root, FILE *out);
/* Header line then one row: machine,workload,runs,<counter>...,<counter>_rsd... */
/* s as one CSV field, newly allocated: quoted as RFC 4180 says when it holds
 * a comma, a quote or a line break (quotes doubled), and, as OWASP's "CSV
 * Injection" page recommends, prefixed with ' and quoted when it begins
 * with = + - @, a tab or a carriage return and is not a number, so that a
 * spreadsheet shows it rather than evaluating it.  Numbers stay numbers. */
char *report_csv_quote(const char *s);
void report_csv_header(const RunReport *r, FILE *out);
void report_csv_row(const RunReport *r, FILE *out);
void report_csv(const RunReport *r, FILE *out);

/* For the breakdowns (breakdown.c), which print rows of the same counters:
 * whether counter id belongs in r's report (its architecture, its gate);
 * a count as the text report prints it ("1,234"); the shortest exact
 * text of a value (CSV); { name: value } of the counters in `ids` as the
 * JSON report writes them. */
gboolean report_counter_shown(const RunReport *r, CounterId id);
const char *report_fmt_count(char *buf, gsize size, double v);
const char *report_fmt_exact(char *buf, gsize size, double v);
void report_json_add_counter_values(JsonBuilder *jb, const CounterValues *values, const CounterId *ids, unsigned n);

#endif
