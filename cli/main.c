/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - the mmusim command line: run, explain, record, trace, list, host.
 *
 * Exit status: 0 success; 1 the simulation could not complete (simulated out
 * of memory) or its output could not be written (a full disk: the message
 * names the file and the errno text); 2 bad usage, setting or input, with a
 * message naming the file, line or setting at fault.  Every file is written
 * through base/outfile.h (a temporary name, renamed when complete) and
 * standard output is checked at exit.
 */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "engine.h"
#include "annotate.h"
#include "events.h"
#include "breakdown.h"
#include "explain.h"
#include "host_bench.h"
#include "host_detect.h"
#include "host_validate.h"
#include "machine.h"
#include "map.h"
#include "outfile.h"
#include "plot.h"
#include "report.h"
#include "runner.h"
#include "settings.h"
#include "sweep.h"
#include "compress_out.h"
#include "insnwriter.h"
#include "lackey.h"
#include "mtr.h"
#include "recorder.h"
#include "summary.h"
#include "text.h"
#include "version.h"
#include "trace_format.h"
#include "workload.h"

#define DEFAULT_MACHINE RUNNER_DEFAULT_MACHINE

/* Report err; the exit status: 1 for output that could not be written, 2
 * for bad usage or input. */
static int fail(GError *err)
{
  int rc = out_file_exit_status(err);
  fprintf(stderr, "mmusim: %s\n", err->message);
  g_error_free(err);
  return rc;
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
  char *seed_text;   /* --seed as given; NULL: none (the generator's own) */
  gboolean seed_given;
  uint64_t seed;
  gboolean json, csv;
  char *events;
  char *warmup_text; /* a count, suffixes K, M, G as in workload specs */
  uint64_t warmup;
  gboolean whole;
  char *map;
  int jobs;         /* run: host threads, 0: the host's CPUs */
  gboolean quiet;   /* run: no progress line */
  char *annotate;   /* run --annotate FILE: attribution report (cli/annotate.h) */
  int top;          /* run --top N: rows of each annotate table */
  char *sort;       /* run --sort METRIC: the annotate tables' order */
  char *by;         /* run --by ip|symbol|dso: the annotate instruction rows' grouping */
  char *symfs;      /* run --symfs DIR: the recorded program's binaries looked up under DIR first */
  gboolean no_demangle; /* run --no-demangle: C++ names as the binaries spell them */
  /* run: breakdowns (-A, --per-node, --per-thread), intervals (-I MS),
   * their plot, and the counters they print */
  gboolean per_cpu, per_node, per_thread;
  char *interval_text;
  char *interval_plot;
  char *counters;
} RunOpts;

static void run_opts_clear(RunOpts *o)
{
  g_free(o->machine);
  g_free(o->workload);
  g_free(o->trace);
  g_free(o->format);
  g_strfreev(o->set);
  g_free(o->events);
  g_free(o->map);
  g_free(o->warmup_text);
  g_free(o->seed_text);
  g_free(o->annotate);
  g_free(o->by);
  g_free(o->symfs);
  g_free(o->sort);
  g_free(o->interval_text);
  g_free(o->interval_plot);
  g_free(o->counters);
}

/* --seed N of `command`: any whole number, 0 included.  Sets *given to
 * whether there was one; 0 when fine, else the exit status of a usage error. */
static int parse_seed(const char *command, const char *text, gboolean *given, uint64_t *seed)
{
  *given = text != NULL;
  if (text && !g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, seed, NULL)) {
    fprintf(stderr, "mmusim: %s: --seed '%s': give a whole number, 0 or more\n", command, text);
    return 2;
  }
  return 0;
}

/* The runner's view of the options (pointers into o). */
static RunSpec spec_of(const RunOpts *o)
{
  return (RunSpec){
    .machine = o->machine ? o->machine : DEFAULT_MACHINE,
    .set = (const char *const *)o->set,
    .workload = o->workload,
    .trace = o->trace,
    .format = o->format,
    .repeat = o->repeat > 0 ? (unsigned)o->repeat : 1,
    .seed_given = o->seed_given,
    .seed = o->seed,
    .warmup = o->warmup,
    .whole = o->whole,
  };
}

static uint64_t peak_rss_bytes(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (uint64_t)ru.ru_maxrss * 1024;
}

/* ---- run: stopping early, and the progress line -------------------------
 * SIGINT or SIGTERM during a run stops it where it is; the report of what
 * was simulated is printed, marked partial, and run exits 128 + the signal
 * (130, 143), as perf stat does.  The handler is installed once for the
 * run and resets itself: a second signal ends the program at once. */
static volatile int run_stop_signal;

static void run_on_signal(int sig)
{
  run_stop_signal = sig;
}

