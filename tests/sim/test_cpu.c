/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the core timing model: CPI, dependent loads that pay every
 * latency, independent misses that overlap up to cpu.mshrs, the dirty-bit
 * assist, and the counters of the access path.
 */
#include "config.h"
#include "machine_fixture.h"
#include "cpu-translate.h"
#include "ppc64/ppc64.h"

#include <string.h>

#define BASE 0x7f0000000000ULL

static const char *quiet[] = { "cache.prefetcher=none", NULL };

static Machine *setup(const char *const *sets, Thread **t)
{
  Machine *m = fixture_machine("skylake", sets);
  *t = fixture_thread(m, 1);
  /* One 4K page, mapped RW and dirty, so no fault interferes. */
  fixture_vma(*t, BASE, 1 << 20, PROT_R | PROT_W);
  ck_assert(pgtable_set(&(*t)->mm->pt, BASE, 1, pte_make(0x12345, PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D), NULL));
  return m;
}

static uint32_t dram_cycles(Machine *m)
{
  return memsys_level_cycles(m->cpus[0]->mem, MEM_DRAM);
}

START_TEST(test_cpi)
{
  Thread *t;
  Machine *m = setup(quiet, &t);
  Cpu *cpu = m->cpus[0];
  cpu_compute(cpu, 1000);
  ck_assert_uint_eq(cpu->clock, 500); /* cpu.cpi 0.5 */
  cpu_compute(cpu, 3);
  ck_assert_uint_eq(cpu->clock, 501); /* the half cycle is carried */
  ck_assert_uint_eq(cpu->ctr.c[CTR_INSTRUCTIONS], 1003);
  machine_free(m);
}
END_TEST

/* The clock in integers (cpi a dyadic fraction) against the double
 * arithmetic it stands for, over counts of every size up to 2^32 and past
 * it (where the CPU goes over to the doubles for good); and a cpi that is
 * no such fraction, which uses the doubles throughout. */
static void check_clock(const char *cpi_setting, gboolean fixed)
{
  const char *sets[] = { "cache.prefetcher=none", cpi_setting, NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Cpu *cpu = m->cpus[0];
  ck_assert_int_eq(cpu->cpi_fixed, fixed);
  double frac = 0, cpi = cpu->cpi;
  uint64_t clock = cpu->clock, seed = 7;
  for (int i = 0; i < 2000; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t n = i == 1500 ? (UINT64_C(1) << 33) + 5 : (seed >> 33) >> (seed % 31);
    cpu_compute(cpu, n);
    frac += (double)n * cpi;
    uint64_t whole = (uint64_t)frac;
    frac -= (double)whole;
    clock += whole;
    ck_assert_uint_eq(cpu->clock, clock);
  }
  ck_assert(!cpu->cpi_fixed); /* the count of 2^33 went over to the doubles */
  machine_free(m);
}

START_TEST(test_cpi_integer_clock_is_exact)
{
  check_clock("cpu.cpi=0.5", TRUE);
  check_clock("cpu.cpi=1.25", TRUE);
  check_clock("cpu.cpi=3", TRUE);
  check_clock("cpu.cpi=0.3", FALSE);
}
END_TEST

/* Eight loads to distinct lines of one cold page. */
static uint64_t eight_loads(const char *const *sets, AccessKind k)
{
  Thread *t;
  Machine *m = setup(sets, &t);
  Cpu *cpu = m->cpus[0];
  fixture_access(m, t, ACC_LOAD, BASE);     /* translate and warm the TLB */
  cpu_drain(cpu);
  memsys_flush(cpu->mem);
  uint64_t t0 = cpu->clock;
  for (int i = 1; i <= 8; i++)
    fixture_access(m, t, k, BASE + 64 * (uint64_t)i * 7);
  cpu_drain(cpu);
  uint64_t elapsed = cpu->clock - t0;
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], 1); /* the shortcut served the rest */
  machine_free(m);
  return elapsed;
}

/* The DRAM latency of the quiet machine. */
static uint32_t quiet_dram_cycles(void)
{
  Thread *t;
  Machine *m = setup(quiet, &t);
  uint32_t dram = dram_cycles(m);
  machine_free(m);
  return dram;
}

START_TEST(test_dependent_loads_serialise)
{
  uint32_t dram = quiet_dram_cycles();
  uint64_t dep = eight_loads(quiet, ACC_DEP_LOAD);
  uint64_t indep = eight_loads(quiet, ACC_LOAD);
  ck_assert_uint_ge(dep, 8 * (uint64_t)dram);
  ck_assert_uint_lt(indep, 2 * (uint64_t)dram); /* 12 fill buffers: all overlap */
  const char *one_mshr[] = { "cache.prefetcher=none", "cpu.mshrs=1", NULL };
  uint64_t serial = eight_loads(one_mshr, ACC_LOAD);
  ck_assert_uint_ge(serial, 8 * (uint64_t)dram);
}
END_TEST

/* A load that misses to DRAM, one that hits the L1, then a dependent load
 * whose record names one of them by its distance (base/record.h): how long
 * after the first load was issued the dependent one completes. */
static uint64_t dependent_after(int32_t distance)
{
  Thread *t;
  Machine *m = setup(quiet, &t);
  Cpu *cpu = m->cpus[0];
  fixture_access(m, t, ACC_LOAD, BASE); /* translate; the line stays in the L1 */
  cpu_drain(cpu);
  uint64_t t0 = cpu->clock;
  fixture_access(m, t, ACC_LOAD, BASE + 64 * 9);  /* DRAM */
  fixture_access(m, t, ACC_LOAD, BASE);           /* L1 hit */
  TraceRecord r = { .type = REC_ACCESS, .kind = ACC_DEP_LOAD, .addr = BASE + 64 * 20, .size = 8, .arg = distance };
  cpu_access(cpu, t, &r);
  ck_assert_uint_eq(cpu->loads, 4);
  uint64_t done = cpu->load_done[(cpu->loads - 1) % TRACE_DEP_LOADS] - t0;
  machine_free(m);
  return done;
}

