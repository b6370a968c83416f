/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sweep.c - `mmusim sweep`: run every configuration of an experiment file,
 * keep each result as it finishes, and compare them.
 *
 * Output folder (-o, default NAME.sweep):
 *   results/ID.json   one per configuration, written atomically (a temporary
 *                     file renamed into place) when its runs finish: shaped
 *                     like `mmusim run --json`, plus "id", "label" and "vary"
 *   results.json      the array of them, in configuration order
 *   results.csv       one row per configuration: id, label, the varied values,
 *                     oom (1 when the machine ran out of memory), then every
 *                     counter's mean (empty cells when it did)
 *   plot.svg, plot.png with --plot (drawn with cairo; plot.dat, plot.gp and
 *                     plot-groups.dat or plot-series.dat too, the data and a
 *                     gnuplot script for those who restyle it)
 *
 * A configuration whose result file exists (with its id) is not run again,
 * so an interrupted sweep resumes where it stopped.  --emit-jobs prints one
 * self-contained command per configuration still to run (for GNU parallel
 * or a Slurm array); those write the same files, and --collect builds the
 * table from them without running anything.  Results do not depend on how
 * or where a configuration ran: a run is deterministic.
 *
 * A configuration whose simulated machine ran out of memory has a result
 * all the same (marked "oom"), so it is not run again; the sweep writes
 * everything, then names those configurations and exits 1, as `mmusim run`
 * does for one run.
 *
 * Configurations over the same trace file share its decoding: they run in
 * groups of at most SWEEP_PASS_READERS (or -j, if more), each group fed by
 * one SharedTrace (traces/shared_source.h) that decodes every batch once per
 * repeat for the whole group.  Each member has a thread of its own (a
 * shared pass needs every reader running), and the SharedTrace lets at most
 * -j of them work on a batch at once, so -j still bounds the CPUs a sweep
 * uses.  The machines of one group are alive together, never more: a trace
 * sweep of 3,000 configurations, one group then, once held 4.1 GB.
 */
#include "config.h"
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "experiment.h"
#include "outfile.h"
#include "plot.h"
#include "report.h"
#include "runner.h"
#include "shared_source.h"

typedef struct {
  Experiment *e;
  char *dir;            /* the output folder */
  GMutex lock;          /* guards the fields below and stderr */
  guint done, total;
  GError *first_error;  /* the first configuration that failed */
} Sweep;

static char *result_path(const Sweep *sw, const ExpConfig *c)
{
  g_autofree char *name = g_strdup_printf("%s.json", c->id);
  return g_build_filename(sw->dir, "results", name, NULL);
}

static gboolean is_number(JsonNode *n)
{
  if (!n || !JSON_NODE_HOLDS_VALUE(n))
    return FALSE;
  GType t = json_node_get_value_type(n);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

/* Every member of the object `group` of o is a number (a counter's mean or
 * relative stddev); the object is required or optional. */
static gboolean check_numbers(JsonObject *o, const char *path, const char *group, gboolean required, GError **error)
{
  JsonNode *g = json_object_get_member(o, group);
  if (!g)
    return !required || exp_error(error, path, "no \"%s\" object", group);
  if (!JSON_NODE_HOLDS_OBJECT(g))
    return exp_error(error, path, "\"%s\" is not an object of counters", group);
  JsonObjectIter it;
  const char *name;
  JsonNode *v;
  json_object_iter_init(&it, json_node_get_object(g));
  while (json_object_iter_next(&it, &name, &v))
    if (!is_number(v))
      return exp_error(error, path, "\"%s\".\"%s\" is not a number", group, name);
  return TRUE;
}

/* A result file is input like any other: someone may have edited, cut or
 * copied it from another sweep.  Check every field the table, results.csv
 * and plot.dat read, so that they read no default in silence. */
static gboolean check_result(JsonNode *root, const char *path, const ExpConfig *c, GError **error)
{
  if (!root || !JSON_NODE_HOLDS_OBJECT(root))
    return exp_error(error, path, "not a JSON object");
  JsonObject *o = json_node_get_object(root);
  JsonNode *id = json_object_get_member(o, "id");
  if (!id || !JSON_NODE_HOLDS_VALUE(id) || json_node_get_value_type(id) != G_TYPE_STRING)
    return exp_error(error, path, "no \"id\" string");
  if (strcmp(json_node_get_string(id), c->id) != 0)
    return exp_error(error, path, "\"id\" is %s, not %s (the configuration %s)", json_node_get_string(id), c->id,
                      c->label);
  JsonNode *oom = json_object_get_member(o, "oom");
  if (!oom || !JSON_NODE_HOLDS_VALUE(oom) || json_node_get_value_type(oom) != G_TYPE_BOOLEAN)
    return exp_error(error, path, "\"oom\" is not true or false");
  return check_numbers(o, path, "counters", TRUE, error) && check_numbers(o, path, "stddev", FALSE, error);
}

/* The stored result of c: NULL and no error when there is none; NULL and
 * an error naming the file and the field when it is not a result of c. */
static JsonNode *load_result(const Sweep *sw, const ExpConfig *c, GError **error)
{
  g_autofree char *path = result_path(sw, c);
  if (!g_file_test(path, G_FILE_TEST_EXISTS))
    return NULL;
  g_autoptr(JsonParser) p = json_parser_new();
  GError *err = NULL;
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!settings_read_file(path, "result file", MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, &data, &len, &err) ||
      !json_parser_load_from_data(p, data, (gssize)len, &err)) {
    exp_error(error, path, "%s", err->message);
    g_error_free(err);
    return NULL;
  }
  JsonNode *root = json_parser_get_root(p);
  if (!check_result(root, path, c, error))
    return NULL;
  return json_node_copy(root);
}

/* The JSON of one finished configuration.  Its host.peak_rss_bytes is the
 * host's ru_maxrss of the process that ran it, taken when it finished: the
 * configuration's own when it ran alone (a job of --emit-jobs, or -j 1
 * without a shared decoding pass), else the peak of the sweep so far, which
 * bounds it.  Host figures stay out of results.csv, which is the same on
 * every host. */
