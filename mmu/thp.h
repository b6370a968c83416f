/*
 * thp.h - transparent huge pages: which VMAs may have them, and the policy
 * interface that decides fault-time page size and collapse candidates.
 *
 * The rules every policy shares live in thp.c (hugepage_vma_check() of
 * mm/huge_memory.c): thp.enabled, the VMA's MADV_HUGEPAGE/NOHUGEPAGE advice,
 * the process's PR_SET_THP_DISABLE, hugetlb VMAs excluded, and the aligned
 * 2M range lying wholly inside the VMA.  A policy (thp.policy) decides only
 * what is left: whether a fault in an allowed range tries a huge page, and
 * whether a scanned range is worth a collapse.  Each policy is one file:
 *   linux   mmu/thp_linux.c  (mm/huge_memory.c, mm/khugepaged.c)
 *   ingens  mmu/thp_ingens.c (Kwon et al., OSDI 2016: base pages at fault,
 *           promotion once thp.util_threshold of the range is in use)
 */
#ifndef MMUSIM_THP_H
#define MMUSIM_THP_H

#include <glib.h>
#include <stdint.h>
#include "mm.h"
#include "settings.h"

typedef struct Kernel Kernel;

/* Order of the choices of thp.enabled and thp.defrag in settings.def. */
typedef enum { THP_ENABLED_ALWAYS, THP_ENABLED_MADVISE, THP_ENABLED_NEVER } ThpEnabled;
typedef enum {
  THP_DEFRAG_ALWAYS,
  THP_DEFRAG_DEFER,
  THP_DEFRAG_DEFER_MADVISE,
  THP_DEFRAG_MADVISE,
  THP_DEFRAG_NEVER,
} ThpDefrag;

/* khugepaged's verdict on a range (enum scan_result of mm/khugepaged.c, the
 * refusals mmusim can meet).  Every refusal has a counter (counters.def,
 * CTR_SCAN_*), in this order, from CTR_SCAN_PMD_NULL on. */
typedef enum {
  SCAN_SUCCEED = -1,
  SCAN_PMD_NULL = 0,
  SCAN_PMD_MAPPED,
  SCAN_VMA_CHECK,
  SCAN_ADDRESS_RANGE,
  SCAN_EXCEED_NONE_PTE,
  SCAN_EXCEED_SWAP_PTE,
  SCAN_EXCEED_SHARED_PTE,
  SCAN_PAGE_RO,
  SCAN_LACK_REFERENCED_PAGE,
  SCAN_ALLOC_HUGE_PAGE_FAIL,
  SCAN_POLICY,
  SCAN_N_RESULTS
} ScanResult;

/* What khugepaged's scan of one PMD range found (hpage_collapse_scan_pmd). */
typedef struct {
  unsigned none;      /* empty PTEs */
  unsigned zero;      /* PTEs mapping the zero page (counted with none, as the kernel does) */
  unsigned present;   /* PTEs mapping a page of their own */
  unsigned writable;  /* of those, writable */
  unsigned young;     /* of those, accessed bit set */
  unsigned shared;    /* of those, mapped by another mm too */
  unsigned swap;      /* swapped out: always 0, no swap is modelled */
} ThpRangeStats;

typedef struct {
  const char *name;
  /* Fault in an allowed range [haddr, haddr + 2M) of v: TRUE to try a huge
   * page first (thp_fault_fallback follows if that fails). */
  gboolean (*fault_huge)(const Kernel *k, const Mm *mm, const Vma *v, uint64_t haddr);
  /* A range khugepaged scanned (VMA checks passed, a PTE table present):
   * SCAN_SUCCEED to collapse it, else the reason not to. */
  ScanResult (*collapse_check)(const Kernel *k, const Mm *mm, const Vma *v, const ThpRangeStats *st);
} ThpPolicy;

extern const ThpPolicy thp_policy_linux;
extern const ThpPolicy thp_policy_ingens;

/* The policy named by thp.policy. */
const ThpPolicy *thp_policy_from_settings(const Settings *s);

/* hugepage_vma_check(): may v have huge pages at all?  FALSE for hugetlb
 * VMAs, when thp.enabled is never, for madvise without MADV_HUGEPAGE, for
 * MADV_NOHUGEPAGE and for a process with PR_SET_THP_DISABLE. */
gboolean thp_vma_allowed(const Kernel *k, const Mm *mm, const Vma *v);

/* TRUE when the 2M-aligned range [haddr, haddr + 2M) lies inside v. */
gboolean thp_range_in_vma(const Vma *v, uint64_t haddr);

/* The name of a scan result, as the kernel spells it in lower case
 * ("exceed_none_pte"). */
const char *thp_scan_result_name(ScanResult r);

#endif
