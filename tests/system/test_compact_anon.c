/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_compact_anon.c - compaction migrates the processes' own anonymous
 * pages (kernel/rmap.c, kernel/compaction.c; mm/compaction.c
 * isolate_migratepages_block, mm/migrate.c migrate_pages, mm/rmap.c
 * try_to_migrate, Linux 6.12).  A machine whose memory the workload
 * fragmented itself: its 4K pages fill the zone and every other one is
 * given back, so no 2M block is free.  A THP fault in a MADV_HUGEPAGE VMA
 * then gets its huge page by direct compaction, which moves the workload's
 * pages: each moved page is mapped at its new frame, keeps its reverse-map
 * record, needs no fault when touched again, and its old translation is
 * gone from the TLB.
 */
#include "config.h"
#include "compaction.h"
#include "machine_fixture.h"

#define R1 0x7e0000000000ULL /* the pages that fragment memory */
#define R2 0x7f0000000000ULL /* the THP */
#define MB (UINT64_C(1) << 20)
#define PAGE UINT64_C(4096)

/* 128M, 16M of it reserved: ZONE_DMA (16M), kept from every allocation by
 * a lowmem reserve ratio of 1, and ZONE_DMA32 [32M, 128M), 48 pageblocks.
 * THPs only where madvised, and such a VMA compacts synchronously. */
static const char *const sets[] = { "machine.mem_per_node=128M", "mem.kernel_reserved=16M",
                                    "mem.lowmem_reserve_ratio=1",  "mem.fragmentation=0",
                                    "thp.enabled=madvise",         "thp.defrag=madvise",
                                    NULL };

/* Fill the zone with R1's 4K pages, then give back every other one:
 * returns the pages kept (at R1, R1 + 2 pages, ...). */
static uint64_t fragment(Machine *m, Thread *t)
{
  const BuddyZone *z = physmem_zone(m->k->pm, 0, ZONE_DMA32);
  fixture_syscall(m, t, REC_MMAP, R1, 128 * MB, PROT_R | PROT_W, 0);
  uint64_t n = 0;
  /* Leave some pages for the page tables of R2 (fewer than a 2M block). */
  while (buddy_free_pages(z) > 64) {
    ck_assert_int_eq(fixture_fault(m, t, R1 + n * PAGE, ACC_STORE, NULL), FAULT_MAPPED);
    n++;
  }
  for (uint64_t i = 1; i < n; i += 2)
    fixture_syscall(m, t, REC_MADVISE, R1 + i * PAGE, PAGE, ADV_DONTNEED, 0);
  return (n + 1) / 2;
}