static JsonNode *result_node(const ExpConfig *c, const RunOutcome *out)
{
  RunReport r;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  runner_report(out, (uint64_t)ru.ru_maxrss * 1024, &r);
  JsonNode *node = report_json_node(&r);
  JsonObject *o = json_node_get_object(node);
  json_object_set_string_member(o, "id", c->id);
  json_object_set_string_member(o, "label", c->label);
  JsonObject *vary = json_object_new();
  for (guint a = 0; c->vary_keys[a]; a++)
    json_object_set_string_member(vary, c->vary_keys[a], c->vary_values[a]);
  json_object_set_object_member(o, "vary", vary);
  json_object_set_boolean_member(o, "oom", out->oom);
  /* "repeats": each counter's value in every repeat, in order, so that the
   * spread is kept (the plot's error bars run from the least to the most). */
  JsonObject *reps = json_object_new();
  JsonObjectIter it;
  const char *name;
  JsonNode *v;
  json_object_iter_init(&it, json_object_get_object_member(o, "counters"));
  while (json_object_iter_next(&it, &name, &v)) {
    const CounterDef *d = counter_lookup(name);
    JsonArray *a = json_array_new();
    for (unsigned i = 0; d && i < out->runs; i++) {
      double x = out->per_run[i].v[d->id];
      if (!isfinite(x))
        json_array_add_null_element(a);
      else if (!(d->flags & CF_DERIVED) && x == floor(x) && fabs(x) < 9007199254740992.0)
        json_array_add_int_element(a, (gint64)x);
      else
        json_array_add_double_element(a, x);
    }
    json_object_set_array_member(reps, name, a);
  }
  json_object_set_object_member(o, "repeats", reps);
  return node;
}

static gboolean write_json(const char *path, JsonNode *node, GError **error)
{
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, TRUE);
  json_generator_set_root(gen, node);
  gsize len;
  g_autofree char *text = json_generator_to_data(gen, &len);
  /* A temporary file renamed into place: a reader sees the whole result or
   * none, and a full disk leaves none. */
  return out_file_set_contents(path, text, len, error);
}

/* Configurations that share one decoding pass of a trace, at most (unless
 * -j is larger).  Decoding is a small part of each run (a run simulates
 * every record it decodes), so a pass shared by 64 costs each reader a
 * 64th of it, near enough to the least; and only 64 machines are alive at
 * once (about 1.4 MB each for a small trace, doc/performance.md). */
#define SWEEP_PASS_READERS 64u

/* One configuration to run; `shared` when its chunk shares a decoding pass. */
typedef struct {
  ExpConfig *c;
  SharedTrace *shared;
  unsigned idx;        /* its consumer index in `shared` */
} SweepJob;

static TraceSource *open_shared(void *data, unsigned repeat, GError **error)
{
  SweepJob *j = data;
  return shared_trace_open(j->shared, j->idx, repeat, error);
}

/* How a shared pass opens the trace (the spec of the chunk's first). */
static TraceSource *open_trace(void *data, unsigned pass, GError **error)
{
  const RunSpec *spec = data;
  return runner_open_input(spec, NULL, error);
}

static void run_one(gpointer data, gpointer user)
{
  SweepJob *j = data;
  ExpConfig *c = j->c;
  Sweep *sw = user;
  GError *err = NULL;
  RunOutcome out;
  RunSpec spec = c->spec;
  if (j->shared) {
    spec.open = open_shared;
    spec.open_data = j;
  }
  gboolean ok = runner_run(&spec, &out, &err);
  if (j->shared)
    shared_trace_leave(j->shared, j->idx);
  if (ok && (out.no_accesses || out.all_fatal)) { /* all zero, or all fatal: failed, not a result to compare */
    g_autofree char *what = out.no_accesses ? run_outcome_no_accesses(&spec, &out) : run_outcome_all_fatal(&out);
    g_set_error(&err, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, "%s", what);
    ok = FALSE;
  }
  if (ok) {
    JsonNode *node = result_node(c, &out);
    g_autofree char *path = result_path(sw, c);
    ok = write_json(path, node, &err);
    json_node_unref(node);
  }
  g_mutex_lock(&sw->lock);
  sw->done++;
  if (!ok) {
    fprintf(stderr, "mmusim: sweep: %s: %s\n", c->label, err->message);
    if (!sw->first_error)
      sw->first_error = g_error_copy(err);
  } else {
    fprintf(stderr, "mmusim: sweep [%u/%u] %s: %.2f s%s\n", sw->done, sw->total, c->label, out.host_seconds,
            out.oom ? " (simulated machine out of memory)" : "");
    if (out.warmup_unfinished) {
      g_autofree char *who = g_strconcat("sweep: ", c->label, NULL);
      run_outcome_warn_warmup(&out, who, "warmup", spec.warmup);
    }
  }
  g_mutex_unlock(&sw->lock);
  g_clear_error(&err);
  run_outcome_clear(&out);
}

/* Of a result check_result passed. */
/* What the table, results.csv and the plot read of a result: each
 * counter's mean and relative standard deviation (NaN: the result has
 * none), the least and the most of the metric's repeats, and whether the
 * machine ran out of memory.  The comparison keeps this of every
 * configuration, not its parsed JSON, some fifty times larger: a sweep of
 * thousands of configurations compares in a few megabytes. */
typedef struct {
  gboolean oom;
  gboolean has_range;   /* the metric's repeats: lo and hi */
  double lo, hi;
  double mean[N_COUNTERS], rsd[N_COUNTERS];
} Summary;

/* Names on stderr the configurations of sum[0..n) whose machine ran out of
 * memory; the exit status: 1 when there are any, else 0. */
static int report_oom(const ExpConfig *const *c, const Summary *sum, guint n)
{
  GString *names = g_string_new(NULL);
  guint failed = 0;
  for (guint i = 0; i < n; i++)
    if (sum[i].oom) {
      g_string_append_printf(names, "%s%s (%s)", failed ? "; " : "", c[i]->label, c[i]->id);
      failed++;
    }
  out_file_put_stdout("", 0); /* flush: after the table, also when both go to one file */
  if (failed)
    fprintf(stderr, "mmusim: sweep: %u of %u configuration%s ran out of simulated memory and could not complete: %s\n",
            failed, n, n == 1 ? "" : "s", names->str);
  g_string_free(names, TRUE);
  return failed ? 1 : 0;
}

/* A counter of a result check_result passed; NaN when the result has none
 * (it does not apply to the machine, or its setting was off). */
static double member_double(JsonObject *o, const char *group, const char *name)
{
  JsonObject *g = json_object_get_object_member(o, group); /* checked: an object or absent */
  if (!g || !json_object_has_member(g, name))
    return NAN;
  return json_object_get_double_member(g, name);
}

