/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the x86-64 translation hardware: canonical limits, walk
 * references per leaf size, paging-structure caches, STLB fills and the page
 * sizes each level holds, A/D bits, permission checks, PCID isolation;
 * nested paging and shadow paging.
 */
#include "config.h"
#include <glib/gstdio.h>
#include "events.h"
#include "machine_fixture.h"
#include "x86_64/x86_64.h"

#define VA 0x00007f1234567abcULL

/* Map va's 4K page (or a 2M/1G leaf at level 2/3) to pfn with flags. */
static void map_leaf(Thread *t, uint64_t va, unsigned level, uint64_t pfn, uint64_t flags)
{
  uint64_t e = pte_make(pfn, PTE_P | PTE_US | flags | (level > 1 ? PTE_PS : 0));
  ck_assert(pgtable_set(&t->mm->pt, va, level, e, NULL));
}

START_TEST(test_canonical_limits)
{
  ck_assert_uint_eq(x86_64_user_limit(4), 1ULL << 47);
  ck_assert_uint_eq(x86_64_user_limit(5), 1ULL << 56);
  Machine *m = fixture_machine("skylake", NULL);
  Thread *t = fixture_thread(m, 1);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, 1ULL << 47, ACC_LOAD, &x), XLAT_NONCANONICAL);
  ck_assert_int_eq(fixture_xlat(m, t, (1ULL << 47) - 4096, ACC_LOAD, &x), XLAT_NOT_PRESENT);
  machine_free(m);
  const char *la57[] = { "x86.paging_levels=5", NULL };
  m = fixture_machine("skylake", la57);
  t = fixture_thread(m, 1);
  ck_assert_int_eq(fixture_xlat(m, t, 1ULL << 47, ACC_LOAD, &x), XLAT_NOT_PRESENT);
  ck_assert_int_eq(fixture_xlat(m, t, 1ULL << 56, ACC_LOAD, &x), XLAT_NONCANONICAL);
  machine_free(m);
}
END_TEST

/* Cold walk references: 4 for 4K, 3 for 2M, 2 for 1G; 5 for 4K with LA57. */
static void check_refs(const char *const *sets, unsigned level, unsigned want_refs)
{
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  map_leaf(t, VA & ~((1ULL << (12 + 9 * (level - 1))) - 1), level, 0x40000, PTE_RW);
  Xlat x;
  Cpu *cpu = m->cpus[0];
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS], want_refs);
  ck_assert_uint_eq(x.size, level - 1);
  ck_assert_uint_eq(x.pfn, 0x40000);
  machine_free(m);
}

START_TEST(test_walk_refs_per_size)
{
  check_refs(NULL, 1, 4);
  check_refs(NULL, 2, 3);
  check_refs(NULL, 3, 2);
  const char *la57[] = { "x86.paging_levels=5", NULL };
  check_refs(la57, 1, 5);
}
END_TEST

START_TEST(test_pwc_shortens_walks)
{
  Machine *m = fixture_machine("skylake", NULL);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  map_leaf(t, VA, 1, 0x50000, PTE_RW);
  map_leaf(t, VA + 4096, 1, 0x50001, PTE_RW);        /* same PT page: PDE cache */
  map_leaf(t, VA + (1ULL << 21), 1, 0x50002, PTE_RW); /* same PD page: PDPTE cache */
  map_leaf(t, VA + (1ULL << 30), 1, 0x50003, PTE_RW); /* same PDPT page: PML4E cache */
  Xlat x;
  uint64_t r0 = cpu->ctr.c[CTR_WALK_REFS];
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS] - r0, 4);
  r0 = cpu->ctr.c[CTR_WALK_REFS];
  ck_assert_int_eq(fixture_xlat(m, t, VA + 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS] - r0, 1);
  r0 = cpu->ctr.c[CTR_WALK_REFS];
  ck_assert_int_eq(fixture_xlat(m, t, VA + (1ULL << 21), ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS] - r0, 2);
  r0 = cpu->ctr.c[CTR_WALK_REFS];
  ck_assert_int_eq(fixture_xlat(m, t, VA + (1ULL << 30), ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS] - r0, 3);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PWC_HITS], 3);
  /* A context flush drops the walk caches too. */
  cpu_flush_asid(cpu, t->mm->asid);
  r0 = cpu->ctr.c[CTR_WALK_REFS];
  ck_assert_int_eq(fixture_xlat(m, t, VA + 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS] - r0, 4);
  X86PwcInfo info;
  x86_64_pwc_info(cpu, &info);
  ck_assert_uint_eq(info.entries[2], 32);
  ck_assert_uint_eq(info.entries[5], 0); /* no PML5 cache with 4 levels */
  machine_free(m);
}
END_TEST

/* Walk references of one translation of a new page (page i of 2M region
 * `region` above `base`, so that the STLB misses and the walk runs): 1
 * when the PDE cache holds the region. */
static uint64_t pde_probe(Machine *m, Thread *t, uint64_t base, unsigned region, unsigned i)
{
  uint64_t va = base + ((uint64_t)region << 21) + ((uint64_t)i << 12);
  map_leaf(t, va, 1, 0x60000 + i, PTE_RW);
  Xlat x;
  uint64_t r0 = m->cpus[0]->ctr.c[CTR_WALK_REFS];
  ck_assert_int_eq(fixture_xlat(m, t, va, ACC_LOAD, &x), XLAT_OK);
  return m->cpus[0]->ctr.c[CTR_WALK_REFS] - r0;
}