START_TEST(test_thp_fault_migrates_the_workloads_pages)
{
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  const BuddyZone *z = physmem_zone(k->pm, 0, ZONE_DMA32);
  uint64_t kept = fragment(m, t);
  ck_assert_uint_gt(kept, 10000);
  /* The workload's pages fragment every pageblock: no free block of 2M. */
  ck_assert_int_ne(compaction_suit_allocation_order(z, 9, 500), COMPACT_SUCCESS);
  g_autofree uint64_t *before = g_new(uint64_t, kept);
  for (uint64_t i = 0; i < kept; i++) {
    before[i] = pte_pfn(fixture_pte(t, R1 + 2 * i * PAGE));
    ck_assert_uint_ne(before[i], 0);
  }
  /* Touch them all: their translations are in the TLB (as many as fit). */
  for (uint64_t i = 0; i < kept; i++)
    fixture_access(m, t, ACC_LOAD, R1 + 2 * i * PAGE);

  fixture_syscall(m, t, REC_MMAP, R2, 4 * MB, PROT_R | PROT_W, 0);
  fixture_syscall(m, t, REC_MADVISE, R2, 4 * MB, ADV_HUGEPAGE, 0);
  uint64_t flushes = fixture_ctr(m, CTR_TLB_FLUSH_PAGES);
  ck_assert_int_eq(fixture_fault(m, t, R2, ACC_STORE, NULL), FAULT_MAPPED);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_FAULT_ALLOC), 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_THP_FAULT_FALLBACK), 0);
  ck_assert_uint_ge(fixture_ctr(m, CTR_COMPACT_SUCCESS), 1);
  uint64_t migrated = fixture_ctr(m, CTR_COMPACT_MIGRATED);
  ck_assert_uint_ge(migrated, 1);
  ck_assert_uint_eq(fixture_ctr(m, CTR_PGMIGRATE_SUCCESS), migrated);
  ck_assert_uint_ge(fixture_ctr(m, CTR_COMPACT_ISOLATED), 2 * migrated);
  ck_assert_uint_gt(fixture_ctr(m, CTR_COMPACT_MIGRATE_SCANNED), 0);
  ck_assert_uint_gt(fixture_ctr(m, CTR_COMPACT_FREE_SCANNED), 0);
  /* Each moved page was shot down from the TLB (try_to_migrate_one). */
  ck_assert_uint_eq(fixture_ctr(m, CTR_TLB_FLUSH_PAGES) - flushes, migrated);

  uint64_t moved = 0, moved_va = 0;
  for (uint64_t i = 0; i < kept; i++) {
    uint64_t va = R1 + 2 * i * PAGE, e = fixture_pte(t, va);
    ck_assert(e & PTE_P);
    uint64_t pfn = pte_pfn(e);
    if (pfn == before[i])
      continue;
    moved++;
    moved_va = va;
    ck_assert(!buddy_is_free(z, pfn));
    ck_assert(buddy_is_free(z, before[i]) || !physmem_rmap_get(k->pm, before[i], &(uint32_t){ 0 }, &(uint64_t){ 0 }));
    uint32_t pid;
    uint64_t rva;
    ck_assert(physmem_rmap_get(k->pm, pfn, &pid, &rva));
    ck_assert_uint_eq(pid, 1);
    ck_assert_uint_eq(rva, va);
  }
  ck_assert_uint_eq(moved, migrated);
  fixture_check_buddy(k);

  /* A moved page: no fault, and a TLB miss whose walk finds the new frame. */
  uint64_t faults = fixture_ctr(m, CTR_PAGE_FAULTS), misses = fixture_ctr(m, CTR_DTLB_LOAD_MISSES);
  fixture_access(m, t, ACC_LOAD, moved_va);
  ck_assert_uint_eq(fixture_ctr(m, CTR_PAGE_FAULTS), faults);
  ck_assert_uint_eq(fixture_ctr(m, CTR_DTLB_LOAD_MISSES), misses + 1);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, moved_va, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.pfn, pte_pfn(fixture_pte(t, moved_va)));
  machine_free(m);
}
END_TEST

/* A stale record (the page freed and its frame reused by a page table, or
 * a page whose mapping moved) is checked against the page table: a page
 * the record does not describe is not isolated, so compaction gives the
 * pageblock up as before. */
START_TEST(test_record_follows_the_page)
{
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  fixture_syscall(m, t, REC_MMAP, R1, 4 * MB, PROT_R | PROT_W, 0);
  ck_assert_int_eq(fixture_fault(m, t, R1, ACC_STORE, NULL), FAULT_MAPPED);
  uint64_t pfn = pte_pfn(fixture_pte(t, R1));
  uint32_t pid;
  uint64_t va;
  ck_assert(physmem_rmap_get(k->pm, pfn, &pid, &va));
  ck_assert_uint_eq(pid, 1);
  ck_assert_uint_eq(va, R1);
  ck_assert(k->migrator.isolate(k->migrator.ctx, pfn, 0));
  /* A read maps the zero page: no record for it. */
  ck_assert_int_eq(fixture_fault(m, t, R1 + PAGE, ACC_LOAD, NULL), FAULT_MAPPED);
  ck_assert(!physmem_rmap_get(k->pm, k->zero_pfn, &pid, &va));
  ck_assert(!k->migrator.isolate(k->migrator.ctx, k->zero_pfn, 0));
  /* Freed: the record goes with the page. */
  fixture_syscall(m, t, REC_MADVISE, R1, PAGE, ADV_DONTNEED, 0);
  ck_assert(!physmem_rmap_get(k->pm, pfn, &pid, &va));
  /* A record the page table does not back is not trusted. */
  physmem_rmap_set(k->pm, pfn, 1, R1 + 2 * PAGE);
  ck_assert(!k->migrator.isolate(k->migrator.ctx, pfn, 0));
  machine_free(m);
}
END_TEST

static Suite *compact_anon_suite(void)
{
  Suite *s = suite_create("compact_anon");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_thp_fault_migrates_the_workloads_pages);
  tcase_add_test(tc, test_record_follows_the_page);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(compact_anon_suite)