static void run_catch_signals(gboolean on)
{
  struct sigaction sa = { 0 };
  sa.sa_handler = on ? run_on_signal : SIG_DFL;
  sa.sa_flags = on ? (int)SA_RESETHAND : 0;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

/* On a terminal, stderr shows how far the run is: records read, simulated
 * time, records per second, and the share done with an estimate of the time
 * left when the input says how long it is (a generator's accesses).  Redrawn
 * at most every RUN_PROGRESS_US of host time; cleared before the report. */
#define RUN_PROGRESS_US 250000
typedef struct {
  gint64 t0, last;
  gboolean drawn;
} RunProgress;

static void run_progress(void *data, uint64_t records, uint64_t expected, double sim_ns)
{
  RunProgress *p = data;
  gint64 now = g_get_monotonic_time();
  if (now - p->last < RUN_PROGRESS_US)
    return;
  p->last = now;
  double secs = (double)(now - p->t0) / 1e6;
  double rate = secs > 0 ? (double)records / secs : 0;
  g_autoptr(GString) line = g_string_new(NULL);
  g_string_printf(line, "mmusim: %.1f M records, %.3f ms simulated, %.1f M records/s", (double)records / 1e6,
                  sim_ns / 1e6, rate / 1e6);
  if (expected && rate > 0) {
    double done = MIN((double)records / (double)expected, 0.99);
    double left = (double)(expected > records ? expected - records : 0) / rate;
    g_string_append_printf(line, ", %.0f%%, ETA %u:%02u", done * 100, (unsigned)(left / 60), (unsigned)left % 60);
  }
  fprintf(stderr, "\r%s\033[K", line->str);
  fflush(stderr);
  p->drawn = TRUE;
}

/* run --map: draw the machine of the last run before the runner frees it. */
static gboolean draw_map(const Machine *m, const char *workload, void *data, GError **error)
{
  g_autofree char *title = g_strdup_printf("%s on %s", workload, m->name);
  return map_write_svg(m, title, data, error);
}

/* run --annotate's options: --top and --sort only with it, and valid. */
static int annotate_opts_check(const RunOpts *o, AnnMetric *sort, AnnotateBy *by)
{
  if (!o->annotate && (o->sort || o->top != ANNOTATE_DEFAULT_TOP || o->by || o->symfs || o->no_demangle))
    return usage_error("run: %s", "--top, --sort, --by, --symfs and --no-demangle go with --annotate FILE");
  if (o->by && !annotate_by_parse(o->by, by)) {
    g_autofree char *msg = g_strdup_printf("run: --by '%s': expected ip, symbol or dso", o->by);
    return usage_error("%s", msg);
  }
  if (o->symfs && !g_file_test(o->symfs, G_FILE_TEST_IS_DIR)) {
    g_autofree char *msg = g_strdup_printf("run: --symfs '%s': not a folder (give the root the recorded "
                                           "program's binaries are under)", o->symfs);
    return usage_error("%s", msg);
  }
  if (o->top < 0)
    return usage_error("run: %s", "--top: give a number of rows, 0 for all");
  if (o->sort && !annotate_metric_parse(o->sort, sort)) {
    g_autofree char *choices = annotate_metric_choices();
    g_autofree char *msg = g_strdup_printf("run: --sort '%s': expected one of %s", o->sort, choices);
    return usage_error("%s", msg);
  }
  return 0;
}

/* 0 when run can write the file of `option` at path, else the exit status
 * of the error it has said; nothing is left behind. */
static int check_writable(const char *path, const char *option)
{
  GError *err = NULL;
  OutFile *f = out_file_open(path, &err);
  if (!f) {
    g_prefix_error(&err, "run: %s: ", option);
    return fail(err);
  }
  out_file_abort(f);
  return 0;
}

/* run's -A, --per-node, --per-thread, -I, --interval-plot and --counters
 * together: 0 when they make sense, else a usage error's exit status. */
static int check_breakdown_opts(RunOpts *o)
{
  if (o->per_cpu + o->per_node + o->per_thread > 1)
    return usage_error("run: %s", "-A, --per-node and --per-thread exclude each other: give one");
  if (o->interval_text) {
    char *end;
    double ms = g_ascii_strtod(g_strstrip(o->interval_text), &end);
    if (end == o->interval_text || *end || !(ms > 0) || !isfinite(ms))
      return usage_error("run: -I '%s': give the interval in milliseconds of simulated time, more than 0 (e.g. -I 10 "
                         "or -I 0.5)", o->interval_text);
    if (o->per_thread)
      return usage_error("run: %s", "-I prints intervals of the whole machine, per CPU (-A) or per node (--per-node), "
                                    "not per thread: drop --per-thread or -I");
  }
  if (o->interval_plot && !o->interval_text)
    return usage_error("run: %s", "--interval-plot draws the intervals of -I MS: give -I too");
  if (o->interval_plot && !plot_path_ok(o->interval_plot))
    return usage_error("run: --interval-plot '%s': the plot is drawn as SVG or PNG: name it FILE.svg or FILE.png",
                       o->interval_plot);
  gboolean any = o->interval_text || o->per_cpu || o->per_node || o->per_thread;
  if (any && o->repeat > 1)
    return usage_error("run: %s", "-A, --per-node, --per-thread and -I report one run: drop -r");
  if (o->counters && !any)
    return usage_error("run: %s", "--counters chooses the counters of -A, --per-node, --per-thread or -I: give one");
  g_auto(GStrv) names = o->counters ? g_strsplit(o->counters, ",", -1) : NULL;
  for (unsigned i = 0; names && names[i]; i++)
    if (!counter_lookup(g_strstrip(names[i])))
      return usage_error("run: --counters: '%s' is no counter (see `mmusim list counters`)", names[i]);
  return 0;
}

/* run -I: each interval printed as it closes, as perf stat -I prints
 * them, so that a long run can be watched (THP promotion as it happens);
 * the header before the first, the end after the run (print_breakdowns).
 * The engine keeps none of them unless they are to be plotted. */
typedef struct {
  const RunOpts *o;
  const RunOutcome *res;    /* machine, workload, settings: set before the engine runs */
  BreakdownMode mode;
  BreakdownFormat f;
  const CounterId *ids;
  unsigned n_ids;
  RunProgress *progress;    /* its line on the terminal is cleared first */
  gboolean head;            /* the header is out */
} LiveIntervals;

static BreakdownMode breakdown_mode(const RunOpts *o)
{
  return o->per_cpu ? BREAKDOWN_CPU : o->per_node ? BREAKDOWN_NODE : o->per_thread ? BREAKDOWN_THREAD : BREAKDOWN_NONE;
}

static BreakdownFormat breakdown_format(const RunOpts *o)
{
  return o->json ? BREAKDOWN_JSON : o->csv ? BREAKDOWN_CSV : BREAKDOWN_TEXT;
}

/* The header (once) and what print wrote, on standard output now. */
static void live_put(LiveIntervals *l, void (*print)(const Breakdown *, BreakdownFormat, const void *, unsigned, GString *),
                     const void *arg, unsigned n)
{
  RunReport r;
  runner_report(l->res, 0, &r);
  Breakdown bd = { .r = &r, .b = &l->res->breakdown, .mode = l->mode, .ids = l->ids, .n_ids = l->n_ids,
                   .interval_ms = g_ascii_strtod(l->o->interval_text, NULL) };
  g_autoptr(GString) s = g_string_new(NULL);
  if (!l->head)
    breakdown_intervals_head(&bd, l->f, s);
  l->head = TRUE;
  print(&bd, l->f, arg, n, s);
  if (l->progress && l->progress->drawn) {
    fputs("\r\033[K", stderr);
    l->progress->drawn = FALSE;
  }
  out_file_put_stdout(s->str, s->len);
}

static void live_rows(const Breakdown *bd, BreakdownFormat f, const void *iv, unsigned n_cpus, GString *s)
{
  breakdown_interval_rows(bd, f, iv, n_cpus, s);
}

static void live_region_line(const Breakdown *bd, BreakdownFormat f, const void *start, unsigned n, GString *s)
{
  breakdown_intervals_region(bd, f, *(const uint64_t *)start, s);
}

static void live_interval(const EngineInterval *iv, unsigned n_cpus, void *data)
{
  live_put(data, live_rows, iv, n_cpus);
}

static void live_region(uint64_t start, void *data)
{
  live_put(data, live_region_line, &start, 0);
}

/* The breakdowns and intervals of a run, in the format asked for; FALSE
 * with error set for a --counters name that is no counter or a plot that
 * could not be written. */
static gboolean print_breakdowns(const RunOpts *o, const RunReport *r, const RunOutcome *res, const LiveIntervals *live,
                                 FILE *out, GError **error)
{
  BreakdownMode mode = breakdown_mode(o);
  BreakdownFormat f = breakdown_format(o);
  g_autofree CounterId *ids = NULL;
  unsigned n = breakdown_counters(r, o->counters, f == BREAKDOWN_TEXT, &ids, error);
  if (!n)
    return FALSE;
  Breakdown bd = { .r = r, .b = &res->breakdown, .elapsed_cycles = res->elapsed_cycles, .mode = mode,
                   .ids = ids, .n_ids = n, .interval_ms = g_ascii_strtod(o->interval_text ? o->interval_text : "0", NULL) };
  if (o->interval_plot) {
    Breakdown pb = bd;
    g_autofree CounterId *pids = NULL;
    if (o->counters) {
      pb.n_ids = breakdown_counters(r, o->counters, FALSE, &pids, error);
      pb.ids = pids;
    } else {
      pb.ids = breakdown_plot_default;
      pb.n_ids = G_N_ELEMENTS(breakdown_plot_default);
    }
    if (!breakdown_interval_plot(&pb, o->interval_plot, error)) {
      g_prefix_error(error, "run: --interval-plot: ");
      return FALSE;
    }
  }
  if (o->interval_text && !live->ids) {
    breakdown_intervals_print(&bd, f, out);
  } else if (o->interval_text) { /* the intervals are out: the header if none was, and the end */
    g_autoptr(GString) s = g_string_new(NULL);
    if (!live->head)
      breakdown_intervals_head(&bd, f, s);
    breakdown_intervals_tail(&bd, f, s);
    fputs(s->str, out);
  } else if (f == BREAKDOWN_JSON) {
    g_autoptr(JsonNode) root = report_json_node(r);
    breakdown_json_add(&bd, json_node_get_object(root));
    report_json_print(root, out);
  } else
    breakdown_print(&bd, f, out);
  return TRUE;
}

static int cmd_run(int argc, char **argv)
{
  RunOpts o = { .repeat = 1, .top = ANNOTATE_DEFAULT_TOP };
  AnnMetric ann_sort = ANN_WALK_CYCLES;
  AnnotateBy ann_by = ANNOTATE_BY_IP;
  Annotation *ann = NULL;
  g_autofree char *formats = trace_format_choices();
  g_autofree char *format_help = g_strconcat("trace format: ", formats, NULL);
  GOptionEntry entries[] = {
    { "machine", 'm', 0, G_OPTION_ARG_STRING, &o.machine, "machine preset or .ini file (default " DEFAULT_MACHINE ")", "MACHINE" },
    { "workload", 'w', 0, G_OPTION_ARG_STRING, &o.workload, "generator spec, e.g. ptrchase:size=1G,accesses=1M", "WORKLOAD" },
    { "trace", 't', 0, G_OPTION_ARG_FILENAME, &o.trace, "trace file ('-' for standard input)", "TRACE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &o.format, format_help, "FORMAT" },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &o.set, "override a setting (repeatable)", "KEY=VALUE" },
    { "repeat", 'r', 0, G_OPTION_ARG_INT, &o.repeat, "run N times with different seeds; report mean and stddev", "N" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &o.seed_text, "seed of the generator (and of the first repeat)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_STRING, &o.warmup_text, "leave the first N accesses of the region uncounted (50000 or 50K)", "N" },
    { "whole", 0, 0, G_OPTION_ARG_NONE, &o.whole, "count the whole input (setup and its faults too), not just the region of interest", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "print one JSON object", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o.csv, "print CSV (header and one row)", NULL },
    { "events", 0, 0, G_OPTION_ARG_FILENAME, &o.events, "write faults, sampled walks and kernel events to FILE", "FILE" },
    { "map", 0, 0, G_OPTION_ARG_FILENAME, &o.map, "draw the address spaces at the end of the run to FILE.svg", "FILE.svg" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "no progress line on a terminal", NULL },
    { "per-cpu", 'A', 0, G_OPTION_ARG_NONE, &o.per_cpu, "the counters of each CPU (perf stat -A)", NULL },
    { "per-node", 0, 0, G_OPTION_ARG_NONE, &o.per_node, "the counters of each NUMA node: its CPUs summed", NULL },
    { "per-thread", 0, 0, G_OPTION_ARG_NONE, &o.per_thread,
      "the counters of each thread (pid/tid): what its CPU counted while it ran", NULL },
    { "interval-print", 'I', 0, G_OPTION_ARG_STRING, &o.interval_text,
      "print the counters of every MS milliseconds of simulated time (perf stat -I)", "MS" },
    { "interval-plot", 0, 0, G_OPTION_ARG_FILENAME, &o.interval_plot,
      "with -I: plot counters over simulated time to FILE.svg or FILE.png (--counters chooses them; default "
      "dTLB-load-misses, walk_cycles, thp_collapse_alloc, numa_pages_migrated)", "FILE" },
    { "counters", 0, 0, G_OPTION_ARG_STRING, &o.counters,
      "with -A, --per-node, --per-thread or -I: print only these counters (names as `mmusim list counters`)", "A,B,..." },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
      "host threads (default: the host's CPUs); with 2 or more a trace read from a regular file, of any format, "
      "is decoded ahead of the model in a thread of its own (standard input and generators are not)", "N" },
    { "annotate", 0, 0, G_OPTION_ARG_FILENAME, &o.annotate,
      "attribute TLB misses, walk cycles and faults to instructions and mappings; the report to FILE "
      "(FILE.json: JSON; -: standard output, after the report, JSON with --json)", "FILE" },
    { "top", 0, 0, G_OPTION_ARG_INT, &o.top, "--annotate: rows of each table (default 20; 0: all)", "N" },
    { "sort", 0, 0, G_OPTION_ARG_STRING, &o.sort, "--annotate: order of the tables (default walk_cycles)", "METRIC" },
    { "by", 0, 0, G_OPTION_ARG_STRING, &o.by,
      "--annotate: instruction rows one an address (ip, the default), a function (symbol) or an object (dso)",
      "ip|symbol|dso" },
    { "symfs", 0, 0, G_OPTION_ARG_FILENAME, &o.symfs,
      "--annotate: look the recorded program's binaries up under DIR first (as perf's --symfs)", "DIR" },
    { "no-demangle", 0, 0, G_OPTION_ARG_NONE, &o.no_demangle,
      "--annotate: name C++ functions as the binaries spell them (_ZN...), as perf's --no-demangle", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- simulate a workload or trace on a machine");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int rc = 0;
  EventLog *ev = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    rc = fail(err);
    goto out;
  }
  if (argc > 1) {
    rc = usage_error("run: unexpected argument '%s'", argv[1]);
    goto out;
  }
  if (o.repeat < 1 || o.jobs < 0) {
    rc = usage_error("run: %s must not be negative (and -r at least 1)", "-r/-j");
    goto out;
  }
  if ((rc = parse_seed("run", o.seed_text, &o.seed_given, &o.seed)))
    goto out;
  if (o.warmup_text && !settings_parse_count(g_strstrip(o.warmup_text), &o.warmup)) {
    rc = usage_error("run: --warmup '%s': give a whole number of accesses (suffixes K, M, G for thousands, "
                     "millions, billions)", o.warmup_text);
    goto out;
  }
  if (o.json && o.csv) {
    rc = usage_error("run: %s", "--json and --csv exclude each other");
    goto out;
  }
  if ((rc = check_breakdown_opts(&o)))
    goto out;
  if (o.repeat > 1 && o.trace && strcmp(o.trace, "-") == 0) {
    rc = usage_error("run: %s", "-r needs to read the trace again; standard input can be read only once");
    goto out;
  }
  if (o.repeat > 1 && o.trace && strcmp(o.trace, "-") != 0 && g_file_test(o.trace, G_FILE_TEST_EXISTS) &&
      !trace_path_regular(o.trace)) { /* opened again, a FIFO would block and a pipe be consumed */
    g_autofree char *msg = g_strdup_printf("-r needs to read the trace again; '%s' is not a regular file and can be read only once", o.trace);
    rc = usage_error("run: %s", msg);
    goto out;
  }
  if ((rc = annotate_opts_check(&o, &ann_sort, &ann_by)))
    goto out;
  if (o.events && !(ev = events_open(o.events, &err))) {
    rc = fail(err);
    goto out;
  }
  /* Fail before a long run, not after it; nothing is left behind. */
  if ((o.annotate && strcmp(o.annotate, "-") != 0 && (rc = check_writable(o.annotate, "--annotate"))) ||
      (o.map && (rc = check_writable(o.map, "--map"))) ||
      (o.interval_plot && (rc = check_writable(o.interval_plot, "--interval-plot"))))
    goto out;
  RunSpec spec = spec_of(&o);
  spec.events = ev;
  spec.read_ahead = (o.jobs > 0 ? (guint)o.jobs : g_get_num_processors()) > 1; /* a thread to decode on */
  spec.per_cpu = o.per_cpu || o.per_node;
  spec.per_thread = o.per_thread;
  spec.interval_ms = o.interval_text ? g_ascii_strtod(o.interval_text, NULL) : 0;
  if (o.map) {
    spec.inspect = draw_map;
    spec.inspect_data = o.map;
  }
  if (o.annotate)
    spec.annotate = ann = annotation_new();
  RunProgress progress = { .t0 = g_get_monotonic_time() };
  if (!o.quiet && isatty(STDERR_FILENO)) {
    spec.progress = run_progress;
    spec.progress_data = &progress;
    progress.last = progress.t0;
  }
  RunOutcome res;
  g_autofree CounterId *live_ids = NULL;
  LiveIntervals live = { .o = &o, .res = &res, .mode = breakdown_mode(&o), .f = breakdown_format(&o),
                         .progress = &progress };
  if (o.interval_text) {
    /* The counters printed, known before the run: a --counters name that
     * is no counter of the machine's architecture fails now. */
    g_autoptr(Settings) s = runner_settings(&spec, NULL);
    if (s) {
      RunOutcome pre = { .settings = s, .machine = spec.machine ? (char *)spec.machine : (char *)RUNNER_DEFAULT_MACHINE };
      RunReport r;
      runner_report(&pre, 0, &r);
      if (!(live.n_ids = breakdown_counters(&r, o.counters, live.f == BREAKDOWN_TEXT, &live_ids, &err))) {
        rc = fail(err);
        goto out;
      }
      live.ids = live_ids;
      spec.on_interval = live_interval;
      spec.on_region = live_region;
      spec.interval_data = &live;
      spec.keep_intervals = o.interval_plot != NULL;
    }
  }
  run_stop_signal = 0;
  spec.stop = &run_stop_signal;
  run_catch_signals(TRUE);
  gboolean ran = runner_run(&spec, &res, &err);
  run_catch_signals(FALSE);
  if (progress.drawn)
    fputs("\r\033[K", stderr);
  if (!ran) {
    run_outcome_clear(&res);
    rc = fail(err);
    goto out;
  }
  /* The events of a complete run (one that ran out of memory too) are kept;
   * one that could not be written is said after the report. */
  GError *ev_err = NULL;
  gboolean ev_ok = events_finish(g_steal_pointer(&ev), &ev_err);
  if (res.skipped_lines)
    fprintf(stderr, "mmusim: %s: skipped %" G_GUINT64_FORMAT " lines that are not lackey records (valgrind's own messages)\n",
            res.workload, res.skipped_lines);
  run_outcome_warn_warmup(&res, res.workload, "--warmup", o.warmup);
  if (res.no_accesses) {
    g_autofree char *what = run_outcome_no_accesses(&spec, &res);
    fprintf(stderr, "mmusim: warning: %s: every counter of the report is zero\n", what);
  }
  if (res.all_fatal) {
    g_autofree char *what = run_outcome_all_fatal(&res);
    fprintf(stderr, "mmusim: warning: %s\n", what);
  }
  if (res.oom) {
    gboolean killer = strcmp(settings_str(res.settings, SET_MEM_OOM_POLICY), "kill") == 0;
    fprintf(stderr, "mmusim: simulated machine ran out of memory after %" G_GUINT64_FORMAT " records%s; give it more "
                    "(-s machine.mem_per_node=...)%s\n", res.oom_records,
            killer ? " and the OOM killer found no process whose death would free memory" : "",
            killer ? "" : ", or let the OOM killer free some (-s mem.oom_policy=kill)");
    run_outcome_clear(&res);
    rc = ev_ok ? 1 : fail(ev_err);
    goto out;
  }
  RunReport r;
  runner_report(&res, peak_rss_bytes(), &r);
  char partial[160];
  if (res.interrupted) {
    int sig = run_stop_signal;
    g_snprintf(partial, sizeof partial, "stopped by %s after %" G_GUINT64_FORMAT " records; the counters are "
               "those of the part simulated", sig == SIGTERM ? "SIGTERM" : "SIGINT", res.records_read);
    r.partial = partial;
    fprintf(stderr, "mmusim: run %s\n", partial);
    rc = 128 + (sig ? sig : SIGINT);
  }
  /* Printed whole, so that a write error keeps its errno for the message. */
  OutText text;
  FILE *mem = out_text_begin(&text);
  GError *bd_err = NULL;
  gboolean bd_ok = TRUE;
  if (o.interval_text || o.per_cpu || o.per_node || o.per_thread)
    bd_ok = print_breakdowns(&o, &r, &res, &live, mem, &bd_err);
  else if (o.json)
    report_json(&r, mem);
  else if (o.csv)
    report_csv(&r, mem);
  else
    report_text(&r, mem);
  out_text_to_stdout(&text);
  if (!o.json && !o.csv)
    report_host_text(&r, stderr);
  if (ann && res.runs) {
    AnnotateReport ar = { .machine = res.machine, .workload = res.workload, .ann = ann, .counted = &res.per_run[0],
                          .top = (unsigned)o.top, .sort = ann_sort, .by = ann_by, .symfs = o.symfs,
                          .no_demangle = o.no_demangle };
    GError *ann_err = NULL;
    if (!annotate_write(&ar, o.annotate, o.json, &ann_err))
      rc = rc ? (fail(ann_err), rc) : fail(ann_err);
  }
  run_outcome_clear(&res);
  if (!ev_ok)
    rc = fail(ev_err);
  if (!bd_ok)
    rc = fail(bd_err);
out:
  annotation_free(ann);
  events_close(ev);
  run_opts_clear(&o);
  return rc;
}

static int cmd_explain(int argc, char **argv)
{
  RunOpts o = { 0 };
  g_autofree char *formats = trace_format_choices();
  g_autofree char *format_help = g_strconcat("trace format: ", formats, NULL);
  GOptionEntry entries[] = {
    { "machine", 'm', 0, G_OPTION_ARG_STRING, &o.machine, "machine preset or .ini file", "MACHINE" },
    { "workload", 'w', 0, G_OPTION_ARG_STRING, &o.workload, "run this generator first", "WORKLOAD" },
    { "trace", 't', 0, G_OPTION_ARG_FILENAME, &o.trace, "run this trace first", "TRACE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &o.format, format_help, "FORMAT" },
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
  RunSpec spec = spec_of(&o);
  s = runner_settings(&spec, &err);
  if (!s || !(m = machine_new(o.machine ? o.machine : DEFAULT_MACHINE, s, NULL, &err))) {
    rc = fail(err);
    goto out;
  }
  if (o.workload || o.trace) {
    g_autoptr(TraceSource) src = runner_open_input(&spec, NULL, &err);
    EngineResult res = { 0 };
    gboolean ran = src && engine_run(m, src, NULL, &res, &err);
    engine_result_clear(&res);
    if (!ran) {
      rc = fail(err);
      goto out;
    }
  } else {
    m->k->map_on_demand = TRUE;
  }
  Thread *t = machine_thread(m, 1, 1, 0);
  if (t && t->mm->oom_killed) {
    fprintf(stderr, "mmusim: explain: the OOM killer killed process 1 during the run (mem.oom_policy=kill): "
                    "it has no address space left to explain\n");
    rc = 1;
    goto out;
  }
  GString *out = g_string_new(NULL);
  for (int i = 1; i < argc && t; i++) {
    uint64_t va;
    AccessKind kind;
    if (!explain_parse_address(argv[i], &va, &kind, &err)) {
      rc = fail(err);
      break;
    }
    if (t->mm->oom_killed) { /* an address before this one faulted and the killer chose process 1 */
      g_string_append_printf(out, "%s: not explained: the OOM killer killed process 1 at an earlier address "
                                  "(mem.oom_policy=kill), so it has no address space left\n", argv[i]);
      rc = 1;
      break;
    }
    explain_address(m, t, va, kind, out);
  }
  out_file_put_stdout(out->str, out->len);
  g_string_free(out, TRUE);
out:
  machine_free(m);
  run_opts_clear(&o);
  return rc;
}

/* Every setting with its default, or with its value on machine `s` (list
 * settings -m NAME) and where that value came from. */
static void list_settings(GString *out, const Settings *s)
{
  for (int i = 0; i < N_SETTINGS; i++) {
    const SettingDef *d = settings_def((SettingId)i);
    g_string_append_printf(out, "%-32s %-6s %-10s %-12s %s", d->name, settings_type_name(d->type),
                           s ? settings_str(s, (SettingId)i) : d->def, d->unit, d->help);
    if (s && settings_origin(s, (SettingId)i))
      g_string_append_printf(out, " (set by %s; default %s)", settings_origin(s, (SettingId)i), d->def);
    if (d->choices)
      g_string_append_printf(out, " [%s]", d->choices);
    g_string_append_printf(out, " (source: %s)\n", d->source);
  }
  g_string_append(out, "\nkernel.version: the releases offered\n");
  for (unsigned i = 0; kernel_version_nth(i); i++)
    g_string_append_printf(out, "  %-6s %s\n", kernel_version_nth(i)->name, kernel_version_nth(i)->why);
  g_string_append(out, "\nkernel.version: the rules that change with it\n");
  for (int r = 0; r < N_KERNEL_RULES; r++) {
    const KernelRuleDef *d = kernel_rule_def((KernelRule)r);
    g_string_append_printf(out, "  %s (%s, since %s)\n    before %s: %s\n    since %s: %s\n", d->name,
                           d->function, d->since_name, d->since_name, d->before_text, d->since_name,
                           d->since_text);
  }
}

static void list_counters(GString *out)
{
  for (int i = 0; i < N_COUNTERS; i++) {
    const CounterDef *d = counter_def((CounterId)i);
    const CounterGate *g = report_counter_gate((CounterId)i);
    g_string_append_printf(out, "%-26s %s", d->name, d->help);
    if (d->flags & CF_PPC64)
      g_string_append(out, " (ppc64 hash only)");
    else if (g && g->when)
      g_string_append_printf(out, " (reported with %s)", g->when);
    else if (g)
      g_string_append_printf(out, " (reported with %s=%s)", settings_def(g->setting)->name, g->value);
    g_string_append_c(out, '\n');
  }
}

static int cmd_list(int argc, char **argv)
{
  g_autofree char *machine = NULL;
  GOptionEntry entries[] = {
    { "machine", 'm', 0, G_OPTION_ARG_STRING, &machine, "list settings: the values of this preset or .ini file", "MACHINE" },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("machines [NAME] | workloads | settings | counters - list what the program knows");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "machines   the built-in machine presets, a line each; with NAME, that preset's machine file\n"
    "workloads  the generators with their parameters and defaults\n"
    "settings   every setting: name, type, default, unit, help, choices, source of the default;\n"
    "           with -m MACHINE, that machine's value of each and what set it\n"
    "counters   every counter, a line each, with the setting that turns on one reported only with it");
  GError *err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err))
    return fail(err);
  const char *what = argc > 1 ? argv[1] : "";
  gboolean named_machine = strcmp(what, "machines") == 0 && argc == 3;
  if (argc > 2 && !named_machine)
    return usage_error("list: one thing at a time: machines [NAME], workloads, settings or counters (not '%s' too)", argv[2]);
  if (machine && strcmp(what, "settings") != 0)
    return usage_error("list: -m MACHINE goes with settings (list settings -m %s)", machine);
  g_autoptr(Settings) s = NULL;
  if (machine) {
    s = settings_new();
    if (!preset_load(s, machine, &err))
      return fail(err);
  }
  if (named_machine) {
    g_autofree char *text = preset_text(argv[2], &err);
    if (!text)
      return fail(err);
    fputs(text, stdout);
    return 0;
  }
  GString *out = g_string_new(NULL);
  int rc = 0;
  if (strcmp(what, "machines") == 0)
    preset_list(out);
  else if (strcmp(what, "workloads") == 0)
    workload_list(out);
  else if (strcmp(what, "settings") == 0)
    list_settings(out, s);
  else if (strcmp(what, "counters") == 0)
    list_counters(out);
  else
    rc = usage_error("list: say what to list: machines, workloads, settings or counters (not '%s')", what);
  out_file_put_stdout(out->str, out->len);
  g_string_free(out, TRUE);
  return rc;
}

/* ---- trace: info, convert, head ------------------------------------------ */

typedef struct {
  char *format;
  char *workload;
  char *seed_text;   /* convert -w --seed, as given; NULL: the generator's own */
  gint64 count;
  gint64 from;
  gboolean verify;
} TraceOpts;

static TraceSource *trace_open_opts(const TraceOpts *o, const char *path, TraceFormat *detected, GError **error)
{
  TraceFormat f = TRACE_FORMAT_AUTO;
  if (o->format && !trace_format_parse(o->format, &f, error))
    return NULL;
  return trace_format_open(path, f, detected, error);
}

/* Read the whole source into `sum`; FALSE with *error on bad input. */
static gboolean scan_summary(TraceSource *src, TraceSummary *sum, GError **error)
{
  g_autofree TraceBatch *batch = g_new(TraceBatch, 1);
  for (;;) {
    if (!trace_source_next(src, batch, error))
      return FALSE;
    if (batch->n == 0)
      break;
    for (unsigned i = 0; i < batch->n; i++)
      trace_summary_add(sum, &batch->rec[i]);
  }
  trace_summary_finish(sum);
  return TRUE;
}

/* `trace info --verify`: read every record (every block and checksum of an
 * .mtr), count them, and check the count against the index. */
static int trace_verify(const TraceOpts *o, const char *path)
{
  GError *err = NULL;
  TraceFormat f;
  g_autoptr(TraceSource) src = trace_open_opts(o, path, &f, &err);
  if (!src)
    return fail(err);
  g_autofree TraceBatch *batch = g_new(TraceBatch, 1);
  uint64_t records = 0, accesses = 0;
  for (;;) {
    if (!trace_source_next(src, batch, &err))
      return fail(err);
    if (batch->n == 0)
      break;
    records += batch->n;
    for (unsigned i = 0; i < batch->n; i++)
      accesses += batch->rec[i].type == REC_ACCESS;
  }
  /* The index is checked where it can be read: a pipe was read once, above. */
  gboolean indexed_ok = f == TRACE_FORMAT_MTR && trace_path_regular(path);
  if (indexed_ok) {
    MtrInfo info;
    gboolean ok = mtr_read_info(path, &info, &err);
    uint64_t indexed = info.summary.records;
    mtr_info_clear(&info);
    if (!ok)
      return fail(err);
    if (indexed != records) {
      fprintf(stderr, "mmusim: %s: the index counts %" G_GUINT64_FORMAT " records, the blocks hold %" G_GUINT64_FORMAT "\n",
              path, indexed, records);
      return 2;
    }
  }
  printf("trace:          %s\nformat:         %s\nverified:       %" G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT
         " accesses\n", path, trace_format_name(f), records, accesses);
  if (f == TRACE_FORMAT_MTR && !indexed_ok)
    printf("index:          not checked (not a regular file: read in one pass)\n");
  return 0;
}

static int trace_info(const TraceOpts *o, const char *path)
{
  if (o->verify)
    return trace_verify(o, path);
  GError *err = NULL;
  TraceFormat f;
  g_autoptr(TraceSource) src = trace_open_opts(o, path, &f, &err);
  if (!src)
    return fail(err);
  GString *out = g_string_new(NULL);
  TraceSummary sum;
  trace_summary_init(&sum);
  g_string_append_printf(out, "trace:          %s\n", path);
  int rc = 0;
  if (f == TRACE_FORMAT_MTR && trace_path_regular(path)) {
    /* Header and index only: instant whatever the length.  A pipe or FIFO
     * is not opened again (it would block or be consumed): it is read. */
    MtrInfo info;
    if (!mtr_read_info(path, &info, &err)) {
      rc = fail(err);
      mtr_info_clear(&info);
      goto out;
    }
    g_string_append_printf(out, "format:         mtr v%u, %" G_GUINT64_FORMAT " blocks, %" G_GUINT64_FORMAT " bytes (%.2f bytes a record)\n",
                           info.version, info.blocks, info.file_bytes,
                           info.summary.records ? (double)info.file_bytes / (double)info.summary.records : 0.0);
    for (guint i = 0; i < info.meta->len; i++) {
      const char *line = g_ptr_array_index(info.meta, i);
      const char *sp = strchr(line, ' ');
      g_autofree char *key = sp ? g_strndup(line, (gsize)(sp - line)) : g_strdup(line);
      g_string_append_printf(out, "  %-15s %s\n", key, sp ? sp + 1 : "");
    }
    trace_summary_print(&info.summary, out);
    mtr_info_clear(&info);
  } else {
    g_string_append_printf(out, "format:         %s\n", trace_format_name(f));
    if (!scan_summary(src, &sum, &err)) {
      rc = fail(err);
      goto out;
    }
    if (f == TRACE_FORMAT_LACKEY)
      g_string_append_printf(out, "  skipped         %" G_GUINT64_FORMAT " lines (valgrind's own messages)\n",
                             lackey_source_skipped(src));
    trace_summary_print(&sum, out);
  }
  out_file_put_stdout(out->str, out->len);
out:
  trace_summary_clear(&sum);
  g_string_free(out, TRUE);
  return rc;
}

static int trace_head(const TraceOpts *o, const char *path)
{
  GError *err = NULL;
  TraceFormat f = TRACE_FORMAT_AUTO;
  if (o->format && !trace_format_parse(o->format, &f, &err))
    return fail(err);
  g_autoptr(TraceSource) src = NULL;
  uint64_t skip = (uint64_t)o->from;
  /* Only a regular file is opened twice (probe, then seek); any other input
   * is opened once and the records before --from are read and dropped. */
  if (skip && f != TRACE_FORMAT_TEXT && f != TRACE_FORMAT_LACKEY && f != TRACE_FORMAT_CHAMPSIM &&
      trace_path_regular(path)) {
    TraceFormat d;
    TraceSource *probe = trace_format_open(path, f, &d, &err);
    if (!probe)
      return fail(err);
    trace_source_free(probe);
    if (d == TRACE_FORMAT_MTR) { /* seek through the index */
      src = mtr_source_open(path, skip, &err);
      if (!src) /* a damaged index: said, not read past (err is set) */
        return fail(err);
      skip = 0;
    }
  }
  if (!src)
    src = trace_format_open(path, f, NULL, &err);
  if (!src)
    return fail(err);
  g_autofree TraceBatch *batch = g_new(TraceBatch, 1);
  GString *out = g_string_new(NULL);
  TextWriter w;
  text_writer_init(&w);
  uint64_t left = (uint64_t)o->count;
  int rc = 0;
  while (left) {
    if (!trace_source_next(src, batch, &err)) {
      out_file_put_stdout(out->str, out->len);
      g_string_truncate(out, 0);
      rc = fail(err);
      break;
    }
    if (batch->n == 0)
      break;
    for (unsigned i = 0; i < batch->n && left; i++) {
      if (skip) {
        skip--;
        continue;
      }
      text_writer_write(&w, &batch->rec[i], out);
      left--;
    }
  }
  out_file_put_stdout(out->str, out->len);
  g_string_free(out, TRUE);
  return rc;
}

static gboolean has_suffix_mtr(const char *path)
{
  return g_str_has_suffix(path, ".mtr");
}

/* The instruction trace format OUT's name asks for; FALSE for text or .mtr. */
static gboolean insn_format_of(const char *path, InsnWriterFormat *format)
{
  if (g_str_has_suffix(path, ".lackey")) {
    *format = INSN_WRITER_LACKEY;
    return TRUE;
  }
  if (g_str_has_suffix(path, ".champsim") || g_str_has_suffix(path, ".champsimtrace")) {
    *format = INSN_WRITER_CHAMPSIM;
    return TRUE;
  }
  return FALSE;
}

/* Copy every record of `src` to OUT: .mtr, lackey (.lackey) or ChampSim
 * (.champsim, .champsimtrace) by extension, text otherwise. */
static int convert_to(TraceSource *src, const char *in_name, const char *in_format, const char *out_path)
{
  GError *err = NULL;
  size_t inner_len;
  gboolean bz2;
  InputCompression kind = compress_out_kind(out_path, &inner_len, &bz2);
  g_autofree char *inner = g_strndup(out_path, inner_len); /* the name that says the format */
  if (bz2) {
    fprintf(stderr, "mmusim: trace convert: '%s' names a bzip2-compressed file, which convert does not write (nor "
                    "read): name it .xz, .gz or .zst, or pipe text: mmusim trace convert IN - | bzip2 > OUT.bz2\n",
            out_path);
    return 2;
  }
  if (kind != INPUT_PLAIN && has_suffix_mtr(inner)) {
    fprintf(stderr, "mmusim: trace convert: '%s': an .mtr is compressed inside (zstd blocks, and its index needs a "
                    "file it can seek); name it %s\n", out_path, inner);
    return 2;
  }
  g_autofree TraceBatch *batch = g_new(TraceBatch, 1);
  int rc = 0;
  if (has_suffix_mtr(out_path)) {
    MtrWriter *w = mtr_writer_open(out_path, &err);
    if (!w)
      return fail(err);
    mtr_writer_set_meta(w, "recorder", "mmusim trace convert " PACKAGE_VERSION);
    mtr_writer_set_meta(w, "source", in_format);
    mtr_writer_set_meta(w, "converted_from", in_name);
    mtr_writer_set_meta(w, "unmapped", src->unmapped == UNMAPPED_ONDEMAND ? "ondemand" : "segv");
    for (;;) {
      if (!trace_source_next(src, batch, &err))
        break;
      if (batch->n == 0)
        break;
      for (unsigned i = 0; i < batch->n && !err; i++)
        mtr_writer_write(w, &batch->rec[i], &err);
      if (err)
        break;
    }
    if (err) {
      mtr_writer_abort(w);
      return fail(err);
    }
    if (!mtr_writer_close(w, &err))
      return fail(err);
    return 0;
  }
  CompressOut *of = compress_out_open(out_path, kind, &err);
  if (!of)
    return fail(err);
  InsnWriterFormat insn_format;
  gboolean insn = insn_format_of(inner, &insn_format);
  GString *out = g_string_new(NULL);
  InsnWriter iw;
  TextWriter tw;
  if (insn) {
    insn_writer_init(&iw, insn_format);
  } else {
    g_string_append(out, TEXT_TRACE_HEADER "\n");
    if (src->unmapped == UNMAPPED_ONDEMAND)
      g_string_append_printf(out, "# converted from %s (%s): its mappings are the 'ondemand' ones below\n", in_name, in_format);
    text_writer_init(&tw);
  }
  for (;;) {
    if (!trace_source_next(src, batch, &err))
      break;
    if (batch->n == 0)
      break;
    for (unsigned i = 0; i < batch->n; i++) {
      if (insn)
        insn_writer_write(&iw, &batch->rec[i], out);
      else
        text_writer_write(&tw, &batch->rec[i], out);
    }
    if (out->len > (1u << 20)) {
      if (!compress_out_write(of, out->str, out->len, &err))
        break;
      g_string_truncate(out, 0);
    }
  }
  if (!err && insn)
    insn_writer_finish(&iw, out);
  if (err || !compress_out_write(of, out->str, out->len, &err)) {
    /* Bad input or a full disk half way: no half file is left. */
    g_string_free(out, TRUE);
    compress_out_abort(of);
    return fail(err);
  }
  g_string_free(out, TRUE);
  if (insn && insn_writer_dropped(&iw))
    fprintf(stderr, "mmusim: trace convert: note: dropped %" G_GUINT64_FORMAT " mapping, policy, thread or roi "
                    "record%s, which %s cannot hold\n", insn_writer_dropped(&iw), insn_writer_dropped(&iw) == 1 ? "" : "s",
            insn_format == INSN_WRITER_LACKEY ? "lackey" : "ChampSim");
  if (insn && insn_writer_dropped_zero(&iw))
    fprintf(stderr, "mmusim: trace convert: note: dropped %" G_GUINT64_FORMAT " access%s to address 0, which ChampSim "
                    "cannot hold (0 marks an unused operand); their instructions stay\n", insn_writer_dropped_zero(&iw),
            insn_writer_dropped_zero(&iw) == 1 ? "" : "es");
  if (!compress_out_commit(of, &err))
    rc = fail(err);
  return rc;
}

/* OUT is IN itself, or a hard or symbolic link to it (one device and
 * inode): writing it would destroy the input being read. */
static gboolean same_file(const char *in, const char *out)
{
  struct stat a, b;
  return strcmp(in, "-") != 0 && strcmp(out, "-") != 0 && stat(in, &a) == 0 && stat(out, &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int cmd_trace(int argc, char **argv)
{
  TraceOpts o = { .count = 10 };
  g_autofree char *formats = trace_format_choices();
  g_autofree char *format_help = g_strconcat("input format: ", formats, NULL);
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &o.format, format_help, "FORMAT" },
    { "workload", 'w', 0, G_OPTION_ARG_STRING, &o.workload, "convert: write this generator's stream", "WORKLOAD" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &o.seed_text, "convert -w: seed of the generator", "N" },
    { "lines", 'n', 0, G_OPTION_ARG_INT64, &o.count, "head: how many records (default 10)", "N" },
    { "from", 0, 0, G_OPTION_ARG_INT64, &o.from, "head: start at record N (0-based; .mtr seeks through its index)", "N" },
    { "verify", 0, 0, G_OPTION_ARG_NONE, &o.verify, "info: read and check every record (every .mtr checksum), count them, nothing more", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("info FILE | convert IN OUT | convert -w WORKLOAD OUT | head FILE");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "info     counts per record type, per thread, footprint and regions touched\n"
    "convert  any readable format to text ('-' is standard output), or by OUT's ending to .mtr, to lackey\n"
    "         (.lackey) or to ChampSim (.champsim, .champsimtrace); lackey and ChampSim keep the accesses and\n"
    "         instructions and drop mappings, threads and roi marks; OUT ending .gz, .xz or .zst is written\n"
    "         compressed (gzip -6, xz -6, zstd -3), the format named by the rest of its name\n"
    "head     the first records as text lines");
  GError *err = NULL;
  int rc;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    rc = fail(err);
    goto out;
  }
  gboolean seed_given;
  uint64_t seed;
  if ((rc = parse_seed("trace", o.seed_text, &seed_given, &seed)))
    goto out;
  const char *what = argc > 1 ? argv[1] : "";
  if (o.count < 0 || o.from < 0) {
    rc = usage_error("trace: %s must not be negative", "-n/--from");
  } else if (strcmp(what, "info") == 0 && argc == 3) {
    rc = trace_info(&o, argv[2]);
  } else if (strcmp(what, "head") == 0 && argc == 3) {
    rc = trace_head(&o, argv[2]);
  } else if (strcmp(what, "convert") == 0 && o.workload && argc == 3) {
    g_autoptr(TraceSource) src = workload_open(o.workload, seed_given ? &seed : NULL, &err);
    rc = src ? convert_to(src, src->description, "workload", argv[2]) : fail(err);
  } else if (strcmp(what, "convert") == 0 && !o.workload && argc == 4 && same_file(argv[2], argv[3])) {
    fprintf(stderr, "mmusim: trace convert: '%s' is the input '%s' itself (or a link to it): converting would "
                    "destroy it; write to another name and rename it afterwards\n", argv[3], argv[2]);
    rc = 2;
  } else if (strcmp(what, "convert") == 0 && !o.workload && argc == 4) {
    TraceFormat f;
    g_autoptr(TraceSource) src = trace_open_opts(&o, argv[2], &f, &err);
    rc = src ? convert_to(src, argv[2], trace_format_name(f), argv[3]) : fail(err);
  } else {
    rc = usage_error("trace: %s", "expected info FILE, head FILE, convert IN OUT or convert -w WORKLOAD OUT");
  }
out:
  g_free(o.format);
  g_free(o.workload);
  g_free(o.seed_text);
  return rc;
}

/* ---- record ------------------------------------------------------------------ */

static int cmd_record(int argc, char **argv)
{
  RecorderOptions ro = { 0 };
  char *output = NULL;
  gint64 start_after = 0;
  gboolean quiet = FALSE;
  char *lackey_copy = NULL;
  GOptionEntry entries[] = {
    { "lackey-copy", 0, 0, G_OPTION_ARG_FILENAME, &lackey_copy, "also keep lackey's text output in FILE", "FILE" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "the .mtr file to write", "OUT.mtr" },
    { "start-after", 0, 0, G_OPTION_ARG_INT64, &start_after, "drop the first N memory accesses (start-up), keep the rest", "N" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "no progress line and no summary", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("-- COMMAND [ARGS]... - record a program's memory accesses under valgrind lackey");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Runs COMMAND under `valgrind --tool=lackey --trace-mem=yes`, reads lackey's output through a\n"
    "pipe and writes it as .mtr as it goes.  The program's own output goes where it would.");
  GError *err = NULL;
  int rc;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    rc = fail(err);
    goto out;
  }
  int first = 1;
  if (first < argc && strcmp(argv[first], "--") == 0)
    first++;
  if (!output) {
    rc = usage_error("record: %s", "give the output file: -o OUT.mtr");
    goto out;
  }
  if (first >= argc) {
    rc = usage_error("record: %s", "give the command to record after --");
    goto out;
  }
  if (start_after < 0) {
    rc = usage_error("record: %s", "--start-after must not be negative");
    goto out;
  }
  ro.output = output;
  ro.argv = argv + first;
  ro.start_after = (uint64_t)start_after;
  ro.progress = !quiet;
  ro.lackey_copy = lackey_copy;
  rc = recorder_run(&ro, &err);
  if (err) {
    fprintf(stderr, "mmusim: %s\n", err->message);
    g_error_free(err);
  }
out:
  g_free(output);
  g_free(lackey_copy);
  return rc;
}

/* ---- host ------------------------------------------------------------------- */

/* `mmusim host SUBCOMMAND`: commands about the machine mmusim runs on.
 * Each subcommand is its own file's *_main(argc, argv), argv[0] its name. */
static int cmd_host(int argc, char **argv)
{
  const char *sub = argc > 1 ? argv[1] : "";
  g_autofree char *prgname = g_strdup_printf("mmusim host %s", sub);
  g_set_prgname(prgname);
  if (strcmp(sub, "detect") == 0)
    return host_detect_main(argc - 1, argv + 1);
  /* The host's native figures, and the model's beside them. */
  if (strcmp(sub, "bench") == 0)
    return host_bench_main(argc - 1, argv + 1);
  if (strcmp(sub, "validate") == 0)
    return host_validate_main(argc - 1, argv + 1);
  if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
    printf("usage: mmusim host detect [-o FILE.ini]   a machine file for this host\n"
           "       mmusim host bench [--spans LIST] [--repeats N] [--json] [-o FILE]\n"
           "                                          native pointer chase and random loads, 4K and THP\n"
           "       mmusim host validate [-m MACHINE] [--spans LIST] [--fit [-o FILE.ini]] [--json]\n"
           "                                          the bench beside the model of the host\n");
    return 0;
  }
  return usage_error("host: %s", "expected a subcommand: detect [-o FILE.ini], bench or validate");
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: mmusim COMMAND [OPTIONS]\n"
          "       mmusim --help | --version   this summary | the version\n\n"
          "  run      [-m MACHINE] (-w WORKLOAD | -t TRACE [-f FORMAT]) [-s KEY=VALUE]...\n"
          "           [-r REPEAT] [--seed N] [--warmup N] [--whole] [--json | --csv] [--events FILE]\n"
          "           [--map FILE.svg] [-j N] [-q]\n"
          "  explain  [-m MACHINE] [-s KEY=VALUE]... [-w WORKLOAD | -t TRACE [-f FORMAT]] ADDRESS...\n"
          "  sweep    [-o DIR] [-j N] [--emit-jobs | --only ID | --collect DIR] [--plot] EXPERIMENT.ini\n"
          "  record   -o OUT.mtr [--start-after N] [--lackey-copy FILE] [-q] -- COMMAND [ARGS]...\n"
          "  trace    info [--verify] FILE | convert IN OUT | convert -w WORKLOAD OUT |\n"
          "           head [-n N] [--from K] FILE\n"
          "  list     machines | workloads | settings | counters\n"
          "  host     detect [-o FILE.ini] | bench [--spans LIST] [--repeats N] [--json] [-o FILE] |\n"
          "           validate [-m MACHINE] [--spans LIST] [--fit [-o FILE.ini]] [--json]\n\n"
          "`mmusim COMMAND --help` for the options of a command; man mmusim for the rest.\n");
}

/* The host ran out of memory (a machine too large for it, or a ulimit -v):
 * g_malloc and its kin report it with g_error, which would abort (SIGTRAP),
 * as do the few allocations of our own that cannot go through them (their
 * messages say "out of host memory").  Every allocation ends in one of
 * them, so this handler turns each into a message and exit status 1, as a
 * simulated machine's out-of-memory is.  It runs with no memory to spare:
 * it allocates nothing.  Other fatal messages (a bug) keep GLib's own
 * handling. */
static void host_oom_handler(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  gboolean ours = message && strstr(message, "out of host memory");
  if (ours || (message && strstr(message, "failed to allocate"))) {
    const char *parts[] = { ours ? "mmusim: " : "mmusim: out of host memory (", message,
                            ours ? "" : ")",
                            ": the host or its limit (ulimit -v) cannot hold this run; give it more memory, or "
                            "simulate less memory or a shorter workload\n" };
    fflush(stdout);
    for (unsigned i = 0; i < G_N_ELEMENTS(parts); i++)
      if (write(STDERR_FILENO, parts[i], strlen(parts[i])) < 0)
        break; /* stderr is gone: the status says it */
    _exit(1);
  }
  g_log_default_handler(domain, level, message, data);
}

static int dispatch(int argc, char **argv)
{
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
    /* As GNU tools print it: the licence is part of the version. */
    printf("mmusim %s\n"
           "License GPL-2.0-or-later: GNU GPL version 2 or later <https://www.gnu.org/licenses/>.\n"
           "This is free software: you are free to change and redistribute it.\n"
           "There is NO WARRANTY, to the extent permitted by law.\n",
           PACKAGE_VERSION);
    return 0;
  }
  /* Each command's --help and messages name it as typed: "mmusim run". */
  g_autofree char *prgname = g_strdup_printf("mmusim %s", cmd);
  g_set_prgname(prgname);
  if (strcmp(cmd, "run") == 0)
    return cmd_run(argc - 1, argv + 1);
  if (strcmp(cmd, "explain") == 0)
    return cmd_explain(argc - 1, argv + 1);
  if (strcmp(cmd, "list") == 0)
    return cmd_list(argc - 1, argv + 1);
  if (strcmp(cmd, "sweep") == 0)
    return sweep_main(argc - 1, argv + 1, argv[0]);
  if (strcmp(cmd, "record") == 0)
    return cmd_record(argc - 1, argv + 1);
  if (strcmp(cmd, "trace") == 0)
    return cmd_trace(argc - 1, argv + 1);
  if (strcmp(cmd, "host") == 0)
    return cmd_host(argc - 1, argv + 1);
  fprintf(stderr, "mmusim: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}

/* glibc gives each thread that allocates an arena of its own, up to 8 a
 * CPU, and each arena reserves 64 MiB of address space (128 MiB while it
 * aligns it): a sweep's threads on 2 CPUs reserve 2 GiB that they do not
 * use, enough to fail under a ulimit -v that the run itself fits in, and a
 * thread that cannot allocate at all sends GLib's "failed to allocate"
 * message into a loop (it formats the message with the memory it lacks).
 * One arena a CPU keeps the threads that run at once apart.  The user's
 * MALLOC_ARENA_MAX, if set, stays in force. */
static void limit_malloc_arenas(void)
{
#ifdef M_ARENA_MAX
  if (!g_getenv("MALLOC_ARENA_MAX"))
    mallopt(M_ARENA_MAX, (int)MAX(2u, g_get_num_processors()));
#endif
}

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  limit_malloc_arenas();
  g_log_set_handler("GLib", G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL, host_oom_handler, NULL);
  g_log_set_handler(NULL, G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL, host_oom_handler, NULL);
  out_file_watch_stdout(); /* a command's --help: g_print, then exit() */
  /* Whatever went to standard output is checked here, once: a report or a
   * trace cut short by a full disk is an error, not a success. */
  return out_file_close_stdout(dispatch(argc, argv));
}