/* The PDE cache keeps true LRU order through evictions, hits that make an
 * entry the most recent, and a flush that keeps every entry: walk
 * references tell a PDE hit (1) from a miss (2, the PDPTE cache hits). */
START_TEST(test_pwc_lru_order)
{
  const char *sets[] = { "pwc.pde_entries=3", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  /* 2M regions, in order of access, and whether the PDE cache holds each
   * (LRU of 3): fills 0 1 2, hit 0, fills 3 (drops 1) and 4 (drops 2),
   * hit 0, miss 2 (drops 3), hit 4, miss 3 (drops 0), hit 2, miss 0. */
  static const struct { unsigned region; gboolean hit; } seq[] = {
    { 0, FALSE }, { 1, FALSE }, { 2, FALSE }, { 0, TRUE }, { 3, FALSE }, { 4, FALSE },
    { 0, TRUE }, { 2, FALSE }, { 4, TRUE }, { 3, FALSE }, { 2, TRUE }, { 0, FALSE },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(seq); i++) {
    if (i == 8)
      cpu_flush_asid(cpu, t->mm->asid + 1); /* another address space's: keeps every entry */
    uint64_t refs = pde_probe(m, t, 0x7f0000000000ULL, seq[i].region, i);
    /* the first walk finds no cache at all: 4 references */
    ck_assert_msg(refs == (seq[i].hit ? 1u : 2u) || (i == 0 && refs == 4),
                  "access %u (region %u): %" G_GUINT64_FORMAT " walk references", i, seq[i].region, refs);
  }
  X86PwcInfo info;
  x86_64_pwc_info(cpu, &info);
  ck_assert_uint_eq(info.valid[2], 3);
  machine_free(m);
}
END_TEST

/* The PDE cache's LRU order when its entries share a hash chain (regions
 * 256 apart: the same low tag bits), evicting the chain's last, middle and
 * first entry. */
START_TEST(test_pwc_lru_same_bucket)
{
  const char *sets[] = { "pwc.pde_entries=3", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  /* LRU of 3 over regions 0, 1, 2, 3 (x 256): fills 0 1 2, hit 0, miss 3
   * (drops 1), miss 1 (drops 2), hit 0, miss 2 (drops 3), hit 1, miss 3
   * (drops 0), miss 0 (drops 2), hit 3, hit 1. */
  static const struct { unsigned region; gboolean hit; } seq[] = {
    { 0, FALSE }, { 1, FALSE }, { 2, FALSE }, { 0, TRUE }, { 3, FALSE }, { 1, FALSE }, { 0, TRUE },
    { 2, FALSE }, { 1, TRUE }, { 3, FALSE }, { 0, FALSE }, { 3, TRUE }, { 1, TRUE },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(seq); i++) {
    uint64_t refs = pde_probe(m, t, 0x7f0000000000ULL, seq[i].region * 256, i);
    ck_assert_msg(seq[i].hit ? refs == 1 : refs >= 2, "access %u (region %u): %" G_GUINT64_FORMAT " walk references",
                  i, seq[i].region, refs);
  }
  X86PwcInfo info;
  x86_64_pwc_info(m->cpus[0], &info);
  ck_assert_uint_eq(info.valid[2], 3);
  machine_free(m);
}
END_TEST

/* A flush of one address space's entries keeps the others in their LRU
 * order: two processes fill the PDE cache alternately, the first one's are
 * flushed, and the second one's then leave in the order of their use. */
START_TEST(test_pwc_flush_keeps_order)
{
  const char *sets[] = { "pwc.pde_entries=4", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Cpu *cpu = m->cpus[0];
  Thread *a = fixture_thread(m, 1);
  Thread *b = fixture_thread(m, 2);
  ck_assert_uint_ne(a->mm->asid, b->mm->asid);
  const uint64_t base = 0x7f0000000000ULL;
  unsigned i = 0;
  /* b: regions 0 1, a: 0 1 (same tags but another PCID), so the cache
   * holds b0 b1 a0 a1; b uses 0 again: b1 is now b's oldest. */
  cpu->cur_asid = b->mm->asid;
  ck_assert_uint_ge(pde_probe(m, b, base, 0, i++), 2);
  ck_assert_uint_ge(pde_probe(m, b, base, 1, i++), 2);
  cpu->cur_asid = a->mm->asid;
  ck_assert_uint_ge(pde_probe(m, a, base, 0, i++), 2);
  ck_assert_uint_ge(pde_probe(m, a, base, 1, i++), 2);
  cpu->cur_asid = b->mm->asid;
  ck_assert_uint_eq(pde_probe(m, b, base, 0, i++), 1);
  cpu_flush_asid(cpu, a->mm->asid);
  X86PwcInfo info;
  x86_64_pwc_info(cpu, &info);
  ck_assert_uint_eq(info.valid[2], 2);
  /* Three new regions of b: the first two fill the free entries, the
   * third drops b1 (b0 was used since), so b0 still hits and b1 misses. */
  ck_assert_uint_ge(pde_probe(m, b, base, 2, i++), 2);
  ck_assert_uint_ge(pde_probe(m, b, base, 3, i++), 2);
  ck_assert_uint_ge(pde_probe(m, b, base, 4, i++), 2);
  ck_assert_uint_eq(pde_probe(m, b, base, 0, i++), 1);
  ck_assert_uint_ge(pde_probe(m, b, base, 1, i++), 2);
  cpu->cur_asid = a->mm->asid;
  ck_assert_uint_ge(pde_probe(m, a, base, 0, i++), 2); /* flushed */
  machine_free(m);
}
END_TEST

START_TEST(test_stlb_fill_and_sizes)
{
  Machine *m = fixture_machine("skylake", NULL);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  map_leaf(t, VA & ~((1ULL << 21) - 1), 2, 0x60000, PTE_RW);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  ck_assert_int_eq(fixture_xlat(m, t, VA + 8192, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0); /* Skylake's STLB holds 2M pages */
  ck_assert_uint_eq(cpu->ctr.c[CTR_STLB_HITS], 1);
  ck_assert_uint_eq(x.cycles, 9);
  machine_free(m);

  /* Westmere's STLB holds 4K pages only: a 2M page walks again. */
  m = fixture_machine("westmere", NULL);
  t = fixture_thread(m, 1);
  map_leaf(t, VA & ~((1ULL << 21) - 1), 2, 0x60000, PTE_RW);
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_int_eq(fixture_xlat(m, t, VA + 8192, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  machine_free(m);
}
END_TEST

/* A 4K page's walk fills the second level whole: the L2 ITLB for a fetch
 * where there is one (zen4), whose entry a load does not find in the STLB;
 * the STLB for a fetch elsewhere (skylake), where a load then finds it; and
 * nothing, with no walk saved, without a second level. */
START_TEST(test_second_level_4k_fill)
{
  Xlat x;
  Machine *m = fixture_machine("zen4", NULL);
  Thread *t = fixture_thread(m, 1);
  map_leaf(t, VA, 1, 0x70000, PTE_RW);
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_IFETCH, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  ck_assert_int_eq(fixture_xlat(m, t, VA + 64, ACC_IFETCH, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0); /* the L2 ITLB */
  ck_assert_uint_eq(x.pfn, 0x70000);
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1); /* not in the STLB */
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0);
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_STLB_HITS], 2);
  machine_free(m);

  m = fixture_machine("skylake", NULL);
  t = fixture_thread(m, 1);
  map_leaf(t, VA, 1, 0x70000, PTE_RW);
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_IFETCH, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0); /* the STLB holds the fetch's page */
  ck_assert_uint_eq(x.pfn, 0x70000);
  ck_assert_uint_eq(x.size, X86_4K);
  machine_free(m);

  const char *none[] = { "tlb.stlb_entries=0", NULL };
  m = fixture_machine("skylake", none);
  t = fixture_thread(m, 1);
  map_leaf(t, VA, 1, 0x70000, PTE_RW);
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(fixture_xlat(m, t, VA, i ? ACC_IFETCH : ACC_LOAD, &x), XLAT_OK);
    ck_assert_uint_eq(x.walks, 1);
  }
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_STLB_HITS], 0);
  machine_free(m);
}
END_TEST

