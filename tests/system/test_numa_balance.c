/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of automatic NUMA balancing: the scanner's budget and its
 * offset, what it skips (zero page, hugetlb VMAs, pages already on the node
 * of a process that runs alone), the adaptation of the scan period, the
 * two-stage filter, base page and THP migration, the pmd scheme (a table on
 * one node marked at the PMD, one fault for the group, which shoots down
 * the pages it moves that the scan left cached), the hardware
 * walkers of both architectures treating marked entries as not present,
 * and the local / remote accounting of hinting faults.
 *
 * The machine has two nodes with one CPU each: CPU 0 on node 0, CPU 1 on
 * node 1.  Pages are first touched from CPU 0, so they sit on node 0.
 * Time is driven by hand: a test makes a thread current on a CPU, sets the
 * CPU's clock and calls numa_balance_tick, as the engine does before a
 * record once the clock reaches cpu->kc.numa_due.
 */
#include "config.h"
#include "fault.h"
#include "machine_fixture.h"
#include "numa_balance.h"
#include "thp.h"

#include <math.h>
#include <string.h>

#define BASE 0x7f0000000000ULL
#define PBASE 0x3f0000000000ULL /* below the ppc64 user limit */
#define MB (UINT64_C(1) << 20)
#define PMD (2 * MB)
#define PAGE 4096ULL

#define TWO_NODES "machine.nodes=2", "machine.cpus_per_node=1"
/* Scaled time: the first scan 1 ms after the start, periods of 1 to 4 ms. */
/* Scaled time: the first scan 1 ms after the start, periods of 1 to 4 ms,
 * and MAX_SCAN_WINDOW scaled with them, so that task_scan_min's floor
 * (1000 ms / (window / scan size)) stays below the minimum. */
#define FAST "numa.scan_delay_ms=1", "numa.scan_period_min_ms=1", "numa.scan_period_max_ms=4", \
  "numa.max_scan_window_mb_s=2560000"
/* The release of the PMD-granular scheme and of the last_nid filter. */
#define V38 "kernel.version=3.8"

/* ---- helpers ---------------------------------------------------------------- */

/* Make th the running thread of CPU cpu from its clock on, as the engine
 * does when it switches threads. */
static void run(Machine *m, int cpu, Thread *th)
{
  Cpu *c = m->cpus[cpu];
  if (c->kc.cur)
    c->kc.cur->ran += c->clock - c->kc.cur_since;
  c->kc.cur = th;
  c->kc.cur_since = c->clock;
  mm_cpumask_enter(th->mm, (unsigned)cpu); /* shootdowns reach it */
  numa_balance_switch_in(m->k->numa_balance, &c->kc, th);
}

typedef struct {
  Machine *m;
  Thread *t;   /* thread 1, CPU 0 (node 0) */
  Thread *t2;  /* thread 2 of the same process, CPU 1 (node 1), or NULL */
  uint64_t scan_at; /* when the last scan started (cycles) */
} Fx;

/* Thread 1 starts the process; thread 2 (if any) is its clone.  Both run
 * from time 0, each alone on its CPU. */
static void start_threads(Fx *f)
{
  numa_balance_task_new(f->m->k->numa_balance, f->t, NULL);
  run(f->m, 0, f->t);
  if (f->t2) {
    numa_balance_task_new(f->m->k->numa_balance, f->t2, f->t);
    run(f->m, 1, f->t2);
  }
}

static void setup_on(Fx *f, const char *machine, const char *const *sets, gboolean two_threads)
{
  f->m = fixture_machine(machine, sets);
  f->t = fixture_thread(f->m, 1);
  f->t2 = two_threads ? machine_thread(f->m, 1, 2, 1) : NULL;
  ck_assert_int_eq(f->m->cpus[0]->node, 0);
  ck_assert_int_eq(f->m->cpus[1]->node, 1);
  start_threads(f);
}

static void setup(Fx *f, const char *const *sets, gboolean two_threads)
{
  setup_on(f, "skylake", sets, two_threads);
}

static void sys(Fx *f, TraceRecordType type, uint64_t addr, uint64_t len, uint8_t flags, uint8_t arg, uint64_t arg2)
{
  TraceRecord r = { .type = type, .addr = addr, .len = len, .prot = PROT_R | PROT_W, .flags = flags, .arg = arg,
                    .arg2 = arg2 };
  kernel_syscall(f->m->k, &f->m->cpus[0]->kc, f->t->mm, &r);
}

static FaultResult fault_on(Fx *f, int cpu, uint64_t va, AccessKind kind)
{
  uint64_t cycles;
  return fault_handle(f->m->k, &f->m->cpus[cpu]->kc, f->t->mm, va, kind, &cycles);
}

/* Write every page of [start, start + len) from CPU `cpu`. */
static void populate(Fx *f, int cpu, uint64_t start, uint64_t len)
{
  for (uint64_t va = start; va < start + len; va += PAGE)
    ck_assert_int_eq(fault_on(f, cpu, va, ACC_STORE), FAULT_MAPPED);
}

static uint64_t ctr(Fx *f, CounterId id)
{
  return fixture_ctr(f->m, id);
}

static uint64_t ms(Fx *f, double v)
{
  return (uint64_t)llround(v * 1e6 * f->m->k->cycles_per_ns);
}

static NumaTaskInfo info(Fx *f, const Thread *th)
{
  NumaTaskInfo i;
  ck_assert(numa_balance_task_info(f->m->k->numa_balance, th, &i));
  return i;
}

/* Run the scanner's tick for the thread running on CPU `cpu` at time `at`
 * (cycles). */
static void tick_at(Fx *f, int cpu, uint64_t at)
{
  Cpu *c = f->m->cpus[cpu];
  c->clock = MAX(c->clock, at);
  f->scan_at = c->clock;
  numa_balance_tick(f->m->k->numa_balance, &c->kc, c->kc.cur);
}

/* Tick CPU `cpu` at its due times until its thread has scanned once more. */
static void scan_on(Fx *f, int cpu)
{
  Cpu *c = f->m->cpus[cpu];
  uint64_t before = c->ctr.c[CTR_NUMA_SCANS];
  for (unsigned i = 0; i < 64 && c->ctr.c[CTR_NUMA_SCANS] == before; i++) {
    ck_assert_uint_ne(c->kc.numa_due, UINT64_MAX);
    tick_at(f, cpu, c->kc.numa_due);
  }
  ck_assert_uint_eq(c->ctr.c[CTR_NUMA_SCANS], before + 1);
}

/* Thread 1's first scan: numa.scan_delay_ms (1 ms) of its run time after
 * it started at 0, strictly past it, as task_tick_numa compares. */
static void first_scan(Fx *f)
{
  ck_assert_uint_eq(f->m->cpus[0]->kc.numa_due, ms(f, 1) + 1);
  tick_at(f, 0, ms(f, 1));
  ck_assert_uint_eq(ctr(f, CTR_NUMA_SCANS), 0);
  scan_on(f, 0);
}

/* Run thread 1's next scan on CPU 0. */
static void next_scan_now(Fx *f)
{
  scan_on(f, 0);
}

static uint64_t pmd_entry(Fx *f, uint64_t va)
{
  PtNode *n = f->t->mm->pt.root;
  for (unsigned l = f->t->mm->pt.g.levels; l > 2; l--)
    n = n->child[pgtable_index(&f->t->mm->pt.g, l, va)];
  return n->e[pgtable_index(&f->t->mm->pt.g, 2, va)];
}

static uint64_t pte_entry(Fx *f, uint64_t va)
{
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&f->t->mm->pt, va, &level, &idx);
  ck_assert_uint_eq(level, 1);
  return n->e[idx];
}

static int node_of_va(Fx *f, uint64_t va)
{
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&f->t->mm->pt, va, &level, &idx);
  uint64_t pfn = pte_pfn(n->e[idx]) + ((va & (pgtable_entry_span(&f->t->mm->pt.g, level) - 1)) >> 12);
  return physmem_node_of(f->m->k->pm, pfn);
}

static unsigned marked_ptes(Fx *f, uint64_t start, uint64_t len)
{
  unsigned n = 0;
  for (uint64_t va = start; va < start + len; va += PAGE)
    n += (pte_entry(f, va) & PTE_SW_NUMA) != 0;
  return n;
}

