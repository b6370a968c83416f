/*
 * main.c - the mmusim command line: run, explain, list.
 *
 * Exit status: 0 success; 1 the simulation could not complete (simulated out
 * of memory); 2 bad usage, setting or input, with a message naming the file,
 * line or setting at fault.
 */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include "engine.h"
#include "events.h"
#include "explain.h"
#include "machine.h"
#include "report.h"
#include "sweep.h"
#include "text.h"
#include "workload.h"

#define DEFAULT_MACHINE "skylake"

static int fail(GError *err)
{
  fprintf(stderr, "mmusim: %s\n", err->message);
  g_error_free(err);
  return 2;
}

static int usage_error(const char *fmt, const char *arg)
{
  fprintf(stderr, "mmusim: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  return 2;
}

/* Options shared by run and explain. */
typedef struct {
  char *machine;
  char *workload;
  char *trace;
  char *format;
  char **set;
  int repeat;
  gint64 seed;
  gboolean json, csv;
  char *events;
  gint64 warmup;
  gboolean whole;
} RunOpts;

static void run_opts_clear(RunOpts *o)
{
  g_free(o->machine);
  g_free(o->workload);
  g_free(o->trace);
  g_free(o->format);
  g_strfreev(o->set);
  g_free(o->events);
}

static Settings *resolve_settings(const RunOpts *o, GError **error)
{
  g_autoptr(Settings) s = settings_new();
  if (!machine_load_preset(s, o->machine ? o->machine : DEFAULT_MACHINE, error))
    return NULL;
  for (int i = 0; o->set && o->set[i]; i++)
    if (!settings_set_pair(s, o->set[i], "-s", error))
      return NULL;
  return g_steal_pointer(&s);
}

static TraceSource *open_input(const RunOpts *o, uint64_t seed, GError **error)
{
  if (o->workload && o->trace) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, "give either -w WORKLOAD or -t TRACE, not both");
    return NULL;
  }
  if (o->workload)
    return workload_open(o->workload, seed, error);
  if (o->trace) {
    if (o->format && strcmp(o->format, "text") != 0) {
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                  "-f %s: this build reads the text format (-f text); lackey, ChampSim and .mtr readers are listed in doc/trace-format.md",
                  o->format);
      return NULL;
    }
    return text_source_open(o->trace, error);
  }
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
              "nothing to run: give -w WORKLOAD (see `mmusim list workloads`) or -t TRACE");
  return NULL;
}

static uint64_t peak_rss_bytes(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (uint64_t)ru.ru_maxrss * 1024;
}