START_TEST(test_accessed_dirty_and_permissions)
{
  Machine *m = fixture_machine("skylake", NULL);
  Thread *t = fixture_thread(m, 1);
  map_leaf(t, VA, 1, 0x70000, PTE_RW | PTE_NX);
  map_leaf(t, VA + 4096, 1, 0x70001, 0); /* read-only */
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, VA, &level, &idx);
  ck_assert_uint_eq(level, 1);
  ck_assert(n->e[idx] & PTE_A);
  ck_assert(!(n->e[idx] & PTE_D));
  ck_assert(!(x.flags & TLBF_D));
  ck_assert(t->mm->pt.root->e[pgtable_index(&t->mm->pt.g, 4, VA)] & PTE_A);
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_STORE, &x), XLAT_OK);
  ck_assert(n->e[idx] & PTE_D);
  ck_assert(x.flags & TLBF_D);
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_IFETCH, &x), XLAT_PROTECTION);     /* NX */
  ck_assert_int_eq(fixture_xlat(m, t, VA + 4096, ACC_STORE, &x), XLAT_PROTECTION); /* RO */
  ck_assert_int_eq(fixture_xlat(m, t, VA + 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_int_eq(fixture_xlat(m, t, VA + 8192, ACC_LOAD, &x), XLAT_NOT_PRESENT);
  machine_free(m);
}
END_TEST

START_TEST(test_pcid_isolation)
{
  Machine *m = fixture_machine("skylake", NULL);
  Thread *a = fixture_thread(m, 1);
  map_leaf(a, VA, 1, 0x80000, PTE_RW);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, a, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.pfn, 0x80000);
  Thread *b = fixture_thread(m, 2);
  ck_assert_uint_ne(a->mm->asid, b->mm->asid);
  map_leaf(b, VA, 1, 0x90000, PTE_RW);
  ck_assert_int_eq(fixture_xlat(m, b, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1); /* a's STLB entry is not b's */
  ck_assert_uint_eq(x.pfn, 0x90000);
  /* Back to a: its entry survived in the STLB. */
  fixture_thread(m, 1);
  ck_assert_int_eq(fixture_xlat(m, a, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0);
  ck_assert_uint_eq(x.pfn, 0x80000);
  machine_free(m);
}
END_TEST

START_TEST(test_walk_refs_use_caches)
{
  Machine *m = fixture_machine("skylake", NULL);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  map_leaf(t, VA, 1, 0xa0000, PTE_RW);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS_DRAM], 4); /* cold */
  cpu_flush_all(cpu);
  uint64_t l1 = cpu->ctr.c[CTR_WALK_REFS_L1];
  ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS_L1] - l1, 4); /* entries now in L1D */
  /* 4 L1 hits at 4 cycles plus the overhead. */
  ck_assert_uint_eq(x.walk_cycles, 4 * 4 + (uint32_t)settings_int(m->s, SET_WALK_OVERHEAD_CYCLES));
  machine_free(m);
}
END_TEST

