/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thp_linux.c - Linux's THP policy: a huge page at fault whenever the range
 * is allowed (do_huge_pmd_anonymous_page), and khugepaged's candidate rules
 * (hpage_collapse_scan_pmd in mm/khugepaged.c):
 *   none + zero PTEs <= khugepaged.max_ptes_none   else SCAN_EXCEED_NONE_PTE
 *   swap PTEs        <= khugepaged.max_ptes_swap   else SCAN_EXCEED_SWAP_PTE
 *   shared pages     <= khugepaged.max_ptes_shared else SCAN_EXCEED_SHARED_PTE
 *   at least one writable PTE                      else SCAN_PAGE_RO
 *   at least one young (accessed) PTE              else SCAN_LACK_REFERENCED_PAGE
 * A range with no page of its own at all is none-only and falls under the
 * first rule (with max_ptes_none = 511 it still needs one page).
 */
#include "config.h"
#include "thp.h"

#include "kernel.h"

static gboolean linux_fault_huge(const Kernel *k, const Mm *mm, const Vma *v, uint64_t haddr)
{
  (void)k, (void)mm, (void)v, (void)haddr;
  return TRUE;
}

static ScanResult linux_collapse_check(const Kernel *k, const Mm *mm, const Vma *v, const ThpRangeStats *st)
{
  (void)mm, (void)v;
  const Settings *s = k->s;
  if (st->none + st->zero > (unsigned)settings_int(s, SET_KHUGEPAGED_MAX_PTES_NONE) || st->present == 0)
    return SCAN_EXCEED_NONE_PTE;
  return thp_collapse_rules(k, st);
}

const ThpPolicy thp_policy_linux = {
  .name = "linux",
  .help = "a huge page at every allowed fault; khugepaged collapses a range within the max_ptes_* limits",
  .source = "mm/huge_memory.c do_huge_pmd_anonymous_page, mm/khugepaged.c hpage_collapse_scan_pmd",
  .fault_huge = linux_fault_huge,
  .collapse_check = linux_collapse_check,
};
