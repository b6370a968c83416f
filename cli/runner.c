/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * runner.c - one configuration run from start to report (see runner.h).
 */
#include "config.h"
#include "runner.h"

#include <string.h>
#include "engine.h"
#include "machine.h"
#include "lackey.h"
#include "readahead.h"
#include "trace_format.h"
#include "workload.h"

Settings *runner_settings(const RunSpec *spec, GError **error)
{
  g_autoptr(Settings) s = settings_new();
  if (!preset_load(s, spec->machine ? spec->machine : RUNNER_DEFAULT_MACHINE, error))
    return NULL;
  for (unsigned i = 0; spec->set && spec->set[i]; i++)
    if (!settings_set_pair(s, spec->set[i], spec->set_origin ? spec->set_origin[i] : "-s", error))
      return NULL;
  return g_steal_pointer(&s);
}

TraceSource *runner_open_input(const RunSpec *spec, const uint64_t *seed, GError **error)
{
  if (spec->workload && spec->trace) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, "give either -w WORKLOAD or -t TRACE, not both");
    return NULL;
  }
  if (spec->workload)
    return workload_open(spec->workload, seed, error);
  if (spec->trace) {
    TraceFormat f = TRACE_FORMAT_AUTO;
    if (spec->format && !trace_format_parse(spec->format, &f, error))
      return NULL;
    return trace_format_open(spec->trace, f, NULL, error);
  }
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
              "nothing to run: give -w WORKLOAD (see `mmusim list workloads`) or -t TRACE");
  return NULL;
}

gboolean runner_run(const RunSpec *spec, RunOutcome *out, GError **error)
{
  g_return_val_if_fail(spec->repeat >= 1, FALSE);
  memset(out, 0, sizeof *out);
  out->machine = g_strdup(spec->machine ? spec->machine : RUNNER_DEFAULT_MACHINE);
  out->settings = runner_settings(spec, error);
  if (!out->settings)
    return FALSE;
  out->per_run = g_new0(CounterValues, spec->repeat);
  double mhz = (double)settings_int(out->settings, SET_CPU_FREQ_MHZ);
  double records = 0, roi_accesses = 0, roi_secs = 0;
  gint64 t0 = g_get_monotonic_time();
  for (unsigned i = 0; i < spec->repeat; i++) {
    uint64_t seed = spec->seed_given ? spec->seed + i : 1 + (uint64_t)i;
    const uint64_t *seed_of = spec->seed_given || spec->repeat > 1 ? &seed : NULL;
    g_autoptr(TraceSource) src =
      spec->open ? spec->open(spec->open_data, i, error) : runner_open_input(spec, seed_of, error);
    if (!src)
      return FALSE;
    /* Not from a pipe or a terminal: a run that stops early (out of
     * memory) would wait for the decoding thread's read to return. */
    if (spec->read_ahead && src->ops->read_ahead && spec->trace && strcmp(spec->trace, "-") != 0 &&
        g_file_test(spec->trace, G_FILE_TEST_IS_REGULAR))
      src = readahead_source_new(src, READAHEAD_RING);
    if (!out->workload)
      out->workload = g_strdup(src->description);
    Machine *m = machine_new(out->machine, out->settings, spec->events, error);
    if (!m)
      return FALSE;
    EngineResult res;
    EngineOptions eo = { .warmup = spec->warmup, .whole = spec->whole, .stop = spec->stop,
                         .progress = spec->progress, .progress_data = spec->progress_data,
                         .annotate = i == 0 ? spec->annotate : NULL,
                         .per_cpu = spec->per_cpu, .per_thread = spec->per_thread,
                         .interval_cycles = (uint64_t)(spec->interval_ms * 1e3 * mhz),
                         .on_interval = spec->on_interval, .on_region = spec->on_region,
                         .interval_data = spec->interval_data, .keep_intervals = spec->keep_intervals };
    gboolean ok = engine_run(m, src, &eo, &res, error);
    if (ok && spec->inspect && (i + 1 == spec->repeat || res.oom))
      ok = spec->inspect(m, src->description, spec->inspect_data, error);
    if (ok && i == 0 && !res.oom) {
      Counters all; /* the whole input, not only the counted region */
      machine_counters(m, &all);
      out->no_accesses = all.c[CTR_ACCESSES] == 0;
      /* segv counts the accesses that faulted fatally, and only them: a
       * refused mmap or other call is in syscalls_failed. */
      out->all_fatal = all.c[CTR_ACCESSES] > 0 && all.c[CTR_SEGV] >= all.c[CTR_ACCESSES];
      out->fatal_accesses = all.c[CTR_SEGV];
      out->hugetlb_empty = all.c[CTR_HUGETLB_ALLOC_FAIL];
    }
    machine_free(m);
    g_free(out->oom_kills); /* the last repeat's are kept */
    out->oom_kills = g_steal_pointer(&res.oom_kills);
    out->n_oom_kills = res.n_oom_kills;
    /* Only for an input read to its end: after a stop the decoding thread
     * may have read past the engine, by a varying amount. */
    TraceSource *in = readahead_source_finish(src);
    if (ok && i == 0 && !res.oom && strcmp(in->ops->name, "lackey") == 0)
      out->skipped_lines = lackey_source_skipped(in);
    if (!ok) {
      engine_result_clear(&res);
      return FALSE;
    }
    if (res.oom) {
      engine_result_clear(&res);
      out->oom = TRUE;
      out->oom_records = res.records;
      break;
    }
    if (res.warmup_unfinished && !out->warmup_unfinished) {
      out->warmup_unfinished = TRUE;
      out->warmup_seen = res.warmup_seen;
    }
    counter_values_from(&out->per_run[i], &res.counted, res.elapsed_cycles, mhz);
    engine_result_clear(&out->breakdown); /* the last repeat's are kept */
    out->breakdown = (EngineResult){
      .n_cpus = res.n_cpus, .per_cpu = g_steal_pointer(&res.per_cpu),
      .threads = g_steal_pointer(&res.threads), .n_threads = res.n_threads,
      .intervals = g_steal_pointer(&res.intervals), .n_intervals = res.n_intervals,
      .interval_merged = res.interval_merged,
    };
    out->elapsed_cycles = res.elapsed_cycles;
    out->runs++;
    records += (double)res.records;
    roi_accesses += (double)res.counted.c[CTR_ACCESSES];
    roi_secs += res.host_seconds;
    if (res.interrupted) {
      out->interrupted = TRUE;
      out->records_read = res.records;
      break;
    }
  }
  out->host_seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
  out->host_accesses_per_second = out->host_seconds > 0 ? records / out->host_seconds : 0;
  out->host_roi_accesses_per_second = roi_secs > 0 ? roi_accesses / roi_secs : 0;
  if (out->runs)
    report_aggregate(out->per_run, out->runs, &out->mean, &out->rel_stddev);
  return TRUE;
}

