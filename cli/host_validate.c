/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_validate.c - the native chase of this host beside the model's.
 *
 * The order of work: the native bench (chase only) over the spans, then one
 * model run per (span, page size) through runner_run(), then with --fit two
 * more runs per fitted point, the fit, and one more run per point at the
 * fitted latency.  Native figures are medians of the bench's repeats; the
 * model is deterministic (one run, seed 1, as the bench's chain).
 *
 * Left out: the random-load kernel (bench reports it; the model's `random`
 * generator is a different stream).  --fit fits dram.latency_ns and, for a
 * guest, chooses what a guest cannot read (its host's and shadowing
 * hypervisor's page sizes, its share of the LLC) among a few values; no
 * other constant.
 */
#include "config.h"
#include "host_validate.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include "errors.h"
#include "host_detect.h"
#include "outfile.h"
#include "runner.h"
#include "settings.h"

/* The point that --fit measures the slope of dram.latency_ns at: the
 * latency plus this share of it. */
#define HOST_VALIDATE_FIT_STEP 0.5

/* ---- the default machine ---------------------------------------------------
 * The detected host (cli/host_detect.c), written to a temporary file that
 * the runner reads as it reads any machine file. */
gboolean host_validate_default_machine(char **path, char **text, GError **error)
{
  *path = *text = NULL;
  g_autofree char *t = host_detect_this_host(error);
  if (!t)
    return FALSE;
  g_autofree char *p = NULL;
  int fd = g_file_open_tmp("mmusim-host-XXXXXX.ini", &p, error);
  if (fd < 0)
    return FALSE;
  close(fd);
  if (!g_file_set_contents(p, t, -1, error)) {
    g_unlink(p);
    return FALSE;
  }
  *path = g_steal_pointer(&p);
  *text = g_steal_pointer(&t);
  return TRUE;
}

double host_validate_error(double model_ns, double native_ns)
{
  return native_ns > 0 ? (model_ns - native_ns) / native_ns : 0;
}

/* The lowest and highest 4K/THP ratio of one buffer's medians, buffer b of
 * 4K against buffer b of THP (the bench measures them one after the other);
 * the ratio of the medians when the buffers are not paired. */
static void buffer_ratio_range(const HostBenchPoint *k4, const HostBenchPoint *thp, double *lo, double *hi)
{
  *lo = *hi = k4->median_ns / thp->median_ns;
  unsigned n = MIN(k4->buffers, thp->buffers);
  for (unsigned b = 0; b < n; b++) {
    double q = k4->buffer_median_ns[b] / thp->buffer_median_ns[b];
    *lo = b ? MIN(*lo, q) : q;
    *hi = b ? MAX(*hi, q) : q;
  }
}

gboolean host_validate_fit_latency(const double *a, const double *b, const double *native, unsigned n, double *x)
{
  /* Residual i is c_i + d_i x with c_i = a_i / native_i - 1 and
   * d_i = b_i / native_i; the sum of squares is least at
   * x = -sum(c_i d_i) / sum(d_i^2). */
  double cd = 0, dd = 0;
  for (unsigned i = 0; i < n; i++) {
    double c = a[i] / native[i] - 1, d = b[i] / native[i];
    cd += c * d;
    dd += d * d;
  }
  if (dd == 0)
    return FALSE;
  *x = -cd / dd;
  return TRUE;
}

/* ---- one point ----------------------------------------------------------- */

typedef struct {
  uint64_t span_bytes;
  HostBenchPages pages;
  const HostBenchPoint *native;
  double model_ns;        /* the machine as given */
  double fitted_ns;       /* at the fitted latency (--fit) */
  gboolean fitted_on;     /* one of the points the fit used */
} ValidateRow;

typedef struct {
  const char *machine;
  uint64_t accesses, warmup;
  double latency_ns;      /* < 0: the machine's own */
  const char *host_page_size; /* virt.host_page_size; NULL: the machine's own */
  const char *shadow_page_size; /* virt.shadow_page_size; NULL: the machine's own */
  uint64_t llc_size;      /* cache.llc_size; 0: the machine's own */
} ModelSpec;

/* The model's ns per access of the chase at (span, pages). */
static gboolean model_point(const ModelSpec *ms, uint64_t span, HostBenchPages pages, double *ns, GError **error)
{
  g_autofree char *workload =
    g_strdup_printf("ptrchase:size=%" G_GUINT64_FORMAT ",line=%d,order=random,accesses=%" G_GUINT64_FORMAT,
                    (guint64)span, HOST_BENCH_SLOT_BYTES, (guint64)(ms->accesses + ms->warmup));
  g_autofree char *latency = ms->latency_ns >= 0 ? g_strdup_printf("dram.latency_ns=%.3f", ms->latency_ns) : NULL;
  g_autofree char *host_pages = ms->host_page_size ? g_strdup_printf("virt.host_page_size=%s", ms->host_page_size) : NULL;
  g_autofree char *shadow_pages =
    ms->shadow_page_size ? g_strdup_printf("virt.shadow_page_size=%s", ms->shadow_page_size) : NULL;
  g_autofree char *llc = ms->llc_size ? g_strdup_printf("cache.llc_size=%" G_GUINT64_FORMAT, (guint64)ms->llc_size) : NULL;
  const char *set[6] = { pages == HOST_BENCH_THP ? "thp.enabled=always" : "thp.enabled=never" };
  const char *origin[6] = { "host validate" };
  unsigned n_set = 1;
  const char *fitted[] = { latency, host_pages, shadow_pages, llc };
  for (unsigned i = 0; i < G_N_ELEMENTS(fitted); i++)
    if (fitted[i]) {
      origin[n_set] = "host validate --fit";
      set[n_set++] = fitted[i];
    }
  RunSpec spec = {
    .machine = ms->machine, .set = set, .set_origin = origin, .workload = workload, .repeat = 1,
    .seed_given = TRUE, .seed = HOST_BENCH_SEED, .warmup = ms->warmup,
  };
  RunOutcome out = { 0 };
  gboolean ok = runner_run(&spec, &out, error);
  if (ok && out.oom) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                "host validate: machine %s ran out of simulated memory for %s; give a machine file with more "
                "memory (machine.mem_per_node) or smaller --spans", ms->machine, workload);
    ok = FALSE;
  }
  if (ok)
    *ns = out.mean.v[CTR_NS_PER_ACCESS];
  run_outcome_clear(&out);
  return ok;
}

