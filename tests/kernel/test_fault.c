/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the anonymous fault path with base pages: zero page on read,
 * zeroed page on write, copy-on-write of the zero page, reuse after
 * mprotect, SIGSEGV, page tables allocated on the way, and the cycles
 * charged for each; and the x86 ASID a CPU gives a process it switches to.  Huge pages are tested in test_thp.c.  The kernel
 * alone (tests/kernel_fixture.h): the flushes it asks the hardware for are
 * checked as requests; what the machine makes of them is test_machine.c's.
 */
#include "config.h"
#include "fault.h"
#include "kernel_fixture.h"

#define BASE 0x7f0000000000ULL

/* These tests are about 4K pages: THP off (tests/system/test_thp.c has the rest). */
static const char *const base_pages[] = { "thp.enabled=never", NULL };

START_TEST(test_read_maps_zero_page)
{
  KernelFixture *m = kfix_new("skylake", base_pages);
  Thread *t = kfix_thread(m, 1);
  KfCpu *cpu = m->cpus[0];
  Kernel *k = m->k;
  fixture_vma(t, BASE, 1 << 20, PROT_R | PROT_W);
  uint64_t free_before = physmem_free_pages(k->pm, 0);
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 123, ACC_LOAD, &cycles), FAULT_MAPPED);
  uint64_t e = fixture_pte(t, BASE);
  ck_assert(e & PTE_P);
  ck_assert(e & PTE_SW_ZERO);
  ck_assert(!(e & PTE_RW));
  ck_assert_uint_eq(pte_pfn(e), k->zero_pfn);
  /* Three table pages (PDPT, PD, PT) and no data page were allocated. */
  ck_assert_uint_eq(cpu->ctr.c[CTR_PGTABLE_PAGES_ALLOC], 3);
  ck_assert_uint_eq(free_before - physmem_free_pages(k->pm, 0), 3);
  ck_assert_uint_eq(cycles, k->zero_page_cycles + 3 * (k->ptpage_cycles + k->clear_4k_cycles));
  ck_assert_uint_eq(cpu->ctr.c[CTR_FAULTS_ZERO_PAGE], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_FAULTS], 1);
  kfix_free(m);
}
END_TEST

START_TEST(test_write_allocates_and_cow)
{
  KernelFixture *m = kfix_new("skylake", base_pages);
  Thread *t = kfix_thread(m, 1);
  KfCpu *cpu = m->cpus[0];
  Kernel *k = m->k;
  fixture_vma(t, BASE, 1 << 20, PROT_R | PROT_W);
  uint64_t cycles;
  /* Write to an empty PTE: a zeroed page, writable and dirty. */
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_STORE, &cycles), FAULT_MAPPED);
  uint64_t e = fixture_pte(t, BASE);
  ck_assert((e & (PTE_P | PTE_RW | PTE_D)) == (PTE_P | PTE_RW | PTE_D));
  ck_assert(!(e & PTE_SW_ZERO));
  ck_assert_uint_eq(cpu->ctr.c[CTR_FAULTS_ANON], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_ZEROING_CYCLES], k->clear_4k_cycles);
  cpu->clock += cycles; /* as the core does: the next clear starts after this one */
  /* Read then write the next page: zero page, then copy-on-write. */
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 4096, ACC_LOAD, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(cycles, k->zero_page_cycles); /* tables exist already */
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 4096, ACC_STORE, &cycles), FAULT_MAPPED);
  e = fixture_pte(t, BASE + 4096);
  ck_assert(!(e & PTE_SW_ZERO));
  ck_assert(e & PTE_RW);
  ck_assert_uint_ne(pte_pfn(e), k->zero_pfn);
  ck_assert_uint_eq(cpu->ctr.c[CTR_FAULTS_COW], 1);
  ck_assert_uint_eq(cycles, k->anon_cycles + k->clear_4k_cycles);
  ck_assert_uint_eq(t->mm->rss_pages, 2);
  kfix_free(m);
}
END_TEST

/* mm_counter: do_anonymous_page's zero-page path counts nothing, the copy
 * of wp_page_copy counts one anon page, zap_pte_range gives back only what
 * was counted (Linux 6.12 mm/memory.c). */
