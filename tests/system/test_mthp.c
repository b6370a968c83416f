/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of multi-size THP (Linux 6.12, mTHP since 6.8): the order a
 * write fault chooses (mm/memory.c alloc_anon_folio with
 * thp_vma_allowable_orders, thp_vma_suitable_orders and pte_range_none),
 * the folio mapped by PTEs at once (set_ptes), the per-size modes and the
 * PMD size's control of PMD-sized THP, the fallbacks and their counters
 * (hugepages-*kB/stats), the deferred split of a partly unmapped folio
 * (deferred_split_folio), AMD's PTE coalescing of a folio, 64K base pages
 * on ppc64, and the settings refused (kernel.version=3.8, sizes a machine
 * lacks).
 */
#include "config.h"
#include "fault.h"
#include "machine_fixture.h"

#define BASE 0x7f0000000000ULL
#define KB (UINT64_C(1) << 10)
#define MB (UINT64_C(1) << 20)

/* The PTEs of [va, va + pages * 4K) map consecutive frames from an
 * aligned first one, accessed, dirty and writable: one folio. */
static void assert_folio(Thread *t, uint64_t va, unsigned pages)
{
  uint64_t first = pte_pfn(fixture_pte(t, va));
  ck_assert_uint_eq(first & (pages - 1), 0);
  for (unsigned i = 0; i < pages; i++) {
    uint64_t e = fixture_pte(t, va + i * 4096);
    ck_assert_msg((e & (PTE_P | PTE_RW | PTE_D | PTE_A)) == (PTE_P | PTE_RW | PTE_D | PTE_A), "pte %u: %#lx", i,
                  (unsigned long)e);
    ck_assert_uint_eq(pte_pfn(e), first + i);
  }
}

/* Skylake (4K pages, 2M PMD) with PMD-sized THP off through its size's
 * own control, and `extra`. */
static Machine *mthp_machine(const char *extra, const char *extra2)
{
  const char *sets[] = { "thp.hugepages_2048kB=never", extra, extra2, NULL };
  return fixture_machine("skylake", sets);
}

/* ---- the choice of order ---------------------------------------------------- */

/* do_anonymous_page with a 64K folio: 16 PTEs, one fault, 16 pages of RSS. */
START_TEST(test_fault_maps_folio)
{
  Machine *m = mthp_machine("thp.hugepages_64kB=always", NULL);
  Thread *t = fixture_thread(m, 1);
  uint64_t free0 = fixture_free_pages(m->k);
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x15123, ACC_STORE, NULL), FAULT_MAPPED);
  assert_folio(t, BASE + 0x10000, 16);
  ck_assert_uint_eq(fixture_pte(t, BASE + 0xf000), 0);
  ck_assert_uint_eq(fixture_pte(t, BASE + 0x20000), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_ANON), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 64 * KB);
  ck_assert_uint_eq(t->mm->rss_pages, 16);
  ck_assert_uint_eq(fixture_free_pages(m->k), free0 - 16 - 3); /* the folio, a PUD, PMD and PTE table */
  /* The other 15 pages need no fault. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x1f000, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  ck_assert_uint_eq(t->mm->rss_pages, 16);
  machine_free(m);
}
END_TEST

/* A read fault maps the zero page (do_anonymous_page without
 * FAULT_FLAG_WRITE), and its PTE makes the 64K range not none: the next
 * write in that range takes the next enabled order, 16K, whose range is
 * none (pte_range_none). */
START_TEST(test_fallback_when_ptes_present)
{
  Machine *m = mthp_machine("thp.hugepages_64kB=always", "thp.hugepages_16kB=always");
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x3000, ACC_LOAD, NULL), FAULT_MAPPED);
  ck_assert(fixture_pte(t, BASE + 0x3000) & PTE_SW_ZERO);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x9000, ACC_STORE, NULL), FAULT_MAPPED);
  assert_folio(t, BASE + 0x8000, 4);
  ck_assert_uint_eq(fixture_pte(t, BASE + 0x7000), 0);
  ck_assert_uint_eq(fixture_pte(t, BASE + 0xc000), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_FALLBACK), 0); /* not an allocation failure */
  /* A write next to the zero page: the 16K range holds it too, order 0. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x2000, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_pte(t, BASE + 0x1000), 0);
  ck_assert_uint_eq(t->mm->rss_pages, 4 + 1); /* the zero page is no RSS (do_anonymous_page) */
  machine_free(m);
}
END_TEST