/* tlb.coalesce: four 4K pages of an aligned group, physically contiguous
 * from a frame aligned to four, with the same permission and dirty bits,
 * take one STLB entry; a neighbour then hits it; an invalidation of any
 * page of the group drops it; any difference keeps 4K entries. */
START_TEST(test_coalesced_entries)
{
  const char *sets[] = { "tlb.coalesce=true", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  cpu->cur_asid = t->mm->asid;
  const uint64_t base = 0x7f0000000000ULL;
  /* Accessed, as the fault handler maps pages. */
  for (unsigned i = 0; i < 4; i++) /* group 0: frames 0x40000.. */
    map_leaf(t, base + i * 4096, 1, 0x40000 + i, PTE_RW | PTE_A);
  for (unsigned i = 0; i < 4; i++) /* group 1: frame 0x50001.., not aligned */
    map_leaf(t, base + (4 + i) * 4096, 1, 0x50001 + i, PTE_RW | PTE_A);
  for (unsigned i = 0; i < 4; i++) /* group 2: contiguous, one page read-only */
    map_leaf(t, base + (8 + i) * 4096, 1, 0x60000 + i, i == 2 ? PTE_A : PTE_RW | PTE_A);
  for (unsigned i = 0; i < 4; i++) /* group 3: contiguous, one page never accessed */
    map_leaf(t, base + (12 + i) * 4096, 1, 0x70000 + i, i == 3 ? PTE_RW : PTE_RW | PTE_A);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, base + 2 * 4096 + 8, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  ck_assert_uint_eq(x.pfn, 0x40002);
  for (unsigned i = 0; i < 4; i++) { /* every page of the group hits, with its own frame */
    ck_assert_int_eq(fixture_xlat(m, t, base + i * 4096, ACC_LOAD, &x), XLAT_OK);
    ck_assert_uint_eq(x.walks, 0);
    ck_assert_uint_eq(x.size, 0);
    ck_assert_uint_eq(x.pfn, 0x40000 + i);
  }
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_STLB_HITS], 4);
  /* A store needs the dirty bit the entry lacks: a walk sets it on its page
   * alone, so the group differs and that page is held at 4K. */
  ck_assert_int_eq(fixture_xlat(m, t, base + 4096, ACC_STORE, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  ck_assert_int_eq(fixture_xlat(m, t, base + 4096, ACC_STORE, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0);
  /* Invalidating page 3 drops the group's entry: page 0 walks again. */
  m->arch->flush_page(cpu, t->mm->asid, base + 3 * 4096);
  ck_assert_int_eq(fixture_xlat(m, t, base, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  /* Not aligned, not alike, or not all accessed (the walk of a page sets
   * its own bit, so group 3 coalesces at the walk of its fourth page, and
   * not before): 4K entries, one walk per page. */
  uint64_t walks = cpu->ctr.c[CTR_PAGE_WALKS];
  for (unsigned i = 4; i < 15; i++)
    ck_assert_int_eq(fixture_xlat(m, t, base + i * 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], walks + 11);
  ck_assert_int_eq(fixture_xlat(m, t, base + 15 * 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  ck_assert_int_eq(fixture_xlat(m, t, base + 12 * 4096 + 16, ACC_LOAD, &x), XLAT_OK); /* its 4K entry */
  ck_assert_uint_eq(x.walks, 0);
  /* Fetches neither probe nor fill coalesced entries: page 15 is held only
   * by group 3's coalesced entry, which a load hits and a fetch walks past. */
  ck_assert_int_eq(fixture_xlat(m, t, base + 15 * 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0);
  ck_assert_int_eq(fixture_xlat(m, t, base + 15 * 4096, ACC_IFETCH, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  machine_free(m);
  /* Off (the default on Intel presets): one walk per page. */
  m = fixture_machine("skylake", NULL);
  t = fixture_thread(m, 1);
  m->cpus[0]->cur_asid = t->mm->asid;
  for (unsigned i = 0; i < 4; i++)
    map_leaf(t, base + i * 4096, 1, 0x40000 + i, PTE_RW | PTE_A);
  for (unsigned i = 0; i < 4; i++)
    ck_assert_int_eq(fixture_xlat(m, t, base + i * 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_PAGE_WALKS], 4);
  machine_free(m);
}
END_TEST

/* The counters of coalescing, as AMD's ls_l1_d_tlb_miss umasks count:
 * stlb_coalesced_fills a walk whose refill is a coalesced entry,
 * stlb_coalesced_hits an L1 miss that hits one (and counts in stlb_hits
 * too).  On zen4 (coalescing on), group 0 coalesces, group 1 (not aligned)
 * does not:
 *   load page 2           walk, coalesced refill      walks 1  fills 1  hits 0
 *   load pages 0..3       four coalesced hits                          hits 4
 *   load pages 4..7       four walks, 4K refills      walks 5
 *   load page 4           a 4K STLB hit                                 (stlb_hits 5)
 *   fetch page 1          walks past it (data only)   walks 6
 *   store page 0          clean entry: walks, and the
 *                         dirty bit of page 0 alone
 *                         splits the group: 4K        walks 7
 * With tlb.coalesce=false the same steps count neither. */
static void coalesced_counter_steps(Machine *m, Thread *t)
{
  const uint64_t base = 0x7f0000000000ULL;
  m->cpus[0]->cur_asid = t->mm->asid;
  for (unsigned i = 0; i < 4; i++) {
    map_leaf(t, base + i * 4096, 1, 0x40000 + i, PTE_RW | PTE_A);
    map_leaf(t, base + (4 + i) * 4096, 1, 0x50001 + i, PTE_RW | PTE_A);
  }
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, base + 2 * 4096, ACC_LOAD, &x), XLAT_OK);
  for (unsigned i = 0; i < 8; i++)
    ck_assert_int_eq(fixture_xlat(m, t, base + i * 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_int_eq(fixture_xlat(m, t, base + 4 * 4096, ACC_LOAD, &x), XLAT_OK);
  ck_assert_int_eq(fixture_xlat(m, t, base + 1 * 4096, ACC_IFETCH, &x), XLAT_OK);
  ck_assert_int_eq(fixture_xlat(m, t, base, ACC_STORE, &x), XLAT_OK);
}

START_TEST(test_coalesced_counters)
{
  Machine *m = fixture_machine("zen4", NULL);
  ck_assert(settings_bool(m->s, SET_TLB_COALESCE));
  Thread *t = fixture_thread(m, 1);
  const uint64_t *c = m->cpus[0]->ctr.c;
  coalesced_counter_steps(m, t);
  ck_assert_uint_eq(c[CTR_STLB_COALESCED_FILLS], 1);
  ck_assert_uint_eq(c[CTR_STLB_COALESCED_HITS], 4);
  ck_assert_uint_eq(c[CTR_STLB_HITS], 5);
  ck_assert_uint_eq(c[CTR_PAGE_WALKS], 7);
  machine_free(m);

  const char *off[] = { "tlb.coalesce=false", NULL };
  m = fixture_machine("zen4", off);
  t = fixture_thread(m, 1);
  c = m->cpus[0]->ctr.c;
  coalesced_counter_steps(m, t);
  ck_assert_uint_eq(c[CTR_STLB_COALESCED_FILLS], 0);
  ck_assert_uint_eq(c[CTR_STLB_COALESCED_HITS], 0);
  ck_assert_uint_eq(c[CTR_PAGE_WALKS], 10); /* every page of group 0 walks, and page 0 for the store */
  machine_free(m);
}
END_TEST

/* ---- nested paging (virt.nested) ------------------------------------------ */

/* Walk references of one translation of va (guest and host), and the
 * Xlat's page size. */
static uint64_t nested_refs(Machine *m, Thread *t, uint64_t va, unsigned *size)
{
  Cpu *cpu = m->cpus[0];
  uint64_t r0 = cpu->ctr.c[CTR_WALK_REFS];
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, va, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 1);
  if (size)
    *size = x.size;
  return cpu->ctr.c[CTR_WALK_REFS] - r0;
}

/* A 4K guest page at DATA_PFN (512M, inside the fixture's 1G of guest
 * memory; the guest's tables are elsewhere). */
#define DATA_PFN 0x20000

/* Without the host-dimension caches a cold 2D walk is the textbook one:
 * 4 guest levels x (host walk + the guest entry) + the host walk of the
 * final guest-physical address, 4 x (4 + 1) + 4 = 24 with 4K host pages,
 * 4 x (3 + 1) + 3 = 19 with 2M, 4 x (2 + 1) + 2 = 14 with 1G. */
static void check_nested_cold(const char *host_size, uint64_t want)
{
  g_autofree char *hs = g_strdup_printf("virt.host_page_size=%s", host_size);
  const char *sets[] = { "virt.nested=true", hs, "virt.ntlb_entries=0", "virt.host_pwc_pde_entries=0",
                         "virt.host_pwc_pdpt_entries=0", "virt.host_pwc_pml4_entries=0", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  map_leaf(t, VA, 1, DATA_PFN, PTE_RW);
  map_leaf(t, VA + 4096, 1, DATA_PFN + 1, PTE_RW);
  ck_assert_uint_eq(nested_refs(m, t, VA, NULL), want);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_GUEST_REFS], 4);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_HOST_REFS], want - 4);
  ck_assert_uint_eq(cpu->ctr.c[CTR_NTLB_MISSES], 5);
  ck_assert_uint_eq(cpu->ctr.c[CTR_NTLB_HITS], 0);
  /* The next page: the guest PDE cache gives the PT's host-physical
   * address (no host walk for it), one guest reference and the data's
   * host walk, uncached. */
  ck_assert_uint_eq(nested_refs(m, t, VA + 4096, NULL), 1 + (want - 4) / 5);
  machine_free(m);
}

/* The --events line of each walk (events.walk_sample=1) of loads at
 * va[0..n-1], on a skylake with `sets`: the "walk" lines of the log. */
static char **walk_events(const char *const *sets, const uint64_t *va, unsigned n)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, "skylake", &err));
  ck_assert(settings_set(s, "machine.mem_per_node", "1G", "test", &err));
  ck_assert(settings_set(s, "events.walk_sample", "1", "test", &err));
  fixture_settings_apply(s, sets);
  g_autofree char *dir = g_dir_make_tmp("mmusim-ev-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "events.txt", NULL);
  EventLog *ev = events_open(path, &err);
  ck_assert_msg(ev, "%s", err ? err->message : "");
  Machine *m = machine_new("skylake", s, ev, &err);
  ck_assert_msg(m, "%s", err ? err->message : "");
  Thread *t = fixture_thread(m, 1);
  for (unsigned i = 0; i < n; i++) {
    map_leaf(t, va[i], 1, DATA_PFN + i, PTE_RW);
    fixture_access(m, t, ACC_LOAD, va[i]);
  }
  ck_assert(events_finish(ev, &err));
  m->ev = m->k->ev = NULL;
  machine_free(m);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  g_remove(path);
  g_rmdir(dir);
  GPtrArray *walks = g_ptr_array_new();
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (int i = 0; lines[i]; i++)
    if (strstr(lines[i], " walk va="))
      g_ptr_array_add(walks, g_strdup(lines[i]));
  g_ptr_array_add(walks, NULL);
  return (char **)g_ptr_array_free(walks, FALSE);
}

/* A sampled walk's event gives its own references, split under nested
 * paging into the guest's and the host's with the nested TLB's hits and
 * misses: the cold 2D walk's 24 (4 guest, 20 host, 5 nested-TLB misses),
 * then the next page's 5 (the guest PDE cache gives the PT's host-physical
 * address: 1 guest reference and the data's host walk).  Without nested
 * paging the line has the references and no split. */
START_TEST(test_walk_event_split)
{
  const uint64_t va[] = { VA, VA + 4096 };
  const char *nested[] = { "virt.nested=true", "virt.host_page_size=4K", "virt.ntlb_entries=0",
                           "virt.host_pwc_pde_entries=0", "virt.host_pwc_pdpt_entries=0", "virt.host_pwc_pml4_entries=0",
                           NULL };
  g_auto(GStrv) w = walk_events(nested, va, 2);
  ck_assert_uint_eq(g_strv_length(w), 2);
  ck_assert_msg(g_str_has_suffix(w[0], " refs=24 guest_refs=4 host_refs=20 ntlb_hits=0 ntlb_misses=5"), "%s", w[0]);
  ck_assert_msg(g_str_has_suffix(w[1], " refs=5 guest_refs=1 host_refs=4 ntlb_hits=0 ntlb_misses=1"), "%s", w[1]);
  /* The line keeps its older fields first: readers of them see no change. */
  ck_assert_msg(strstr(w[0], " walk va=0x7f1234567abc status=ok size=4K cycles=") != NULL, "%s", w[0]);
  const char *native[] = { "virt.nested=false", NULL };
  g_auto(GStrv) n = walk_events(native, va, 1);
  ck_assert_uint_eq(g_strv_length(n), 1);
  ck_assert_msg(g_str_has_suffix(n[0], " refs=4"), "%s", n[0]);
  ck_assert_ptr_null(strstr(n[0], "guest_refs"));
}
END_TEST

START_TEST(test_nested_cold_walk)
{
  check_nested_cold("4K", 24);
  check_nested_cold("2M", 19);
  check_nested_cold("1G", 14);
}
END_TEST

/* virt.nested=false: exactly the native references, and no host counts. */
START_TEST(test_nested_off_is_native)
{
  const char *sets[] = { "virt.nested=false", "virt.host_page_size=4K", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  map_leaf(t, VA, 1, DATA_PFN, PTE_RW);
  ck_assert_uint_eq(nested_refs(m, t, VA, NULL), 4);
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_WALK_GUEST_REFS], 0);
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_WALK_HOST_REFS], 0);
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_NTLB_MISSES], 0);
  machine_free(m);
}
END_TEST