static void print_table(const Experiment *e, const Summary *sum, FILE *f)
{
  const ExpConfig *c0 = g_ptr_array_index(e->configs, 0);
  gboolean derived = counter_def((CounterId)e->metric_id)->flags & CF_DERIVED;
  fprintf(f, "\n Sweep '%s': %u configuration%s, %u run%s each, metric %s\n", e->name, e->configs->len,
          e->configs->len == 1 ? "" : "s", e->repeat, e->repeat == 1 ? "" : "s", e->metric);
  if (c0->workload && !g_strv_contains((const char *const *)c0->vary_keys, "workload"))
    fprintf(f, " workload %s\n", c0->workload);
  if (!g_strv_contains((const char *const *)c0->vary_keys, "machine"))
    fprintf(f, " machine %s\n", c0->machine);
  if (e->trace)
    fprintf(f, " trace %s\n", e->trace);
  fputc('\n', f);
  int w = (int)strlen("configuration");
  for (guint i = 0; i < e->configs->len; i++)
    w = MAX(w, (int)strlen(((ExpConfig *)g_ptr_array_index(e->configs, i))->label));
  fprintf(f, "  %-*s  %18s  %12s  %8s\n", w, "configuration", e->metric, "+- (rel)", "vs first");
  double first = NAN;
  for (guint i = 0; i < e->configs->len; i++) {
    const ExpConfig *c = g_ptr_array_index(e->configs, i);
    double v = sum[i].mean[e->metric_id];
    double rsd = sum[i].rsd[e->metric_id];
    gboolean oom = sum[i].oom;
    if (oom)
      v = NAN; /* it counted nothing worth reading, as in results.csv */
    if (i == 0)
      first = v;
    char val[64], noise[32], ratio[32];
    if (oom || isnan(v))
      g_snprintf(val, sizeof val, "-");
    else if (derived && v != 0 && fabs(v) < 1)
      g_snprintf(val, sizeof val, "%.4g", v); /* four digits of small values (seconds of short runs) */
    else if (derived)
      g_snprintf(val, sizeof val, "%.3f", v);
    else
      g_snprintf(val, sizeof val, "%.0f", v);
    if (e->repeat > 1 && !isnan(rsd) && !oom)
      g_snprintf(noise, sizeof noise, "( +- %5.2f%% )", rsd * 100.0);
    else
      noise[0] = '\0';
    if (!isnan(v) && !isnan(first) && first != 0)
      g_snprintf(ratio, sizeof ratio, "%.3f", v / first);
    else
      g_snprintf(ratio, sizeof ratio, "-");
    fprintf(f, "  %-*s  %18s  %12s  %8s%s\n", w, c->label, val, noise, ratio, oom ? "  (out of memory)" : "");
  }
  fputc('\n', f);
}

static gboolean write_csv(const Sweep *sw, const Summary *sum, GError **error)
{
  const Experiment *e = sw->e;
  GString *out = g_string_new("id,label");
  const ExpConfig *c0 = g_ptr_array_index(e->configs, 0);
  for (guint a = 0; c0->vary_keys[a]; a++)
    g_string_append_printf(out, ",%s", c0->vary_keys[a]);
  g_string_append(out, ",oom");
  /* A gated counter (report_counter_gate: oom_kill, the coalescing ones) is
   * a column only when some configuration reports it, as in the runs' own
   * reports; every other counter always is. */
  gboolean column[N_COUNTERS];
  for (int i = 0; i < N_COUNTERS; i++) {
    column[i] = report_counter_gate((CounterId)i) == NULL;
    for (guint k = 0; !column[i] && k < e->configs->len; k++)
      column[i] = !isnan(sum[k].mean[i]);
    if (column[i])
      g_string_append_printf(out, ",%s", counter_def((CounterId)i)->name);
  }
  /* With repeats, the spread: each counter's standard deviation in its own
   * unit (NAME_stddev, absolute) and as a fraction of the mean (NAME_rsd,
   * relative, as run --csv names it). */
  for (int pass = 0; e->repeat > 1 && pass < 2; pass++)
    for (int i = 0; i < N_COUNTERS; i++)
      if (column[i])
        g_string_append_printf(out, ",%s%s", counter_def((CounterId)i)->name, pass ? "_rsd" : "_stddev");
  g_string_append_c(out, '\n');
  for (guint k = 0; k < e->configs->len; k++) {
    const ExpConfig *c = g_ptr_array_index(e->configs, k);
    const Summary *r = &sum[k];
    g_autofree char *label = report_csv_quote(c->label);
    g_string_append_printf(out, "%s,%s", c->id, label);
    for (guint a = 0; c->vary_values[a]; a++) {
      g_autofree char *v = report_csv_quote(c->vary_values[a]);
      g_string_append_printf(out, ",%s", v);
    }
    /* A run that ran out of memory counted nothing worth reading: empty
     * cells (NaN to pandas and spreadsheets), not zeros. */
    gboolean oom = r->oom;
    g_string_append_printf(out, ",%d", oom ? 1 : 0);
    for (int i = 0; i < N_COUNTERS; i++) {
      if (!column[i])
        continue;
      double v = r->mean[i];
      if (isnan(v) || oom)
        g_string_append(out, ",");
      else
        g_string_append_printf(out, ",%.17g", v);
    }
    for (int pass = 0; e->repeat > 1 && pass < 2; pass++)
      for (int i = 0; i < N_COUNTERS; i++) {
        if (!column[i])
          continue;
        double v = r->mean[i], rsd = r->rsd[i];
        if (isnan(v) || isnan(rsd) || oom)
          g_string_append(out, ",");
        else
          g_string_append_printf(out, ",%.17g", pass ? rsd : fabs(v * rsd));
      }
    g_string_append_c(out, '\n');
  }
  g_autofree char *path = g_build_filename(sw->dir, "results.csv", NULL);
  gboolean ok = out_file_set_contents(path, out->str, out->len, error);
  g_string_free(out, TRUE);
  return ok;
}

/* s as a gnuplot string: single-quoted, where gnuplot reads no escape and
 * substitutes no `command` (it does both in double quotes), a quote written
 * twice; a line break would end the command, so control characters become
 * spaces.  The terminals are noenhanced: no markup in titles and labels. */
