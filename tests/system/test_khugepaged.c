/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of khugepaged and MADV_COLLAPSE: registration, every refusal
 * reason from a situation built for it, the collapse itself (PTEs replaced
 * by one huge PMD, old pages freed, table deposited, TLBs shot down, a
 * 3-level walk and a 2M TLB hit afterwards), the knobs that set the rate
 * (pages_to_scan, scan_sleep_millisecs, alloc_sleep_millisecs), max_ptes_none
 * and its bloat, the cursor and full_scans, the CPU that pays, the Ingens
 * policy, and the engine waking the daemon in simulated time.
 *
 * Pages are faulted in as base pages while their VMA is not advised
 * (thp.enabled=madvise), then advised, then collapsed: that holds whatever
 * the huge fault path does.
 */
#include "config.h"
#include <errno.h>
#include "engine.h"
#include "fault.h"
#include "khugepaged.h"
#include "machine_fixture.h"
#include "text.h"

#define BASE 0x7f0000000000ULL
#define MB (UINT64_C(1) << 20)
#define PMD (2 * MB)

/* ---- helpers ---------------------------------------------------------------- */

static Machine *setup(const char *const *sets, Thread **t)
{
  Machine *m = fixture_machine("skylake", sets);
  *t = fixture_thread(m, 1);
  return m;
}

static void syscall_rec(Machine *m, Thread *t, TraceRecordType type, uint64_t addr, uint64_t len, uint8_t prot,
                        uint8_t arg)
{
  TraceRecord r = { .type = type, .addr = addr, .len = len, .prot = prot, .arg = arg };
  kernel_syscall(m->k, &m->cpus[t->cpu]->kc, t->mm, &r);
}

static void map_rw(Machine *m, Thread *t, uint64_t addr, uint64_t len)
{
  syscall_rec(m, t, REC_MMAP, addr, len, PROT_R | PROT_W, 0);
}

static void advise(Machine *m, Thread *t, uint64_t addr, uint64_t len, TraceAdvice adv)
{
  syscall_rec(m, t, REC_MADVISE, addr, len, 0, adv);
}

/* Write every `stride`-th 4K page of [start, start + len). */
static void populate(Machine *m, Thread *t, uint64_t start, uint64_t len, uint64_t stride)
{
  uint64_t cycles;
  for (uint64_t va = start; va < start + len; va += stride)
    ck_assert_int_eq(fault_handle(m->k, &m->cpus[t->cpu]->kc, t->mm, va, ACC_STORE, &cycles), FAULT_MAPPED);
}

/* The PMD entry of va, or 0 when the walk stops above level 2. */
static uint64_t pmd_of(Thread *t, uint64_t va)
{
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, va, &level, &idx);
  return level == 2 ? n->e[idx] : level == 1 ? pte_make(n->pfn, PTE_P) : 0;
}

static gboolean pfn_free(Kernel *k, uint64_t pfn)
{
  int node = physmem_node_of(k->pm, pfn);
  for (ZoneType z = 0; z < N_ZONE_TYPES; z++) {
    BuddyZone *zone = physmem_zone(k->pm, node, z);
    if (zone && pfn >= buddy_start_pfn(zone) && pfn < buddy_end_pfn(zone))
      return buddy_is_free(zone, pfn);
  }
  return FALSE;
}

/* Run exactly one wake of the daemon (the one due next). */
static void wake_once(Machine *m)
{
  Khugepaged *kh = m->k->khugepaged;
  uint64_t w = khugepaged_next_wake(kh);
  ck_assert(w != UINT64_MAX);
  uint64_t now = w == 0 ? kcpu_now(khugepaged_cpu(kh)) : w;
  khugepaged_run(kh, now);
  ck_assert_uint_gt(khugepaged_next_wake(kh), now);
}

/* Let simulated time run from `from` to `from + ms`, in steps of 0.1 ms, as
 * the engine would between records. */
static void run_for_ms(Machine *m, uint64_t from, double ms)
{
  double cycles_per_ms = m->k->cycles_per_ns * 1e6;
  for (double t = 0; t <= ms; t += 0.1)
    khugepaged_run(m->k->khugepaged, from + (uint64_t)(t * cycles_per_ms));
}

/* Allocate every free page (huge blocks first) so that no order-9 block is
 * left; returns the blocks, to give them back. */
static void fill_node_into(Kernel *k, int node, GArray *blocks)
{
  uint64_t b[2];
  for (unsigned order = 9;; order = 0) {
    while (physmem_alloc_on(k->pm, node, order, MT_UNMOVABLE, &b[0])) {
      b[1] = order;
      g_array_append_vals(blocks, b, 1);
    }
    if (order == 0)
      break;
  }
}

static GArray *fill_memory(Kernel *k)
{
  GArray *blocks = g_array_new(FALSE, FALSE, sizeof(uint64_t) * 2);
  for (int n = 0; n < physmem_nodes(k->pm); n++)
    fill_node_into(k, n, blocks);
  return blocks;
}

static void release_blocks(Kernel *k, GArray *blocks)
{
  for (guint i = 0; i < blocks->len; i++) {
    uint64_t *b = (uint64_t *)(void *)(blocks->data + i * sizeof(uint64_t) * 2);
    physmem_release(k->pm, b[0], (unsigned)b[1]);
  }
  g_array_free(blocks, TRUE);
}

static const char *madvise_mode[] = { "thp.enabled=madvise", NULL };

/* ---- registration ----------------------------------------------------------- */

START_TEST(test_register_on_mmap_always)
{
  Thread *t;
  Machine *m = setup(NULL, &t); /* thp.enabled=always */
  Khugepaged *kh = m->k->khugepaged;
  ck_assert_uint_eq(khugepaged_next_wake(kh), UINT64_MAX);
  map_rw(m, t, BASE, 4 * MB);
  ck_assert(t->mm->khugepaged_listed);
  ck_assert_uint_eq(khugepaged_mm_count(kh), 1);
  ck_assert_uint_eq(khugepaged_next_wake(kh), 0); /* the first mm wakes it at once */
  map_rw(m, t, BASE + 8 * MB, 4 * MB);
  ck_assert_uint_eq(khugepaged_mm_count(kh), 1); /* once per mm */
  machine_free(m);
}
END_TEST

