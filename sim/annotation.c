/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * annotation.c - the rows of an annotation (annotation.h): two hash tables of
 * AnnRow, by (pid, instruction) and by (pid, VMA), and each thread's last
 * fetch for traces whose accesses carry no instruction address.
 */
#include "config.h"
#include "annotation.h"
#include "record.h"

#include <string.h>

struct Annotation {
  GHashTable *by_ip;     /* AnnRow* (its own key) -> same */
  GHashTable *by_region; /* AnnRow* -> same */
  GHashTable *last_fetch; /* thread pointer -> address of its last X + 1 */
  gboolean frozen;
  gboolean has_ips;
  GArray *maps;          /* AnnMapping, in the order mapped */
  GHashTable *paths;     /* the copies of their paths */
};

/* A row is known by its process and its instruction, or its process and
 * the start of its VMA: a VMA that grows (the made-up mappings of a trace
 * without mapping events merge as they come) stays one row, with the end
 * it had last. */
static guint row_hash(gconstpointer p)
{
  const AnnRow *r = p;
  uint64_t h = (uint64_t)r->pid * 0x9e3779b97f4a7c15ULL ^ r->ip ^ (r->start * 0xff51afd7ed558ccdULL);
  return (guint)(h ^ (h >> 32));
}

static gboolean row_equal(gconstpointer a, gconstpointer b)
{
  const AnnRow *x = a, *y = b;
  return x->pid == y->pid && x->ip == y->ip && x->start == y->start;
}

Annotation *annotation_new(void)
{
  Annotation *a = g_new0(Annotation, 1);
  a->by_ip = g_hash_table_new_full(row_hash, row_equal, g_free, NULL);
  a->by_region = g_hash_table_new_full(row_hash, row_equal, g_free, NULL);
  a->last_fetch = g_hash_table_new(g_direct_hash, g_direct_equal);
  a->maps = g_array_new(FALSE, FALSE, sizeof(AnnMapping));
  a->paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return a;
}

void annotation_free(Annotation *a)
{
  if (!a)
    return;
  g_hash_table_destroy(a->by_ip);
  g_hash_table_destroy(a->by_region);
  g_hash_table_destroy(a->last_fetch);
  g_array_free(a->maps, TRUE);
  g_hash_table_destroy(a->paths);
  g_free(a);
}

static const char *const metric_names[N_ANN] = {
  [ANN_ACCESSES] = "accesses",       [ANN_TLB_MISSES] = "tlb_misses",   [ANN_STLB_MISSES] = "stlb_misses",
  [ANN_PAGE_WALKS] = "page_walks",   [ANN_WALK_CYCLES] = "walk_cycles", [ANN_PAGE_FAULTS] = "page-faults",
  [ANN_FAULT_CYCLES] = "fault_cycles",
};

const char *annotation_metric_name(AnnMetric m)
{
  return m < N_ANN ? metric_names[m] : "?";
}

void annotation_counts_of(const Counters *c, AnnCounts *out)
{
  out->v[ANN_ACCESSES] = c->c[CTR_ACCESSES];
  out->v[ANN_TLB_MISSES] = c->c[CTR_DTLB_LOAD_MISSES] + c->c[CTR_DTLB_STORE_MISSES] + c->c[CTR_ITLB_LOAD_MISSES];
  out->v[ANN_STLB_MISSES] = c->c[CTR_STLB_MISSES];
  out->v[ANN_PAGE_WALKS] = c->c[CTR_PAGE_WALKS];
  out->v[ANN_WALK_CYCLES] = c->c[CTR_WALK_CYCLES];
  out->v[ANN_PAGE_FAULTS] = c->c[CTR_PAGE_FAULTS];
  out->v[ANN_FAULT_CYCLES] = c->c[CTR_FAULT_CYCLES];
}

void annotation_reset(Annotation *a)
{
  g_hash_table_remove_all(a->by_ip);
  g_hash_table_remove_all(a->by_region);
  a->frozen = FALSE;
  a->has_ips = FALSE;
}

void annotation_freeze(Annotation *a)
{
  a->frozen = TRUE;
}

static void add_to(GHashTable *t, const AnnRow *probe, const AnnCounts *d)
{
  AnnRow *row = g_hash_table_lookup(t, probe);
  if (!row) {
    row = g_memdup2(probe, sizeof *probe);
    memset(&row->c, 0, sizeof row->c);
    g_hash_table_add(t, row);
  }
  row->end = probe->end;
  row->prot = probe->prot;
  row->flags = probe->flags;
  for (unsigned i = 0; i < N_ANN; i++)
    row->c.v[i] += d->v[i];
}

