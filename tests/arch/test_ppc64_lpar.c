/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of ppc64 under a hypervisor (virt.lpar): the hcalls each
 * kernel path makes, counted as arch/powerpc/platforms/pseries/lpar.c and
 * arch/powerpc/mm/book3s64/hash_tlb.c (Linux 6.12) make them: a hash fault
 * that inserts one HPTE is one H_ENTER; an eviction one H_REMOVE per slot
 * tried; a protection update in place one H_PROTECT; a range flush
 * (munmap, mprotect) one H_REMOVE for a batch of one HPTE and one
 * H_BULK_REMOVE per 4 HPTEs otherwise, batches per PTE table of at most
 * 192; a THP's HPTEs H_BULK_REMOVE per 4, a single one included.  With
 * virt.lpar=false there are none and the time is that of bare metal.
 * And the 16M hugetlb page: one HPTE in a 16M slice, not one per 64K.
 */
#include "config.h"
#include "fault.h"
#include "machine_fixture.h"
#include "ppc64/ppc64.h"

#define BASE 0x7f0000000000ULL
#define KB (UINT64_C(1) << 10)
#define MB (UINT64_C(1) << 20)

static const char *const lpar_64k[] = { "thp.enabled=never", "virt.lpar=true", "virt.h_enter_cycles=100",
                                         "virt.h_bulk_remove_cycles=70", NULL };
static const char *const bare_64k[] = { "thp.enabled=never", "virt.lpar=false", NULL };
static const char *const lpar_thp[] = { "thp.enabled=always", "thp.use_zero_page=false", "virt.lpar=true", NULL };

static uint64_t ctr(const Machine *m, CounterId id)
{
  return fixture_cpu0_ctr(m, id);
}

/* Stores to n 64K pages from va: each a fault and a hash fault. */
static void touch(Machine *m, Thread *t, uint64_t va, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    fixture_access(m, t, ACC_STORE, va + (uint64_t)i * 64 * KB);
}

struct calls {
  uint64_t enter, remove, protect, bulk;
};

static struct calls calls_of(const Machine *m)
{
  return (struct calls){ ctr(m, CTR_HCALL_H_ENTER), ctr(m, CTR_HCALL_H_REMOVE), ctr(m, CTR_HCALL_H_PROTECT),
                         ctr(m, CTR_HCALL_H_BULK_REMOVE) };
}

/* The hcalls made since `before`. */
static void expect_calls(const Machine *m, struct calls before, uint64_t enter, uint64_t remove, uint64_t protect,
                         uint64_t bulk)
{
  struct calls now = calls_of(m);
  ck_assert_uint_eq(now.enter - before.enter, enter);
  ck_assert_uint_eq(now.remove - before.remove, remove);
  ck_assert_uint_eq(now.protect - before.protect, protect);
  ck_assert_uint_eq(now.bulk - before.bulk, bulk);
}

/* A fault that inserts one HPTE is one H_ENTER, at its cost. */
START_TEST(test_fault_is_one_h_enter)
{
  Machine *m = fixture_machine("power7", lpar_64k);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 1 * MB, PROT_R | PROT_W, 0);
  struct calls c0 = calls_of(m);
  touch(m, t, BASE, 1);
  ck_assert_uint_eq(ctr(m, CTR_HPTE_INSERTS), 1);
  expect_calls(m, c0, 1, 0, 0, 0);
  ck_assert_uint_eq(ctr(m, CTR_HCALL_CYCLES), 100);
  /* A second access hits: no hcall. */
  fixture_access(m, t, ACC_LOAD, BASE + 8);
  expect_calls(m, c0, 1, 0, 0, 0);
  touch(m, t, BASE + 64 * KB, 9);
  expect_calls(m, c0, 10, 0, 0, 0);
  machine_free(m);
}
END_TEST

/* munmap: the hashed PTEs of one PTE table are one batch, invalidated by
 * H_BULK_REMOVE in fours; a batch of one is an H_REMOVE. */
