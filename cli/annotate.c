/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * annotate.c - the annotation report (annotate.h).
 *
 * Two tables, as `perf report --sort=symbol` and `--sort=dso` are two
 * views of one profile: instructions (process and address) and mappings
 * (process and VMA), each sorted by one metric, walk cycles by default,
 * with its share of the attributed total.  Above them the totals of the
 * counted region and what no access caused ("not attributed": the flushes
 * of mapping events, khugepaged's collapses, NUMA balancing's scans), so
 * that attributed + not attributed = the run's counters.
 */
#include "config.h"
#include "annotate.h"
#include "errors.h"
#include "outfile.h"
#include "record.h"

#include <stdlib.h>

#include <json-glib/json-glib.h>
#include <string.h>

/* The columns, in this order; the sort metric first of all. */
static const AnnMetric column_order[] = { ANN_WALK_CYCLES, ANN_PAGE_WALKS, ANN_TLB_MISSES, ANN_STLB_MISSES,
                                          ANN_PAGE_FAULTS, ANN_FAULT_CYCLES, ANN_ACCESSES };

gboolean annotate_metric_parse(const char *name, AnnMetric *out)
{
  for (unsigned i = 0; i < N_ANN; i++)
    if (strcmp(name, annotation_metric_name((AnnMetric)i)) == 0) {
      *out = (AnnMetric)i;
      return TRUE;
    }
  return FALSE;
}

char *annotate_metric_choices(void)
{
  GString *s = g_string_new(NULL);
  for (unsigned i = 0; i < G_N_ELEMENTS(column_order); i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", annotation_metric_name(column_order[i]));
  return g_string_free(s, FALSE);
}

/* The run's counters as metrics, and what the rows do not account for. */
static void totals(const AnnotateReport *r, AnnCounts *run, AnnCounts *attributed, AnnCounts *rest)
{
  Counters c = { { 0 } };
  for (unsigned i = 0; i < N_COUNTERS; i++)
    c.c[i] = r->counted ? (uint64_t)(r->counted->v[i] + 0.5) : 0;
  annotation_counts_of(&c, run);
  annotation_total(r->ann, attributed);
  for (unsigned i = 0; i < N_ANN; i++)
    rest->v[i] = run->v[i] > attributed->v[i] ? run->v[i] - attributed->v[i] : 0;
}

/* What a mapping row names: its range, protection and kind. */
static char *mapping_name(const AnnRow *row)
{
  if (row->start == row->end)
    return g_strdup("(no mapping: SIGSEGV)");
  const char *kind = row->flags & MAP_F_STACK ? "[stack]"
                     : row->flags & MAP_F_HUGETLB_1G ? "[hugetlb 1G]"
                     : row->flags & MAP_F_HUGETLB ? "[hugetlb]"
                     : row->flags & MAP_F_ONDEMAND ? "[made up: not mapped in the trace]"
                     : row->flags & MAP_F_FILE ? (row->flags & MAP_F_SHARED ? "[file shared]" : "[file]")
                     : row->flags & MAP_F_SHARED ? "[anon shared]"
                     : "[anon]";
  return g_strdup_printf("0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER "x %c%c%c %s", row->start, row->end,
                         row->prot & PROT_R ? 'r' : '-', row->prot & PROT_W ? 'w' : '-',
                         row->prot & PROT_X ? 'x' : '-', kind);
}

static char *ip_name(const AnnRow *row)
{
  return row->ip ? g_strdup_printf("0x%" G_GINT64_MODIFIER "x", row->ip) : g_strdup("(unknown)");
}

static void text_table(const AnnotateReport *r, FILE *out, const char *title, const char *what, const AnnRow *rows,
                       guint n, const AnnCounts *attributed, char *(*name)(const AnnRow *))
{
  guint shown = r->top && r->top < n ? r->top : n;
  fprintf(out, "\n%s, top %u of %u by %s:\n", title, shown, n, annotation_metric_name(r->sort));
  fprintf(out, "%14s %7s", annotation_metric_name(r->sort), "%");
  for (unsigned j = 0; j < G_N_ELEMENTS(column_order); j++)
    if (column_order[j] != r->sort)
      fprintf(out, " %12s", annotation_metric_name(column_order[j]));
  fprintf(out, " %5s  %s\n", "pid", what);
  uint64_t whole = attributed->v[r->sort];
  for (guint i = 0; i < shown; i++) {
    const AnnRow *row = &rows[i];
    fprintf(out, "%14" G_GUINT64_FORMAT " %6.2f%%", row->c.v[r->sort],
            whole ? 100.0 * (double)row->c.v[r->sort] / (double)whole : 0.0);
    for (unsigned j = 0; j < G_N_ELEMENTS(column_order); j++)
      if (column_order[j] != r->sort)
        fprintf(out, " %12" G_GUINT64_FORMAT, row->c.v[column_order[j]]);
    g_autofree char *nm = name(row);
    fprintf(out, " %5u  %s\n", row->pid, nm);
  }
}

static void text_counts(FILE *out, const char *label, const AnnCounts *c)
{
  fprintf(out, "# %s:", label);
  for (unsigned j = 0; j < G_N_ELEMENTS(column_order); j++)
    fprintf(out, "%s %s %" G_GUINT64_FORMAT, j ? "," : "", annotation_metric_name(column_order[j]),
            c->v[column_order[j]]);
  fputc('\n', out);
}

void annotate_text(const AnnotateReport *r, FILE *out)
{
  AnnCounts run, attributed, rest;
  totals(r, &run, &attributed, &rest);
  fprintf(out, "# mmusim annotate: %s on %s, the counted region\n", r->workload ? r->workload : "?",
          r->machine ? r->machine : "?");
  text_counts(out, "run", &run);
  text_counts(out, "not attributed to an access (mapping events, khugepaged, NUMA balancing)", &rest);
  if (!annotation_has_ips(r->ann))
    fprintf(out, "# the trace gives no instruction addresses (no ip, no fetch records): every access is (unknown)\n");
  guint n;
  g_autofree AnnRow *ips = annotation_by_ip(r->ann, r->sort, &n);
  text_table(r, out, "Instructions", "instruction", ips, n, &attributed, ip_name);
  g_autofree AnnRow *maps = annotation_by_region(r->ann, r->sort, &n);
  text_table(r, out, "Mappings", "mapping", maps, n, &attributed, mapping_name);
}

static void json_counts(JsonBuilder *jb, const char *member, const AnnCounts *c)
{
  if (member)
    json_builder_set_member_name(jb, member);
  json_builder_begin_object(jb);
  for (unsigned j = 0; j < G_N_ELEMENTS(column_order); j++) {
    json_builder_set_member_name(jb, annotation_metric_name(column_order[j]));
    json_builder_add_int_value(jb, (gint64)c->v[column_order[j]]);
  }
  json_builder_end_object(jb);
}

static void json_rows(JsonBuilder *jb, const AnnotateReport *r, const char *member, const AnnRow *rows, guint n,
                      gboolean mappings)
{
  guint shown = r->top && r->top < n ? r->top : n;
  json_builder_set_member_name(jb, member);
  json_builder_begin_array(jb);
  for (guint i = 0; i < shown; i++) {
    const AnnRow *row = &rows[i];
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "pid");
    json_builder_add_int_value(jb, row->pid);
    if (mappings) {
      g_autofree char *s = g_strdup_printf("0x%" G_GINT64_MODIFIER "x", row->start);
      g_autofree char *e = g_strdup_printf("0x%" G_GINT64_MODIFIER "x", row->end);
      g_autofree char *nm = mapping_name(row);
      json_builder_set_member_name(jb, "start");
      json_builder_add_string_value(jb, s);
      json_builder_set_member_name(jb, "end");
      json_builder_add_string_value(jb, e);
      json_builder_set_member_name(jb, "name");
      json_builder_add_string_value(jb, nm);
    } else {
      json_builder_set_member_name(jb, "ip");
      if (row->ip) {
        g_autofree char *s = g_strdup_printf("0x%" G_GINT64_MODIFIER "x", row->ip);
        json_builder_add_string_value(jb, s);
      } else {
        json_builder_add_null_value(jb);
      }
    }
    json_counts(jb, "counters", &row->c);
    json_builder_end_object(jb);
  }
  json_builder_end_array(jb);
  json_builder_set_member_name(jb, mappings ? "mappings_total" : "instructions_total");
  json_builder_add_int_value(jb, n);
}