START_TEST(test_rss_counts_no_zero_page)
{
  KernelFixture *m = kfix_new("skylake", base_pages);
  Thread *t = kfix_mapped_thread(m, 1, BASE, 1 << 20, PROT_R | PROT_W, 0);
  KfCpu *cpu = m->cpus[0];
  Kernel *k = m->k;
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_LOAD, &cycles), FAULT_MAPPED);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 4096, ACC_LOAD, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(t->mm->rss_pages, 0);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(t->mm->rss_pages, 1);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 8192, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(t->mm->rss_pages, 2);
  /* Unmapping the copy and the zero page gives back the copy only. */
  kfix_syscall(m, t, REC_MUNMAP, BASE, 8192, 0, 0);
  ck_assert_uint_eq(t->mm->rss_pages, 1);
  kfix_free(m);
}
END_TEST

START_TEST(test_segv)
{
  KernelFixture *m = kfix_new("skylake", base_pages);
  Thread *t = kfix_thread(m, 1);
  KfCpu *cpu = m->cpus[0];
  Kernel *k = m->k;
  fixture_vma(t, BASE, 1 << 20, PROT_R);
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + (1 << 20), ACC_LOAD, &cycles), FAULT_SEGV);
  ck_assert_uint_eq(cycles, k->segv_cycles);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_STORE, &cycles), FAULT_SEGV);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_IFETCH, &cycles), FAULT_SEGV);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SEGV], 3);
  ck_assert_uint_eq(fixture_pte(t, BASE), 0);
  kfix_free(m);
}
END_TEST

START_TEST(test_mprotect_then_write_reuses)
{
  KernelFixture *m = kfix_new("skylake", base_pages);
  Thread *t = kfix_mapped_thread(m, 1, BASE, 1 << 20, PROT_R | PROT_W, 0);
  KfCpu *cpu = m->cpus[0];
  Kernel *k = m->k;
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_STORE, &cycles), FAULT_MAPPED);
  uint64_t pfn = pte_pfn(fixture_pte(t, BASE));
  kfix_syscall(m, t, REC_MPROTECT, BASE, 1 << 20, PROT_R, 0);
  ck_assert(!(fixture_pte(t, BASE) & PTE_RW));
  /* Write taken away: the range is shot down, no table freed. */
  ck_assert_uint_eq(m->flushes->len, 1);
  ck_assert(!g_array_index(m->flushes, KfFlush, 0).freed_tables);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_STORE, &cycles), FAULT_SEGV);
  kfix_syscall(m, t, REC_MPROTECT, BASE, 1 << 20, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert(fixture_pte(t, BASE) & PTE_RW);
  ck_assert_uint_eq(pte_pfn(fixture_pte(t, BASE)), pfn); /* same page, no copy */
  kfix_free(m);
}
END_TEST

/* PROT_WRITE given back: Linux 6.12's change_pte_range makes the exclusive
 * anonymous page writable at once (MM_CP_TRY_CHANGE_WRITABLE,
 * can_change_pte_writable), the zero page stays read-only; the flush covers
 * the entries changed only, at 4K.  Under 3.8 the page waits for its write
 * fault. */
static void mprotect_back(const char *version, gboolean writable_at_once)
{
  const char *sets[] = { "thp.enabled=never", version, NULL };
  KernelFixture *m = kfix_new("skylake", sets);
  Thread *t = kfix_mapped_thread(m, 1, BASE, 1 << 20, PROT_R | PROT_W, 0);
  KfCpu *cpu = m->cpus[0];
  Kernel *k = m->k;
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 4096, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 3 * 4096, ACC_LOAD, &cycles), FAULT_MAPPED);
  kfix_syscall(m, t, REC_MPROTECT, BASE, 1 << 20, PROT_R, 0);
  /* The anon page lost its write bit: one flush of [BASE + 4K, BASE + 8K). */
  ck_assert_uint_eq(m->flushes->len, 1);
  KfFlush *fl = &g_array_index(m->flushes, KfFlush, 0);
  ck_assert_uint_eq(fl->start, BASE + 4096);
  ck_assert_uint_eq(fl->end, BASE + 2 * 4096);
  ck_assert_uint_eq(fl->stride_shift, 12);
  kfix_syscall(m, t, REC_MPROTECT, BASE, 1 << 20, PROT_R | PROT_W, 0);
  ck_assert(!(fixture_pte(t, BASE + 3 * 4096) & PTE_RW)); /* the zero page */
  uint64_t faults = cpu->ctr.c[CTR_PAGE_FAULTS];
  if (writable_at_once) {
    ck_assert(fixture_pte(t, BASE + 4096) & PTE_RW);
    ck_assert_uint_eq(m->flushes->len, 2);
    fl = &g_array_index(m->flushes, KfFlush, 1);
    ck_assert_uint_eq(fl->start, BASE + 4096);
    ck_assert_uint_eq(fl->end, BASE + 2 * 4096);
    ck_assert_uint_eq(fl->stride_shift, 12);
  } else {
    ck_assert(!(fixture_pte(t, BASE + 4096) & PTE_RW));
    ck_assert_uint_eq(m->flushes->len, 1); /* nothing changed: nothing flushed */
    ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 4096, ACC_STORE, &cycles), FAULT_MAPPED);
    ck_assert(fixture_pte(t, BASE + 4096) & PTE_RW);
    ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_FAULTS], faults + 1);
  }
  kfix_free(m);
}