static XlatStatus xlat(Fx *f, int cpu, uint64_t va, AccessKind kind)
{
  Xlat x;
  memset(&x, 0, sizeof x);
  Cpu *c = f->m->cpus[cpu];
  fixture_load_asid(f->m, c, f->t->mm);
  return f->m->arch->translate(c, f->t->mm, va, kind, &x, NULL);
}

/* ---- the scanner ---------------------------------------------------------------- */

START_TEST(test_off_and_one_node)
{
  static const char *const off[] = { TWO_NODES, FAST, "numa.balancing=off", "thp.enabled=never", NULL };
  static const char *const one[] = { FAST, NULL };
  Fx f;
  setup(&f, off, TRUE);
  ck_assert_uint_eq(f.m->cpus[0]->kc.numa_due, UINT64_MAX);
  ck_assert(!numa_balance_task_info(f.m->k->numa_balance, f.t, &(NumaTaskInfo){ 0 }));
  sys(&f, REC_MMAP, BASE, PMD, 0, 0, 0);
  populate(&f, 0, BASE, PMD);
  tick_at(&f, 0, ms(&f, 100));
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_SCANS), 0);
  ck_assert_uint_eq(marked_ptes(&f, BASE, PMD), 0);
  machine_free(f.m);

  Machine *m = fixture_machine("skylake", one);
  Thread *t = fixture_thread(m, 1);
  run(m, 0, t);
  ck_assert_uint_eq(m->cpus[0]->kc.numa_due, UINT64_MAX);
  machine_free(m);
}
END_TEST

START_TEST(test_scan_budget_and_offset)
{
  /* 2M a scan (512 pages) over an 8M mapping: four scans cover it, the
   * fifth finds it all marked and goes back to the start. */
  /* The 8M are four windows of 2M (task_nr_scan_windows): the bounds of
   * the period are divided by 4, so 4 to 16 ms give FAST's 1 to 4. */
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", "numa.scan_size_mb=2",
                                      "numa.scan_period_min_ms=4", "numa.scan_period_max_ms=16", NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 8 * MB, 0, 0, 0);
  populate(&f, 0, BASE, 8 * MB);
  tick_at(&f, 0, 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_SCANS), 0); /* the delay first */
  tick_at(&f, 0, ms(&f, 0.5));
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_SCANS), 0);
  tick_at(&f, 0, ms(&f, 1));
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_SCANS), 0); /* run time 1 ms is not past it */
  tick_at(&f, 0, ms(&f, 1) + 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_SCANS), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PTE_UPDATES), 512);
  ck_assert_uint_eq(marked_ptes(&f, BASE, PMD), 512);
  ck_assert_uint_eq(marked_ptes(&f, BASE + PMD, 6 * MB), 0);
  /* Not due yet: nothing happens. */
  tick_at(&f, 0, ms(&f, 1.5));
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_SCANS), 1);
  /* The next scan resumes where this one stopped. */
  next_scan_now(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PTE_UPDATES), 1024);
  ck_assert_uint_eq(marked_ptes(&f, BASE + PMD, PMD), 512);
  ck_assert_uint_eq(marked_ptes(&f, BASE + 2 * PMD, 2 * PMD), 0);
  next_scan_now(&f);
  next_scan_now(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PTE_UPDATES), 2048);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 8 * MB), 2048);
  /* A page faulted back is marked again when the scan comes round. */
  ck_assert_int_eq(fault_on(&f, 0, BASE + 5 * PAGE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 8 * MB), 2047);
  next_scan_now(&f); /* runs off the end: the offset goes back to 0 */
  next_scan_now(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_SCANS), 6);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PTE_UPDATES), 2049);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 8 * MB), 2048);
  ck_assert_uint_gt(ctr(&f, CTR_NUMA_CYCLES), 0);
  machine_free(f.m);
}
END_TEST

START_TEST(test_scan_skips)
{
  /* A process running alone on node 0 does not mark pages on node 0; the
   * zero page and hugetlb memory are never marked. */
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", "hugetlb.nr_hugepages=2", NULL };
  Fx f;
  setup(&f, sets, FALSE);
  sys(&f, REC_MMAP, BASE, PMD, 0, 0, 0);
  sys(&f, REC_MMAP, BASE + 4 * PMD, 2 * PMD, MAP_F_HUGETLB, 0, 0);
  populate(&f, 0, BASE, 16 * PAGE);                              /* node 0 */
  populate(&f, 1, BASE + 16 * PAGE, 16 * PAGE);                 /* node 1 */
  ck_assert_int_eq(fault_on(&f, 0, BASE + 64 * PAGE, ACC_LOAD), FAULT_MAPPED); /* zero page */
  ck_assert_int_eq(fault_on(&f, 0, BASE + 4 * PMD, ACC_STORE), FAULT_MAPPED);   /* hugetlb */
  first_scan(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PTE_UPDATES), 16);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 16 * PAGE), 0);
  ck_assert_uint_eq(marked_ptes(&f, BASE + 16 * PAGE, 16 * PAGE), 16);
  ck_assert_uint_eq(pte_entry(&f, BASE + 64 * PAGE) & PTE_SW_NUMA, 0);
  ck_assert_uint_eq(pmd_entry(&f, BASE + 4 * PMD) & PTE_SW_NUMA, 0);
  /* With a second thread (on node 1) every page is a candidate. */
  machine_thread(f.m, 1, 2, 1);
  next_scan_now(&f);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 32 * PAGE), 32);
  machine_free(f.m);
}
END_TEST

/* ---- period adaptation ------------------------------------------------------------- */

/* Thread 1's scan period. */
static double period_ms(Fx *f)
{
  return info(f, f->t).period_ms;
}

/* Clear the mark of the PTE of va by hand, leaving only its PMD's. */
static void unmark_pte(Fx *f, uint64_t va)
{
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&f->t->mm->pt, va, &level, &idx);
  ck_assert_uint_eq(level, 1);
  pgtable_entry_set(n, idx, n->e[idx] & ~PTE_SW_NUMA);
}

/* Hinting faults of thread 1 (CPU 0, node 0) on pages [first, first + n). */
static void hint_range(Fx *f, unsigned first, unsigned n)
{
  for (unsigned i = first; i < first + n; i++)
    ck_assert_int_eq(fault_on(f, 0, BASE + i * PAGE, ACC_LOAD), FAULT_MAPPED);
}

/* ---- the scan period (6.12: update_task_scan_period) ------------------------- */

/* The kernel's defaults (1000 to 60000 ms, 256 MB windows, MAX_SCAN_WINDOW
 * 2560 MB/s), whole milliseconds as the kernel's: 20 pages, 0-9 on node 0
 * and 10-19 on node 1, each half bound to its node with balancing, so
 * nothing moves (a fault from a node outside the mask is not misplaced,
 * and its page keeps its last_cpupid).  Returns the fixture after thread
 * 1's first scan (its period task_scan_start, 1000 ms). */
static void period_setup(Fx *f, const char *version)
{
  const char *sets[] = { TWO_NODES, "thp.enabled=never", version, NULL };
  setup(f, sets, TRUE);
  sys(f, REC_MMAP, BASE, 20 * PAGE, 0, 0, 0);
  populate(f, 0, BASE, 10 * PAGE);
  populate(f, 1, BASE + 10 * PAGE, 10 * PAGE);
  sys(f, REC_MEMPOLICY, BASE, 10 * PAGE, MPOL_F_BALANCING, MPOL_BIND, 1);
  sys(f, REC_MEMPOLICY, BASE + 10 * PAGE, 10 * PAGE, MPOL_F_BALANCING, MPOL_BIND, 2);
  tick_at(f, 0, ms(f, 1000) + 1);
  ck_assert_uint_eq(ctr(f, CTR_NUMA_SCANS), 1);
  ck_assert_uint_eq(info(f, f->t).mm_seq, 1); /* the scan covered all 20 pages */
}

/* Hinting faults of the thread on CPU `cpu` on pages [first, first + n). */
static void hint_on(Fx *f, int cpu, unsigned first, unsigned n)
{
  for (unsigned i = first; i < first + n; i++)
    ck_assert_int_eq(fault_on(f, cpu, BASE + i * PAGE, ACC_LOAD), FAULT_MAPPED);
}

