/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the ppc64 hash MMU: VSID, hash and PTEG numbers against
 * the kernel's formulas worked by hand, the HPT size rule, the native
 * insert/evict path (both groups full, bolted entries kept, the eviction
 * scan), the stale TLB entry an eviction leaves until a tlbie, SLB
 * replacement and preloading, the hash fault path end to end, flushes,
 * 16M pages in a 4K segment, and the settings ppc64 refuses (mm.base_page_size
 * on x86-64 too).  All with the 4K kernel; 64K pages and 16M THP and hugetlb
 * pages are in tests/system/test_base64k.c.
 */
#include "config.h"
#include "fault.h"
#include "machine_fixture.h"
#include "ppc64/ppc64.h"

/* An EA in a 1T segment (above 1T) and one in a 256M segment. */
#define VA_1T 0x3fff00001000ULL
#define VA_256M 0x10001000ULL

/* The tests below use the 4K kernel (the preset has 64K pages, tested in
 * tests/system/test_base64k.c). */
#define KERNEL_4K "mm.base_page_size=4K", "thp.enabled=never"
static const char *const base_4k[] = { KERNEL_4K, NULL };
static const char *const small_hpt[] = { KERNEL_4K, "ppc64.hpt_size=256K", "ppc64.hpt_bolt_linear=false", NULL };

static void map_page(Thread *t, uint64_t va, uint64_t pfn, uint64_t flags)
{
  ck_assert(pgtable_set(&t->mm->pt, va & ~0xfffULL, 1, pte_make(pfn, PTE_P | PTE_US | PTE_A | flags), NULL));
}

/* The primary hash of va in t's context with 4K pages. */
static uint64_t hash_of(Machine *m, Thread *t, uint64_t va)
{
  unsigned ssize = va >= (1ULL << 40) ? PPC64_SEG_1T : PPC64_SEG_256M;
  uint64_t ctx = ppc64_context(m->cpus[0], t->mm->asid);
  return ppc64_hpt_hash(ppc64_vpn(va, ppc64_vsid(ctx, va, ssize), ssize), 12, ssize);
}

/* Fill the free slots of PTEG g with entries that match nothing a test
 * translates (kernel-looking AVPNs), bolted or not. */
static void fill_group(Ppc64Hpt *h, uint64_t g, gboolean bolted, uint64_t secondary)
{
  for (unsigned i = 0; i < PPC64_HPTES_PER_GROUP; i++)
    ppc64_hpt_insert(h, g, (0x3ffULL << 40) | ((uint64_t)i << 7) | secondary | (bolted ? HPTE_V_BOLTED : 0),
                     HPTE_R_R | 0x2, 0);
}

START_TEST(test_vsid_by_hand)
{
  /* 1T segment, context 35, EA 0x3fff00001000:
   *   ESID = EA >> 40 = 0x3f
   *   proto-VSID = 35 << 9 | 0x3f = 17920 + 63 = 17983 (0x463f)
   *   17983 * 12538073 = 225472166759
   *   225472166759 mod (2^28 - 1 = 268435455): 839 * 268435455 = 225217346745,
   *   remainder 254820014 = 0xf303eae. */
  /* MIN_USER_CONTEXT with 4K pages (book3s/64/mmu-hash.h, 6.12):
   * 2^(51 - 46) + 1 + 1 + 1 + 2. */
  ck_assert_uint_eq(ppc64_min_user_context(12), 37);
  ck_assert_uint_eq(ppc64_protovsid(35, VA_1T, PPC64_SEG_1T), 17983);
  ck_assert_uint_eq(ppc64_vsid(35, VA_1T, PPC64_SEG_1T), 0xf303eae);
  /* 256M segment, context 35, EA 0x10001000:
   *   ESID = EA >> 28 = 1; proto-VSID = 35 << 21 | 1 = 73400321
   *   73400321 * 12538073 = 920298582921433
   *   mod (2^40 - 1 = 1099511627775): 837 * 1099511627775 = 920291232447675,
   *   remainder 7350473758 = 0x1b61f541e. */
  ck_assert_uint_eq(ppc64_protovsid(35, VA_256M, PPC64_SEG_256M), 73400321);
  ck_assert_uint_eq(ppc64_vsid(35, VA_256M, PPC64_SEG_256M), 0x1b61f541eULL);
  /* The kernel's linear map, context 1, 1T: proto-VSID 1 << 9 = 512;
   * 512 * 12538073 = 6419493376 = 23 * 268435455 + 245477911 (0xea1b217). */
  ck_assert_uint_eq(ppc64_vsid(1, 0xc000000000000000ULL, PPC64_SEG_1T), 0xea1b217);
  /* MIN_USER_CONTEXT with 64K pages: 2^(51 - 49) + 3 + 2. */
  ck_assert_uint_eq(ppc64_min_user_context(16), 9);
}
END_TEST