static void gp_string(GString *out, const char *s)
{
  g_string_append_c(out, '\'');
  for (const char *p = s; *p; p++) {
    if (*p == '\'')
      g_string_append(out, "''");
    else if ((unsigned char)*p < 0x20 || *p == 0x7f)
      g_string_append_c(out, ' ');
    else
      g_string_append_c(out, *p);
  }
  g_string_append_c(out, '\'');
}

/* s as a quoted column of plot.dat: gnuplot's data files know no escape, so
 * a double quote becomes a single one, a control character a space. */
static void dat_string(GString *out, const char *s)
{
  g_string_append_c(out, '"');
  for (const char *p = s; *p; p++)
    g_string_append_c(out, *p == '"' ? '\'' : ((unsigned char)*p < 0x20 || *p == 0x7f) ? ' ' : *p);
  g_string_append_c(out, '"');
}

/* The x value of each configuration on the first axis: bytes of a size
 * setting (*kind 2: a log2 axis), a number (1), or the index of its value
 * among the axis's distinct values (0), which *cats then lists (free with
 * g_ptr_array_unref). */
static double *axis_x(const Experiment *e, int *kind, GPtrArray **cats)
{
  guint n = e->configs->len;
  double *x = g_new0(double, n);
  const ExpConfig *c0 = g_ptr_array_index(e->configs, 0);
  const SettingDef *d = settings_lookup(c0->vary_keys[0]);
  *kind = d && d->type == SETTING_SIZE ? 2 : 1;
  *cats = NULL;
  for (guint k = 0; k < n && *kind; k++) {
    const ExpConfig *c = g_ptr_array_index(e->configs, k);
    uint64_t bytes;
    char *end;
    if (*kind == 2 && settings_parse_size(c->vary_values[0], &bytes))
      x[k] = (double)bytes;
    else if (*kind == 1 && (x[k] = g_ascii_strtod(c->vary_values[0], &end), end != c->vary_values[0] && !*end))
      continue;
    else
      *kind = 0;
  }
  if (*kind == 2) {
    for (guint k = 0; k < n; k++)
      if (x[k] < 1) /* a size of 0 has no place on a log2 axis */
        *kind = 1;
  }
  if (!*kind) {
    *cats = g_ptr_array_new();
    for (guint k = 0; k < n; k++) {
      const ExpConfig *c = g_ptr_array_index(e->configs, k);
      guint i = 0;
      while (i < (*cats)->len && strcmp((*cats)->pdata[i], c->vary_values[0]) != 0)
        i++;
      if (i == (*cats)->len)
        g_ptr_array_add(*cats, c->vary_values[0]);
      x[k] = i;
    }
  }
  return x;
}

/* The configurations' values of the other axes, "k=v, k2=v2": a line of
 * the plot each. */
static char *series_key(const ExpConfig *c)
{
  GString *s = g_string_new(NULL);
  for (guint a = 1; c->vary_keys[a]; a++)
    g_string_append_printf(s, "%s%s=%s", a > 1 ? ", " : "", c->vary_keys[a], c->vary_values[a]);
  return g_string_free(s, FALSE);
}

/* One repeat's values of the metric, from the result's "repeats" (absent
 * in a result of an older version): the spread for the error bars. */
static gboolean repeat_range(JsonObject *o, const char *metric, double *lo, double *hi)
{
  JsonNode *reps = json_object_get_member(o, "repeats");
  if (!reps || !JSON_NODE_HOLDS_OBJECT(reps))
    return FALSE;
  JsonNode *a = json_object_get_member(json_node_get_object(reps), metric);
  if (!a || !JSON_NODE_HOLDS_ARRAY(a) || json_array_get_length(json_node_get_array(a)) == 0)
    return FALSE;
  JsonArray *arr = json_node_get_array(a);
  *lo = INFINITY;
  *hi = -INFINITY;
  for (guint i = 0; i < json_array_get_length(arr); i++) {
    JsonNode *v = json_array_get_element(arr, i);
    if (!is_number(v))
      return FALSE;
    *lo = MIN(*lo, json_node_get_double(v));
    *hi = MAX(*hi, json_node_get_double(v));
  }
  return TRUE;
}

/* The Summary of a result check_result passed. */
static void summarize(const Experiment *e, JsonNode *res, Summary *r)
{
  JsonObject *o = json_node_get_object(res);
  r->oom = json_object_get_boolean_member(o, "oom");
  for (int i = 0; i < N_COUNTERS; i++) {
    const char *name = counter_def((CounterId)i)->name;
    r->mean[i] = member_double(o, "counters", name);
    r->rsd[i] = member_double(o, "stddev", name);
  }
  r->has_range = repeat_range(o, e->metric, &r->lo, &r->hi);
}

/* Appends result `res` to results.json, the array of all of them, as the
 * k-th element: the text json-glib gives the array as a whole (its
 * elements indented by two spaces), written one element at a time so that
 * no more than one result's text is in memory. */
static gboolean append_result(OutFile *f, JsonNode *res, guint k, GError **error)
{
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, TRUE);
  json_generator_set_root(gen, res);
  g_autofree char *text = json_generator_to_data(gen, NULL);
  GString *out = g_string_new(k ? ",\n  " : "[\n  ");
  for (const char *p = text; *p; p++) {
    g_string_append_c(out, *p);
    if (*p == '\n')
      g_string_append(out, "  ");
  }
  gboolean ok = out_file_write(f, out->str, out->len, error);
  g_string_free(out, TRUE);
  return ok;
}

/* A configuration's mean of the metric and its error bar: from the least
 * to the most of the repeats when spread (mean +- stddev for a result
 * without them), else the mean itself.  FALSE: no point (out of memory). */
static gboolean config_point(const Experiment *e, const Summary *r, gboolean spread, double *v, double *lo, double *hi)
{
  *v = r->mean[e->metric_id];
  if (r->oom || isnan(*v))
    return FALSE;
  *lo = *hi = *v;
  if (spread && r->has_range) {
    *lo = r->lo;
    *hi = r->hi;
  } else if (spread) {
    double rsd = r->rsd[e->metric_id];
    double sd = isnan(rsd) ? 0 : fabs(*v * rsd);
    *lo = *v - sd;
    *hi = *v + sd;
  }
  return TRUE;
}

/* The configurations' series (series_key: the values of the other axes)
 * in the order they first come; *series_of[k] the index of configuration
 * k's.  Free with g_ptr_array_unref and g_free. */