START_TEST(test_munmap_batches)
{
  Machine *m = fixture_machine("power7", lpar_64k);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 64 * MB, PROT_R | PROT_W, 0);
  /* 10 pages in one PTE table (16M with 64K pages): 3 calls of 4, 4, 2. */
  touch(m, t, BASE, 10);
  struct calls c0 = calls_of(m);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 1 * MB, 0, 0);
  expect_calls(m, c0, 0, 0, 0, 3);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(ppc64_cpu_hpt(m->cpus[0]), t->mm->asid), 0);
  /* One page: flush_hash_page, one H_REMOVE. */
  fixture_syscall(m, t, REC_MMAP, BASE, 1 * MB, PROT_R | PROT_W, 0);
  touch(m, t, BASE, 1);
  c0 = calls_of(m);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 1 * MB, 0, 0);
  expect_calls(m, c0, 0, 1, 0, 0);
  /* 5 pages in one table and 1 in the next: 2 H_BULK_REMOVE, 1 H_REMOVE. */
  fixture_syscall(m, t, REC_MMAP, BASE, 1 * MB, PROT_R | PROT_W, 0);
  touch(m, t, BASE + 16 * MB - 5 * 64 * KB, 5);
  touch(m, t, BASE + 16 * MB, 1);
  c0 = calls_of(m);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 32 * MB, 0, 0);
  expect_calls(m, c0, 0, 1, 0, 2);
  /* 200 pages of one table: a full batch of 192 (48 calls), then 8 (2). */
  fixture_syscall(m, t, REC_MMAP, BASE, 16 * MB, PROT_R | PROT_W, 0);
  touch(m, t, BASE, 200);
  c0 = calls_of(m);
  uint64_t h0 = ctr(m, CTR_HCALL_CYCLES);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 16 * MB, 0, 0);
  expect_calls(m, c0, 0, 0, 0, 50);
  ck_assert_uint_eq(ctr(m, CTR_HCALL_CYCLES) - h0, 50 * 70);
  /* Nothing hashed, nothing called. */
  fixture_syscall(m, t, REC_MMAP, BASE, 16 * MB, PROT_R | PROT_W, 0);
  c0 = calls_of(m);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 16 * MB, 0, 0);
  expect_calls(m, c0, 0, 0, 0, 0);
  machine_free(m);
}
END_TEST

/* mprotect on hash invalidates the HPTEs of the range (change_pte_range ->
 * hpte_need_flush), the same batches as munmap; the next accesses insert
 * again.  H_PROTECT is the hash fault's update in place. */
START_TEST(test_mprotect_and_h_protect)
{
  Machine *m = fixture_machine("power7", lpar_64k);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 1 * MB, PROT_R | PROT_W, 0);
  touch(m, t, BASE, 6);
  struct calls c0 = calls_of(m);
  fixture_syscall(m, t, REC_MPROTECT, BASE, 1 * MB, PROT_R, 0);
  expect_calls(m, c0, 0, 0, 0, 2);
  for (unsigned i = 0; i < 6; i++)
    fixture_access(m, t, ACC_LOAD, BASE + (uint64_t)i * 64 * KB);
  expect_calls(m, c0, 6, 0, 0, 2);
  machine_free(m);

  /* A writable clean page read first gets a read-only HPTE; the store
   * updates it in place: one H_PROTECT, no second H_ENTER. */
  const char *const lpar_4k[] = { "mm.base_page_size=4K", "thp.enabled=never", "virt.lpar=true", NULL };
  m = fixture_machine("power7", lpar_4k);
  t = fixture_thread(m, 1);
  ck_assert(pgtable_set(&t->mm->pt, 0x10001000ULL, 1, pte_make(0x30000, PTE_P | PTE_US | PTE_A | PTE_RW | PTE_NX), NULL));
  Xlat x;
  c0 = calls_of(m);
  ck_assert_int_eq(fixture_xlat(m, t, 0x10001000ULL, ACC_LOAD, &x), XLAT_OK);
  expect_calls(m, c0, 1, 0, 0, 0);
  ck_assert_int_eq(fixture_xlat(m, t, 0x10001000ULL, ACC_STORE, &x), XLAT_OK);
  expect_calls(m, c0, 1, 0, 1, 0);
  machine_free(m);
}
END_TEST

/* Both groups full of entries that are not bolted: the inserts that find
 * them full are H_ENTERs, the eviction one H_REMOVE (its first slot goes). */
