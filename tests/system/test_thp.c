/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of huge pages: the THP fault path (huge page, huge zero page,
 * fallbacks, the VMA checks and thp.enabled, prctl per process, the defrag
 * table), the PMD split on partial munmap/mprotect/madvise with the deferred
 * split queue, whole-page freeing, costs, translation through a huge PMD,
 * touched-page accounting, and the hugetlbfs pools.
 */
#include "config.h"
#include "fault.h"
#include "hugetlb.h"
#include "machine_fixture.h"

#define BASE 0x7f0000000000ULL
#define MB (UINT64_C(1) << 20)
#define GB (UINT64_C(1) << 30)

/* ---- helpers ------------------------------------------------------------- */

/* The entry that maps va and its level (0 when none). */
static uint64_t leaf_of(Thread *t, uint64_t va, unsigned *level)
{
  unsigned l, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, va, &l, &idx);
  *level = l;
  return n->e[idx];
}

static uint64_t pmd_of(Thread *t, uint64_t va)
{
  unsigned l;
  uint64_t e = leaf_of(t, va, &l);
  return l == 2 ? e : 0;
}

static uint64_t pte_of(Thread *t, uint64_t va)
{
  unsigned l;
  uint64_t e = leaf_of(t, va, &l);
  return l == 1 ? e : 0;
}

static void mmap_flags(Machine *m, Thread *t, uint64_t addr, uint64_t len, uint8_t flags)
{
  TraceRecord r = { .type = REC_MMAP, .addr = addr, .len = len, .prot = PROT_R | PROT_W, .flags = flags };
  kernel_syscall(m->k, &m->cpus[0]->kc, t->mm, &r);
}

/* Take every free order-9 block; the pages stay allocated. */
static void exhaust_order9(Kernel *k)
{
  uint64_t pfn;
  while (physmem_alloc(k->pm, 0, 9, MT_MOVABLE, &pfn))
    ;
}

static Machine *thp_machine(const char *const *extra)
{
  return fixture_machine("skylake", extra);
}

/* ---- the huge fault -------------------------------------------------------- */

START_TEST(test_huge_fault_write)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  uint64_t free0 = fixture_free_pages(k);
  fixture_syscall(m, t, REC_MMAP, BASE, 8 * MB, PROT_R | PROT_W, 0);
  uint64_t cycles;
  ck_assert_int_eq(fixture_fault(m, t, BASE + 2 * MB + 0x1234, ACC_STORE, &cycles), FAULT_MAPPED);
  uint64_t e = pmd_of(t, BASE + 2 * MB);
  ck_assert((e & (PTE_P | PTE_PS | PTE_RW | PTE_D | PTE_A | PTE_US)) == (PTE_P | PTE_PS | PTE_RW | PTE_D | PTE_A | PTE_US));
  ck_assert(!(e & PTE_SW_ZERO));
  ck_assert_uint_eq(pte_pfn(e) & 511, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_ANON), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 2 * MB);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 4096);
  ck_assert_uint_eq(t->mm->rss_pages, 512);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 1);
  ck_assert_uint_eq(thp_page_count(k), 1);
  /* PDPT, PD and the deposited table; 512 data pages. */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_PGTABLE_PAGES_ALLOC), 3);
  ck_assert_uint_eq(free0 - fixture_free_pages(k), 512 + 3);
  /* Costs: thp.huge_fault_ns, clearing 2M, three table pages. */
  uint64_t clear2m = kernel_clear_cycles(k, 2 * MB);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_ZEROING_CYCLES), clear2m);
  ck_assert_uint_eq(cycles, k->huge_fault_cycles + clear2m + 3 * (k->ptpage_cycles + k->clear_4k_cycles));
  ck_assert_uint_gt(k->huge_fault_cycles, 0);
  /* A second fault elsewhere in the page finds it mapped: spurious. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 3 * MB, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(cycles, k->zero_page_cycles);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* The 2M range must lie inside the VMA; otherwise the 4K path runs and no
 * huge attempt is made, so nothing counts as a fallback. */
START_TEST(test_vma_edge_uses_base_pages)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE + 4096, 4 * MB, PROT_R | PROT_W, 0); /* [BASE+4K, BASE+4M+4K) */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 8192, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert(pte_of(t, BASE + 8192) & PTE_P);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_ANON), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 0);
  /* [BASE+4M, BASE+6M) sticks out of the VMA too; [BASE+2M, BASE+4M) fits. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 4 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 3 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  ck_assert(pmd_of(t, BASE + 2 * MB) & PTE_PS);
  /* A PMD with a PTE table under it is not empty: base pages there. */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 0);
  machine_free(m);
}
END_TEST

/* thp.enabled x VMA advice -> huge page or not. */
static const struct {
  const char *enabled;
  int advice; /* -1: none, else TraceAdvice */
  gboolean huge;
} enabled_cases[] = {
  { "always", -1, TRUE },           { "always", ADV_HUGEPAGE, TRUE },   { "always", ADV_NOHUGEPAGE, FALSE },
  { "madvise", -1, FALSE },         { "madvise", ADV_HUGEPAGE, TRUE },  { "madvise", ADV_NOHUGEPAGE, FALSE },
  { "never", -1, FALSE },           { "never", ADV_HUGEPAGE, FALSE },   { "never", ADV_NOHUGEPAGE, FALSE },
};

