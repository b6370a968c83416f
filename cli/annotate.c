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
#include "symbols.h"

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

/* What a mapping row names: its range, protection, kind and file. */
static char *mapping_name(const Annotation *ann, const AnnRow *row)
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
  const AnnMapping *m = row->flags & MAP_F_FILE ? annotation_mapping_at(ann, row->pid, row->start) : NULL;
  return g_strdup_printf("0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER "x %c%c%c %s%s%s", row->start, row->end,
                         row->prot & PROT_R ? 'r' : '-', row->prot & PROT_W ? 'w' : '-',
                         row->prot & PROT_X ? 'x' : '-', kind, m && m->path ? " " : "", m && m->path ? m->path : "");
}

gboolean annotate_by_parse(const char *name, AnnotateBy *out)
{
  static const char *const names[] = { [ANNOTATE_BY_IP] = "ip", [ANNOTATE_BY_SYMBOL] = "symbol",
                                       [ANNOTATE_BY_DSO] = "dso" };
  for (unsigned i = 0; i < G_N_ELEMENTS(names); i++)
    if (strcmp(name, names[i]) == 0) {
      *out = (AnnotateBy)i;
      return TRUE;
    }
  return FALSE;
}

/* A row of the instruction table: its counts and what names it. */
typedef struct {
  AnnRow row;
  char *ip;          /* "0x109189", "(unknown)", or NULL when grouped by symbol or dso */
  const char *dso;   /* the object's path, or NULL: not in a named file mapping */
  const char *func;  /* its function, or NULL: unresolved */
  uint64_t func_off;
  const char *src;   /* its source file, or NULL */
  int line;
} InsnRow;

static void insn_rows_free(GArray *rows)
{
  for (guint i = 0; i < rows->len; i++)
    g_free(g_array_index(rows, InsnRow, i).ip);
  g_array_free(rows, TRUE);
}

static gint insn_cmp(gconstpointer p, gconstpointer q, gpointer data)
{
  const InsnRow *a = p, *b = q;
  AnnMetric m = *(const AnnMetric *)data;
  if (a->row.c.v[m] != b->row.c.v[m])
    return a->row.c.v[m] > b->row.c.v[m] ? -1 : 1;
  if (a->row.pid != b->row.pid)
    return a->row.pid < b->row.pid ? -1 : 1;
  return a->row.ip < b->row.ip ? -1 : a->row.ip > b->row.ip;
}

/* The instruction rows, named and grouped as r->by says, sorted by r->sort. */
static GArray *insn_rows(const AnnotateReport *r, Symbolizer *sym)
{
  guint n;
  g_autofree AnnRow *ips = annotation_by_ip(r->ann, r->sort, &n);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(InsnRow));
  GHashTable *groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL); /* key -> index + 1 */
  for (guint i = 0; i < n; i++) {
    InsnRow x = { .row = ips[i] };
    const AnnMapping *m = ips[i].ip ? annotation_mapping_at(r->ann, ips[i].pid, ips[i].ip) : NULL;
    x.dso = m ? m->path : NULL;
    SymInfo si = { 0 };
    if (x.dso && symbolizer_lookup(sym, x.dso, ips[i].ip - m->start + m->offset, &si)) {
      x.func = si.function;
      x.func_off = si.offset;
      x.src = si.file;
      x.line = si.line;
    }
    g_autofree char *key = NULL;
    if (r->by == ANNOTATE_BY_SYMBOL && x.func)
      key = g_strdup_printf("%u\x1f%s\x1f%s", x.row.pid, x.dso, x.func);
    else if (r->by == ANNOTATE_BY_DSO)
      key = g_strdup_printf("%u\x1f%s", x.row.pid, x.dso ? x.dso : "");
    gsize at = key ? GPOINTER_TO_SIZE(g_hash_table_lookup(groups, key)) : 0;
    if (at) {
      InsnRow *g = &g_array_index(out, InsnRow, at - 1);
      for (unsigned k = 0; k < N_ANN; k++)
        g->row.c.v[k] += x.row.c.v[k];
      continue;
    }
    if (key) {
      x.src = NULL; /* a group spans lines */
      x.row.ip = r->by == ANNOTATE_BY_DSO ? 0 : x.row.ip;
      g_hash_table_insert(groups, g_steal_pointer(&key), GSIZE_TO_POINTER((gsize)out->len + 1));
    } else {
      x.ip = ips[i].ip ? g_strdup_printf("0x%" G_GINT64_MODIFIER "x", ips[i].ip) : g_strdup("(unknown)");
    }
    if (r->by == ANNOTATE_BY_DSO)
      x.func = NULL;
    g_array_append_val(out, x);
  }
  g_hash_table_destroy(groups);
  AnnMetric key = r->sort;
  g_array_sort_with_data(out, insn_cmp, &key);
  return out; /* its names are the symbolizer's and the annotation's */
}

