/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the kernel's clears and copies in the caches
 * (mem.clear_cached): after a 4K fault the page's lines are in the
 * faulting CPU's L1D and L2, and so are those of the page-table pages it
 * zeroed; after a THP fault the faulting subpage's lines are the last
 * cleared (folio_zero_user) and those of the subpage cleared first are
 * gone from the L1D and the L2; khugepaged's collapse leaves the new huge
 * page's last lines in the daemon CPU's caches; with mem.clear_cached=false
 * none of them is cached.
 */
#include "config.h"
#include "fault.h"
#include "khugepaged.h"
#include "machine_fixture.h"
#include "memsys.h"

#define BASE 0x7f0000000000ULL
#define MB (UINT64_C(1) << 20)
#define KB4 UINT64_C(4096)

static const char *const no_thp[] = { "thp.enabled=never", NULL };
static const char *const no_thp_off[] = { "thp.enabled=never", "mem.clear_cached=false", NULL };
static const char *const thp[] = { "thp.enabled=always", NULL };
static const char *const thp_off[] = { "thp.enabled=always", "mem.clear_cached=false", NULL };

/* The physical address that va maps to in t's page table (asserted mapped). */
static uint64_t pa_of(Thread *t, uint64_t va)
{
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, va, &level, &idx);
  uint64_t e = n->e[idx];
  ck_assert(e & PTE_P);
  uint64_t span = pgtable_entry_span(&t->mm->pt.g, level);
  return (pte_pfn(e) << 12) + (va & (span - 1));
}

/* How many of the 4K page at pa's lines `level` of cpu holds. */
static unsigned lines_held(const Cpu *cpu, uint64_t pa, MemLevel level)
{
  unsigned line = memsys_line_bytes(cpu->mem), n = 0;
  for (uint64_t off = 0; off < KB4; off += line)
    n += memsys_holds(cpu->mem, (pa & ~(KB4 - 1)) + off, MREQ_LOAD, level);
  return n;
}

static unsigned lines_per_page(const Cpu *cpu)
{
  return (unsigned)(KB4 / memsys_line_bytes(cpu->mem));
}

/* A skylake machine with `sets`, process 1's thread on CPU 0 with 4M
 * mapped at BASE, after a write fault at va. */
static Machine *faulted(const char *const *sets, uint64_t va, Thread **t)
{
  Machine *m = fixture_machine("skylake", sets);
  *t = fixture_thread(m, 1);
  fixture_syscall(m, *t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  uint64_t cycles;
  ck_assert_int_eq(fixture_fault(m, *t, va, ACC_STORE, &cycles), FAULT_MAPPED);
  return m;
}

START_TEST(test_4k_fault_leaves_page_in_l1_l2)
{
  Thread *t;
  Machine *m = faulted(no_thp, BASE + 0x3008, &t);
  Cpu *cpu = m->cpus[0];
  uint64_t pa = pa_of(t, BASE + 0x3000);
  ck_assert_uint_eq(lines_held(cpu, pa, MEM_L1), lines_per_page(cpu));
  ck_assert_uint_eq(lines_held(cpu, pa, MEM_L2), lines_per_page(cpu));
  ck_assert_uint_eq(lines_held(cpu, pa, MEM_LLC), lines_per_page(cpu));
  /* The PTE table the fault allocated was zeroed by the same CPU. */
  unsigned level, idx;
  PtNode *table = pgtable_lookup(&t->mm->pt, BASE + 0x3000, &level, &idx);
  ck_assert_uint_eq(level, 1);
  ck_assert_uint_eq(lines_held(cpu, table->pfn << 12, MEM_L1), lines_per_page(cpu));
  /* A load of the page hits the L1D: no miss counted. */
  uint64_t misses = cpu->ctr.c[CTR_L1_DCACHE_LOAD_MISSES], loads = cpu->ctr.c[CTR_L1_DCACHE_LOADS];
  fixture_access(m, t, ACC_LOAD, BASE + 0x3f80);
  ck_assert_uint_eq(cpu->ctr.c[CTR_L1_DCACHE_LOADS], loads + 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_L1_DCACHE_LOAD_MISSES], misses);
  /* The clear's cycles are what they were: the fill costs nothing. */
  ck_assert_uint_eq(cpu->ctr.c[CTR_ZEROING_CYCLES], m->k->clear_base_cycles);
  machine_free(m);
}
END_TEST

