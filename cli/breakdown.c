/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * breakdown.c - run's per-CPU, per-node, per-thread and interval reports
 * (see breakdown.h), in perf stat's layouts (tools/perf/util/stat-display.c,
 * Linux 6.12: -A prefixes each row with "CPU<n>", --per-node with "N<n>"
 * and the number of CPUs summed, --per-thread with the thread, -I with the
 * time at the interval's end).
 */
#include "config.h"
#include "breakdown.h"

#include <string.h>
#include "errors.h"
#include "plot.h"

const CounterId breakdown_plot_default[4] = { CTR_DTLB_LOAD_MISSES, CTR_WALK_CYCLES, CTR_THP_COLLAPSE_ALLOC,
                                              CTR_NUMA_PAGES_MIGRATED };

/* One row: a CPU, a node or a thread, with its counters. */
typedef struct {
  int cpu, node;      /* -1: not that kind of row */
  unsigned cpus;      /* a node's CPUs */
  uint32_t pid, tid;  /* a thread's */
  Counters c;
} Row;

static unsigned cpus_per_node(const RunReport *r)
{
  return r->settings ? (unsigned)MAX(1, settings_int(r->settings, SET_MACHINE_CPUS_PER_NODE)) : 1;
}

static double freq_mhz(const RunReport *r)
{
  return r->settings ? (double)settings_int(r->settings, SET_CPU_FREQ_MHZ) : 1;
}

/* The rows of mode from per-CPU counters (n of them) or the threads; with
 * neither (an interval without per-CPU counters) one row of total. */
static GArray *rows_of(const Breakdown *bd, const Counters *per_cpu, unsigned n, const Counters *total)
{
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(Row));
  if (bd->mode == BREAKDOWN_THREAD) {
    for (unsigned i = 0; i < bd->b->n_threads; i++) {
      Row row = { .cpu = -1, .node = -1, .pid = bd->b->threads[i].pid, .tid = bd->b->threads[i].tid,
                  .c = bd->b->threads[i].ctr };
      g_array_append_val(rows, row);
    }
  } else if (bd->mode == BREAKDOWN_CPU && per_cpu) {
    for (unsigned i = 0; i < n; i++) {
      Row row = { .cpu = (int)i, .node = (int)(i / cpus_per_node(bd->r)), .c = per_cpu[i] };
      g_array_append_val(rows, row);
    }
  } else if (bd->mode == BREAKDOWN_NODE && per_cpu) {
    /* perf's --per-node: the CPUs of a node summed (machine.c numbers
     * them node by node, cpus_per_node to a node). */
    unsigned per = cpus_per_node(bd->r);
    for (unsigned i = 0; i < n; i++) {
      unsigned node = i / per;
      if (node >= rows->len) {
        Row row = { .cpu = -1, .node = (int)node };
        g_array_append_val(rows, row);
      }
      Row *row = &g_array_index(rows, Row, node);
      row->cpus++;
      counters_add(&row->c, &per_cpu[i]);
    }
  } else {
    Row row = { .cpu = -1, .node = -1, .c = *total };
    g_array_append_val(rows, row);
  }
  return rows;
}

unsigned breakdown_counters(const RunReport *r, const char *list, gboolean text, CounterId **ids, GError **error)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(CounterId));
  if (list) {
    g_auto(GStrv) names = g_strsplit(list, ",", -1);
    for (unsigned i = 0; names[i]; i++) {
      const char *name = g_strstrip(names[i]);
      const CounterDef *d = counter_lookup(name);
      if (!d || !report_counter_applies(d->id, r->arch)) {
        g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                    "--counters: '%s' is no counter of %s (see `mmusim list counters`)", name, r->arch);
        g_array_free(a, TRUE);
        *ids = NULL;
        return 0;
      }
      g_array_append_val(a, d->id);
    }
  } else {
    for (int i = 0; i < N_COUNTERS; i++) {
      CounterId id = (CounterId)i;
      if (!report_counter_shown(r, id))
        continue;
      if (text && (id == CTR_SECONDS || id == CTR_IPC || id == CTR_NS_PER_ACCESS))
        continue; /* the text report's notes and footer */
      if (text && (counter_def(id)->flags & CF_NUMA) && r->cpus <= 1)
        continue;
      g_array_append_val(a, id);
    }
  }
  unsigned n = a->len;
  *ids = (CounterId *)(void *)g_array_free(a, FALSE);
  return n;
}

