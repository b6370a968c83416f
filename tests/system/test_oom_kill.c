/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the OOM killer (kernel/oom_kill.c): oom_badness over a
 * hand-built set of processes and select_bad_process's choice and tie rule;
 * the teardown of a victim giving every frame back (4K pages, a THP with its
 * deposited table, a hugetlb page, page tables and the root); and the fault
 * path under mem.oom_policy=kill: another process killed and the fault run
 * again, the faulting process itself killed, and no victim at all (out of
 * memory as under fail).
 */
#include "config.h"
#include "fault.h"
#include "khugepaged.h"
#include "hugetlb.h"
#include "machine_fixture.h"
#include "numa_balance.h"
#include "oom_kill.h"

#define BASE 0x7f0000000000ULL
#define MB (UINT64_C(1) << 20)

static const char *const base_pages[] = { "thp.enabled=never", "mem.oom_policy=kill", NULL };

/* Store to n base pages from va on, each faulted on cpu. */
static void store_pages(Kernel *k, Cpu *cpu, Thread *t, uint64_t va, unsigned n)
{
  uint64_t cycles;
  for (unsigned i = 0; i < n; i++)
    ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, va + i * 4096, ACC_STORE, &cycles), FAULT_MAPPED);
}

/* Take every free frame, as the kernel's own memory would (slab, page
 * cache): nobody's RSS, so no victim frees it. */
static GArray *take_all(Kernel *k)
{
  GArray *held = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  uint64_t pfn;
  while (physmem_alloc(k->pm, 0, 0, MT_UNMOVABLE, &pfn))
    g_array_append_val(held, pfn);
  return held;
}

/* Give back n of the frames take_all took. */
static void give_back(Kernel *k, GArray *held, unsigned n)
{
  for (unsigned i = 0; i < n; i++) {
    physmem_release(k->pm, g_array_index(held, uint64_t, held->len - 1), 0);
    g_array_set_size(held, held->len - 1);
  }
}

/* Processes 1 and 2, each with a 1M rw VMA at BASE (2 is current on CPU 0);
 * then every free frame taken but `left`, which the caller gets back. */
static GArray *two_processes_in(Machine *m, unsigned left, Thread **t1, Thread **t2)
{
  *t1 = fixture_thread(m, 1);
  fixture_vma(*t1, BASE, MB, PROT_R | PROT_W);
  *t2 = fixture_thread(m, 2);
  fixture_vma(*t2, BASE, MB, PROT_R | PROT_W);
  GArray *held = take_all(m->k);
  give_back(m->k, held, left);
  return held;
}

/* Badness = resident pages + page tables below the root.  Each process's
 * pages lie in one 2M range: its tables are a PDPT, a PD and a PT (3). */
START_TEST(test_badness_and_choice)
{
  Machine *m = fixture_machine("skylake", base_pages);
  Kernel *k = m->k;
  Cpu *cpu = m->cpus[0];
  Thread *t1 = fixture_thread(m, 1);
  fixture_vma(t1, BASE, MB, PROT_R | PROT_W);
  store_pages(k, cpu, t1, BASE, 3);
  Thread *t2 = fixture_thread(m, 2);
  fixture_vma(t2, BASE, MB, PROT_R | PROT_W);
  store_pages(k, cpu, t2, BASE, 1);
  uint64_t cycles;
  /* A read maps the zero page: in no one's RSS (get_mm_rss). */
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t2->mm, BASE + 4096, ACC_LOAD, &cycles), FAULT_MAPPED);
  Thread *t3 = fixture_thread(m, 3);
  fixture_vma(t3, BASE, MB, PROT_R | PROT_W);
  store_pages(k, cpu, t3, BASE, 3);
  Thread *t4 = fixture_thread(m, 4); /* nothing mapped: its root only */

  uint64_t rss, pt;
  ck_assert_uint_eq(oom_badness(k, t1->mm, &rss, &pt), 6);
  ck_assert_uint_eq(rss, 3);
  ck_assert_uint_eq(pt, 3);
  ck_assert_uint_eq(oom_badness(k, t2->mm, &rss, &pt), 4);
  ck_assert_uint_eq(rss, 1);
  ck_assert_uint_eq(t2->mm->rss_pages, 1); /* the zero page is no RSS here either */
  ck_assert_uint_eq(oom_badness(k, t3->mm, NULL, NULL), 6);
  ck_assert_uint_eq(oom_badness(k, t4->mm, NULL, NULL), 0);
  /* 1 and 3 tie at 6: the later created, 3, as for_each_process meets it last. */
  ck_assert_ptr_eq(oom_select_bad_process(k), t3->mm);
  /* Kill 3 (on the CPU now running 4): then 1 leads, and 3 scores nothing. */
  ck_assert_ptr_eq(oom_kill(k, &cpu->kc, 4, OOM_TRIGGER_FAULT), t3->mm);
  ck_assert(t3->mm->oom_killed);
  ck_assert_uint_eq(oom_badness(k, t3->mm, NULL, NULL), 0);
  ck_assert_ptr_eq(oom_select_bad_process(k), t1->mm);
  OomKill *o = &g_array_index(k->oom_kills, OomKill, 0);
  ck_assert_uint_eq(o->pid, 3);
  ck_assert_uint_eq(o->by_pid, 4);
  ck_assert_uint_eq(o->badness, 6);
  ck_assert_uint_eq(o->freed_pages, 3 + 3 + 1); /* pages, tables, root */
  ck_assert_uint_eq(k->oom_kill_count, 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_OOM_KILL], 1);
  /* Only 4, scoring 0, left after 1 and 2: it is chosen all the same
   * (Linux 5.9 on), and then no victim is left. */
  ck_assert_ptr_eq(oom_kill(k, &cpu->kc, 4, OOM_TRIGGER_FAULT), t1->mm);
  ck_assert_ptr_eq(oom_kill(k, &cpu->kc, 4, OOM_TRIGGER_FAULT), t2->mm);
  ck_assert_uint_eq(oom_badness(k, t4->mm, NULL, NULL), 0);
  ck_assert_ptr_eq(oom_select_bad_process(k), t4->mm);
  ck_assert_ptr_eq(oom_kill(k, &cpu->kc, 4, OOM_TRIGGER_FAULT), t4->mm);
  ck_assert_ptr_null(oom_select_bad_process(k));
  machine_free(m);
}
END_TEST