/* With the default caches (nested TLB, host paging-structure caches) the
 * walk's own host walks share the upper host levels: see the steps below. */
START_TEST(test_nested_caches)
{
  const char *sets[] = { "virt.nested=true", "virt.host_page_size=4K", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  map_leaf(t, VA, 1, DATA_PFN, PTE_RW);
  map_leaf(t, VA + 4096, 1, DATA_PFN + 1, PTE_RW);
  map_leaf(t, VA + 8192, 1, DATA_PFN, PTE_RW); /* the first page's frame again */
  uint64_t root = t->mm->pt.root->pfn;
  PtNode *pt = t->mm->pt.root;
  for (unsigned l = 4; l > 1; l--)
    pt = pt->child[(VA >> (3 + 9 * l)) & 511];
  /* The guest's four tables share one host 2M region, away from the
   * data's (asserted, the counts below rely on it): the root's host walk
   * is 4 references and fills the host PML4E, PDPTE and PDE caches; the
   * three tables below hit the host PDE cache (1 reference each); the
   * data's gPA hits the host PDPTE cache only (2): 4 + 1 + 1 + 1 + 2
   * host and 4 guest references, 13. */
  ck_assert_uint_eq(root >> 9, pt->pfn >> 9);
  ck_assert_uint_ne(root >> 9, (uint64_t)DATA_PFN >> 9);
  ck_assert_uint_eq(root >> 18, (uint64_t)DATA_PFN >> 18);
  ck_assert_uint_eq(nested_refs(m, t, VA, NULL), 13);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HOST_PWC_HITS], 4);
  ck_assert_uint_eq(cpu->ctr.c[CTR_NTLB_MISSES], 5);
  /* A nearby page: the guest PDE cache, then the data's host walk hits
   * the host PDE cache: 1 + 1. */
  ck_assert_uint_eq(nested_refs(m, t, VA + 4096, NULL), 2);
  ck_assert_uint_eq(cpu->ctr.c[CTR_NTLB_HITS], 0);
  /* The first page's frame through another page: the nested TLB holds
   * its gPA: the guest PTE alone. */
  ck_assert_uint_eq(nested_refs(m, t, VA + 8192, NULL), 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_NTLB_HITS], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS], cpu->ctr.c[CTR_WALK_GUEST_REFS] + cpu->ctr.c[CTR_WALK_HOST_REFS]);
  machine_free(m);
}
END_TEST

