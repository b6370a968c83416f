/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numa_balance_impl.h - what the balancing core (numa_balance.c) shares
 * with the schemes (numa_balance_NAME.c), and nothing else includes.
 *
 * A scheme is one file defining a `const NumaBalancePolicy
 * numa_balance_NAME` (numa_balance.h) and one row of the registry in
 * numa_balance.c.  Its mark_pmd hook is the scanner's step over one PMD
 * range; the scanner's common walk is numa_balance_mark_range() below, which
 * marks what every scheme marks (a huge PMD whole, the PTEs of a table one by
 * one) and leaves the rest of a scheme's rule (the pmd scheme's mark on the
 * table's PMD) to the hook.  The hinting fault is shared: numa_balance_fault()
 * handles a marked PTE, huge PMD or table PMD whatever scheme marked it.
 */
#ifndef MMUSIM_NUMA_BALANCE_IMPL_H
#define MMUSIM_NUMA_BALANCE_IMPL_H

#include "numa_balance.h"

#include "pgtable.h"

/* The kernel nb balances (its geometry, physmem, costs). */
Kernel *numa_balance_kernel(const NumaBalance *nb);

/* What numa_balance_mark_range() did over one PMD range. */
typedef struct {
  uint64_t huge;      /* base pages a huge PMD made PROT_NONE */
  uint64_t ptes;      /* PTEs made PROT_NONE */
  PtNode *pmd;        /* the table holding the PMD, when its PTE table was entered; else NULL */
  unsigned pmd_index; /* the PMD's index in it */
} NumaMarked;

/* change_pmd_range for the PMD of [start, end) of mm (change_huge_pmd,
 * change_pte_range): a huge PMD wholly in the range is marked whole, the
 * PTEs of a table one by one, skipping the zero page and entries marked
 * already, and, when the scheme's skip_local_single_thread holds and the
 * scanning process runs one thread, pages on that thread's node.  With
 * `skip_marked_table` a table whose PMD is marked already is left alone.
 * Adds the entries written to *entries and to cpu's numa_pte_updates
 * (numa_huge_pte_updates for a huge PMD); *out says what was marked. */
void numa_balance_mark_range(NumaBalance *nb, KCpu *cpu, Mm *mm, uint64_t start, uint64_t end,
                             gboolean skip_marked_table, uint64_t *entries, NumaMarked *out);

#endif