static int cmd_run(int argc, char **argv)
{
  RunOpts o = { .repeat = 1 };
  GOptionEntry entries[] = {
    { "machine", 'm', 0, G_OPTION_ARG_STRING, &o.machine, "machine preset or .ini file (default " DEFAULT_MACHINE ")", "MACHINE" },
    { "workload", 'w', 0, G_OPTION_ARG_STRING, &o.workload, "generator spec, e.g. ptrchase:size=1G,accesses=1M", "WORKLOAD" },
    { "trace", 't', 0, G_OPTION_ARG_FILENAME, &o.trace, "trace file ('-' for standard input)", "TRACE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &o.format, "trace format (text)", "FORMAT" },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &o.set, "override a setting (repeatable)", "KEY=VALUE" },
    { "repeat", 'r', 0, G_OPTION_ARG_INT, &o.repeat, "run N times with different seeds; report mean and stddev", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "seed of the generator (and of the first repeat)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT64, &o.warmup, "leave the first N accesses of the region uncounted", "N" },
    { "whole", 0, 0, G_OPTION_ARG_NONE, &o.whole, "count the whole input (setup and its faults too), not just the region of interest", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "print one JSON object", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o.csv, "print CSV (header and one row)", NULL },
    { "events", 0, 0, G_OPTION_ARG_FILENAME, &o.events, "write faults, sampled walks and kernel events to FILE", "FILE" },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- simulate a workload or trace on a machine");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int rc = 0;
  EventLog *ev = NULL;
  g_autoptr(Settings) s = NULL;
  g_autofree CounterValues *runs = NULL;
  g_autofree char *desc = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    rc = fail(err);
    goto out;
  }
  if (argc > 1) {
    rc = usage_error("run: unexpected argument '%s'", argv[1]);
    goto out;
  }
  if (o.repeat < 1 || o.warmup < 0 || o.seed < 0) {
    rc = usage_error("run: %s must not be negative (and -r at least 1)", "-r/--seed/--warmup");
    goto out;
  }
  if (o.json && o.csv) {
    rc = usage_error("run: %s", "--json and --csv exclude each other");
    goto out;
  }
  if (o.repeat > 1 && o.trace && strcmp(o.trace, "-") == 0) {
    rc = usage_error("run: %s", "-r needs to read the trace again; standard input can be read only once");
    goto out;
  }
  s = resolve_settings(&o, &err);
  if (!s) {
    rc = fail(err);
    goto out;
  }
  if (o.events && !(ev = events_open(o.events, &err))) {
    rc = fail(err);
    goto out;
  }
  runs = g_new0(CounterValues, o.repeat);
  gint64 t0 = g_get_monotonic_time();
  double accesses = 0, roi_accesses = 0, roi_secs = 0;
  for (int i = 0; i < o.repeat; i++) {
    uint64_t seed = o.seed ? (uint64_t)o.seed + i : (o.repeat > 1 ? 1 + (uint64_t)i : 0);
    g_autoptr(TraceSource) src = open_input(&o, seed, &err);
    if (!src) {
      rc = fail(err);
      goto out;
    }
    if (!desc)
      desc = g_strdup(src->description);
    Machine *m = machine_new(o.machine ? o.machine : DEFAULT_MACHINE, s, ev, &err);
    if (!m) {
      rc = fail(err);
      goto out;
    }
    EngineResult res;
    EngineOptions eo = { .warmup = (uint64_t)o.warmup, .whole = o.whole };
    gboolean ok = engine_run(m, src, &eo, &res, &err);
    double mhz = (double)settings_int(s, SET_CPU_FREQ_MHZ);
    machine_free(m);
    if (!ok) {
      rc = fail(err);
      goto out;
    }
    if (res.oom) {
      fprintf(stderr, "mmusim: simulated machine ran out of memory after %" G_GUINT64_FORMAT
                      " records; give it more (-s machine.mem_per_node=...)\n", res.records);
      rc = 1;
      goto out;
    }
    counter_values_from(&runs[i], &res.counted, res.elapsed_cycles, mhz);
    accesses += (double)res.records;
    roi_accesses += (double)res.counted.c[CTR_ACCESSES];
    roi_secs += res.host_seconds;
  }
  double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
  RunReport r = {
    .machine = o.machine ? o.machine : DEFAULT_MACHINE,
    .workload = desc,
    .arch = settings_str(s, SET_MACHINE_ARCH),
    .runs = (unsigned)o.repeat,
    .settings = s,
    .host_seconds = secs,
    .host_accesses_per_second = secs > 0 ? accesses / secs : 0,
    .host_roi_accesses_per_second = roi_secs > 0 ? roi_accesses / roi_secs : 0,
    .host_peak_rss_bytes = peak_rss_bytes(),
  };
  report_aggregate(runs, (unsigned)o.repeat, &r.mean, &r.rel_stddev);
  if (o.json)
    report_json(&r, stdout);
  else if (o.csv)
    report_csv(&r, stdout);
  else
    report_text(&r, stdout);
out:
  events_close(ev);
  run_opts_clear(&o);
  return rc;
}

static int cmd_explain(int argc, char **argv)
{
  RunOpts o = { 0 };
  GOptionEntry entries[] = {
    { "machine", 'm', 0, G_OPTION_ARG_STRING, &o.machine, "machine preset or .ini file", "MACHINE" },
    { "workload", 'w', 0, G_OPTION_ARG_STRING, &o.workload, "run this generator first", "WORKLOAD" },
    { "trace", 't', 0, G_OPTION_ARG_FILENAME, &o.trace, "run this trace first", "TRACE" },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &o.set, "override a setting", "KEY=VALUE" },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("ADDRESS... - show translations step by step");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "ADDRESS is a virtual address (0x7f0000001000); w:ADDR explains a store, x:ADDR a fetch.\n"
    "Without -w or -t the address space is empty and memory is mapped on demand, so the\n"
    "first explanation shows the fault and the second the warm path.");
  GError *err = NULL;
  int rc = 0;
  Machine *m = NULL;
  g_autoptr(Settings) s = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    rc = fail(err);
    goto out;
  }
  if (argc < 2) {
    rc = usage_error("explain: %s", "give at least one ADDRESS");
    goto out;
  }
  s = resolve_settings(&o, &err);
  if (!s || !(m = machine_new(o.machine ? o.machine : DEFAULT_MACHINE, s, NULL, &err))) {
    rc = fail(err);
    goto out;
  }
  if (o.workload || o.trace) {
    g_autoptr(TraceSource) src = open_input(&o, 0, &err);
    EngineResult res;
    if (!src || !engine_run(m, src, NULL, &res, &err)) {
      rc = fail(err);
      goto out;
    }
  } else {
    m->k->map_on_demand = TRUE;
  }
  Thread *t = machine_thread(m, 1, 1, 0);
  GString *out = g_string_new(NULL);
  for (int i = 1; i < argc && t; i++) {
    uint64_t va;
    AccessKind kind;
    if (!explain_parse_address(argv[i], &va, &kind, &err)) {
      rc = fail(err);
      break;
    }
    explain_address(m, t, va, kind, out);
  }
  fputs(out->str, stdout);
  g_string_free(out, TRUE);
out:
  machine_free(m);
  run_opts_clear(&o);
  return rc;
}