START_TEST(test_dependent_load_waits_for_its_producer)
{
  uint64_t dram = quiet_dram_cycles();
  /* On the miss two loads back: both DRAM latencies in a row. */
  ck_assert_uint_ge(dependent_after(1), 2 * dram);
  /* On the L1 hit just before (a D line of the text format): one. */
  ck_assert_uint_lt(dependent_after(0), 2 * dram);
  ck_assert_uint_ge(dependent_after(0), dram);
  /* On the warming load, complete before: nothing to wait for; nor on a
   * load before the first, or one too far back to be remembered. */
  uint64_t free_to_go = dependent_after(2);
  ck_assert_uint_le(free_to_go, dependent_after(0));
  ck_assert_uint_eq(dependent_after(3), free_to_go);
  ck_assert_uint_eq(dependent_after(TRACE_DEP_LOADS), free_to_go);
}
END_TEST

START_TEST(test_dirty_assist)
{
  Thread *t;
  Machine *m = fixture_machine("skylake", quiet);
  t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  fixture_vma(t, BASE, 1 << 20, PROT_R | PROT_W);
  ck_assert(pgtable_set(&t->mm->pt, BASE, 1, pte_make(0x12345, PTE_P | PTE_RW | PTE_US), NULL));
  fixture_access(m, t, ACC_LOAD, BASE);
  fixture_access(m, t, ACC_STORE, BASE + 8);
  ck_assert_uint_eq(cpu->ctr.c[CTR_DIRTY_BIT_ASSISTS], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], 2);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_FAULTS], 0);
  fixture_access(m, t, ACC_STORE, BASE + 16);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], 2);
  ck_assert_uint_eq(cpu->ctr.c[CTR_LOADS], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_STORES], 2);
  ck_assert_uint_eq(cpu->ctr.c[CTR_DTLB_STORE_MISSES], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_DTLB_LOAD_MISSES], 1);
  machine_free(m);
}
END_TEST

START_TEST(test_fault_then_retry)
{
  Thread *t;
  Machine *m = fixture_machine("skylake", quiet);
  t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  fixture_vma(t, BASE, 1 << 20, PROT_R | PROT_W);
  fixture_access(m, t, ACC_LOAD, BASE);   /* zero page */
  fixture_access(m, t, ACC_STORE, BASE);  /* copy-on-write */
  fixture_access(m, t, ACC_LOAD, BASE + 64);
  ck_assert_uint_eq(cpu->ctr.c[CTR_FAULTS_ZERO_PAGE], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_FAULTS_COW], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_FAULTS], 2);
  ck_assert_uint_ge(cpu->ctr.c[CTR_FAULT_CYCLES], m->k->zero_page_cycles + m->k->anon_cycles);
  ck_assert_uint_ge(cpu->clock, cpu->ctr.c[CTR_FAULT_CYCLES]);
  fixture_access(m, t, ACC_LOAD, BASE + (2 << 20)); /* outside the VMA */
  ck_assert_uint_eq(cpu->ctr.c[CTR_SEGV], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_ACCESSES], 4);
  /* Each fault's access looks the TLB up and walks twice (the walk that
   * faulted and the retry's), and every lookup and walk counts, as perf's
   * dTLB-*-misses count completed walks, those that fault included: the
   * load at the zero page, the copy-on-write store, the load beside it (an
   * L1 hit on the new page) and the load outside the VMA (one walk, then
   * the signal). */
  ck_assert_uint_eq(cpu->ctr.c[CTR_DTLB_STORES], 2);
  ck_assert_uint_eq(cpu->ctr.c[CTR_DTLB_STORE_MISSES], 2);
  ck_assert_uint_eq(cpu->ctr.c[CTR_DTLB_LOADS], 4);
  ck_assert_uint_eq(cpu->ctr.c[CTR_DTLB_LOAD_MISSES], 3);
  ck_assert_uint_eq(cpu->ctr.c[CTR_DTLB_LOAD_MISSES] + cpu->ctr.c[CTR_DTLB_STORE_MISSES],
                    cpu->ctr.c[CTR_STLB_MISSES]);
  machine_free(m);
}
END_TEST

/* A 2M page mapped after 4K pages were in use: the L1 and second-level
 * probes, which skip the larger sizes until one is filled, find it. */
START_TEST(test_large_page_after_base_pages)
{
  Thread *t;
  Machine *m = fixture_machine("skylake", quiet);
  t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  const uint64_t huge = BASE + (2 << 20);
  fixture_vma(t, BASE, 4 << 20, PROT_R | PROT_W);
  ck_assert(pgtable_set(&t->mm->pt, BASE, 1, pte_make(0x12345, PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D), NULL));
  ck_assert(pgtable_set(&t->mm->pt, huge, 2, pte_make(0x40000, PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D | PTE_PS), NULL));
  fixture_access(m, t, ACC_LOAD, BASE);
  fixture_access(m, t, ACC_LOAD, BASE + 4096 * 3); /* not present: a fault, a 4K page */
  uint64_t walks = cpu->ctr.c[CTR_PAGE_WALKS];
  fixture_access(m, t, ACC_LOAD, huge);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], walks + 1);
  /* Another 4K granule of the 2M page: an L1 hit. */
  uint64_t l1_misses = cpu->ctr.c[CTR_L1_TLB_MISSES];
  fixture_access(m, t, ACC_LOAD, huge + 4096 * 5);
  ck_assert_uint_eq(cpu->ctr.c[CTR_L1_TLB_MISSES], l1_misses);
  /* With the L1 arrays emptied, an STLB hit. */
  cpu_flush_l1(cpu);
  uint64_t stlb_hits = cpu->ctr.c[CTR_STLB_HITS];
  fixture_access(m, t, ACC_LOAD, huge + 4096 * 9);
  ck_assert_uint_eq(cpu->ctr.c[CTR_L1_TLB_MISSES], l1_misses + 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_STLB_HITS], stlb_hits + 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_WALKS], walks + 1);
  machine_free(m);
}
END_TEST