/* thp_vma_suitable_orders: the aligned range must lie inside the VMA. */
START_TEST(test_vma_too_small_or_misaligned)
{
  Machine *m = mthp_machine("thp.hugepages_64kB=always", NULL);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 32 * KB, PROT_R | PROT_W, 0);
  fixture_syscall(m, t, REC_MMAP, BASE + MB + 0x4000, 64 * KB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_int_eq(fixture_fault(m, t, BASE + MB + 0x8000, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_ANON), 2);
  ck_assert_uint_eq(t->mm->rss_pages, 2);
  ck_assert_uint_eq(fixture_pte(t, BASE + 0x1000), 0);
  /* The same length, aligned: the folio fits. */
  fixture_syscall(m, t, REC_MMAP, BASE + 2 * MB, 64 * KB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 2 * MB + 0x8000, ACC_STORE, NULL), FAULT_MAPPED);
  assert_folio(t, BASE + 2 * MB, 16);
  machine_free(m);
}
END_TEST

/* The size's mode x thp.enabled x the VMA's advice and the process's
 * prctl -> a 64K folio or a base page (thp_vma_allowable_orders). */
static const struct {
  const char *size, *enabled;
  int advice;    /* -1: none, else TraceAdvice */
  gboolean prctl;
  gboolean folio;
} mode_cases[] = {
  { "always", "never", -1, FALSE, TRUE },
  { "always", "never", ADV_NOHUGEPAGE, FALSE, FALSE },
  { "always", "never", -1, TRUE, FALSE },
  { "madvise", "always", -1, FALSE, FALSE },
  { "madvise", "never", ADV_HUGEPAGE, FALSE, TRUE },
  { "inherit", "always", -1, FALSE, TRUE },
  { "inherit", "madvise", -1, FALSE, FALSE },
  { "inherit", "madvise", ADV_HUGEPAGE, FALSE, TRUE },
  { "inherit", "never", ADV_HUGEPAGE, FALSE, FALSE },
  { "never", "always", ADV_HUGEPAGE, FALSE, FALSE },
};

START_TEST(test_modes)
{
  g_autofree char *size = g_strdup_printf("thp.hugepages_64kB=%s", mode_cases[_i].size);
  g_autofree char *enabled = g_strdup_printf("thp.enabled=%s", mode_cases[_i].enabled);
  Machine *m = mthp_machine(size, enabled);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  if (mode_cases[_i].advice >= 0)
    fixture_syscall(m, t, REC_MADVISE, BASE, 4 * MB, mode_cases[_i].advice, 0);
  if (mode_cases[_i].prctl) {
    TraceRecord r = { .type = REC_PRCTL, .arg = PRCTL_THP_DISABLE, .arg2 = 1 };
    kernel_syscall(m->k, &m->cpus[0]->kc, t->mm, &r);
  }
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x4000, ACC_STORE, NULL), FAULT_MAPPED);
  gboolean folio = fixture_pte(t, BASE) != 0;
  ck_assert_msg(folio == mode_cases[_i].folio, "64kB=%s enabled=%s advice=%d prctl=%d: folio=%d", mode_cases[_i].size,
                mode_cases[_i].enabled, mode_cases[_i].advice, mode_cases[_i].prctl, folio);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), folio);
  ck_assert_uint_eq(t->mm->rss_pages, folio ? 16 : 1);
  machine_free(m);
}
END_TEST

/* In 6.12 the PMD size has its own control: hugepages-2048kB=never turns
 * PMD-sized THP off under thp.enabled=always, =always turns it on under
 * thp.enabled=never (__handle_mm_fault's thp_vma_allowable_order), and
 * khugepaged runs as it says (hugepage_pmd_enabled). */
START_TEST(test_pmd_size_control)
{
  const char *off[] = { "thp.hugepages_2048kB=never", NULL };
  const char *on[] = { "thp.enabled=never", "thp.hugepages_2048kB=always", NULL };
  const char *const *cases[] = { off, on };
  for (unsigned c = 0; c < 2; c++) {
    Machine *m = fixture_machine("skylake", cases[c]);
    Thread *t = fixture_thread(m, 1);
    fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
    ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
    ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), c);
    ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 0);
    ck_assert_int_eq(thp_pmd_enabled(m->k), c); /* hugepage_pmd_enabled: khugepaged runs */
    machine_free(m);
  }
}
END_TEST

/* With PMD-sized THP on and the huge allocation failing, the fault falls
 * back to the PTE path, which tries the mTHP orders (6.12's
 * do_anonymous_page after VM_FAULT_FALLBACK). */
