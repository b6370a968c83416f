/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * workload.c - the registry of workload generators, the parsing of a spec
 * "name:key=value,..." and the record stream every generator shares.
 *
 * A generator imitates a benchmark the way the benchmark runs: it maps its
 * memory, sets it up (a memset or the building of a chain touches every
 * line), and only then measures.  The stream is therefore, in order:
 *
 *   thread (pid 1, tid 1, cpu -1 unless the generator pins it)
 *   mmap WORKLOAD_BASE_VA, size rounded up to 2M, rw [hugetlb]
 *     (a generator may place and size it otherwise, and flag it stack)
 *   setup: one 8-byte W per setup stride in address order (gap 0)
 *     (or in the order the generator's setup hook gives, which may start
 *     more threads of the process and give each access its thread)
 *   roi begin
 *   `accesses` measured accesses, from the generator, each after `gap`
 *   roi end
 *
 * The stream is produced batch by batch from O(1) state, so a run of 10^10
 * accesses over a terabyte costs no host memory.  Parameter values are
 * checked once, here, against the tables of workload_impl.h; generators
 * check only combinations (line <= size).
 *
 * A generator of several threads (threads, jbb) gives every access its
 * thread id; the engine queues each thread's records apart and runs them in
 * simulated-time order, so the order they interleave in here does not
 * decide the simulated one.
 *
 * Left out: processes beyond pid 1 and phases after the measured one.
 */
#include "config.h"
#include "workload_impl.h"
#include "settings.h"

#include <math.h>
#include <string.h>

/* The registry (base/registry.h): adding a generator is one row here and
 * one gen_*.c file. */
static const WorkloadGenerator *const generators[] = {
  &gen_ptrchase,
  &gen_random,
  &gen_seq,
  &gen_stream,
  &gen_video,
  &gen_gups,
  &gen_hashjoin,
  &gen_graph,
  &gen_threads,
  &gen_jbb,
};

const WorkloadGenerator *const *workload_generators(unsigned *n)
{
  *n = G_N_ELEMENTS(generators);
  return generators;
}

/* Parameters every generator takes (DESIGN.md, "Command-line contract"). */
static const WorkloadParam common_params[] = {
  { "size", WPARAM_SIZE, "64M", NULL, WORKLOAD_MIN_SIZE_BYTES, WORKLOAD_VA_END - WORKLOAD_BASE_VA,
    "bytes of memory it works on, mapped at 0x7f0000000000 in whole 2M pages" },
  { "accesses", WPARAM_COUNT, "1M", NULL, 0, UINT64_MAX, "memory accesses in the measured phase (the region of interest)" },
  { "seed", WPARAM_COUNT, "1", NULL, 0, UINT64_MAX, "seed of its random choices; `--seed N` replaces it" },
  { "gap", WPARAM_COUNT, "0", NULL, 0, UINT32_MAX, "non-memory instructions before each measured access" },
  { "backing", WPARAM_CHOICE, "anon", "anon|hugetlb", 0, 0,
    "anon: anonymous memory (THP as thp.enabled says); hugetlb: pages of the hugetlbfs pool (-s hugetlb.nr_hugepages=N)" },
  { "thp", WPARAM_CHOICE, "default", "default|disable|hugepage|nohugepage", 0, 0,
    "disable: prctl(PR_SET_THP_DISABLE) before the mapping; hugepage, nohugepage: madvise the mapping; default: neither" },
  { NULL },
};
enum { P_SIZE, P_ACCESSES, P_SEED, P_GAP, P_BACKING, P_THP, N_COMMON };
/* Choices of `thp`, in the order of its table row. */
enum { WTHP_DEFAULT, WTHP_DISABLE, WTHP_HUGEPAGE, WTHP_NOHUGEPAGE };

#define MAX_PARAMS (N_COMMON + WORKLOAD_MAX_OWN_PARAMS)

typedef enum { PHASE_THREAD, PHASE_PRCTL, PHASE_MMAP, PHASE_ADVISE, PHASE_SETUP, PHASE_ROI_BEGIN, PHASE_MEASURED, PHASE_ROI_END, PHASE_DONE } Phase;

typedef struct {
  TraceSource base;
  WorkloadConfig cfg;
  char *text[MAX_PARAMS]; /* normalised values: common, then own */
  gpointer state;         /* the generator's */
  Phase phase;
  uint64_t i;             /* records done in the current phase */
  unsigned thp;           /* WTHP_*: the `thp` parameter */
} WorkloadSource;