START_TEST(test_register_on_madvise)
{
  Thread *t;
  Machine *m = setup(madvise_mode, &t);
  Khugepaged *kh = m->k->khugepaged;
  map_rw(m, t, BASE, 4 * MB);
  ck_assert(!t->mm->khugepaged_listed);
  advise(m, t, BASE, 4 * MB, ADV_NOHUGEPAGE);
  ck_assert(!t->mm->khugepaged_listed);
  advise(m, t, BASE, 4 * MB, ADV_HUGEPAGE);
  ck_assert(t->mm->khugepaged_listed);
  ck_assert_uint_eq(khugepaged_next_wake(kh), 0);
  /* A second process joins behind the first; the daemon stays asleep. */
  Thread *t2 = machine_thread(m, 2, 1, 0);
  wake_once(m);
  uint64_t w = khugepaged_next_wake(kh);
  map_rw(m, t2, BASE, 4 * MB);
  advise(m, t2, BASE, 4 * MB, ADV_HUGEPAGE);
  ck_assert_uint_eq(khugepaged_mm_count(kh), 2);
  ck_assert_uint_eq(khugepaged_next_wake(kh), w);
  /* Exits: the list empties and the daemon goes idle. */
  khugepaged_exit(kh, t->mm);
  ck_assert(!t->mm->khugepaged_listed);
  khugepaged_exit(kh, t2->mm);
  ck_assert_uint_eq(khugepaged_mm_count(kh), 0);
  ck_assert_uint_eq(khugepaged_next_wake(kh), UINT64_MAX);
  machine_free(m);
}
END_TEST

START_TEST(test_never_runs_no_daemon)
{
  static const char *sets[] = { "thp.enabled=never", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  map_rw(m, t, BASE, 4 * MB);
  advise(m, t, BASE, 4 * MB, ADV_HUGEPAGE);
  ck_assert(!t->mm->khugepaged_listed);
  ck_assert_uint_eq(khugepaged_next_wake(m->k->khugepaged), UINT64_MAX);
  machine_free(m);
}
END_TEST

START_TEST(test_bad_cpu_setting)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, "skylake", &err));
  ck_assert(settings_set(s, "machine.mem_per_node", "1G", "test", &err));
  ck_assert(settings_set_pair(s, "khugepaged.cpu=3", "test", &err));
  Machine *m = machine_new("skylake", s, NULL, &err);
  ck_assert(m == NULL);
  ck_assert(err != NULL);
  ck_assert_msg(strstr(err->message, "khugepaged.cpu") && strstr(err->message, "0..0"), "%s", err->message);
  g_error_free(err);
}
END_TEST

/* ---- the collapse ----------------------------------------------------------- */

START_TEST(test_take_table)
{
  Thread *t;
  Machine *m = setup(madvise_mode, &t);
  PageTable *pt = &t->mm->pt;
  uint64_t pfn = 0;
  ck_assert(!pgtable_take_table(pt, BASE, 1, &pfn)); /* nothing there */
  map_rw(m, t, BASE, PMD);
  populate(m, t, BASE, 4096, 4096);
  uint64_t tables = pt->tables, table = pte_pfn(pmd_of(t, BASE));
  ck_assert(!pgtable_take_table(pt, BASE, 2, &pfn)); /* a PTE table hangs below the PD */
  ck_assert_uint_eq(pt->tables, tables);
  uint64_t page = pte_pfn(fixture_pte(t, BASE));
  ck_assert(pgtable_take_table(pt, BASE, 1, &pfn));
  ck_assert_uint_eq(pfn, table);
  ck_assert_uint_eq(pt->tables, tables - 1);
  ck_assert_uint_eq(pmd_of(t, BASE), 0); /* the PMD is empty */
  ck_assert(!pfn_free(m->k, table));  /* not freed: the caller keeps it */
  physmem_release(m->k->pm, table, 0);
  physmem_release(m->k->pm, page, 0);
  machine_free(m);
}
END_TEST

START_TEST(test_collapse_replaces_ptes)
{
  static const char *sets[] = { "thp.enabled=madvise", "khugepaged.scan_sleep_millisecs=1", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Kernel *k = m->k;
  Cpu *cpu = m->cpus[0];
  map_rw(m, t, BASE, PMD);
  populate(m, t, BASE, PMD, 4096);
  uint64_t old_pfn = pte_pfn(fixture_pte(t, BASE + 5 * 4096));
  uint64_t old_table = pte_pfn(pmd_of(t, BASE));
  ck_assert(!pfn_free(k, old_pfn));
  /* A 4K translation in the TLB that the collapse must shoot down. */
  fixture_access(m, t, ACC_LOAD, BASE);
  uint64_t walks = cpu->ctr.c[CTR_PAGE_WALKS];
  fixture_access(m, t, ACC_LOAD, BASE);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], walks);

  uint64_t free_before = physmem_free_pages(k->pm, 0);
  uint64_t tables_before = t->mm->pt.tables;
  uint64_t used_before = fixture_ctr(m, CTR_MEM_USED_BYTES);
  advise(m, t, BASE, PMD, ADV_HUGEPAGE);
  uint64_t full_before = cpu->ctr.c[CTR_TLB_FLUSH_FULL];
  wake_once(m);

  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_PAGES_COLLAPSED), 1);
  uint64_t pmd = pmd_of(t, BASE);
  ck_assert((pmd & (PTE_P | PTE_PS | PTE_RW | PTE_A | PTE_D | PTE_NX)) == (PTE_P | PTE_PS | PTE_RW | PTE_A | PTE_D | PTE_NX));
  ck_assert_uint_eq(pte_pfn(pmd) & 511, 0); /* 2M-aligned frame */
  /* The old page is back in the buddy allocator; the table is deposited,
   * not freed; free memory is unchanged (512 pages in, 512 out). */
  ck_assert(pfn_free(k, old_pfn));
  ck_assert(!pfn_free(k, old_table));
  ck_assert_uint_eq(mm_deposited_count(t->mm), 1);
  uint64_t dep;
  ck_assert(mm_withdraw(t->mm, BASE, &dep));
  ck_assert_uint_eq(dep, old_table);
  mm_deposit(t->mm, BASE, dep);
  ck_assert_uint_eq(t->mm->pt.tables, tables_before - 1);
  ck_assert_uint_eq(physmem_free_pages(k->pm, 0), free_before);
  ck_assert_uint_eq(t->mm->rss_pages, 512);
  ck_assert_uint_eq(fixture_ctr(m, CTR_MEM_USED_BYTES), used_before); /* nothing was a hole */
  ck_assert_uint_gt(cpu->ctr.c[CTR_TLB_FLUSH_FULL], full_before); /* 512 pages > the flush ceiling */
  ck_assert_uint_gt(fixture_ctr(m, CTR_COLLAPSE_CYCLES), 0);

  /* The same address now walks three levels to a 2M leaf... */
  uint64_t refs = cpu->ctr.c[CTR_WALK_REFS];
  walks = cpu->ctr.c[CTR_PAGE_WALKS];
  fixture_access(m, t, ACC_LOAD, BASE);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], walks + 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS], refs + 3);
  /* ...and the rest of the 2M range hits that one TLB entry. */
  fixture_access(m, t, ACC_LOAD, BASE + 300 * 4096);
  fixture_access(m, t, ACC_STORE, BASE + PMD - 8);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], walks + 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_PAGE_FAULTS), 512); /* the populate faults only */
  machine_free(m);
}
END_TEST