START_TEST(test_period_private_and_shared)
{
  /* update_task_scan_period (kernel/sched/fair.c, 6.12), at thread 1's
   * first fault after each pass (task_numa_placement). */
  Fx f;
  period_setup(&f, "kernel.version=6.12");
  ck_assert_double_eq_tol(period_ms(&f), 1000, 1e-9);
  /* No fault before: local + shared == 0, doubled, next scan pushed. */
  hint_range(&f, 0, 1);
  ck_assert_double_eq_tol(period_ms(&f), 2000, 1e-9);
  ck_assert_uint_eq(info(&f, f.t).mm_next_scan, f.m->cpus[0]->clock + ms(&f, 2000));
  hint_range(&f, 1, 9); /* 10 local faults, private (last_cpupid unset, then its own) */
  hint_on(&f, 1, 10, 10); /* thread 2 records its pid in pages 10-19 */
  /* ps_ratio 10 >= 7: 3 slots of DIV_ROUND_UP(2000, 10) up. */
  next_scan_now(&f);
  hint_range(&f, 0, 1);
  ck_assert_double_eq_tol(period_ms(&f), 2600, 1e-9);
  /* Thread 1's window: page 0 (local, private); thread 1's remote faults
   * on pages 10-19, which thread 2 faulted first (recording its pid: a
   * local fault under =balancing asks the filter), are shared; page 1
   * local private.  lr_ratio = 2*10/12 = 1, ps_ratio = 1, both below 7:
   * 7 - 1 = 6 slots of 260 down. */
  hint_range(&f, 10, 10);
  hint_range(&f, 1, 1);
  next_scan_now(&f);
  hint_range(&f, 2, 1);
  ck_assert_double_eq_tol(period_ms(&f), 1040, 1e-9);
  /* Page 2 local private, 10 shared remote (pages 10-19 keep thread 2's
   * pid: thread 1's faults from node 0, outside their mask, record
   * nothing): lr = 10/11 = 0, ps = 0: 7 slots of 104 down, clamped to
   * task_scan_min (1000). */
  hint_range(&f, 10, 10);
  next_scan_now(&f);
  hint_range(&f, 3, 1);
  ck_assert_double_eq_tol(period_ms(&f), 1000, 1e-9);
  machine_free(f.m);
}
END_TEST

START_TEST(test_period_doubles_without_local_or_shared)
{
  /* update_task_scan_period: "local + shared == 0" doubles the period even
   * when the task took faults: here ten remote private ones (pages whose
   * last_cpupid is unset count private). */
  Fx f;
  period_setup(&f, "kernel.version=6.12");
  hint_range(&f, 10, 10); /* the first placement doubles: 2000 */
  ck_assert_double_eq_tol(period_ms(&f), 2000, 1e-9);
  next_scan_now(&f);
  hint_range(&f, 10, 1);
  ck_assert_double_eq_tol(period_ms(&f), 4000, 1e-9);
  /* One local fault among 20 remote private ones (the doubling kept the
   * locality counts): lr_ratio = 10/21 = 0, but ps_ratio = 10 >= 7: the
   * period grows by 3 slots of 400 (the remote rule alone would shrink it
   * by 7). */
  hint_range(&f, 0, 1);
  hint_range(&f, 11, 9);
  next_scan_now(&f);
  hint_range(&f, 12, 1);
  ck_assert_double_eq_tol(period_ms(&f), 5200, 1e-9);
  /* Up to numa_scan_period_max, task_scan_max at the placement (60000). */
  for (unsigned i = 0; i < 6; i++) {
    next_scan_now(&f);
    hint_range(&f, 10, 1);
  }
  ck_assert_double_eq_tol(period_ms(&f), 60000, 1e-9);
  machine_free(f.m);
}
END_TEST

START_TEST(test_scan_bounds_scale_with_rss)
{
  /* task_scan_min and task_scan_max (6.12): the bounds divided by the RSS
   * in numa.scan_size_mb windows (task_nr_scan_windows, rounded up), in
   * whole milliseconds, and task_scan_min no faster than MAX_SCAN_WINDOW:
   * 16 MB windows, 2560 / 16 = 160 of them a second, a floor of
   * 1000 / 160 = 6 ms. */
  static const char *const sets[] = { TWO_NODES, "thp.enabled=always", "numa.scan_size_mb=16", NULL };
  Fx f;
  setup(&f, sets, FALSE);
  NumaTaskInfo i = info(&f, f.t);
  ck_assert_double_eq_tol(i.scan_min_ms, 1000, 1e-9); /* no RSS: one window */
  ck_assert_double_eq_tol(i.scan_max_ms, 60000, 1e-9);
  sys(&f, REC_MMAP, BASE, 66 * MB, 0, 0, 0);
  populate(&f, 0, BASE, 66 * MB); /* 33 THPs: 66 MB, 5 windows */
  i = info(&f, f.t);
  ck_assert_double_eq_tol(i.scan_min_ms, 200, 1e-9);
  ck_assert_double_eq_tol(i.scan_max_ms, 12000, 1e-9);
  /* task_scan_start: the first due time takes task_scan_min. */
  tick_at(&f, 0, ms(&f, 1000) + 1);
  ck_assert_double_eq_tol(period_ms(&f), 200, 1e-9);
  machine_free(f.m);
  /* The floor: the minimum of 10 ms over 5 windows (2) is below 6. */
  static const char *const sets2[] = { TWO_NODES, "thp.enabled=always", "numa.scan_size_mb=16",
                                       "numa.scan_period_min_ms=10", NULL };
  setup(&f, sets2, FALSE);
  sys(&f, REC_MMAP, BASE, 66 * MB, 0, 0, 0);
  populate(&f, 0, BASE, 66 * MB);
  ck_assert_double_eq_tol(info(&f, f.t).scan_min_ms, 6, 1e-9);
  machine_free(f.m);
}
END_TEST

START_TEST(test_should_migrate_cpupid)
{
  /* should_numa_migrate_memory (kernel/sched/fair.c, 6.12) without
   * numa_group.  Thread 2 (CPU 1, node 1) faults on node-0 pages; page 3
   * is bound to nodes 0-1 with balancing, so that a local fault records
   * its CPU and pid there too. */
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 16 * PAGE, 0, 0, 0);
  populate(&f, 0, BASE, 16 * PAGE);
  sys(&f, REC_MEMPOLICY, BASE + 3 * PAGE, PAGE, MPOL_F_BALANCING, MPOL_BIND, 0x3);
  first_scan(&f);
  /* A young task (no preferred node): a first fault (last_cpupid unset)
   * migrates at once. */
  hint_on(&f, 1, 0, 1);
  ck_assert_int_eq(node_of_va(&f, BASE), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_MIGRATE_FILTERED), 0);
  /* Thread 1's local fault under the default policy records nothing
   * (mpol_misplaced leaves before the filter): page 1 stays unset, and
   * thread 2's first fault on it migrates too. */
  hint_on(&f, 0, 1, 1);
  next_scan_now(&f);
  hint_on(&f, 1, 1, 1);
  ck_assert_int_eq(node_of_va(&f, BASE + PAGE), 1);
  /* Age thread 2: a preferred node (a placement that saw faults) and more
   * than 4 passes (its numa_scan_seq), a fault on page 0 each. */
  for (unsigned pass = 0; pass < 5; pass++) {
    next_scan_now(&f);
    hint_on(&f, 1, 0, 1);
  }
  ck_assert_uint_gt(info(&f, f.t2).mm_seq, 4);
  /* An old task: page 2's last_cpupid is unset, so the two-stage test
   * lets it through, and a fault that is not its own (shared) migrates
   * without a numa_group. */
  hint_on(&f, 1, 2, 1);
  ck_assert_int_eq(node_of_va(&f, BASE + 2 * PAGE), 1);
  /* Page 3: thread 1's local fault records node 0 and its pid; thread 2's
   * fault then finds the last node 0, not its own: filtered.  Its next
   * fault finds its own CPU and pid (private): migrated. */
  hint_on(&f, 0, 3, 1);
  next_scan_now(&f);
  hint_on(&f, 1, 3, 1);
  ck_assert_int_eq(node_of_va(&f, BASE + 3 * PAGE), 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_MIGRATE_FILTERED), 1);
  next_scan_now(&f);
  hint_on(&f, 1, 3, 1);
  ck_assert_int_eq(node_of_va(&f, BASE + 3 * PAGE), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 4);
  machine_free(f.m);
}
END_TEST