void annotation_add(Annotation *a, const void *thread, uint32_t pid, unsigned kind, uint64_t addr, uint64_t ip,
                    const Vma *vma, const Counters *before, const Counters *after)
{
  /* The last fetch is followed in and out of the region alike: an access
   * right after the region starts belongs to the code fetched before. */
  if (kind == ACC_IFETCH)
    g_hash_table_insert(a->last_fetch, (gpointer)thread, GSIZE_TO_POINTER((gsize)addr + 1));
  if (a->frozen)
    return;
  if (!ip) {
    gsize f = GPOINTER_TO_SIZE(g_hash_table_lookup(a->last_fetch, thread));
    ip = f ? (uint64_t)f - 1 : 0;
  }
  a->has_ips |= ip != 0;
  AnnCounts x, y, d;
  annotation_counts_of(before, &x);
  annotation_counts_of(after, &y);
  for (unsigned i = 0; i < N_ANN; i++)
    d.v[i] = y.v[i] - x.v[i];
  AnnRow probe = { .pid = pid, .ip = ip };
  add_to(a->by_ip, &probe, &d);
  probe = (AnnRow){ .pid = pid };
  if (vma) {
    probe.start = vma->start;
    probe.end = vma->end;
    probe.prot = vma->prot;
    probe.flags = vma->flags;
  }
  add_to(a->by_region, &probe, &d);
}

static gint row_cmp(gconstpointer p, gconstpointer q, gpointer data)
{
  const AnnRow *a = p, *b = q;
  AnnMetric sort_by = *(const AnnMetric *)data;
  if (a->c.v[sort_by] != b->c.v[sort_by])
    return a->c.v[sort_by] > b->c.v[sort_by] ? -1 : 1;
  if (a->pid != b->pid)
    return a->pid < b->pid ? -1 : 1;
  uint64_t ka = a->ip | a->start, kb = b->ip | b->start;
  return ka < kb ? -1 : ka > kb;
}

static AnnRow *sorted(GHashTable *t, AnnMetric by, guint *n)
{
  *n = g_hash_table_size(t);
  AnnRow *rows = g_new(AnnRow, *n ? *n : 1);
  GHashTableIter it;
  gpointer k;
  guint i = 0;
  g_hash_table_iter_init(&it, t);
  while (g_hash_table_iter_next(&it, &k, NULL))
    rows[i++] = *(const AnnRow *)k;
  AnnMetric key = by < N_ANN ? by : ANN_WALK_CYCLES;
  g_qsort_with_data(rows, (gint)*n, sizeof *rows, row_cmp, &key);
  return rows;
}

AnnRow *annotation_by_ip(const Annotation *a, AnnMetric by, guint *n)
{
  return sorted(a->by_ip, by, n);
}

AnnRow *annotation_by_region(const Annotation *a, AnnMetric by, guint *n)
{
  return sorted(a->by_region, by, n);
}

void annotation_total(const Annotation *a, AnnCounts *out)
{
  memset(out, 0, sizeof *out);
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init(&it, a->by_ip);
  while (g_hash_table_iter_next(&it, &k, NULL))
    for (unsigned i = 0; i < N_ANN; i++)
      out->v[i] += ((const AnnRow *)k)->c.v[i];
}

gboolean annotation_has_ips(const Annotation *a)
{
  return a->has_ips;
}

void annotation_map(Annotation *a, uint32_t pid, uint64_t start, uint64_t len, uint64_t offset, const char *path)
{
  const char *kept = NULL;
  if (path && !(kept = g_hash_table_lookup(a->paths, path))) {
    char *copy = g_strdup(path);
    g_hash_table_add(a->paths, copy);
    kept = copy;
  }
  AnnMapping m = { .pid = pid, .start = start, .end = start + len, .offset = offset, .path = kept };
  g_array_append_val(a->maps, m);
}

const AnnMapping *annotation_mapping_at(const Annotation *a, uint32_t pid, uint64_t addr)
{
  for (guint i = a->maps->len; i-- > 0;) {
    const AnnMapping *m = &g_array_index(a->maps, AnnMapping, i);
    if (m->pid == pid && addr >= m->start && addr < m->end)
      return m;
  }
  return NULL;
}