/* A THP counts its 512 frames, and its deposited table counts as a page
 * table: PDPT + PD + deposited PT = 3. */
START_TEST(test_badness_thp)
{
  static const char *const thp[] = { "thp.enabled=always", "mem.oom_policy=kill", NULL };
  Machine *m = fixture_machine("skylake", thp);
  Thread *t = fixture_thread(m, 1);
  fixture_vma(t, BASE, 4 * MB, PROT_R | PROT_W);
  store_pages(m->k, m->cpus[0], t, BASE, 1);
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_THP_FAULT_ALLOC], 1);
  uint64_t rss, pt;
  ck_assert_uint_eq(oom_badness(m->k, t->mm, &rss, &pt), 515);
  ck_assert_uint_eq(rss, 512);
  ck_assert_uint_eq(pt, 3);
  machine_free(m);
}
END_TEST

/* exit_mmap gives back every frame: free pages (buddy and pool) after the
 * kill equal those before the process existed; the buddy lists stay sound;
 * the mm is off khugepaged's list, holds no table, and its thread is off
 * its CPU. */
START_TEST(test_teardown_returns_every_frame)
{
  static const char *const mixed[] = { "thp.enabled=always", "hugetlb.nr_hugepages=2", "mem.oom_policy=kill", NULL };
  Machine *m = fixture_machine("skylake", mixed);
  Kernel *k = m->k;
  Cpu *cpu = m->cpus[0];
  uint64_t free0 = fixture_free_pages(k), pool0 = hugetlb_free_count(k->hugetlb, HPAGE_2M);
  Thread *t = fixture_thread(m, 1);
  /* A THP region, a 4K region (no THP by advice) and a hugetlb region. */
  TraceRecord mm = { .type = REC_MMAP, .addr = BASE, .len = 4 * MB, .prot = PROT_R | PROT_W };
  kernel_syscall(k, &cpu->kc, t->mm, &mm);
  TraceRecord nohuge = { .type = REC_MADVISE, .addr = BASE + 2 * MB, .len = 2 * MB, .arg = ADV_NOHUGEPAGE };
  kernel_syscall(k, &cpu->kc, t->mm, &nohuge);
  TraceRecord huge = { .type = REC_MMAP, .addr = BASE + 1024 * MB, .len = 2 * MB, .prot = PROT_R | PROT_W,
                       .flags = MAP_F_HUGETLB };
  kernel_syscall(k, &cpu->kc, t->mm, &huge);
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE, ACC_STORE, &cycles), FAULT_MAPPED);          /* THP */
  store_pages(k, cpu, t, BASE + 2 * MB, 5);                                                       /* 4K */
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 2 * MB + 64 * 1024, ACC_LOAD, &cycles), FAULT_MAPPED); /* zero page */
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t->mm, BASE + 1024 * MB, ACC_STORE, &cycles), FAULT_MAPPED); /* hugetlb */
  ck_assert_uint_eq(cpu->ctr.c[CTR_THP_FAULT_ALLOC], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_HUGETLB_FAULTS], 1);
  ck_assert_uint_eq(hugetlb_free_count(k->hugetlb, HPAGE_2M), pool0 - 1);
  ck_assert_uint_eq(khugepaged_mm_count(k->khugepaged), 1);
  /* RSS: the THP's 512 and 5 base pages; the zero page and the hugetlb page
   * are not counted.  Tables: PDPT, PD, the THP's deposited PT, the 4K PT
   * (one PDPT covers both 1G ranges, the hugetlb PMD sits in a second PD). */
  uint64_t rss, pt;
  oom_badness(k, t->mm, &rss, &pt);
  ck_assert_uint_eq(rss, 512 + 5);
  ck_assert_uint_eq(pt, 5);
  ck_assert_uint_eq(free0 - fixture_free_pages(k), 512 + 5 + 5 + 1);

  ck_assert_ptr_eq(oom_kill(k, &cpu->kc, 1, OOM_TRIGGER_FAULT), t->mm);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  ck_assert_uint_eq(hugetlb_free_count(k->hugetlb, HPAGE_2M), pool0);
  fixture_check_buddy(k);
  OomKill *o = &g_array_index(k->oom_kills, OomKill, 0);
  ck_assert_uint_eq(o->freed_pages, 512 + 5 + 5 + 1 + 512); /* the hugetlb page went back to its pool */
  ck_assert(t->mm->oom_killed);
  ck_assert_uint_eq(t->mm->pt.tables, 0);
  ck_assert_ptr_null(t->mm->pt.root);
  ck_assert_uint_eq(mm_vma_count(t->mm), 0);
  ck_assert_uint_eq(mm_deposited_count(t->mm), 0);
  ck_assert_uint_eq(khugepaged_mm_count(k->khugepaged), 0);
  ck_assert_ptr_null(cpu->kc.cur);
  ck_assert_uint_eq(cpu->kc.numa_due, UINT64_MAX);
  ck_assert(!mm_cpumask_test(t->mm, 0));
  /* The tables below the root, as pgtable_pages_alloc counts them (the root is
   * freed too, counted in neither). */
  ck_assert_uint_eq(cpu->ctr.c[CTR_PGTABLE_PAGES_FREED], 5);
  machine_free(m);
}
END_TEST

