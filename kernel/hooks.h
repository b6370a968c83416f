/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hooks.h - the kernel's one door to the hardware.
 *
 * Linux's generic mm/ never touches a TLB or a cache itself: it calls the
 * architecture's hooks (flush_tlb_mm_range, tlb_flush through mmu_gather,
 * clear_page, copy_page) and reads the time through the scheduler.  The
 * model's kernel does the same.  Everything it asks of the machine is a
 * hook of KernelHooks, which sim/machine.c implements; the CPU the kernel
 * works on is a KCpu, a handle with what the kernel may know of a CPU (its
 * id, node, clock, counters, and the task it runs), never the machine's
 * Cpu.  So the kernel (kernel/) includes nothing of sim/ or arch/, and its
 * unit tests link a stub of these hooks (tests/kernel_fixture.h) and no
 * machine.
 *
 * The machine embeds each CPU's KCpu in its Cpu and reaches the Cpu back
 * from the handle (container_of); the kernel never does.
 */
#ifndef MMUSIM_HOOKS_H
#define MMUSIM_HOOKS_H

#include <glib.h>
#include <stdint.h>
#include "stats.h"

typedef struct Mm Mm;
typedef struct Thread Thread;

/* TLB_NR_DYN_ASIDS (arch/x86/include/asm/tlbflush.h, Linux 4.14 to 6.12):
 * the PCIDs a CPU keeps for user address spaces. */
#define KCPU_NR_DYN_ASIDS 6

/* One slot of cpu_tlbstate.ctxs[]: the mm whose entries the ASID tags
 * (its ctx_id; 0: none) and the tlb_gen they are current with. */
typedef struct {
  uint64_t ctx_id;
  uint64_t tlb_gen;
} KCpuAsid;

/* A CPU as the kernel sees it.  id and node never change; clock and ctr
 * point into the machine's CPU; the scheduling fields are the kernel's
 * (Linux keeps them in the runqueue and the task). */
typedef struct KCpu {
  unsigned id;
  int node;
  const uint64_t *clock;  /* the CPU's clock, cycles: read it with kcpu_now() */
  Counters *ctr;          /* the CPU's counters */
  Thread *cur;            /* task running on this CPU, NULL when idle */
  uint64_t cur_since;     /* clock when cur started running (its run time counts from here) */
  gboolean cur_exited;    /* cur NULL because its task exited (kernel/oom_kill.c), not idle since
                           * the start: the next thread's arrival is a context switch (sim/engine.c) */
  uint64_t numa_due;      /* clock at which cur's NUMA scan tick is due (numa_balance_switch_in) */
  /* x86 cpu_tlbstate (arch/x86/mm/tlb.c): the dynamic ASIDs, the slot the
   * next new mm takes, the slot loaded (kernel_switch_asid). */
  KCpuAsid asids[KCPU_NR_DYN_ASIDS];
  unsigned next_asid;
  unsigned loaded_asid;
} KCpu;

/* The current time on a CPU, in cycles. */
static inline uint64_t kcpu_now(const KCpu *cpu)
{
  return *cpu->clock;
}

/* One stretch of a clear or a copy the kernel ran: `bytes` written from
 * frame pfn on and, for a copy, read from frame src_pfn on, line by line
 * (copy_page's loop), or nothing read for a clear (KERNEL_FILL_CLEAR).
 * Frames are 4K, as everywhere in the kernel. */
#define KERNEL_FILL_CLEAR UINT64_MAX
typedef struct {
  uint64_t pfn;
  uint64_t src_pfn;  /* KERNEL_FILL_CLEAR: a clear */
  uint64_t bytes;
} KernelFill;

/* What the kernel asks of the hardware.  `hw` is the machine's pointer,
 * given to kernel_new (Kernel.hw). */
typedef struct KernelHooks {
  /* flush_tlb_mm_range: invalidate [start, end) of mm, mapped by pages of
   * 2^stride_shift bytes, on every CPU that may hold it, charging the
   * initiator its invalidations and the shootdown.  freed_tables: page-
   * table pages of mm were freed (mmu_gather's freed_tables), so every
   * CPU's paging-structure caches drop mm's entries as well; an empty range
   * with freed_tables drops only those. */
  void (*flush_tlb_range)(void *hw, KCpu *initiator, Mm *mm, uint64_t start, uint64_t end,
                          unsigned stride_shift, gboolean freed_tables);
  /* The kernel on cpu cleared or copied `bytes` of the page at pfn,
   * starting `after` cycles past the CPU's clock, which took span_cycles at
   * the kernel's rate: the transfer loads the DRAM of the page's node.
   * Returns the cycles queueing adds (0 on an idle machine). */
  uint64_t (*dram_bulk)(void *hw, KCpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t after, uint64_t span_cycles);
  /* The kernel on cpu cleared or copied fills[0..n), in that order: the
   * lines its stores wrote (and its copies read) are in cpu's caches now,
   * as write-allocate stores leave them (x86 rep stosb in clear_page_erms,
   * ppc64 dcbz).  Costs nothing: the kernel charged the work already
   * (its clear and copy rates, dram_bulk). */
  void (*fill_lines)(void *hw, KCpu *cpu, const KernelFill *fills, unsigned n);
  /* Kernel work on cpu: wait for its outstanding misses (drain), then
   * `cycles` more (stall drains first). */
  void (*drain)(void *hw, KCpu *cpu);
  void (*stall)(void *hw, KCpu *cpu, uint64_t cycles);
  /* cpu stopped running its task's address space: its translation
   * shortcuts (host-side caches of the last translation) go. */
  void (*forget_shortcuts)(void *hw, KCpu *cpu);
} KernelHooks;

#endif