START_TEST(test_eviction_h_remove)
{
  const char *const sets[] = { "mm.base_page_size=4K", "thp.enabled=never", "virt.lpar=true",
                               "ppc64.hpt_size=256K", "ppc64.hpt_bolt_linear=false", NULL };
  Machine *m = fixture_machine("power7", sets);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  Ppc64Hpt *h = ppc64_cpu_hpt(cpu);
  const uint64_t va = 0x10001000ULL;
  ck_assert(pgtable_set(&t->mm->pt, va, 1, pte_make(0x30000, PTE_P | PTE_US | PTE_A | PTE_RW | PTE_D), NULL));
  unsigned ssize = PPC64_SEG_256M;
  uint64_t ctx = ppc64_context(cpu, t->mm->asid);
  uint64_t hash = ppc64_hpt_hash(ppc64_vpn(va, ppc64_vsid(ctx, va, ssize), ssize), 12, ssize);
  uint64_t mask = ppc64_hpt_mask(h);
  for (unsigned i = 0; i < PPC64_HPTES_PER_GROUP; i++) {
    ppc64_hpt_insert(h, hash & mask, (0x3ffULL << 40) | ((uint64_t)i << 7), HPTE_R_R | 0x2, 0);
    ppc64_hpt_insert(h, ~hash & mask, (0x3ffULL << 40) | ((uint64_t)i << 7) | HPTE_V_SECONDARY, HPTE_R_R | 0x2, 0);
  }
  Xlat x;
  struct calls c0 = calls_of(m);
  ck_assert_int_eq(fixture_xlat(m, t, va, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(ctr(m, CTR_HPTE_EVICTIONS), 1);
  struct calls c1 = calls_of(m);
  ck_assert_uint_eq(c1.remove - c0.remove, 1);
  /* Primary and secondary full (2), then the primary again (3), and the
   * secondary too when the eviction emptied a slot there (4). */
  ck_assert(c1.enter - c0.enter == 3 || c1.enter - c0.enter == 4);
  ck_assert_uint_eq(c1.bulk - c0.bulk, 0);
  machine_free(m);
}
END_TEST

/* A THP's HPTEs (one per 64K subpage hashed) go through hugepage_invalidate:
 * H_BULK_REMOVE in fours, a single HPTE too. */
START_TEST(test_thp_hugepage_invalidate)
{
  Machine *m = fixture_machine("power7", lpar_thp);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  fixture_syscall(m, t, REC_MMAP, BASE, 32 * MB, PROT_R | PROT_W, 0);
  fixture_access(m, t, ACC_STORE, BASE);
  ck_assert_uint_eq(ctr(m, CTR_THP_FAULT_ALLOC), 1);
  struct calls c0 = calls_of(m);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 16 * MB, 0, 0);
  expect_calls(m, c0, 0, 0, 0, 1);
  /* Five subpages hashed (the TLB dropped between them): two calls. */
  fixture_access(m, t, ACC_STORE, BASE + 16 * MB);
  for (unsigned i = 1; i < 5; i++) {
    m->arch->flush_all(cpu);
    cpu_flush_l1(cpu);
    fixture_access(m, t, ACC_LOAD, BASE + 16 * MB + (uint64_t)i * 64 * KB);
  }
  ck_assert_uint_eq(ppc64_hpt_owner_valid(ppc64_cpu_hpt(cpu), t->mm->asid), 5);
  c0 = calls_of(m);
  fixture_syscall(m, t, REC_MUNMAP, BASE + 16 * MB, 16 * MB, 0, 0);
  expect_calls(m, c0, 0, 0, 0, 2);
  machine_free(m);
}
END_TEST

/* virt.lpar=false: no hcalls; the same HPT work (inserts, hash faults,
 * searches) and less time. */
START_TEST(test_bare_metal_unchanged)
{
  uint64_t cycles[2], hcycles[2], inserts[2], hfaults[2], walks[2];
  const char *const *sets[2] = { bare_64k, lpar_64k };
  for (unsigned i = 0; i < 2; i++) {
    Machine *m = fixture_machine("power7", sets[i]);
    Thread *t = fixture_thread(m, 1);
    fixture_syscall(m, t, REC_MMAP, BASE, 32 * MB, PROT_R | PROT_W, 0);
    touch(m, t, BASE, 20);
    fixture_syscall(m, t, REC_MPROTECT, BASE, 32 * MB, PROT_R, 0);
    for (unsigned j = 0; j < 20; j += 3)
      fixture_access(m, t, ACC_LOAD, BASE + (uint64_t)j * 64 * KB);
    fixture_syscall(m, t, REC_MUNMAP, BASE, 32 * MB, 0, 0);
    cpu_drain(m->cpus[0]);
    cycles[i] = m->cpus[0]->clock;
    hcycles[i] = ctr(m, CTR_HCALL_CYCLES);
    inserts[i] = ctr(m, CTR_HPTE_INSERTS);
    hfaults[i] = ctr(m, CTR_HASH_FAULTS);
    walks[i] = ctr(m, CTR_PAGE_WALKS);
    if (!i) {
      struct calls c = calls_of(m);
      ck_assert_uint_eq(c.enter + c.remove + c.protect + c.bulk, 0);
    }
    machine_free(m);
  }
  ck_assert_uint_eq(hcycles[0], 0);
  ck_assert_uint_gt(hcycles[1], 0);
  ck_assert_uint_gt(cycles[1], cycles[0]);
  ck_assert_uint_le(cycles[1] - cycles[0], hcycles[1]);
  ck_assert_uint_eq(inserts[0], inserts[1]);
  ck_assert_uint_eq(hfaults[0], hfaults[1]);
  ck_assert_uint_eq(walks[0], walks[1]);
}
END_TEST

/* A 16M hugetlb page in a slice of its own is one HPTE with a 16M base
 * page (__hash_page_huge, MMU_PAGE_16M), whichever 64K of it misses: one
 * H_ENTER, and one H_REMOVE when it goes.  A slice it shares with 64K
 * mappings keeps the base page: one MPSS HPTE per 64K subpage missed. */
START_TEST(test_hugetlb_16m_one_hpte)
{
  const char *const sets[] = { "thp.enabled=never", "hugetlb.nr_hugepages=2", "virt.lpar=true", NULL };
  Machine *m = fixture_machine("power7", sets);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  Ppc64Hpt *h = ppc64_cpu_hpt(cpu);
  fixture_syscall(m, t, REC_MMAP, BASE, 32 * MB, PROT_R | PROT_W, MAP_F_HUGETLB);
  const uint64_t huge = BASE + 16 * MB;
  ck_assert_int_eq(fixture_fault(m, t, huge + 0x777, ACC_STORE, NULL), FAULT_MAPPED);
  struct calls c0 = calls_of(m);
  static const uint64_t offs[] = { 0x777, 0x50000, 0xff0000, 0x800000 };
  Xlat x;
  for (unsigned i = 0; i < G_N_ELEMENTS(offs); i++) {
    m->arch->flush_all(cpu);
    ck_assert_int_eq(fixture_xlat(m, t, huge + offs[i], ACC_LOAD, &x), XLAT_OK);
    ck_assert_uint_eq(x.size, PPC64_16M);
    ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t->mm->asid), 1);
  }
  expect_calls(m, c0, 1, 0, 0, 0);
  /* The HPTE: hashed with the 16M shift, L set, LP 0 (base 16M). */
  unsigned ssize = PPC64_SEG_1T;
  uint64_t vpn = ppc64_vpn(huge, ppc64_vsid(ppc64_context(cpu, t->mm->asid), huge, ssize), ssize);
  uint64_t hash = ppc64_hpt_hash(vpn, 24, ssize);
  int slot = ppc64_hpt_find(h, hash & ppc64_hpt_mask(h), ppc64_hpte_avpn(vpn, 24, ssize) | HPTE_V_VALID);
  ck_assert_int_ge(slot, 0);
  Ppc64Hpte e = ppc64_hpt_get(h, hash & ppc64_hpt_mask(h), (unsigned)slot);
  ck_assert(e.v & HPTE_V_LARGE);
  ck_assert_uint_eq(ppc64_hpte_page_shift(24, e.v, e.r), 24);
  ck_assert_uint_eq(ppc64_slb_valid_user(ppc64_cpu_slb(cpu)) > 0, 1);
  c0 = calls_of(m);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 32 * MB, 0, 0);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t->mm->asid), 0);
  expect_calls(m, c0, 0, 1, 0, 0);

  /* A 64K mapping in the same 1T slice: the hugetlb page is hashed per
   * 64K subpage in the 64K segment. */
  fixture_syscall(m, t, REC_MMAP, BASE, 32 * MB, PROT_R | PROT_W, MAP_F_HUGETLB);
  fixture_syscall(m, t, REC_MMAP, BASE + 64 * MB, 1 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, huge, ACC_STORE, NULL), FAULT_MAPPED);
  for (unsigned i = 0; i < 3; i++) {
    m->arch->flush_all(cpu);
    ppc64_slb_flush_user(ppc64_cpu_slb(cpu));
    ck_assert_int_eq(fixture_xlat(m, t, huge + offs[i], ACC_LOAD, &x), XLAT_OK);
    ck_assert_uint_eq(x.size, PPC64_16M);
  }
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t->mm->asid), 3);
  machine_free(m);
}
END_TEST

static Suite *lpar_suite(void)
{
  Suite *s = suite_create("ppc64_lpar");
  TCase *tc = tcase_create("hcalls");
  tcase_add_test(tc, test_fault_is_one_h_enter);
  tcase_add_test(tc, test_munmap_batches);
  tcase_add_test(tc, test_mprotect_and_h_protect);
  tcase_add_test(tc, test_eviction_h_remove);
  tcase_add_test(tc, test_thp_hugepage_invalidate);
  tcase_add_test(tc, test_bare_metal_unchanged);
  tcase_add_test(tc, test_hugetlb_16m_one_hpte);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(lpar_suite)