START_TEST(test_hash_and_ptegs_by_hand)
{
  /* 1T: VPN = VSID << (40 - 12) | (EA & (2^40 - 1)) >> 12
   *         = 0xf303eae << 28 | 0xff00001 = 0xf303eaeff00001.
   * hash = VSID ^ (VSID << 25) ^ page index
   *      = 0xf303eae ^ 0x1e607d5c000000 ^ 0xff00001 = 0x1e607d5cc03eaf,
   *      & 0x7fffffffff = 0x7d5cc03eaf. */
  uint64_t vpn = ppc64_vpn(VA_1T, 0xf303eae, PPC64_SEG_1T);
  ck_assert_uint_eq(vpn, 0xf303eaeff00001ULL);
  uint64_t hash = ppc64_hpt_hash(vpn, 12, PPC64_SEG_1T);
  ck_assert_uint_eq(hash, 0x7d5cc03eafULL);
  /* A 16M HPT (1G of RAM): 2^24 / 128 = 2^17 PTEGs, mask 0x1ffff:
   * primary 0x7d5cc03eaf & 0x1ffff = 0x3eaf, secondary ~hash & 0x1ffff = 0x1c150. */
  ck_assert_uint_eq(hash & 0x1ffff, 0x3eaf);
  ck_assert_uint_eq(~hash & 0x1ffff, 0x1c150);
  /* AVPN = (VPN >> 11) << 7 with B = 1 (1T) in bits 63..62. */
  ck_assert_uint_eq(ppc64_hpte_avpn(vpn, 12, PPC64_SEG_1T), 0x400f303eaeff0000ULL);
  /* 256M: VPN = 0x1b61f541e << 16 | 0x0001; hash = VSID ^ page index
   * = 0x1b61f541e ^ 1 = 0x1b61f541f; PTEGs with mask 0x1ffff: 0x1541f and
   * ~hash & 0x1ffff = 0xabe0. */
  vpn = ppc64_vpn(VA_256M, 0x1b61f541eULL, PPC64_SEG_256M);
  ck_assert_uint_eq(vpn, 0x1b61f541e0001ULL);
  hash = ppc64_hpt_hash(vpn, 12, PPC64_SEG_256M);
  ck_assert_uint_eq(hash, 0x1b61f541fULL);
  ck_assert_uint_eq(hash & 0x1ffff, 0x1541f);
  ck_assert_uint_eq(~hash & 0x1ffff, 0xabe0);
}
END_TEST

