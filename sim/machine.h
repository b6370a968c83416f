/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * machine.h - a machine built from settings (a preset, base/preset.h, and
 * the user's): CPUs on nodes, their caches, the kernel, the threads that
 * run on it, and the hooks through which the kernel reaches the hardware
 * (kernel/hooks.h).
 */
#ifndef MMUSIM_MACHINE_H
#define MMUSIM_MACHINE_H

#include <glib.h>
#include "arch.h"
#include "cpu.h"
#include "dram.h"
#include "kernel.h"
#include "preset.h"
#include "settings.h"
#include "task.h"

typedef struct EventLog EventLog;

struct Machine {
  char *name;
  Settings *s;
  const ArchOps *arch;
  Kernel *k;
  unsigned n_cpus;
  /* Every CPU has its clock and counters; its TLBs, caches and walk caches
   * are built when it first runs a thread or kernel work (machine_cpu_ready),
   * n_built of them so far. */
  Cpu **cpus;
  unsigned n_built;
  KCpu **kcpus;             /* the kernel's handles of cpus (kernel_attach_cpus) */
  Cache **llc;              /* one per node */
  Dram *dram;               /* every node's memory and the links, shared by the CPUs */
  GHashTable *threads;      /* (pid << 32 | tid) -> Thread */
  unsigned next_cpu;        /* threads placed by the scheduler so far */
  gboolean spread;          /* sched.placement = spread */
  unsigned *next_on_node;   /* spread: round-robin cursor within each node */
  /* TLB shootdown costs in cycles (tlb.shootdown_ns, tlb.shootdown_per_cpu_ns,
   * tlb.ipi_handler_ns) */
  uint64_t shootdown_cycles, shootdown_per_cpu_cycles, ipi_handler_cycles;
  EventLog *ev;
  uint64_t walk_sample_left; /* walks until the next one written to --events */
  /* The kernel's clears and copies in the caches (machine_fill_lines): the
   * host's working memory, and its fills in physical addresses (MemFill). */
  MemFillScratch *fill_scratch;
  GArray *fills;
};

/* Build a machine from resolved settings (takes a copy of them). */
Machine *machine_new(const char *name, const Settings *s, EventLog *ev, GError **error);
void machine_free(Machine *m);

/* The thread (pid, tid), created on first use and placed on `cpu` (or the
 * scheduler's choice when cpu < 0: with sched.placement = spread the i-th
 * such thread goes to node i mod nodes, on that node's CPUs in turn; with
 * fill to CPU i mod cpus).  NULL when its mm cannot be created (with
 * mem.oom_policy=kill, after the OOM killer found nothing to kill). */
Thread *machine_thread(Machine *m, uint32_t pid, uint32_t tid, int cpu);
/* FALSE, with a SIM_ERROR_MACHINE error naming the limit, when the thread
 * (pid, tid) is new and the machine has kernel.pid_max threads already
 * (every task takes a pid: alloc_pid, kernel/pid.c; a process is at least
 * one task, so this bounds processes too).  Threads of one process have no
 * limit of their own, as in Linux. */
gboolean machine_thread_check(const Machine *m, uint32_t pid, uint32_t tid, GError **error);

/* c, built if it was not (its TLBs, caches and walk caches): call before
 * anything that uses them.  Returns c. */
Cpu *machine_cpu_ready(Machine *m, Cpu *c);

/* TLB shootdown: invalidate [start, end) of `mm` on every CPU that may hold
 * it (mm_cpumask), charging `initiator` its local invalidations.  Ranges
 * above tlb.flush_ceiling_pages flush the whole context.  When other CPUs
 * may hold the mm, the initiator also pays tlb.shootdown_ns plus
 * tlb.shootdown_per_cpu_ns per target and counts nr_tlb_remote_flush; each
 * target pays tlb.ipi_handler_ns and counts nr_tlb_remote_flush_received;
 * all of it goes to shootdown_cycles. */
void machine_flush_range(Machine *m, Cpu *initiator, Mm *mm, uint64_t start, uint64_t end);
/* The same for a range mapped by pages of 2^stride_shift bytes (huge
 * pages): flush_tlb_mm_range's stride, one INVLPG per page, so the ceiling
 * counts huge pages.  Every 4K granule is still invalidated, so fragments of
 * a huge page held in 4K or 2M entries go too. */
void machine_flush_range_stride(Machine *m, Cpu *initiator, Mm *mm, uint64_t start, uint64_t end,
                                unsigned stride_shift);
/* The kernel on `cpu` cleared or copied `bytes` of the page at `pfn`, which
 * took `span_cycles` at the kernel's rate: the transfer loads the DRAM of
 * the page's node (sim/dram.c) and the cycles queueing adds are returned
 * (0 on an idle machine). */
uint64_t machine_dram_bulk(Machine *m, Cpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t span_cycles);
/* The same for a transfer that starts `after` cycles past the CPU's clock:
 * one of several the kernel makes one after the other in one call (the
 * pages of a group migrated by one NUMA hinting fault). */
uint64_t machine_dram_bulk_after(Machine *m, Cpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t after,
                                 uint64_t span_cycles);
/* The kernel on `cpu` cleared or copied fills[0..n) in that order: their
 * lines fill cpu's L1D, L2 and its node's LLC (memsys_fill), at no cost. */
void machine_fill_lines(Machine *m, Cpu *cpu, const KernelFill *fills, unsigned n);
/* Page tables of `mm` were freed: drop paging-structure caches. */
void machine_tables_freed(Machine *m, Mm *mm);

/* The kernel's hooks, implemented by the machine (kernel/hooks.h). */
extern const KernelHooks machine_hooks;

/* Sum of every CPU's counters, cycles = sum of clocks less idle time. */
void machine_counters(const Machine *m, Counters *out);
/* Latest clock of any CPU (elapsed simulated time so far). */
uint64_t machine_max_clock(const Machine *m);

#endif