/* The L1 refill after a fault (translate's attempt loop) goes in under the
 * faulting page's key: the next access to that page hits the L1 array, one
 * to the next page does not.  For loads, stores and fetches (the L1I), with
 * the L1 probe list at the base size alone and, after a 2M page, with every
 * size live, and on the hash MMU, whose base pages (64K) are not of the L1
 * arrays' first size. */
static void check_refill_after_fault(const char *preset, uint64_t base, uint64_t page, gboolean huge_first)
{
  Thread *t;
  static const char *no_thp[] = { "cache.prefetcher=none", "thp.enabled=never", NULL };
  Machine *m = fixture_machine(preset, no_thp); /* a fault maps one base page */
  t = fixture_thread(m, 1);
  Cpu *cpu = m->cpus[0];
  fixture_vma(t, base, 8 << 20, PROT_R | PROT_W | PROT_X);
  if (huge_first) {
    ck_assert(pgtable_set(&t->mm->pt, base + (4 << 20), 2,
                          pte_make(0x40000, PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D | PTE_PS), NULL));
    fixture_access(m, t, ACC_LOAD, base + (4 << 20));
    fixture_access(m, t, ACC_IFETCH, base + (4 << 20));
  }
  static const AccessKind kinds[] = { ACC_STORE, ACC_LOAD, ACC_IFETCH };
  for (unsigned i = 0; i < G_N_ELEMENTS(kinds); i++) {
    uint64_t va = base + (2 * i + 1) * page;
    uint64_t faults = cpu->ctr.c[CTR_PAGE_FAULTS];
    fixture_access(m, t, kinds[i], va);
    ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_FAULTS], faults + 1);
    /* The walks of every kind, the faulting ones included, are the
     * second level's misses. */
    ck_assert_msg(cpu->ctr.c[CTR_DTLB_LOAD_MISSES] + cpu->ctr.c[CTR_DTLB_STORE_MISSES] +
                          cpu->ctr.c[CTR_ITLB_LOAD_MISSES] ==
                      cpu->ctr.c[CTR_STLB_MISSES],
                  "%s huge_first %d kind %d: %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " walks %" G_GUINT64_FORMAT " stlb misses %" G_GUINT64_FORMAT, preset, huge_first, kinds[i],
                  cpu->ctr.c[CTR_DTLB_LOAD_MISSES], cpu->ctr.c[CTR_DTLB_STORE_MISSES], cpu->ctr.c[CTR_ITLB_LOAD_MISSES], cpu->ctr.c[CTR_PAGE_WALKS], cpu->ctr.c[CTR_STLB_MISSES]);
    uint64_t misses = cpu->ctr.c[CTR_L1_TLB_MISSES];
    fixture_access(m, t, kinds[i], va + 64);
    ck_assert_msg(cpu->ctr.c[CTR_L1_TLB_MISSES] == misses, "%s, kind %d: the refill missed its page", preset, kinds[i]);
    fixture_access(m, t, kinds[i], va + page);
    ck_assert_msg(cpu->ctr.c[CTR_L1_TLB_MISSES] > misses, "%s, kind %d: the next page hit", preset, kinds[i]);
  }
  machine_free(m);
}

START_TEST(test_l1_refill_after_fault)
{
  check_refill_after_fault("skylake", BASE, 4096, FALSE);
  check_refill_after_fault("skylake", BASE, 4096, TRUE);
  check_refill_after_fault("zen4", BASE, 4096, FALSE);
  check_refill_after_fault("power9-hash", BASE, 65536, FALSE);
}
END_TEST

START_TEST(test_walkers_limit_overlap)
{
  /* Eight independent loads to eight cold pages: with one walker the walks
   * queue behind each other. */
  uint64_t elapsed[2];
  for (int w = 0; w < 2; w++) {
    const char *sets[] = { "cache.prefetcher=none", w ? "cpu.page_walkers=8" : "cpu.page_walkers=1", NULL };
    Machine *m = fixture_machine("skylake", sets);
    Thread *t = fixture_thread(m, 1);
    Cpu *cpu = m->cpus[0];
    fixture_vma(t, BASE, 1 << 30, PROT_R | PROT_W);
    for (int i = 0; i < 8; i++) {
      uint64_t va = BASE + ((uint64_t)i << 22);
      ck_assert(pgtable_set(&t->mm->pt, va, 1, pte_make(0x1000 + (uint64_t)i, PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D), NULL));
    }
    memsys_flush(cpu->mem);
    uint64_t t0 = cpu->clock;
    for (int i = 0; i < 8; i++)
      fixture_access(m, t, ACC_LOAD, BASE + ((uint64_t)i << 22));
    cpu_drain(cpu);
    elapsed[w] = cpu->clock - t0;
    if (w == 0)
      ck_assert_uint_gt(cpu->ctr.c[CTR_WALKER_STALL_CYCLES], 0);
    machine_free(m);
  }
  ck_assert_uint_gt(elapsed[0], 2 * elapsed[1]);
}
END_TEST

START_TEST(test_rob_bounds_runahead)
{
  /* One DRAM miss, then L1 hits: with a small ROB the core stalls on the
   * miss; with a large one the hits run ahead under it. */
  uint64_t clock[2];
  for (int big = 0; big < 2; big++) {
    const char *sets[] = { "cache.prefetcher=none", big ? "cpu.rob_size=4096" : "cpu.rob_size=16", NULL };
    Thread *t;
    Machine *m = setup(sets, &t);
    Cpu *cpu = m->cpus[0];
    fixture_access(m, t, ACC_LOAD, BASE);
    fixture_access(m, t, ACC_LOAD, BASE + 64);
    cpu_drain(cpu);
    memsys_flush(cpu->mem);
    fixture_access(m, t, ACC_LOAD, BASE + 64); /* miss: L1 was flushed */
    uint64_t t0 = cpu->clock;
    for (int i = 0; i < 64; i++)
      fixture_access(m, t, ACC_LOAD, BASE + 64); /* hits */
    clock[big] = cpu->clock - t0;
    machine_free(m);
  }
  ck_assert_uint_gt(clock[0], clock[1] + 100);
}
END_TEST

