/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the kernel side with 64K base pages (ppc64 hash, the power7
 * preset): the base-page fault (an order-4 block, 64K cleared, the zero
 * page), alignment of the memory calls, unmapping back to the buddy
 * allocator; the 16M THP (an order-12 PMD leaf, its HPTEs inserted lazily
 * one per 64K subpage, all of them removed by a flush, split into 256 PTEs,
 * the deferred split); MADV_COLLAPSE into 16M; the 16M hugetlb pool.
 */
#include "config.h"
#include "fault.h"
#include "hugetlb.h"
#include "khugepaged.h"
#include "machine_fixture.h"
#include "ppc64/hpt.h"
#include "ppc64/ppc64.h"

#define BASE 0x7f0000000000ULL
#define KB (UINT64_C(1) << 10)
#define MB (UINT64_C(1) << 20)

/* ---- helpers ----------------------------------------------------------------- */

static uint64_t leaf_of(Thread *t, uint64_t va, unsigned *level)
{
  unsigned idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, va, level, &idx);
  return n->e[idx];
}

/* The HPTE of the 64K page holding va, or v = 0 when there is none. */
static Ppc64Hpte hpte_of(Machine *m, Thread *t, uint64_t va)
{
  Cpu *cpu = m->cpus[0];
  Ppc64Hpt *h = ppc64_cpu_hpt(cpu);
  unsigned ssize = va >= (1ULL << 40) ? PPC64_SEG_1T : PPC64_SEG_256M;
  uint64_t vpn = ppc64_vpn(va, ppc64_vsid(ppc64_context(cpu, t->mm->asid), va, ssize), ssize);
  uint64_t hash = ppc64_hpt_hash(vpn, 16, ssize), mask = ppc64_hpt_mask(h);
  uint64_t want = ppc64_hpte_avpn(vpn, 16, ssize) | HPTE_V_VALID;
  int slot = ppc64_hpt_find(h, hash & mask, want);
  if (slot >= 0)
    return ppc64_hpt_get(h, hash & mask, (unsigned)slot);
  slot = ppc64_hpt_find(h, ~hash & mask, want | HPTE_V_SECONDARY);
  if (slot >= 0)
    return ppc64_hpt_get(h, ~hash & mask, (unsigned)slot);
  return (Ppc64Hpte){ 0, 0 };
}

static const char *const thp_never[] = { "thp.enabled=never", NULL };
static const char *const thp_always[] = { "thp.enabled=always", "thp.use_zero_page=false", NULL };

/* ---- base pages ------------------------------------------------------------------ */

START_TEST(test_geometry_from_setting)
{
  Machine *m = fixture_machine("power7", thp_never);
  Kernel *k = m->k;
  ck_assert_uint_eq(k->base_shift, 16);
  ck_assert_uint_eq(k->base_order, 4);
  ck_assert_uint_eq(k->base_bytes, 64 * KB);
  ck_assert_uint_eq(k->pmd_bytes, 16 * MB); /* H_PTE_INDEX_SIZE 8: 256 x 64K */
  ck_assert_uint_eq(k->pmd_order, 12);
  ck_assert_uint_eq(k->pmd_subpages, 256);
  ck_assert_uint_eq(k->zero_pfn & 15, 0); /* the zero page is a 64K page */
  machine_free(m);
  /* x86-64 keeps 4K and 2M. */
  m = fixture_machine("skylake", NULL);
  ck_assert_uint_eq(m->k->base_bytes, 4 * KB);
  ck_assert_uint_eq(m->k->pmd_bytes, 2 * MB);
  ck_assert_uint_eq(m->k->pmd_subpages, 512);
  machine_free(m);
}
END_TEST

/* The Ingens threshold counts the base pages of a PMD: 90% of 256 64K pages
 * is 231 (230.4 rounded up), not 90% of 512. */
START_TEST(test_ingens_threshold_64k)
{
  static const char *const sets[] = { "thp.enabled=always", "thp.policy=ingens", "thp.util_threshold=0.9", NULL };
  Machine *m = fixture_machine("power7", sets);
  Thread *t = fixture_thread(m, 1);
  Vma v = { .start = 0, .end = 16 * MB, .prot = PROT_R | PROT_W };
  ThpRangeStats st = { .present = 231, .none = 25, .writable = 231, .young = 231 };
  ck_assert_str_eq(m->k->thp->name, "ingens");
  ck_assert_int_eq(m->k->thp->collapse_check(m->k, t->mm, &v, &st), SCAN_SUCCEED);
  st.present = st.writable = st.young = 230;
  st.none = 26;
  ck_assert_int_eq(m->k->thp->collapse_check(m->k, t->mm, &v, &st), SCAN_POLICY);
  machine_free(m);
}
END_TEST

