/*
 * thp.c - the rules every THP policy shares (hugepage_vma_check() and
 * transhuge_vma_suitable() of mm/huge_memory.c) and the policy table.
 */
#include "config.h"
#include "thp.h"

#include "kernel.h"

#define THP_PMD_BYTES (UINT64_C(1) << 21)

const ThpPolicy *thp_policy_from_settings(const Settings *s)
{
  static const ThpPolicy *const policies[] = { &thp_policy_linux, &thp_policy_ingens };
  int64_t i = settings_int(s, SET_THP_POLICY);
  g_return_val_if_fail(i >= 0 && (size_t)i < G_N_ELEMENTS(policies), &thp_policy_linux);
  return policies[i];
}

gboolean thp_vma_allowed(const Kernel *k, const Mm *mm, const Vma *v)
{
  if (v->flags & MAP_F_HUGETLB)
    return FALSE; /* hugetlbfs has its own pool and fault path */
  if (mm->thp_disable || v->thp == VMA_THP_NOHUGEPAGE)
    return FALSE; /* MMF_DISABLE_THP, VM_NOHUGEPAGE */
  switch ((ThpEnabled)settings_int(k->s, SET_THP_ENABLED)) {
  case THP_ENABLED_ALWAYS:
    return TRUE;
  case THP_ENABLED_MADVISE:
    return v->thp == VMA_THP_HUGEPAGE;
  case THP_ENABLED_NEVER:
    return FALSE;
  }
  return FALSE;
}

gboolean thp_range_in_vma(const Vma *v, uint64_t haddr)
{
  return (haddr & (THP_PMD_BYTES - 1)) == 0 && haddr >= v->start && haddr + THP_PMD_BYTES <= v->end &&
         haddr + THP_PMD_BYTES > haddr;
}

const char *thp_scan_result_name(ScanResult r)
{
  static const char *const names[SCAN_N_RESULTS] = {
    "pmd_null", "pmd_mapped", "vma_check", "address_range", "exceed_none_pte", "exceed_swap_pte",
    "exceed_shared_pte", "page_ro", "lack_referenced_page", "alloc_huge_page_fail", "policy",
  };
  if (r == SCAN_SUCCEED)
    return "succeed";
  g_return_val_if_fail(r >= 0 && r < SCAN_N_RESULTS, "?");
  return names[r];
}