/* The outstanding misses as the next access would see them: the ring from
 * its head, without those that completed by the clock (cpu_access and
 * cpu_access_quick leave them to be retired when the ring is next read).
 * done and insn have room for cpu.mshrs entries. */
static unsigned live_misses(const Cpu *cpu, uint64_t *done, uint64_t *insn)
{
  unsigned k = 0, i = cpu->mshr_tail, c = cpu->mshr_count;
  while (c && cpu->mshr_done[i] <= cpu->clock) {
    i = (i + 1) % cpu->n_mshr;
    c--;
  }
  for (; c; c--, i = (i + 1) % cpu->n_mshr, k++) {
    done[k] = cpu->mshr_done[i];
    insn[k] = cpu->mshr_insn[i];
  }
  return k;
}

/* The oldest outstanding miss's done time and ROB bound, cached in the Cpu
 * for the per-access tests, match the ring after every access. */
static void check_mshr_head(const Cpu *cpu)
{
  if (cpu->mshr_count == 0) {
    ck_assert_uint_eq(cpu->mshr_head_done, UINT64_MAX);
    ck_assert_uint_eq(cpu->mshr_rob_due, UINT64_MAX);
  } else {
    ck_assert_uint_eq(cpu->mshr_head_done, cpu->mshr_done[cpu->mshr_tail]);
    ck_assert_uint_eq(cpu->mshr_rob_due, cpu->mshr_insn[cpu->mshr_tail] + cpu->rob_size);
  }
}

START_TEST(test_mshr_head_cache)
{
  const char *sets[] = { "cache.prefetcher=none", "cpu.mshrs=3", "cpu.rob_size=16", NULL };
  Thread *t;
  Machine *m = setup(sets, &t);
  Cpu *cpu = m->cpus[0];
  check_mshr_head(cpu);
  gboolean full = FALSE, stalled = FALSE;
  unsigned drains_waited = 0;
  uint64_t x = 1;
  for (int i = 0; i < 400; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    /* Misses to new lines of the page, hits to the first, some gaps. */
    uint64_t va = (x >> 60) < 6 ? BASE + (uint64_t)(i % 64) * 64 : BASE;
    TraceRecord r = { .type = REC_ACCESS, .kind = (x >> 40) % 3 ? ACC_LOAD : ACC_STORE, .addr = va, .size = 8,
                      .gap = (uint32_t)((x >> 20) % 8) };
    uint64_t stall = cpu->ctr.c[CTR_MSHR_STALL_CYCLES];
    /* Every fill buffer taken by a miss still outstanding (the ring may
     * also hold completed ones that were not retired yet). */
    uint64_t done[16], insn[16];
    full |= live_misses(cpu, done, insn) == cpu->n_mshr;
    cpu_access(cpu, t, &r);
    stalled |= cpu->ctr.c[CTR_MSHR_STALL_CYCLES] > stall;
    check_mshr_head(cpu);
    if (i % 5 == 4) { /* cpu_drain, which looks at the outstanding misses only, against every slot of the ring */
      uint64_t all = cpu_load_dep_ready(cpu, cpu->clock, 0);
      for (unsigned j = 0; j < cpu->n_mshr; j++)
        all = MAX(all, cpu->mshr_done[j]);
      drains_waited += all > cpu->clock;
      cpu_drain(cpu);
      ck_assert_uint_eq(cpu->clock, all);
      check_mshr_head(cpu);
    }
    if (i % 64 == 63)
      memsys_flush(cpu->mem); /* the next pass misses again */
  }
  ck_assert(full);
  ck_assert(stalled);
  ck_assert_uint_gt(drains_waited, 10);
  machine_free(m);
}
END_TEST

/* Cpu.quick_key follows the shortcut, its flags and the clock's kind, or
 * (`off_ok`, after a plain cpu_access) the quick path is off. */
static const char *quick_keys_differ(const Cpu *cpu, gboolean off_ok)
{
  /* The granule of ud_key, which holds cur_asid's (~0: none). */
  uint64_t k = cpu->ud_key == ~0ULL ? ~0ULL : cpu->ud_key & ((UINT64_C(1) << 52) - 1);
  if (cpu->ud_key != ~0ULL && cpu->ud_key >> 52 != cpu->cur_asid)
    return "shortcut of another ASID";
  if (off_ok && cpu->quick_kinds == 0)
    return NULL;
  if (cpu->quick_kinds != (cpu->cpi_fixed ? ACC_STORE + 1u : 0u))
    return "quick kinds";
  if (cpu->quick_key[ACC_LOAD] != k)
    return "quick load key";
  if (cpu->quick_key[ACC_STORE] != ((cpu->ud_flags & (TLBF_W | TLBF_D)) == (TLBF_W | TLBF_D) ? k : ~0ULL))
    return "quick store key";
  return NULL;
}

/* cpu_access_quick, or cpu_access where it declines, against cpu_access
 * alone on a twin machine: the same clock, counters, last load and
 * outstanding misses after every access, over loads, stores (to clean and
 * dirty pages), dependent loads and page changes, with few fill buffers and
 * a small ROB so that both stall; with a cpi the integer clock cannot hold
 * the quick path declines every access.  Every seventh access goes to
 * cpu_access without the quick path (as the engine's loop for random
 * batches does), which must leave it off.  Flushes of the first page and of
 * everything come between accesses, and near the end a count too large for
 * the integer clock sends it to the doubles, after which the quick path
 * declines. */
