/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_kcompactd.c - kcompactd (kernel/kcompactd.c, mm/compaction.c 6.12):
 * a THP fault under thp.defrag=defer that finds no free 2M block falls back
 * to 4K and wakes its node's daemon, which compacts in the background so
 * that a later fault gets a huge page; which defrag modes and VMAs wake it,
 * that an order-0 or unsuitable wake does nothing, and that a 3.8 kernel has
 * no daemon.  The kernel alone, on tests/kernel_fixture.h's stub CPUs.
 */
#include "config.h"
#include "fault.h"
#include "kcompactd.h"
#include "kernel_fixture.h"

#define BASE 0x7f0000000000ULL
#define SZ_2M (UINT64_C(2) << 20)

/* Every pageblock of DMA32 and Normal holds one movable background page: no
 * free 2M block until compaction moves some, and compaction can move them
 * all.  With 8G the lowmem reserve keeps a huge allocation out of the
 * (unfragmented) DMA zone. */
#define FRAGMENTED "thp.enabled=always", "mem.fragmentation=1", "mem.fragmentation_movable=1", "machine.mem_per_node=8G"

static uint64_t ctr_sum(const KernelFixture *f, CounterId id)
{
  uint64_t n = 0;
  for (unsigned i = 0; i < f->n_cpus; i++)
    n += f->cpus[i]->ctr.c[id];
  return n;
}

static void write_fault(KernelFixture *f, Thread *t, uint64_t va)
{
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(f->k, &f->cpus[0]->kc, t->mm, va, ACC_STORE, &cycles), FAULT_MAPPED);
  f->cpus[0]->clock += cycles;
}

/* defer: the first fault falls back and wakes kcompactd at the fault's
 * time; its run compacts node 0 on the node's last CPU; the next fault in
 * a new 2M range gets a THP. */
START_TEST(test_defer_wakes_kcompactd_and_a_later_fault_gets_a_thp)
{
  const char *sets[] = { FRAGMENTED, "thp.defrag=defer", NULL };
  KernelFixture *f = kfix_new("skylake", sets);
  Thread *t = kfix_thread(f, 1);
  fixture_vma(t, BASE, 8 * SZ_2M, PROT_R | PROT_W);
  Kcompactd *kd = f->k->kcompactd;
  ck_assert_uint_eq(kcompactd_next_wake(kd), UINT64_MAX);
  f->cpus[0]->clock = 1000;
  write_fault(f, t, BASE);
  ck_assert_uint_eq(ctr_sum(f, CTR_THP_FAULT_FALLBACK), 1);
  ck_assert_uint_eq(ctr_sum(f, CTR_THP_FAULT_ALLOC), 0);
  /* hugepages-2048kB/stats/anon_fault_fallback counts the PMD size too (6.12). */
  ck_assert_uint_eq(ctr_sum(f, CTR_MTHP_2048KB_ANON_FAULT_FALLBACK), 1);
  ck_assert_uint_eq(ctr_sum(f, CTR_COMPACT_STALL), 0); /* defer never compacts directly */
  ck_assert_uint_eq(kcompactd_next_wake(kd), 1000);
  /* Not due before its time; then one run. */
  kcompactd_run(kd, 999);
  ck_assert_uint_eq(ctr_sum(f, CTR_COMPACT_DAEMON_WAKE), 0);
  KfCpu *last = f->cpus[f->n_cpus - 1];
  uint64_t before = last->clock;
  kcompactd_run(kd, f->cpus[0]->clock);
  ck_assert_uint_eq(kcompactd_next_wake(kd), UINT64_MAX);
  ck_assert_uint_eq(last->ctr.c[CTR_COMPACT_DAEMON_WAKE], 1);
  ck_assert_uint_ge(last->ctr.c[CTR_COMPACT_MIGRATED], 1);
  ck_assert_uint_gt(last->ctr.c[CTR_COMPACT_DAEMON_MIGRATE_SCANNED], 0);
  ck_assert_uint_gt(last->ctr.c[CTR_COMPACT_DAEMON_FREE_SCANNED], 0);
  ck_assert_uint_gt(last->ctr.c[CTR_COMPACT_DAEMON_CYCLES], 0);
  ck_assert_uint_eq(last->clock - before, last->ctr.c[CTR_COMPACT_DAEMON_CYCLES]); /* stalled its CPU */
  ck_assert_uint_eq(ctr_sum(f, CTR_COMPACT_STALL), 0);
  write_fault(f, t, BASE + SZ_2M);
  ck_assert_uint_eq(ctr_sum(f, CTR_THP_FAULT_ALLOC), 1);
  ck_assert_uint_eq(ctr_sum(f, CTR_MTHP_2048KB_ANON_FAULT_ALLOC), 1);
  fixture_check_buddy(f->k);
  kfix_free(f);
}
END_TEST

/* never: the same faults wake nothing and both fall back. */
START_TEST(test_never_wakes_nothing)
{
  const char *sets[] = { FRAGMENTED, "thp.defrag=never", NULL };
  KernelFixture *f = kfix_new("skylake", sets);
  Thread *t = kfix_thread(f, 1);
  fixture_vma(t, BASE, 8 * SZ_2M, PROT_R | PROT_W);
  write_fault(f, t, BASE);
  ck_assert_uint_eq(kcompactd_next_wake(f->k->kcompactd), UINT64_MAX);
  kcompactd_run(f->k->kcompactd, UINT64_MAX - 1);
  write_fault(f, t, BASE + SZ_2M);
  ck_assert_uint_eq(ctr_sum(f, CTR_THP_FAULT_FALLBACK), 2);
  ck_assert_uint_eq(ctr_sum(f, CTR_THP_FAULT_ALLOC), 0);
  ck_assert_uint_eq(ctr_sum(f, CTR_COMPACT_DAEMON_WAKE), 0);
  kfix_free(f);
}
END_TEST

