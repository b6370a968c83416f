/*
 * cpu.h - one simulated CPU: its clock, counters, L1 TLBs, caches, the
 * architecture's translation state and the core timing model.
 *
 * Core timing (cpu.c): instructions issue at cpu.cpi cycles each; an access
 * costs its translation and data latency.  Independent misses overlap, up to
 * cpu.mshrs outstanding (slots are reused in issue order) and as long as the
 * oldest outstanding miss is less than cpu.rob_size instructions old; a
 * dependent load (D) cannot start before the previous load completed, so a
 * pointer chase pays every latency in full; instruction-fetch misses stall
 * the front end; page walks need one of cpu.page_walkers walkers; faults
 * drain the pipeline and run the handler synchronously.
 */
#ifndef MMUSIM_CPU_H
#define MMUSIM_CPU_H

#include <glib.h>
#include <stdint.h>
#include "arch.h"
#include "memsys.h"
#include "stats.h"
#include "tlb.h"

typedef struct Machine Machine;
typedef struct Thread Thread;

struct Cpu {
  int id, node;
  Machine *m;
  uint64_t clock;           /* cycles */
  uint64_t idle_cycles;     /* of the clock, time spent idle (waiting for a thread to start) */
  double frac;              /* fractional cycles not yet added to clock */
  double cpi;
  /* cpi as cpi_units / 2^cpi_shift when it is such a fraction (0.5, 1.25):
   * the clock then advances in integers, frac_units standing for frac.  The
   * same values as the double arithmetic, which is exact for these (see
   * issue_insns); cpi_fixed is FALSE otherwise, or once a count too large
   * for that sent the clock back to the doubles. */
  gboolean cpi_fixed;
  unsigned cpi_shift;
  uint64_t cpi_units, frac_units;
  uint64_t insns;           /* instructions issued, for the ROB bound */
  Counters ctr;
  MemHier *mem;
  const ArchOps *arch;
  void *arch_state;
  Tlb *l1d[ARCH_MAX_SIZES]; /* by page-size code; may repeat (mixed) or be NULL */
  Tlb *l1i[ARCH_MAX_SIZES];
  uint8_t l1d_home[ARCH_MAX_SIZES]; /* size code of the array that holds each size */
  uint8_t l1i_home[ARCH_MAX_SIZES];
  gboolean l1_mixed;        /* one L1 array per side holds every page size */
  /* The L1 probes in order, data and fetch side: each page size that is its
   * own home, with its array and shift (built once from the above, so a
   * probe skips the sizes held as fragments without a test per size). */
  struct L1Probe {
    Tlb *t;
    unsigned size, shift;
  } l1d_probe[ARCH_MAX_SIZES], l1i_probe[ARCH_MAX_SIZES];
  unsigned n_l1d_probe, n_l1i_probe;
  /* How many of those a probe tries: 1, the base size, until l1_fill_large
   * has run (no L1 array can hold a larger size before), then all. */
  unsigned n_l1d_live, n_l1i_live;
  uint32_t l1_hit_cycles;
  /* Last data and instruction translation (4K granule): an exact shortcut,
   * since that entry is the most recently used of its L1 array. */
  uint64_t ud_key, ui_key;  /* asid << 52 | va >> 12, ~0 when empty */
  uint64_t ud_pfn, ui_pfn;  /* frame of that 4K granule */
  uint8_t ud_flags, ui_flags;
  /* core timing */
  unsigned n_mshr, mshr_tail, mshr_count; /* outstanding misses: ring from tail, in issue order */
  uint64_t *mshr_done, *mshr_insn;
  /* Of the oldest outstanding miss, UINT64_MAX when there is none: its
   * mshr_done, and the insns count at which it blocks retirement (its
   * mshr_insn + rob_size), so that each test per access is one compare. */
  uint64_t mshr_head_done, mshr_rob_due;
  unsigned n_walkers;
  uint64_t *walker_free;
  unsigned rob_size;
  uint64_t last_load_done;
  Thread *cur;              /* thread running on this CPU */
  uint64_t cur_since;       /* clock when cur started running (its run time counts from here) */
  uint64_t numa_due;        /* clock at which cur's NUMA scan tick is due (numa_balance_switch_in) */
  unsigned cur_asid;
};

Cpu *cpu_new(Machine *m, int id, int node, Cache *llc, GError **error);
void cpu_free(Cpu *cpu);

/* Run one access of the thread on this CPU. */
void cpu_access(Cpu *cpu, Thread *t, const TraceRecord *r);
/* A host-side hint, no effect on the model: the engine calls it for records
 * a few places ahead so that the host lines their simulation will read (the
 * page-table entry, the simulated cache sets of the entry and of the data)
 * are on their way.  Stages, far to near: 0 the descent of the page table
 * to the table that holds the entry, whose node struct it starts loading,
 * 1 the entry and its simulated cache sets, 2 the data line's sets (once
 * the entry has arrived).  `slot` carries what the
 * far stage found to the nearer ones of the same record, so that they do
 * not descend again: the engine keeps a ring of CPU_PREFETCH_RING slots by
 * record position and clears it (cpu_prefetch_clear) before each run of
 * records; a slot that does not describe the record is refilled. */
typedef struct {
  const TraceRecord *r; /* the record described, NULL: none */
  uint64_t va;
  const PtNode *n;      /* the table to read the entry from */
  unsigned level, idx;
  uint64_t nodes_freed; /* the page table's count when n was found */
} CpuPrefetchSlot;
#define CPU_PREFETCH_STAGES 3
#define CPU_PREFETCH_RING 16 /* a power of two above the farthest distance */
void cpu_prefetch(const Cpu *cpu, const Thread *t, const TraceRecord *r, unsigned stage, CpuPrefetchSlot *slot);
void cpu_prefetch_clear(CpuPrefetchSlot *ring);
/* Below this many table pages (4 KiB of host memory each) the page table
 * stays in the host's caches and prefetching it only costs instructions, so
 * cpu_prefetch does nothing (callers may test it first and skip the calls).
 * Host tuning, not model: about a host L2. */
#define CPU_PREFETCH_MIN_TABLES 256
/* Run `n` instructions that touch no memory. */
void cpu_compute(Cpu *cpu, uint64_t n);
/* Wait for every outstanding miss (before a fault, a syscall, the end). */
void cpu_drain(Cpu *cpu);
/* Charge kernel work: drain, then `cycles`. */
void cpu_stall(Cpu *cpu, uint64_t cycles);

/* Invalidate one page / one context / everything in this CPU's TLBs,
 * walk caches and last-translation shortcuts. */
void cpu_flush_page(Cpu *cpu, unsigned asid, uint64_t va);
void cpu_flush_asid(Cpu *cpu, unsigned asid);
void cpu_flush_all(Cpu *cpu);
/* Invalidate this CPU's L1 TLB arrays and shortcuts only, leaving the
 * architecture's state alone: for an architecture whose own events flush
 * them (ppc64: an SLB invalidation flushes the ERAT). */
void cpu_flush_l1(Cpu *cpu);

/* Translate va for `kind` without timing, for `explain`: fills the text of
 * every step in `ex` and returns the physical address (or ~0 on a fault that
 * could not be resolved). */
uint64_t cpu_explain(Cpu *cpu, Thread *t, uint64_t va, AccessKind kind, GString *ex);

#endif