static void check_quick(const char *cpi_setting, gboolean expect_quick)
{
  const char *sets[] = { "cpu.mshrs=3", "cpu.rob_size=16", cpi_setting, NULL };
  Thread *ta, *tb;
  Machine *a = setup(sets, &ta), *b = setup(sets, &tb);
  Cpu *ca = a->cpus[0], *cb = b->cpus[0];
  unsigned quick = 0, declined = 0;
  uint64_t x = 3;
  for (int i = 0; i < 3000; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    /* Mostly the first page (mapped dirty), lines of it that miss, some of
     * the next pages (faulted in clean by loads, then stored to). */
    uint64_t page = (x >> 58) < 4 ? (x >> 50) % 8 : 0;
    uint64_t va = BASE + page * 4096 + ((x >> 30) % 64) * 64;
    unsigned kr = (unsigned)((x >> 40) % 16);
    AccessKind kind = kr < 10 ? ACC_LOAD : kr < 15 ? ACC_STORE : ACC_DEP_LOAD;
    TraceRecord r = { .type = REC_ACCESS, .kind = kind, .addr = va, .size = 8, .gap = (uint32_t)((x >> 20) % 6) };
    /* The quick path's counts go through CpuQuickCounts every other
     * access, straight into the counters otherwise. */
    CpuQuickCounts counts = { 0 };
    gboolean plain = i % 7 == 3; /* as a caller that never tries the quick path */
    if (plain) {
      cpu_access(ca, ta, &r);
    } else if (cpu_access_quick(ca, &r, i % 2 ? &counts : NULL)) {
      cpu_quick_flush(ca, &counts);
      quick++;
    } else {
      cpu_access_requick(ca, ta, &r);
      declined++;
    }
    cpu_access(cb, tb, &r);
    /* One assertion per access (each costs Check a write): the first
     * difference is named. */
    const char *diff = NULL;
    uint64_t da[16], ia[16], db[16], ib[16];
    unsigned na = live_misses(ca, da, ia), nb = live_misses(cb, db, ib);
    if (ca->clock != cb->clock)
      diff = "clock";
    else if (ca->insns != cb->insns)
      diff = "insns";
    else if (ca->loads != cb->loads || memcmp(ca->load_done, cb->load_done, sizeof ca->load_done) != 0)
      diff = "load_done";
    else if (memcmp(ca->ctr.c, cb->ctr.c, sizeof ca->ctr.c) != 0)
      diff = "counters";
    else if (na != nb || memcmp(da, db, na * sizeof *da) != 0 || memcmp(ia, ib, na * sizeof *ia) != 0)
      diff = "outstanding misses";
    ck_assert_msg(diff == NULL, "access %d: %s differ (clock %" G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT ")", i,
                  diff, ca->clock, cb->clock);
    diff = quick_keys_differ(ca, plain);
    ck_assert_msg(diff == NULL, "access %d: %s", i, diff);
    if (i % 500 == 499) { /* the next accesses miss again */
      memsys_flush(ca->mem);
      memsys_flush(cb->mem);
    }
    if (i % 300 == 150) {
      cpu_flush_page(ca, ca->cur_asid, BASE);
      cpu_flush_page(cb, cb->cur_asid, BASE);
    } else if (i % 700 == 350) {
      cpu_flush_all(ca);
      cpu_flush_all(cb);
    } else if (i == 2600) {
      cpu_compute(ca, UINT64_C(1) << 33);
      cpu_compute(cb, UINT64_C(1) << 33);
      ck_assert(!ca->cpi_fixed);
    }
    diff = quick_keys_differ(ca, TRUE);
    ck_assert_msg(diff == NULL, "after access %d: %s", i, diff);
  }
  ck_assert_uint_gt(declined, 0);
  if (expect_quick)
    ck_assert_uint_gt(quick, 1000);
  else
    ck_assert_uint_eq(quick, 0);
  ck_assert_uint_gt(ca->ctr.c[CTR_MSHR_STALL_CYCLES], 0);
  ck_assert_uint_gt(ca->ctr.c[CTR_PAGE_FAULTS], 0);
  machine_free(a);
  machine_free(b);
}

START_TEST(test_quick_path_matches)
{
  check_quick("cpu.cpi=0.5", TRUE);
  check_quick("cpu.cpi=0.3", FALSE);
}
END_TEST

/* The quick keys hold the granule without the ASID: set for another
 * ASID than cur_asid they match nothing, so the quick path declines an
 * access to the same va in another address space. */
START_TEST(test_quick_key_asid)
{
  Thread *t;
  Machine *m = setup(quiet, &t);
  Cpu *cpu = m->cpus[0];
  TraceRecord st = { .type = REC_ACCESS, .kind = ACC_STORE, .addr = BASE, .size = 8 };
  TraceRecord ld = { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = BASE + 64, .size = 8 };
  cpu_access_requick(cpu, t, &st);
  ck_assert(cpu_access_quick(cpu, &ld, NULL));
  ck_assert(cpu_access_quick(cpu, &st, NULL));
  unsigned asid = cpu->cur_asid;
  cpu->cur_asid = asid + 1; /* ud_key still holds asid's granule */
  cpu_quick_keys(cpu);
  ck_assert(!cpu_access_quick(cpu, &ld, NULL));
  ck_assert(!cpu_access_quick(cpu, &st, NULL));
  cpu->cur_asid = asid;
  cpu_quick_keys(cpu);
  ck_assert(cpu_access_quick(cpu, &ld, NULL));
  machine_free(m);
}
END_TEST

/* The far stage's find: the slot of a record names the table that holds its
 * entry (as pgtable_lookup finds it), its index and level. */
static void check_slot(Thread *t, const CpuPrefetch *pf, size_t pos, uint64_t va)
{
  const CpuPrefetchSlot *s = &pf->ring[pos & (CPU_PREFETCH_RING - 1)];
  unsigned level, idx;
  const PtNode *n = pgtable_lookup(&t->mm->pt, va, &level, &idx);
  ck_assert_ptr_eq(s->e, n->e);
  ck_assert_uint_eq(s->pfn, n->pfn);
  ck_assert_uint_eq(s->level, level);
  ck_assert_uint_eq(s->idx, idx);
  ck_assert_uint_eq(s->va, va);
}

/* One record after another at `pos`, as the engine calls it (the nearer
 * stages read the page-table entries of the records before). */
static void prefetch_at(Machine *m, Thread *t, CpuPrefetch *pf, size_t pos, uint64_t va)
{
  TraceRecord r = { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = va, .size = 8 };
  cpu_prefetch(m->cpus[0], t, &r, pf, pos);
}