static gboolean model_all(const ModelSpec *ms, ValidateRow *rows, guint n, gboolean fitted, FILE *progress,
                          GError **error)
{
  for (guint i = 0; i < n; i++) {
    double *dst = fitted ? &rows[i].fitted_ns : &rows[i].model_ns;
    if (!model_point(ms, rows[i].span_bytes, rows[i].pages, dst, error))
      return FALSE;
    if (progress) {
      g_autofree char *span = settings_format_size(rows[i].span_bytes);
      fprintf(progress, "host validate: model %s %s %s: %.2f ns/access\n", fitted ? "(fitted)" : "", span,
              host_bench_pages_name(rows[i].pages), *dst);
    }
  }
  return TRUE;
}

/* ---- the fit --------------------------------------------------------------- */

/* The row of the other page size at the same span, or NULL. */
static const ValidateRow *partner(const ValidateRow *rows, guint n, const ValidateRow *r)
{
  for (guint i = 0; i < n; i++)
    if (rows[i].span_bytes == r->span_bytes && rows[i].pages != r->pages)
      return &rows[i];
  return NULL;
}

typedef struct {
  gboolean done;
  double base_latency_ns, latency_ns;
  guint fit_rows[4];      /* indices into rows: the 4K points the latency is fitted on, then their THP partners */
  guint n_fit;            /* 4K points */
  guint n_eval;           /* all fitted-on points */
  const char *host_page_size; /* chosen with nested paging (NULL: not fitted, the machine's own) */
  const char *shadow_page_size; /* chosen with shadow paging (NULL: not fitted, the machine's own) */
  uint64_t llc_size, base_llc_size; /* chosen for a guest (0: not fitted), and the machine's */
  unsigned n_llc;         /* the sizes tried */
  double sse;             /* sum of squared relative errors at the fitted-on points */
} FitResult;

/* dram.latency_ns fitted on the 4K points of f (linear in the latency: one
 * more run each at a stepped latency), and the squared relative error at
 * every fitted-on point with it, under the host page size of ms. */