START_TEST(test_period_3_8)
{
  /* Linux 3.8 task_numa_fault: each fault that migrated nothing adds
   * jiffies_to_msecs(10) (numa.period_step_ms) up to the maximum; the
   * first scan resets it to the minimum (numa_next_reset), as does one
   * numa.scan_period_reset_ms later. */
  Fx f;
  period_setup(&f, V38);
  ck_assert_double_eq_tol(period_ms(&f), 1000, 1e-9);
  hint_range(&f, 0, 10);
  hint_range(&f, 10, 5);
  ck_assert_double_eq_tol(period_ms(&f), 1150, 1e-9);
  machine_free(f.m);
}
END_TEST

START_TEST(test_pmd_refused_under_6_12)
{
  /* change_pmd_protnuma / do_pmd_numa_page left Linux in 3.13. */
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, "skylake", &err));
  ck_assert(settings_set(s, "machine.nodes", "2", "test", &err));
  ck_assert(settings_set(s, "numa.balancing", "pmd", "test", &err));
  Machine *m = machine_new("skylake", s, NULL, &err);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(strstr(err->message, "Linux 3.8 to 3.12"));
  ck_assert_ptr_nonnull(strstr(err->message, "set kernel.version=3.8"));
  g_clear_error(&err);
  ck_assert(settings_set(s, "kernel.version", "3.8", "test", &err));
  m = machine_new("skylake", s, NULL, &err);
  ck_assert_ptr_nonnull(m);
  machine_free(m);
}
END_TEST

START_TEST(test_task_timing)
{
  /* Per task, by run time: thread 2, a clone, starts its scans one creator
   * period later; a thread counts only the time it runs; the address
   * space's next scan time makes the tasks share the scanning; the scan's
   * own time counts 32 times against the task. */
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", "numa.scan_delay_ms=2", NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 8 * MB, 0, 0, 0);
  populate(&f, 0, BASE, 8 * MB);
  NumaTaskInfo i1 = info(&f, f.t), i2 = info(&f, f.t2);
  ck_assert_uint_eq(i1.node_stamp, 0);
  ck_assert_double_eq_tol(i1.period_ms, 2.0, 1e-9); /* the delay */
  ck_assert_uint_eq(i1.mm_next_scan, ms(&f, 2));
  /* init_numa_balancing's stagger, as the 6.12 source reads:
   * min_t(unsigned int, task_scan_max(current), period * mm_users *
   * NSEC_PER_MSEC) nanoseconds: task_scan_max (4, in ms) taken as 4 ns. */
  ck_assert_uint_eq(i2.node_stamp, kernel_ns_to_cycles(f.m->k, 4));
  ck_assert_double_eq_tol(i2.period_ms, 2.0, 1e-9);
  Thread *t3 = machine_thread(f.m, 1, 3, 1);
  numa_balance_task_new(f.m->k->numa_balance, t3, f.t);
  ck_assert_uint_eq(info(&f, t3).node_stamp, kernel_ns_to_cycles(f.m->k, 4));

  /* Thread 1 scans first, 2 ms into its run; its period becomes the
   * minimum (task_scan_start) and its stamp moves on by the delay plus 32
   * times the scan. */
  ck_assert_uint_eq(f.m->cpus[0]->kc.numa_due, ms(&f, 2) + 1);
  scan_on(&f, 0);
  uint64_t spent = f.m->cpus[0]->ctr.c[CTR_NUMA_CYCLES];
  ck_assert_uint_gt(spent, 0);
  i1 = info(&f, f.t);
  ck_assert_double_eq_tol(i1.period_ms, 1.0, 1e-9);
  ck_assert_uint_eq(i1.node_stamp, ms(&f, 2) + 32 * spent);
  ck_assert_uint_eq(i1.mm_next_scan, ms(&f, 2) + 1 + ms(&f, 1));
  /* Thread 2 comes due at its stamp plus its 2 ms period, before the
   * address space's next scan: it does not scan, its stamp moves on by its
   * period (a staggered task keeps the delay: no task_scan_start). */
  uint64_t due2 = f.m->cpus[1]->kc.numa_due;
  ck_assert_uint_eq(due2, kernel_ns_to_cycles(f.m->k, 4) + ms(&f, 2) + 1);
  ck_assert_uint_lt(due2, i1.mm_next_scan);
  tick_at(&f, 1, due2);
  ck_assert_uint_eq(f.m->cpus[1]->ctr.c[CTR_NUMA_SCANS], 0);
  i2 = info(&f, f.t2);
  ck_assert_uint_eq(i2.node_stamp, kernel_ns_to_cycles(f.m->k, 4) + ms(&f, 2));
  ck_assert_double_eq_tol(i2.period_ms, 2.0, 1e-9);
  /* Its next due time, 2 ms on, is past the address space's: it scans. */
  scan_on(&f, 1);
  ck_assert_uint_eq(info(&f, f.t2).mm_next_scan, f.m->cpus[1]->clock + ms(&f, 2));

  /* Run time, not the clock: thread 1 leaves CPU 0 for 10 ms (thread 3
   * runs there) and comes back with the run time it had. */
  Cpu *c0 = f.m->cpus[0];
  uint64_t ran = thread_runtime(f.t, &c0->kc);
  uint64_t left = c0->kc.numa_due - c0->clock;
  run(f.m, 0, t3);
  c0->clock += ms(&f, 10);
  ck_assert_uint_eq(thread_runtime(f.t, &c0->kc), ran);
  run(f.m, 0, f.t);
  ck_assert_uint_eq(c0->kc.numa_due, c0->clock + left);
  machine_free(f.m);
}
END_TEST

START_TEST(test_task_cache_never_mixes_threads)
{
  /* More threads than the task cache has slots, switched in in a scattered
   * order, twice: each switch-in finds the thread's own task, staggered by
   * the creator's period times the tasks before it (a maximum period of
   * 1e9 ms, 1 s as init_numa_balancing reads it in nanoseconds, keeps that
   * product the smaller, and every thread's stamp distinct). */
  static const char *const sets[] = { TWO_NODES, "numa.scan_delay_ms=1", "numa.scan_period_min_ms=1",
                                      "numa.scan_period_max_ms=1000000000", "thp.enabled=never", NULL };
  enum { N = 600 };
  Fx f;
  setup(&f, sets, FALSE);
  Thread **th = g_new(Thread *, N + 2);
  for (uint32_t tid = 2; tid < N + 2; tid++) {
    th[tid] = machine_thread(f.m, 1, tid, 0);
    numa_balance_task_new(f.m->k->numa_balance, th[tid], f.t);
  }
  Cpu *c0 = f.m->cpus[0];
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t i = 0; i < N; i++) {
      uint32_t tid = 2 + (i * 257) % N; /* 257 is prime to 600 */
      run(f.m, 0, th[tid]);
      ck_assert_uint_eq(c0->kc.numa_due, c0->clock + ms(&f, tid - 1) + ms(&f, 1) + 1);
      ck_assert_uint_eq(info(&f, th[tid]).node_stamp, ms(&f, tid - 1));
    }
  }
  g_free(th);
  machine_free(f.m);
}
END_TEST

START_TEST(test_max_below_min_refused)
{
  static const char *const sets[] = { "numa.scan_period_min_ms=10", "numa.scan_period_max_ms=5", NULL };
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, "skylake", &err));
  for (int i = 0; sets[i]; i++)
    ck_assert(settings_set_pair(s, sets[i], "test", &err));
  Machine *m = machine_new("skylake", s, NULL, &err);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(err);
  ck_assert_ptr_nonnull(strstr(err->message, "numa.scan_period_max_ms"));
  g_error_free(err);
}
END_TEST

/* ---- hinting faults, the filter, migration ------------------------------------------- */

START_TEST(test_hint_faults_local_remote)
{
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 8 * PAGE, 0, 0, 0);
  populate(&f, 0, BASE, 8 * PAGE);
  first_scan(&f);
  uint64_t faults = ctr(&f, CTR_PAGE_FAULTS);
  ck_assert_int_eq(fault_on(&f, 0, BASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_int_eq(fault_on(&f, 0, BASE + PAGE, ACC_STORE), FAULT_MAPPED);
  ck_assert_int_eq(fault_on(&f, 1, BASE + 2 * PAGE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), 3);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS_LOCAL), 2);
  ck_assert_uint_eq(ctr(&f, CTR_PAGE_FAULTS), faults + 3); /* hinting faults are page faults */
  /* Restored: present to the hardware again, flags kept. */
  uint64_t e = pte_entry(&f, BASE + PAGE);
  ck_assert_uint_eq(e & PTE_SW_NUMA, 0);
  ck_assert_uint_ne(e & PTE_RW, 0);
  ck_assert_int_eq(xlat(&f, 0, BASE + PAGE, ACC_STORE), XLAT_OK);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 8 * PAGE), 5);
  machine_free(f.m);
}
END_TEST