START_TEST(test_hpt_size_rule)
{
  /* One PTEG per two base pages: shift = ceil(log2 RAM) - (12 + 1) + 7. */
  ck_assert_uint_eq(ppc64_htab_shift_for_mem(1ULL << 30, 12), 24);  /* 1G -> 16M */
  ck_assert_uint_eq(ppc64_htab_shift_for_mem(32ULL << 30, 12), 29); /* 32G -> 512M */
  ck_assert_uint_eq(ppc64_htab_shift_for_mem(3ULL << 30, 12), 26);  /* 3G rounds up to 4G */
  ck_assert_uint_eq(ppc64_htab_shift_for_mem(8ULL << 20, 12), 18);  /* the 256K minimum */
  ck_assert_uint_eq(ppc64_htab_shift_for_mem(1ULL << 30, 16), 20);  /* 64K pages: RAM / 1024 */
  Machine *m = fixture_machine("power7", base_4k);
  Ppc64Hpt *h = ppc64_cpu_hpt(m->cpus[0]);
  ck_assert_uint_eq(ppc64_hpt_bytes(h), 16ULL << 20);
  ck_assert_uint_eq(ppc64_hpt_mask(h), 0x1ffff);
  ck_assert_uint_eq(ppc64_hpt_base_pa(h) & ((16ULL << 20) - 1), 0); /* aligned to its size */
  /* The linear map of 1G bolted in 16M pages: 64 HPTEs. */
  ck_assert_uint_eq(ppc64_hpt_valid(h), 64);
  /* A table above the buddy's largest block (4M): 16M taken as one aligned
   * run of four max-order blocks, and given back whole. */
  PhysMem *pm = m->k->pm;
  uint64_t before = physmem_free_pages(pm, 0);
  g_autoptr(GError) err = NULL;
  Ppc64Hpt *h2 = ppc64_hpt_new(pm, 0, 24, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(ppc64_hpt_base_pa(h2) & ((16ULL << 20) - 1), 0);
  ck_assert_uint_eq(physmem_free_pages(pm, 0), before - 4096);
  /* A group holding bolted entries only (never written since) is found by
   * the searches, and an empty one is not. */
  uint64_t bv = (0x3ffULL << 40) | (5ULL << 7);
  ck_assert(ppc64_hpt_bolt(h2, 0x1234, bv, 0x5000));
  Ppc64Hpte be;
  ck_assert_int_eq(ppc64_hpt_find_entry(h2, 0x1234, bv | HPTE_V_VALID | HPTE_V_BOLTED, &be), 0);
  ck_assert_uint_eq(be.r, 0x5000);
  ck_assert_int_eq(ppc64_hpt_find(h2, 0x1234, bv | HPTE_V_VALID | HPTE_V_BOLTED), 0);
  ck_assert_int_eq(ppc64_hpt_find(h2, 0x1235, bv | HPTE_V_VALID | HPTE_V_BOLTED), -1);
  ppc64_hpt_free(h2);
  ck_assert_uint_eq(physmem_free_pages(pm, 0), before);
  /* More than the node can hold: an error naming the setting. */
  ck_assert_ptr_null(ppc64_hpt_new(pm, 0, 30, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "ppc64.hpt_size"));
  machine_free(m);
}
END_TEST

START_TEST(test_page_size_encodings)
{
  /* LP values of POWER7's ibm,segment-page-sizes. */
  uint64_t pa = 0x45000000ULL; /* 16M aligned */
  uint64_t r16m = ppc64_hpte_rpn(pa, 12, 24);
  ck_assert_uint_eq(r16m, pa | (0x38ULL << 12));
  ck_assert_uint_eq(ppc64_hpte_page_shift(12, HPTE_V_LARGE, r16m), 24);
  ck_assert_uint_eq(ppc64_hpte_page_shift(12, 0, pa), 12);
  ck_assert_uint_eq(ppc64_hpte_rpn(0x10000, 12, 16), 0x10000 | 0x7000);
  ck_assert_uint_eq(ppc64_hpte_page_shift(12, HPTE_V_LARGE, 0x17000), 16);
  ck_assert_uint_eq(ppc64_hpte_rpn(0x10000, 16, 16), 0x11000);
  ck_assert_uint_eq(ppc64_hpte_page_shift(16, HPTE_V_LARGE, 0x11000), 16);
  ck_assert_uint_eq(ppc64_hpte_page_shift(16, HPTE_V_LARGE, pa | 0x8000), 24);
  ck_assert_uint_eq(ppc64_hpte_page_shift(16, 0, pa), 0); /* no 4K page in a 64K segment */
  ck_assert_int_eq(ppc64_penc(16, 12), -1);
  /* The 4K geometry of hash-4k.h: 9 + 7 + 9 + 9 index bits above 12. */
  PtGeometry g;
  ppc64_geometry(&g, 12);
  ck_assert_uint_eq(g.levels, 4);
  ck_assert_uint_eq(pgtable_entry_span(&g, 2), 2ULL << 20);
  ck_assert_uint_eq(pgtable_entry_span(&g, 3), 256ULL << 20);
  ck_assert_uint_eq(pgtable_entry_span(&g, 4), 128ULL << 30);
  ck_assert_uint_eq(g.table_bytes[2], 1024);
  ppc64_geometry(&g, 16);
  ck_assert_uint_eq(pgtable_entry_span(&g, 2), 16ULL << 20); /* the 16M THP level */
}
END_TEST

/* native_hpte_remove: from the start slot, wrapping, the first valid
 * entry that is not bolted. */
START_TEST(test_eviction_scan)
{
  Machine *m = fixture_machine("power7", small_hpt);
  Ppc64Hpt *h = ppc64_cpu_hpt(m->cpus[0]);
  const uint64_t g = 5;
  for (unsigned i = 0; i < 8; i++) {
    gboolean bolted = i != 2 && i != 6;
    ck_assert_int_eq(ppc64_hpt_insert(h, g, ((uint64_t)(i + 1) << 7) | (bolted ? HPTE_V_BOLTED : 0), 0, 7), (int)i);
  }
  ck_assert_int_eq(ppc64_hpt_insert(h, g, 1ULL << 7, 0, 7), -1); /* full */
  Ppc64Hpte old;
  ck_assert_int_eq(ppc64_hpt_remove(h, g, 3, &old), 6); /* 3, 4, 5 bolted: 6 */
  ck_assert_uint_eq(old.v & HPTE_V_AVPN, 7ULL << 7);
  ck_assert_int_eq(ppc64_hpt_remove(h, g, 7, &old), 2); /* 7, 0, 1 bolted; wraps to 2 */
  ck_assert_int_eq(ppc64_hpt_remove(h, g, 0, &old), -1); /* only bolted entries left */
  unsigned bolted;
  ck_assert_uint_eq(ppc64_hpt_valid_in(h, g, &bolted), 6);
  ck_assert_uint_eq(bolted, 6);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, 7), 6);
  machine_free(m);
}
END_TEST

/* The hash fault path: fault, the generic fault handler maps the page,
 * the retry hash-faults again and inserts, the re-executed search hits. */