START_TEST(test_base_fault_64k)
{
  Machine *m = fixture_machine("power7", thp_never);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  uint64_t free0 = fixture_free_pages(k);
  fixture_syscall(m, t, REC_MMAP, BASE, 1 * MB, PROT_R | PROT_W, 0);
  uint64_t cycles;
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x12345, ACC_STORE, &cycles), FAULT_MAPPED);
  unsigned level;
  uint64_t e = leaf_of(t, BASE + 0x10000, &level);
  ck_assert_uint_eq(level, 1);
  ck_assert(e & PTE_P);
  ck_assert_uint_eq(pte_pfn(e) & 15, 0); /* an order-4 block of 4K frames */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_ANON), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 64 * KB);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 64 * KB);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_ZEROING_CYCLES), kernel_clear_cycles(k, 64 * KB));
  ck_assert_uint_gt(kernel_clear_cycles(k, 64 * KB), k->clear_4k_cycles);
  ck_assert_uint_eq(t->mm->rss_pages, 1); /* one 64K base page (mm_counter counts PAGE_SIZE pages) */
  /* The same 64K page elsewhere: already mapped. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x1fff8, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_ANON), 1);
  /* A read of the next page maps the zero page. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x20000, ACC_LOAD, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(pte_pfn(leaf_of(t, BASE + 0x20000, &level)), k->zero_pfn);
  ck_assert_uint_eq(t->mm->rss_pages, 1); /* the zero page is no RSS */
  /* The hash MMU translates the page as a 64K page. */
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, BASE + 0x12345, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.size, PPC64_64K);
  ck_assert_uint_eq(x.pfn, pte_pfn(e));
  Ppc64Hpte h = hpte_of(m, t, BASE + 0x10000);
  ck_assert(h.v & HPTE_V_LARGE);
  ck_assert_uint_eq(ppc64_hpte_page_shift(16, h.v, h.r), 16);
  /* munmap gives the order-4 block and the tables back. */
  fixture_syscall(m, t, REC_MUNMAP, BASE, 1 * MB, 0, 0);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 0);
  ck_assert_uint_eq(hpte_of(m, t, BASE + 0x10000).v, 0);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

START_TEST(test_alignment_64k)
{
  Machine *m = fixture_machine("power7", thp_never);
  Thread *t = fixture_thread(m, 1);
  /* mmap, mprotect, munmap need 64K-aligned addresses; lengths round up. */
  fixture_syscall(m, t, REC_MMAP, BASE + 0x1000, 64 * KB, PROT_R | PROT_W, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 1);
  ck_assert_ptr_null(mm_find_vma(t->mm, BASE + 0x1000));
  fixture_syscall(m, t, REC_MMAP, BASE, 0x1000, PROT_R | PROT_W, 0);
  const Vma *v = mm_find_vma(t->mm, BASE);
  ck_assert_ptr_nonnull(v);
  ck_assert_uint_eq(v->end - v->start, 64 * KB);
  fixture_syscall(m, t, REC_MPROTECT, BASE + 0x8000, 64 * KB, PROT_R, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 2);
  machine_free(m);
}
END_TEST

/* ---- 16M THP ----------------------------------------------------------------------- */