/* Linux 3.8's two-stage filter (mpol_misplaced, page_xchg_last_nid). */
START_TEST(test_filter_two_stage)
{
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", V38, NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 4 * PAGE, 0, 0, 0);
  populate(&f, 0, BASE, 4 * PAGE);
  uint64_t free1 = physmem_free_pages(f.m->k->pm, 1);
  first_scan(&f);
  /* First remote fault: remembered, not migrated. */
  ck_assert_int_eq(fault_on(&f, 1, BASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_int_eq(node_of_va(&f, BASE), 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_MIGRATE_FILTERED), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 0);
  /* Second, from the same node: migrated, flags and data mapping kept. */
  uint64_t old = pte_entry(&f, BASE);
  next_scan_now(&f);
  ck_assert_int_eq(fault_on(&f, 1, BASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_int_eq(node_of_va(&f, BASE), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 1);
  uint64_t now = pte_entry(&f, BASE);
  ck_assert_uint_ne(pte_pfn(now), pte_pfn(old));
  ck_assert_uint_eq(now & ~(PTE_PFN_MASK | NUMA_LAST_MASK), old & ~(PTE_PFN_MASK | NUMA_LAST_MASK | PTE_SW_NUMA));
  ck_assert_uint_eq(physmem_free_pages(f.m->k->pm, 1), free1 - 1);
  ck_assert_int_eq(xlat(&f, 1, BASE, ACC_LOAD), XLAT_OK);
  /* 3.8's MPOL_F_MORON step runs for a local fault too and records its
   * node: 1, then 0 (local), then 1 is filtered again. */
  ck_assert_int_eq(fault_on(&f, 1, BASE + PAGE, ACC_LOAD), FAULT_MAPPED);
  next_scan_now(&f);
  ck_assert_int_eq(fault_on(&f, 0, BASE + PAGE, ACC_LOAD), FAULT_MAPPED);
  next_scan_now(&f);
  ck_assert_int_eq(fault_on(&f, 1, BASE + PAGE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_int_eq(node_of_va(&f, BASE + PAGE), 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 1);
  machine_free(f.m);
}
END_TEST

START_TEST(test_filter_off_and_policy)
{
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", "numa.migrate_filter=false", NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 4 * PAGE, 0, 0, 0);
  populate(&f, 0, BASE, 4 * PAGE);
  /* bind keeps the second page where it is: without MPOL_F_MOF its VMA is
   * not even scanned (vma_policy_mof), so it takes no hinting fault. */
  sys(&f, REC_MEMPOLICY, BASE + PAGE, PAGE, 0, MPOL_BIND, 1);
  first_scan(&f);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 4 * PAGE), 3);
  ck_assert_uint_eq(marked_ptes(&f, BASE + PAGE, PAGE), 0);
  ck_assert_int_eq(fault_on(&f, 1, BASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_int_eq(node_of_va(&f, BASE), 1); /* the first fault migrates without the filter */
  ck_assert_int_eq(node_of_va(&f, BASE + PAGE), 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), 1);
  machine_free(f.m);
}
END_TEST

/* MPOL_F_NUMA_BALANCING (bind=balancing): the range is scanned, and a page
 * moves towards the faulting CPU's node when that node is one of the
 * policy's (mpol_misplaced's MPOL_BIND with MPOL_F_MORON), through the
 * filter; never to a node outside the policy.  Any other user policy is
 * not scanned, the process's included. */
START_TEST(test_bind_balancing)
{
  static const char *const sets[] = { "machine.nodes=3", "machine.cpus_per_node=1", FAST, "thp.enabled=never", NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 8 * PAGE, 0, 0, 0);
  /* Pages 0-3 bound to nodes 0-1 with balancing, 4-7 to the same nodes
   * without: all of them placed on node 0 by CPU 0. */
  sys(&f, REC_MEMPOLICY, BASE, 4 * PAGE, MPOL_F_BALANCING, MPOL_BIND, 0x3);
  sys(&f, REC_MEMPOLICY, BASE + 4 * PAGE, 4 * PAGE, 0, MPOL_BIND, 0x3);
  populate(&f, 0, BASE, 8 * PAGE);
  ck_assert_uint_eq(mm_vma_count(f.t->mm), 2); /* the flag keeps the two VMAs apart */
  first_scan(&f);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 4 * PAGE), 4);
  ck_assert_uint_eq(marked_ptes(&f, BASE + 4 * PAGE, 4 * PAGE), 0);
  /* CPU 1 (node 1, in the policy): thread 2's first fault on the page
   * (last_cpupid unset, a young task) moves it at once. */
  ck_assert_int_eq(fault_on(&f, 1, BASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_int_eq(node_of_va(&f, BASE), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_MIGRATE_FILTERED), 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 1);
  /* CPU 2 (node 2, outside it): a hinting fault, no filter step, no move. */
  uint64_t filtered = ctr(&f, CTR_NUMA_MIGRATE_FILTERED), hints = ctr(&f, CTR_NUMA_HINT_FAULTS);
  for (unsigned k = 0; k < 2; k++) {
    next_scan_now(&f);
    ck_assert_int_eq(fault_on(&f, 2, BASE + PAGE, ACC_LOAD), FAULT_MAPPED);
  }
  ck_assert_int_eq(node_of_va(&f, BASE + PAGE), 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), hints + 2);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_MIGRATE_FILTERED), filtered);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 1);
  /* Under =balancing a local fault asks the filter too (mpol_misplaced's
   * MPOL_BIND case breaks to the MPOL_F_MORON step), so it records its
   * CPU and pid: thread 1's local fault, then thread 2's from node 1 is
   * filtered (last node 0). */
  next_scan_now(&f);
  ck_assert_int_eq(fault_on(&f, 0, BASE + 2 * PAGE, ACC_LOAD), FAULT_MAPPED);
  next_scan_now(&f);
  ck_assert_int_eq(fault_on(&f, 1, BASE + 2 * PAGE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_int_eq(node_of_va(&f, BASE + 2 * PAGE), 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 1);
  /* preferred_many=balancing takes the flag as bind does (the 2024
   * kernels): its range is scanned. */
  sys(&f, REC_MEMPOLICY, BASE + 4 * PAGE, 4 * PAGE, MPOL_F_BALANCING, MPOL_PREFERRED_MANY, 0x3);
  next_scan_now(&f);
  ck_assert_uint_eq(marked_ptes(&f, BASE + 4 * PAGE, 4 * PAGE), 4);
  /* A process policy of preferred: nothing of the range without one of
   * its own is scanned any more. */
  sys(&f, REC_MEMPOLICY, 0, 0, MPOL_F_PROCESS, MPOL_PREFERRED, 0x1);
  sys(&f, REC_MEMPOLICY, BASE, 8 * PAGE, 0, MPOL_DEFAULT_LOCAL, 0);
  for (uint64_t va = BASE; va < BASE + 8 * PAGE; va += PAGE)
    if (pte_entry(&f, va) & PTE_SW_NUMA)
      ck_assert_int_eq(fault_on(&f, 0, va, ACC_LOAD), FAULT_MAPPED);
  next_scan_now(&f);
  ck_assert_uint_eq(marked_ptes(&f, BASE, 8 * PAGE), 0);
  machine_free(f.m);
}
END_TEST

START_TEST(test_thp_migration)
{
  /* Under 3.8's filter: the first remote fault is remembered, the second moves it. */
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=always", V38, NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, PMD, 0, 0, 0);
  ck_assert_int_eq(fault_on(&f, 0, BASE, ACC_STORE), FAULT_MAPPED);
  uint64_t pmd = pmd_entry(&f, BASE);
  ck_assert_uint_ne(pmd & PTE_PS, 0);
  uint64_t free0 = physmem_free_pages(f.m->k->pm, 0), free1 = physmem_free_pages(f.m->k->pm, 1);
  first_scan(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HUGE_PTE_UPDATES), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PTE_UPDATES), 512);
  ck_assert_uint_ne(pmd_entry(&f, BASE) & PTE_SW_NUMA, 0);
  ck_assert_int_eq(xlat(&f, 1, BASE + 5 * PAGE, ACC_LOAD), XLAT_NOT_PRESENT);
  ck_assert_int_eq(fault_on(&f, 1, BASE + 5 * PAGE, ACC_LOAD), FAULT_MAPPED); /* filtered */
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 0);
  next_scan_now(&f);
  ck_assert_int_eq(fault_on(&f, 1, BASE + 7 * PAGE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 512);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), 2);
  uint64_t now = pmd_entry(&f, BASE);
  ck_assert_uint_ne(now & PTE_PS, 0);
  ck_assert_uint_eq(now & PTE_SW_NUMA, 0);
  ck_assert_int_eq(physmem_node_of(f.m->k->pm, pte_pfn(now)), 1);
  ck_assert_uint_eq(physmem_free_pages(f.m->k->pm, 0), free0 + 512);
  ck_assert_uint_eq(physmem_free_pages(f.m->k->pm, 1), free1 - 512);
  /* THP bookkeeping follows the page: one THP, the new one; the deposited
   * table is still there for a split. */
  ck_assert_uint_eq(thp_page_count(f.m->k), 1);
  ck_assert(thp_page_of(f.m->k, pte_pfn(now), NULL));
  ck_assert(!thp_page_of(f.m->k, pte_pfn(pmd), NULL));
  ck_assert_uint_eq(mm_deposited_count(f.t->mm), 1);
  ck_assert_int_eq(xlat(&f, 1, BASE + 7 * PAGE, ACC_LOAD), XLAT_OK);
  /* munmap frees the migrated THP whole. */
  sys(&f, REC_MUNMAP, BASE, PMD, 0, 0, 0);
  ck_assert_uint_eq(thp_page_count(f.m->k), 0);
  ck_assert_uint_eq(physmem_free_pages(f.m->k->pm, 1), free1);
  machine_free(f.m);
}
END_TEST