/* A guest page larger than the host page backing it is cached at the host
 * page's size (the combined translation); one no larger keeps its size. */
START_TEST(test_nested_splinter)
{
  static const struct { const char *host; unsigned guest_level, want_size; } cases[] = {
    { "4K", 2, 0 }, { "2M", 2, 1 }, { "1G", 2, 1 }, { "2M", 3, 1 }, { "1G", 3, 2 },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *hs = g_strdup_printf("virt.host_page_size=%s", cases[i].host);
    const char *sets[] = { "virt.nested=true", hs, NULL };
    Machine *m = fixture_machine("skylake", sets);
    Thread *t = fixture_thread(m, 1);
    unsigned shift = 12 + 9 * (cases[i].guest_level - 1);
    map_leaf(t, VA & ~((1ULL << shift) - 1), cases[i].guest_level, 0, PTE_RW);
    Xlat x;
    ck_assert_int_eq(fixture_xlat(m, t, VA, ACC_LOAD, &x), XLAT_OK);
    ck_assert_uint_eq(x.size, cases[i].want_size);
    /* the frame of va's page of that size */
    uint64_t want_pfn = (VA & ((1ULL << shift) - 1)) >> 12 & ~((1ULL << (9 * cases[i].want_size)) - 1);
    ck_assert_uint_eq(x.pfn, want_pfn);
    machine_free(m);
  }
}
END_TEST