START_TEST(test_pmd_fallback_takes_mthp)
{
  const char *sets[] = { "thp.hugepages_64kB=always", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  uint64_t pfn;
  while (physmem_alloc(m->k->pm, 0, 9, MT_MOVABLE, &pfn))
    ;
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  assert_folio(t, BASE, 16);
  machine_free(m);
}
END_TEST

/* An order whose allocation fails counts anon_fault_fallback and the next
 * lower enabled order is tried; with none left, a base page. */
START_TEST(test_alloc_failure_falls_back)
{
  Machine *m = mthp_machine("thp.hugepages_64kB=always", "thp.hugepages_16kB=always");
  Thread *t = fixture_thread(m, 1);
  uint64_t pfn;
  for (unsigned order = 10; order-- > 4;)
    while (physmem_alloc(m->k->pm, 0, order, MT_MOVABLE, &pfn))
      ;
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_FALLBACK), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  /* Per size (hugepages-<size>kB/stats/): the 64K fell back, the 16K was mapped. */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_64KB_ANON_FAULT_FALLBACK), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_64KB_ANON_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_16KB_ANON_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_16KB_ANON_FAULT_FALLBACK), 0);
  assert_folio(t, BASE, 4);
  ck_assert_uint_eq(fixture_pte(t, BASE + 0x4000), 0);
  for (unsigned order = 4; order-- > 2;)
    while (physmem_alloc(m->k->pm, 0, order, MT_MOVABLE, &pfn))
      ;
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x10000, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_FALLBACK), 3);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_64KB_ANON_FAULT_FALLBACK), 2);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_16KB_ANON_FAULT_FALLBACK), 1);
  ck_assert_uint_eq(t->mm->rss_pages, 4 + 1);
  machine_free(m);
}
END_TEST

/* ---- unmapping ------------------------------------------------------------- */

/* A folio partly unmapped goes on the deferred split queue once
 * (deferred_split_folio counts split_deferred; thp_deferred_split_page is
 * the PMD size's only); its split frees the unmapped pages; a folio
 * unmapped whole is freed whole. */
START_TEST(test_partial_unmap_defers_split)
{
  Machine *m = mthp_machine("thp.hugepages_64kB=always", NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  uint64_t free0 = fixture_free_pages(k);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x10000, ACC_STORE, NULL), FAULT_MAPPED);
  uint64_t tables = free0 - fixture_free_pages(k) - 32;
  ck_assert_uint_eq(thp_page_count(k), 2);
  fixture_syscall(m, t, REC_MUNMAP, BASE + 0x4000, 0x2000, 0, 0);
  fixture_syscall(m, t, REC_MUNMAP, BASE + 0x8000, 0x1000, 0, 0);
  ck_assert_uint_eq(thp_deferred_count(k), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_SPLIT_DEFERRED), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_64KB_SPLIT_DEFERRED), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_DEFERRED_SPLIT_PAGE), 0);
  ck_assert_uint_eq(t->mm->rss_pages, 32 - 3);
  ck_assert_uint_eq(fixture_free_pages(k), free0 - 32 - tables); /* nothing freed yet */
  /* The second folio, unmapped whole: freed at once, whole. */
  fixture_syscall(m, t, REC_MUNMAP, BASE + 0x10000, 0x10000, 0, 0);
  ck_assert_uint_eq(thp_page_count(k), 1);
  ck_assert_uint_eq(fixture_free_pages(k), free0 - 16 - tables);
  uint64_t cycles = 0;
  ck_assert_uint_eq(thp_deferred_split_scan(k, &m->cpus[0]->kc, &cycles), 3);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_SPLIT), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_64KB_SPLIT), 1);
  ck_assert_uint_eq(thp_page_count(k), 0);
  ck_assert_uint_eq(fixture_free_pages(k), free0 - 13 - tables);
  /* The 13 left are base pages now, freed one by one. */
  fixture_syscall(m, t, REC_MUNMAP, BASE, 4 * MB, 0, 0);
  ck_assert_uint_eq(t->mm->rss_pages, 0);
  ck_assert_uint_eq(fixture_free_pages(k), free0); /* the emptied tables too */
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* ---- the TLB ----------------------------------------------------------------- */

/* AMD's PTE coalescing (zen4, tlb.coalesce=true) sees a 64K folio: four
 * groups of four contiguous, aligned, accessed PTEs, one coalesced entry
 * each. */