static GPtrArray *series_of_configs(const Experiment *e, guint **series_of)
{
  guint n = e->configs->len;
  GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
  *series_of = g_new0(guint, n);
  for (guint k = 0; k < n; k++) {
    char *key = series_key(g_ptr_array_index(e->configs, k));
    guint i = 0;
    while (i < keys->len && strcmp(keys->pdata[i], key) != 0)
      i++;
    if (i == keys->len)
      g_ptr_array_add(keys, key);
    else
      g_free(key);
    (*series_of)[k] = i;
  }
  return keys;
}

/* plot.svg and plot.png, drawn with cairo: the metric against the first
 * axis, one line per value of the other axes with a legend (log2 for a
 * size), or for an axis of words (thp.enabled = never, madvise, always;
 * machine = skylake, zen3) grouped bars: a group per word in the order
 * given, a bar per value of the other axes; error bars from the smallest
 * to the largest of the repeats (mean +- stddev for a result without
 * them). */
static gboolean draw_plot(const Sweep *sw, const Summary *sum, const char *file, GError **error)
{
  const Experiment *e = sw->e;
  guint n = e->configs->len;
  int kind;
  GPtrArray *cats;
  double *x = axis_x(e, &kind, &cats);
  guint *series_of;
  GPtrArray *keys = series_of_configs(e, &series_of);
  guint ns = keys->len;
  PlotSeries *series = g_new0(PlotSeries, ns);
  double *xs = g_new0(double, (gsize)n * 4), *ys = xs + n, *los = ys + n, *his = los + n;
  guint used = 0;
  gboolean spread = e->repeat > 1;
  for (guint s = 0; s < ns; s++) {
    PlotSeries *se = &series[s];
    se->name = *(char *)keys->pdata[s] ? keys->pdata[s] : e->metric;
    se->x = xs + used;
    se->y = ys + used;
    se->lo = spread ? los + used : NULL;
    se->hi = spread ? his + used : NULL;
    for (guint k = 0; k < n; k++) {
      double v, lo, hi;
      if (series_of[k] != s || !config_point(e, &sum[k], spread, &v, &lo, &hi))
        continue; /* no point for a configuration out of memory */
      xs[used] = x[k];
      ys[used] = v;
      los[used] = lo;
      his[used] = hi;
      used++;
      se->n++;
    }
  }
  const ExpConfig *c0 = g_ptr_array_index(e->configs, 0);
  const char *machine = c0->machine; /* or, when machine is an axis, the legend or the x axis names them */
  for (guint k = 1; k < n; k++)
    if (g_strcmp0(((const ExpConfig *)g_ptr_array_index(e->configs, k))->machine, c0->machine) != 0)
      machine = "each machine";
  g_autofree char *title = g_strdup_printf("%s: %s", e->name, e->metric);
  g_autofree char *sub = g_strdup_printf("%s on %s, %s", c0->workload ? c0->workload : e->trace, machine,
                                         e->repeat > 1 ? "mean of the repeats, bars from the least to the most"
                                                       : "one run each");
  g_autofree char *ylabel = g_strdup_printf("%s (mean of %u run%s)", e->metric, e->repeat, e->repeat > 1 ? "s" : "");
  g_autofree char *xlabel = g_strdup_printf("%s%s", c0->vary_keys[0], kind == 2 ? " (bytes, log2 scale)" : "");
  PlotPanel panel = { NULL, ylabel, ns, series };
  Plot p = { .title = title, .subtitle = sub, .xlabel = xlabel, .xlog2 = kind == 2,
             .xcats = cats ? (const char *const *)cats->pdata : NULL, .n_xcats = cats ? cats->len : 0,
             .bars = cats != NULL, .n_panels = 1, .panels = &panel };
  g_autofree char *path = g_build_filename(sw->dir, file, NULL);
  gboolean ok = plot_write(&p, path, error);
  g_free(xs);
  g_free(series);
  g_free(series_of);
  g_ptr_array_free(keys, TRUE);
  if (cats)
    g_ptr_array_free(cats, TRUE);
  g_free(x);
  return ok;
}

/* plot-groups.dat, for a first axis of words: a row per word (in the
 * order given), and in it the mean, least and most of each series (the
 * other axes' values, as plot.svg's legend; NaN where a configuration ran
 * out of memory or is not in the experiment).  plot.gp draws it as
 * plot.svg does: gnuplot's clustered histogram, with error bars
 * (histogram errorbars: y, ylow, yhigh columns) when there are repeats. */
static gboolean write_plot_groups(const Experiment *e, const Summary *sum, const char *dir, GString *gp,
                                  char **plot_cmd, GError **error)
{
  int kind;
  GPtrArray *cats;
  g_autofree double *x = axis_x(e, &kind, &cats);
  guint *series_of;
  GPtrArray *keys = series_of_configs(e, &series_of);
  guint n = e->configs->len, ns = keys->len, ng = cats->len;
  gboolean spread = e->repeat > 1;
  double *cell = g_new(double, (gsize)ng * ns * 3); /* [group][series]: mean, least, most */
  for (gsize i = 0; i < (gsize)ng * ns * 3; i++)
    cell[i] = NAN;
  for (guint k = 0; k < n; k++) {
    double *c = cell + ((gsize)x[k] * ns + series_of[k]) * 3;
    if (!config_point(e, &sum[k], spread, &c[0], &c[1], &c[2]))
      c[0] = c[1] = c[2] = NAN;
  }
  const ExpConfig *c0 = g_ptr_array_index(e->configs, 0);
  GString *dat = g_string_new("# ");
  g_string_append(dat, c0->vary_keys[0]);
  for (guint s = 0; s < ns; s++) {
    const char *name = *(char *)keys->pdata[s] ? keys->pdata[s] : e->metric;
    g_string_append_printf(dat, " | %s: mean least most", name);
  }
  for (char *p = dat->str; *p; p++) /* a line break (a value's \n) would end the comment */
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
  g_string_append_c(dat, '\n');
  for (guint g = 0; g < ng; g++) {
    dat_string(dat, cats->pdata[g]);
    for (guint s = 0; s < ns; s++)
      for (int j = 0; j < 3; j++) {
        double v = cell[((gsize)g * ns + s) * 3 + j];
        if (isnan(v))
          g_string_append(dat, " NaN");
        else
          g_string_append_printf(dat, " %.17g", v);
      }
    g_string_append_c(dat, '\n');
  }
  g_free(cell);
  g_autofree char *path = g_build_filename(dir, "plot-groups.dat", NULL);
  gboolean ok = out_file_set_contents(path, dat->str, dat->len, error);
  g_string_free(dat, TRUE);
  /* The figure's settings, then its plot command for each terminal. */
  g_string_append(gp, "set xlabel ");
  g_autofree char *xlabel = g_strdup_printf("%s (a group of bars per value)", c0->vary_keys[0]);
  gp_string(gp, xlabel);
  g_string_append_printf(gp, "\nset style data histograms\nset style histogram %s gap 1\n"
                             "set style fill solid 0.6 border -1\nset boxwidth 0.9\nset xtics rotate by -30\n",
                         spread ? "errorbars lw 1" : "clustered");
  if (ns > 1)
    g_string_append(gp, "set key on outside right top\n");
  GString *cmd = g_string_new("plot ");
  for (guint s = 0; s < ns; s++) {
    const char *name = *(char *)keys->pdata[s] ? keys->pdata[s] : e->metric;
    guint col = 2 + 3 * s;
    if (spread)
      g_string_append_printf(cmd, "%s'%s' using %u:%u:%u%s title ", s ? ", " : "", s ? "" : "plot-groups.dat", col,
                             col + 1, col + 2, s ? "" : ":xtic(1)");
    else
      g_string_append_printf(cmd, "%s'%s' using %u%s title ", s ? ", " : "", s ? "" : "plot-groups.dat", col,
                             s ? "" : ":xtic(1)");
    gp_string(cmd, name);
  }
  g_string_append_c(cmd, '\n');
  *plot_cmd = g_string_free(cmd, FALSE);
  g_ptr_array_unref(keys);
  g_ptr_array_unref(cats);
  g_free(series_of);
  return ok;
}