START_TEST(test_thp_16m_fault_and_lazy_hptes)
{
  Machine *m = fixture_machine("power7", thp_always);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  Cpu *cpu = m->cpus[0];
  Ppc64Hpt *hpt = ppc64_cpu_hpt(cpu);
  uint64_t free0 = fixture_free_pages(k);
  fixture_syscall(m, t, REC_MMAP, BASE, 64 * MB, PROT_R | PROT_W, 0);
  const uint64_t huge = BASE + 16 * MB;
  ck_assert_int_eq(fixture_fault(m, t, huge + 0x1234, ACC_STORE, NULL), FAULT_MAPPED);
  unsigned level;
  uint64_t e = leaf_of(t, huge, &level);
  ck_assert_uint_eq(level, 2);
  ck_assert(e & PTE_PS);
  ck_assert_uint_eq(pte_pfn(e) & 4095, 0); /* order 12 */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 16 * MB);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 64 * KB);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_ZEROING_CYCLES), kernel_clear_cycles(k, 16 * MB));
  ck_assert_uint_eq(t->mm->rss_pages, 256); /* 16M of 64K pages */
  ck_assert_uint_eq(thp_page_count(k), 1);

  /* The hash fault inserts the HPTE of the touched 64K subpage only,
   * encoding 16M (LP 0x8 with a 64K base). */
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, huge + 0x1234, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.size, PPC64_16M);
  ck_assert_uint_eq(x.pfn, pte_pfn(e));
  ck_assert_uint_eq(ppc64_hpt_owner_valid(hpt, t->mm->asid), 1);
  Ppc64Hpte h0 = hpte_of(m, t, huge);
  ck_assert(h0.v & HPTE_V_LARGE);
  ck_assert_uint_eq(ppc64_hpte_page_shift(16, h0.v, h0.r), 24);
  ck_assert_uint_eq(h0.r & HPTE_R_RPN, (pte_pfn(e) << 12) | (0x8ULL << 12));
  ck_assert_uint_eq(hpte_of(m, t, huge + 0x50000).v, 0);
  /* The TLB's 16M entry covers the other subpages... */
  ck_assert_int_eq(fixture_xlat(m, t, huge + 0x50000, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0);
  /* ...until it is gone: then each subpage missed gets its own HPTE. */
  m->arch->flush_all(cpu);
  ck_assert_int_eq(fixture_xlat(m, t, huge + 0x50000, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.size, PPC64_16M);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(hpt, t->mm->asid), 2);
  ck_assert_uint_eq(hpte_of(m, t, huge + 0x50000).v != 0, 1);
  m->arch->flush_all(cpu);
  ck_assert_int_eq(fixture_xlat(m, t, huge + 0xff0000, ACC_STORE, &x), XLAT_OK);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(hpt, t->mm->asid), 3);

  /* munmap of the 16M page removes every HPTE of it and frees it whole. */
  fixture_syscall(m, t, REC_MUNMAP, huge, 16 * MB, 0, 0);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(hpt, t->mm->asid), 0);
  ck_assert_uint_eq(thp_page_count(k), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 0);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 64 * MB, 0, 0);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

START_TEST(test_thp_16m_split_and_deferred)
{
  Machine *m = fixture_machine("power7", thp_always);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  Cpu *cpu = m->cpus[0];
  Ppc64Hpt *hpt = ppc64_cpu_hpt(cpu);
  uint64_t free0 = fixture_free_pages(k);
  fixture_syscall(m, t, REC_MMAP, BASE, 32 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  unsigned level;
  uint64_t head = pte_pfn(leaf_of(t, BASE, &level));
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, BASE + 0x30000, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(hpt, t->mm->asid), 1);
  /* munmap of the second half splits the PMD into 256 64K PTEs (the 16M
   * HPTE goes with the split) and queues the half-mapped THP. */
  fixture_syscall(m, t, REC_MUNMAP, BASE + 8 * MB, 8 * MB, 0, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 1);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(hpt, t->mm->asid), 0);
  for (unsigned i = 0; i < 128; i += 37) {
    uint64_t e = leaf_of(t, BASE + (uint64_t)i * 64 * KB, &level);
    ck_assert_uint_eq(level, 1);
    ck_assert_uint_eq(pte_pfn(e), head + 16 * i);
  }
  ck_assert_uint_eq(leaf_of(t, BASE + 8 * MB, &level) & PTE_P, 0);
  ck_assert_uint_eq(thp_deferred_count(k), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 16 * MB); /* nothing freed yet */
  /* A translation now maps a 64K page of the split THP. */
  ck_assert_int_eq(fixture_xlat(m, t, BASE + 0x30000, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.size, PPC64_64K);
  ck_assert_uint_eq(x.pfn, head + 0x30);
  /* The deferred split frees the unmapped half as 64K pages. */
  uint64_t cycles = 0;
  ck_assert_uint_eq(thp_deferred_split_scan(k, &cpu->kc, &cycles), 2048);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 8 * MB);
  ck_assert_uint_eq(thp_page_count(k), 0);
  fixture_check_buddy(k);
  /* The remaining subpages are order-4 blocks that munmap frees one by one. */
  fixture_syscall(m, t, REC_MUNMAP, BASE, 32 * MB, 0, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 0);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