void runner_report(const RunOutcome *out, uint64_t peak_rss_bytes, RunReport *r)
{
  *r = (RunReport){
    .machine = out->machine,
    .workload = out->workload,
    .arch = settings_str(out->settings, SET_MACHINE_ARCH),
    .cpus = (unsigned)(settings_int(out->settings, SET_MACHINE_NODES) *
                       settings_int(out->settings, SET_MACHINE_CPUS_PER_NODE)),
    .runs = out->runs,
    .settings = out->settings,
    .mean = out->mean,
    .rel_stddev = out->rel_stddev,
    .host_seconds = out->host_seconds,
    .host_accesses_per_second = out->host_accesses_per_second,
    .host_roi_accesses_per_second = out->host_roi_accesses_per_second,
    .host_peak_rss_bytes = peak_rss_bytes,
    .oom_kills = out->oom_kills,
    .n_oom_kills = out->n_oom_kills,
  };
}

void run_outcome_clear(RunOutcome *out)
{
  settings_free(out->settings);
  g_free(out->machine);
  g_free(out->workload);
  g_free(out->per_run);
  g_free(out->oom_kills);
  engine_result_clear(&out->breakdown);
  memset(out, 0, sizeof *out);
}

void run_outcome_warn_warmup(const RunOutcome *out, const char *who, const char *option, uint64_t warmup)
{
  if (!out->warmup_unfinished)
    return;
  fprintf(stderr, "mmusim: warning: %s: %s %" G_GUINT64_FORMAT " is more than the %" G_GUINT64_FORMAT
                  " accesses of the counted region, so nothing was counted; give a smaller %s\n",
          who, option, warmup, out->warmup_seen, option);
}

char *run_outcome_all_fatal(const RunOutcome *out)
{
  GString *s = g_string_new(NULL);
  g_string_printf(s, "every memory access of %s faulted fatally (%" G_GUINT64_FORMAT " SIGSEGV or SIGBUS): "
                  "the program would have died at its first, and the report describes no run",
                  out->workload ? out->workload : "the input", out->fatal_accesses);
  if (out->hugetlb_empty)
    g_string_append_printf(s, "; %" G_GUINT64_FORMAT " hugetlb faults found the pool empty: reserve huge pages "
                           "(-s hugetlb.nr_hugepages=N, as /proc/sys/vm/nr_hugepages) or back it with backing=anon",
                           out->hugetlb_empty);
  return g_string_free(s, FALSE);
}

char *run_outcome_no_accesses(const RunSpec *spec, const RunOutcome *out)
{
  if (spec->trace)
    return g_strdup_printf("trace %s holds no memory accesses",
                           strcmp(spec->trace, "-") == 0 ? "on standard input" : spec->trace);
  return g_strdup_printf("workload %s makes no memory accesses", out->workload ? out->workload : "");
}