START_TEST(test_hash_fault_end_to_end)
{
  Machine *m = fixture_machine("power7", base_4k);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  fixture_vma(t, VA_1T & ~0xfffffULL, 1 << 20, PROT_R | PROT_W);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, VA_1T, ACC_LOAD, &x), XLAT_NOT_PRESENT);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SLB_MISSES], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HASH_FAULTS], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_INSERTS], 0);
  /* The primary PTEG (0x1a2df: the mm's context is MIN_USER_CONTEXT, 37,
   * so VSID 0xc73a2de, hash 0x18e745bf83a2df, worked out as above) and the secondary
   * (0x5d20) were read by the search: one 128-byte line each. */
  ck_assert_uint_eq(cpu->ctr.c[CTR_WALK_REFS], 2);
  uint64_t cost;
  ck_assert_int_eq(fault_handle(m->k, &cpu->kc, t->mm, VA_1T, ACC_LOAD, &cost), FAULT_MAPPED);
  ck_assert_int_eq(fixture_xlat(m, t, VA_1T, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HASH_FAULTS], 2);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_INSERTS], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], 3); /* search, search, the retry's search */
  ck_assert_uint_eq(cpu->ctr.c[CTR_SLB_MISSES], 1);
  ck_assert_uint_eq(x.pfn, m->k->zero_pfn); /* a read fault maps the zero page */
  ck_assert_uint_eq(x.size, PPC64_4K);
  ck_assert_uint_eq(x.flags & (TLBF_W | TLBF_X), 0); /* read-only, no-execute */
  /* The HPTE: primary PTEG 0x1a2df slot 0, v = AVPN | V, r = RPN | R | M | N | PP 3. */
  Ppc64Hpt *h = ppc64_cpu_hpt(cpu);
  Ppc64Hpte e = ppc64_hpt_get(h, 0x1a2df, 0);
  ck_assert_uint_eq(e.v, 0x400c73a2deff0000ULL | HPTE_V_VALID);
  ck_assert_uint_eq(e.r, (m->k->zero_pfn << 12) | HPTE_R_R | HPTE_R_M | HPTE_R_N | 0x3);
  ck_assert_uint_eq(ppc64_hpt_owner(h, 0x1a2df, 0), t->mm->asid);
  /* The search with the entry: the same slot and entry; no match in the
   * secondary (H set), the entry left alone. */
  Ppc64Hpte f = { 0 };
  ck_assert_int_eq(ppc64_hpt_find_entry(h, 0x1a2df, e.v, &f), ppc64_hpt_find(h, 0x1a2df, e.v));
  ck_assert_uint_eq(f.v, e.v);
  ck_assert_uint_eq(f.r, e.r);
  Ppc64Hpte g = { 1, 2 };
  ck_assert_int_eq(ppc64_hpt_find_entry(h, 0x1a2df, e.v | HPTE_V_SECONDARY, &g), -1);
  ck_assert_uint_eq(g.v, 1);
  /* The Linux PTE was marked accessed by hash_page. */
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, VA_1T, &level, &idx);
  ck_assert(n->e[idx] & PTE_A);
  /* Now the TLB has it: no walk. */
  uint64_t walks = cpu->ctr.c[CTR_PAGE_WALKS];
  ck_assert_int_eq(fixture_xlat(m, t, VA_1T, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], walks);
  ck_assert_uint_eq(x.walks, 0);
  ck_assert_uint_eq(cpu->ctr.c[CTR_STLB_HITS], 1);
  machine_free(m);
}
END_TEST

/* A store to a clean writable page: the HPTE is read-only (PP 3) until
 * the PTE is dirty; the protection fault updates it in place. */
START_TEST(test_store_updates_in_place)
{
  Machine *m = fixture_machine("power7", base_4k);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  map_page(t, VA_256M, 0x30000, PTE_RW | PTE_NX); /* writable, not dirty, no execute */
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, VA_256M, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.flags & TLBF_W, 0);
  uint64_t g = hash_of(m, t, VA_256M) & ppc64_hpt_mask(ppc64_cpu_hpt(cpu));
  ck_assert_uint_eq(ppc64_hpt_get(ppc64_cpu_hpt(cpu), g, 0).r & HPTE_R_PP, 3);
  ck_assert_int_eq(fixture_xlat(m, t, VA_256M, ACC_STORE, &x), XLAT_OK);
  ck_assert_uint_eq(x.flags & (TLBF_W | TLBF_D), TLBF_W | TLBF_D);
  Ppc64Hpte e = ppc64_hpt_get(ppc64_cpu_hpt(cpu), g, 0);
  ck_assert_uint_eq(e.r & HPTE_R_PP, 2);
  ck_assert(e.r & HPTE_R_C);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_INSERTS], 1); /* updated, not inserted again */
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, VA_256M, &level, &idx);
  ck_assert(n->e[idx] & PTE_D);
  /* An instruction fetch from a no-execute page is the kernel's business. */
  ck_assert_int_eq(fixture_xlat(m, t, VA_256M, ACC_IFETCH, &x), XLAT_PROTECTION);
  machine_free(m);
}
END_TEST

/* Both groups full: the only entry that is not bolted goes, the new one
 * takes its slot, and the evicted translation lives on in the TLB until a
 * tlbie. */