static gboolean fit_latency(const ModelSpec *ms, ValidateRow *rows, FitResult *f, GError **error)
{
  double step = f->base_latency_ns * HOST_VALIDATE_FIT_STEP;
  ModelSpec base = *ms, stepped = *ms;
  base.latency_ns = -1;
  stepped.latency_ns = f->base_latency_ns + step;
  double a[2], b[2], native[2];
  for (guint k = 0; k < f->n_fit; k++) {
    ValidateRow *r = &rows[f->fit_rows[k]];
    double ns1, ns2;
    if (!model_point(&base, r->span_bytes, r->pages, &ns1, error) ||
        !model_point(&stepped, r->span_bytes, r->pages, &ns2, error))
      return FALSE;
    b[k] = (ns2 - ns1) / step;
    a[k] = ns1 - b[k] * f->base_latency_ns;
    native[k] = r->native->median_ns;
  }
  const SettingDef *def = settings_def(SET_DRAM_LATENCY_NS);
  if (!host_validate_fit_latency(a, b, native, f->n_fit, &f->latency_ns)) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                "host validate --fit: the model's chase does not depend on dram.latency_ns at these spans "
                "(every access hits a cache); give larger --spans");
    return FALSE;
  }
  f->latency_ns = CLAMP(f->latency_ns, def->min, def->max);
  ModelSpec fitted = *ms;
  fitted.latency_ns = f->latency_ns;
  f->sse = 0;
  for (guint k = 0; k < f->n_eval; k++) {
    const ValidateRow *r = &rows[f->fit_rows[k]];
    double ns;
    if (!model_point(&fitted, r->span_bytes, r->pages, &ns, error))
      return FALSE;
    double e = host_validate_error(ns, r->native->median_ns);
    f->sse += e * e;
  }
  return TRUE;
}

/* The fit: dram.latency_ns on the 4K chase at the smallest and the largest
 * span; with nested paging also the host's page size, which a guest cannot
 * read (virt.host_page_size: 4K, 2M or 1G, the one whose fitted model is
 * nearest the native figures at the same spans, 4K and THP), and with
 * shadow paging the shadowing hypervisor's (virt.shadow_page_size), which
 * it cannot read either: with both, the pair nearest; then, for any guest,
 * its share of the LLC with those sizes. */
static gboolean fit(const char *machine, const ModelSpec *ms, ValidateRow *rows, guint n, FitResult *f,
                    GError **error)
{
  /* The points: the 4K chase at the smallest and the largest span measured. */
  guint lo = G_MAXUINT, hi = G_MAXUINT;
  for (guint i = 0; i < n; i++) {
    if (rows[i].pages != HOST_BENCH_4K)
      continue;
    if (lo == G_MAXUINT || rows[i].span_bytes < rows[lo].span_bytes)
      lo = i;
    if (hi == G_MAXUINT || rows[i].span_bytes > rows[hi].span_bytes)
      hi = i;
  }
  if (lo == G_MAXUINT) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, "host validate --fit: no span was measured");
    return FALSE;
  }
  f->fit_rows[0] = lo;
  f->fit_rows[1] = hi;
  f->n_fit = lo == hi ? 1 : 2;
  f->n_eval = f->n_fit;
  RunSpec rs = { .machine = machine };
  g_autoptr(Settings) s = runner_settings(&rs, error);
  if (!s)
    return FALSE;
  f->base_latency_ns = settings_double(s, SET_DRAM_LATENCY_NS);
  gboolean nested = settings_bool(s, SET_VIRT_NESTED), shadow = settings_bool(s, SET_VIRT_SHADOW);
  if (nested || shadow) /* the THP chase at the same spans tells the page sizes apart */
    for (guint k = 0; k < f->n_fit; k++) {
      const ValidateRow *p = partner(rows, n, &rows[f->fit_rows[k]]);
      if (p)
        f->fit_rows[f->n_eval++] = (guint)(p - rows);
    }
  for (guint k = 0; k < f->n_eval; k++)
    rows[f->fit_rows[k]].fitted_on = TRUE;
  if (!nested && !shadow)
    return (f->done = fit_latency(ms, rows, f, error));
  /* Every pair of the sizes not read (one of them alone when only one is). */
  static const char *const sizes[] = { "4K", "2M", "1G" };
  FitResult best = { 0 };
  gboolean first = TRUE;
  for (unsigned i = 0; i < (nested ? G_N_ELEMENTS(sizes) : 1); i++) {
    for (unsigned j = 0; j < (shadow ? G_N_ELEMENTS(sizes) : 1); j++) {
      FitResult c = *f;
      ModelSpec m = *ms;
      m.host_page_size = c.host_page_size = nested ? sizes[i] : NULL;
      m.shadow_page_size = c.shadow_page_size = shadow ? sizes[j] : NULL;
      if (!fit_latency(&m, rows, &c, error))
        return FALSE;
      if (first || c.sse < best.sse)
        best = c;
      first = FALSE;
    }
  }
  /* Then, with those sizes, the guest's share of the last-level cache
   * (cache.llc_size: the machine's, halved down to the L2's size): the
   * others on the host use the rest of it, and a guest cannot tell how
   * much (doc/host.md, "The last-level cache"). */
  uint64_t l2 = (uint64_t)settings_int(s, SET_CACHE_L2_SIZE);
  best.base_llc_size = (uint64_t)settings_int(s, SET_CACHE_LLC_SIZE);
  FitResult with = best;
  for (uint64_t llc = best.base_llc_size / 2; llc >= l2 && llc > 0; llc /= 2) {
    FitResult c = with;
    ModelSpec m = *ms;
    m.host_page_size = c.host_page_size;
    m.shadow_page_size = c.shadow_page_size;
    m.llc_size = c.llc_size = llc;
    if (!fit_latency(&m, rows, &c, error))
      return FALSE;
    best.n_llc++;
    if (c.sse < best.sse) {
      c.n_llc = best.n_llc;
      best = c;
    }
  }
  if (best.n_llc && !best.llc_size)
    best.llc_size = best.base_llc_size; /* the machine's own was nearest */
  *f = best;
  f->done = TRUE;
  return TRUE;
}