START_TEST(test_collapse_16m)
{
  const char *const sets[] = { "thp.enabled=madvise", NULL };
  Machine *m = fixture_machine("power7", sets);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  fixture_syscall(m, t, REC_MMAP, BASE, 16 * MB, PROT_R | PROT_W, 0);
  /* Three 64K pages written, the rest empty: a base-page VMA. */
  for (unsigned i = 0; i < 3; i++)
    ck_assert_int_eq(fixture_fault(m, t, BASE + (uint64_t)i * 5 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 3 * 64 * KB);
  /* Two of them hashed: 64K HPTEs that the collapse must remove. */
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, BASE, ACC_LOAD, &x), XLAT_OK);
  ck_assert_int_eq(fixture_xlat(m, t, BASE + 5 * MB, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.size, PPC64_64K);
  Ppc64Hpt *hpt = ppc64_cpu_hpt(m->cpus[0]);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(hpt, t->mm->asid), 2);
  fixture_syscall(m, t, REC_MADVISE, BASE, 16 * MB, ADV_COLLAPSE, 0);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(hpt, t->mm->asid), 0);
  unsigned level;
  uint64_t e = leaf_of(t, BASE, &level);
  ck_assert_uint_eq(level, 2);
  ck_assert(e & PTE_PS);
  ck_assert_uint_eq(pte_pfn(e) & 4095, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 16 * MB);
  ck_assert_uint_eq(t->mm->rss_pages, 256); /* 16M of 64K pages */
  ck_assert_uint_eq(thp_page_count(k), 1);
  /* The next miss inserts a 16M-encoding HPTE. */
  ck_assert_int_eq(fixture_xlat(m, t, BASE + 5 * MB, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.size, PPC64_16M);
  ck_assert_uint_eq(x.pfn, pte_pfn(e));
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* ---- 16M hugetlb --------------------------------------------------------------------- */

START_TEST(test_hugetlb_16m)
{
  const char *const sets[] = { "thp.enabled=never", "hugetlb.nr_hugepages=2", NULL };
  Machine *m = fixture_machine("power7", sets);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  ck_assert_uint_eq(hugetlb_order(k->hugetlb, HPAGE_2M), 12); /* the PMD size: 16M */
  ck_assert_uint_eq(hugetlb_total(k->hugetlb, HPAGE_2M), 2);
  /* An 8M hugetlb mapping is not a multiple of the 16M page: EINVAL. */
  fixture_syscall(m, t, REC_MMAP, BASE, 8 * MB, PROT_R | PROT_W, MAP_F_HUGETLB);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 32 * MB, PROT_R | PROT_W, MAP_F_HUGETLB);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 1);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 16 * MB + 0x777, ACC_STORE, NULL), FAULT_MAPPED);
  unsigned level;
  uint64_t e = leaf_of(t, BASE + 16 * MB, &level);
  ck_assert_uint_eq(level, 2);
  ck_assert_uint_eq(pte_pfn(e) & 4095, 0);
  ck_assert_uint_eq(hugetlb_free_count(k->hugetlb, HPAGE_2M), 1);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, BASE + 16 * MB + 0x777, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.size, PPC64_16M);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 32 * MB, 0, 0);
  ck_assert_uint_eq(hugetlb_free_count(k->hugetlb, HPAGE_2M), 2);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(ppc64_cpu_hpt(m->cpus[0]), t->mm->asid), 0);
  machine_free(m);
}
END_TEST

static Suite *base64k_suite(void)
{
  Suite *s = suite_create("base64k");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_geometry_from_setting);
  tcase_add_test(tc, test_ingens_threshold_64k);
  tcase_add_test(tc, test_base_fault_64k);
  tcase_add_test(tc, test_alignment_64k);
  tcase_add_test(tc, test_thp_16m_fault_and_lazy_hptes);
  tcase_add_test(tc, test_thp_16m_split_and_deferred);
  tcase_add_test(tc, test_collapse_16m);
  tcase_add_test(tc, test_hugetlb_16m);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(base64k_suite)