/* ---- parameter values --------------------------------------------------- */

static unsigned count_params(const WorkloadParam *p)
{
  unsigned n = 0;
  while (p && p[n].key)
    n++;
  return n;
}

/* Index of `text` among the '|'-separated choices, or -1. */
static int choice_index(const char *choices, const char *text)
{
  size_t len = strlen(text);
  int k = 0;
  for (const char *c = choices; *c; k++) {
    const char *bar = strchr(c, '|');
    size_t clen = bar ? (size_t)(bar - c) : strlen(c);
    if (clen == len && strncmp(c, text, len) == 0)
      return k;
    if (!bar)
      break;
    c = bar + 1;
  }
  return -1;
}

/* Parse and check one value; on success *norm is its normalised text. */
static gboolean parse_value(const WorkloadParam *p, const char *text, WorkloadValue *v, char **norm)
{
  switch (p->type) {
  case WPARAM_SIZE:
  case WPARAM_COUNT: {
    uint64_t x;
    gboolean ok = p->type == WPARAM_SIZE ? settings_parse_size(text, &x) : settings_parse_count(text, &x);
    if (!ok || x < p->min || x > p->max)
      return FALSE;
    v->u = x;
    *norm = p->type == WPARAM_SIZE ? settings_format_size(x) : g_strdup_printf("%" G_GUINT64_FORMAT, x);
    return TRUE;
  }
  case WPARAM_FRACTION: {
    char *end;
    double x = g_ascii_strtod(text, &end);
    if (end == text || *end || !isfinite(x) || x < 0 || x > 1)
      return FALSE;
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    v->frac = x;
    *norm = g_strdup(g_ascii_formatd(buf, sizeof buf, "%g", x));
    return TRUE;
  }
  case WPARAM_CHOICE: {
    int k = choice_index(p->choices, text);
    if (k < 0)
      return FALSE;
    v->choice = (unsigned)k;
    *norm = g_strdup(text);
    return TRUE;
  }
  }
  return FALSE;
}

/* What a value of `p` may be, for messages. */
static char *param_expected(const WorkloadParam *p)
{
  switch (p->type) {
  case WPARAM_SIZE: {
    g_autofree char *lo = settings_format_size(p->min);
    g_autofree char *hi = settings_format_size(p->max);
    return g_strdup_printf("a size in bytes (K/M/G = powers of 1024) from %s to %s", lo, hi);
  }
  case WPARAM_COUNT:
    if (p->max == UINT64_MAX)
      return g_strdup_printf("a count (K/M/G = powers of 1000) of at least %" G_GUINT64_FORMAT, p->min);
    return g_strdup_printf("a count (K/M/G = powers of 1000) from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT, p->min,
                           p->max);
  case WPARAM_FRACTION:
    return g_strdup("a fraction from 0 to 1");
  case WPARAM_CHOICE: {
    g_auto(GStrv) names = g_strsplit(p->choices, "|", -1);
    g_autofree char *list = g_strjoinv(" or ", names);
    return g_strconcat("one of ", list, NULL);
  }
  }
  return g_strdup("?");
}

static void set_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void set_error(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_WORKLOAD, msg);
}

static void bad_value(GError **error, const char *gen, const WorkloadParam *p, const char *text)
{
  g_autofree char *expected = param_expected(p);
  set_error(error, "workload %s: bad value '%s' for %s; expected %s", gen, text, p->key, expected);
}

gpointer workload_reject(const WorkloadConfig *cfg, const char *key, const char *expected, GError **error)
{
  const char *text = "?";
  for (unsigned k = 0; k < N_COMMON; k++)
    if (strcmp(common_params[k].key, key) == 0)
      text = cfg->common_text[k];
  for (unsigned k = 0; cfg->gen->params && cfg->gen->params[k].key; k++)
    if (strcmp(cfg->gen->params[k].key, key) == 0)
      text = cfg->own_text[k];
  set_error(error, "workload %s: bad value '%s' for %s; expected %s", cfg->gen->name, text, key, expected);
  return NULL;
}

void workload_mix_init(WorkloadMix *m, double store_fraction)
{
  m->acc = 0;
  m->step = (uint64_t)llround(store_fraction * 4294967296.0);
}

/* ---- the record stream -------------------------------------------------- */