/* ---- output ------------------------------------------------------------------ */

/* Mean and max of |error| over the rows with fitted_on == which. */
static void error_summary(const ValidateRow *rows, guint n, gboolean which, double *mean, double *max, guint *count)
{
  *mean = *max = 0;
  *count = 0;
  for (guint i = 0; i < n; i++) {
    if (rows[i].fitted_on != which)
      continue;
    double e = fabs(host_validate_error(rows[i].fitted_ns, rows[i].native->median_ns));
    *mean += e;
    *max = MAX(*max, e);
    (*count)++;
  }
  if (*count)
    *mean /= *count;
}

static const char *nested_note(const char *machine)
{
  if (!settings_lookup("virt.nested"))
    return "nested paging: not modelled by this build (no virt.nested); the model walks one dimension";
  RunSpec rs = { .machine = machine };
  g_autoptr(Settings) s = runner_settings(&rs, NULL);
  const SettingDef *def = settings_lookup("virt.nested");
  gboolean on = s && def && settings_bool(s, def->id);
  gboolean shadow = s && settings_bool(s, SET_VIRT_SHADOW);
  if (shadow)
    return on ? "nested paging: on (virt.nested = true), over shadow paging (virt.shadow = true)"
              : "nested paging: off (virt.nested = false); shadow paging: on (virt.shadow = true)";
  return on ? "nested paging: on (virt.nested = true)" : "nested paging: off (virt.nested = false)";
}