START_TEST(test_munmap_after_collapse)
{
  Thread *t;
  Machine *m = setup(madvise_mode, &t);
  Kernel *k = m->k;
  uint64_t free0 = physmem_free_pages(k->pm, 0);
  map_rw(m, t, BASE, 2 * PMD);
  populate(m, t, BASE, 2 * PMD, 4096);
  advise(m, t, BASE, 2 * PMD, ADV_HUGEPAGE);
  wake_once(m);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 2);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 2);
  /* munmap frees the huge pages, the deposited tables and the tables above. */
  uint64_t freed = fixture_ctr(m, CTR_PGTABLE_PAGES_FREED);
  syscall_rec(m, t, REC_MUNMAP, BASE, 2 * PMD, 0, 0);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 0);
  ck_assert_uint_eq(fixture_ctr(m, CTR_PGTABLE_PAGES_FREED) - freed, 2 + 2); /* 2 deposited, PD and PDPT */
  ck_assert_uint_eq(physmem_free_pages(k->pm, 0), free0);
  ck_assert_uint_eq(t->mm->rss_pages, 0);
  ck_assert_uint_eq(fixture_ctr(m, CTR_MEM_USED_BYTES), 0);
  /* The same range mapped, written and collapsed again. */
  map_rw(m, t, BASE, PMD);
  populate(m, t, BASE, PMD, 4096);
  advise(m, t, BASE, PMD, ADV_HUGEPAGE);
  ck_assert_int_eq(khugepaged_collapse(k->khugepaged, &m->cpus[0]->kc, t->mm, BASE, FALSE), SCAN_SUCCEED);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 1);
  machine_free(m);
}
END_TEST

START_TEST(test_max_ptes_none_and_bloat)
{
  /* 64 pages of 512 written (every 8th): 448 holes. */
  for (int allow = 0; allow < 2; allow++) {
    const char *sets[] = { "thp.enabled=madvise", allow ? "khugepaged.max_ptes_none=448" : "khugepaged.max_ptes_none=447",
                           NULL };
    Thread *t;
    Machine *m = setup(sets, &t);
    map_rw(m, t, BASE, PMD);
    populate(m, t, BASE, PMD, 8 * 4096);
    uint64_t used = fixture_ctr(m, CTR_MEM_USED_BYTES);
    uint64_t free_before = physmem_free_pages(m->k->pm, 0);
    ck_assert_uint_eq(used, 64 * 4096);
    advise(m, t, BASE, PMD, ADV_HUGEPAGE);
    wake_once(m);
    if (allow) {
      ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 1);
      ck_assert(pmd_of(t, BASE) & PTE_PS);
      ck_assert_uint_eq(fixture_ctr(m, CTR_MEM_USED_BYTES), used + 448 * 4096); /* the bloat */
      ck_assert_uint_eq(fixture_ctr(m, CTR_MEM_USED_BYTES), PMD);
      ck_assert_uint_eq(free_before - physmem_free_pages(m->k->pm, 0), 448);
      ck_assert_uint_eq(t->mm->rss_pages, 512);
    } else {
      ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 0);
      ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_EXCEED_NONE_PTE), 1);
      ck_assert_uint_eq(fixture_ctr(m, CTR_MEM_USED_BYTES), used);
    }
    machine_free(m);
  }
}
END_TEST