static gboolean workload_next_batch(TraceSource *src, TraceBatch *batch, GError **error)
{
  WorkloadSource *w = (WorkloadSource *)src;
  const WorkloadConfig *c = &w->cfg;
  const TraceRecord proto = { .type = REC_ACCESS, .kind = ACC_LOAD, .size = WORKLOAD_WORD_BYTES, .pid = 1, .tid = 1 };
  unsigned n = 0;
  gboolean thread_record = FALSE;
  while (n < TRACE_BATCH_MAX && w->phase != PHASE_DONE) {
    TraceRecord *r = &batch->rec[n];
    *r = proto;
    switch (w->phase) {
    case PHASE_THREAD:
      thread_record = TRUE;
      r->type = REC_THREAD;
      r->size = 0;
      r->arg = c->main_cpu;
      break;
    case PHASE_PRCTL:
      if (w->thp != WTHP_DISABLE) {
        w->phase++;
        continue;
      }
      r->type = REC_PRCTL;
      r->size = 0;
      r->arg = PRCTL_THP_DISABLE;
      r->arg2 = 1;
      break;
    case PHASE_ADVISE:
      if (w->thp != WTHP_HUGEPAGE && w->thp != WTHP_NOHUGEPAGE) {
        w->phase++;
        continue;
      }
      r->type = REC_MADVISE;
      r->size = 0;
      r->addr = c->map_va;
      r->len = c->map_len;
      r->arg = w->thp == WTHP_HUGEPAGE ? ADV_HUGEPAGE : ADV_NOHUGEPAGE;
      break;
    case PHASE_MMAP:
      r->type = REC_MMAP;
      r->size = 0;
      r->addr = c->map_va;
      r->len = c->map_len;
      r->prot = PROT_R | PROT_W;
      r->flags = c->map_flags;
      break;
    case PHASE_SETUP: {
      if (w->i == c->setup_writes)
        break;
      /* The records of a long phase in one loop: as many as the batch
       * and the phase have room for. */
      unsigned count = (unsigned)MIN((uint64_t)(TRACE_BATCH_MAX - n), c->setup_writes - w->i);
      if (c->gen->setup) {
        for (unsigned k = count; k; k--) {
          r = &batch->rec[n++];
          *r = proto;
          r->kind = ACC_STORE;
          c->gen->setup(w->state, w->i, r);
          w->i++;
        }
      } else { /* address order: one add per record, the prototype in registers */
        TraceRecord store = proto;
        store.kind = ACC_STORE;
        uint64_t addr = c->map_va + w->i * c->setup_stride_bytes, step = c->setup_stride_bytes;
        TraceRecord *out = &batch->rec[n];
        for (unsigned k = 0; k < count; k++, addr += step) {
          out[k] = store;
          out[k].addr = addr;
        }
        n += count;
        w->i += count;
      }
      continue;
    }
    case PHASE_ROI_BEGIN:
      r->type = REC_ROI_BEGIN;
      r->size = 0;
      break;
    case PHASE_MEASURED: {
      if (w->i == c->accesses)
        break;
      unsigned count = (unsigned)MIN((uint64_t)(TRACE_BATCH_MAX - n), c->accesses - w->i);
      TraceRecord access = proto;
      access.gap = c->gap;
      if (c->gen->access_batch) {
        c->gen->access_batch(w->state, &access, &batch->rec[n], count);
        n += count;
        w->i += count;
        continue;
      }
      for (unsigned k = count; k; k--) {
        r = &batch->rec[n++];
        *r = access;
        c->gen->access(w->state, r);
        w->i++;
      }
      continue;
    }
    case PHASE_ROI_END:
      r->type = REC_ROI_END;
      r->size = 0;
      break;
    case PHASE_DONE:
      break;
    }
    /* A one-record phase emitted its record, or a long phase ran out. */
    if (w->phase != PHASE_SETUP && w->phase != PHASE_MEASURED)
      n++;
    w->phase++;
    w->i = 0;
  }
  batch->n = n;
  if (!c->gen->several_threads && !thread_record) { /* every record is pid 1, tid 1's (proto) */
    batch->threads = BATCH_THREADS_ONE;
    batch->thread_pid = batch->thread_tid = 1;
  }
  return TRUE;
}

static void workload_close(TraceSource *src)
{
  WorkloadSource *w = (WorkloadSource *)src;
  if (w->state)
    w->cfg.gen->free(w->state);
  for (unsigned k = 0; k < MAX_PARAMS; k++)
    g_free(w->text[k]);
  g_free(w);
}