START_TEST(test_4k_fault_off_leaves_caches)
{
  Thread *t;
  Machine *m = faulted(no_thp_off, BASE + 0x3008, &t);
  Cpu *cpu = m->cpus[0];
  uint64_t pa = pa_of(t, BASE + 0x3000);
  ck_assert_uint_eq(lines_held(cpu, pa, MEM_L1), 0);
  ck_assert_uint_eq(lines_held(cpu, pa, MEM_L2), 0);
  ck_assert_uint_eq(lines_held(cpu, pa, MEM_LLC), 0);
  uint64_t misses = cpu->ctr.c[CTR_L1_DCACHE_LOAD_MISSES];
  fixture_access(m, t, ACC_LOAD, BASE + 0x3f80);
  ck_assert_uint_eq(cpu->ctr.c[CTR_L1_DCACHE_LOAD_MISSES], misses + 1);
  machine_free(m);
}
END_TEST

/* A fault at subpage 300 of a THP: process_huge_page clears subpages 0 ..
 * 87 first, then 88 and 511, 89 and 510, ... 299 and 300, the faulting
 * one last.  The skylake L2 (256K) and L1D (32K) keep only the end of the
 * 2M clear: subpage 300 and its neighbours, not subpage 0; the 8M LLC
 * keeps all of it. */
START_TEST(test_thp_fault_target_last)
{
  Thread *t;
  uint64_t va = BASE + 2 * MB + 300 * KB4 + 0x10;
  Machine *m = faulted(thp, va, &t);
  Cpu *cpu = m->cpus[0];
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  uint64_t target = pa_of(t, va), first = pa_of(t, BASE + 2 * MB);
  unsigned all = lines_per_page(cpu);
  ck_assert_uint_eq(lines_held(cpu, target, MEM_L1), all);
  ck_assert_uint_eq(lines_held(cpu, target, MEM_L2), all);
  ck_assert_uint_eq(lines_held(cpu, pa_of(t, va - KB4), MEM_L2), all); /* 299, cleared just before */
  ck_assert_uint_eq(lines_held(cpu, first, MEM_L1), 0);
  ck_assert_uint_eq(lines_held(cpu, first, MEM_L2), 0);
  ck_assert_uint_eq(lines_held(cpu, first, MEM_LLC), all);
  /* The faulting store's line, and a load next to it, hit the L1D. */
  uint64_t misses = cpu->ctr.c[CTR_L1_DCACHE_LOAD_MISSES];
  fixture_access(m, t, ACC_LOAD, va + 0x40);
  ck_assert_uint_eq(cpu->ctr.c[CTR_L1_DCACHE_LOAD_MISSES], misses);
  machine_free(m);
}
END_TEST

/* The faulting subpage in the first half (subpage 5): the subpages from
 * 511 down to 10 first, then 0 and 9, 1 and 8, ... 4 and 5.  Subpage 511
 * went early and is gone from the L2; subpage 4, cleared just before the
 * target, stays. */
START_TEST(test_thp_fault_first_half)
{
  Thread *t;
  uint64_t va = BASE + 2 * MB + 5 * KB4;
  Machine *m = faulted(thp, va, &t);
  Cpu *cpu = m->cpus[0];
  unsigned all = lines_per_page(cpu);
  ck_assert_uint_eq(lines_held(cpu, pa_of(t, va), MEM_L1), all);
  ck_assert_uint_eq(lines_held(cpu, pa_of(t, va - KB4), MEM_L1), all);
  ck_assert_uint_eq(lines_held(cpu, pa_of(t, BASE + 4 * MB - KB4), MEM_L2), 0);
  machine_free(m);
}
END_TEST