START_TEST(test_zero_page_ptes_are_holes)
{
  static const char *sets[] = { "thp.enabled=madvise", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  map_rw(m, t, BASE, PMD);
  uint64_t cycles;
  /* 256 pages written, 256 only read (the zero page). */
  for (uint64_t va = BASE; va < BASE + PMD; va += 4096)
    fault_handle(m->k, &m->cpus[0]->kc, t->mm, va, (va >> 12) & 1 ? ACC_LOAD : ACC_STORE, &cycles);
  uint64_t used = fixture_ctr(m, CTR_MEM_USED_BYTES);
  uint64_t free_before = physmem_free_pages(m->k->pm, 0);
  advise(m, t, BASE, PMD, ADV_HUGEPAGE);
  wake_once(m);
  ck_assert(pmd_of(t, BASE) & PTE_PS);
  ck_assert_uint_eq(fixture_ctr(m, CTR_MEM_USED_BYTES), used + 256 * 4096);
  ck_assert_uint_eq(free_before - physmem_free_pages(m->k->pm, 0), 256); /* the zero page stays */
  ck_assert(!pfn_free(m->k, m->k->zero_pfn));
  ck_assert_uint_eq(t->mm->rss_pages, 512);
  machine_free(m);
}
END_TEST

/* ---- refusals --------------------------------------------------------------- */

START_TEST(test_refusals_by_reason)
{
  static const char *sets[] = { "thp.enabled=madvise", "khugepaged.max_ptes_swap=0", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Kernel *k = m->k;
  Khugepaged *kh = k->khugepaged;
  Cpu *cpu = m->cpus[0];
  Mm *mm = t->mm;
  /* Ranges, 2M each from BASE:
   *   0 nothing faulted (its    4 read-only after mprotect
   *     PMD table exists)
   *   1 collapsed, then again   5 accessed bits cleared
   *   2 not advised             6 one swap entry */
  map_rw(m, t, BASE, 16 * PMD);
  populate(m, t, BASE + PMD, PMD, 4096);
  populate(m, t, BASE + 2 * PMD, PMD, 4096);
  populate(m, t, BASE + 4 * PMD, PMD, 4096);
  populate(m, t, BASE + 5 * PMD, PMD, 4096);
  populate(m, t, BASE + 6 * PMD, PMD, 4096);
  advise(m, t, BASE, 2 * PMD, ADV_HUGEPAGE);
  advise(m, t, BASE + 3 * PMD, 13 * PMD, ADV_HUGEPAGE);
  syscall_rec(m, t, REC_MPROTECT, BASE + 4 * PMD, PMD, PROT_R, 0);
  pgtable_change_range(&mm->pt, BASE + 5 * PMD, BASE + 6 * PMD, 0, PTE_A);
  ck_assert(pgtable_set(&mm->pt, BASE + 6 * PMD + 4096, 1, 0x5000 /* not present, not empty */, NULL));

  /* find_pmd_or_thp_or_none: an empty entry of a PMD table is SCAN_PMD_NONE. */
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE, FALSE), SCAN_PMD_NONE);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + PMD, FALSE), SCAN_SUCCEED);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + PMD, FALSE), SCAN_PMD_MAPPED);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + 2 * PMD, FALSE), SCAN_VMA_CHECK);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + 4 * PMD, FALSE), SCAN_PAGE_RO);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + 5 * PMD, FALSE), SCAN_LACK_REFERENCED_PAGE);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + 6 * PMD, FALSE), SCAN_EXCEED_SWAP_PTE);
  /* No VMA at all, and a range only partly inside its VMA. */
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + 64 * PMD, FALSE), SCAN_VMA_CHECK);
  map_rw(m, t, BASE + 64 * PMD + MB, 3 * MB);
  advise(m, t, BASE + 64 * PMD + MB, 3 * MB, ADV_HUGEPAGE);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + 64 * PMD, FALSE), SCAN_ADDRESS_RANGE);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + 65 * PMD, FALSE), SCAN_PMD_NONE);
  /* No PMD table at all (nothing mapped in the 1G): SCAN_PMD_NULL. */
  map_rw(m, t, BASE + 1024 * PMD, PMD);
  advise(m, t, BASE + 1024 * PMD, PMD, ADV_HUGEPAGE);
  ck_assert_int_eq(khugepaged_collapse(kh, &cpu->kc, mm, BASE + 1024 * PMD, FALSE), SCAN_PMD_NULL);

  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_NULL), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_NONE), 2);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_MAPPED), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_VMA_CHECK), 2);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_ADDRESS_RANGE), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PAGE_RO), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_LACK_REFERENCED_PAGE), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_EXCEED_SWAP_PTE), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_EXCEED_NONE_PTE), 0);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 1);
  /* The scan cleared no accessed bit where it read them. */
  ck_assert(fixture_pte(t, BASE + 4 * PMD) & PTE_A);
  /* The names the counters and events use. */
  ck_assert_str_eq(thp_scan_result_name(SCAN_LACK_REFERENCED_PAGE), "lack_referenced_page");
  machine_free(m);
}
END_TEST

START_TEST(test_shared_rule_in_policy)
{
  /* No anonymous page is mapped by two mms in mmusim (there is no fork), so
   * a scan never finds one: the rule is checked on the policy alone. */
  static const char *sets[] = { "thp.enabled=madvise", "khugepaged.max_ptes_shared=10", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Vma v = { .start = BASE, .end = BASE + PMD, .prot = PROT_R | PROT_W, .thp = VMA_THP_HUGEPAGE };
  ThpRangeStats st = { .present = 512, .writable = 512, .young = 512, .shared = 11 };
  ck_assert_int_eq(m->k->thp->collapse_check(m->k, t->mm, &v, &st), SCAN_EXCEED_SHARED_PTE);
  st.shared = 10;
  ck_assert_int_eq(m->k->thp->collapse_check(m->k, t->mm, &v, &st), SCAN_SUCCEED);
  machine_free(m);
}
END_TEST

START_TEST(test_alloc_fail_and_alloc_sleep)
{
  static const char *sets[] = { "thp.enabled=madvise", "khugepaged.scan_sleep_millisecs=1",
                                "khugepaged.alloc_sleep_millisecs=50", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Kernel *k = m->k;
  Khugepaged *kh = k->khugepaged;
  uint64_t ms = (uint64_t)(k->cycles_per_ns * 1e6);
  map_rw(m, t, BASE, 4 * PMD);
  populate(m, t, BASE, 4 * PMD, 4096);
  GArray *blocks = fill_memory(k);
  advise(m, t, BASE, 4 * PMD, ADV_HUGEPAGE);

  /* First failure: the wake stops for alloc_sleep_millisecs. */
  uint64_t start = kcpu_now(khugepaged_cpu(kh));
  khugepaged_run(kh, start);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC_FAILED), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_ALLOC_HUGE_PAGE_FAIL), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 0);
  uint64_t w = khugepaged_next_wake(kh);
  ck_assert_uint_ge(w - start, 50 * ms);
  ck_assert_uint_lt(w - start, 51 * ms);
  khugepaged_run(kh, start + 49 * ms); /* still asleep */
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC_FAILED), 1);

  /* The wake resumes at the next range; failing again ends it, and the
   * daemon sleeps scan_sleep_millisecs. */
  khugepaged_run(kh, w);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC_FAILED), 2);
  uint64_t w2 = khugepaged_next_wake(kh);
  ck_assert_uint_ge(w2 - w, ms);
  ck_assert_uint_lt(w2 - w, 2 * ms);
  ck_assert(pmd_of(t, BASE) && !(pmd_of(t, BASE) & PTE_PS));

  /* Memory back: the next wake goes on from range 2 to the end (a full
   * scan), passes the list head and does the whole mm again (a second full
   * scan, ranges 0 and 1 collapsed, 2 and 3 found mapped), then stops at the
   * head. */
  release_blocks(k, blocks);
  khugepaged_run(kh, w2);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 4);
  ck_assert_uint_eq(fixture_ctr(m, CTR_FULL_SCANS), 2);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_MAPPED), 2);
  for (int r = 0; r < 4; r++)
    ck_assert(pmd_of(t, BASE + r * PMD) & PTE_PS);
  machine_free(m);
}
END_TEST

