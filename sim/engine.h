/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.h - runs a trace source on a machine.
 *
 * Records are sorted into per-thread queues; the engine repeatedly runs the
 * next record of the thread whose CPU has the lowest clock, so CPUs advance
 * together in simulated time and a run is deterministic.  Mapping events and
 * region marks are barriers: every queued access runs first, then the event.
 * Counters cover the region of interest when the input marks one (after
 * --warmup accesses of it), else the whole input.
 */
#ifndef MMUSIM_ENGINE_H
#define MMUSIM_ENGINE_H

#include <glib.h>
#include "annotation.h"
#include "machine.h"
#include "oom_kill.h"
#include "source.h"
#include "stats.h"

/* Where a run is, for a progress line: records read, the records the
 * source expects in all (0: unknown), and the simulated time of the CPU
 * furthest ahead. */
typedef void (*EngineProgressFn)(void *data, uint64_t records, uint64_t expected, double sim_ns);

/* One interval of -I: the counted region's counters between start and
 * end (cycles of simulated time since the input began).  The intervals
 * of a run are consecutive and their sum is EngineResult.counted.
 * per_cpu: with EngineOptions.per_cpu, each CPU's share (n_cpus of them),
 * else NULL. */
typedef struct {
  uint64_t start, end;
  Counters total;
  Counters *per_cpu;
} EngineInterval;

typedef struct {
  uint64_t warmup; /* accesses at the start of the region left uncounted */
  gboolean whole;  /* count the whole input: setup, faults and all, region marks ignored */
  /* Optional: when *stop becomes nonzero (a signal handler sets it), the
   * run ends after the batch in hand, with what was simulated counted and
   * EngineResult.interrupted set. */
  const volatile int *stop;
  /* Optional: called after every batch of records. */
  EngineProgressFn progress;
  void *progress_data;
  /* Optional: attribute the counted region's misses, walks and faults to
   * instructions and mappings (sim/annotation.h); costs host time. */
  Annotation *annotate;
  /* Breakdowns of the counted region, all off by default and costing
   * nothing then but a compare at a context switch:
   * per_cpu: EngineResult.per_cpu, each CPU's counters (a CPU counts its
   * own accesses and the kernel work done on it).
   * per_thread: EngineResult.threads, the counters a CPU counted while
   * each thread was its current one (perf stat --per-thread's view).
   * interval_cycles: the counters of each span of that many cycles of
   * simulated time (perf stat -I); 0: none.  They go to on_interval as
   * each closes (when given), and are kept in EngineResult.intervals
   * (without on_interval, or with keep_intervals), at most
   * engine_intervals_max() of them: past that, neighbours merge in pairs. */
  gboolean per_cpu, per_thread;
  uint64_t interval_cycles;
  /* Called with each interval of the counted region in order, one
   * interval after it closed (the last at the region's end: an interval
   * of no time may still join it).  Before the input's first `roi begin`
   * (without `whole`) the intervals are held, since a region the input
   * marks later would make them uncounted; they are passed on at the end
   * of the input, or once engine_intervals_max() of them are held.  When a
   * region begins after intervals of an earlier one were passed on,
   * on_region is called first with its start (cycles). */
  void (*on_interval)(const EngineInterval *iv, unsigned n_cpus, void *data);
  void (*on_region)(uint64_t start, void *data);
  void *interval_data;
  gboolean keep_intervals;
} EngineOptions;

/* One thread's counters of the counted region.  pid 0: what CPUs counted
 * while no thread was theirs (before a CPU's first thread, after its
 * thread was killed). */
typedef struct {
  uint32_t pid, tid;
  Counters ctr;
} EngineThreadCounts;


typedef struct {
  Counters counted;        /* the counted region */
  uint64_t elapsed_cycles; /* simulated time of the counted region */
  uint64_t records;        /* records read */
  double host_seconds;     /* host time spent in the counted region */
  gboolean oom;            /* simulated out of memory: the run stopped */
  gboolean interrupted;    /* EngineOptions.stop ended the run before its input */
  /* mem.oom_policy=kill: the processes the OOM killer killed, in order,
   * with the records of each that were dropped (NULL when none: free with
   * engine_result_clear). */
  OomKill *oom_kills;
  guint n_oom_kills;
  /* --warmup outlasted the counted region, which then counts nothing:
   * warmup_seen accesses ran in it (fewer than the warmup). */
  gboolean warmup_unfinished;
  uint64_t warmup_seen;
  /* The breakdowns EngineOptions asked for (NULL/0 otherwise): per_cpu
   * has n_cpus entries; threads in order of first appearance, the row of
   * pid 0 last and only when it counted something. */
  unsigned n_cpus;
  Counters *per_cpu;
  EngineThreadCounts *threads;
  unsigned n_threads;
  EngineInterval *intervals;
  unsigned n_intervals;
  unsigned interval_merged; /* intervals of interval_cycles in each of intervals (the last: at most), 1 unless merged */
} EngineResult;

/* Intervals kept or held at most, for a machine of n_cpus CPUs with
 * per-CPU counters (0: without): ENGINE_INTERVALS_KEPT, fewer when each
 * carries a row per CPU, so that they hold at most ENGINE_INTERVAL_ROWS
 * sets of counters (some 70 MB); even, at least 2. */
#define ENGINE_INTERVALS_KEPT 4096
#define ENGINE_INTERVAL_ROWS 65536
unsigned engine_intervals_max(unsigned n_cpus);

gboolean engine_run(Machine *m, TraceSource *src, const EngineOptions *opt, EngineResult *res, GError **error);
/* Free what a result holds (its kill list, its breakdowns); accepts a
 * cleared result. */
void engine_result_clear(EngineResult *res);

#endif