START_TEST(test_mprotect_write_back_612)
{
  mprotect_back("kernel.version=6.12", TRUE);
}
END_TEST

START_TEST(test_mprotect_write_back_38)
{
  mprotect_back("kernel.version=3.8", FALSE);
}
END_TEST

/* change_huge_pmd (6.12): a THP's protection change is one 2M entry to
 * flush (tlb_flush_pmd_range: stride PMD_SHIFT), and PROT_WRITE back makes
 * it writable at once (can_change_pmd_writable). */
START_TEST(test_mprotect_thp_flush_stride)
{
  const char *sets[] = { "thp.enabled=always", NULL };
  KernelFixture *m = kfix_new("skylake", sets);
  const uint64_t pmd = 2 << 20;
  Thread *t = kfix_mapped_thread(m, 1, BASE, 2 * pmd, PROT_R | PROT_W, 0);
  KfCpu *cpu = m->cpus[0];
  Kernel *k = m->k;
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + pmd, ACC_STORE, &cycles), FAULT_MAPPED);
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, BASE + pmd, &level, &idx);
  ck_assert_uint_eq(level, 2);
  ck_assert(n->e[idx] & PTE_PS);
  kfix_syscall(m, t, REC_MPROTECT, BASE, 2 * pmd, PROT_R, 0);
  ck_assert(!(n->e[idx] & PTE_RW));
  ck_assert_uint_eq(m->flushes->len, 1);
  KfFlush *fl = &g_array_index(m->flushes, KfFlush, 0);
  ck_assert_uint_eq(fl->start, BASE + pmd);
  ck_assert_uint_eq(fl->end, BASE + 2 * pmd);
  ck_assert_uint_eq(fl->stride_shift, 21);
  kfix_syscall(m, t, REC_MPROTECT, BASE, 2 * pmd, PROT_R | PROT_W, 0);
  ck_assert(n->e[idx] & PTE_RW);
  ck_assert_uint_eq(m->flushes->len, 2);
  ck_assert_uint_eq(g_array_index(m->flushes, KfFlush, 1).stride_shift, 21);
  kfix_free(m);
}
END_TEST

START_TEST(test_munmap_frees_pages_and_tables)
{
  KernelFixture *m = kfix_new("skylake", base_pages);
  Thread *t = kfix_thread(m, 1);
  KfCpu *cpu = m->cpus[0];
  Kernel *k = m->k;
  uint64_t free0 = physmem_free_pages(k->pm, 0);
  kfix_syscall(m, t, REC_MMAP, BASE, 4 << 20, PROT_R | PROT_W, 0);
  uint64_t cycles;
  for (uint64_t va = BASE; va < BASE + (4 << 20); va += 4096)
    ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, va, ACC_STORE, &cycles), FAULT_MAPPED);
  /* 1024 data pages, PDPT + PD + 2 PTs */
  ck_assert_uint_eq(free0 - physmem_free_pages(k->pm, 0), 1024 + 4);
  kfix_syscall(m, t, REC_MUNMAP, BASE, 4 << 20, 0, 0);
  ck_assert_uint_eq(physmem_free_pages(k->pm, 0), free0);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PGTABLE_PAGES_FREED], 4);
  /* One shootdown of the range at the stride of its 4K leaves, with the
   * tables freed (the machine turns 1024 pages into a full flush). */
  ck_assert_uint_eq(m->flushes->len, 1);
  KfFlush *fl = &g_array_index(m->flushes, KfFlush, 0);
  ck_assert_uint_eq(fl->start, BASE);
  ck_assert_uint_eq(fl->end, BASE + (4 << 20));
  ck_assert_uint_eq(fl->stride_shift, 12);
  ck_assert(fl->freed_tables);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_LOAD, &cycles), FAULT_SEGV);
  kfix_free(m);
}
END_TEST

/* ---- x86 dynamic ASIDs (the switch that precedes a process's faults) ---- */

/* Processes 1..n, each with an mm. */
static Mm *asid_mm(KernelFixture *f, uint32_t pid)
{
  Mm *mm = kernel_mm(f->k, pid);
  ck_assert(mm != NULL);
  return mm;
}