START_TEST(test_enabled_and_advice)
{
  g_autofree char *set = g_strdup_printf("thp.enabled=%s", enabled_cases[_i].enabled);
  const char *sets[] = { set, NULL };
  Machine *m = thp_machine(sets);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  if (enabled_cases[_i].advice >= 0)
    fixture_syscall(m, t, REC_MADVISE, BASE, 4 * MB, enabled_cases[_i].advice, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  gboolean huge = (pmd_of(t, BASE) & PTE_PS) != 0;
  ck_assert_msg(huge == enabled_cases[_i].huge, "enabled=%s advice=%d: huge=%d", enabled_cases[_i].enabled,
                enabled_cases[_i].advice, huge);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), huge ? 1 : 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_ANON), huge ? 0 : 1);
  machine_free(m);
}
END_TEST

/* prctl(PR_SET_THP_DISABLE) is per process: two processes keep their own. */
START_TEST(test_prctl_per_process)
{
  Machine *m = thp_machine(NULL);
  Thread *a = fixture_thread(m, 1);
  Thread *b = machine_thread(m, 2, 1, 0);
  fixture_syscall(m, a, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  fixture_syscall(m, b, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  TraceRecord off = { .type = REC_PRCTL, .arg = PRCTL_THP_DISABLE, .arg2 = 1 };
  kernel_syscall(m->k, &m->cpus[0]->kc, a->mm, &off);
  ck_assert(a->mm->thp_disable);
  ck_assert(!b->mm->thp_disable);
  ck_assert_int_eq(fixture_fault(m, a, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_int_eq(fixture_fault(m, b, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert(!(pmd_of(a, BASE) & PTE_PS));
  ck_assert(pte_of(a, BASE) & PTE_P);
  ck_assert(pmd_of(b, BASE) & PTE_PS);
  /* Clearing it again gives process 1 huge pages in a fresh range. */
  off.arg2 = 0;
  kernel_syscall(m->k, &m->cpus[0]->kc, a->mm, &off);
  ck_assert_int_eq(fixture_fault(m, a, BASE + 2 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert(pmd_of(a, BASE + 2 * MB) & PTE_PS);
  ck_assert(!b->mm->thp_disable);
  machine_free(m);
}
END_TEST

START_TEST(test_policy_ingens_faults_base_pages)
{
  const char *sets[] = { "thp.policy=ingens", NULL };
  Machine *m = thp_machine(sets);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert(pte_of(t, BASE) & PTE_P);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 0);
  machine_free(m);
}
END_TEST

/* ---- the huge zero page ------------------------------------------------------ */

START_TEST(test_huge_zero_page_read_then_write)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  fixture_syscall(m, t, REC_MMAP, BASE, 8 * MB, PROT_R | PROT_W, 0);
  uint64_t cycles;
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x10, ACC_LOAD, &cycles), FAULT_MAPPED);
  uint64_t e = pmd_of(t, BASE);
  ck_assert((e & (PTE_P | PTE_PS | PTE_SW_ZERO)) == (PTE_P | PTE_PS | PTE_SW_ZERO));
  ck_assert(!(e & PTE_RW));
  uint64_t zero_pfn = pte_pfn(e);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_ZERO_PAGE_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_ZERO_PAGE_MAPPED), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 0);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 1);
  uint64_t clear2m = kernel_clear_cycles(k, 2 * MB);
  ck_assert_uint_eq(cycles, clear2m + k->zero_page_cycles + 3 * (k->ptpage_cycles + k->clear_4k_cycles));
  /* Another range shares the same huge zero page, allocated once. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 2 * MB, ACC_LOAD, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(pte_pfn(pmd_of(t, BASE + 2 * MB)), zero_pfn);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_ZERO_PAGE_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_ZERO_PAGE_MAPPED), 2);
  ck_assert_uint_eq(cycles, k->zero_page_cycles + k->ptpage_cycles + k->clear_4k_cycles);
  /* A write splits the zero PMD and copies the written base page
   * (do_huge_pmd_wp_page's fallback, then do_wp_page: Linux 6.12; the THP
   * of do_huge_zero_wp_pmd is 6.13's). */
  uint64_t flush_pages = fixture_cpu0_ctr(m, CTR_TLB_FLUSH_PAGES);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x5000, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(pmd_of(t, BASE), 0); /* a table now */
  e = pte_of(t, BASE + 0x5000);
  ck_assert((e & (PTE_P | PTE_RW | PTE_D | PTE_SW_ZERO)) == (PTE_P | PTE_RW | PTE_D));
  ck_assert_uint_ne(pte_pfn(e), k->zero_pfn);
  ck_assert_uint_eq(pte_pfn(pte_of(t, BASE + 0x4000)), k->zero_pfn);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_COW), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 4096);
  ck_assert_uint_eq(t->mm->rss_pages, 1); /* the copy; the zero pages are no RSS */
  ck_assert_uint_eq(mm_deposited_count(t->mm), 1); /* the other range's */
  /* The huge translation at the split, the base page at the copy. */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_TLB_FLUSH_PAGES) - flush_pages, 2);
  /* Two granules touched in that range: the read and the write. */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 3 * 4096);
  machine_free(m);
}
END_TEST