START_TEST(test_ingens_policy)
{
  static const char *sets[] = { "thp.enabled=madvise", "thp.policy=ingens", "thp.util_threshold=0.9", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  map_rw(m, t, BASE, 2 * PMD);
  /* ceil(0.9 * 512) = 461 pages needed. */
  populate(m, t, BASE, 460 * 4096, 4096);
  populate(m, t, BASE + PMD, 461 * 4096, 4096);
  advise(m, t, BASE, 2 * PMD, ADV_HUGEPAGE);
  wake_once(m);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_POLICY), 1);
  ck_assert(!(pmd_of(t, BASE) & PTE_PS));
  ck_assert(pmd_of(t, BASE + PMD) & PTE_PS);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 1);
  machine_free(m);
}
END_TEST

/* ---- MADV_COLLAPSE ---------------------------------------------------------- */

START_TEST(test_madvise_collapse)
{
  /* thp.enabled=never and max_ptes_none=0 bind the daemon, not MADV_COLLAPSE. */
  static const char *sets[] = { "thp.enabled=never", "khugepaged.max_ptes_none=0", "machine.cpus_per_node=2", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Cpu *cpu = m->cpus[0];
  map_rw(m, t, BASE, 4 * PMD);
  populate(m, t, BASE, 3 * PMD, 16 * 4096); /* sparse: 32 pages a range */
  syscall_rec(m, t, REC_MPROTECT, BASE + 2 * PMD, PMD, PROT_R, 0);
  uint64_t before = cpu->clock;
  advise(m, t, BASE, 4 * PMD, ADV_COLLAPSE);
  /* Ranges 0 and 1 collapse, 2 is read-only: the error of its VMA ends the
   * call (madvise_walk_vmas), range 3 is not looked at. */
  ck_assert(pmd_of(t, BASE) & PTE_PS);
  ck_assert(pmd_of(t, BASE + PMD) & PTE_PS);
  ck_assert_uint_eq(cpu->ctr.c[CTR_THP_COLLAPSE_ALLOC], 2);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SCAN_PAGE_RO], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SCAN_PMD_NONE] + cpu->ctr.c[CTR_SCAN_PMD_NULL], 0);
  ck_assert_uint_eq(fixture_ctr(m, CTR_PAGES_COLLAPSED), 0); /* the daemon's count only */
  ck_assert_uint_eq(fixture_ctr(m, CTR_KHUGEPAGED_CYCLES), 0);
  ck_assert_uint_ge(cpu->clock - before, cpu->ctr.c[CTR_COLLAPSE_CYCLES]); /* paid by the caller */
  ck_assert_uint_gt(cpu->ctr.c[CTR_COLLAPSE_CYCLES], 0);
  ck_assert_uint_eq(m->cpus[1]->clock, 0);
  /* MADV_NOHUGEPAGE stops it: the first range is refused and the call ends. */
  map_rw(m, t, BASE + 8 * PMD, 2 * PMD);
  populate(m, t, BASE + 8 * PMD, 2 * PMD, 4096);
  advise(m, t, BASE + 8 * PMD, 2 * PMD, ADV_NOHUGEPAGE);
  advise(m, t, BASE + 8 * PMD, 2 * PMD, ADV_COLLAPSE);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SCAN_VMA_CHECK], 1);
  ck_assert(!(pmd_of(t, BASE + 9 * PMD) & PTE_PS));
  machine_free(m);
}
END_TEST

/* madvise_collapse (mm/khugepaged.c, 6.12) and its switch on each range's
 * result: an empty PMD entry (SCAN_PMD_NONE) ends the call with EINVAL,
 * where no PMD table (SCAN_PMD_NULL) and a read-only range go on; a failed
 * allocation ends it with ENOMEM; a range already huge counts as done. */