/* A THP half unmapped waits on the deferred split queue; the teardown
 * unmaps the other half and the THP is freed whole, off the queue. */
START_TEST(test_teardown_deferred_thp)
{
  static const char *const thp[] = { "thp.enabled=always", "mem.oom_policy=kill", NULL };
  Machine *m = fixture_machine("skylake", thp);
  Kernel *k = m->k;
  Cpu *cpu = m->cpus[0];
  uint64_t free0 = fixture_free_pages(k);
  Thread *t = fixture_thread(m, 1);
  TraceRecord mm = { .type = REC_MMAP, .addr = BASE, .len = 2 * MB, .prot = PROT_R | PROT_W };
  kernel_syscall(k, &cpu->kc, t->mm, &mm);
  store_pages(k, cpu, t, BASE, 1);
  TraceRecord un = { .type = REC_MUNMAP, .addr = BASE + MB, .len = MB };
  kernel_syscall(k, &cpu->kc, t->mm, &un);
  ck_assert_uint_eq(cpu->ctr.c[CTR_THP_SPLIT_PMD], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_THP_DEFERRED_SPLIT_PAGE], 1);
  ck_assert_uint_eq(thp_deferred_count(k), 1);
  /* 256 subpages mapped by PTEs: RSS 256; tables PDPT, PD and the PT the
   * split withdrew. */
  uint64_t rss, pt;
  ck_assert_uint_eq(oom_badness(k, t->mm, &rss, &pt), 256 + 3);
  ck_assert_ptr_eq(oom_kill(k, &cpu->kc, 1, OOM_TRIGGER_FAULT), t->mm);
  ck_assert_uint_eq(thp_deferred_count(k), 0);
  ck_assert_uint_eq(fixture_free_pages(k), free0);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* The fault path: memory held back so that 40 frames are free.  Process 1
 * takes 23 (3 tables, 20 pages), process 2 then 17 (3 tables, 14 pages);
 * its next fault finds nothing, the killer takes 1 (badness 23 against
 * 17), whose 24 frames (root included) come back, and the fault completes.
 * Process 2 goes on until memory runs out again: alone now, it is the
 * victim, and its access is dropped. */