START_TEST(test_no_zero_page_when_disabled)
{
  const char *sets[] = { "thp.use_zero_page=false", NULL };
  Machine *m = thp_machine(sets);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 2 * MB, PROT_R, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_LOAD, NULL), FAULT_MAPPED);
  uint64_t e = pmd_of(t, BASE);
  ck_assert((e & (PTE_P | PTE_PS | PTE_D)) == (PTE_P | PTE_PS | PTE_D));
  ck_assert(!(e & PTE_RW)); /* a read-only VMA gets a read-only PMD */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_ZERO_PAGE_ALLOC), 0);
  machine_free(m);
}
END_TEST

/* No order-9 block free: the zero PMD is split into 4K zero-page PTEs and
 * the written page copied at 4K. */
START_TEST(test_huge_zero_write_fallback_splits)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  fixture_syscall(m, t, REC_MMAP, BASE, 2 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_LOAD, NULL), FAULT_MAPPED);
  exhaust_order9(k);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 5 * 4096, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 0); /* 6.12 counts none here */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_COW), 1);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 0);
  for (unsigned i = 0; i < 512; i++) {
    uint64_t e = pte_of(t, BASE + i * 4096ULL);
    ck_assert(e & PTE_P);
    if (i == 5) {
      ck_assert((e & (PTE_RW | PTE_SW_ZERO)) == PTE_RW);
    } else {
      ck_assert((e & (PTE_RW | PTE_SW_ZERO)) == PTE_SW_ZERO);
      ck_assert_uint_eq(pte_pfn(e), k->zero_pfn);
    }
  }
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* ---- allocation failure and the defrag table ----------------------------------- */

START_TEST(test_fallback_when_no_order9)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  exhaust_order9(k);
  uint64_t cycles;
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_FAULTS_ANON), 1);
  ck_assert(pte_of(t, BASE) & PTE_P);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 4096);
  /* A read falls back too when the huge zero page cannot be had. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 2 * MB, ACC_LOAD, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 2);
  ck_assert_uint_eq(pte_pfn(pte_of(t, BASE + 2 * MB)), k->zero_pfn);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* vma_thp_gfp_mask (mm/huge_memory.c 6.12): __GFP_NORETRY (async only)
 * for a plain VMA under always, GFP_TRANSHUGE (async then sync-light) for a
 * madvised one under always, defer+madvise and madvise, else no direct
 * compaction. */
static const struct {
  const char *defrag;
  CompactMode plain, madvised; /* compaction for a plain VMA, for a MADV_HUGEPAGE one */
} defrag_cases[] = {
  { "always", COMPACT_MODE_ASYNC, COMPACT_MODE_SYNC },
  { "defer", COMPACT_MODE_NONE, COMPACT_MODE_NONE },
  { "defer+madvise", COMPACT_MODE_NONE, COMPACT_MODE_SYNC },
  { "madvise", COMPACT_MODE_NONE, COMPACT_MODE_SYNC },
  { "never", COMPACT_MODE_NONE, COMPACT_MODE_NONE },
};

START_TEST(test_defrag_table)
{
  g_autofree char *set = g_strdup_printf("thp.defrag=%s", defrag_cases[_i].defrag);
  const char *sets[] = { set, NULL };
  Machine *m = thp_machine(sets);
  Vma plain = { .start = BASE, .end = BASE + 2 * MB, .prot = PROT_R | PROT_W };
  Vma madv = plain;
  madv.thp = VMA_THP_HUGEPAGE;
  ck_assert_int_eq(thp_defrag_compact(m->k, &plain), defrag_cases[_i].plain);
  ck_assert_int_eq(thp_defrag_compact(m->k, &madv), defrag_cases[_i].madvised);
  machine_free(m);
}
END_TEST

/* Faults where compaction cannot help (every pageblock holds an unmovable
 * background page) under thp.defrag=always: in a plain VMA the fault's
 * gfp has __GFP_NORETRY (vma_thp_gfp_mask), so each of alloc_pages_mpol's
 * two allocations (its node alone, then the zonelist) runs async passes
 * only, two each (__alloc_pages_slowpath 6.12: a failed first async pass
 * is followed by another at INIT_COMPACT_PRIORITY), and a failed async pass
 * never defers (try_to_compact_pages): every fault stalls four times.  In a
 * MADV_HUGEPAGE VMA (GFP_TRANSHUGE) the zonelist allocation goes on to
 * sync-light, whose failure defers the zone: later faults are mostly
 * deferred.  (An 8G node: the lowmem reserve keeps the DMA zone out.) */