START_TEST(test_madvise_collapse_results)
{
  static const char *sets[] = { "thp.enabled=never", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Khugepaged *kh = m->k->khugepaged;
  KCpu *kc = &m->cpus[0]->kc;
  Mm *mm = t->mm;
  /* Range 0 empty (its PMD table exists through range 1), range 1 written. */
  map_rw(m, t, BASE, 2 * PMD);
  populate(m, t, BASE + PMD, PMD, 4096);
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, mm, BASE, BASE + 2 * PMD), -EINVAL);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_NONE), 1);
  ck_assert(!(pmd_of(t, BASE + PMD) & PTE_PS)); /* the call ended at range 0 */
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 0);
  /* Range 1 alone collapses; asked again, it is done already (0). */
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, mm, BASE + PMD, BASE + 2 * PMD), 0);
  ck_assert(pmd_of(t, BASE + PMD) & PTE_PS);
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, mm, BASE + PMD, BASE + 2 * PMD), 0);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_MAPPED), 1);

  /* In a 1G with nothing mapped before it there is no PMD table: the range
   * is passed over, the next one collapses, the call says EINVAL. */
  uint64_t far = BASE + 1024 * PMD;
  map_rw(m, t, far - 2 * PMD, 4 * PMD);
  populate(m, t, far, PMD, 4096);
  ck_assert_int_eq(pmd_of(t, far - PMD), 0);
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, mm, far - PMD, far + PMD), -EINVAL);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_NULL), 1);
  ck_assert(pmd_of(t, far) & PTE_PS);

  /* A range of read-only PTEs in a writable VMA is passed over too. */
  map_rw(m, t, BASE + 8 * PMD, 2 * PMD);
  populate(m, t, BASE + 8 * PMD, 2 * PMD, 4096);
  pgtable_change_range(&mm->pt, BASE + 8 * PMD, BASE + 9 * PMD, 0, PTE_RW);
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, mm, BASE + 8 * PMD, BASE + 10 * PMD), -EINVAL);
  ck_assert(pmd_of(t, BASE + 9 * PMD) & PTE_PS);

  /* No huge page to be had: ENOMEM at the first range, the next untouched. */
  map_rw(m, t, BASE + 16 * PMD, 2 * PMD);
  populate(m, t, BASE + 16 * PMD, 2 * PMD, 4096);
  GArray *blocks = fill_memory(m->k);
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, mm, BASE + 16 * PMD, BASE + 18 * PMD), -ENOMEM);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_ALLOC_HUGE_PAGE_FAIL), 1);
  release_blocks(m->k, blocks);
  ck_assert(!(pmd_of(t, BASE + 17 * PMD) & PTE_PS));
  machine_free(m);
}
END_TEST

/* MADV_COLLAPSE came with 6.1: kernel.version=3.8 refuses it. */
START_TEST(test_madvise_collapse_version)
{
  for (int old = 0; old < 2; old++) {
    const char *sets[] = { "thp.enabled=never", old ? "kernel.version=3.8" : "kernel.version=6.12", NULL };
    Thread *t;
    Machine *m = setup(sets, &t);
    map_rw(m, t, BASE, PMD);
    populate(m, t, BASE, PMD, 4096);
    advise(m, t, BASE, PMD, ADV_COLLAPSE);
    ck_assert_int_eq(!!(pmd_of(t, BASE) & PTE_PS), !old);
    ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), old ? 0 : 1);
    machine_free(m);
  }
}
END_TEST

/* ---- the target node -------------------------------------------------------- */

/* Write `n` pages of [start, ...) from CPU `cpu` (their node, local policy). */
static void populate_from(Machine *m, Thread *t, unsigned cpu, uint64_t start, unsigned n)
{
  uint64_t cycles;
  for (unsigned i = 0; i < n; i++)
    ck_assert_int_eq(fault_handle(m->k, &m->cpus[cpu]->kc, t->mm, start + (uint64_t)i * 4096, ACC_STORE, &cycles),
                     FAULT_MAPPED);
}

/* Take every free page of `node`; returns the blocks. */
static GArray *fill_node(Kernel *k, int node)
{
  GArray *blocks = g_array_new(FALSE, FALSE, sizeof(uint64_t) * 2);
  fill_node_into(k, node, blocks);
  return blocks;
}

static int collapsed_node(Machine *m, Thread *t, uint64_t va)
{
  uint64_t e = pmd_of(t, va);
  return (e & PTE_PS) ? physmem_node_of(m->k->pm, pte_pfn(e)) : -1;
}

/* hpage_collapse_find_target_node and alloc_charge_folio (mm/khugepaged.c,
 * 6.12): the node with most pages, the allocation limited to the nodes
 * tied with it (cc->alloc_nmask), without __GFP_THISNODE. */
START_TEST(test_target_node)
{
  static const char *sets[] = { "thp.enabled=never", "machine.nodes=2", "machine.cpus_per_node=2", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Khugepaged *kh = m->k->khugepaged;
  KCpu *kc = &m->cpus[0]->kc;
  map_rw(m, t, BASE, 4 * PMD);
  /* Range 0: 200 pages on node 0 first, 312 on node 1: node 1 wins. */
  populate_from(m, t, 0, BASE, 200);
  populate_from(m, t, 2, BASE + 200 * 4096, 312);
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, t->mm, BASE, BASE + PMD), 0);
  ck_assert_int_eq(collapsed_node(m, t, BASE), 1);
  /* Range 1: a tie, node 0 full: the page comes from node 1, its tie. */
  populate_from(m, t, 0, BASE + PMD, 256);
  populate_from(m, t, 2, BASE + PMD + 256 * 4096, 256);
  /* Range 2: most on node 0, node 0 full: node 1 is not in the mask. */
  populate_from(m, t, 0, BASE + 2 * PMD, 300);
  populate_from(m, t, 2, BASE + 2 * PMD + 300 * 4096, 212);
  GArray *blocks = fill_node(m->k, 0);
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, t->mm, BASE + PMD, BASE + 2 * PMD), 0);
  ck_assert_int_eq(collapsed_node(m, t, BASE + PMD), 1);
  ck_assert_int_eq(khugepaged_madvise_collapse(kh, kc, t->mm, BASE + 2 * PMD, BASE + 3 * PMD), -ENOMEM);
  release_blocks(m->k, blocks);
  machine_free(m);
}
END_TEST

/* kernel.version=3.8 (khugepaged_scan_pmd, khugepaged_alloc_page): the
 * node of the first page, whatever the others; 6.12 takes the majority. */
START_TEST(test_target_node_version)
{
  for (int old = 0; old < 2; old++) {
    const char *sets[] = { "thp.enabled=madvise", "machine.nodes=2", "machine.cpus_per_node=2",
                           old ? "kernel.version=3.8" : "kernel.version=6.12", NULL };
    Thread *t;
    Machine *m = setup(sets, &t);
    map_rw(m, t, BASE, PMD);
    populate_from(m, t, 0, BASE, 100);
    populate_from(m, t, 2, BASE + 100 * 4096, 412);
    advise(m, t, BASE, PMD, ADV_HUGEPAGE);
    ck_assert_int_eq(khugepaged_collapse(m->k->khugepaged, &m->cpus[0]->kc, t->mm, BASE, FALSE), SCAN_SUCCEED);
    ck_assert_int_eq(collapsed_node(m, t, BASE), old ? 0 : 1);
    machine_free(m);
  }
}
END_TEST

