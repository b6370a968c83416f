/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mm.c - VMA bookkeeping of one address space.
 *
 * VMAs live in a GSequence (a balanced tree with the position of each
 * element), standing for the maple tree of Linux 6.12 (mm/vma.c, lib/maple_tree.c):
 * both give O(log n) lookup, insert, split and remove; merges follow
 * vma_merge_new_range / vma_merge_existing_range in looking only at the
 * neighbours of the VMAs that changed.
 *
 * Leaves out: anon_vma chains, a file's own object (a file VMA keeps only
 * its name and offset) and the stack guard gap.
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
  mm->vmas = g_sequence_new(g_free);
  mm->dirty_lo = 1;
  mm->dirty_hi = 0;
  mm->deposited = g_hash_table_new(g_int64_hash, g_int64_equal);
  if (!pgtable_init(&mm->pt, g, a)) {
    g_hash_table_destroy(mm->deposited);
    g_sequence_free(mm->vmas);
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
  g_sequence_remove_range(g_sequence_get_begin_iter(mm->vmas), g_sequence_get_end_iter(mm->vmas));
  mm->last_vma = NULL;
  mm->dirty_lo = 1;
  mm->dirty_hi = 0;
}

void mm_free(Mm *mm)
{
  if (!mm)
    return;
  mm_release_tables(mm);
  g_hash_table_destroy(mm->deposited);
  g_sequence_free(mm->vmas);
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

/* The tree's order for g_sequence_search: `key` (cmp_data) stands for an
 * address va and sorts after every VMA ending at or below va, before every
 * VMA ending above it, whichever side GLib passes it on. */
static gint key_cmp(gconstpointer a, gconstpointer b, gpointer key)
{
  uint64_t va = ((const Vma *)key)->start;
  if (b == key)
    return ((const Vma *)a)->end > va ? 1 : -1;
  return ((const Vma *)b)->end > va ? -1 : 1;
}

/* The first VMA whose end is above va (find_vma), or the end iterator. */
static GSequenceIter *first_above_iter(const Mm *mm, uint64_t va)
{
  Vma key = { .start = va };
  return g_sequence_search(mm->vmas, &key, key_cmp, &key);
}

static Vma *iter_vma(GSequenceIter *it)
{
  return g_sequence_iter_is_end(it) ? NULL : g_sequence_get(it);
}

/* Note [lo, hi] as changed, for the next merge. */
static void mark_dirty(Mm *mm, uint64_t lo, uint64_t hi)
{
  if (mm->dirty_lo > mm->dirty_hi) {
    mm->dirty_lo = lo;
    mm->dirty_hi = hi;
    return;
  }
  mm->dirty_lo = MIN(mm->dirty_lo, lo);
  mm->dirty_hi = MAX(mm->dirty_hi, hi);
}

Vma *mm_find_vma(Mm *mm, uint64_t va)
{
  Vma *v = mm->last_vma;
  if (v && va >= v->start && va < v->end)
    return v;
  v = iter_vma(first_above_iter(mm, va));
  if (v && va >= v->start) {
    mm->last_vma = v;
    return v;
  }
  return NULL;
}

void mm_insert_vma(Mm *mm, const Vma *v)
{
  g_sequence_insert_before(first_above_iter(mm, v->start), g_memdup2(v, sizeof *v));
  mark_dirty(mm, v->start, v->end);
}

/* Split the VMA containing `at` so that `at` becomes a boundary
 * (__split_vma: the lower part keeps the struct, the upper is new). */
static void split_at(Mm *mm, uint64_t at)
{
  GSequenceIter *it = first_above_iter(mm, at);
  Vma *v = iter_vma(it);
  if (!v || v->start >= at || v->end <= at)
    return;
  Vma *upper = g_memdup2(v, sizeof *v);
  upper->start = at;
  upper->file_off += at - v->start; /* __split_vma: new->vm_pgoff += (addr - vm_start) >> PAGE_SHIFT */
  v->end = at;
  g_sequence_insert_before(g_sequence_iter_next(it), upper);
  mark_dirty(mm, v->start, upper->end);
}

guint mm_split_range(Mm *mm, uint64_t start, uint64_t end, guint *n)
{
  if (start >= end) {
    /* An empty range holds no VMA; cutting one there would only add a
     * boundary nobody asked for. */
    *n = 0;
    return mm_vma_index_from(mm, start);
  }
  split_at(mm, start);
  split_at(mm, end);
  GSequenceIter *first = first_above_iter(mm, start), *last = first_above_iter(mm, end);
  /* end is a boundary now: the VMAs inside are those from first up to the
   * one that ends above end. */
  guint a = (guint)g_sequence_iter_get_position(first), b = (guint)g_sequence_iter_get_position(last);
  *n = b - a;
  if (*n)
    mark_dirty(mm, start, end);
  return a;
}

void mm_remove_range(Mm *mm, uint64_t start, uint64_t end)
{
  guint n;
  mm_split_range(mm, start, end, &n);
  if (n)
    g_sequence_remove_range(first_above_iter(mm, start), first_above_iter(mm, end));
  mm->last_vma = NULL;
}

/* is_mergeable_vma and can_vma_merge_after (mm/vma.c, Linux 6.12): the
 * same attributes, and for a named file the same file, b continuing a in
 * it (vm_pgoff + vma_pages == next's vm_pgoff). */
static gboolean same_kind(const Vma *a, const Vma *b)
{
  return a->end == b->start && a->prot == b->prot && a->flags == b->flags && a->thp == b->thp &&
         a->policy == b->policy && a->policy_flags == b->policy_flags && a->policy_nodes == b->policy_nodes &&
         a->file == b->file && (!a->file || a->file_off + (a->end - a->start) == b->file_off);
}

void mm_merge_vmas(Mm *mm)
{
  if (mm->dirty_lo > mm->dirty_hi)
    return;
  /* From the VMA before the changed span to the last one starting in it:
   * every boundary that may have become mergeable lies in the span. */
  GSequenceIter *it = first_above_iter(mm, mm->dirty_lo);
  if (!g_sequence_iter_is_begin(it))
    it = g_sequence_iter_prev(it);
  while (!g_sequence_iter_is_end(it)) {
    GSequenceIter *next = g_sequence_iter_next(it);
    Vma *a = g_sequence_get(it), *b = iter_vma(next);
    mm->vma_steps++;
    if (!b || b->start > mm->dirty_hi)
      break;
    if (same_kind(a, b)) {
      a->end = b->end;
      if (mm->last_vma == b)
        mm->last_vma = NULL;
      g_sequence_remove(next);
    } else {
      it = next;
    }
  }
  mm->dirty_lo = 1;
  mm->dirty_hi = 0;
}

guint mm_vma_count(const Mm *mm)
{
  return (guint)g_sequence_get_length(mm->vmas);
}

const Vma *mm_vma(const Mm *mm, guint i)
{
  return g_sequence_get(g_sequence_get_iter_at_pos(mm->vmas, (gint)i));
}

Vma *mm_vma_mut(Mm *mm, guint i)
{
  Vma *v = g_sequence_get(g_sequence_get_iter_at_pos(mm->vmas, (gint)i));
  mark_dirty(mm, v->start, v->end);
  return v;
}

guint mm_vma_index_from(const Mm *mm, uint64_t va)
{
  return (guint)g_sequence_iter_get_position(first_above_iter(mm, va));
}
