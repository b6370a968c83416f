/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numa_balance_pte.c - the NUMA balancing scheme `pte`, Linux 3.8 to today
 * (mm/mprotect.c change_prot_numa, change_pte_range, change_huge_pmd): the
 * scanner makes each present PTE, and each huge PMD whole, PROT_NONE; the
 * hinting fault then handles one page or one THP (mm/memory.c do_numa_page,
 * mm/huge_memory.c do_huge_pmd_numa_page, in numa_balance.c).  Which pages
 * the scan skips and how the fault decides follow kernel.version
 * (numa_balance.c).
 */
#include "config.h"
#include "numa_balance_impl.h"

static uint64_t pte_mark_pmd(NumaBalance *nb, KCpu *cpu, Mm *mm, const Vma *v, uint64_t start, uint64_t end,
                             uint64_t *entries)
{
  (void)v;
  NumaMarked m;
  numa_balance_mark_range(nb, cpu, mm, start, end, FALSE, entries, &m);
  return m.huge + m.ptes;
}

const NumaBalancePolicy numa_balance_pte = {
  .name = "pte",
  .help = "the scanner makes PTEs and huge PMDs PROT_NONE; each hinting fault handles one page (Linux 3.8 on)",
  .source = "kernel/sched/fair.c task_numa_work, mm/mprotect.c change_prot_numa, mm/memory.c do_numa_page",
  .mark_pmd = pte_mark_pmd,
};