static void print_table(const HostBenchResult *bench, const char *machine, const ModelSpec *ms,
                        const ValidateRow *rows, guint n, const FitResult *f, GString *out)
{
  host_bench_print_host(bench, out);
  g_string_append(out, "# ran%: the share of the wall time the native chase ran (below 100: a loaded host; measure "
                       "again on a quiet one)\n# busy%: the share of the other CPUs' time they were busy meanwhile "
                       "(they share the caches)\n");
  g_string_append_printf(out,
                         "# model: %s, ptrchase:line=%d,order=random,seed=%d, %" G_GUINT64_FORMAT
                         " accesses counted after %" G_GUINT64_FORMAT " warm-up; 4K: thp.enabled=never, THP: "
                         "thp.enabled=always\n# %s\n",
                         machine, HOST_BENCH_SLOT_BYTES, HOST_BENCH_SEED, (guint64)ms->accesses,
                         (guint64)ms->warmup, nested_note(machine));
  g_string_append_printf(out, "%6s %-5s %10s %17s %5s %5s %6s %10s %8s", "span", "pages", "native_ns",
                         "native_min-max", "ran%", "busy%", "huge%", "model_ns", "error%");
  if (f->done)
    g_string_append_printf(out, " %10s %8s %-8s", "fitted_ns", "error%", "role");
  g_string_append(out, "\n");
  gboolean any_busy = FALSE;
  for (guint i = 0; i < n; i++) {
    const ValidateRow *r = &rows[i];
    g_autofree char *span = settings_format_size(r->span_bytes);
    g_autofree char *spread = g_strdup_printf("%.1f-%.1f", r->native->min_ns, r->native->max_ns);
    any_busy |= r->native->others_busy > HOST_BENCH_OTHERS_BUSY_OK;
    g_string_append_printf(out, "%6s %-5s %10.2f %17s %5.0f %5.0f %6.1f %10.2f %+8.1f", span,
                           host_bench_pages_name(r->pages), r->native->median_ns, spread, 100 * r->native->ran_share,
                           100 * r->native->others_busy, 100 * r->native->huge_fraction, r->model_ns,
                           100 * host_validate_error(r->model_ns, r->native->median_ns));
    if (f->done)
      g_string_append_printf(out, " %10.2f %+8.1f %-8s", r->fitted_ns,
                             100 * host_validate_error(r->fitted_ns, r->native->median_ns),
                             r->fitted_on ? "fitted" : "held-out");
    g_string_append(out, "\n");
  }
  if (any_busy)
    host_bench_append_busy_warning(out);
  g_string_append_printf(out, "\n# 4K/THP ratio of ns per access; native_buffers: the lowest and highest ratio of "
                              "one 4K buffer to the THP buffer measured after it\n%6s %8s %15s %8s %8s",
                         "span", "native", "native_buffers", "model", "error%");
  if (f->done)
    g_string_append_printf(out, " %8s %8s", "fitted", "error%");
  g_string_append(out, "\n");
  for (guint i = 0; i < n; i++) {
    const ValidateRow *r = &rows[i], *t = partner(rows, n, r);
    if (r->pages != HOST_BENCH_4K || !t)
      continue;
    g_autofree char *span = settings_format_size(r->span_bytes);
    double nat = r->native->median_ns / t->native->median_ns, mod = r->model_ns / t->model_ns, lo, hi;
    buffer_ratio_range(r->native, t->native, &lo, &hi);
    g_autofree char *range = g_strdup_printf("%.3f-%.3f", lo, hi);
    g_string_append_printf(out, "%6s %8.3f %15s %8.3f %+8.1f", span, nat, range, mod,
                           100 * host_validate_error(mod, nat));
    if (f->done) {
      double fit = r->fitted_ns / t->fitted_ns;
      g_string_append_printf(out, " %8.3f %+8.1f", fit, 100 * host_validate_error(fit, nat));
    }
    g_string_append(out, "\n");
  }
  if (f->done) {
    double mean, max;
    guint count;
    g_string_append_printf(out, "\n# fitted: dram.latency_ns = %.1f (the machine's %.1f), on the 4K chase at the "
                                "smallest and the largest span\n", f->latency_ns, f->base_latency_ns);
    if (f->host_page_size)
      g_string_append_printf(out, "# fitted: virt.host_page_size = %s (a guest cannot read it: of 4K, 2M and 1G, the one "
                                  "nearest the native 4K and THP chase at those spans)\n", f->host_page_size);
    if (f->shadow_page_size)
      g_string_append_printf(out, "# fitted: virt.shadow_page_size = %s (a guest cannot read it either: chosen the same "
                                  "way%s)\n", f->shadow_page_size, f->host_page_size ? ", with the host's, as a pair" : "");
    if (f->n_llc) {
      g_autofree char *llc = settings_format_size(f->llc_size), *base = settings_format_size(f->base_llc_size);
      g_string_append_printf(out, "# fitted: cache.llc_size = %s (the machine's %s: a guest's share of the host's "
                                  "last-level cache, which it cannot read; of the machine's and %u halvings, the one "
                                  "nearest at those spans)\n", llc, base, f->n_llc);
    }
    error_summary(rows, n, TRUE, &mean, &max, &count);
    g_string_append_printf(out, "# fitted on: %u points, mean |error| %.1f%%, max %.1f%%\n", count, 100 * mean,
                           100 * max);
    error_summary(rows, n, FALSE, &mean, &max, &count);
    g_string_append_printf(out, "# held out:  %u points, mean |error| %.1f%%, max %.1f%%\n", count, 100 * mean,
                           100 * max);
  }
}

static void json_double(JsonBuilder *jb, const char *name, double v)
{
  json_builder_set_member_name(jb, name);
  json_builder_add_double_value(jb, v);
}