START_TEST(test_eviction_and_stale_tlb)
{
  Machine *m = fixture_machine("power7", small_hpt);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  Ppc64Hpt *h = ppc64_cpu_hpt(cpu);
  uint64_t mask = ppc64_hpt_mask(h);
  ck_assert_uint_eq(mask, 0x7ff); /* 256K: 2048 PTEGs */
  /* A in segment 1; B in segment 2 at the page index that gives the same
   * hash bits under the mask: hash = VSID ^ index for 256M segments. */
  const uint64_t a = VA_256M;
  uint64_t ha = hash_of(m, t, a);
  uint64_t ctx = ppc64_context(cpu, t->mm->asid);
  uint64_t vsid_b = ppc64_vsid(ctx, 2ULL << 28, PPC64_SEG_256M);
  uint64_t idx_b = ((ha ^ vsid_b) & mask);
  const uint64_t b = (2ULL << 28) | (idx_b << 12);
  ck_assert_uint_eq(hash_of(m, t, b) & mask, ha & mask);
  map_page(t, a, 0x31000, PTE_RW | PTE_D);
  map_page(t, b, 0x32000, PTE_RW | PTE_D);

  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, a, ACC_LOAD, &x), XLAT_OK);
  uint64_t prim = ha & mask, sec = ~ha & mask;
  ck_assert_int_eq(ppc64_hpt_find(h, prim, ppc64_hpt_get(h, prim, 0).v), 0);
  /* The rest of both groups bolted. */
  fill_group(h, prim, TRUE, 0);
  fill_group(h, sec, TRUE, HPTE_V_SECONDARY);
  ck_assert_uint_eq(ppc64_hpt_valid_in(h, prim, NULL), 8);
  ck_assert_uint_eq(ppc64_hpt_valid_in(h, sec, NULL), 8);

  ck_assert_int_eq(fixture_xlat(m, t, b, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_EVICTIONS], 1);
  ck_assert_uint_eq(x.pfn, 0x32000);
  Ppc64Hpte e = ppc64_hpt_get(h, prim, 0); /* B took A's slot */
  ck_assert_uint_eq(e.r & HPTE_R_RPN, 0x32000ULL << 12);
  unsigned bolted;
  ck_assert_uint_eq(ppc64_hpt_valid_in(h, prim, &bolted), 8);
  ck_assert_uint_eq(bolted, 7);
  ck_assert_uint_eq(ppc64_hpt_valid_in(h, sec, &bolted), 8);
  ck_assert_uint_eq(bolted, 8);

  /* A has no HPTE any more, yet the TLB still translates it. */
  uint64_t faults = cpu->ctr.c[CTR_HASH_FAULTS], walks = cpu->ctr.c[CTR_PAGE_WALKS];
  ck_assert_int_eq(fixture_xlat(m, t, a, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0);
  ck_assert_uint_eq(x.pfn, 0x31000);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], walks);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HASH_FAULTS], faults);
  /* tlbie: the stale entry goes; the next access hash-faults and evicts B. */
  cpu_flush_page(cpu, t->mm->asid, a);
  ck_assert_int_eq(fixture_xlat(m, t, a, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_ne(x.walks, 0);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HASH_FAULTS], faults + 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_EVICTIONS], 2);
  ck_assert_uint_eq(ppc64_hpt_get(h, prim, 0).r & HPTE_R_RPN, 0x31000ULL << 12);
  machine_free(m);
}
END_TEST

/* Both groups full of entries that can be evicted: exactly one goes, the
 * new entry takes its place, and the same run gives the same choice. */
static void evict_once(uint64_t *pteg_out, unsigned *slot_out)
{
  Machine *m = fixture_machine("power7", small_hpt);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  Ppc64Hpt *h = ppc64_cpu_hpt(cpu);
  uint64_t mask = ppc64_hpt_mask(h), ha = hash_of(m, t, VA_256M);
  fill_group(h, ha & mask, FALSE, 0);
  fill_group(h, ~ha & mask, FALSE, HPTE_V_SECONDARY);
  map_page(t, VA_256M, 0x33000, PTE_RW | PTE_D);
  Xlat x;
  ck_assert_int_eq(fixture_xlat(m, t, VA_256M, ACC_STORE, &x), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_EVICTIONS], 1);
  ck_assert_uint_eq(ppc64_hpt_valid_in(h, ha & mask, NULL) + ppc64_hpt_valid_in(h, ~ha & mask, NULL), 16);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t->mm->asid), 1);
  *slot_out = 8;
  for (unsigned s = 0; s < 8; s++) {
    if (ppc64_hpt_owner(h, ha & mask, s) == t->mm->asid)
      *pteg_out = ha & mask, *slot_out = s;
    if (ppc64_hpt_owner(h, ~ha & mask, s) == t->mm->asid)
      *pteg_out = ~ha & mask, *slot_out = s;
  }
  ck_assert_uint_lt(*slot_out, 8);
  /* In the secondary group the new HPTE has H set. */
  Ppc64Hpte e = ppc64_hpt_get(h, *pteg_out, *slot_out);
  ck_assert_uint_eq((e.v & HPTE_V_SECONDARY) != 0, *pteg_out == (~ha & mask));
  machine_free(m);
}

START_TEST(test_eviction_when_both_groups_full)
{
  uint64_t g1, g2;
  unsigned s1, s2;
  evict_once(&g1, &s1);
  evict_once(&g2, &s2);
  ck_assert_uint_eq(g1, g2);
  ck_assert_uint_eq(s1, s2);
}
END_TEST