/* A THP faulted remote, local, remote.  6.12: thread 2's first fault (a
 * young task, last_cpupid unset) moves it at once.  3.8, either scheme:
 * the MPOL_F_MORON step records the local node, so the second remote
 * fault is filtered and the page stays. */
static uint64_t thp_remote_local_remote(const char *scheme, const char *version)
{
  const char *sets[] = { TWO_NODES, FAST, "thp.enabled=always", scheme, version, NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, PMD, 0, 0, 0);
  ck_assert_int_eq(fault_on(&f, 0, BASE, ACC_STORE), FAULT_MAPPED);
  first_scan(&f);
  static const int cpus[] = { 1, 0, 1 };
  for (unsigned i = 0; i < G_N_ELEMENTS(cpus); i++) {
    if (i)
      next_scan_now(&f);
    ck_assert_uint_ne(pmd_entry(&f, BASE) & PTE_SW_NUMA, 0);
    ck_assert_int_eq(fault_on(&f, cpus[i], BASE + i * PAGE, ACC_LOAD), FAULT_MAPPED);
  }
  uint64_t moved = ctr(&f, CTR_NUMA_PAGES_MIGRATED);
  machine_free(f.m);
  return moved;
}

START_TEST(test_thp_local_fault_filter_by_scheme)
{
  ck_assert_uint_eq(thp_remote_local_remote("numa.balancing=pte", "kernel.version=6.12"), 512);
  ck_assert_uint_eq(thp_remote_local_remote("numa.balancing=pte", V38), 0);
  ck_assert_uint_eq(thp_remote_local_remote("numa.balancing=pmd", V38), 0);
}
END_TEST

START_TEST(test_migrate_fail)
{
  /* Node 1 has no free page: thread 2's migration fails, counted, the page
   * stays, and at thread 2's next adaptation the period doubles, and keeps
   * doubling (the kernel keeps the failure count), as for a task whose
   * migrations fail. */
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", "numa.migrate_filter=false", NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 4 * PAGE, 0, 0, 0);
  populate(&f, 0, BASE, 4 * PAGE);
  GArray *held = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  uint64_t pfn;
  while (physmem_alloc_on(f.m->k->pm, 1, 0, MT_MOVABLE, &pfn))
    g_array_append_val(held, pfn);
  first_scan(&f);
  /* Thread 2's first fault adapts from nothing (1 ms doubled), then fails. */
  ck_assert_int_eq(fault_on(&f, 1, BASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_double_eq_tol(info(&f, f.t2).period_ms, 2.0, 1e-6);
  ck_assert_int_eq(node_of_va(&f, BASE), 0);
  ck_assert_uint_eq(ctr(&f, CTR_PGMIGRATE_FAIL), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 0);
  for (unsigned pass = 0; pass < 2; pass++) {
    next_scan_now(&f);
    ck_assert_int_eq(fault_on(&f, 1, BASE + PAGE, ACC_LOAD), FAULT_MAPPED);
  }
  ck_assert_double_eq_tol(info(&f, f.t2).period_ms, 4.0, 1e-6); /* 2 x 2, then the maximum */
  for (guint i = 0; i < held->len; i++)
    physmem_release(f.m->k->pm, g_array_index(held, uint64_t, i), 0);
  g_array_free(held, TRUE);
  machine_free(f.m);
}
END_TEST

/* ---- the pmd scheme ------------------------------------------------------------------ */

START_TEST(test_pmd_scheme)
{
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", "numa.balancing=pmd", V38, NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 2 * PMD, 0, 0, 0);
  populate(&f, 0, BASE, PMD);                   /* one table on node 0 */
  populate(&f, 0, BASE + PMD, 8 * PAGE);        /* one on both nodes */
  populate(&f, 1, BASE + PMD + 8 * PAGE, 8 * PAGE);
  /* The walk caches hold the table of the first PMD before the scan. */
  ck_assert_int_eq(xlat(&f, 1, BASE + 3 * PAGE, ACC_LOAD), XLAT_OK);
  first_scan(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PMD_UPDATES), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PTE_UPDATES), 512 + 16);
  ck_assert_uint_ne(pmd_entry(&f, BASE) & PTE_SW_NUMA, 0);
  ck_assert_uint_eq(pmd_entry(&f, BASE + PMD) & PTE_SW_NUMA, 0);
  ck_assert_uint_eq(marked_ptes(&f, BASE + PMD, 16 * PAGE), 16);
  /* The marked PMD stops the walk even where the PTE is unmarked. */
  unmark_pte(&f, BASE + 3 * PAGE);
  ck_assert_int_eq(xlat(&f, 1, BASE + 3 * PAGE, ACC_LOAD), XLAT_NOT_PRESENT);
  ck_assert_int_eq(xlat(&f, 1, BASE + 300 * PAGE, ACC_LOAD), XLAT_NOT_PRESENT);
  /* One fault restores the whole table: one hinting fault, filtered once. */
  ck_assert_int_eq(fault_on(&f, 1, BASE + 3 * PAGE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS_LOCAL), 0);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_MIGRATE_FILTERED), 512);
  ck_assert_uint_eq(marked_ptes(&f, BASE, PMD), 0);
  ck_assert_uint_eq(pmd_entry(&f, BASE) & PTE_SW_NUMA, 0);
  ck_assert_int_eq(xlat(&f, 1, BASE + 300 * PAGE, ACC_LOAD), XLAT_OK);
  /* The mixed table takes faults PTE by PTE. */
  ck_assert_int_eq(fault_on(&f, 1, BASE + PMD, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), 2);
  ck_assert_uint_eq(marked_ptes(&f, BASE + PMD, 16 * PAGE), 15);
  /* Next period, a second fault from node 1: the group moves, each page
   * counted. */
  next_scan_now(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PMD_UPDATES), 2);
  ck_assert_int_eq(fault_on(&f, 1, BASE + 100 * PAGE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), 3);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 512);
  for (unsigned i = 0; i < 512; i += 37)
    ck_assert_int_eq(node_of_va(&f, BASE + i * PAGE), 1);
  ck_assert_int_eq(xlat(&f, 1, BASE + 511 * PAGE, ACC_LOAD), XLAT_OK);
  /* Now on node 1, a fault from node 1 on the re-marked table is local. */
  next_scan_now(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PMD_UPDATES), 3);
  ck_assert_int_eq(fault_on(&f, 1, BASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS_LOCAL), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 512);
  machine_free(f.m);
}
END_TEST