START_TEST(test_fault_kills_and_retries)
{
  Machine *m = fixture_machine("skylake", base_pages);
  Kernel *k = m->k;
  Cpu *cpu = m->cpus[0];
  Thread *t1, *t2;
  g_autoptr(GArray) held = two_processes_in(m, 40, &t1, &t2);
  uint64_t reserve = fixture_free_pages(k) - 40; /* free, but kept by the lowmem reserve */
  store_pages(k, cpu, t1, BASE, 20);
  store_pages(k, cpu, t2, BASE, 14);
  ck_assert_uint_eq(fixture_free_pages(k), reserve);
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t2->mm, BASE + 14 * 4096, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert(t1->mm->oom_killed);
  ck_assert(!k->oom);
  ck_assert_uint_eq(cpu->ctr.c[CTR_OOM_KILL], 1);
  ck_assert_uint_eq(cpu->ctr.c[CTR_PAGE_FAULTS], 20 + 15); /* the retried fault counts once */
  OomKill *o = &g_array_index(k->oom_kills, OomKill, 0);
  ck_assert_uint_eq(o->pid, 1);
  ck_assert_uint_eq(o->by_pid, 2);
  ck_assert_int_eq(o->trigger, OOM_TRIGGER_FAULT);
  ck_assert_uint_eq(o->badness, 23);
  ck_assert_uint_eq(o->freed_pages, 24);
  ck_assert_uint_eq(fixture_free_pages(k), reserve + 23);
  /* 23 more pages, then the 24th fault kills process 2 itself. */
  store_pages(k, cpu, t2, BASE + 15 * 4096, 23);
  ck_assert_int_eq(fault_handle(k, &cpu->kc, t2->mm, BASE + 38 * 4096, ACC_STORE, &cycles), FAULT_KILLED);
  ck_assert(t2->mm->oom_killed);
  ck_assert(!k->oom);
  ck_assert_uint_eq(k->oom_kills->len, 2);
  ck_assert_uint_eq(g_array_index(k->oom_kills, OomKill, 1).pid, 2);
  ck_assert_uint_eq(fixture_free_pages(k), reserve + 3 + 38 + 1);
  fixture_check_buddy(k);
  machine_free(m);
}
END_TEST

/* Under kill, the killer takes process after process, down to the
 * faulting one itself when it is the last (its access dropped), while the
 * memory is the kernel's own; under fail nobody is killed at all. */
START_TEST(test_no_victim_and_fail)
{
  for (int kill = 0; kill < 2; kill++) {
    const char *const sets[] = { "thp.enabled=never", kill ? "mem.oom_policy=kill" : "mem.oom_policy=fail", NULL };
    Machine *m = fixture_machine("skylake", sets);
    Kernel *k = m->k;
    Cpu *cpu = m->cpus[0];
    Thread *t1, *t2;
    g_autoptr(GArray) held = two_processes_in(m, 8, &t1, &t2);
    store_pages(k, cpu, t1, BASE, 5); /* 3 tables, 5 pages */
    uint64_t cycles;
    if (kill) {
      /* Process 2's fault needs a PDPT: 1 is killed, then the fault goes through. */
      ck_assert_int_eq(fault_handle(k, &cpu->kc, t2->mm, BASE, ACC_STORE, &cycles), FAULT_MAPPED);
      ck_assert(t1->mm->oom_killed);
      ck_assert_uint_eq(cpu->ctr.c[CTR_OOM_KILL], 1);
      /* Now a third process, with nothing yet, faulting while the memory
       * is full again: process 2 is the only victim, then there is none. */
      Thread *t3 = fixture_thread(m, 3);
      fixture_vma(t3, BASE, MB, PROT_R | PROT_W);
      g_autoptr(GArray) rest = take_all(k);
      ck_assert_int_eq(fault_handle(k, &cpu->kc, t3->mm, BASE, ACC_STORE, &cycles), FAULT_MAPPED);
      ck_assert(t2->mm->oom_killed);
      g_autoptr(GArray) last = take_all(k);
      ck_assert_int_eq(fault_handle(k, &cpu->kc, t3->mm, BASE + 4096, ACC_STORE, &cycles), FAULT_KILLED);
      Thread *t4 = fixture_thread(m, 4);
      ck_assert_ptr_nonnull(t4);
      fixture_vma(t4, BASE, MB, PROT_R | PROT_W);
      g_autoptr(GArray) none = take_all(k);
      /* 4 holds its root only (badness 0) and is the last live process:
       * the killer takes it (Linux 5.9 on), and its access is dropped. */
      ck_assert_int_eq(fault_handle(k, &cpu->kc, t4->mm, BASE, ACC_STORE, &cycles), FAULT_KILLED);
      ck_assert(t4->mm->oom_killed);
      ck_assert(!k->oom);
      ck_assert_uint_eq(cpu->ctr.c[CTR_OOM_KILL], 4);
    } else {
      ck_assert_int_eq(fault_handle(k, &cpu->kc, t2->mm, BASE, ACC_STORE, &cycles), FAULT_OOM);
      ck_assert(k->oom);
      ck_assert(!t1->mm->oom_killed);
      ck_assert_uint_eq(cpu->ctr.c[CTR_OOM_KILL], 0);
      ck_assert_uint_eq(k->oom_kills->len, 0);
    }
    machine_free(m);
  }
}
END_TEST