static uint64_t failed_fault_stalls(gboolean madvised, uint64_t *fallbacks)
{
  const char *sets[] = { "thp.defrag=always", "machine.mem_per_node=8G", "mem.fragmentation=1",
                         "mem.fragmentation_movable=0", NULL };
  Machine *m = thp_machine(sets);
  Thread *t = fixture_thread(m, 1);
  fixture_syscall(m, t, REC_MMAP, BASE, 64 * MB, PROT_R | PROT_W, 0);
  if (madvised)
    fixture_syscall(m, t, REC_MADVISE, BASE, 64 * MB, ADV_HUGEPAGE, 0);
  for (uint64_t a = BASE; a < BASE + 64 * MB; a += 2 * MB)
    ck_assert_int_eq(fixture_fault(m, t, a, ACC_STORE, NULL), FAULT_MAPPED);
  *fallbacks = fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK);
  ck_assert_uint_eq(*fallbacks, 32);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_COMPACT_SUCCESS), 0);
  uint64_t stalls = fixture_cpu0_ctr(m, CTR_COMPACT_STALL);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_COMPACT_FAIL), stalls);
  machine_free(m);
  return stalls;
}

START_TEST(test_noretry_fault_never_defers)
{
  uint64_t fallbacks;
  uint64_t stalls = failed_fault_stalls(FALSE, &fallbacks);
  ck_assert_uint_eq(stalls, 4 * fallbacks);
  stalls = failed_fault_stalls(TRUE, &fallbacks);
  ck_assert_uint_lt(stalls, fallbacks);
}
END_TEST

/* ---- split ------------------------------------------------------------------ */

/* A THP at BASE with a write at BASE: returns its first pfn. */
static uint64_t one_thp(Machine *m, Thread *t)
{
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  uint64_t e = pmd_of(t, BASE);
  ck_assert(e & PTE_PS);
  return pte_pfn(e);
}

static uint64_t deposited_pfn(Thread *t, uint64_t haddr)
{
  const uint64_t *pfn = g_hash_table_lookup(t->mm->deposited, &haddr);
  ck_assert(pfn != NULL);
  return *pfn;
}

START_TEST(test_split_on_partial_munmap)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  uint64_t free0 = fixture_free_pages(k);
  uint64_t head = one_thp(m, t);
  uint64_t table = deposited_pfn(t, BASE);
  uint64_t pmd = pmd_of(t, BASE);
  uint64_t free1 = fixture_free_pages(k);
  uint64_t clock = m->cpus[0]->clock;
  fixture_syscall(m, t, REC_MUNMAP, BASE + 4096, 4096, 0, 0);
  /* split, one INVLPG for the huge page, one for the 4K page unmapped */
  ck_assert_uint_eq(m->cpus[0]->clock - clock, k->split_cycles + 2 * k->invlpg_cycles);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_DEFERRED_SPLIT_PAGE), 1);
  ck_assert_uint_eq(thp_deferred_count(k), 1);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 0);
  /* The deposited table now holds the PTEs: same flags, A and D kept. */
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, BASE, &level, &idx);
  ck_assert_uint_eq(level, 1);
  ck_assert_uint_eq(n->pfn, table);
  uint64_t want_flags = pmd & ~(PTE_PFN_MASK | PTE_PS);
  for (unsigned i = 0; i < 512; i++) {
    uint64_t e = pte_of(t, BASE + i * 4096ULL);
    if (i == 1) {
      ck_assert_uint_eq(e, 0);
      continue;
    }
    ck_assert_uint_eq(pte_pfn(e), head + i);
    ck_assert_uint_eq(e & ~PTE_PFN_MASK, want_flags);
  }
  /* Nothing is freed before the queue is processed. */
  ck_assert_uint_eq(fixture_free_pages(k), free1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 2 * MB);
  fixture_check_buddy(k);
  uint64_t cycles = 0;
  ck_assert_uint_eq(thp_deferred_split_scan(k, &m->cpus[0]->kc, &cycles), 1);
  ck_assert_uint_eq(cycles, k->split_cycles);
  ck_assert_uint_eq(fixture_free_pages(k), free1 + 1);
  ck_assert(buddy_is_free(physmem_zone(k->pm, 0, ZONE_DMA32), head + 1));
  ck_assert_uint_eq(thp_page_count(k), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 2 * MB - 4096);
  fixture_check_buddy(k);
  /* The other 511 pages are base pages now, freed one by one. */
  fixture_syscall(m, t, REC_MUNMAP, BASE, 4 * MB, 0, 0);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 0);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* The last subpage of a partly unmapped THP goes: the whole block is freed
 * at order 9 without waiting for the queue. */
START_TEST(test_partly_unmapped_then_rest)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  uint64_t free0 = fixture_free_pages(k);
  one_thp(m, t);
  fixture_syscall(m, t, REC_MADVISE, BASE + 1 * MB, 1 * MB, ADV_DONTNEED, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 1);
  ck_assert_uint_eq(thp_deferred_count(k), 1);
  ck_assert_uint_eq(pte_of(t, BASE + 1 * MB), 0);
  ck_assert(pte_of(t, BASE + 1 * MB - 4096) & PTE_P);
  fixture_syscall(m, t, REC_MADVISE, BASE, 1 * MB, ADV_DONTNEED, 0);
  ck_assert_uint_eq(thp_deferred_count(k), 0);
  ck_assert_uint_eq(thp_page_count(k), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_DEFERRED_SPLIT_PAGE), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 0);
  /* The VMA stays; its emptied tables went, so all memory is back. */
  ck_assert_uint_eq(mm_vma_count(t->mm), 1);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

