/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mm.c - VMA bookkeeping of one address space.
 *
 * Leaves out: the maple tree (a sorted array gives the same answers), anon_vma
 * chains, file mappings and the stack guard gap.
 */
#include "config.h"
#include "mm.h"

#include <string.h>

Mm *mm_new(uint32_t pid, uint16_t asid, const PtGeometry *g, const PtAllocator *a)
{
  Mm *mm = g_new0(Mm, 1);
  mm->pid = pid;
  mm->il_prev = -1;
  mm->asid = asid;
  mm->vmas = g_array_new(FALSE, FALSE, sizeof(Vma));
  mm->deposited = g_hash_table_new(g_int64_hash, g_int64_equal);
  if (!pgtable_init(&mm->pt, g, a)) {
    g_hash_table_destroy(mm->deposited);
    g_array_free(mm->vmas, TRUE);
    g_free(mm);
    return NULL;
  }
  return mm;
}

void mm_release_tables(Mm *mm)
{
  /* Deposited tables go back where table pages come from. */
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init(&it, mm->deposited);
  while (g_hash_table_iter_next(&it, &key, &val)) {
    mm->pt.a.release(mm->pt.a.ctx, 1, *(uint64_t *)val);
    g_free(key);
    g_free(val);
  }
  g_hash_table_remove_all(mm->deposited);
  pgtable_destroy(&mm->pt);
  g_array_set_size(mm->vmas, 0);
  mm->last_vma = 0;
}

void mm_free(Mm *mm)
{
  if (!mm)
    return;
  mm_release_tables(mm);
  g_hash_table_destroy(mm->deposited);
  g_array_free(mm->vmas, TRUE);
  g_free(mm->cpumask);
  g_free(mm->left_gen);
  g_free(mm);
}

/* Grow the mask (and left_gen with it) to hold cpu. */
static void cpumask_grow(Mm *mm, unsigned cpu)
{
  unsigned w = cpu / 64, old = mm->cpumask_words;
  if (w < old)
    return;
  mm->cpumask = g_renew(uint64_t, mm->cpumask, w + 1);
  memset(mm->cpumask + old, 0, (w + 1 - old) * sizeof *mm->cpumask);
  mm->left_gen = g_renew(uint64_t, mm->left_gen, (size_t)(w + 1) * 64);
  memset(mm->left_gen + (size_t)old * 64, 0, (size_t)(w + 1 - old) * 64 * sizeof *mm->left_gen);
  mm->cpumask_words = w + 1;
}

void mm_cpumask_set(Mm *mm, unsigned cpu)
{
  cpumask_grow(mm, cpu);
  mm->cpumask[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

void mm_cpumask_leave(Mm *mm, unsigned cpu)
{
  if (!mm_cpumask_test(mm, cpu))
    return;
  mm->cpumask[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
  mm->left_gen[cpu] = mm->tlb_gen + 1;
}

gboolean mm_cpumask_enter(Mm *mm, unsigned cpu)
{
  mm_cpumask_set(mm, cpu);
  uint64_t left = mm->left_gen[cpu];
  mm->left_gen[cpu] = 0;
  return left && left - 1 != mm->tlb_gen;
}

void mm_deposit(Mm *mm, uint64_t haddr, uint64_t table_pfn)
{
  g_return_if_fail(!g_hash_table_contains(mm->deposited, &haddr));
  g_hash_table_insert(mm->deposited, g_memdup2(&haddr, sizeof haddr), g_memdup2(&table_pfn, sizeof table_pfn));
}

gboolean mm_withdraw(Mm *mm, uint64_t haddr, uint64_t *table_pfn)
{
  gpointer key, val;
  if (!g_hash_table_lookup_extended(mm->deposited, &haddr, &key, &val))
    return FALSE;
  *table_pfn = *(uint64_t *)val;
  g_hash_table_remove(mm->deposited, &haddr);
  g_free(key);
  g_free(val);
  return TRUE;
}

guint mm_deposited_count(const Mm *mm)
{
  return g_hash_table_size(mm->deposited);
}

/* Index of the first VMA whose end is above va. */
static guint first_above(const Mm *mm, uint64_t va)
{
  guint lo = 0, hi = mm->vmas->len;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if (g_array_index(mm->vmas, Vma, mid).end <= va)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

Vma *mm_find_vma(Mm *mm, uint64_t va)
{
  if (mm->last_vma < mm->vmas->len) {
    Vma *v = &g_array_index(mm->vmas, Vma, mm->last_vma);
    if (va >= v->start && va < v->end)
      return v;
  }
  guint i = first_above(mm, va);
  if (i < mm->vmas->len) {
    Vma *v = &g_array_index(mm->vmas, Vma, i);
    if (va >= v->start) {
      mm->last_vma = i;
      return v;
    }
  }
  return NULL;
}

void mm_insert_vma(Mm *mm, const Vma *v)
{
  guint i = first_above(mm, v->start);
  g_array_insert_val(mm->vmas, i, *v);
}

/* Split the VMA containing `at` so that `at` becomes a boundary. */
static void split_at(Mm *mm, uint64_t at)
{
  guint i = first_above(mm, at);
  if (i >= mm->vmas->len)
    return;
  Vma *v = &g_array_index(mm->vmas, Vma, i);
  if (v->start >= at || v->end <= at)
    return;
  Vma upper = *v;
  upper.start = at;
  v->end = at;
  g_array_insert_val(mm->vmas, i + 1, upper);
}

guint mm_split_range(Mm *mm, uint64_t start, uint64_t end, guint *n)
{
  if (start >= end) {
    /* An empty range holds no VMA; cutting one there would only add a
     * boundary nobody asked for. */
    *n = 0;
    return first_above(mm, start);
  }
  split_at(mm, start);
  split_at(mm, end);
  guint first = first_above(mm, start), i = first;
  while (i < mm->vmas->len && g_array_index(mm->vmas, Vma, i).start < end)
    i++;
  *n = i - first;
  mm->last_vma = 0;
  return first;
}

void mm_remove_range(Mm *mm, uint64_t start, uint64_t end)
{
  guint n;
  guint first = mm_split_range(mm, start, end, &n);
  if (n)
    g_array_remove_range(mm->vmas, first, n);
  mm->last_vma = 0;
}

static gboolean same_kind(const Vma *a, const Vma *b)
{
  return a->end == b->start && a->prot == b->prot && a->flags == b->flags && a->thp == b->thp &&
         a->policy == b->policy && a->policy_flags == b->policy_flags && a->policy_nodes == b->policy_nodes;
}

void mm_merge_vmas(Mm *mm)
{
  guint i = 0;
  while (i + 1 < mm->vmas->len) {
    Vma *a = &g_array_index(mm->vmas, Vma, i);
    Vma *b = &g_array_index(mm->vmas, Vma, i + 1);
    if (same_kind(a, b)) {
      a->end = b->end;
      g_array_remove_index(mm->vmas, i + 1);
    } else {
      i++;
    }
  }
  mm->last_vma = 0;
}

guint mm_vma_count(const Mm *mm)
{
  return mm->vmas->len;
}

const Vma *mm_vma(const Mm *mm, guint i)
{
  return &g_array_index(mm->vmas, Vma, i);
}

Vma *mm_vma_mut(Mm *mm, guint i)
{
  return &g_array_index(mm->vmas, Vma, i);
}

guint mm_vma_index_from(const Mm *mm, uint64_t va)
{
  guint lo = 0, hi = mm_vma_count(mm);
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if (mm_vma(mm, mid)->end <= va)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