/* A new process's first table (its PML4) finds no page: process 1 is
 * killed for it, from the CPU the new thread goes to.  The failed first
 * attempt takes no PCID: the new process gets the next one, 2, and under
 * fail the counter stays where it was. */
START_TEST(test_new_process_kills)
{
  Machine *m = fixture_machine("skylake", base_pages);
  Kernel *k = m->k;
  Thread *t1 = fixture_thread(m, 1);
  fixture_vma(t1, BASE, MB, PROT_R | PROT_W);
  store_pages(k, m->cpus[0], t1, BASE, 2);
  g_autoptr(GArray) held = take_all(k);
  Thread *t2 = machine_thread(m, 2, 1, 0);
  ck_assert_ptr_nonnull(t2);
  ck_assert(t1->mm->oom_killed);
  ck_assert(!t2->mm->oom_killed);
  ck_assert_uint_eq(g_array_index(k->oom_kills, OomKill, 0).by_pid, 2);
  ck_assert_int_eq(g_array_index(k->oom_kills, OomKill, 0).trigger, OOM_TRIGGER_CREATION);
  ck_assert_uint_eq(g_array_index(k->oom_kills, OomKill, 0).freed_pages, 2 + 3 + 1);
  ck_assert_uint_eq(t1->mm->asid, 1);
  ck_assert_uint_eq(t2->mm->asid, 2);
  ck_assert_uint_eq(k->next_asid, 3);
  /* Under fail the same new process cannot start. */
  static const char *const fail[] = { "thp.enabled=never", NULL };
  Machine *m2 = fixture_machine("skylake", fail);
  g_autoptr(GArray) held2 = take_all(m2->k);
  unsigned next_asid = m2->k->next_asid;
  ck_assert_ptr_null(machine_thread(m2, 2, 1, 0));
  ck_assert(m2->k->oom);
  ck_assert_uint_eq(m2->k->next_asid, next_asid);
  machine_free(m2);
  machine_free(m);
}
END_TEST

/* On two nodes the NUMA scanner knows the process; the kill takes it off
 * (numa_balance_mm_exit): its task has no scan state left. */
START_TEST(test_kill_leaves_numa_scanner)
{
  static const char *const two[] = { "machine.nodes=2", "numa.balancing=pte", "mem.oom_policy=kill", NULL };
  Machine *m = fixture_machine("skylake", two);
  Thread *t = fixture_thread(m, 1);
  fixture_vma(t, BASE, MB, PROT_R | PROT_W);
  store_pages(m->k, m->cpus[0], t, BASE, 1);
  numa_balance_task_new(m->k->numa_balance, t, NULL); /* as the engine does for a new thread */
  NumaTaskInfo info;
  ck_assert(numa_balance_task_info(m->k->numa_balance, t, &info));
  ck_assert_ptr_eq(oom_kill(m->k, &m->cpus[0]->kc, 1, OOM_TRIGGER_FAULT), t->mm);
  ck_assert(!numa_balance_task_info(m->k->numa_balance, t, &info));
  machine_free(m);
}
END_TEST

static Suite *oom_kill_suite(void)
{
  Suite *s = suite_create("oom_kill");
  TCase *tc = tcase_create("oom_kill");
  tcase_add_test(tc, test_badness_and_choice);
  tcase_add_test(tc, test_badness_thp);
  tcase_add_test(tc, test_teardown_returns_every_frame);
  tcase_add_test(tc, test_teardown_deferred_thp);
  tcase_add_test(tc, test_fault_kills_and_retries);
  tcase_add_test(tc, test_no_victim_and_fail);
  tcase_add_test(tc, test_new_process_kills);
  tcase_add_test(tc, test_kill_leaves_numa_scanner);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(oom_kill_suite)