START_TEST(test_split_on_partial_mprotect)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  uint64_t head = one_thp(m, t);
  fixture_syscall(m, t, REC_MPROTECT, BASE, 1 * MB, PROT_R, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_DEFERRED_SPLIT_PAGE), 0);
  for (unsigned i = 0; i < 512; i++) {
    uint64_t e = pte_of(t, BASE + i * 4096ULL);
    ck_assert_uint_eq(pte_pfn(e), head + i);
    ck_assert_int_eq((e & PTE_RW) != 0, i >= 256);
    ck_assert(e & PTE_D);
  }
  /* A whole PTE-mapped THP unmapped in one call is freed at order 9. */
  uint64_t free1 = fixture_free_pages(k);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 2 * MB, 0, 0);
  ck_assert_uint_eq(thp_deferred_count(k), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_DEFERRED_SPLIT_PAGE), 0);
  ck_assert_uint_eq(fixture_free_pages(k), free1 + 512 + 3); /* and the PT, PD and PDPT pages */
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* mprotect over whole huge pages changes the PMDs; an mprotect that changes
 * nothing splits nothing. */
START_TEST(test_mprotect_whole_keeps_pmd)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  one_thp(m, t);
  fixture_syscall(m, t, REC_MPROTECT, BASE + 4096, 4096, PROT_R | PROT_W, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 0);
  fixture_syscall(m, t, REC_MPROTECT, BASE, 2 * MB, PROT_R, 0);
  uint64_t e = pmd_of(t, BASE);
  ck_assert(e & PTE_PS);
  ck_assert(!(e & PTE_RW));
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 0);
  /* One 2M entry flushed at the PMD's stride (change_huge_pmd's
   * tlb_flush_pmd_range, Linux 6.12), not 512 4K pages. */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_TLB_FLUSH_FULL), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_TLB_FLUSH_PAGES), 1);
  /* Writable again, the exclusive THP is writable at once
   * (can_change_pmd_writable, 6.0+): a write takes no fault. */
  uint64_t pfn = pte_pfn(pmd_of(t, BASE));
  fixture_syscall(m, t, REC_MPROTECT, BASE, 2 * MB, PROT_R | PROT_W, 0);
  ck_assert(pmd_of(t, BASE) & PTE_RW);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_TLB_FLUSH_PAGES), 2); /* the RW change flushes too */
  uint64_t faults = fixture_cpu0_ctr(m, CTR_PAGE_FAULTS);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, BASE + 8, ACC_STORE, &x), XLAT_OK);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_PAGE_FAULTS), faults);
  ck_assert_uint_eq(pte_pfn(pmd_of(t, BASE)), pfn);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  machine_free(m);
}
END_TEST

START_TEST(test_munmap_whole_frees_order9)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  uint64_t free0 = fixture_free_pages(k);
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 2 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(free0 - fixture_free_pages(k), 1024 + 2 + 2);
  uint64_t freed0 = fixture_cpu0_ctr(m, CTR_PGTABLE_PAGES_FREED);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 4 * MB, 0, 0);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_PGTABLE_PAGES_FREED) - freed0, 4); /* two deposited, PD, PDPT */
  ck_assert_uint_eq(mm_deposited_count(t->mm), 0);
  ck_assert_uint_eq(thp_page_count(k), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 0);
  ck_assert_uint_eq(t->mm->rss_pages, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_TLB_FLUSH_PAGES), 2); /* one INVLPG per huge page */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 0);
  fixture_check_buddy(k);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_LOAD, NULL), FAULT_SEGV);
  machine_free(m);
}
END_TEST

/* A failing huge allocation processes the deferred split queue first. */
START_TEST(test_deferred_split_runs_on_failure)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  one_thp(m, t);
  fixture_syscall(m, t, REC_MUNMAP, BASE + 4096, 4096, 0, 0);
  ck_assert_uint_eq(thp_deferred_count(k), 1);
  exhaust_order9(k);
  uint64_t free1 = fixture_free_pages(k);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 2 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(thp_deferred_count(k), 0);
  /* Its freed page and one more went to the 4K fault: the page and its PTE table. */
  ck_assert_uint_eq(fixture_free_pages(k), free1 + 1 - 2);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 1);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* ---- translation ---------------------------------------------------------------- */

START_TEST(test_translation_through_huge_pmd)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  TraceRecord w = { .type = REC_ACCESS, .kind = ACC_STORE, .addr = BASE + 0x40, .size = 8, .pid = 1, .tid = 1 };
  cpu_access(cpu, t, &w);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  cpu_flush_all(cpu);
  uint64_t refs = fixture_cpu0_ctr(m, CTR_WALK_REFS), walks = fixture_cpu0_ctr(m, CTR_PAGE_WALKS);
  TraceRecord r = { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = BASE + 0x123000, .size = 8, .pid = 1, .tid = 1 };
  cpu_access(cpu, t, &r);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_PAGE_WALKS) - walks, 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_WALK_REFS) - refs, 3); /* PML4E, PDPTE, PDE: no PTE */
  /* The second level holds a 2M entry: another 4K page of it hits there. */
  Xlat x = { 0 };
  ck_assert_int_eq(cpu->arch->translate(cpu, t->mm, BASE + 0x1ff000, ACC_LOAD, &x, NULL), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0);
  ck_assert_uint_eq(x.size, 1);
  ck_assert_uint_eq(x.pfn, pte_pfn(pmd_of(t, BASE)));
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_PAGE_WALKS) - walks, 1);
  machine_free(m);
}
END_TEST