/* First free entries from 2, then round-robin from 2; bolted 0 and 1 kept. */
START_TEST(test_slb_replacement)
{
  Machine *m = fixture_machine("power7", base_4k);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  Ppc64Slb *slb = ppc64_cpu_slb(cpu);
  ck_assert_uint_eq(slb->n, 32);
  Xlat x;
  for (uint64_t s = 1; s <= 30; s++) {
    fixture_xlat(m, t, s << 28, ACC_LOAD, &x);
    ck_assert_int_eq(ppc64_slb_lookup(slb, s << 28), (int)(s + 1)); /* segment s in entry s + 1 */
  }
  ck_assert_uint_eq(cpu->ctr.c[CTR_SLB_MISSES], 30);
  ck_assert_uint_eq(ppc64_slb_valid_user(slb), 30);
  /* Full: round-robin from SLB_NUM_BOLTED. */
  fixture_xlat(m, t, 31ULL << 28, ACC_LOAD, &x);
  ck_assert_int_eq(ppc64_slb_lookup(slb, 31ULL << 28), 2);
  ck_assert_int_eq(ppc64_slb_lookup(slb, 1ULL << 28), -1); /* segment 1 was in entry 2 */
  fixture_xlat(m, t, 32ULL << 28, ACC_LOAD, &x);
  ck_assert_int_eq(ppc64_slb_lookup(slb, 32ULL << 28), 3);
  /* The bolted linear-map entry is still there, entry 1 still reserved. */
  ck_assert(slb->e[0].valid && slb->e[0].kernel);
  ck_assert_uint_eq(slb->e[0].esid, 0xc000000000000000ULL >> 40);
  ck_assert(slb->e[1].kernel);
  /* A hit costs no miss. */
  uint64_t misses = cpu->ctr.c[CTR_SLB_MISSES];
  fixture_xlat(m, t, 31ULL << 28, ACC_LOAD, &x);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SLB_MISSES], misses);
  /* Wrap: segments 33..60 take entries 4..31, then entry 2 again. */
  for (uint64_t s = 33; s <= 60; s++)
    fixture_xlat(m, t, s << 28, ACC_LOAD, &x);
  ck_assert_int_eq(ppc64_slb_lookup(slb, 60ULL << 28), 31);
  fixture_xlat(m, t, 61ULL << 28, ACC_LOAD, &x);
  ck_assert_int_eq(ppc64_slb_lookup(slb, 61ULL << 28), 2);
  /* A 1T segment above 1T. */
  fixture_xlat(m, t, VA_1T, ACC_LOAD, &x);
  int e = ppc64_slb_lookup(slb, VA_1T);
  ck_assert_int_ge(e, 2);
  ck_assert_uint_eq(slb->e[e].ssize, PPC64_SEG_1T);
  ck_assert_uint_eq(slb->e[e].vsid, 0xc73a2de);
  machine_free(m);
}
END_TEST

/* switch_slb: another mm drops the user entries; coming back preloads
 * the thread's recent segments, so they do not miss again. */
START_TEST(test_slb_switch_and_preload)
{
  Machine *m = fixture_machine("power7", base_4k);
  Thread *t1 = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  Ppc64Slb *slb = ppc64_cpu_slb(cpu);
  Xlat x;
  for (uint64_t s = 1; s <= 3; s++)
    fixture_xlat(m, t1, s << 28, ACC_LOAD, &x);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SLB_MISSES], 3);
  Thread *t2 = fixture_thread(m, 2);
  fixture_xlat(m, t2, 5ULL << 28, ACC_LOAD, &x);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SLB_MISSES], 4);
  ck_assert_uint_eq(ppc64_slb_valid_user(slb), 1);
  ck_assert_int_eq(ppc64_slb_lookup(slb, 1ULL << 28), -1);
  /* Back to process 1: segments 1-3 preloaded. */
  cpu->kc.cur = t1;
  cpu->cur_asid = t1->mm->asid;
  for (uint64_t s = 1; s <= 3; s++)
    fixture_xlat(m, t1, s << 28, ACC_LOAD, &x);
  ck_assert_uint_eq(cpu->ctr.c[CTR_SLB_MISSES], 4);
  ck_assert_uint_eq(ppc64_slb_valid_user(slb), 3);
  /* Different contexts, different VSIDs for the same EA. */
  ck_assert_uint_ne(ppc64_context(cpu, t1->mm->asid), ppc64_context(cpu, t2->mm->asid));
  machine_free(m);
}
END_TEST

/* flush_page removes the HPTE of the shared table; flush_asid every HPTE
 * of one context and no other. */
START_TEST(test_flushes)
{
  const char *two_cpus[] = { KERNEL_4K, "machine.cpus_per_node=2", NULL };
  Machine *m = fixture_machine("power7", two_cpus);
  machine_cpu_ready(m, m->cpus[1]); /* built later than CPU 0, as when it first runs */
  ck_assert_ptr_eq(ppc64_cpu_hpt(m->cpus[0]), ppc64_cpu_hpt(m->cpus[1])); /* one HPT */
  Thread *t1 = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  Ppc64Hpt *h = ppc64_cpu_hpt(cpu);
  Xlat x;
  for (unsigned i = 0; i < 4; i++) {
    map_page(t1, VA_256M + i * 4096ULL, 0x40000 + i, PTE_RW | PTE_D);
    ck_assert_int_eq(fixture_xlat(m, t1, VA_256M + i * 4096ULL, ACC_LOAD, &x), XLAT_OK);
  }
  Thread *t2 = fixture_thread(m, 2);
  map_page(t2, VA_256M, 0x50000, PTE_RW | PTE_D);
  ck_assert_int_eq(fixture_xlat(m, t2, VA_256M, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t1->mm->asid), 4);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t2->mm->asid), 1);
  /* One page of process 1, flushed from the other CPU: the HPTE goes. */
  cpu_flush_page(m->cpus[1], t1->mm->asid, VA_256M + 4096);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t1->mm->asid), 3);
  uint64_t g = hash_of(m, t1, VA_256M + 4096) & ppc64_hpt_mask(h);
  for (unsigned s = 0; s < 8; s++)
    ck_assert_uint_ne(ppc64_hpt_owner(h, g, s), t1->mm->asid);
  /* The whole context of process 1. */
  cpu_flush_asid(cpu, t1->mm->asid);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t1->mm->asid), 0);
  ck_assert_uint_eq(ppc64_hpt_owner_valid(h, t2->mm->asid), 1);
  ck_assert_uint_eq(ppc64_hpt_valid(h), 64 + 1); /* the bolted linear map and process 2's page */
  /* Its TLB entries went too: the next access searches and faults. */
  cpu->kc.cur = t1;
  cpu->cur_asid = t1->mm->asid;
  uint64_t faults = cpu->ctr.c[CTR_HASH_FAULTS];
  ck_assert_int_eq(fixture_xlat(m, t1, VA_256M, ACC_LOAD, &x), XLAT_OK);
  ck_assert_uint_ne(x.walks, 0);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HASH_FAULTS], faults + 1);
  machine_free(m);
}
END_TEST