/* A group fault copies its pages one after the other: on an idle machine
 * each copy finds the DRAM free, so the fault costs the trap, the restored
 * entries and 512 page migrations, not 512 copies queued behind each other
 * (which grows with the square of the group). */
START_TEST(test_pmd_group_copies_in_sequence)
{
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", "numa.balancing=pmd", V38, NULL };
  Fx f;
  setup(&f, sets, TRUE);
  Kernel *k = f.m->k;
  sys(&f, REC_MMAP, BASE, PMD, 0, 0, 0);
  populate(&f, 0, BASE, PMD);
  first_scan(&f);
  ck_assert_int_eq(fault_on(&f, 1, BASE, ACC_LOAD), FAULT_MAPPED); /* filtered */
  next_scan_now(&f);
  Cpu *c = f.m->cpus[1];
  c->clock = MAX(c->clock, f.m->cpus[0]->clock) + ms(&f, 1); /* the DRAM is idle again */
  uint64_t cycles = 0;
  ck_assert_int_eq(fault_handle(k, &c->kc, f.t->mm, BASE + 7 * PAGE, ACC_LOAD, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 512);
  double page = (double)kernel_copy_cycles(k, PAGE) +
                (double)kernel_ns_to_cycles(k, settings_double(k->s, SET_NUMA_MIGRATE_PAGE_NS));
  double rest = (double)kernel_ns_to_cycles(k, settings_double(k->s, SET_NUMA_HINT_FAULT_NS)) +
                512 * settings_double(k->s, SET_NUMA_SCAN_PTE_NS) * k->cycles_per_ns;
  ck_assert_double_ge((double)cycles, 512 * page);
  ck_assert_double_le((double)cycles, 1.05 * (512 * page + rest));
  machine_free(f.m);
}
END_TEST

/* The frame cpu's translation hardware (TLBs, HPT, walk) gives for va, or
 * UINT64_MAX when it finds none. */
static uint64_t xlat_pfn(Fx *f, int cpu, uint64_t va)
{
  Xlat x;
  memset(&x, 0, sizeof x);
  Cpu *c = f->m->cpus[cpu];
  fixture_load_asid(f->m, c, f->t->mm);
  if (f->m->arch->translate(c, f->t->mm, va, ACC_LOAD, &x, NULL) != XLAT_OK)
    return UINT64_MAX;
  return x.pfn + ((va >> 12) & ((UINT64_C(1) << (f->m->arch->page_shift[x.size] - 12)) - 1));
}

/* A page table that spans two VMAs, A (8 pages) then B (8 pages, after a
 * gap), and a scan budget of 8 pages: the scan marks A's pages and, all
 * the table being on node 0, the PMD, and flushes A's piece only.  B's
 * entries stay unmarked and in the TLBs of both CPUs.  A fault from node 1
 * on A moves the whole group, B's pages too: their old frames are freed,
 * so each such migration must shoot its page down (try_to_unmap's
 * ptep_clear_flush of an accessible entry) or a CPU goes on reaching the
 * freed frame.  A's pages, PROT_NONE since the scan's flush, need none. */
static void group_migration_shoots_down(const char *machine, uint64_t base, const char *extra)
{
  const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", "numa.balancing=pmd", V38,
                               "numa.migrate_filter=false", "numa.scan_size_mb=0.03125", extra, NULL };
  Fx f;
  setup_on(&f, machine, sets, TRUE);
  ck_assert_uint_eq(f.m->k->base_bytes, PAGE);
  uint64_t a = base, b = base + 16 * PAGE;
  sys(&f, REC_MMAP, a, 8 * PAGE, 0, 0, 0);
  sys(&f, REC_MMAP, b, 8 * PAGE, 0, 0, 0);
  populate(&f, 0, a, 8 * PAGE);
  populate(&f, 0, b, 8 * PAGE);
  uint64_t old = pte_pfn(pte_entry(&f, b));
  for (int cpu = 0; cpu < 2; cpu++) { /* B's translation cached on both CPUs */
    ck_assert_uint_eq(xlat_pfn(&f, cpu, b), old);
    ck_assert_uint_eq(xlat_pfn(&f, cpu, b), old);
  }
  first_scan(&f);
  ck_assert_uint_ne(pmd_entry(&f, a) & PTE_SW_NUMA, 0);
  ck_assert_uint_eq(marked_ptes(&f, a, 8 * PAGE), 8);
  ck_assert_uint_eq(marked_ptes(&f, b, 8 * PAGE), 0);
  uint64_t remote = ctr(&f, CTR_NR_TLB_REMOTE_FLUSH);
  ck_assert_int_eq(fault_on(&f, 1, a, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 16);
  ck_assert_int_eq(node_of_va(&f, b), 1);
  uint64_t now = pte_pfn(pte_entry(&f, b));
  ck_assert_uint_ne(now, old);
  for (int cpu = 0; cpu < 2; cpu++)
    ck_assert_msg(xlat_pfn(&f, cpu, b) == now, "%s: CPU %d translates %#" G_GINT64_MODIFIER "x to pfn %#"
                  G_GINT64_MODIFIER "x, the entry says %#" G_GINT64_MODIFIER "x (the old, freed frame was %#"
                  G_GINT64_MODIFIER "x)", machine, cpu, b, xlat_pfn(&f, cpu, b), now, old);
  /* One shootdown per page of B, none for A's. */
  ck_assert_uint_eq(ctr(&f, CTR_NR_TLB_REMOTE_FLUSH), remote + 8);
  machine_free(f.m);
}

START_TEST(test_pmd_group_shoots_down_cached)
{
  group_migration_shoots_down("skylake", BASE, NULL);
  group_migration_shoots_down("power7", PBASE, "mm.base_page_size=4K");
}
END_TEST

/* ---- the hardware ------------------------------------------------------------------- */

START_TEST(test_x86_walk_not_present)
{
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=never", NULL };
  Fx f;
  setup(&f, sets, TRUE);
  sys(&f, REC_MMAP, BASE, 4 * PAGE, 0, 0, 0);
  populate(&f, 0, BASE, 4 * PAGE);
  /* Cached in the STLB and the walk caches before the scan. */
  ck_assert_int_eq(xlat(&f, 0, BASE, ACC_LOAD), XLAT_OK);
  ck_assert_int_eq(xlat(&f, 0, BASE, ACC_LOAD), XLAT_OK);
  first_scan(&f);
  /* The entry is present to the kernel, not to the MMU; the scan's flush
   * dropped the cached translation. */
  uint64_t e = pte_entry(&f, BASE);
  ck_assert_uint_eq(e & (PTE_P | PTE_SW_NUMA), PTE_P | PTE_SW_NUMA);
  ck_assert_int_eq(xlat(&f, 0, BASE, ACC_LOAD), XLAT_NOT_PRESENT);
  ck_assert_int_eq(xlat(&f, 1, BASE, ACC_STORE), XLAT_NOT_PRESENT);
  ck_assert_int_eq(fault_on(&f, 0, BASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_int_eq(xlat(&f, 0, BASE, ACC_LOAD), XLAT_OK);
  machine_free(f.m);
}
END_TEST

START_TEST(test_ppc64_hash_not_present)
{
  static const char *const sets[] = { TWO_NODES, FAST, "mm.base_page_size=4K", "thp.enabled=never", NULL };
  Fx f;
  setup_on(&f, "power7", sets, TRUE);
  sys(&f, REC_MMAP, PBASE, 4 * PAGE, 0, 0, 0);
  populate(&f, 0, PBASE, 4 * PAGE);
  ck_assert_int_eq(xlat(&f, 0, PBASE, ACC_LOAD), XLAT_OK); /* an HPTE is inserted */
  uint64_t inserts = ctr(&f, CTR_HPTE_INSERTS);
  ck_assert_int_eq(xlat(&f, 0, PBASE, ACC_LOAD), XLAT_OK);
  first_scan(&f);
  /* The scan's flush invalidated the HPTE, and the hash fault reading
   * Linux's page table finds the entry PROT_NONE. */
  ck_assert_int_eq(xlat(&f, 0, PBASE, ACC_LOAD), XLAT_NOT_PRESENT);
  ck_assert_int_eq(fault_on(&f, 1, PBASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), 1);
  ck_assert_int_eq(xlat(&f, 0, PBASE, ACC_LOAD), XLAT_OK);
  ck_assert_uint_eq(ctr(&f, CTR_HPTE_INSERTS), inserts + 1);
  machine_free(f.m);
}
END_TEST

START_TEST(test_ppc64_pmd_scheme)
{
  static const char *const sets[] = { TWO_NODES, FAST, "mm.base_page_size=4K", "thp.enabled=never",
                                      "numa.balancing=pmd", V38, NULL };
  Fx f;
  setup_on(&f, "power7", sets, TRUE);
  sys(&f, REC_MMAP, PBASE, 8 * PAGE, 0, 0, 0);
  populate(&f, 0, PBASE, 8 * PAGE);
  ck_assert_int_eq(xlat(&f, 0, PBASE + PAGE, ACC_LOAD), XLAT_OK);
  first_scan(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PMD_UPDATES), 1);
  /* The hash fault stops at the marked PMD. */
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&f.t->mm->pt, PBASE + PAGE, &level, &idx);
  pgtable_entry_set(n, idx, n->e[idx] & ~PTE_SW_NUMA);
  ck_assert_int_eq(xlat(&f, 0, PBASE + PAGE, ACC_LOAD), XLAT_NOT_PRESENT);
  ck_assert_int_eq(fault_on(&f, 0, PBASE + PAGE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS), 1);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_HINT_FAULTS_LOCAL), 1);
  for (unsigned i = 0; i < 8; i++)
    ck_assert_int_eq(xlat(&f, 0, PBASE + i * PAGE, ACC_LOAD), XLAT_OK);
  machine_free(f.m);
}
END_TEST