START_TEST(test_zen4_coalesces_folio)
{
  const char *sets[] = { "thp.hugepages_2048kB=never", "thp.hugepages_64kB=always", NULL };
  Machine *m = fixture_machine("zen4", sets);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  fixture_access(m, t, ACC_STORE, BASE);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  uint64_t walks0 = fixture_cpu0_ctr(m, CTR_PAGE_WALKS);
  for (unsigned i = 1; i < 16; i++)
    fixture_access(m, t, ACC_LOAD, BASE + i * 4096);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_PAGE_FAULTS), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_STLB_COALESCED_FILLS), 4);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_STLB_COALESCED_HITS), 12);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_PAGE_WALKS) - walks0, 3); /* the first group came with the store */
  machine_free(m);
}
END_TEST

/* ---- ppc64 and the settings refused ---------------------------------------- */

/* ppc64 hash with 64K pages: THP_ORDERS_ALL_ANON is orders 2 to 8 of 64K
 * (256K to 16M); a 256K folio is four 64K PTEs. */
START_TEST(test_ppc64_64k_folio)
{
  const char *sets[] = { "thp.enabled=never", "thp.hugepages_256kB=always", NULL };
  Machine *m = fixture_machine("power7", sets);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 32 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x50000, ACC_STORE, NULL), FAULT_MAPPED);
  uint64_t first = pte_pfn(fixture_pte(t, BASE + 0x40000));
  ck_assert_uint_eq(first & 63, 0);
  for (unsigned i = 0; i < 4; i++)
    ck_assert_uint_eq(pte_pfn(fixture_pte(t, BASE + 0x40000 + i * 0x10000)), first + 16 * i);
  ck_assert_uint_eq(fixture_pte(t, BASE + 0x80000), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MTHP_ANON_FAULT_ALLOC), 1);
  ck_assert_uint_eq(t->mm->rss_pages, 4 * 16);
  machine_free(m);
}
END_TEST

static const struct {
  const char *preset;
  const char *sets[3];
  const char *msg;
} refused_cases[] = {
  { "skylake", { "kernel.version=3.8", "thp.hugepages_64kB=always", NULL }, "multi-size THP came with Linux 6.8" },
  { "skylake", { "kernel.version=3.8", "thp.hugepages_2048kB=never", NULL }, "must be inherit under kernel.version=3.8" },
  { "skylake", { "thp.hugepages_4096kB=madvise", NULL, NULL }, "its sizes are 16K to 2M" },
  { "power7", { "thp.hugepages_64kB=always", NULL, NULL }, "its sizes are 256K to 16M" },
  { "power7", { "mm.base_page_size=4K", "thp.hugepages_16kB=always", NULL }, "no transparent huge pages of any size" },
};

START_TEST(test_refused)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, refused_cases[_i].preset, &err));
  if (g_str_has_prefix(refused_cases[_i].sets[0], "mm."))
    ck_assert(settings_set(s, "thp.enabled", "never", "test", &err));
  fixture_settings_apply(s, refused_cases[_i].sets);
  Machine *m = machine_new(refused_cases[_i].preset, s, NULL, &err);
  ck_assert_ptr_null(m);
  ck_assert_msg(err && strstr(err->message, refused_cases[_i].msg), "%s", err ? err->message : "no error");
  g_error_free(err);
}
END_TEST

/* kernel.version=3.8 with the defaults runs as before: PMD-sized THP as
 * thp.enabled says. */
START_TEST(test_38_defaults)
{
  const char *sets[] = { "kernel.version=3.8", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  machine_free(m);
}
END_TEST

static Suite *mthp_suite(void)
{
  Suite *s = suite_create("mthp");
  TCase *tc = tcase_create("fault");
  tcase_add_test(tc, test_fault_maps_folio);
  tcase_add_test(tc, test_fallback_when_ptes_present);
  tcase_add_test(tc, test_vma_too_small_or_misaligned);
  tcase_add_loop_test(tc, test_modes, 0, G_N_ELEMENTS(mode_cases));
  tcase_add_test(tc, test_pmd_size_control);
  tcase_add_test(tc, test_pmd_fallback_takes_mthp);
  tcase_add_test(tc, test_alloc_failure_falls_back);
  suite_add_tcase(s, tc);
  tc = tcase_create("unmap");
  tcase_add_test(tc, test_partial_unmap_defers_split);
  suite_add_tcase(s, tc);
  tc = tcase_create("tlb");
  tcase_add_test(tc, test_zen4_coalesces_folio);
  suite_add_tcase(s, tc);
  tc = tcase_create("settings");
  tcase_add_test(tc, test_ppc64_64k_folio);
  tcase_add_loop_test(tc, test_refused, 0, G_N_ELEMENTS(refused_cases));
  tcase_add_test(tc, test_38_defaults);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(mthp_suite)
