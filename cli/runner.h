/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * runner.h - one configuration run from start to report: resolve the
 * settings (preset, then KEY=VALUE pairs in order), open the input once per
 * repeat, run the engine, and gather the counters of every repeat with their
 * mean and relative standard deviation.  `mmusim run` and every
 * configuration of `mmusim sweep` go through here, so a sweep's result is
 * the result `run` prints for the same configuration.
 *
 * Thread safety: nothing here or below it keeps global mutable state, so
 * several configurations may run at once on different threads.
 */
#ifndef MMUSIM_RUNNER_H
#define MMUSIM_RUNNER_H

#include <glib.h>
#include "engine.h"
#include "events.h"
#include "machine.h"
#include "oom_kill.h"
#include "report.h"
#include "settings.h"
#include "source.h"

#define RUNNER_DEFAULT_MACHINE "skylake"

typedef struct {
  const char *machine;        /* preset or .ini; NULL: RUNNER_DEFAULT_MACHINE */
  const char *const *set;     /* KEY=VALUE pairs, NULL-terminated, or NULL */
  const char *const *set_origin; /* where each pair came from, for messages; NULL: "-s" */
  const char *workload;       /* generator spec, or NULL */
  const char *trace;          /* trace path ("-": standard input), or NULL */
  const char *format;         /* trace format (auto, text, lackey, mtr, champsim), NULL: detect */
  unsigned repeat;            /* >= 1 */
  gboolean seed_given;        /* FALSE: the generator's own seed (repeat i of -r uses 1 + i) */
  uint64_t seed;              /* when seed_given: repeat i uses seed + i (0 is a seed like any other) */
  uint64_t warmup;
  gboolean whole;             /* count the whole input (run --whole) */
  EventLog *events;           /* or NULL */
  /* Decode the input in a host thread of its own, ahead of the model
   * (traces/readahead.h), when its format is worth it (the source's
   * read_ahead: every trace format, not the generators) and it is a regular
   * file: the results are the same, the wall time shorter when the host has
   * a core to spare. */
  gboolean read_ahead;
  /* Optional: where repeat i's input comes from instead of opening it (a
   * sweep's shared decoding pass, cli/sweep.c).  NULL: runner_open_input. */
  TraceSource *(*open)(void *data, unsigned repeat, GError **error);
  void *open_data;
  /* Optional: called with the machine of the last run (the last repeat, or
   * the one that ran out of memory) before it is freed, e.g. to draw its
   * address spaces (run --map).  FALSE with error set fails the run. */
  gboolean (*inspect)(const Machine *m, const char *workload, void *data, GError **error);
  void *inspect_data;
  /* Optional: a flag a signal handler sets to stop the run where it is
   * (EngineOptions.stop), and a progress callback with its data. */
  const volatile int *stop;
  EngineProgressFn progress;
  void *progress_data;
  /* Optional: attribute the first repeat's misses and faults here
   * (sim/annotation.h, run --annotate). */
  Annotation *annotate;
  /* Breakdowns (run -A, --per-node, --per-thread, -I): EngineOptions'
   * per_cpu and per_thread, and intervals of interval_ms milliseconds of
   * simulated time (0: none).  Kept for the last repeat. */
  gboolean per_cpu, per_thread;
  double interval_ms;
  /* Optional, with interval_ms: EngineOptions' on_interval, on_region
   * and keep_intervals (each interval as it closes; its data is
   * interval_data). */
  void (*on_interval)(const EngineInterval *iv, unsigned n_cpus, void *data);
  void (*on_region)(uint64_t start, void *data);
  void *interval_data;
  gboolean keep_intervals;
} RunSpec;

typedef struct {
  Settings *settings;         /* resolved */
  char *machine;              /* as given or the default */
  char *workload;             /* the source's description */
  unsigned runs;
  CounterValues *per_run;     /* runs of them */
  CounterValues mean, rel_stddev;
  double host_seconds;
  double host_accesses_per_second;
  double host_roi_accesses_per_second;
  uint64_t skipped_lines;     /* lackey: lines that were not records (valgrind's own), once read to the end */
  gboolean oom;               /* the simulated machine ran out of memory */
  /* mem.oom_policy=kill: the kills of the last repeat (EngineResult's) */
  OomKill *oom_kills;
  guint n_oom_kills;
  uint64_t oom_records;       /* records read when it did */
  /* A repeat whose counted region was shorter than its --warmup (it
   * counted nothing): the first such, and the accesses its region had. */
  gboolean warmup_unfinished;
  uint64_t warmup_seen;
  /* spec->stop ended the run: the last repeat counted is partial
   * (records_read records of its input were simulated). */
  gboolean interrupted;
  uint64_t records_read;
  /* The input held no memory access at all (an empty trace, one of
   * mappings only): the counters are all zero and say nothing. */
  gboolean no_accesses;
  /* Every access of the input raised SIGSEGV or SIGBUS (fatal_accesses of
   * them; hugetlb_empty of those found the hugetlb pool empty): a program
   * that would have died at its first. */
  gboolean all_fatal;
  uint64_t fatal_accesses, hugetlb_empty;
  /* The breakdowns RunSpec asked for, of the last repeat counted (its
   * EngineResult's per_cpu, threads and intervals, moved here), and the
   * simulated cycles of its counted region. */
  EngineResult breakdown;
  uint64_t elapsed_cycles;
} RunOutcome;

/* The settings of spec: preset, then the pairs in order (origin spec->set_origin or "-s"). */
Settings *runner_settings(const RunSpec *spec, GError **error);

/* Open the input of spec for one repeat. */
TraceSource *runner_open_input(const RunSpec *spec, const uint64_t *seed, GError **error);

/* Run every repeat.  FALSE with error set on bad input (exit status 2);
 * TRUE otherwise, with out->oom set when the machine ran out of memory (the
 * counters are then those of the repeats before). */
gboolean runner_run(const RunSpec *spec, RunOutcome *out, GError **error);

/* The report of an outcome (pointers into out; valid while out is). */
void runner_report(const RunOutcome *out, uint64_t peak_rss_bytes, RunReport *r);

void run_outcome_clear(RunOutcome *out);

/* The warning of an outcome whose warmup outlasted its counted region, on
 * stderr: `who` names the run ("sort.mtr", "sweep: stlb=64"), `option` the
 * knob the user gave (--warmup, the experiment's warmup key).  Nothing when
 * the warmup finished. */
void run_outcome_warn_warmup(const RunOutcome *out, const char *who, const char *option, uint64_t warmup);

/* What an outcome with no_accesses says: "trace FILE holds no memory
 * accesses" (or the workload's description), newly allocated. */
char *run_outcome_no_accesses(const RunSpec *spec, const RunOutcome *out);
/* What an outcome with all_fatal says, with the fix when the hugetlb pool
 * was empty. */
char *run_outcome_all_fatal(const RunOutcome *out);

#endif