START_TEST(test_ppc64_64k_thp)
{
  /* 64K pages and 16M THP: a THP counts its 256 base pages. */
  static const char *const sets[] = { TWO_NODES, FAST, "thp.enabled=always", "numa.migrate_filter=false",
                                      "machine.mem_per_node=2G", NULL };
  Fx f;
  setup_on(&f, "power7", sets, TRUE);
  uint64_t huge = f.m->k->pmd_bytes;
  ck_assert_uint_eq(huge, 16 * MB);
  sys(&f, REC_MMAP, PBASE, huge, 0, 0, 0);
  ck_assert_int_eq(fault_on(&f, 0, PBASE, ACC_STORE), FAULT_MAPPED);
  first_scan(&f);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PTE_UPDATES), 256);
  ck_assert_int_eq(xlat(&f, 1, PBASE, ACC_LOAD), XLAT_NOT_PRESENT);
  ck_assert_int_eq(fault_on(&f, 1, PBASE, ACC_LOAD), FAULT_MAPPED);
  ck_assert_uint_eq(ctr(&f, CTR_NUMA_PAGES_MIGRATED), 256);
  ck_assert_int_eq(node_of_va(&f, PBASE), 1);
  ck_assert_int_eq(xlat(&f, 1, PBASE, ACC_LOAD), XLAT_OK);
  machine_free(f.m);
}
END_TEST

/* The fault path's test of the entry it found (numa_balance_marked_found)
 * answers as numa_balance_marked's own descent: marked and unmarked PTEs,
 * present or not, a PMD table marked whole, huge PMDs marked or not, a
 * non-present PMD with the bit, empty PMDs and an empty PUD, changed at
 * random. */
START_TEST(test_marked_found)
{
  static const char *const sets[] = { TWO_NODES, "thp.enabled=never", NULL };
  Fx f;
  setup(&f, sets, FALSE);
  PageTable *pt = &f.t->mm->pt;
  const uint64_t pte = PTE_P | PTE_RW | PTE_US | PTE_A;
  GRand *r = g_rand_new_with_seed(3);
  unsigned marked = 0, found_levels[4] = { 0 };
  for (unsigned step = 0; step < 4000; step++) {
    unsigned pmd = (unsigned)g_rand_int_range(r, 0, 6);
    uint64_t va = BASE + pmd * PMD + (uint64_t)g_rand_int_range(r, 0, 4) * PAGE;
    gboolean far = g_rand_int_range(r, 0, 8) == 0;
    if (far)
      va += 512 * PMD; /* the next PUD: left empty */
    else if (g_rand_int_range(r, 0, 3) == 0) {
      uint64_t numa = g_rand_boolean(r) ? PTE_SW_NUMA : 0;
      uint64_t pfn = (uint64_t)g_rand_int_range(r, 1, 64) << 9;
      switch (pmd) {
      case 0: /* a table of PTEs, some marked, some not present */
        pgtable_set(pt, va, 1, g_rand_boolean(r) ? pte_make(pfn, pte | numa) : numa, NULL);
        break;
      case 1: { /* a table marked whole, or not */
        pgtable_set(pt, va, 1, pte_make(pfn, pte), NULL);
        unsigned level, idx;
        pgtable_lookup(pt, BASE + PMD, &level, &idx);
        ck_assert_uint_eq(level, 1);
        PtNode *up = pt->root;
        for (unsigned l = pt->g.levels; l > 2; l--)
          up = up->child[pgtable_index(&pt->g, l, va)];
        unsigned i = pgtable_index(&pt->g, 2, va);
        ck_assert(pgtable_entry_set(up, i, (up->e[i] & ~PTE_SW_NUMA) | numa));
        break;
      }
      case 2: case 3: /* huge PMDs */
        pgtable_set(pt, va, 2, pte_make(pfn, pte | PTE_PS | (pmd == 2 ? numa : 0)), NULL);
        break;
      case 4: /* a PMD not present, with the bit or without */
        pgtable_set(pt, va, 2, numa, NULL);
        break;
      default: /* empty */
        break;
      }
    }
    PtFound found;
    pgtable_find(pt, va, &found);
    gboolean want = numa_balance_marked(f.t->mm, va);
    ck_assert_msg(numa_balance_marked_found(&found) == want, "step %u: va %#" G_GINT64_MODIFIER "x (PMD %u), level %u",
                  step, va, pmd, found.level);
    marked += want;
    found_levels[MIN(found.level, 3)]++;
  }
  ck_assert_uint_gt(marked, 500);
  ck_assert_uint_gt(found_levels[1], 500);
  ck_assert_uint_gt(found_levels[2], 500);
  ck_assert_uint_gt(found_levels[3], 100);
  g_rand_free(r);
  pgtable_clear_range(pt, BASE, BASE + 1024 * PMD, NULL, NULL); /* the pfns above are made up */
  machine_free(f.m);
}
END_TEST

static Suite *numa_balance_suite(void)
{
  Suite *s = suite_create("numa_balance");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_off_and_one_node);
  tcase_add_test(tc, test_scan_budget_and_offset);
  tcase_add_test(tc, test_scan_skips);
  tcase_add_test(tc, test_period_private_and_shared);
  tcase_add_test(tc, test_period_doubles_without_local_or_shared);
  tcase_add_test(tc, test_scan_bounds_scale_with_rss);
  tcase_add_test(tc, test_should_migrate_cpupid);
  tcase_add_test(tc, test_period_3_8);
  tcase_add_test(tc, test_pmd_refused_under_6_12);
  tcase_add_test(tc, test_task_timing);
  tcase_add_test(tc, test_task_cache_never_mixes_threads);
  tcase_add_test(tc, test_max_below_min_refused);
  tcase_add_test(tc, test_hint_faults_local_remote);
  tcase_add_test(tc, test_filter_two_stage);
  tcase_add_test(tc, test_filter_off_and_policy);
  tcase_add_test(tc, test_bind_balancing);
  tcase_add_test(tc, test_thp_migration);
  tcase_add_test(tc, test_thp_local_fault_filter_by_scheme);
  tcase_add_test(tc, test_migrate_fail);
  tcase_add_test(tc, test_pmd_scheme);
  tcase_add_test(tc, test_pmd_group_copies_in_sequence);
  tcase_add_test(tc, test_pmd_group_shoots_down_cached);
  tcase_add_test(tc, test_x86_walk_not_present);
  tcase_add_test(tc, test_ppc64_hash_not_present);
  tcase_add_test(tc, test_ppc64_pmd_scheme);
  tcase_add_test(tc, test_ppc64_64k_thp);
  tcase_add_test(tc, test_marked_found);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(numa_balance_suite)
