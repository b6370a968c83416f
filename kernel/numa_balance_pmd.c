/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numa_balance_pmd.c - the NUMA balancing scheme `pmd`, the 2012 one of
 * seed 003 (change_pmd_protnuma and do_pmd_numa_page, in Linux 3.8 to 3.12,
 * removed in 3.13): the scanner marks the PTEs of a table as the pte scheme
 * does, and a table whose present pages all sit on one node is marked at
 * its PMD as well, so that one hinting fault restores every PTE under it
 * and handles its pages as one group (pmd_group_fault in numa_balance.c).
 * The scheme left Linux in 3.13: numa_balance_new refuses it unless
 * kernel.version=3.8.
 */
#include "config.h"
#include "numa_balance_impl.h"

#include "kernel.h"

/* A look at a whole PTE table: the node of its pages, while they share
 * one; stops at the first page elsewhere. */
typedef struct {
  const Kernel *k;
  int node;
  gboolean same, any;
} SameNode;

static int same_node_pte(PtWalk *w, uint64_t pe, uint64_t addr, uint64_t next)
{
  SameNode *sn = w->ctx;
  if ((pe & (PTE_P | PTE_SW_ZERO)) != PTE_P)
    return 0;
  int nd = physmem_node_of(sn->k->pm, pte_pfn(pe));
  sn->same = sn->node < 0 || nd == sn->node;
  sn->node = nd;
  sn->any = TRUE;
  return sn->same ? 0 : 1;
}

static const PtWalkOps same_node_ops = { .pte_entry = same_node_pte };

/* A table whose pages all sit on one node is marked at the PMD as well as
 * at each PTE (change_pmd_protnuma after change_pte_range found
 * all_same_node); other tables PTE by PTE, and a table marked whole
 * already is left alone. */
static uint64_t pmd_mark_pmd(NumaBalance *nb, KCpu *cpu, Mm *mm, const Vma *v, uint64_t start, uint64_t end,
                             uint64_t *entries)
{
  (void)v;
  Kernel *k = numa_balance_kernel(nb);
  NumaMarked m;
  numa_balance_mark_range(nb, cpu, mm, start, end, TRUE, entries, &m);
  if (!m.pmd)
    return m.huge;
  PtNode *n = m.pmd;
  unsigned idx = m.pmd_index;
  uint64_t e = n->e[idx];
  uint64_t base = start & ~(k->pmd_bytes - 1);
  SameNode sn = { .k = k, .node = -1, .same = TRUE };
  pgtable_walk(&mm->pt, base, base + k->pmd_bytes, &same_node_ops, &sn);
  uint64_t marked = m.ptes;
  /* The table is marked whole even when the range covers part of it (a
   * VMA smaller than 2M): the fault handles every PTE under it. */
  if (sn.any && sn.same) {
    pgtable_entry_set(n, idx, e | PTE_SW_NUMA);
    (*entries)++;
    cpu->ctr->c[CTR_NUMA_PMD_UPDATES]++;
    if (!marked)
      marked = 1; /* its pages were marked already: the PMD mark is the update */
  }
  return marked;
}

const NumaBalancePolicy numa_balance_pmd = {
  .name = "pmd",
  .help = "a page table whose pages share a node is marked at its PMD; one fault handles them as a group",
  .source = "the 2012 scheme of seed 003: change_pmd_protnuma, do_pmd_numa_page (removed in Linux 3.13)",
  .mark_pmd = pmd_mark_pmd,
};