/* ---- touched base pages ------------------------------------------------------ */

START_TEST(test_touch_bitmap)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Thread *u = machine_thread(m, 2, 1, 0);
  Kernel *k = m->k;
  Cpu *cpu = m->cpus[0];
  ck_assert_uint_eq(k->touch_maps, 0);
  kernel_touch_any(k, &cpu->kc, t->mm, BASE + 8); /* no bitmap: nothing counted */
  one_thp(m, t);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 4096);
  ck_assert_uint_eq(k->touch_maps, g_hash_table_size(k->touched));
  ck_assert_uint_eq(k->touch_maps, 1);
  kernel_touch_any(k, &cpu->kc, t->mm, BASE + 0x3000); /* kernel_touch_any counts as kernel_touch */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 2 * 4096);
  kernel_touch(k, &cpu->kc, t->mm, BASE + 8);          /* the faulting granule */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 2 * 4096);
  kernel_touch(k, &cpu->kc, t->mm, BASE + 0x7000);
  kernel_touch(k, &cpu->kc, t->mm, BASE + 0x7ff8);
  kernel_touch(k, &cpu->kc, t->mm, BASE + 2 * MB - 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 4 * 4096);
  kernel_touch(k, &cpu->kc, u->mm, BASE + 0x9000);      /* another mm: no huge mapping there */
  kernel_touch(k, &cpu->kc, t->mm, BASE + 2 * MB + 8); /* not mapped huge */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 4 * 4096);
  /* After a split and a partial unmap, a refault of an unmapped granule
   * counts again; a 4K fault on a granule counted already does not. */
  fixture_syscall(m, t, REC_MADVISE, BASE, 0x8000, ADV_DONTNEED, 0);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x7000, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 5 * 4096);
  kernel_touch(k, &cpu->kc, t->mm, BASE + 0x8000);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 6 * 4096);
  ck_assert_uint_eq(k->touch_maps, 1);
  /* munmap of the whole range forgets it. */
  fixture_syscall(m, t, REC_MUNMAP, BASE, 4 * MB, 0, 0);
  kernel_touch(k, &cpu->kc, t->mm, BASE + 0x9000);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 6 * 4096);
  ck_assert_uint_eq(g_hash_table_size(k->touched), 0);
  ck_assert_uint_eq(k->touch_maps, 0);
  machine_free(m);
}
END_TEST

/* The access path counts the first touch of each base page of a huge page,
 * whether the translation comes from a walk or from the L1 TLB. */
START_TEST(test_touch_from_accesses)
{
  Machine *m = thp_machine(NULL);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  fixture_syscall(m, t, REC_MMAP, BASE, 4 * MB, PROT_R | PROT_W, 0);
  static const uint64_t offs[] = { 0x40, 0x1000, 0x1008, 0x5000, 0x1000, 0x40, 0x1ff000 };
  for (unsigned i = 0; i < G_N_ELEMENTS(offs); i++) {
    TraceRecord r = { .type = REC_ACCESS, .kind = i ? ACC_LOAD : ACC_STORE, .addr = BASE + offs[i], .size = 8,
                      .pid = 1, .tid = 1 };
    cpu_access(cpu, t, &r);
    if (i == 3)
      cpu_flush_all(cpu); /* the next ones walk again */
  }
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  /* 0x0000, 0x1000, 0x5000, 0x1ff000: four base pages */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_TOUCHED_BYTES), 4 * 4096);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 2 * MB);
  machine_free(m);
}
END_TEST

/* ---- hugetlbfs ----------------------------------------------------------------- */