/* ---- labels ------------------------------------------------------------- */

static const char *mode_title(BreakdownMode m)
{
  switch (m) {
  case BREAKDOWN_CPU:
    return "per CPU";
  case BREAKDOWN_NODE:
    return "per NUMA node (the CPUs of each node summed)";
  case BREAKDOWN_THREAD:
    return "per thread (pid/tid)";
  default:
    return NULL;
  }
}

/* The text row's prefix: "CPU0    ", "N0        2 ", "     1/2        ". */
static void text_prefix(GString *line, BreakdownMode m, const Row *row)
{
  switch (m) {
  case BREAKDOWN_CPU: {
    char b[16];
    g_snprintf(b, sizeof b, "CPU%d", row->cpu);
    g_string_append_printf(line, "%-8s", b);
    break;
  }
  case BREAKDOWN_NODE: {
    char b[16];
    g_snprintf(b, sizeof b, "N%d", row->node);
    g_string_append_printf(line, "%-4s%5u ", b, row->cpus);
    break;
  }
  case BREAKDOWN_THREAD: {
    char b[32];
    g_snprintf(b, sizeof b, "%u/%u", row->pid, row->tid);
    g_string_append_printf(line, "%16s", b);
    break;
  }
  default:
    break;
  }
}

/* The label columns of CSV (header and a row's values) and JSON. */
static void csv_label_header(GString *s, BreakdownMode m)
{
  static const char *cols[] = { [BREAKDOWN_NONE] = "", [BREAKDOWN_CPU] = ",cpu,node", [BREAKDOWN_NODE] = ",node,cpus",
                                [BREAKDOWN_THREAD] = ",pid,tid" };
  g_string_append(s, cols[m]);
}

static void csv_label_row(GString *s, BreakdownMode m, const Row *row)
{
  switch (m) {
  case BREAKDOWN_CPU:
    g_string_append_printf(s, ",%d,%d", row->cpu, row->node);
    break;
  case BREAKDOWN_NODE:
    g_string_append_printf(s, ",%d,%u", row->node, row->cpus);
    break;
  case BREAKDOWN_THREAD:
    g_string_append_printf(s, ",%u,%u", row->pid, row->tid);
    break;
  default:
    break;
  }
}

static void json_int(JsonBuilder *jb, const char *name, gint64 v)
{
  json_builder_set_member_name(jb, name);
  json_builder_add_int_value(jb, v);
}

static void json_label(JsonBuilder *jb, BreakdownMode m, const Row *row, unsigned per)
{
  switch (m) {
  case BREAKDOWN_CPU:
    json_int(jb, "cpu", row->cpu);
    json_int(jb, "node", row->node);
    break;
  case BREAKDOWN_NODE:
    json_int(jb, "node", row->node);
    json_builder_set_member_name(jb, "cpus");
    json_builder_begin_array(jb);
    for (unsigned c = 0; c < row->cpus; c++)
      json_builder_add_int_value(jb, (gint64)((unsigned)row->node * per + c));
    json_builder_end_array(jb);
    break;
  case BREAKDOWN_THREAD:
    json_int(jb, "pid", row->pid);
    json_int(jb, "tid", row->tid);
    break;
  default:
    break;
  }
}

static void csv_text(GString *s, const char *text)
{
  g_autofree char *q = report_csv_quote(text ? text : "");
  g_string_append(s, q);
}

static void csv_values(GString *s, const Breakdown *bd, const CounterValues *v)
{
  for (unsigned k = 0; k < bd->n_ids; k++) {
    char b[64];
    g_string_append_printf(s, ",%s", report_fmt_exact(b, sizeof b, v->v[bd->ids[k]]));
  }
}

static void csv_counter_header(GString *s, const Breakdown *bd)
{
  for (unsigned k = 0; k < bd->n_ids; k++) {
    g_string_append_c(s, ',');
    csv_text(s, counter_def(bd->ids[k])->name);
  }
  g_string_append_c(s, '\n');
}