/* A Linux page table with 64K base pages holds a 16M leaf at the PMD
 * level.  In this 4K segment the HPTE is MPSS: hashed with the 4K shift,
 * one per 4K base page touched, each mapping the whole 16M (L = 1, LP 0x38). */
static uint64_t next_pfn = 0x80000;

static gboolean test_pt_alloc(void *ctx, unsigned level, uint64_t *pfn)
{
  (void)ctx;
  (void)level;
  *pfn = next_pfn++;
  return TRUE;
}

static void test_pt_release(void *ctx, unsigned level, uint64_t pfn)
{
  (void)ctx;
  (void)level;
  (void)pfn;
}

START_TEST(test_16m_leaf)
{
  Machine *m = fixture_machine("power7", base_4k);
  Thread *t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  PtGeometry g64;
  ppc64_geometry(&g64, 16);
  PtAllocator a = { test_pt_alloc, test_pt_release, NULL };
  Mm *mm = mm_new(1, t->mm->asid, &g64, &a);
  const uint64_t base = 0x10000000ULL, pfn = 0x45000; /* 16M aligned: pa 0x45000000 */
  ck_assert(pgtable_set(&mm->pt, base, 2, pte_make(pfn, PTE_P | PTE_US | PTE_A | PTE_RW | PTE_D | PTE_PS), NULL));
  Xlat x;
  uint64_t va = base + 0x123456;
  memset(&x, 0, sizeof x);
  ck_assert_int_eq(m->arch->translate(cpu, mm, va, ACC_LOAD, &x, NULL), XLAT_OK);
  ck_assert_uint_eq(x.size, PPC64_16M);
  ck_assert_uint_eq(x.pfn, pfn);
  Ppc64Hpt *h = ppc64_cpu_hpt(cpu);
  uint64_t ctx = ppc64_context(cpu, mm->asid);
  uint64_t vpn = ppc64_vpn(va, ppc64_vsid(ctx, va, PPC64_SEG_256M), PPC64_SEG_256M);
  uint64_t hash = ppc64_hpt_hash(vpn, 12, PPC64_SEG_256M); /* the base page's shift */
  Ppc64Hpte e = ppc64_hpt_get(h, hash & ppc64_hpt_mask(h), 0);
  ck_assert(e.v & HPTE_V_LARGE);
  ck_assert_uint_eq(e.r & 0xfffffffffff000ULL, 0x45000000ULL | (0x38ULL << 12));
  ck_assert_uint_eq(ppc64_hpte_page_shift(12, e.v, e.r), 24);
  /* Another 4K of the same 16M: the TLB's 16M entry covers it. */
  memset(&x, 0, sizeof x);
  ck_assert_int_eq(m->arch->translate(cpu, mm, base + 0xfff000, ACC_LOAD, &x, NULL), XLAT_OK);
  ck_assert_uint_eq(x.walks, 0);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_INSERTS], 1);
  /* Without the TLB, that base page hash-faults and gets its own HPTE. */
  m->arch->flush_all(cpu);
  memset(&x, 0, sizeof x);
  ck_assert_int_eq(m->arch->translate(cpu, mm, base + 0xfff000, ACC_STORE, &x, NULL), XLAT_OK);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_INSERTS], 2);
  ck_assert_uint_eq(x.pfn, pfn);
  mm_free(mm);
  machine_free(m);
}
END_TEST

/* `base` is the mm.base_page_size to set first (NULL: the preset's, 64K). */
static void expect_refused_on(const char *preset, const char *base, const char *set, const char *what)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, preset, &err));
  ck_assert(settings_set(s, "machine.mem_per_node", "1G", "test", &err));
  if (base)
    ck_assert(settings_set(s, "mm.base_page_size", base, "test", &err));
  if (base && !strcmp(base, "4K") && !strstr(set, "thp.enabled"))
    ck_assert(settings_set(s, "thp.enabled", "never", "test", &err));
  ck_assert(settings_set_pair(s, set, "test", &err));
  Machine *m = machine_new(preset, s, NULL, &err);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(err);
  ck_assert_msg(strstr(err->message, what), "%s: %s", set, err->message);
  g_error_free(err);
}

static void expect_refused(const char *set, const char *what)
{
  expect_refused_on("power7", "4K", set, what);
}

/* The TLB after an ERAT miss: entries of two sizes held for one address,
 * the smallest answers (sizes probed smallest first); a refill after a
 * miss takes the set's least recently used way, with and without 16M
 * entries held (the way the probe found, or a search). */