/* choose_new_asid (arch/x86/mm/tlb.c, Linux 6.12): 6 slots per CPU
 * (TLB_NR_DYN_ASIDS); a new mm takes next_asid's slot round robin with a
 * flush; an mm back on its slot flushes only when its tlb_gen moved on. */
START_TEST(test_choose_new_asid)
{
  KernelFixture *f = kfix_new("skylake", base_pages);
  Kernel *k = f->k;
  KCpu *cpu = f->kcpus[0];
  ck_assert_int_eq(k->asid_mode, KERNEL_ASID_DYNAMIC);
  Mm *mm[8];
  gboolean flush;
  for (uint32_t i = 0; i < 7; i++)
    mm[i] = asid_mm(f, i + 1);
  for (unsigned i = 0; i < 6; i++) {
    ck_assert_uint_eq(kernel_switch_asid(k, cpu, mm[i], &flush), i);
    ck_assert(flush);
    ck_assert_int_eq(kernel_cpu_pcid(k, cpu, mm[i]), (int)i + 1);
  }
  /* Back to the first: its slot, nothing missed, no flush. */
  ck_assert_uint_eq(kernel_switch_asid(k, cpu, mm[0], &flush), 0);
  ck_assert(!flush);
  /* A seventh mm wraps to slot 0 (next_asid past the end: 0, then 1) and
   * flushes it: mm 1 has no PCID on this CPU any more. */
  ck_assert_uint_eq(kernel_switch_asid(k, cpu, mm[6], &flush), 0);
  ck_assert(flush);
  ck_assert_int_eq(kernel_cpu_pcid(k, cpu, mm[0]), -1);
  ck_assert_uint_eq(kernel_switch_asid(k, cpu, mm[0], &flush), 1);
  ck_assert(flush);
  ck_assert_int_eq(kernel_cpu_pcid(k, cpu, mm[1]), -1);
  /* mm 3 keeps slot 2; a flush of it while away is caught up on return. */
  mm[2]->tlb_gen++;
  ck_assert_uint_eq(kernel_switch_asid(k, cpu, mm[2], &flush), 2);
  ck_assert(flush);
  ck_assert_uint_eq(kernel_switch_asid(k, cpu, mm[3], &flush), 3);
  ck_assert(!flush);
  /* A flush this CPU took part in leaves the slot current. */
  mm[2]->tlb_gen++;
  kernel_asid_flushed(k, cpu, mm[2]);
  ck_assert_uint_eq(kernel_switch_asid(k, cpu, mm[2], &flush), 2);
  ck_assert(!flush);
  kfix_free(f);
}
END_TEST

/* Before 4.14 Linux used no PCID: tag 0, and every switch flushes. */
START_TEST(test_no_pcid_before_414)
{
  const char *sets[] = { "thp.enabled=never", "kernel.version=3.8", NULL };
  KernelFixture *f = kfix_new("skylake", sets);
  Kernel *k = f->k;
  ck_assert_int_eq(k->asid_mode, KERNEL_ASID_NONE);
  Mm *a = asid_mm(f, 1), *b = asid_mm(f, 2);
  gboolean flush = FALSE;
  ck_assert_uint_eq(kernel_switch_asid(k, f->kcpus[0], a, &flush), 0);
  ck_assert(flush);
  flush = FALSE;
  ck_assert_uint_eq(kernel_switch_asid(k, f->kcpus[0], b, &flush), 0);
  ck_assert(flush);
  flush = FALSE;
  ck_assert_uint_eq(kernel_switch_asid(k, f->kcpus[0], a, &flush), 0);
  ck_assert(flush);
  ck_assert_int_eq(kernel_cpu_pcid(k, f->kcpus[0], a), 0);
  kfix_free(f);
}
END_TEST

static Suite *fault_suite(void)
{
  Suite *s = suite_create("fault");
  TCase *tc = tcase_create("anon");
  tcase_add_test(tc, test_read_maps_zero_page);
  tcase_add_test(tc, test_write_allocates_and_cow);
  tcase_add_test(tc, test_rss_counts_no_zero_page);
  tcase_add_test(tc, test_segv);
  tcase_add_test(tc, test_mprotect_then_write_reuses);
  tcase_add_test(tc, test_munmap_frees_pages_and_tables);
  tcase_add_test(tc, test_mprotect_write_back_612);
  tcase_add_test(tc, test_mprotect_write_back_38);
  tcase_add_test(tc, test_mprotect_thp_flush_stride);
  tcase_add_test(tc, test_choose_new_asid);
  tcase_add_test(tc, test_no_pcid_before_414);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(fault_suite)
