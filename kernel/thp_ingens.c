/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thp_ingens.c - a utilisation-threshold policy after Ingens (Kwon et al.,
 * "Coordinated and Efficient Huge Page Management with Ingens", OSDI 2016):
 * faults always map base pages, so no memory is bloated at fault time, and a
 * 2M range is promoted (collapsed) only once at least thp.util_threshold of
 * its base pages (512 of 4K on x86-64, 256 of 64K on ppc64) are in use.
 * The Linux rules on writable and young PTEs and on shared pages still
 * apply; max_ptes_none does not (the threshold replaces it).  Left out from the paper: its access-frequency tracking and
 * fairness between processes.
 */
#include "config.h"
#include "thp.h"

#include <math.h>
#include "kernel.h"

static gboolean ingens_fault_huge(const Kernel *k, const Mm *mm, const Vma *v, uint64_t haddr)
{
  (void)k, (void)mm, (void)v, (void)haddr;
  return FALSE;
}

static ScanResult ingens_collapse_check(const Kernel *k, const Mm *mm, const Vma *v, const ThpRangeStats *st)
{
  (void)mm, (void)v;
  const Settings *s = k->s;
  unsigned need = (unsigned)ceil(settings_double(s, SET_THP_UTIL_THRESHOLD) * k->pmd_subpages);
  if (st->present == 0 || st->present < need)
    return SCAN_POLICY;
  return thp_collapse_rules(k, st);
}

const ThpPolicy thp_policy_ingens = {
  .name = "ingens",
  .help = "base pages at fault; a range is promoted once thp.util_threshold of its base pages are in use",
  .source = "Kwon et al., Coordinated and Efficient Huge Page Management with Ingens, OSDI 2016",
  .fault_huge = ingens_fault_huge,
  .collapse_check = ingens_collapse_check,
};