/* plot-series.dat, for a first axis of numbers or sizes that plot.dat
 * cannot draw as plot.svg does (several series, or sizes): a block per
 * series (the other axes' values, as plot.svg's legend), a row per
 * configuration in it with the axis's value (bytes for a size), the mean,
 * the least and the most.  plot.gp draws each block as a line, with error
 * bars when there are repeats, on a log2 axis for sizes. */
static gboolean write_plot_series(const Experiment *e, const Summary *sum, const char *dir, GString *gp,
                                  char **plot_cmd, GError **error)
{
  int kind;
  GPtrArray *cats;
  g_autofree double *x = axis_x(e, &kind, &cats); /* numbers or sizes: no categories */
  guint *series_of;
  GPtrArray *keys = series_of_configs(e, &series_of);
  guint n = e->configs->len, ns = keys->len;
  gboolean spread = e->repeat > 1;
  const ExpConfig *c0 = g_ptr_array_index(e->configs, 0);
  GString *dat = g_string_new(NULL);
  GString *cmd = g_string_new("plot ");
  for (guint s = 0; s < ns; s++) {
    const char *name = *(char *)keys->pdata[s] ? keys->pdata[s] : e->metric;
    gsize at = dat->len;
    g_string_append_printf(dat, "# %s | %s: mean least most\n", c0->vary_keys[0], name);
    for (char *p = dat->str + at; *p && *p != '\n'; p++) /* a line break (a value's \n) would end the comment */
      if ((unsigned char)*p < 0x20 || *p == 0x7f)
        *p = ' ';
    for (guint k = 0; k < n; k++) {
      double v, lo, hi;
      if (series_of[k] != s)
        continue;
      if (config_point(e, &sum[k], spread, &v, &lo, &hi))
        g_string_append_printf(dat, "%.17g %.17g %.17g %.17g\n", x[k], v, lo, hi);
      else /* out of memory: gnuplot leaves out a point whose value is NaN */
        g_string_append_printf(dat, "%.17g NaN NaN NaN\n", x[k]);
    }
    g_string_append(dat, "\n\n"); /* the end of a block: gnuplot's index */
    g_string_append_printf(cmd, "%s'%s' index %u using %s title ", s ? ", " : "", s ? "" : "plot-series.dat", s,
                           spread ? "1:2:3:4 with yerrorlines lw 2 pt 7" : "1:2 with linespoints lw 2 pt 7");
    gp_string(cmd, name);
  }
  g_string_append_c(cmd, '\n');
  g_autofree char *path = g_build_filename(dir, "plot-series.dat", NULL);
  gboolean ok = out_file_set_contents(path, dat->str, dat->len, error);
  g_string_free(dat, TRUE);
  g_string_append(gp, "set xlabel ");
  g_autofree char *xlabel = g_strdup_printf("%s%s", c0->vary_keys[0], kind == 2 ? " (bytes, log2 scale)" : "");
  gp_string(gp, xlabel);
  g_string_append_c(gp, '\n');
  if (kind == 2)
    g_string_append(gp, "set logscale x 2\n");
  if (ns > 1)
    g_string_append(gp, "set key on outside right top\n");
  *plot_cmd = g_string_free(cmd, FALSE);
  g_ptr_array_unref(keys);
  g_free(series_of);
  return ok;
}

/* plot.dat: one row per configuration (index, label, mean, stddev); against
 * the axis when there is one numeric axis.  plot.gp draws it with error
 * bars; for a first axis of words grouped bars from plot-groups.dat, for
 * one of sizes or of numbers with other axes a line per series from
 * plot-series.dat, as plot.svg draws them; gnuplot, when installed,
 * renders plot.svg and plot.png. */