static char *print_json(const HostBenchResult *bench, const char *machine, const ModelSpec *ms,
                        const ValidateRow *rows, guint n, const FitResult *f)
{
  g_autoptr(JsonBuilder) jb = json_builder_new();
  json_builder_begin_object(jb);
  json_builder_set_member_name(jb, "host");
  json_builder_begin_object(jb);
  host_bench_json_host(bench, jb);
  json_builder_end_object(jb);
  json_builder_set_member_name(jb, "model");
  json_builder_begin_object(jb);
  json_builder_set_member_name(jb, "machine");
  json_builder_add_string_value(jb, machine);
  json_builder_set_member_name(jb, "accesses");
  json_builder_add_int_value(jb, (gint64)ms->accesses);
  json_builder_set_member_name(jb, "warmup");
  json_builder_add_int_value(jb, (gint64)ms->warmup);
  json_builder_set_member_name(jb, "nested");
  json_builder_add_string_value(jb, nested_note(machine));
  json_builder_end_object(jb);
  json_builder_set_member_name(jb, "points");
  json_builder_begin_array(jb);
  for (guint i = 0; i < n; i++) {
    const ValidateRow *r = &rows[i], *t = partner(rows, n, r);
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "span_bytes");
    json_builder_add_int_value(jb, (gint64)r->span_bytes);
    json_builder_set_member_name(jb, "pages");
    json_builder_add_string_value(jb, host_bench_pages_name(r->pages));
    json_double(jb, "native_ns", r->native->median_ns);
    json_double(jb, "native_min_ns", r->native->min_ns);
    json_double(jb, "native_max_ns", r->native->max_ns);
    json_double(jb, "huge_fraction", r->native->huge_fraction);
    json_double(jb, "ran_share", r->native->ran_share);
    json_double(jb, "others_busy", r->native->others_busy);
    json_double(jb, "model_ns", r->model_ns);
    json_double(jb, "error", host_validate_error(r->model_ns, r->native->median_ns));
    if (f->done) {
      json_double(jb, "fitted_ns", r->fitted_ns);
      json_double(jb, "fitted_error", host_validate_error(r->fitted_ns, r->native->median_ns));
      json_builder_set_member_name(jb, "role");
      json_builder_add_string_value(jb, r->fitted_on ? "fitted" : "held-out");
    }
    if (r->pages == HOST_BENCH_4K && t) {
      json_double(jb, "native_4k_thp_ratio", r->native->median_ns / t->native->median_ns);
      double lo, hi;
      buffer_ratio_range(r->native, t->native, &lo, &hi);
      json_double(jb, "native_4k_thp_ratio_min", lo);
      json_double(jb, "native_4k_thp_ratio_max", hi);
      json_double(jb, "model_4k_thp_ratio", r->model_ns / t->model_ns);
      if (f->done)
        json_double(jb, "fitted_4k_thp_ratio", r->fitted_ns / t->fitted_ns);
    }
    json_builder_end_object(jb);
  }
  json_builder_end_array(jb);
  if (f->done) {
    json_builder_set_member_name(jb, "fit");
    json_builder_begin_object(jb);
    json_double(jb, "dram_latency_ns", f->latency_ns);
    json_double(jb, "machine_dram_latency_ns", f->base_latency_ns);
    if (f->host_page_size) {
      json_builder_set_member_name(jb, "host_page_size");
      json_builder_add_string_value(jb, f->host_page_size);
    }
    if (f->n_llc) {
      json_builder_set_member_name(jb, "llc_size");
      json_builder_add_int_value(jb, (gint64)f->llc_size);
      json_builder_set_member_name(jb, "machine_llc_size");
      json_builder_add_int_value(jb, (gint64)f->base_llc_size);
    }
    if (f->shadow_page_size) {
      json_builder_set_member_name(jb, "shadow_page_size");
      json_builder_add_string_value(jb, f->shadow_page_size);
    }
    json_builder_end_object(jb);
  }
  json_builder_end_object(jb);
  return host_bench_json_text(jb);
}

/* The machine file of --fit -o: the machine, with the fitted line. */
/* `text` (a machine file) with the line of `key` in [group] (and a "# from
 * preset" comment above it) replaced by `lines`; the group is added at the
 * end when the text has none, the key at the group's end when it has none. */
static char *replace_key(const char *text, const char *group, const char *key, const char *lines)
{
  GString *s = g_string_new(NULL);
  g_auto(GStrv) l = g_strsplit(text, "\n", -1);
  g_autofree char *header = g_strdup_printf("[%s]", group);
  gboolean in = FALSE, done = FALSE;
  for (unsigned i = 0; l[i]; i++) {
    if (l[i][0] == '[') {
      if (in && !done) { /* the group ends without the key */
        g_string_append_printf(s, "%s\n\n", lines);
        done = TRUE;
      }
      in = strcmp(l[i], header) == 0;
    }
    const char *p = l[i];
    if (in && !done && g_str_has_prefix(p, key) && (p[strlen(key)] == ' ' || p[strlen(key)] == '=')) {
      if (i > 0 && g_str_has_prefix(l[i - 1], "# from preset")) { /* it said where the old value came from */
        gsize cut = s->len ? s->len - 1 : 0;
        while (cut > 0 && s->str[cut - 1] != '\n')
          cut--;
        g_string_truncate(s, cut);
      }
      g_string_append(s, lines);
      done = TRUE;
    } else {
      g_string_append(s, p);
    }
    if (l[i + 1])
      g_string_append_c(s, '\n');
  }
  if (!done)
    g_string_append_printf(s, in ? "%s\n" : "\n%s\n%s\n", in ? lines : header, lines);
  return g_string_free(s, FALSE);
}