/* ---- the daemon: rate, cursor, CPU ------------------------------------------ */

/* Collapses made in `ms` of simulated time over 32M of written memory. */
static uint64_t collapses_in(const char *pages, const char *sleep, double ms)
{
  const char *sets[] = { "thp.enabled=madvise", pages, sleep, NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  map_rw(m, t, BASE, 16 * PMD);
  populate(m, t, BASE, 16 * PMD, 4096);
  advise(m, t, BASE, 16 * PMD, ADV_HUGEPAGE);
  run_for_ms(m, m->cpus[0]->clock, ms);
  uint64_t n = fixture_ctr(m, CTR_PAGES_COLLAPSED);
  ck_assert_uint_eq(n, fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC));
  machine_free(m);
  return n;
}

START_TEST(test_rate_knobs)
{
  /* 1024 pages a wake: two ranges (1 + 512, then 1 + 512 more). */
  uint64_t small = collapses_in("khugepaged.pages_to_scan=1024", "khugepaged.scan_sleep_millisecs=2", 5);
  uint64_t big = collapses_in("khugepaged.pages_to_scan=4096", "khugepaged.scan_sleep_millisecs=2", 5);
  ck_assert_uint_eq(small % 2, 0);
  ck_assert_uint_gt(small, 0);
  ck_assert_uint_gt(big, small);
  uint64_t fast = collapses_in("khugepaged.pages_to_scan=1024", "khugepaged.scan_sleep_millisecs=1", 10);
  uint64_t slow = collapses_in("khugepaged.pages_to_scan=1024", "khugepaged.scan_sleep_millisecs=5", 10);
  ck_assert_uint_gt(fast, slow);
  ck_assert_uint_le(fast, 16);
}
END_TEST

/* Wakes of the daemon from `from` until `from + ms`, each run when it is due. */
static unsigned wakes_in(Machine *m, uint64_t from, double ms)
{
  Khugepaged *kh = m->k->khugepaged;
  uint64_t end = from + (uint64_t)(ms * m->k->cycles_per_ns * 1e6), now = from;
  unsigned wakes = 0;
  khugepaged_run(kh, now); /* the wake the first mm asked for */
  while (wakes < 1000000 && khugepaged_next_wake(kh) <= end) {
    now = MAX(now, khugepaged_next_wake(kh));
    khugepaged_run(kh, now);
    wakes++;
  }
  return wakes;
}

START_TEST(test_zero_sleep_is_bounded)
{
  /* scan_sleep_millisecs=0 is allowed: with one small mm each wake costs a
   * few hundred cycles, yet the daemon wakes at most once a tick
   * (khugepaged.min_wake_gap_us), not every cycle. */
  static const char *sets[] = { "thp.enabled=always", "khugepaged.scan_sleep_millisecs=0", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  map_rw(m, t, BASE, PMD);
  populate(m, t, BASE, PMD, 64 * 4096);
  unsigned wakes = wakes_in(m, m->cpus[0]->clock, 10);
  ck_assert_uint_ge(wakes, 9);
  ck_assert_uint_le(wakes, 10);
  machine_free(m);
  /* A longer floor: fewer wakes. */
  static const char *slow[] = { "thp.enabled=always", "khugepaged.scan_sleep_millisecs=0",
                                "khugepaged.min_wake_gap_us=5000", NULL };
  m = setup(slow, &t);
  map_rw(m, t, BASE, PMD);
  ck_assert_uint_le(wakes_in(m, m->cpus[0]->clock, 10), 2);
  machine_free(m);
}
END_TEST

START_TEST(test_cursor_and_full_scans)
{
  static const char *sets[] = { "thp.enabled=madvise", "khugepaged.pages_to_scan=512", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Thread *t2 = machine_thread(m, 2, 1, 0);
  /* Two mms, two empty 2M ranges each: every range is SCAN_PMD_NULL. */
  map_rw(m, t, BASE, 2 * PMD);
  advise(m, t, BASE, 2 * PMD, ADV_HUGEPAGE);
  map_rw(m, t2, BASE, 2 * PMD);
  advise(m, t2, BASE, 2 * PMD, ADV_HUGEPAGE);
  /* pages_to_scan=512: a wake ends after its first range.  Wakes 1, 2 take
   * mm 1's ranges, 3 moves on to mm 2 and takes its first, 4 its second,
   * 5 finds mm 2 done: a full scan, and on to mm 1 again. */
  for (int w = 1; w <= 4; w++) {
    wake_once(m);
    ck_assert_uint_eq(fixture_ctr(m, CTR_FULL_SCANS), 0);
    ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_NULL), (uint64_t)w);
  }
  wake_once(m);
  ck_assert_uint_eq(fixture_ctr(m, CTR_FULL_SCANS), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_NULL), 5);
  /* Charged: 1 per visit of an mm, 512 per range. */
  ck_assert_uint_eq(fixture_ctr(m, CTR_KHUGEPAGED_PAGES_SCANNED), 513 + 513 + (1 + 513) + 513 + (1 + 513));
  machine_free(m);

  /* With a budget larger than everything, one wake is one full pass. */
  static const char *big[] = { "thp.enabled=madvise", "khugepaged.pages_to_scan=1000000", NULL };
  m = setup(big, &t);
  t2 = machine_thread(m, 2, 1, 0);
  map_rw(m, t, BASE, 2 * PMD);
  map_rw(m, t, BASE + 4 * PMD, PMD); /* not advised: skipped for 1 */
  advise(m, t, BASE, 2 * PMD, ADV_HUGEPAGE);
  map_rw(m, t2, BASE, 2 * PMD);
  advise(m, t2, BASE, 2 * PMD, ADV_HUGEPAGE);
  wake_once(m);
  ck_assert_uint_eq(fixture_ctr(m, CTR_FULL_SCANS), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_SCAN_PMD_NULL), 4);
  ck_assert_uint_eq(fixture_ctr(m, CTR_KHUGEPAGED_PAGES_SCANNED), (1 + 1024 + 1) + (1 + 1024));
  wake_once(m);
  ck_assert_uint_eq(fixture_ctr(m, CTR_FULL_SCANS), 2);
  machine_free(m);
}
END_TEST