START_TEST(test_thp_fault_off_leaves_caches)
{
  Thread *t;
  uint64_t va = BASE + 2 * MB + 300 * KB4;
  Machine *m = faulted(thp_off, va, &t);
  Cpu *cpu = m->cpus[0];
  ck_assert_uint_eq(lines_held(cpu, pa_of(t, va), MEM_L1), 0);
  ck_assert_uint_eq(lines_held(cpu, pa_of(t, va), MEM_LLC), 0);
  machine_free(m);
}
END_TEST

/* khugepaged on CPU 1 collapses a range CPU 0 populated: the new huge
 * page's last subpage (copied last) and the old page it was copied from
 * are in CPU 1's L1D and L2; CPU 0's L1D does not hold the new page. */
static void collapse_on_cpu1(gboolean cached, Machine **out, Thread **tout, uint64_t *old_last)
{
  const char *sets[] = { "thp.enabled=madvise", "khugepaged.scan_sleep_millisecs=1", "machine.cpus_per_node=2",
                         "khugepaged.cpu=1", cached ? "mem.clear_cached=true" : "mem.clear_cached=false", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 2 * MB, PROT_R | PROT_W, 0);
  uint64_t cycles;
  for (uint64_t va = BASE; va < BASE + 2 * MB; va += KB4)
    ck_assert_int_eq(fixture_fault(m, t, va, ACC_STORE, &cycles), FAULT_MAPPED);
  *old_last = pa_of(t, BASE + 2 * MB - KB4);
  fixture_syscall(m, t, REC_MADVISE, BASE, 2 * MB, ADV_HUGEPAGE, 0);
  Khugepaged *kh = m->k->khugepaged;
  ck_assert_uint_eq(khugepaged_cpu(kh)->id, 1);
  for (unsigned i = 0; i < 100 && !fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC); i++) {
    uint64_t w = khugepaged_next_wake(kh);
    khugepaged_run(kh, w == 0 ? kcpu_now(khugepaged_cpu(kh)) : w);
  }
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 1);
  *out = m;
  *tout = t;
}

START_TEST(test_collapse_fills_daemon_cpu)
{
  Machine *m;
  Thread *t;
  uint64_t old_last;
  collapse_on_cpu1(TRUE, &m, &t, &old_last);
  Cpu *daemon = m->cpus[1], *user = m->cpus[0];
  uint64_t new_last = pa_of(t, BASE + 2 * MB - KB4);
  unsigned all = lines_per_page(daemon);
  ck_assert_uint_eq(lines_held(daemon, new_last, MEM_L1), all);
  ck_assert_uint_eq(lines_held(daemon, new_last, MEM_L2), all);
  ck_assert_uint_eq(lines_held(daemon, old_last, MEM_L1), all); /* the copy's source, read */
  ck_assert_uint_eq(lines_held(daemon, pa_of(t, BASE), MEM_L2), 0); /* copied first: 2M went after it */
  ck_assert_uint_eq(lines_held(user, new_last, MEM_L1), 0);
  machine_free(m);
}
END_TEST

START_TEST(test_collapse_off_leaves_caches)
{
  Machine *m;
  Thread *t;
  uint64_t old_last;
  collapse_on_cpu1(FALSE, &m, &t, &old_last);
  Cpu *daemon = m->cpus[1];
  uint64_t new_last = pa_of(t, BASE + 2 * MB - KB4);
  ck_assert_uint_eq(lines_held(daemon, new_last, MEM_L1), 0);
  ck_assert_uint_eq(lines_held(daemon, new_last, MEM_LLC), 0);
  machine_free(m);
}
END_TEST

static Suite *clear_cached_suite(void)
{
  Suite *s = suite_create("clear_cached");
  TCase *tc = tcase_create("faults");
  tcase_add_test(tc, test_4k_fault_leaves_page_in_l1_l2);
  tcase_add_test(tc, test_4k_fault_off_leaves_caches);
  tcase_add_test(tc, test_thp_fault_target_last);
  tcase_add_test(tc, test_thp_fault_first_half);
  tcase_add_test(tc, test_thp_fault_off_leaves_caches);
  suite_add_tcase(s, tc);
  tc = tcase_create("khugepaged");
  tcase_add_test(tc, test_collapse_fills_daemon_cpu);
  tcase_add_test(tc, test_collapse_off_leaves_caches);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(clear_cached_suite)