/* The fitted machine file: with -m, one that inherits the machine given;
 * without, the detected host's file itself with the fitted latency. */
static char *fitted_ini(const HostBenchResult *bench, const char *machine, const char *detected_text,
                        const ValidateRow *rows, const FitResult *f)
{
  GString *s = g_string_new(NULL);
  g_autoptr(GDateTime) now = g_date_time_new_now_utc();
  g_autofree char *date = g_date_time_format(now, "%Y-%m-%d");
  /* A path is written absolute, so that the file works from any folder. */
  g_autofree char *parent = strchr(machine, '/') || g_str_has_suffix(machine, ".ini")
                              ? g_canonicalize_filename(machine, NULL)
                              : g_strdup(machine);
  g_string_append_printf(s, "# Written by mmusim host validate --fit on %s, on %s (%s, kernel %s, THP %s).\n",
                         date, bench->cpu_model ? bench->cpu_model : "an unknown CPU",
                         bench->virtualised ? "virtualised" : "bare metal", bench->kernel,
                         bench->thp_enabled ? bench->thp_enabled : "unknown");
  GString *lat = g_string_new("# FITTED, not from a manual: the least-squares fit of the native pointer chase\n"
                              "# (4K pages, 64-byte slots, random cycle) at these points, the others held out:\n");
  for (guint k = 0; k < f->n_fit; k++) {
    const ValidateRow *r = &rows[f->fit_rows[k]];
    g_autofree char *span = settings_format_size(r->span_bytes);
    g_string_append_printf(lat, "#   span %s: native %.2f ns per access (median)\n", span, r->native->median_ns);
  }
  g_string_append_printf(lat, "# The machine's own value was %.1f.\nlatency_ns = %.1f", f->base_latency_ns, f->latency_ns);
  g_autofree char *pages = f->host_page_size
    ? g_strdup_printf("# FITTED, not read: a guest cannot see how its host backs its memory; of 4K, 2M and 1G the\n"
                      "# one whose model, with the latency above, is nearest the native 4K and THP chase at the\n"
                      "# points above.\nhost_page_size = %s", f->host_page_size)
    : NULL;
  g_autofree char *shadow_pages = f->shadow_page_size
    ? g_strdup_printf("# FITTED, not read: a guest cannot see how its shadowing hypervisor backs its memory;\n"
                      "# chosen the same way.\nshadow_page_size = %s", f->shadow_page_size)
    : NULL;
  g_autofree char *llc_size = f->n_llc ? settings_format_size(f->llc_size) : NULL;
  g_autofree char *llc = llc_size
    ? g_strdup_printf("# FITTED, not read: a guest's share of the host's last-level cache, which it cannot\n"
                      "# see; of the machine's size and its halvings, the one nearest at the points above.\n"
                      "llc_size = %s", llc_size)
    : NULL;
  if (detected_text) {
    g_autofree char *t1 = replace_key(detected_text, "dram", "latency_ns", lat->str);
    g_autofree char *t2 = pages ? replace_key(t1, "virt", "host_page_size", pages) : g_strdup(t1);
    g_autofree char *t3 = shadow_pages ? replace_key(t2, "virt", "shadow_page_size", shadow_pages) : g_strdup(t2);
    g_autofree char *t4 = llc ? replace_key(t3, "cache", "llc_size", llc) : g_strdup(t3);
    g_string_append(s, t4);
    g_string_append_c(s, '\n');
  } else {
    g_string_append_printf(s, "[machine]\ninherit = %s\ndescription = %s with dram.latency_ns fitted to this host\n\n",
                           parent, machine);
    g_string_append_printf(s, "[dram]\n%s\n", lat->str);
    if (llc)
      g_string_append_printf(s, "\n[cache]\n%s\n", llc);
    if (pages || shadow_pages)
      g_string_append_printf(s, "\n[virt]\n%s%s%s\n", pages ? pages : "", pages && shadow_pages ? "\n" : "",
                             shadow_pages ? shadow_pages : "");
  }
  g_string_free(lat, TRUE);
  return g_string_free(s, FALSE);
}

/* ---- the command ----------------------------------------------------------- */

static int fail(GError *err)
{
  int rc = out_file_exit_status(err);
  fprintf(stderr, "mmusim: %s\n", err->message);
  g_error_free(err);
  return rc;
}

static int host_validate_run(HostBenchOptions *op, const char *machine, const char *detected, gboolean do_fit,
                             const char *output);