static gboolean write_plot(const Sweep *sw, const Summary *sum, GError **error)
{
  const Experiment *e = sw->e;
  gboolean numeric = e->n_axes == 1;
  for (guint k = 0; numeric && k < e->configs->len; k++) {
    const ExpConfig *c = g_ptr_array_index(e->configs, k);
    char *end;
    g_ascii_strtod(c->vary_values[0], &end);
    numeric = end != c->vary_values[0] && *end == '\0';
  }
  GString *dat = g_string_new(NULL);
  g_string_append_printf(dat, "# index label %s stddev\n", e->metric);
  for (guint k = 0; k < e->configs->len; k++) {
    const ExpConfig *c = g_ptr_array_index(e->configs, k);
    double v = sum[k].mean[e->metric_id];
    double rsd = sum[k].rsd[e->metric_id];
    g_autofree char *x = numeric ? g_strdup(c->vary_values[0]) : g_strdup_printf("%u", k);
    g_string_append_printf(dat, "%s ", x);
    dat_string(dat, c->label);
    if (sum[k].oom || isnan(v)) /* gnuplot leaves out a point whose value is NaN */
      g_string_append(dat, " NaN NaN\n");
    else
      g_string_append_printf(dat, " %.17g %.17g\n", v, isnan(rsd) ? 0.0 : fabs(v * rsd));
  }
  g_autofree char *dat_path = g_build_filename(sw->dir, "plot.dat", NULL);
  gboolean ok = out_file_set_contents(dat_path, dat->str, dat->len, error);
  g_string_free(dat, TRUE);
  if (!ok)
    return FALSE;
  int kind;
  GPtrArray *cats;
  g_free(axis_x(e, &kind, &cats));
  gboolean words = cats != NULL; /* drawn as plot.svg draws it: grouped bars */
  if (cats)
    g_ptr_array_unref(cats);
  GString *gp = g_string_new("# gnuplot script written by mmusim sweep; run it in this folder\nset title ");
  gp_string(gp, e->name);
  g_string_append(gp, "\nset ylabel ");
  gp_string(gp, e->metric);
  g_string_append(gp, "\nset grid ytics\nset key off\nset yrange [0:*]\n");
  g_autofree char *groups_cmd = NULL;
  if (words) {
    if (!write_plot_groups(e, sum, sw->dir, gp, &groups_cmd, error)) {
      g_string_free(gp, TRUE);
      return FALSE;
    }
  } else if (!numeric) { /* several series, or a size axis: lines from plot-series.dat */
    if (!write_plot_series(e, sum, sw->dir, gp, &groups_cmd, error)) {
      g_string_free(gp, TRUE);
      return FALSE;
    }
  } else {
    const ExpConfig *c0 = g_ptr_array_index(e->configs, 0);
    g_string_append(gp, "set xlabel ");
    gp_string(gp, c0->vary_keys[0]);
    g_string_append_c(gp, '\n');
  }
  for (int t = 0; t < 2; t++) {
    g_string_append_printf(gp, "set terminal %s noenhanced\nset output 'plot.%s'\n",
                           t == 0 ? "svg size 800,500 dynamic" : "pngcairo size 800,500", t == 0 ? "svg" : "png");
    if (groups_cmd)
      g_string_append(gp, groups_cmd);
    else
      g_string_append(gp, "plot 'plot.dat' using 1:3:4 with yerrorlines lw 2 pt 7\n");
  }
  g_autofree char *gp_path = g_build_filename(sw->dir, "plot.gp", NULL);
  ok = out_file_set_contents(gp_path, gp->str, gp->len, error);
  g_string_free(gp, TRUE);
  if (!ok)
    return FALSE;
  return draw_plot(sw, sum, "plot.svg", error) && draw_plot(sw, sum, "plot.png", error);
}

static char *shell_join(const char *const *argv)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; argv[i]; i++) {
    g_autofree char *q = g_shell_quote(argv[i]);
    g_string_append_printf(s, "%s%s", i ? " " : "", q);
  }
  return g_string_free(s, FALSE);
}