static const TraceSourceOps workload_ops = { "workload", workload_next_batch, workload_close };

/* ---- opening ------------------------------------------------------------ */

static const WorkloadGenerator *find_generator(const char *name)
{
  int k = registry_find(REGISTRY_ROWS(generators), G_N_ELEMENTS(generators), name);
  return k < 0 ? NULL : generators[k];
}

static char *known_generators(void)
{
  return registry_names(REGISTRY_ROWS(generators), G_N_ELEMENTS(generators), ", ", ", ");
}

/* The parameter `key` of the common table or the generator's; its index in
 * the source's combined numbering (common first), or -1. */
static int find_param(const WorkloadGenerator *g, const char *key, const WorkloadParam **out)
{
  for (int k = 0; k < N_COMMON; k++)
    if (strcmp(common_params[k].key, key) == 0)
      return *out = &common_params[k], k;
  for (int k = 0; g->params && g->params[k].key; k++)
    if (strcmp(g->params[k].key, key) == 0)
      return *out = &g->params[k], N_COMMON + k;
  return -1;
}

static char *param_keys(const WorkloadGenerator *g)
{
  GString *s = g_string_new(NULL);
  for (int k = 0; k < N_COMMON; k++)
    g_string_append_printf(s, "%s%s", k ? ", " : "", common_params[k].key);
  for (int k = 0; g->params && g->params[k].key; k++)
    g_string_append_printf(s, ", %s", g->params[k].key);
  return g_string_free(s, FALSE);
}

static gboolean apply_pair(WorkloadSource *w, WorkloadValue *values, gboolean *given, const char *item, GError **error)
{
  const WorkloadGenerator *g = w->cfg.gen;
  const char *eq = strchr(item, '=');
  g_autofree char *key = eq ? g_strndup(item, (gsize)(eq - item)) : g_strdup(item);
  const WorkloadParam *p = NULL;
  int k = find_param(g, key, &p);
  if (k < 0) {
    g_autofree char *keys = param_keys(g);
    set_error(error, "workload %s: unknown parameter '%s'; expected one of %s", g->name, key, keys);
    return FALSE;
  }
  if (!eq) {
    set_error(error, "workload %s: parameter '%s' has no value; expected %s=VALUE", g->name, key, key);
    return FALSE;
  }
  if (given[k]) {
    set_error(error, "workload %s: parameter '%s' given twice; expected each parameter at most once", g->name, key);
    return FALSE;
  }
  given[k] = TRUE;
  char *norm = NULL;
  if (!parse_value(p, eq + 1, &values[k], &norm)) {
    bad_value(error, g->name, p, eq + 1);
    return FALSE;
  }
  g_free(w->text[k]);
  w->text[k] = norm;
  return TRUE;
}

static void set_default(WorkloadSource *w, WorkloadValue *values, int k, const WorkloadParam *p)
{
  gboolean ok = parse_value(p, p->def, &values[k], &w->text[k]);
  g_assert(ok); /* the tables' defaults are valid */
}