START_TEST(test_cycles_on_khugepaged_cpu)
{
  for (int pin = 0; pin < 2; pin++) {
    const char *sets[] = { "thp.enabled=madvise", "machine.cpus_per_node=2", pin ? "khugepaged.cpu=0" : "khugepaged.cpu=-1",
                           NULL };
    Thread *t;
    Machine *m = setup(sets, &t); /* the workload runs on CPU 0 */
    map_rw(m, t, BASE, PMD);
    populate(m, t, BASE, PMD, 4096);
    advise(m, t, BASE, PMD, ADV_HUGEPAGE);
    Cpu *kcpu = m->cpus[pin ? 0 : 1], *other = m->cpus[pin ? 1 : 0];
    ck_assert_ptr_eq(khugepaged_cpu(m->k->khugepaged), &kcpu->kc);
    uint64_t kclock = kcpu->clock, oclock = other->clock;
    wake_once(m);
    ck_assert_uint_eq(fixture_ctr(m, CTR_THP_COLLAPSE_ALLOC), 1);
    ck_assert_uint_gt(kcpu->ctr.c[CTR_KHUGEPAGED_CYCLES], 0);
    ck_assert_uint_eq(kcpu->ctr.c[CTR_KHUGEPAGED_CYCLES], kcpu->clock - kclock);
    ck_assert_uint_eq(kcpu->ctr.c[CTR_THP_COLLAPSE_ALLOC], 1);
    ck_assert_uint_le(kcpu->ctr.c[CTR_COLLAPSE_CYCLES], kcpu->ctr.c[CTR_KHUGEPAGED_CYCLES]);
    ck_assert_uint_eq(other->ctr.c[CTR_KHUGEPAGED_CYCLES], 0);
    /* khugepaged on CPU 1 shoots down the workload's CPU 0 (one IPI);
     * on CPU 0 it flushes locally and CPU 1 never ran the mm. */
    ck_assert_uint_eq(other->clock, oclock + (pin ? 0 : m->ipi_handler_cycles));
    ck_assert_uint_eq(other->ctr.c[CTR_NR_TLB_REMOTE_FLUSH_RECEIVED], pin ? 0 : 1);
    machine_free(m);
  }
}
END_TEST

/* ---- the engine ------------------------------------------------------------- */

/* Run a text trace: 8M written, advised, then `compute` records. */
static uint64_t engine_collapses(unsigned computes)
{
  static const char *sets[] = { "thp.enabled=madvise", "khugepaged.pages_to_scan=512",
                                "khugepaged.scan_sleep_millisecs=1", NULL };
  Machine *m = fixture_machine("skylake", sets);
  GString *text = g_string_new("mmap 0x7f0000000000 8M rw\n");
  for (uint64_t va = BASE; va < BASE + 8 * MB; va += 4096)
    g_string_append_printf(text, "W %#" G_GINT64_MODIFIER "x 8\n", va);
  g_string_append(text, "madvise 0x7f0000000000 8M hugepage\nR 0x7f0000000000 8\n");
  for (unsigned i = 0; i < computes; i++)
    g_string_append(text, "compute 2M\n"); /* 1M cycles at cpu.cpi 0.5 */
  g_string_append(text, "R 0x7f0000000000 8\n");
  GError *err = NULL;
  TraceSource *src = text_source_from_string("t.txt", text->str, &err);
  ck_assert_no_error(err);
  EngineResult res;
  ck_assert(engine_run(m, src, NULL, &res, &err));
  ck_assert_no_error(err);
  uint64_t n = res.counted.c[CTR_THP_COLLAPSE_ALLOC];
  trace_source_free(src);
  g_string_free(text, TRUE);
  machine_free(m);
  return n;
}

START_TEST(test_engine_wakes_daemon)
{
  /* Without time passing, only the wake at registration (one range). */
  ck_assert_uint_eq(engine_collapses(0), 1);
  /* 20M cycles (~6 ms at 3.4 GHz) with 1 ms sleeps: every range. */
  ck_assert_uint_eq(engine_collapses(20), 4);
}
END_TEST

static Suite *khugepaged_suite(void)
{
  Suite *s = suite_create("khugepaged");
  TCase *tc = tcase_create("register");
  tcase_add_test(tc, test_register_on_mmap_always);
  tcase_add_test(tc, test_register_on_madvise);
  tcase_add_test(tc, test_never_runs_no_daemon);
  tcase_add_test(tc, test_bad_cpu_setting);
  suite_add_tcase(s, tc);
  tc = tcase_create("collapse");
  tcase_add_test(tc, test_take_table);
  tcase_add_test(tc, test_collapse_replaces_ptes);
  tcase_add_test(tc, test_munmap_after_collapse);
  tcase_add_test(tc, test_max_ptes_none_and_bloat);
  tcase_add_test(tc, test_zero_page_ptes_are_holes);
  tcase_add_test(tc, test_refusals_by_reason);
  tcase_add_test(tc, test_shared_rule_in_policy);
  tcase_add_test(tc, test_alloc_fail_and_alloc_sleep);
  tcase_add_test(tc, test_ingens_policy);
  tcase_add_test(tc, test_madvise_collapse);
  tcase_add_test(tc, test_madvise_collapse_results);
  tcase_add_test(tc, test_madvise_collapse_version);
  tcase_add_test(tc, test_target_node);
  tcase_add_test(tc, test_target_node_version);
  suite_add_tcase(s, tc);
  tc = tcase_create("daemon");
  tcase_add_test(tc, test_rate_knobs);
  tcase_add_test(tc, test_zero_sleep_is_bounded);
  tcase_add_test(tc, test_cursor_and_full_scans);
  tcase_add_test(tc, test_cycles_on_khugepaged_cpu);
  tcase_add_test(tc, test_engine_wakes_daemon);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(khugepaged_suite)