int host_validate_main(int argc, char **argv)
{
  g_autofree char *machine_opt = NULL, *output = NULL;
  gboolean do_fit = FALSE;
  HostBenchOptions o;
  GOptionEntry entries[] = {
    { "machine", 'm', 0, G_OPTION_ARG_STRING, &machine_opt,
      "machine preset or .ini file (default: this host, as `mmusim host detect` writes it)", "MACHINE" },
    { "fit", 0, 0, G_OPTION_ARG_NONE, &do_fit,
      "fit dram.latency_ns on the 4K chase at the smallest and largest span (and, in a guest, choose the host's page "
      "sizes and the LLC share on those spans); report the rest as held out", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "with --fit: write the fitted machine file to FILE.ini",
      "FILE.ini" },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- the host's native pointer chase beside the model's");
  g_option_context_add_main_entries(ctx, entries, NULL);
  host_bench_options_add(ctx, &o);
  int rc = host_bench_options_parse(ctx, &argc, &argv, "validate", &o);
  if (!rc && output && !do_fit) {
    fprintf(stderr, "mmusim: host validate: -o writes the fitted machine file: give it with --fit (the table goes "
                    "to standard output)\n");
    rc = 2;
  }
  if (rc) {
    host_bench_options_clear(&o);
    return rc;
  }
  GError *err = NULL;
  g_autofree char *machine = NULL, *detected = NULL;
  if (machine_opt) {
    machine = g_strdup(machine_opt);
  } else if (!host_validate_default_machine(&machine, &detected, &err)) {
    host_bench_options_clear(&o);
    g_prefix_error(&err, "host validate: cannot detect this host (give a machine with -m): ");
    return fail(err);
  }
  int rc_out = host_validate_run(&o, machine, detected, do_fit, output);
  if (detected)
    g_unlink(machine);
  return rc_out;
}

/* validate on `machine` (the detected host's temporary file when `detected`,
 * its text, is given): bench, model, fit, print; frees *op's options. */
static int host_validate_run(HostBenchOptions *op, const char *machine, const char *detected, gboolean do_fit,
                             const char *output)
{
  HostBenchOptions o = *op;
  GError *err = NULL;
  /* A bad machine file is found now, not after the native bench. */
  RunSpec check = { .machine = machine };
  Settings *s = runner_settings(&check, &err);
  if (!s) {
    host_bench_options_clear(&o);
    return fail(err);
  }
  settings_free(s);
  HostBenchSpec bs = host_bench_options_spec(&o);
  bs.chase_only = TRUE;
  FILE *progress = bs.progress;
  gboolean json = o.json;
  HostBenchResult bench;
  gboolean measured = host_bench_run(&bs, &bench, &err);
  host_bench_options_clear(&o);
  if (!measured) {
    host_bench_result_clear(&bench);
    fprintf(stderr, "mmusim: %s\n", err->message);
    g_error_free(err);
    return 1;
  }
  ValidateRow *rows = g_new0(ValidateRow, bench.n_points);
  guint n = 0;
  for (guint i = 0; i < bench.n_points; i++)
    rows[n++] = (ValidateRow){ .span_bytes = bench.points[i].span_bytes, .pages = bench.points[i].pages,
                               .native = &bench.points[i] };
  ModelSpec ms = { .machine = machine, .accesses = HOST_VALIDATE_ACCESSES, .warmup = HOST_VALIDATE_WARMUP,
                   .latency_ns = -1 };
  FitResult f = { 0 };
  gboolean ok = model_all(&ms, rows, n, FALSE, progress, &err);
  if (ok && do_fit && (ok = fit(machine, &ms, rows, n, &f, &err))) {
    ModelSpec fitted = ms;
    fitted.latency_ns = f.latency_ns;
    fitted.host_page_size = f.host_page_size;
    fitted.shadow_page_size = f.shadow_page_size;
    fitted.llc_size = f.llc_size;
    ok = model_all(&fitted, rows, n, TRUE, progress, &err);
  }
  g_autofree char *text = NULL, *ini = NULL;
  if (ok) {
    if (json) {
      text = print_json(&bench, machine, &ms, rows, n, &f);
    } else {
      GString *t = g_string_new(NULL);
      print_table(&bench, machine, &ms, rows, n, &f, t);
      text = g_string_free(t, FALSE);
    }
    if (do_fit && output)
      ini = fitted_ini(&bench, machine, detected, rows, &f);
  }
  g_free(rows);
  host_bench_result_clear(&bench);
  if (!ok)
    return fail(err);
  if ((ini && !out_file_set_contents(output, ini, strlen(ini), &err)) ||
      !out_file_set_contents("-", text, strlen(text), &err))
    return fail(err);
  return 0;
}