TraceSource *workload_open(const char *spec, const uint64_t *seed, GError **error)
{
  g_return_val_if_fail(spec != NULL, NULL);
  const char *colon = strchr(spec, ':');
  g_autofree char *name = colon ? g_strndup(spec, (gsize)(colon - spec)) : g_strdup(spec);
  const WorkloadGenerator *g = find_generator(name);
  if (!g) {
    g_autofree char *known = known_generators();
    set_error(error, "unknown workload '%s'; expected one of %s (see `mmusim list workloads`)", name, known);
    return NULL;
  }
  unsigned n_own = count_params(g->params);
  g_assert(n_own <= WORKLOAD_MAX_OWN_PARAMS);

  WorkloadSource *w = g_new0(WorkloadSource, 1);
  w->base.ops = &workload_ops;
  w->base.unmapped = UNMAPPED_SEGV;
  w->cfg.gen = g;
  WorkloadValue values[MAX_PARAMS];
  gboolean given[MAX_PARAMS] = { FALSE };
  for (int k = 0; k < N_COMMON; k++)
    set_default(w, values, k, &common_params[k]);
  for (unsigned k = 0; k < n_own; k++)
    set_default(w, values, N_COMMON + (int)k, &g->params[k]);

  if (colon) {
    g_auto(GStrv) items = g_strsplit(colon + 1, ",", -1);
    for (char **it = items; *it; it++)
      if (**it && !apply_pair(w, values, given, *it, error))
        goto out_free;
  }
  if (seed) {
    values[P_SEED].u = *seed;
    g_free(w->text[P_SEED]);
    w->text[P_SEED] = g_strdup_printf("%" G_GUINT64_FORMAT, *seed);
  }

  WorkloadConfig *c = &w->cfg;
  c->size_bytes = values[P_SIZE].u;
  c->accesses = values[P_ACCESSES].u;
  c->seed = values[P_SEED].u;
  c->gap = (uint32_t)values[P_GAP].u;
  c->hugetlb = values[P_BACKING].choice == 1;
  w->thp = values[P_THP].choice;
  c->accesses_given = given[P_ACCESSES];
  c->size_given = given[P_SIZE];
  for (unsigned k = 0; k < n_own; k++) {
    c->own[k] = values[N_COMMON + k];
    c->own_given[k] = given[N_COMMON + k];
    c->own_text[k] = w->text[N_COMMON + k];
  }
  c->common_text = (const char *const *)w->text;
  c->setup_stride_bytes = WORKLOAD_SETUP_STRIDE_BYTES;
  c->setup_writes = (c->size_bytes - WORKLOAD_WORD_BYTES) / WORKLOAD_SETUP_STRIDE_BYTES + 1;
  c->map_va = WORKLOAD_BASE_VA;
  c->map_len = (c->size_bytes + WORKLOAD_MAP_ALIGN_BYTES - 1) / WORKLOAD_MAP_ALIGN_BYTES * WORKLOAD_MAP_ALIGN_BYTES;
  c->map_flags = c->hugetlb ? MAP_F_HUGETLB : 0;
  c->main_cpu = -1;
  GError *err = NULL;
  w->state = g->init(c, &err);
  if (err) {
    g_propagate_error(error, err);
    goto out_free;
  }
  if (c->accesses != values[P_ACCESSES].u) {
    g_free(w->text[P_ACCESSES]);
    w->text[P_ACCESSES] = g_strdup_printf("%" G_GUINT64_FORMAT, c->accesses);
  }
  if (c->size_bytes != values[P_SIZE].u) {
    g_free(w->text[P_SIZE]);
    w->text[P_SIZE] = settings_format_size(c->size_bytes);
  }
  for (unsigned k = 0; k < n_own; k++) /* a size or count init derived from others */
    if ((g->params[k].type == WPARAM_SIZE || g->params[k].type == WPARAM_COUNT) &&
        c->own[k].u != values[N_COMMON + k].u) {
      g_free(w->text[N_COMMON + k]);
      w->text[N_COMMON + k] = g->params[k].type == WPARAM_SIZE ? settings_format_size(c->own[k].u)
                                                               : g_strdup_printf("%" G_GUINT64_FORMAT, c->own[k].u);
      c->own_text[k] = w->text[N_COMMON + k];
    }

  GString *d = g_string_new(g->name);
  for (unsigned k = 0; k < N_COMMON + n_own; k++) {
    const char *key = k < N_COMMON ? common_params[k].key : g->params[k - N_COMMON].key;
    if (k == P_THP && w->thp == WTHP_DEFAULT)
      continue; /* shown only when given: descriptions stay as they were */
    g_string_append_printf(d, "%c%s=%s", k ? ',' : ':', key, w->text[k]);
  }
  w->base.description = g_string_free(d, FALSE);
  w->base.expected_records = c->accesses;
  return &w->base;

out_free:
  workload_close(&w->base);
  return NULL;
}

/* ---- listing ------------------------------------------------------------ */

static void list_params(GString *out, const WorkloadParam *p)
{
  for (; p && p->key; p++) {
    g_autofree char *kv = g_strdup_printf("%s=%s", p->key, p->def);
    g_string_append_printf(out, "    %-20s %s\n", kv, p->help);
  }
}

void workload_list(GString *out)
{
  g_string_append(out, "Workloads: -w NAME:KEY=VALUE,...  (sizes: K/M/G = powers of 1024; counts: powers of 1000)\n\n");
  g_string_append(out, "  Every workload takes:\n");
  list_params(out, common_params);
  for (unsigned k = 0; k < G_N_ELEMENTS(generators); k++) {
    const WorkloadGenerator *g = generators[k];
    g_string_append_printf(out, "\n  %s - %s\n", g->name, g->help);
    list_params(out, g->params);
  }
}