START_TEST(test_hugetlb_pools)
{
  const char *sets[] = { "machine.nodes=2", "machine.mem_per_node=2G", "hugetlb.nr_hugepages=3",
                         "hugetlb.nr_hugepages_1g=2", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Kernel *k = m->k;
  Hugetlb *h = k->hugetlb;
  ck_assert_uint_eq(hugetlb_total(h, HPAGE_2M), 3);
  ck_assert_uint_eq(hugetlb_total(h, HPAGE_1G), 2);
  /* Round-robin over the nodes: 1G one each, 2M two on node 0, one on 1. */
  ck_assert_uint_eq(hugetlb_free_on(h, HPAGE_1G, 0), 1);
  ck_assert_uint_eq(hugetlb_free_on(h, HPAGE_1G, 1), 1);
  ck_assert_uint_eq(hugetlb_free_on(h, HPAGE_2M, 0), 2);
  ck_assert_uint_eq(hugetlb_free_on(h, HPAGE_2M, 1), 1);
  /* 2 x 1G + 3 x 2M out of the buddy allocator, plus the zero page. */
  uint64_t managed = 0;
  for (int n = 0; n < 2; n++)
    for (ZoneType z = 0; z < N_ZONE_TYPES; z++)
      if (physmem_zone(k->pm, n, z))
        managed += buddy_managed_pages(physmem_zone(k->pm, n, z));
  ck_assert_uint_eq(managed - fixture_free_pages(k), 2 * 262144 + 3 * 512 + 1);
  fixture_check_buddy(k);

  Thread *t = fixture_thread(m, 1);
  mmap_flags(m, t, BASE, 4 * MB, MAP_F_HUGETLB);
  mmap_flags(m, t, BASE + GB, 2 * GB, MAP_F_HUGETLB | MAP_F_HUGETLB_1G);
  uint64_t cycles;
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x10, ACC_LOAD, &cycles), FAULT_MAPPED);
  uint64_t e = pmd_of(t, BASE);
  ck_assert((e & (PTE_P | PTE_PS)) == (PTE_P | PTE_PS));
  ck_assert(!(e & (PTE_RW | PTE_SW_ZERO))); /* private, read: read-only, no zero page */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_HUGETLB_FAULTS), 1);
  ck_assert_uint_eq(hugetlb_free_count(h, HPAGE_2M), 2);
  ck_assert_uint_eq(hugetlb_free_on(h, HPAGE_2M, 0), 1); /* from the CPU's node */
  ck_assert_uint_eq(cycles, k->anon_cycles + kernel_clear_cycles(k, 2 * MB) + 2 * (k->ptpage_cycles + k->clear_4k_cycles));
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_ZERO_PAGE_ALLOC), 0);
  /* The write reuses it. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 0x10, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert(pmd_of(t, BASE) & PTE_RW);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_HUGETLB_FAULTS), 1);
  /* 1G pages: a PUD leaf. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + GB + 5 * MB, ACC_STORE, &cycles), FAULT_MAPPED);
  unsigned level;
  e = leaf_of(t, BASE + GB, &level);
  ck_assert_uint_eq(level, 3);
  ck_assert((e & (PTE_P | PTE_PS | PTE_RW)) == (PTE_P | PTE_PS | PTE_RW));
  ck_assert_uint_eq(pte_pfn(e) & (262144 - 1), 0);
  ck_assert_uint_eq(hugetlb_free_count(h, HPAGE_1G), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_MEM_USED_BYTES), 2 * MB + GB);
  /* Translation: a walk of two references, a 1G page. */
  cpu_flush_all(m->cpus[0]);
  Xlat x = { 0 };
  uint64_t refs = fixture_cpu0_ctr(m, CTR_WALK_REFS);
  ck_assert_int_eq(m->arch->translate(m->cpus[0], t->mm, BASE + GB + 7 * MB, ACC_LOAD, &x, NULL), XLAT_OK);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_WALK_REFS) - refs, 2);
  ck_assert_uint_eq(x.size, 2);
  /* Exhaust the 2M pool: the third 2M fault is a SIGBUS. */
  mmap_flags(m, t, BASE + 4 * MB, 4 * MB, MAP_F_HUGETLB);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 2 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 4 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(hugetlb_free_count(h, HPAGE_2M), 0);
  uint64_t segv = fixture_cpu0_ctr(m, CTR_SEGV);
  ck_assert_int_eq(fixture_fault(m, t, BASE + 6 * MB, ACC_STORE, &cycles), FAULT_SEGV);
  ck_assert_uint_eq(cycles, k->segv_cycles);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_HUGETLB_ALLOC_FAIL), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SEGV) - segv, 1);
  /* munmap gives pages back to the pool, not to the buddy allocator. */
  uint64_t free1 = fixture_free_pages(k);
  fixture_syscall(m, t, REC_MUNMAP, BASE, 2 * MB, 0, 0);
  ck_assert_uint_eq(hugetlb_free_count(h, HPAGE_2M), 1);
  fixture_syscall(m, t, REC_MUNMAP, BASE + GB, 2 * GB, 0, 0);
  ck_assert_uint_eq(hugetlb_free_count(h, HPAGE_1G), 2);
  ck_assert_uint_eq(fixture_free_pages(k), free1); /* the tables still map BASE + 2M.. */
  ck_assert_int_eq(fixture_fault(m, t, BASE + 6 * MB, ACC_STORE, NULL), FAULT_MAPPED);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* hugetlb pages are never split; misaligned ranges are refused. */
START_TEST(test_hugetlb_alignment)
{
  const char *sets[] = { "hugetlb.nr_hugepages=4", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  mmap_flags(m, t, BASE + 4096, 2 * MB, MAP_F_HUGETLB); /* misaligned address */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 1);
  ck_assert_uint_eq(mm_vma_count(t->mm), 0);
  mmap_flags(m, t, BASE, 3 * MB, MAP_F_HUGETLB); /* misaligned length */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 2);
  mmap_flags(m, t, BASE, 4 * MB, MAP_F_HUGETLB);
  ck_assert_uint_eq(mm_vma_count(t->mm), 1);
  ck_assert_int_eq(fixture_fault(m, t, BASE, ACC_STORE, NULL), FAULT_MAPPED);
  fixture_syscall(m, t, REC_MUNMAP, BASE + 4096, 4096, 0, 0); /* inside a hugetlb page */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 3);
  fixture_syscall(m, t, REC_MPROTECT, BASE, 1 * MB, PROT_R, 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 4);
  ck_assert(pmd_of(t, BASE) & PTE_PS); /* untouched */
  ck_assert(pmd_of(t, BASE) & PTE_RW);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_SPLIT_PMD), 0);
  fixture_syscall(m, t, REC_MPROTECT, BASE, 2 * MB, PROT_R, 0); /* whole pages: fine */
  ck_assert(!(pmd_of(t, BASE) & PTE_RW));
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), 4);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_TLB_FLUSH_PAGES), 1); /* one 2M page, one INVLPG */
  machine_free(m);
}
END_TEST