START_TEST(test_prefetch_slots)
{
  Thread *t;
  Machine *m = setup(quiet, &t);
  PageTable *pt = &t->mm->pt;
  const uint64_t MB2 = 2 << 20, flags = PTE_P | PTE_RW | PTE_US;
  fixture_vma(t, BASE + MB2, 8 * MB2, PROT_R | PROT_W);
  /* BASE's region has a leaf table (setup), BASE + 2M one too, BASE + 4M a
   * 2M leaf, BASE + 6M none; BASE + 1G is below an empty PUD entry. */
  ck_assert(pgtable_set(pt, BASE + MB2 + 0x5000, 1, pte_make(0x23456, flags), NULL));
  ck_assert(pgtable_set(pt, BASE + 2 * MB2, 2, pte_make(0x40000, flags | PTE_PS), NULL));
  const uint64_t vas[] = { BASE + 0x8, BASE + MB2 + 0x5010, BASE + 2 * MB2 + 0x12345, BASE + 3 * MB2 + 0x1000,
                           BASE + (1ULL << 30), BASE + MB2 + 0x7000, BASE + 0x3000 };
  CpuPrefetch *pf = cpu_prefetch_new();
  cpu_prefetch_clear(pf);
  size_t pos = 0;
  for (unsigned round = 0; round < 2; round++) { /* the second from the region array */
    for (unsigned i = 0; i < G_N_ELEMENTS(vas); i++, pos++) {
      prefetch_at(m, t, pf, pos, vas[i]);
      check_slot(t, pf, pos, vas[i]);
    }
    /* The array holds the leaf tables found (and only those: a region
     * whose walk ends above level 1 is looked up again each time). */
    for (unsigned i = 0; i < G_N_ELEMENTS(vas); i++) {
      unsigned level, idx;
      const PtNode *n = pgtable_lookup(pt, vas[i], &level, &idx);
      uint64_t region = vas[i] >> pt->g.shift[2];
      const CpuPrefetchRegion *x = &pf->region[region & (CPU_PREFETCH_REGIONS - 1)];
      gboolean held = x->key == (region << CPU_PREFETCH_EPOCH_BITS | pf->epoch);
      ck_assert_msg(held == (level == 1), "va %#" G_GINT64_MODIFIER "x: level %u, held %d", vas[i], level, held);
      if (held)
        ck_assert(x->n == n && x->e == n->e && x->pfn == n->pfn);
    }
  }
  /* A region whose leaf table was freed and made again (after another
   * table took the freed one's host memory): the new table, not the one
   * the region array had kept. */
  ck_assert_uint_eq(pgtable_clear_range(pt, BASE + MB2, BASE + 2 * MB2, NULL, NULL), 1);
  /* The slots filled before the table was freed are not read: the next
   * call empties the ring (no slot keeps its own count of freed nodes). */
  ck_assert_ptr_nonnull(pf->ring[(pos - 1) & (CPU_PREFETCH_RING - 1)].e);
  cpu_prefetch(m->cpus[0], t, NULL, pf, pos++);
  for (unsigned i = 0; i < CPU_PREFETCH_RING; i++)
    ck_assert_ptr_null(pf->ring[i].e);
  ck_assert(pgtable_set(pt, BASE + 3 * MB2, 1, pte_make(0x23458, flags), NULL));
  ck_assert(pgtable_set(pt, BASE + MB2 + 0x5000, 1, pte_make(0x23457, flags), NULL));
  prefetch_at(m, t, pf, pos, BASE + MB2 + 0x5000);
  check_slot(t, pf, pos++, BASE + MB2 + 0x5000);
  /* Another address space: its own tables, though its count of freed nodes
   * may be the same. */
  prefetch_at(m, t, pf, pos, BASE + 0x8);
  check_slot(t, pf, pos++, BASE + 0x8);
  Thread *t2 = machine_thread(m, 2, 1, 0);
  fixture_vma(t2, BASE, MB2, PROT_R | PROT_W);
  ck_assert(pgtable_set(&t2->mm->pt, BASE, 1, pte_make(0x34567, flags), NULL));
  t2->mm->pt.host.nodes_freed = pt->host.nodes_freed;
  prefetch_at(m, t2, pf, pos, BASE + 0x8);
  check_slot(t2, pf, pos++, BASE + 0x8);
  /* An address space that took the host memory of another, with as many
   * nodes freed (here: the same one, its count set back): found again after
   * cpu_prefetch_forget. */
  uint64_t count = pt->host.nodes_freed;
  prefetch_at(m, t, pf, pos, BASE + MB2 + 0x5000);
  ck_assert_uint_eq(pgtable_clear_range(pt, BASE + MB2, BASE + 2 * MB2, NULL, NULL), 1);
  ck_assert(pgtable_set(pt, BASE + 4 * MB2, 1, pte_make(0x23459, flags), NULL));
  ck_assert(pgtable_set(pt, BASE + MB2 + 0x5000, 1, pte_make(0x23457, flags), NULL));
  pt->host.nodes_freed = count;
  cpu_prefetch_forget(pf);
  prefetch_at(m, t, pf, ++pos, BASE + MB2 + 0x5000);
  check_slot(t, pf, pos++, BASE + MB2 + 0x5000);
  /* The page of the last access is not prefetched, nor is a record that is
   * no access, nor one past the end; the nearer stages then find nothing. */
  fixture_access(m, t, ACC_LOAD, BASE);
  cpu_prefetch_clear(pf);
  prefetch_at(m, t, pf, pos, BASE + 0x40);
  ck_assert_ptr_null(pf->ring[pos++ & (CPU_PREFETCH_RING - 1)].e);
  TraceRecord c = { .type = REC_COMPUTE, .len = 10 };
  cpu_prefetch(m->cpus[0], t, &c, pf, pos);
  ck_assert_ptr_null(pf->ring[pos++ & (CPU_PREFETCH_RING - 1)].e);
  for (unsigned i = 0; i < CPU_PREFETCH_RING; i++) /* the nearer stages of the records above */
    cpu_prefetch(m->cpus[0], t, NULL, pf, pos++);
  for (unsigned i = 0; i < CPU_PREFETCH_RING; i++)
    ck_assert_ptr_null(pf->ring[i].e);
  cpu_prefetch_free(pf);
  machine_free(m);
}
END_TEST