START_TEST(test_tlb_probe_order_and_refill)
{
  for (int big = 0; big < 2; big++) {
    Machine *m = fixture_machine("power7", base_4k);
    Thread *t = fixture_thread(m, 1);
    Cpu *cpu = m->cpus[0];
    Tlb *tlb = ppc64_cpu_tlb(cpu);
    unsigned asid = t->mm->asid;
    const uint64_t va = VA_256M;
    uint64_t k4 = tlb_key(asid, PPC64_4K, va >> 12), k16 = tlb_key(asid, PPC64_16M, va >> 24);
    tlb_insert(tlb, k16, 0x40000, TLBF_U, PPC64_16M);
    tlb_insert(tlb, k4, 0x41000, TLBF_U, PPC64_4K);
    Xlat x;
    ck_assert_int_eq(fixture_xlat(m, t, va, ACC_LOAD, &x), XLAT_OK);
    ck_assert_uint_eq(x.size, PPC64_4K);
    ck_assert_uint_eq(x.pfn, 0x41000);
    ck_assert(tlb_invalidate(tlb, k4));
    ck_assert_int_eq(fixture_xlat(m, t, va, ACC_LOAD, &x), XLAT_OK);
    ck_assert_uint_eq(x.size, PPC64_16M);
    ck_assert_uint_eq(x.pfn, 0x40000);
    ck_assert_uint_eq(cpu->ctr.c[CTR_STLB_HITS], 2);
    ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], 0);
    if (big)
      ck_assert(tlb_invalidate(tlb, k16)); /* 16M still held: the refill searches */
    else
      tlb_flush_all(tlb);
    /* Four other pages fill va's set; the third inserted is the least
     * recently used once the first two are used again. */
    uint64_t other[4];
    for (unsigned j = 0; j < 4; j++) {
      other[j] = tlb_key(asid, PPC64_4K, (va >> 12) + (uint64_t)tlb->sets * (j + 1));
      ck_assert_uint_eq(tlb_set_of(tlb, other[j]), tlb_set_of(tlb, k4));
      tlb_insert(tlb, other[j], 0x50000 + j, TLBF_U, PPC64_4K);
    }
    ck_assert_ptr_nonnull(tlb_lookup(tlb, other[0]));
    ck_assert_ptr_nonnull(tlb_lookup(tlb, other[1]));
    map_page(t, va, 0x42000, PTE_RW | PTE_D);
    ck_assert_int_eq(fixture_xlat(m, t, va, ACC_LOAD, &x), XLAT_OK);
    ck_assert_uint_ne(x.walks, 0);
    ck_assert_uint_eq(x.pfn, 0x42000);
    ck_assert_uint_eq(cpu->ctr.c[CTR_HPTE_INSERTS], 1);
    const TlbPayload *p = tlb_peek(tlb, k4);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->pfn, 0x42000);
    ck_assert_ptr_null(tlb_peek(tlb, other[2]));
    ck_assert_ptr_nonnull(tlb_peek(tlb, other[0]));
    ck_assert_ptr_nonnull(tlb_peek(tlb, other[1]));
    ck_assert_ptr_nonnull(tlb_peek(tlb, other[3]));
    machine_free(m);
  }
}
END_TEST

START_TEST(test_refused_settings)
{
  expect_refused("thp.enabled=always", "thp.enabled");
  expect_refused("tlb.pcid=false", "tlb.pcid");
  expect_refused("ppc64.hpt_size=300K", "ppc64.hpt_size");
  expect_refused("hugetlb.nr_hugepages=4", "hugetlb.nr_hugepages");
  expect_refused("ppc64.hpt_size=1G", "ppc64.hpt_size"); /* does not fit in 1G of RAM */
  /* 64K pages: 16G gigantic pages are not modelled; a 16M THP needs
   * order-12 buddy blocks; only 4K and 64K base pages exist. */
  expect_refused_on("power7", NULL, "hugetlb.nr_hugepages_1g=1", "hugetlb.nr_hugepages_1g");
  expect_refused_on("power7", NULL, "buddy.max_order=10", "buddy.max_order");
  expect_refused_on("power7", NULL, "mm.base_page_size=8K", "mm.base_page_size");
  /* x86-64 has 4K base pages only. */
  expect_refused_on("skylake", NULL, "mm.base_page_size=64K", "mm.base_page_size");
}
END_TEST

static Suite *ppc64_suite(void)
{
  Suite *s = suite_create("ppc64");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_vsid_by_hand);
  tcase_add_test(tc, test_hash_and_ptegs_by_hand);
  tcase_add_test(tc, test_hpt_size_rule);
  tcase_add_test(tc, test_page_size_encodings);
  tcase_add_test(tc, test_eviction_scan);
  tcase_add_test(tc, test_hash_fault_end_to_end);
  tcase_add_test(tc, test_store_updates_in_place);
  tcase_add_test(tc, test_eviction_and_stale_tlb);
  tcase_add_test(tc, test_eviction_when_both_groups_full);
  tcase_add_test(tc, test_slb_replacement);
  tcase_add_test(tc, test_slb_switch_and_preload);
  tcase_add_test(tc, test_flushes);
  tcase_add_test(tc, test_16m_leaf);
  tcase_add_test(tc, test_tlb_probe_order_and_refill);
  tcase_add_test(tc, test_refused_settings);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(ppc64_suite)