/* Only a fraction of the host's regions backed huge: those left out walk
 * to a 4K host leaf. */
START_TEST(test_nested_huge_fraction)
{
  const char *none[] = { "virt.nested=true", "virt.host_page_size=2M", "virt.host_huge_fraction=0",
                         "virt.ntlb_entries=0", "virt.host_pwc_pde_entries=0", "virt.host_pwc_pdpt_entries=0",
                         "virt.host_pwc_pml4_entries=0", NULL };
  Machine *m = fixture_machine("skylake", none);
  Thread *t = fixture_thread(m, 1);
  map_leaf(t, VA, 1, DATA_PFN, PTE_RW);
  ck_assert_uint_eq(nested_refs(m, t, VA, NULL), 24);
  machine_free(m);
}
END_TEST

/* ---- shadow paging (virt.shadow) ------------------------------------------ */

/* The addresses a translation of va reads (the explain text's "read 0x..."),
 * and the Xlat. */
static GArray *reads_of(Machine *m, Thread *t, uint64_t va, Xlat *x)
{
  g_autoptr(GString) ex = g_string_new(NULL);
  memset(x, 0, sizeof *x);
  ck_assert_int_eq(m->arch->translate(m->cpus[0], t->mm, va, ACC_LOAD, x, ex), XLAT_OK);
  GArray *pa = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  for (const char *p = ex->str; (p = strstr(p, "read 0x")) != NULL; p += 7) {
    uint64_t a = g_ascii_strtoull(p + 5, NULL, 16);
    g_array_append_val(pa, a);
  }
  return pa;
}

/* The fixture's guest memory, which the shadow table sits above. */
static uint64_t guest_bytes(const Machine *m)
{
  return (uint64_t)settings_int(m->s, SET_MACHINE_NODES) * (uint64_t)settings_int(m->s, SET_MACHINE_MEM_PER_NODE);
}

/* Shadow paging alone: a one-dimensional walk of the shadow table, none of
 * whose reads is a guest table's entry (they are all above the guest's
 * memory), with a guest page larger than virt.shadow_page_size reached
 * through direct shadow pages and cached at the shadow's size. */
START_TEST(test_shadow_walk)
{
  static const struct { const char *shadow; unsigned guest_level, refs, size; } cases[] = {
    { "4K", 1, 4, 0 }, { "4K", 2, 4, 0 }, { "2M", 2, 3, 1 }, { "1G", 2, 3, 1 },
    { "4K", 3, 4, 0 }, { "2M", 3, 3, 1 }, { "1G", 3, 2, 2 },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *sz = g_strdup_printf("virt.shadow_page_size=%s", cases[i].shadow);
    const char *sets[] = { "virt.shadow=true", sz, NULL };
    Machine *m = fixture_machine("skylake", sets);
    Thread *t = fixture_thread(m, 1);
    unsigned shift = 12 + 9 * (cases[i].guest_level - 1);
    uint64_t pfn = cases[i].guest_level == 3 ? 0 : DATA_PFN; /* a 1G page's frame is 1G-aligned */
    map_leaf(t, VA & ~((1ULL << shift) - 1), cases[i].guest_level, pfn, PTE_RW);
    Xlat x;
    g_autoptr(GArray) pa = reads_of(m, t, VA, &x);
    ck_assert_uint_eq(pa->len, cases[i].refs);
    ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_WALK_REFS], cases[i].refs);
    for (unsigned k = 0; k < pa->len; k++)
      ck_assert_uint_ge(g_array_index(pa, uint64_t, k), guest_bytes(m));
    ck_assert_uint_eq(x.size, cases[i].size);
    uint64_t want_pfn = pfn + ((VA & ((1ULL << shift) - 1)) >> 12 & ~((1ULL << (9 * cases[i].size)) - 1));
    ck_assert_uint_eq(x.pfn, want_pfn);
    machine_free(m);
  }
}
END_TEST

