/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numa_balance.h - automatic NUMA balancing (kernel/sched/fair.c
 * task_numa_work, mm/memory.c do_numa_page, mm/migrate.c), selected by
 * numa.balancing as a table of hooks:
 *   off  nothing is scanned;
 *   pte  the scanner makes up to numa.scan_size_mb of the task's mapped
 *        memory PROT_NONE (change_prot_numa), one PTE or huge PMD at a time;
 *        the next access takes a hinting fault that restores the entry and
 *        may migrate the page (a THP whole) to the faulting CPU's node;
 *   pmd  the scheme of Linux 3.8 to 3.12 (kernel.version=3.8 only) and
 *        seed 003: a page table whose present pages all
 *        sit on one node is marked at the PMD, and one fault restores all its
 *        PTEs and handles them as one group.
 * Each scheme is a file of its own (numa_balance_pte.c, numa_balance_pmd.c).
 * A PROT_NONE entry keeps its frame and PTE_P, and carries PTE_SW_NUMA;
 * the hardware walkers (arch/) treat PTE_P | PTE_SW_NUMA as not present,
 * the kernel's own code as present (pte_present() is true for protnone).
 *
 * Scanning runs in simulated time, per task as in Linux: a task comes due
 * by its own run time (the cycles it ran), first numa.scan_delay_ms after
 * it started, then every scan period, which starts at
 * task_scan_min and adapts between task_scan_min and task_scan_max to the
 * private and local hinting faults the task took (numa.period_threshold); it
 * scans its
 * address space when that one's next scan time has come.  The scanner's
 * work is charged to the CPU of the task that scans, its TLB flush is a
 * shootdown.
 */
#ifndef MMUSIM_NUMA_BALANCE_H
#define MMUSIM_NUMA_BALANCE_H

#include <glib.h>
#include <stdint.h>
#include "fault.h"
#include "kernel.h"
#include "registry.h"

typedef struct KCpu KCpu;
typedef struct Thread Thread;
typedef struct NumaBalance NumaBalance;

/* A balancing scheme: the scanner's step over one PMD-sized range
 * [start, end) of v (change_pmd_range for one PMD).  It marks what the
 * scheme marks, adds the entries it wrote to *entries and the counters of
 * cpu, and returns the base pages it made PROT_NONE (0: nothing was).
 * NULL for off.  A scheme is one file, numa_balance_NAME.c, on the shared
 * walk of numa_balance_impl.h, and one row of the registry in
 * numa_balance.c (base/registry.h), in the order of numa.balancing's
 * choices. */
typedef struct {
  REGISTRY_ROW; /* name: the choice of numa.balancing */
  uint64_t (*mark_pmd)(NumaBalance *nb, KCpu *cpu, Mm *mm, const Vma *v, uint64_t start, uint64_t end,
                       uint64_t *entries);
} NumaBalancePolicy;

/* The registry's rows, in the order of numa.balancing's choices (*n of
 * them). */
const NumaBalancePolicy *const *numa_balance_policies(unsigned *n);

/* Where the pmd scheme's group filter (Linux 3.8 to 3.12) keeps the node
 * of the table's last hinting fault: software bits 52..58 of the table's
 * PMD, node + 1, 0 when no fault was seen.  A page's own last_cpupid is
 * kept in physmem (physmem_xchg_last_cpupid), as Linux keeps it in the
 * page. */
#define NUMA_LAST_SHIFT 52
#define NUMA_LAST_MASK (UINT64_C(0x7f) << NUMA_LAST_SHIFT)

NumaBalance *numa_balance_new(Kernel *k, GError **error);
void numa_balance_free(NumaBalance *nb);

/* A new address space (kernel_mm).  Its first scan is due
 * numa.scan_delay_ms after its first task starts (init_numa_balancing). */
void numa_balance_mm_new(NumaBalance *nb, Mm *mm);

/* The address space is going away (the OOM killer's exit_mmap): its state
 * and its tasks' are dropped, so it is never scanned again. */
void numa_balance_mm_exit(NumaBalance *nb, Mm *mm);

/* Thread t appeared, cloned by creator (the thread whose records came
 * before it; NULL for none): a thread that joins an address space with
 * tasks already starts its scans later (init_numa_balancing's stagger).
 * A thread never announced is taken as its address space's first. */
void numa_balance_task_new(NumaBalance *nb, const Thread *t, const Thread *creator);

/* t starts running on cpu (cpu->cur == t, cpu->cur_since == cpu->clock):
 * sets cpu->numa_due, the clock at which t's scan tick comes due
 * (UINT64_MAX: never).  The engine compares the clock with it before each
 * record, one compare, as for khugepaged. */
void numa_balance_switch_in(NumaBalance *nb, KCpu *cpu, const Thread *t);

/* task_tick_numa and task_numa_work for thread t running on cpu, at
 * cpu->clock >= cpu->numa_due: scan t's address space if both t and it are
 * due, charging cpu; sets cpu->numa_due again. */
void numa_balance_tick(NumaBalance *nb, KCpu *cpu, Thread *t);

/* A task's scan timing, for tests and reports. */
typedef struct {
  uint64_t node_stamp;   /* run time (cycles) its next period counts from */
  double period_ms;      /* its scan period */
  uint64_t mm_next_scan; /* its address space's next scan time (cycles; UINT64_MAX before it started) */
  uint64_t mm_seq;       /* passes over the address space */
  double scan_min_ms, scan_max_ms; /* task_scan_min and task_scan_max now (6.12) */
} NumaTaskInfo;
gboolean numa_balance_task_info(NumaBalance *nb, const Thread *t, NumaTaskInfo *info);

/* Does the fault at va hit an entry marked PTE_SW_NUMA (the PTE, a huge
 * PMD, or a page-table PMD marked by the pmd scheme)?  fault_handle asks
 * before its own paths and calls numa_balance_fault when it does. */
gboolean numa_balance_marked(const Mm *mm, uint64_t va);
/* numa_balance_marked() of the va that f was just found for (pgtable_find),
 * without a descent of its own. */
gboolean numa_balance_marked_found(const PtFound *f);

/* The fault path found a PTE or PMD marked PTE_SW_NUMA at va: do_numa_page /
 * do_huge_pmd_numa_page.  *cycles gets the handler's cost. */
FaultResult numa_balance_fault(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t va, AccessKind kind,
                               uint64_t *cycles);

#endif