/* ---- -A, --per-node, --per-thread ------------------------------------------ */

void breakdown_print(const Breakdown *bd, BreakdownFormat f, FILE *out)
{
  const RunReport *r = bd->r;
  g_autoptr(GArray) rows = rows_of(bd, bd->b->per_cpu, bd->b->n_cpus, NULL);
  g_autoptr(GString) s = g_string_new(NULL);
  double mhz = freq_mhz(r);
  if (f == BREAKDOWN_CSV) {
    g_string_append(s, "machine,workload");
    csv_label_header(s, bd->mode);
    csv_counter_header(s, bd);
    for (guint i = 0; i < rows->len; i++) {
      const Row *row = &g_array_index(rows, Row, i);
      CounterValues v;
      counter_values_from(&v, &row->c, bd->elapsed_cycles, mhz);
      csv_text(s, r->machine);
      g_string_append_c(s, ',');
      csv_text(s, r->workload);
      csv_label_row(s, bd->mode, row);
      csv_values(s, bd, &v);
      g_string_append_c(s, '\n');
    }
    fputs(s->str, out);
    return;
  }
  g_string_append_printf(s, "\n Performance counter stats for '%s'", r->workload ? r->workload : "");
  if (r->machine)
    g_string_append_printf(s, " on %s", r->machine);
  g_string_append_printf(s, ", %s:\n\n", mode_title(bd->mode));
  /* perf stat -A: under each counter, a row per CPU */
  for (unsigned k = 0; k < bd->n_ids; k++)
    for (guint i = 0; i < rows->len; i++) {
      const Row *row = &g_array_index(rows, Row, i);
      CounterValues v;
      counter_values_from(&v, &row->c, bd->elapsed_cycles, mhz);
      char b[64];
      text_prefix(s, bd->mode, row);
      g_string_append_printf(s, "%18s      %s\n", report_fmt_count(b, sizeof b, v.v[bd->ids[k]]),
                             counter_def(bd->ids[k])->name);
    }
  char secs[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf(s, "\n%18s seconds time elapsed (simulated)\n", g_ascii_formatd(secs, sizeof secs, "%.9f",
                         (double)bd->elapsed_cycles / (mhz * 1e6)));
  if (r->partial)
    g_string_append_printf(s, "\n (partial: %s)\n", r->partial);
  g_string_append_c(s, '\n');
  fputs(s->str, out);
}

void breakdown_json_add(const Breakdown *bd, JsonObject *report)
{
  static const char *member[] = { [BREAKDOWN_NONE] = "total", [BREAKDOWN_CPU] = "per_cpu", [BREAKDOWN_NODE] = "per_node",
                                  [BREAKDOWN_THREAD] = "per_thread" };
  g_autoptr(GArray) rows = rows_of(bd, bd->b->per_cpu, bd->b->n_cpus, NULL);
  g_autoptr(JsonBuilder) jb = json_builder_new();
  double mhz = freq_mhz(bd->r);
  json_builder_begin_array(jb);
  for (guint i = 0; i < rows->len; i++) {
    const Row *row = &g_array_index(rows, Row, i);
    CounterValues v;
    counter_values_from(&v, &row->c, bd->elapsed_cycles, mhz);
    json_builder_begin_object(jb);
    json_label(jb, bd->mode, row, cpus_per_node(bd->r));
    json_builder_set_member_name(jb, "counters");
    report_json_add_counter_values(jb, &v, bd->ids, bd->n_ids);
    json_builder_end_object(jb);
  }
  json_builder_end_array(jb);
  json_object_set_member(report, member[bd->mode], json_builder_get_root(jb));
}

/* ---- -I ------------------------------------------------------------------ */

static double seconds_of(const Breakdown *bd, uint64_t cycles)
{
  return (double)cycles / (freq_mhz(bd->r) * 1e6);
}

void breakdown_intervals_head(const Breakdown *bd, BreakdownFormat f, GString *s)
{
  const RunReport *r = bd->r;
  if (f == BREAKDOWN_CSV) {
    g_string_append(s, "machine,workload,interval,interval_start");
    csv_label_header(s, bd->mode);
    csv_counter_header(s, bd);
  } else if (f == BREAKDOWN_TEXT) {
    g_string_append_printf(s, "# counters of '%s' on %s in each interval of simulated time%s%s\n",
                           r->workload ? r->workload : "", r->machine ? r->machine : "", bd->mode ? ", " : "",
                           bd->mode ? mode_title(bd->mode) : "");
    g_string_append(s, "#           time");
    if (bd->mode == BREAKDOWN_CPU)
      g_string_append(s, " CPU    ");
    else if (bd->mode == BREAKDOWN_NODE)
      g_string_append(s, " node  cpus");
    g_string_append(s, "             counts events\n");
  }
}

void breakdown_interval_rows(const Breakdown *bd, BreakdownFormat f, const EngineInterval *iv, unsigned n_cpus, GString *s)
{
  const RunReport *r = bd->r;
  double mhz = freq_mhz(r);
  g_autoptr(GArray) rows = rows_of(bd, iv->per_cpu, n_cpus, &iv->total);
  char t_end[G_ASCII_DTOSTR_BUF_SIZE], t_start[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(t_end, sizeof t_end, "%.9f", seconds_of(bd, iv->end));
  g_ascii_formatd(t_start, sizeof t_start, "%.9f", seconds_of(bd, iv->start));
  for (guint j = 0; j < rows->len; j++) {
    const Row *row = &g_array_index(rows, Row, j);
    CounterValues v;
    counter_values_from(&v, &row->c, iv->end - iv->start, mhz);
    if (f == BREAKDOWN_CSV) {
      csv_text(s, r->machine);
      g_string_append_c(s, ',');
      csv_text(s, r->workload);
      g_string_append_printf(s, ",%s,%s", t_end, t_start);
      csv_label_row(s, bd->mode, row);
      csv_values(s, bd, &v);
      g_string_append_c(s, '\n');
    } else if (f == BREAKDOWN_JSON) {
      g_autoptr(JsonBuilder) jb = json_builder_new();
      json_builder_begin_object(jb);
      json_builder_set_member_name(jb, "interval");
      json_builder_add_double_value(jb, seconds_of(bd, iv->end));
      json_builder_set_member_name(jb, "interval_start");
      json_builder_add_double_value(jb, seconds_of(bd, iv->start));
      json_label(jb, bd->mode, row, cpus_per_node(r));
      json_builder_set_member_name(jb, "counters");
      report_json_add_counter_values(jb, &v, bd->ids, bd->n_ids);
      json_builder_end_object(jb);
      g_autoptr(JsonNode) root = json_builder_get_root(jb);
      g_autofree char *line = json_to_string(root, FALSE);
      g_string_append_printf(s, "%s\n", line);
    } else {
      for (unsigned k = 0; k < bd->n_ids; k++) {
        char b[64];
        g_string_append_printf(s, "%16s ", t_end);
        text_prefix(s, bd->mode, row);
        g_string_append_printf(s, "%18s      %s\n", report_fmt_count(b, sizeof b, v.v[bd->ids[k]]),
                               counter_def(bd->ids[k])->name);
      }
    }
  }
}

void breakdown_intervals_region(const Breakdown *bd, BreakdownFormat f, uint64_t start, GString *s)
{
  char t[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(t, sizeof t, "%.9f", seconds_of(bd, start));
  if (f == BREAKDOWN_TEXT)
    g_string_append_printf(s, "# a new region of interest begins at %s: the intervals above are outside it\n", t);
  else if (f == BREAKDOWN_JSON)
    g_string_append_printf(s, "{\"region_start\":%s}\n", t);
}

void breakdown_intervals_tail(const Breakdown *bd, BreakdownFormat f, GString *s)
{
  if (f == BREAKDOWN_TEXT && bd->r->partial)
    g_string_append_printf(s, "# partial: %s\n", bd->r->partial);
}

void breakdown_intervals_print(const Breakdown *bd, BreakdownFormat f, FILE *out)
{
  g_autoptr(GString) s = g_string_new(NULL);
  breakdown_intervals_head(bd, f, s);
  for (unsigned i = 0; i < bd->b->n_intervals; i++)
    breakdown_interval_rows(bd, f, &bd->b->intervals[i], bd->b->n_cpus, s);
  breakdown_intervals_tail(bd, f, s);
  fputs(s->str, out);
}

gboolean breakdown_interval_plot(const Breakdown *bd, const char *path, GError **error)
{
  const RunReport *r = bd->r;
  unsigned n = bd->b->n_intervals;
  /* one series a row kind: the total, or a node (or CPU) each */
  g_autoptr(GArray) first = n ? rows_of(bd, bd->b->intervals[0].per_cpu, bd->b->n_cpus, &bd->b->intervals[0].total)
                              : g_array_new(FALSE, TRUE, sizeof(Row));
  unsigned n_series = MAX(first->len, 1u);
  double *x = g_new0(double, n ? n : 1);
  double *y = g_new0(double, (gsize)MAX(n, 1u) * n_series * bd->n_ids);
  for (unsigned i = 0; i < n; i++) {
    const EngineInterval *iv = &bd->b->intervals[i];
    x[i] = seconds_of(bd, iv->end) * 1e3;
    g_autoptr(GArray) rows = rows_of(bd, iv->per_cpu, bd->b->n_cpus, &iv->total);
    for (guint j = 0; j < rows->len && j < n_series; j++) {
      CounterValues v;
      counter_values_from(&v, &g_array_index(rows, Row, j).c, iv->end - iv->start, freq_mhz(r));
      for (unsigned k = 0; k < bd->n_ids; k++)
        y[((gsize)k * n_series + j) * n + i] = v.v[bd->ids[k]];
    }
  }
  PlotPanel *panels = g_new0(PlotPanel, bd->n_ids);
  PlotSeries *series = g_new0(PlotSeries, (gsize)bd->n_ids * n_series);
  GPtrArray *strings = g_ptr_array_new_with_free_func(g_free);
  for (unsigned k = 0; k < bd->n_ids; k++) {
    const CounterDef *d = counter_def(bd->ids[k]);
    const char *ylabel = d->flags & CF_DERIVED ? "value in the interval" : "count in the interval";
    panels[k] = (PlotPanel){ d->name, ylabel, n_series, &series[(gsize)k * n_series] };
    for (unsigned j = 0; j < n_series; j++) {
      const Row *row = j < first->len ? &g_array_index(first, Row, j) : NULL;
      char *name = !row || (row->cpu < 0 && row->node < 0) ? g_strdup(d->name)
                   : bd->mode == BREAKDOWN_CPU         ? g_strdup_printf("CPU%d", row->cpu)
                                                       : g_strdup_printf("node %d (%u CPUs)", row->node, row->cpus);
      g_ptr_array_add(strings, name);
      series[(gsize)k * n_series + j] = (PlotSeries){ name, n, x, &y[((gsize)k * n_series + j) * n], NULL, NULL };
    }
  }
  char ms[G_ASCII_DTOSTR_BUF_SIZE], ms1[G_ASCII_DTOSTR_BUF_SIZE];
  unsigned merged = MAX(bd->b->interval_merged, 1u);
  double span_ms = bd->interval_ms * merged;
  g_autofree char *title = g_strdup_printf("%s on %s", r->workload ? r->workload : "", r->machine ? r->machine : "");
  g_autofree char *joined = merged > 1 ? g_strdup_printf(", each the sum of %u intervals of -I %s", merged,
                                                         g_ascii_formatd(ms1, sizeof ms1, "%g", bd->interval_ms))
                                       : g_strdup("");
  g_autofree char *sub = g_strdup_printf("counters in each interval of %s ms of simulated time (%u intervals%s)%s%s",
                                         g_ascii_formatd(ms, sizeof ms, "%g", span_ms), n, joined, bd->mode ? ", " : "",
                                         bd->mode ? mode_title(bd->mode) : "");
  Plot p = { .title = title, .subtitle = sub, .xlabel = "simulated time (ms, end of each interval)",
             .n_panels = bd->n_ids, .panels = panels };
  gboolean ok = plot_write(&p, path, error);
  g_ptr_array_free(strings, TRUE);
  g_free(series);
  g_free(panels);
  g_free(x);
  g_free(y);
  return ok;
}