/* Two guest 2M pages on 4K shadow pages read different direct pages, and
 * the direct page of one is the same for its two 4K halves' walks. */
START_TEST(test_shadow_direct_pages)
{
  const char *sets[] = { "virt.shadow=true", "virt.shadow_page_size=4K", "pwc.pde_entries=0", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  uint64_t base = VA & ~((1ULL << 21) - 1);
  map_leaf(t, base, 2, DATA_PFN, PTE_RW);
  map_leaf(t, base + (1ULL << 21), 2, DATA_PFN + 512, PTE_RW);
  Xlat x;
  g_autoptr(GArray) a = reads_of(m, t, base, &x);
  g_autoptr(GArray) b = reads_of(m, t, base + 4096, &x);
  g_autoptr(GArray) c = reads_of(m, t, base + (1ULL << 21), &x);
  uint64_t da = g_array_index(a, uint64_t, a->len - 1), db = g_array_index(b, uint64_t, b->len - 1);
  uint64_t dc = g_array_index(c, uint64_t, c->len - 1);
  ck_assert_uint_eq(da >> 12, db >> 12);
  ck_assert_uint_eq(db - da, 8);
  ck_assert_uint_ne(da >> 12, dc >> 12);
  machine_free(m);
}
END_TEST

/* Shadow paging under nested paging (a guest of a guest): the shadow
 * table is translated by the host's, so without the host-dimension caches a
 * cold walk is 4 shadow references x (4 + 1) + the data's 4 = 24 with 4K
 * pages everywhere, whatever the guest's page size; a 2M guest page on 2M
 * shadow pages is 3 x 5 + 4 = 19 and, on the 4K host page, cached as 4K. */
START_TEST(test_shadow_nested_cold_walk)
{
  static const struct { const char *shadow; unsigned guest_level, refs, size; } cases[] = {
    { "4K", 1, 24, 0 }, { "4K", 2, 24, 0 }, { "2M", 2, 19, 0 },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *sz = g_strdup_printf("virt.shadow_page_size=%s", cases[i].shadow);
    const char *sets[] = { "virt.shadow=true", sz, "virt.nested=true", "virt.host_page_size=4K", "virt.ntlb_entries=0",
                           "virt.host_pwc_pde_entries=0", "virt.host_pwc_pdpt_entries=0", "virt.host_pwc_pml4_entries=0",
                           NULL };
    Machine *m = fixture_machine("skylake", sets);
    Thread *t = fixture_thread(m, 1);
    unsigned shift = 12 + 9 * (cases[i].guest_level - 1);
    map_leaf(t, VA & ~((1ULL << shift) - 1), cases[i].guest_level, cases[i].guest_level == 3 ? 0 : DATA_PFN, PTE_RW);
    unsigned size;
    ck_assert_uint_eq(nested_refs(m, t, VA, &size), cases[i].refs);
    ck_assert_uint_eq(size, cases[i].size);
    ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_WALK_HOST_REFS], (cases[i].refs - 4) / 5 * 4 + 4);
    machine_free(m);
  }
}
END_TEST

static Suite *x86_suite(void)
{
  Suite *s = suite_create("x86_64");
  TCase *tc = tcase_create("walk");
  tcase_add_test(tc, test_canonical_limits);
  tcase_add_test(tc, test_walk_refs_per_size);
  tcase_add_test(tc, test_pwc_shortens_walks);
  tcase_add_test(tc, test_pwc_lru_order);
  tcase_add_test(tc, test_pwc_lru_same_bucket);
  tcase_add_test(tc, test_pwc_flush_keeps_order);
  tcase_add_test(tc, test_stlb_fill_and_sizes);
  tcase_add_test(tc, test_second_level_4k_fill);
  tcase_add_test(tc, test_accessed_dirty_and_permissions);
  tcase_add_test(tc, test_pcid_isolation);
  tcase_add_test(tc, test_walk_refs_use_caches);
  tcase_add_test(tc, test_coalesced_entries);
  tcase_add_test(tc, test_coalesced_counters);
  tcase_add_test(tc, test_nested_cold_walk);
  tcase_add_test(tc, test_walk_event_split);
  tcase_add_test(tc, test_nested_off_is_native);
  tcase_add_test(tc, test_nested_caches);
  tcase_add_test(tc, test_nested_splinter);
  tcase_add_test(tc, test_nested_huge_fraction);
  tcase_add_test(tc, test_shadow_walk);
  tcase_add_test(tc, test_shadow_direct_pages);
  tcase_add_test(tc, test_shadow_nested_cold_walk);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(x86_suite)