/* defer+madvise: a VMA without MADV_HUGEPAGE wakes kcompactd; a madvised
 * one compacts directly (GFP_TRANSHUGE) and wakes nothing. */
START_TEST(test_defer_madvise_wakes_for_plain_vmas_only)
{
  const char *sets[] = { FRAGMENTED, "thp.defrag=defer+madvise", NULL };
  KernelFixture *f = kfix_new("skylake", sets);
  Thread *t = kfix_thread(f, 1);
  Vma hv = { .start = BASE, .end = BASE + 4 * SZ_2M, .prot = PROT_R | PROT_W, .thp = VMA_THP_HUGEPAGE };
  mm_insert_vma(t->mm, &hv);
  write_fault(f, t, BASE);
  ck_assert_uint_eq(ctr_sum(f, CTR_THP_FAULT_ALLOC), 1);
  ck_assert_uint_ge(ctr_sum(f, CTR_COMPACT_STALL), 1);
  ck_assert_uint_eq(kcompactd_next_wake(f->k->kcompactd), UINT64_MAX);
  fixture_vma(t, BASE + 8 * SZ_2M, 4 * SZ_2M, PROT_R | PROT_W);
  write_fault(f, t, BASE + 8 * SZ_2M);
  ck_assert_uint_eq(ctr_sum(f, CTR_THP_FAULT_FALLBACK), 1);
  ck_assert_uint_ne(kcompactd_next_wake(f->k->kcompactd), UINT64_MAX);
  kfix_free(f);
}
END_TEST

/* wakeup_kcompactd: an order-0 request, or a node that already has a free
 * block of the order (kcompactd_node_suitable), wakes nothing; a wake of a
 * daemon already woken only raises its order. */
START_TEST(test_wakeup_rules)
{
  const char *fresh[] = { "thp.defrag=defer", NULL };
  KernelFixture *f = kfix_new("skylake", fresh);
  Kcompactd *kd = f->k->kcompactd;
  kcompactd_wakeup(kd, &f->cpus[0]->kc, 0, 9);
  ck_assert_uint_eq(kcompactd_next_wake(kd), UINT64_MAX); /* a fresh node has 2M blocks */
  kfix_free(f);
  const char *sets[] = { FRAGMENTED, "thp.defrag=defer", NULL };
  f = kfix_new("skylake", sets);
  kd = f->k->kcompactd;
  kcompactd_wakeup(kd, &f->cpus[0]->kc, 0, 0);
  ck_assert_uint_eq(kcompactd_next_wake(kd), UINT64_MAX);
  f->cpus[0]->clock = 50;
  kcompactd_wakeup(kd, &f->cpus[0]->kc, 0, 9);
  f->cpus[0]->clock = 70;
  kcompactd_wakeup(kd, &f->cpus[0]->kc, 0, 9);
  ck_assert_uint_eq(kcompactd_next_wake(kd), 50);
  kcompactd_run(kd, 70);
  ck_assert_uint_eq(ctr_sum(f, CTR_COMPACT_DAEMON_WAKE), 1);
  kfix_free(f);
}
END_TEST

/* kcompactd.cpu names the CPU charged; 3.8 has no kcompactd (4.6). */
START_TEST(test_cpu_setting_and_old_kernel)
{
  const char *sets[] = { FRAGMENTED, "thp.defrag=defer", "kcompactd.cpu=0", NULL };
  KernelFixture *f = kfix_new("skylake", sets);
  kcompactd_wakeup(f->k->kcompactd, &f->cpus[0]->kc, 0, 9);
  kcompactd_run(f->k->kcompactd, 0);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_COMPACT_DAEMON_WAKE], 1);
  kfix_free(f);
  const char *old[] = { FRAGMENTED, "thp.defrag=defer", "kernel.version=3.8", NULL };
  f = kfix_new("skylake", old);
  kcompactd_wakeup(f->k->kcompactd, &f->cpus[0]->kc, 0, 9);
  ck_assert_uint_eq(kcompactd_next_wake(f->k->kcompactd), UINT64_MAX);
  kfix_free(f);
}
END_TEST

/* A CPU the machine lacks is refused at the edge, naming the setting. */
START_TEST(test_bad_cpu_refused)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, "skylake", &err));
  ck_assert(settings_set(s, "kcompactd.cpu", "4096", "test", &err));
  KernelArch arch = { .name = "x86_64", .user_va_limit = UINT64_C(1) << 47 };
  pgtable_geometry_x86_64(&arch.geo, 4);
  Kernel *k = kernel_new(s, &arch, &kfix_hooks, NULL, &err);
  ck_assert_ptr_null(k);
  ck_assert_ptr_nonnull(strstr(err->message, "kcompactd.cpu"));
  g_error_free(err);
}
END_TEST

static Suite *kcompactd_suite(void)
{
  Suite *s = suite_create("kcompactd");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_defer_wakes_kcompactd_and_a_later_fault_gets_a_thp);
  tcase_add_test(tc, test_never_wakes_nothing);
  tcase_add_test(tc, test_defer_madvise_wakes_for_plain_vmas_only);
  tcase_add_test(tc, test_wakeup_rules);
  tcase_add_test(tc, test_cpu_setting_and_old_kernel);
  tcase_add_test(tc, test_bad_cpu_refused);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(kcompactd_suite)