START_TEST(test_hugetlb_impossible_pool)
{
  static const char *const cases[][2] = {
    { "hugetlb.nr_hugepages=1000", "hugetlb.nr_hugepages = 1000 (from test)" }, /* 2G of pages in 1G */
    { "hugetlb.nr_hugepages_1g=1", "hugetlb.nr_hugepages_1g = 1 (from test)" }, /* no aligned free 1G in 1G */
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(Settings) s = settings_new();
    GError *err = NULL;
    ck_assert(preset_load(s, "skylake", &err));
    ck_assert(settings_set(s, "machine.mem_per_node", "1G", "test", &err));
    ck_assert(settings_set_pair(s, cases[i][0], "test", &err));
    Machine *m = machine_new("skylake", s, NULL, &err);
    ck_assert(m == NULL);
    ck_assert(err != NULL);
    ck_assert_msg(strstr(err->message, cases[i][1]) != NULL, "%s", err->message);
    g_clear_error(&err);
  }
}
END_TEST

/* The range allocator of the 1G pool: a whole free aligned range of any
 * order, or nothing. */
START_TEST(test_alloc_range)
{
  const char *sets[] = { "machine.mem_per_node=4G", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Kernel *k = m->k;
  uint64_t free0 = fixture_free_pages(k);
  uint64_t gig = 262144;
  ck_assert(physmem_alloc_range(k->pm, 2 * gig, 18, MT_MOVABLE));
  ck_assert(!physmem_alloc_range(k->pm, 2 * gig + 1024, 10, MT_MOVABLE)); /* taken */
  ck_assert_uint_eq(free0 - fixture_free_pages(k), gig);
  fixture_check_buddy(k);
  /* A 4K page inside a range makes it fail, and leaves nothing taken. */
  ck_assert(physmem_alloc_range(k->pm, gig + 77, 0, MT_MOVABLE));
  ck_assert(!physmem_alloc_range(k->pm, gig, 18, MT_MOVABLE));
  ck_assert_uint_eq(free0 - fixture_free_pages(k), gig + 1);
  fixture_check_buddy(k);
  /* Order-0 pieces of a split block free one by one. */
  uint64_t pfn;
  ck_assert(physmem_alloc(k->pm, 0, 9, MT_MOVABLE, &pfn));
  physmem_split(k->pm, pfn, 9);
  for (unsigned i = 0; i < 512; i++)
    physmem_release(k->pm, pfn + i, 0);
  physmem_release(k->pm, gig + 77, 0);
  physmem_release_range(k->pm, 2 * gig, 18);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

static Suite *thp_suite(void)
{
  Suite *s = suite_create("thp");
  TCase *tc = tcase_create("fault");
  tcase_add_test(tc, test_huge_fault_write);
  tcase_add_test(tc, test_vma_edge_uses_base_pages);
  tcase_add_loop_test(tc, test_enabled_and_advice, 0, G_N_ELEMENTS(enabled_cases));
  tcase_add_test(tc, test_prctl_per_process);
  tcase_add_test(tc, test_policy_ingens_faults_base_pages);
  tcase_add_test(tc, test_huge_zero_page_read_then_write);
  tcase_add_test(tc, test_no_zero_page_when_disabled);
  tcase_add_test(tc, test_huge_zero_write_fallback_splits);
  tcase_add_test(tc, test_fallback_when_no_order9);
  tcase_add_loop_test(tc, test_defrag_table, 0, G_N_ELEMENTS(defrag_cases));
  tcase_add_test(tc, test_noretry_fault_never_defers);
  tcase_add_test(tc, test_translation_through_huge_pmd);
  tcase_add_test(tc, test_touch_bitmap);
  tcase_add_test(tc, test_touch_from_accesses);
  suite_add_tcase(s, tc);
  tc = tcase_create("split");
  tcase_add_test(tc, test_split_on_partial_munmap);
  tcase_add_test(tc, test_partly_unmapped_then_rest);
  tcase_add_test(tc, test_split_on_partial_mprotect);
  tcase_add_test(tc, test_mprotect_whole_keeps_pmd);
  tcase_add_test(tc, test_munmap_whole_frees_order9);
  tcase_add_test(tc, test_deferred_split_runs_on_failure);
  suite_add_tcase(s, tc);
  tc = tcase_create("hugetlb");
  tcase_add_test(tc, test_hugetlb_pools);
  tcase_add_test(tc, test_hugetlb_alignment);
  tcase_add_test(tc, test_hugetlb_impossible_pool);
  tcase_add_test(tc, test_alloc_range);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(thp_suite)