static void list_settings(GString *out)
{
  for (int i = 0; i < N_SETTINGS; i++) {
    const SettingDef *d = settings_def((SettingId)i);
    g_string_append_printf(out, "%-32s %-6s %-10s %-12s %s", d->name, settings_type_name(d->type), d->def,
                           d->unit, d->help);
    if (d->choices)
      g_string_append_printf(out, " [%s]", d->choices);
    g_string_append_printf(out, " (source: %s)\n", d->source);
  }
}

static void list_counters(GString *out)
{
  for (int i = 0; i < N_COUNTERS; i++) {
    const CounterDef *d = counter_def((CounterId)i);
    g_string_append_printf(out, "%-26s %s%s\n", d->name, d->help, d->flags & CF_PPC64 ? " (ppc64 hash only)" : "");
  }
}

static int cmd_list(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "";
  GString *out = g_string_new(NULL);
  int rc = 0;
  if (strcmp(what, "machines") == 0)
    machine_list(out);
  else if (strcmp(what, "workloads") == 0)
    workload_list(out);
  else if (strcmp(what, "settings") == 0)
    list_settings(out);
  else if (strcmp(what, "counters") == 0)
    list_counters(out);
  else
    rc = usage_error("list: say what to list: machines, workloads, settings or counters (not '%s')", what);
  fputs(out->str, stdout);
  g_string_free(out, TRUE);
  return rc;
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: mmusim COMMAND [OPTIONS]\n\n"
          "  run      [-m MACHINE] (-w WORKLOAD | -t TRACE [-f FORMAT]) [-s KEY=VALUE]...\n"
          "           [-r REPEAT] [--seed N] [--warmup N] [--whole] [--json | --csv] [--events FILE]\n"
          "  explain  [-m MACHINE] [-s KEY=VALUE]... [-w WORKLOAD | -t TRACE] ADDRESS...\n"
          "  sweep    [-o DIR] [-j N] [--emit-jobs | --only ID | --collect DIR] [--plot] EXPERIMENT.ini\n"
          "  list     machines | workloads | settings | counters\n\n"
          "`mmusim COMMAND --help` for the options of a command; man mmusim for the rest.\n");
}

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("mmusim %s\n", PACKAGE_VERSION);
    return 0;
  }
  if (strcmp(cmd, "run") == 0)
    return cmd_run(argc - 1, argv + 1);
  if (strcmp(cmd, "explain") == 0)
    return cmd_explain(argc - 1, argv + 1);
  if (strcmp(cmd, "list") == 0)
    return cmd_list(argc - 1, argv + 1);
  if (strcmp(cmd, "sweep") == 0)
    return sweep_main(argc - 1, argv + 1, argv[0]);
  if (strcmp(cmd, "record") == 0 || strcmp(cmd, "trace") == 0) {
    fprintf(stderr, "mmusim: '%s' is not part of this version yet; see doc/ARCHITECTURE.md for what exists\n", cmd);
    return 2;
  }
  fprintf(stderr, "mmusim: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