void annotate_json(const AnnotateReport *r, FILE *out)
{
  AnnCounts run, attributed, rest;
  totals(r, &run, &attributed, &rest);
  g_autoptr(JsonBuilder) jb = json_builder_new();
  json_builder_begin_object(jb);
  json_builder_set_member_name(jb, "version");
  json_builder_add_string_value(jb, PACKAGE_VERSION);
  json_builder_set_member_name(jb, "machine");
  json_builder_add_string_value(jb, r->machine ? r->machine : "");
  json_builder_set_member_name(jb, "workload");
  json_builder_add_string_value(jb, r->workload ? r->workload : "");
  json_builder_set_member_name(jb, "sort");
  json_builder_add_string_value(jb, annotation_metric_name(r->sort));
  json_builder_set_member_name(jb, "top");
  json_builder_add_int_value(jb, r->top);
  json_counts(jb, "run", &run);
  json_counts(jb, "attributed", &attributed);
  json_counts(jb, "not_attributed", &rest);
  guint n;
  g_autofree AnnRow *ips = annotation_by_ip(r->ann, r->sort, &n);
  json_rows(jb, r, "instructions", ips, n, FALSE);
  g_autofree AnnRow *maps = annotation_by_region(r->ann, r->sort, &n);
  json_rows(jb, r, "mappings", maps, n, TRUE);
  json_builder_end_object(jb);
  g_autoptr(JsonNode) root = json_builder_get_root(jb);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, TRUE);
  json_generator_set_root(gen, root);
  g_autofree char *s = json_generator_to_data(gen, NULL);
  fprintf(out, "%s\n", s);
}

gboolean annotate_write(const AnnotateReport *r, const char *path, gboolean json_stdout, GError **error)
{
  gboolean json = g_str_has_suffix(path, ".json");
  if (strcmp(path, "-") == 0) {
    json = json_stdout;
    OutText text;
    FILE *mem = out_text_begin(&text);
    (json ? annotate_json : annotate_text)(r, mem);
    out_text_to_stdout(&text);
    return TRUE;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE, "run: --annotate: out of host memory");
    return FALSE;
  }
  (json ? annotate_json : annotate_text)(r, mem);
  fclose(mem);
  gboolean ok = out_file_set_contents(path, buf, len, error);
  free(buf);
  if (!ok)
    g_prefix_error(error, "run: --annotate: ");
  return ok;
}