/* What names an instruction row: "hot_loop+0x19 (prog.c:9)"; the address
 * and [unresolved] for one in an object that names no function there (not
 * at hand, stripped); "?" outside a named file mapping. */
static char *symbol_text(const InsnRow *x)
{
  if (!x->func)
    return x->dso ? g_strdup("[unresolved]") : g_strdup("?");
  GString *s = g_string_new(x->func);
  if (x->ip && x->func_off)
    g_string_append_printf(s, "+0x%" G_GINT64_MODIFIER "x", x->func_off);
  if (x->ip && x->src)
    g_string_append_printf(s, " (%s:%d)", x->src, x->line);
  return g_string_free(s, FALSE);
}

/* The object: its file's name ("[unknown]" outside a named file mapping). */
static char *dso_text(const InsnRow *x)
{
  return x->dso ? g_path_get_basename(x->dso) : g_strdup("[unknown]");
}

static void text_table(const AnnotateReport *r, FILE *out, const char *title, const char *what, const AnnRow *rows,
                       guint n, const AnnCounts *attributed, char *(*name)(const Annotation *, const AnnRow *))
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
    g_autofree char *nm = name(r->ann, row);
    fprintf(out, " %5u  %s\n", row->pid, nm);
  }
}

static void insn_text_table(const AnnotateReport *r, FILE *out, GArray *rows, const AnnCounts *attributed)
{
  static const char *const titles[] = { "Instructions", "Functions (--by symbol)", "Objects (--by dso)" };
  guint n = rows->len, shown = r->top && r->top < n ? r->top : n;
  fprintf(out, "\n%s, top %u of %u by %s:\n", titles[r->by], shown, n, annotation_metric_name(r->sort));
  fprintf(out, "%14s %7s", annotation_metric_name(r->sort), "%");
  for (unsigned j = 0; j < G_N_ELEMENTS(column_order); j++)
    if (column_order[j] != r->sort)
      fprintf(out, " %12s", annotation_metric_name(column_order[j]));
  fprintf(out, " %5s  %s\n", "pid", r->by == ANNOTATE_BY_DSO ? "dso" : r->by == ANNOTATE_BY_SYMBOL ? "symbol  dso"
                                                                     : "instruction  symbol  dso");
  uint64_t whole = attributed->v[r->sort];
  for (guint i = 0; i < shown; i++) {
    const InsnRow *x = &g_array_index(rows, InsnRow, i);
    fprintf(out, "%14" G_GUINT64_FORMAT " %6.2f%%", x->row.c.v[r->sort],
            whole ? 100.0 * (double)x->row.c.v[r->sort] / (double)whole : 0.0);
    for (unsigned j = 0; j < G_N_ELEMENTS(column_order); j++)
      if (column_order[j] != r->sort)
        fprintf(out, " %12" G_GUINT64_FORMAT, x->row.c.v[column_order[j]]);
    g_autofree char *sym = symbol_text(x);
    g_autofree char *dso = dso_text(x);
    fprintf(out, " %5u", x->row.pid);
    if (x->ip)
      fprintf(out, "  %s", x->ip);
    if (r->by != ANNOTATE_BY_DSO)
      fprintf(out, "  %s", sym);
    fprintf(out, "  %s\n", dso);
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

/* What names the functions, when it is not libdw: addr2line (no offset
 * into a function), or nothing; and names left mangled for want of
 * libiberty. */
static void symbols_note(const AnnotateReport *r, FILE *out)
{
  const char *from = symbols_source();
#ifdef HAVE_LIBDW
  const char *why = "MMUSIM_NO_LIBDW is set";
#else
  const char *why = "built without libdw";
#endif
  if (!from)
    fprintf(out, "# %s and no addr2line on PATH: no symbols (Debian: apt-get install libdw-dev, then configure "
                 "again; or binutils)\n", why);
  else if (strcmp(from, "addr2line") == 0)
    fprintf(out, "# %s: symbols from addr2line, without offsets into the functions\n", why);
  else if (!r->no_demangle && !symbols_can_demangle())
    fprintf(out, "# built without libiberty: C++ names are mangled (Debian: apt-get install libiberty-dev, "
                 "then configure again)\n");
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
  symbols_note(r, out);
  guint n;
  Symbolizer *sym = symbolizer_new(r->symfs, !r->no_demangle);
  GArray *ips = insn_rows(r, sym);
  insn_text_table(r, out, ips, &attributed);
  insn_rows_free(ips);
  symbolizer_free(sym);
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
      g_autofree char *nm = mapping_name(r->ann, row);
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

static void json_string_or_null(JsonBuilder *jb, const char *member, const char *v)
{
  json_builder_set_member_name(jb, member);
  if (v) {
    g_autofree char *valid = g_utf8_make_valid(v, -1); /* a path is bytes; JSON is UTF-8 */
    json_builder_add_string_value(jb, valid);
  } else {
    json_builder_add_null_value(jb);
  }
}

static void json_insn_rows(JsonBuilder *jb, const AnnotateReport *r, GArray *rows)
{
  guint n = rows->len, shown = r->top && r->top < n ? r->top : n;
  json_builder_set_member_name(jb, "instructions");
  json_builder_begin_array(jb);
  for (guint i = 0; i < shown; i++) {
    const InsnRow *x = &g_array_index(rows, InsnRow, i);
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "pid");
    json_builder_add_int_value(jb, x->row.pid);
    if (r->by == ANNOTATE_BY_IP || x->ip)
      json_string_or_null(jb, "ip", x->row.ip ? x->ip : NULL);
    if (r->by != ANNOTATE_BY_DSO) {
      json_string_or_null(jb, "symbol", x->func);
      if (x->ip && x->func) {
        json_builder_set_member_name(jb, "symbol_offset");
        json_builder_add_int_value(jb, (gint64)x->func_off);
      }
      if (x->ip && x->src) {
        json_string_or_null(jb, "source", x->src);
        json_builder_set_member_name(jb, "line");
        json_builder_add_int_value(jb, x->line);
      }
    }
    json_string_or_null(jb, "dso", x->dso);
    json_builder_set_member_name(jb, "resolved");
    json_builder_add_boolean_value(jb, x->func != NULL);
    json_counts(jb, "counters", &x->row.c);
    json_builder_end_object(jb);
  }
  json_builder_end_array(jb);
  json_builder_set_member_name(jb, "instructions_total");
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
  static const char *const by_names[] = { "ip", "symbol", "dso" };
  json_builder_set_member_name(jb, "by");
  json_builder_add_string_value(jb, by_names[r->by]);
  json_builder_set_member_name(jb, "symbols");
  json_builder_add_boolean_value(jb, symbols_available());
  json_string_or_null(jb, "symbols_from", symbols_source());
  json_builder_set_member_name(jb, "demangled");
  json_builder_add_boolean_value(jb, !r->no_demangle && symbols_source() &&
                                       (symbols_can_demangle() || g_strcmp0(symbols_source(), "addr2line") == 0));
  guint n;
  Symbolizer *sym = symbolizer_new(r->symfs, !r->no_demangle);
  GArray *ips = insn_rows(r, sym);
  json_insn_rows(jb, r, ips);
  insn_rows_free(ips);
  symbolizer_free(sym);
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
