/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * breakdown.h - run's breakdowns as perf stat prints them: per CPU (-A),
 * per NUMA node (--per-node), per thread (--per-thread), and the counters
 * of each interval of simulated time (-I MS), in text, JSON and CSV, and a
 * plot of the intervals.
 *
 * The rows come from the engine (EngineResult's per_cpu, threads and
 * intervals, sim/engine.h): a CPU's row is what that CPU counted, its
 * accesses and the kernel work done on it (khugepaged's scans and
 * collapses, NUMA balancing's scans and migrations, the shootdown IPIs it
 * received); a node's row is the sum of the rows of its CPUs, as perf's
 * --per-node sums the CPUs of a node; a thread's row is what its CPU
 * counted while the thread was the CPU's current one.
 */
#ifndef MMUSIM_BREAKDOWN_H
#define MMUSIM_BREAKDOWN_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include "engine.h"
#include "report.h"

typedef enum { BREAKDOWN_NONE, BREAKDOWN_CPU, BREAKDOWN_NODE, BREAKDOWN_THREAD } BreakdownMode;
typedef enum { BREAKDOWN_TEXT, BREAKDOWN_JSON, BREAKDOWN_CSV } BreakdownFormat;

typedef struct {
  const RunReport *r;         /* machine, workload, settings, which counters apply */
  const EngineResult *b;      /* per_cpu, threads, intervals */
  uint64_t elapsed_cycles;    /* of the counted region */
  BreakdownMode mode;
  const CounterId *ids;       /* the counters printed, in this order */
  unsigned n_ids;
  double interval_ms;         /* -I's interval */
} Breakdown;

/* The counters to print: those of `list` (comma-separated names, as
 * `mmusim list counters` shows them), or with list NULL every counter
 * r's report shows (text: without the derived ones, which the text
 * report prints as notes).  Returns the number, *ids newly allocated; 0
 * with error set for a name that is no counter of r's architecture. */
unsigned breakdown_counters(const RunReport *r, const char *list, gboolean text, CounterId **ids, GError **error);

/* -A, --per-node, --per-thread of the counted region: text (perf stat -A's
 * layout, one row per CPU under each counter), or CSV (a header, one row
 * per CPU, node or thread). */
void breakdown_print(const Breakdown *bd, BreakdownFormat f, FILE *out);
/* The rows as a member of run's JSON object: "per_cpu", "per_node" or
 * "per_thread". */
void breakdown_json_add(const Breakdown *bd, JsonObject *report);

/* -I: each interval's counters (one row per CPU or node with -A or
 * --per-node).  Text: perf stat -I's layout, a timestamp column (the end
 * of the interval, seconds of simulated time); JSON: one object a line;
 * CSV: a header, then a row per interval (and CPU or node). */
void breakdown_intervals_print(const Breakdown *bd, BreakdownFormat f, FILE *out);
/* The same in pieces, for printing each interval as it closes: the
 * header (text: two comment lines; CSV: the column names; JSON: none);
 * the rows of one interval (n_cpus: of iv->per_cpu); the line that says
 * a new region of interest begins at `start` cycles, the intervals
 * before it uncounted (text: a comment; JSON: {"region_start": seconds};
 * CSV: none, interval_start says it); the end (text: the partial line of
 * an interrupted run). */
void breakdown_intervals_head(const Breakdown *bd, BreakdownFormat f, GString *s);
void breakdown_interval_rows(const Breakdown *bd, BreakdownFormat f, const EngineInterval *iv, unsigned n_cpus, GString *s);
void breakdown_intervals_region(const Breakdown *bd, BreakdownFormat f, uint64_t start, GString *s);
void breakdown_intervals_tail(const Breakdown *bd, BreakdownFormat f, GString *s);

/* The counters ids of each interval against simulated time, one panel a
 * counter (a line per node with --per-node), to path: SVG or PNG by its
 * extension.  Titled with the workload and the machine, axes named with
 * their units, a legend naming the lines. */
gboolean breakdown_interval_plot(const Breakdown *bd, const char *path, GError **error);
/* Its default counters: dTLB misses, walk cycles, THP collapses, NUMA
 * pages migrated. */
extern const CounterId breakdown_plot_default[4];

#endif