/* The path after the shortcut missed through ArchOps.translate, as the
 * core takes it for an architecture without an l1_miss of its own. */
static gboolean generic_l1_miss(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t, uint64_t *pfn,
                                uint8_t *flags)
{
  return cpu_translate_miss(cpu, th, va, kind, t, pfn, flags, cpu->arch->translate);
}

/* Whether two TLBs of one geometry hold the same tags in the same order. */
static gboolean same_tlb(const Tlb *a, const Tlb *b)
{
  size_t n = (size_t)a->sets * a->ways;
  return memcmp(a->tags, b->tags, n * sizeof *a->tags) == 0 && memcmp(a->stamp, b->stamp, n * sizeof *a->stamp) == 0;
}

/* The tables and TLB of ppc64 (arch/ppc64), which the core does not see:
 * the TLB after every access, the HPT at the end. */
static const char *ppc64_differ(const Cpu *ca, const Cpu *cb, gboolean hpt)
{
  const Tlb *ta = ppc64_cpu_tlb(ca), *tb = ppc64_cpu_tlb(cb);
  if (memcmp(ta->tags, tb->tags, ta->sets * ta->ways * sizeof *ta->tags) != 0 ||
      memcmp(ta->stamp, tb->stamp, ta->sets * ta->ways * sizeof *ta->stamp) != 0)
    return "ppc64 TLB";
  const Ppc64Slb *sa = ppc64_cpu_slb(ca), *sb = ppc64_cpu_slb(cb);
  if (sa->n != sb->n || memcmp(sa->e, sb->e, sa->n * sizeof *sa->e) != 0)
    return "SLB";
  const Ppc64Hpt *ha = ppc64_cpu_hpt(ca), *hb = ppc64_cpu_hpt(cb);
  for (uint64_t g = 0; hpt && g <= ppc64_hpt_mask(ha); g++)
    for (unsigned i = 0; i < PPC64_HPTES_PER_GROUP; i++) {
      Ppc64Hpte ea = ppc64_hpt_get(ha, g, i), eb = ppc64_hpt_get(hb, g, i);
      if (ea.v != eb.v || ea.r != eb.r)
        return "HPT";
    }
  return NULL;
}

/* An architecture's l1_miss (x86_64's or ppc64's, with its translation
 * inlined) against the generic path on a twin machine: the same clock,
 * counters (the second level's hits and misses among them: x86's second
 * level is seen only through them) and L1 DTLB and ITLB contents (on ppc64
 * also the TLB and SLB, and the HPT at the end) after every access, over loads, stores, fetches, dependent
 * loads, first touches (faults and retries, hash faults), a read-only and
 * an unmapped range (SIGSEGV), addresses the hardware refuses
 * (non-canonical; above the user limit), huge pages (kernel touch, the
 * large refill) and small TLBs that miss and evict, at `base`.  `page` is
 * the base page size, for the hot set; `bad` an address the hardware refuses; ppc64
 * adds one page in each of `segments` 1T segments below base (256M ones too), more
 * than the SLB holds. */