int sweep_main(int argc, char **argv, const char *self)
{
  char *out_dir = NULL, *only = NULL, *collect = NULL;
  gint jobs = 0;
  gboolean emit = FALSE, plot = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir, "output folder (default NAME.sweep)", "DIR" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "configurations run at once (default: the host's CPUs)", "N" },
    { "emit-jobs", 0, 0, G_OPTION_ARG_NONE, &emit, "print one command per configuration still to run", NULL },
    { "only", 0, 0, G_OPTION_ARG_STRING, &only, "run only the configuration with this id", "ID" },
    { "collect", 0, 0, G_OPTION_ARG_FILENAME, &collect, "run nothing; compare the results in DIR", "DIR" },
    { "plot", 0, 0, G_OPTION_ARG_NONE, &plot, "draw plot.svg and plot.png (and write plot.dat and plot.gp, a gnuplot script)", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("EXPERIMENT.ini - run and compare the configurations of an experiment");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int rc = 0;
  Sweep sw = { 0 };
  g_mutex_init(&sw.lock);
  Summary *sum = NULL;
  OutFile *all = NULL; /* results.json, while it is written */
  char *results_dir = NULL, *all_path = NULL;
  g_autoptr(Experiment) e = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err))
    goto fail;
  if (argc != 2) {
    fprintf(stderr, "mmusim: sweep: give one experiment file (see doc/experiments.md)\n");
    rc = 2;
    goto out;
  }
  if (jobs < 0 || (collect && (emit || only)) || (emit && only)) {
    fprintf(stderr, "mmusim: sweep: -j must not be negative; --collect, --emit-jobs and --only exclude each other\n");
    rc = 2;
    goto out;
  }
  e = experiment_load(argv[1], &err);
  if (!e || (!collect && !experiment_check_inputs(e, &err)))
    goto fail;
  sw.e = e;
  sw.dir = g_strdup(collect ? collect : out_dir ? out_dir : NULL);
  if (!sw.dir)
    sw.dir = g_strdup_printf("%s.sweep", e->name);
  results_dir = g_build_filename(sw.dir, "results", NULL);
  if (!collect && g_mkdir_with_parents(results_dir, 0777) != 0) {
    fprintf(stderr, "mmusim: sweep: cannot create %s: %s\n", results_dir, g_strerror(errno));
    rc = 2;
    goto out;
  }

  /* What is left to run. */
  GPtrArray *todo = g_ptr_array_new();
  for (guint i = 0; i < e->configs->len; i++) {
    ExpConfig *c = g_ptr_array_index(e->configs, i);
    if (only && strcmp(only, c->id) != 0)
      continue;
    if (collect)
      continue;
    GError *bad = NULL;
    JsonNode *have = load_result(&sw, c, &bad);
    if (bad) { /* resume: a damaged result is one not there yet */
      fprintf(stderr, "mmusim: sweep: %s; running configuration %s again\n", bad->message, c->label);
      g_clear_error(&bad);
    }
    if (have)
      json_node_unref(have);
    else
      g_ptr_array_add(todo, c);
  }
  if (only && todo->len == 0) {
    gboolean known = FALSE;
    for (guint i = 0; i < e->configs->len; i++)
      known |= strcmp(((ExpConfig *)g_ptr_array_index(e->configs, i))->id, only) == 0;
    if (!known) {
      fprintf(stderr, "mmusim: sweep: %s has no configuration %s\n", argv[1], only);
      g_ptr_array_free(todo, TRUE);
      rc = 2;
      goto out;
    }
  }
  if (emit) {
    /* Absolute paths: the commands may run in another folder or host. */
    g_autofree char *abs_self = strchr(self, '/') ? g_canonicalize_filename(self, NULL) : g_strdup(self);
    g_autofree char *abs_exp = g_canonicalize_filename(argv[1], NULL);
    g_autofree char *abs_dir = g_canonicalize_filename(sw.dir, NULL);
    for (guint i = 0; i < todo->len; i++) {
      ExpConfig *c = g_ptr_array_index(todo, i);
      const char *cmd[] = { abs_self, "sweep", abs_exp, "-o", abs_dir, "--only", c->id, NULL };
      g_autofree char *line = shell_join(cmd);
      printf("%s\n", line);
    }
    g_ptr_array_free(todo, TRUE);
    goto out;
  }
  if (todo->len) {
    sw.total = todo->len;
    guint n = jobs > 0 ? (guint)jobs : g_get_num_processors();
    if (e->configs->len - todo->len && !only)
      fprintf(stderr, "mmusim: sweep: %u of %u configurations already done in %s; running the other %u\n",
              e->configs->len - todo->len, e->configs->len, sw.dir, todo->len);
    guint threads = MIN(n, todo->len);
    /* Every configuration of an experiment with a trace reads the same
     * file: one pass for each group of `group` of them, a thread each, -j
     * at work at once.  The pool has a thread for each member of a group:
     * jobs start in the order pushed, so a group's members all get a
     * thread once the group before has finished, and no more than a
     * group's machines are alive. */
    gboolean one_pass = e->trace && todo->len > 1;
    guint group = one_pass ? MIN(todo->len, MAX(SWEEP_PASS_READERS, threads)) : 1;
    GThreadPool *pool = g_thread_pool_new(run_one, &sw, (gint)(one_pass ? group : threads), TRUE, &err);
    if (!pool) {
      g_ptr_array_free(todo, TRUE);
      goto fail;
    }
    SweepJob *jobs_of = g_new0(SweepJob, todo->len);
    GPtrArray *shared = g_ptr_array_new_with_free_func((GDestroyNotify)shared_trace_free);
    SharedTrace *st = NULL;
    for (guint i = 0; i < todo->len; i++) {
      if (one_pass && i % group == 0) {
        ExpConfig *first = g_ptr_array_index(todo, i);
        st = shared_trace_new(MIN(group, todo->len - i), SHARED_TRACE_RING, open_trace, &first->spec);
        shared_trace_set_active(st, threads);
        g_ptr_array_add(shared, st);
      }
      jobs_of[i] = (SweepJob){ g_ptr_array_index(todo, i), st, one_pass ? i % group : i };
    }
    for (guint i = 0; i < todo->len; i++)
      g_thread_pool_push(pool, &jobs_of[i], NULL);
    g_thread_pool_free(pool, FALSE, TRUE);
    g_ptr_array_free(shared, TRUE);
    g_free(jobs_of);
  }
  g_ptr_array_free(todo, TRUE);
  if (sw.first_error) { /* said by run_one, once: only the status is left */
    rc = out_file_exit_status(sw.first_error);
    goto out;
  }
  if (only) {
    for (guint i = 0; i < e->configs->len; i++) {
      const ExpConfig *c = g_ptr_array_index(e->configs, i);
      JsonNode *node = strcmp(c->id, only) == 0 ? load_result(&sw, c, &err) : NULL;
      if (err) {
        g_prefix_error(&err, "sweep: ");
        goto fail;
      }
      if (node) {
        Summary one;
        summarize(e, node, &one);
        rc = report_oom(&c, &one, 1);
        json_node_unref(node);
      }
    }
    goto out;
  }

  /* Compare: each result read once, appended to results.json, and kept as
   * its Summary. */
  sum = g_new0(Summary, e->configs->len);
  all_path = g_build_filename(sw.dir, "results.json", NULL);
  all = out_file_open(all_path, &err);
  if (!all)
    goto fail;
  GString *missing = g_string_new(NULL);
  for (guint i = 0; i < e->configs->len; i++) {
    ExpConfig *c = g_ptr_array_index(e->configs, i);
    JsonNode *node = load_result(&sw, c, &err);
    if (err) { /* the table would read a default for it: refused */
      g_string_free(missing, TRUE);
      fprintf(stderr, "mmusim: sweep: %s; it is not the result of configuration %s: delete it and run that "
              "configuration again (mmusim sweep %s -o %s)\n", err->message, c->label, argv[1], sw.dir);
      g_clear_error(&err);
      rc = 2;
      goto out;
    }
    if (!node) {
      g_string_append_printf(missing, "\n  %s (%s)", c->id, c->label);
      continue;
    }
    gboolean ok = missing->len || append_result(all, node, i, &err); /* none written once one is missing */
    summarize(e, node, &sum[i]);
    json_node_unref(node);
    if (!ok) {
      g_string_free(missing, TRUE);
      goto fail;
    }
  }
  if (missing->len) {
    fprintf(stderr, "mmusim: sweep: %s lacks the results of:%s\nrun them (mmusim sweep %s -o %s, or the commands of --emit-jobs) first\n",
            sw.dir, missing->str, argv[1], sw.dir);
    g_string_free(missing, TRUE);
    rc = 2;
    goto out;
  }
  g_string_free(missing, TRUE);
  OutText table;
  print_table(e, sum, out_text_begin(&table));
  out_text_to_stdout(&table);
  const char *close = e->configs->len ? "\n]" : "[]";
  gboolean ok = out_file_write(all, close, strlen(close), &err);
  ok = ok ? out_file_commit(all, &err) : (out_file_abort(all), FALSE);
  all = NULL; /* committed or removed */
  if (!ok || !write_csv(&sw, sum, &err) || (plot && !write_plot(&sw, sum, &err)))
    goto fail;
  rc = report_oom((const ExpConfig *const *)e->configs->pdata, sum, e->configs->len);
  goto out;

fail:
  fprintf(stderr, "mmusim: %s\n", err->message);
  rc = out_file_exit_status(err); /* 1: an output could not be written */
  g_error_free(err);
out:
  if (all)
    out_file_abort(all);
  g_free(sum);
  g_free(results_dir);
  g_free(all_path);
  g_clear_error(&sw.first_error);
  g_mutex_clear(&sw.lock);
  g_free(sw.dir);
  g_free(out_dir);
  g_free(only);
  g_free(collect);
  return rc;
}
