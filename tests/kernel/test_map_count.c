/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_map_count.c - vm.max_map_count (kernel/kernel.c over_map_count): the
 * calls of a trace that would take a process past the limit fail with
 * ENOMEM as Linux 6.12's do_mmap, split_vma and vms_gather_munmap_vmas
 * make them fail, change nothing, and say so (syscalls_failed counted, not
 * segv, which counts faulting accesses; event enomem).
 */
#include "config.h"
#include "kernel_fixture.h"

#define BASE UINT64_C(0x10000000)
#define PG UINT64_C(0x1000)

static void call(KernelFixture *f, Thread *t, TraceRecordType type, uint64_t addr, uint64_t len, uint8_t prot)
{
  TraceRecord r = { .type = type, .pid = t->pid, .addr = addr, .len = len, .prot = prot };
  kernel_syscall(f->k, f->kcpus[0], t->mm, &r);
}

/* Page i of a run of distinct one-page mappings (alternating protection:
 * no two merge). */
static void map_page(KernelFixture *f, Thread *t, uint64_t i)
{
  call(f, t, REC_MMAP, BASE + i * PG, PG, i % 2 ? PROT_R : PROT_R | PROT_W);
}

/* With the default 65,530, 65,531 distinct mappings succeed and the
 * 65,532nd fails: do_mmap of 6.12 tests map_count > sysctl_max_map_count. */
START_TEST(test_default_limit)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_thread(f, 1);
  ck_assert_uint_eq(f->k->max_map_count, 65530);
  for (uint64_t i = 0; i < 65531; i++)
    map_page(f, t, i);
  ck_assert_uint_eq(mm_vma_count(t->mm), 65531);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 0);
  map_page(f, t, 65531);
  ck_assert_uint_eq(mm_vma_count(t->mm), 65531);
  ck_assert_ptr_null(mm_find_vma(t->mm, BASE + 65531 * PG));
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 1);
  /* An mmap that merges with its neighbour adds no VMA, but do_mmap
   * refuses it all the same: the test comes before the merge. */
  call(f, t, REC_MMAP, BASE + 65531 * PG, PG, PROT_R | PROT_W);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 2);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SEGV], 0);
  /* munmap of a whole VMA needs no split and goes through. */
  call(f, t, REC_MUNMAP, BASE, PG, 0);
  ck_assert_uint_eq(mm_vma_count(t->mm), 65530);
  kfix_free(f);
}
END_TEST

/* Splits: mprotect's split_vma needs map_count < max for each split;
 * munmap refuses only a hole punched inside one VMA (a split in three). */
START_TEST(test_splits_at_the_limit)
{
  const char *sets[] = { "vm.max_map_count=4", NULL };
  KernelFixture *f = kfix_new("skylake", sets);
  Thread *t = kfix_thread(f, 1);
  call(f, t, REC_MMAP, BASE, 16 * PG, PROT_R | PROT_W); /* 1 VMA */
  call(f, t, REC_MPROTECT, BASE + 4 * PG, 4 * PG, PROT_R); /* two splits: 3 VMAs */
  ck_assert_uint_eq(mm_vma_count(t->mm), 3);
  /* [8, 16) rw: a hole at [10, 11) would make 4 VMAs of 3 < 4: allowed. */
  call(f, t, REC_MUNMAP, BASE + 10 * PG, PG, 0);
  ck_assert_uint_eq(mm_vma_count(t->mm), 4);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 0);
  /* Now at 4: a further hole inside [11, 16) fails, nothing changes. */
  call(f, t, REC_MUNMAP, BASE + 12 * PG, PG, 0);
  ck_assert_uint_eq(mm_vma_count(t->mm), 4);
  ck_assert_ptr_nonnull(mm_find_vma(t->mm, BASE + 12 * PG));
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 1);
  /* mprotect that needs a split fails; one that changes nothing, or the
   * whole of a VMA, needs none and goes through. */
  call(f, t, REC_MPROTECT, BASE + 12 * PG, PG, PROT_R);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 2);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE + 12 * PG)->prot, PROT_R | PROT_W);
  call(f, t, REC_MPROTECT, BASE + 12 * PG, PG, PROT_R | PROT_W);
  call(f, t, REC_MPROTECT, BASE + 11 * PG, 5 * PG, PROT_R);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 2);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE + 12 * PG)->prot, PROT_R);
  /* An mmap over the middle of a VMA must unmap a piece of it first: a
   * split in three, refused at the limit. */
  call(f, t, REC_MMAP, BASE + 13 * PG, PG, PROT_R | PROT_W);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 3);
  ck_assert_uint_eq(mm_vma_count(t->mm), 4);
  /* MADV_DONTNEED splits no VMA: allowed at the limit. */
  TraceRecord r = { .type = REC_MADVISE, .pid = 1, .addr = BASE + 13 * PG, .len = PG, .arg = ADV_DONTNEED };
  kernel_syscall(f->k, f->kcpus[0], t->mm, &r);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], 3);
  ck_assert_uint_eq(mm_vma_count(t->mm), 4);
  kfix_free(f);
}
END_TEST

static Suite *map_count_suite(void)
{
  Suite *s = suite_create("map_count");
  TCase *tc = tcase_create("limit");
  tcase_add_test(tc, test_default_limit);
  tcase_add_test(tc, test_splits_at_the_limit);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(map_count_suite)