static void check_l1_miss(const char *preset, const char *const *extra, uint64_t base, uint64_t page,
                          uint64_t bad, unsigned segments)
{
  const char *sets[16] = { "tlb.l1d_4k_entries=8", "tlb.l1d_4k_ways=2", "tlb.stlb_entries=64",
                           "tlb.stlb_ways=4", "cpu.page_walkers=2" };
  unsigned n = 5;
  for (unsigned i = 0; extra[i]; i++)
    sets[n++] = extra[i];
  Thread *ta, *tb;
  Machine *a = fixture_machine(preset, sets), *b = fixture_machine(preset, sets);
  gboolean ppc64 = strcmp(a->arch->name, "ppc64") == 0;
  ta = fixture_thread(a, 1);
  tb = fixture_thread(b, 1);
  const uint64_t seg = 1ULL << 40;
  for (int i = 0; i < 2; i++) {
    Thread *t = i ? tb : ta;
    fixture_vma(t, base, 16ULL << 20, PROT_R | PROT_W | PROT_X);
    fixture_vma(t, base + (32ULL << 20), 1ULL << 20, PROT_R);
    for (unsigned k = 1; k <= segments; k++)
      fixture_vma(t, base - k * seg, page, PROT_R | PROT_W);
  }
  Cpu *ca = a->cpus[0], *cb = b->cpus[0];
  ck_assert_ptr_nonnull(a->arch->l1_miss);
  ck_assert(ca->l1_miss == a->arch->l1_miss);
  cb->l1_miss = generic_l1_miss;
  /* Two pages mapped already, used in turn before anything faults: their
   * L1 refills come from the first attempt, not from a retry after a
   * fault (which takes the generic path). */
  uint64_t pre = base + (48ULL << 20);
  for (int i = 0; i < 2; i++) {
    Thread *t = i ? tb : ta;
    fixture_vma(t, pre, 2 * page, PROT_R | PROT_W);
    for (uint64_t k = 0; k < 2; k++)
      ck_assert(pgtable_set(&t->mm->pt, pre + k * page, 1,
                            pte_make(0x12340 + k * (page >> 12), PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D), NULL));
  }
  for (unsigned k = 0; k < 3; k++) {
    TraceRecord r = { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = pre + (k % 2) * page, .size = 8 };
    cpu_access(ca, ta, &r);
    cpu_access(cb, tb, &r);
    ck_assert_uint_eq(ca->clock, cb->clock);
    ck_assert_msg(memcmp(ca->ctr.c, cb->ctr.c, sizeof ca->ctr.c) == 0, "%s: counters differ", preset);
  }
  ck_assert_uint_eq(ca->ctr.c[CTR_PAGE_FAULTS], 0);
  uint64_t x = 11;
  for (int i = 0; i < 6000; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    unsigned where = (unsigned)((x >> 58) % 32);
    uint64_t va = base + ((x >> 20) % (16ULL << 20));
    if (where >= 12) /* 48 pages: more than the L1 holds, fewer than the STLB */
      va = base + ((x >> 20) % 48) * 5 * page + ((x >> 8) % page);
    else if (where == 0)
      va = base + (32ULL << 20) + ((x >> 20) % (2ULL << 20)); /* read-only, then unmapped */
    else if (where == 1)
      va = bad + ((x >> 20) % 4096);
    else if (where <= 3 && segments)
      va = base - (1 + (x >> 20) % segments) * seg + ((x >> 8) % page);
    unsigned kr = (unsigned)((x >> 40) % 16);
    AccessKind kind = kr < 8 ? ACC_LOAD : kr < 13 ? ACC_STORE : kr < 15 ? ACC_IFETCH : ACC_DEP_LOAD;
    TraceRecord r = { .type = REC_ACCESS, .kind = kind, .addr = va, .size = 8 };
    cpu_access(ca, ta, &r);
    cpu_access(cb, tb, &r);
    const char *diff = NULL;
    if (ca->clock != cb->clock)
      diff = "clock";
    else if (memcmp(ca->ctr.c, cb->ctr.c, sizeof ca->ctr.c) != 0)
      diff = "counters";
    else if (!same_tlb(ca->l1d[0], cb->l1d[0]))
      diff = "L1 DTLB";
    else if (!same_tlb(ca->l1i[0], cb->l1i[0]))
      diff = "L1 ITLB";
    else if (ppc64)
      diff = ppc64_differ(ca, cb, i == 5999);
    ck_assert_msg(diff == NULL, "%s access %d: %s differ (clock %" G_GUINT64_FORMAT " against %" G_GUINT64_FORMAT ")",
                  preset, i, diff, ca->clock, cb->clock);
  }
  /* Every branch was taken: walks, faults, SIGSEGVs, second-level hits;
   * huge pages when THP is on; on ppc64 hash faults, HPTE inserts and SLB
   * misses. */
  ck_assert_uint_gt(ca->ctr.c[CTR_PAGE_WALKS], 100);
  ck_assert_uint_gt(ca->ctr.c[CTR_PAGE_FAULTS], 10);
  ck_assert_uint_gt(ca->ctr.c[CTR_SEGV], 10);
  ck_assert_uint_gt(ca->ctr.c[CTR_STLB_HITS], 20);
  if (g_strv_contains(sets, "thp.enabled=always"))
    ck_assert_uint_gt(ca->ctr.c[CTR_THP_FAULT_ALLOC] + ca->ctr.c[CTR_THP_ZERO_PAGE_MAPPED], 0);
  if (ppc64) {
    ck_assert_uint_gt(ca->ctr.c[CTR_HASH_FAULTS], 10);
    ck_assert_uint_gt(ca->ctr.c[CTR_HPTE_INSERTS], 10);
    ck_assert_uint_gt(ca->ctr.c[CTR_SLB_MISSES], 20);
  }
  machine_free(a);
  machine_free(b);
}

START_TEST(test_arch_l1_miss_matches)
{
  const char *x86[] = { "tlb.l1d_2m_entries=2", "tlb.l1d_2m_ways=2", NULL, NULL };
  x86[2] = "thp.enabled=never";
  check_l1_miss("skylake", x86, BASE, 4096, 1ULL << 47, 0);
  x86[2] = "thp.enabled=always";
  check_l1_miss("skylake", x86, BASE, 4096, 1ULL << 47, 0);
  check_l1_miss("zen4", x86, BASE, 4096, 1ULL << 47, 0);
}
END_TEST

/* The same for ppc64 hash: 64K pages, 16M THP, 4K pages, 256M segments. */
START_TEST(test_ppc64_l1_miss_matches)
{
  const char *never[] = { "thp.enabled=never", NULL }, *always[] = { "thp.enabled=always", NULL };
  const char *k4[] = { "thp.enabled=never", "mm.base_page_size=4K", NULL };
  const char *seg256m[] = { "thp.enabled=always", "ppc64.segment_1t=false", NULL };
  uint64_t limit64k = ppc64_user_limit(16), limit4k = ppc64_user_limit(12);
  check_l1_miss("power7", never, BASE, 65536, limit64k, 40);
  check_l1_miss("power7", always, BASE, 65536, limit64k, 40);
  check_l1_miss("power9-hash", never, BASE, 65536, limit64k, 40);
  check_l1_miss("power9-hash", seg256m, BASE, 65536, limit64k, 40);
  /* 4K pages: the user limit is 64T, below BASE */
  check_l1_miss("power7", k4, 48ULL << 40, 4096, limit4k, 40);
}
END_TEST

static Suite *cpu_suite(void)
{
  Suite *s = suite_create("cpu");
  TCase *tc = tcase_create("timing");
  tcase_add_test(tc, test_cpi);
  tcase_add_test(tc, test_cpi_integer_clock_is_exact);
  tcase_add_test(tc, test_dependent_loads_serialise);
  tcase_add_test(tc, test_dependent_load_waits_for_its_producer);
  tcase_add_test(tc, test_l1_refill_after_fault);
  tcase_add_test(tc, test_dirty_assist);
  tcase_add_test(tc, test_fault_then_retry);
  tcase_add_test(tc, test_large_page_after_base_pages);
  tcase_add_test(tc, test_walkers_limit_overlap);
  tcase_add_test(tc, test_rob_bounds_runahead);
  tcase_add_test(tc, test_mshr_head_cache);
  suite_add_tcase(s, tc);
  tc = tcase_create("prefetch");
  tcase_add_test(tc, test_prefetch_slots);
  suite_add_tcase(s, tc);
  tc = tcase_create("quick");
  tcase_add_test(tc, test_quick_path_matches);
  tcase_add_test(tc, test_quick_key_asid);
  suite_add_tcase(s, tc);
  tc = tcase_create("l1_miss");
  tcase_add_test(tc, test_arch_l1_miss_matches);
  tcase_add_test(tc, test_ppc64_l1_miss_matches);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(cpu_suite)
