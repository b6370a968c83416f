/* SPDX-License-Identifier: GPL-2.0-or-later */
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
#include <stddef.h> /* offsetof, cpu_of */
#include <stdint.h>
#include "arch.h"
#include "hooks.h"
#include "memsys.h"
#include "memsys-hot.h" /* memsys_access_data, for the quick path */
#include "stats.h"
#include "tlb.h"

typedef struct Machine Machine;
typedef struct Thread Thread;

struct Cpu {
  /* The kernel's handle of this CPU (kernel/hooks.h): the task it runs
   * (kc.cur), when it started (kc.cur_since), its NUMA scan tick
   * (kc.numa_due); kc.clock and kc.ctr point at clock and ctr below. */
  KCpu kc;
  int id, node;
  Machine *m;
  uint64_t clock;           /* cycles */
  uint64_t idle_cycles;     /* of the clock, time spent idle (waiting for a thread to start) */
  double frac;              /* fractional cycles not yet added to clock */
  double cpi;
  /* cpi as cpi_units / 2^cpi_shift when it is such a fraction (0.5, 1.25):
   * the clock then advances in integers, frac_units standing for frac.  The
   * same values as the double arithmetic, which is exact for these (see
   * cpu_issue_fixed); cpi_fixed is FALSE otherwise, or once a count too large
   * for that sent the clock back to the doubles. */
  gboolean cpi_fixed;
  unsigned cpi_shift;
  uint64_t cpi_units, frac_units;
  uint64_t insns;           /* instructions issued, for the ROB bound */
  Counters ctr;
  MemHier *mem;
  const ArchOps *arch;
  void *arch_state;
  /* The path after a miss of the shortcut below: arch->l1_miss, or the
   * core's own through arch->translate (sim/cpu-translate.h). */
  gboolean (*l1_miss)(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t, uint64_t *pfn, uint8_t *flags);
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
  /* How many of those a probe tries: 1, the base size, until cpu_l1_fill_large
   * has run (no L1 array can hold a larger size before), then all. */
  unsigned n_l1d_live, n_l1i_live;
  uint32_t l1_hit_cycles;
  /* Last data and instruction translation (4K granule): an exact shortcut,
   * since that entry is the most recently used of its L1 array. */
  uint64_t ud_key, ui_key;  /* asid << 52 | va >> 12, ~0 when empty */
  uint64_t ud_pfn, ui_pfn;  /* frame of that 4K granule */
  uint8_t ud_flags, ui_flags;
  /* What cpu_access_quick tests, one compare each instead of three tests:
   * the kinds it may take (ACC_STORE + 1 with the integer clock, 0 once
   * cpi_fixed is FALSE), and ud_key's granule for a load [ACC_LOAD] and
   * for a store [ACC_STORE] (~0 unless the entry is writable and dirty).
   * Host shortcuts, set by cpu_quick_keys(); cpu_access, which changes
   * ud_key and ud_flags on every miss of the shortcut, only sets
   * quick_kinds to 0 (so that a run of random accesses pays one store for
   * them), and cpu_access_requick() sets them after it.  The keys hold va
   * >> 12 without the ASID they were set for (they match nothing for
   * another): a change of cur_asid must be followed by
   * cpu_forget_shortcuts() or cpu_quick_keys(), as in the engine's context
   * switch; the quick test then needs no ASID load, shift and or. */
  unsigned quick_kinds;
  uint64_t quick_key[2];
  /* core timing */
  /* Misses not yet retired: a ring from tail, in issue order.  Those at
   * its head may have completed by the clock: they are retired when the
   * ring is next read (cpu_mshr_retire, cpu_mshr_push). */
  unsigned n_mshr, mshr_tail, mshr_count;
  uint64_t *mshr_done, *mshr_insn;
  /* Of the ring's oldest miss, UINT64_MAX when there is none: its
   * mshr_done, and the insns count at which it blocks retirement (its
   * mshr_insn + rob_size), so that each test per access is one compare. */
  uint64_t mshr_head_done, mshr_rob_due;
  unsigned n_walkers;
  uint64_t *walker_free;
  unsigned rob_size;
  unsigned cur_asid;
  /* When each of the last TRACE_DEP_LOADS loads completes (base/record.h),
   * by load number modulo that: a dependent load waits for the one its
   * record names (cpu_load_dep_ready).  `loads` counts every load issued,
   * dropped ones (a fault that killed the process) included, so that the
   * numbers stay those of the trace. */
  uint64_t loads;
  uint64_t load_done[TRACE_DEP_LOADS];
  /* With --events: the counters a walk event reports, as they were before
   * the translation now under way (cpu_walk_mark), so that the sampled
   * walk's event gives its own references, not the run's. */
  struct {
    uint64_t refs, guest_refs, host_refs, ntlb_hits, ntlb_misses;
  } walk_mark;
  /* cpu_build has made mem, the L1 arrays and arch_state (for the node's
   * llc, kept until then). */
  gboolean built;
  Cache *llc;
};

/* A CPU's clock, counters, kernel handle and core timing: what every CPU
 * of the machine has from the start.  Its TLBs, caches and the
 * architecture's state come with cpu_build, when it first runs something
 * (sim/machine.c machine_cpu_ready): an unbuilt CPU holds no translation
 * and no line, as a CPU that never ran holds none. */
Cpu *cpu_new(Machine *m, int id, int node, Cache *llc);
gboolean cpu_build(Cpu *cpu, GError **error);
void cpu_free(Cpu *cpu);

/* Run one access of the thread on this CPU.  Turns cpu_access_quick off
 * when it changes the data shortcut: callers that try that first call
 * cpu_access_requick (below) instead. */
void cpu_access(Cpu *cpu, Thread *t, const TraceRecord *r);

/* ---- the core's timing, inline: cpu_access and its quick path share it -- */

/* The shortcut's key of a 4K granule: asid << 52 | va >> 12. */
#define CPU_GRANULE_BITS 52 /* va >> 12 of a 64-bit va */
static inline uint64_t cpu_granule_key(unsigned asid, uint64_t va)
{
  return ((uint64_t)asid << CPU_GRANULE_BITS) | (va >> 12);
}

/* Bounds of the integer clock (cpu_issue_insns): cpi = units / 2^shift
 * with units below 2^20, counts up to 2^32 instructions; their product
 * stays below 2^52, where doubles are exact.  Host arithmetic, not model. */
#define CPU_CPI_SHIFT_MAX 16
#define CPU_CPI_UNITS_BITS 20
#define CPU_FIXED_MAX_INSNS (UINT64_C(1) << 32)

/* The retire loop, once the oldest outstanding miss has completed. */
void cpu_mshr_retire_done(Cpu *cpu);
/* The ROB bound reached: stall until the oldest miss completes. */
void cpu_rob_stall(Cpu *cpu);
/* Retire, then stall if the ROB bound is still reached. */
void cpu_rob_check(Cpu *cpu);
/* cpu_issue_insns with the double clock: a cpi that is not a dyadic
 * fraction, or a count past CPU_FIXED_MAX_INSNS. */
void cpu_issue_float(Cpu *cpu, uint64_t n);

/* The oldest outstanding miss changed: cache its completion and ROB bound
 * for the tests of cpu_access (UINT64_MAX, never reached, when there is
 * none). */
static inline void cpu_mshr_head_changed(Cpu *cpu)
{
  if (cpu->mshr_count) {
    cpu->mshr_head_done = cpu->mshr_done[cpu->mshr_tail];
    cpu->mshr_rob_due = cpu->mshr_insn[cpu->mshr_tail] + cpu->rob_size;
  } else {
    cpu->mshr_head_done = cpu->mshr_rob_due = UINT64_MAX;
  }
}

/* Free the fill buffers of misses that completed, oldest first. */
static inline void cpu_mshr_retire(Cpu *cpu)
{
  if (G_UNLIKELY(cpu->clock >= cpu->mshr_head_done))
    cpu_mshr_retire_done(cpu);
}

/* Issue n instructions at cpi cycles each, carrying the fraction of a cycle.
 * With cpi = u / 2^k (cpi_fixed) and n <= 2^32, the double arithmetic of
 * cpu_issue_float is exact: frac is a multiple of 2^-k below 1, n * u <
 * 2^52, so every sum and product is a multiple of 2^-k below 2^(53-k), and
 * the integer version gives the same clock and fraction without the float
 * conversions. */
static inline void cpu_issue_fixed(Cpu *cpu, uint64_t n)
{
  cpu->insns += n;
  cpu->ctr.c[CTR_INSTRUCTIONS] += n;
  uint64_t u = cpu->frac_units + n * cpu->cpi_units;
  uint64_t whole = u >> cpu->cpi_shift;
  cpu->clock += whole;
  cpu->frac_units = u - (whole << cpu->cpi_shift);
}

/* Cpu.quick_kinds and quick_key after a change of cpi_fixed, ud_key or
 * ud_flags. */
static inline void cpu_quick_keys(Cpu *cpu)
{
  /* cur_asid's key less its ASID is its va >> 12; another ASID's keeps
   * bits above CPU_GRANULE_BITS, so it matches no va >> 12; none stays ~0. */
  uint64_t k = cpu->ud_key, granule = k == ~0ULL ? ~0ULL : k ^ cpu_granule_key(cpu->cur_asid, 0);
  cpu->quick_kinds = cpu->cpi_fixed ? ACC_STORE + 1 : 0;
  cpu->quick_key[ACC_LOAD] = granule;
  cpu->quick_key[ACC_STORE] = (cpu->ud_flags & (TLBF_W | TLBF_D)) == (TLBF_W | TLBF_D) ? granule : ~0ULL;
}

static inline void cpu_issue_insns(Cpu *cpu, uint64_t n)
{
  if (G_LIKELY(cpu->cpi_fixed && n <= CPU_FIXED_MAX_INSNS))
    cpu_issue_fixed(cpu, n);
  else
    cpu_issue_float(cpu, n);
}

/* A load issued: it completes at `done`. */
static inline void cpu_load_push(Cpu *cpu, uint64_t done)
{
  cpu->load_done[cpu->loads % TRACE_DEP_LOADS] = done;
  cpu->loads++;
}

/* The earliest a load that depends on the load `distance` loads before the
 * previous one (base/record.h; 0: the previous load) may start, given that
 * it could start at t: t, or that load's completion if it is later.  A
 * load never issued, or one too far back to be remembered, does not hold
 * it. */
static inline uint64_t cpu_load_dep_ready(const Cpu *cpu, uint64_t t, uint32_t distance)
{
  if (distance >= TRACE_DEP_LOADS || distance >= cpu->loads)
    return t;
  uint64_t done = cpu->load_done[(cpu->loads - 1 - distance) % TRACE_DEP_LOADS];
  return MAX(t, done);
}

/* A data reference that missed the L1, issued at `t` with latency `lat`,
 * takes a fill buffer; they are freed in issue order.  Returns its
 * completion time (later than t + lat when it waited for a buffer).  The
 * retire (cpu_mshr_retire) is inline here, in locals: the compiler cannot
 * tell that the ring's stores leave the CPU's fields alone; and the ring is
 * never empty afterwards, so its head is set once, without a test. */
static inline uint64_t cpu_mshr_push(Cpu *cpu, uint64_t t, uint32_t lat)
{
  uint64_t done = t + lat;
  unsigned tail = cpu->mshr_tail, count = cpu->mshr_count, n = cpu->n_mshr;
  uint64_t *ring_done = cpu->mshr_done, *ring_insn = cpu->mshr_insn;
  gboolean head = count == 0;
  uint64_t now = cpu->clock;
  if (now >= cpu->mshr_head_done) { /* the oldest (ring_done[tail]) completed: retire */
    do {
      tail = tail + 1 == n ? 0 : tail + 1;
      count--;
    } while (count && ring_done[tail] <= now);
    head = TRUE;
  }
  if (G_UNLIKELY(count == n)) {
    uint64_t free_at = cpu->mshr_head_done;
    cpu->ctr.c[CTR_MSHR_STALL_CYCLES] += free_at - now;
    cpu->clock = free_at;
    if (free_at > t)
      done = free_at + lat;
    tail = tail + 1 == n ? 0 : tail + 1;
    count--;
    head = TRUE;
  }
  unsigned slot = tail + count;
  if (slot >= n) /* both are below n: one wrap at most */
    slot -= n;
  ring_done[slot] = done;
  ring_insn[slot] = cpu->insns;
  cpu->mshr_tail = tail;
  cpu->mshr_count = count + 1;
  if (head) {
    cpu->mshr_head_done = ring_done[tail];
    cpu->mshr_rob_due = ring_insn[tail] + cpu->rob_size;
  }
  return done;
}

/* Accesses cpu_access_quick ran without counting them in the Cpu: a loop
 * keeps them in locals, off the counters' memory, and adds them with
 * cpu_quick_flush before anything reads the counters (a snapshot) and when
 * it ends.  By kind (ACC_LOAD, ACC_STORE): each access looked up the L1D
 * once, and misses[kind] of them missed it.  Indexed by the kind, each
 * count is one add to memory (a total and a store count were two adds and
 * a reload of the kind). */
typedef struct {
  uint64_t accesses[ACC_STORE + 1];
  uint64_t misses[ACC_STORE + 1];
} CpuQuickCounts;

static inline void cpu_quick_flush(Cpu *cpu, CpuQuickCounts *q)
{
  uint64_t loads = q->accesses[ACC_LOAD], stores = q->accesses[ACC_STORE];
  cpu->ctr.c[CTR_ACCESSES] += loads + stores;
  cpu->ctr.c[CTR_LOADS] += loads;
  cpu->ctr.c[CTR_DTLB_LOADS] += loads;
  cpu->ctr.c[CTR_L1_DCACHE_LOADS] += loads;
  cpu->ctr.c[CTR_L1_DCACHE_LOAD_MISSES] += q->misses[ACC_LOAD];
  cpu->ctr.c[CTR_STORES] += stores;
  cpu->ctr.c[CTR_DTLB_STORES] += stores;
  cpu->ctr.c[CTR_L1_DCACHE_STORES] += stores;
  cpu->ctr.c[CTR_L1_DCACHE_STORE_MISSES] += q->misses[ACC_STORE];
  *q = (CpuQuickCounts){ { 0 }, { 0 } };
}

/* cpu_access's common case, inline in the engine's loops so that a record
 * costs no call but memsys_access's: a load or a store to the 4K granule of
 * the previous data access (the last-translation shortcut hits, the store
 * with the dirty bit set) with the integer clock.  The same steps and
 * results as cpu_access, the access counted in *counts (see
 * CpuQuickCounts) or, with counts NULL, in the Cpu's counters; returns FALSE, having done nothing, for any other
 * access, which the caller then hands to cpu_access. */
G_STATIC_ASSERT((int)MREQ_LOAD == (int)ACC_LOAD && (int)MREQ_STORE == (int)ACC_STORE && ACC_LOAD == 0 && ACC_STORE == 1);
static inline G_ALWAYS_INLINE gboolean cpu_access_quick(Cpu *cpu, const TraceRecord *r, CpuQuickCounts *counts)
{
  unsigned kind = r->kind;
  uint64_t va = r->addr;
  uint64_t insns = (uint64_t)r->gap + 1; /* below 2^32: cpu_issue_fixed holds */
  if (kind >= cpu->quick_kinds || va >> 12 != cpu->quick_key[kind]) /* cur_asid's granule */
    return FALSE;
  /* The ROB bound as cpu_access tests it, after retiring what completed.
   * The retire waits until something reads the ring: the test against an
   * older head's bound (which is lower) fails whenever the retired ring's
   * would, and the fill buffer's push retires at a later clock, which frees
   * the same entries and more. */
  if (G_UNLIKELY(cpu->insns >= cpu->mshr_rob_due))
    cpu_rob_check(cpu);
  cpu_issue_fixed(cpu, insns);
  if (counts) {
    counts->accesses[kind]++;
  } else {
    Counters *ctr = &cpu->ctr;
    ctr->c[CTR_ACCESSES]++;
    ctr->c[kind == ACC_LOAD ? CTR_LOADS : CTR_STORES]++;
    ctr->c[kind == ACC_LOAD ? CTR_DTLB_LOADS : CTR_DTLB_STORES]++;
    ctr->c[kind == ACC_LOAD ? CTR_L1_DCACHE_LOADS : CTR_L1_DCACHE_STORES]++;
  }
  uint64_t t = cpu->clock + cpu->l1_hit_cycles;
  MemLevel lvl;
  /* Counts no L1D lookup or miss: they are counted here. */
  uint32_t lat = memsys_access_data(cpu->mem, (cpu->ud_pfn << 12) | (va & 0xfff), (MemReqKind)kind, &lvl);
  uint64_t done = t + lat;
  if (lvl != MEM_L1) {
    if (counts) {
      counts->misses[kind]++;
    } else {
      cpu->ctr.c[kind == ACC_LOAD ? CTR_L1_DCACHE_LOAD_MISSES : CTR_L1_DCACHE_STORE_MISSES]++;
    }
    done = cpu_mshr_push(cpu, t, lat);
  }
  if (kind == ACC_LOAD)
    cpu_load_push(cpu, done);
  return TRUE;
}

/* cpu_access for a caller that tries cpu_access_quick first: the quick
 * path's keys follow the shortcut cpu_access may have changed. */
static inline void cpu_access_requick(Cpu *cpu, Thread *t, const TraceRecord *r)
{
  cpu_access(cpu, t, r);
  cpu_quick_keys(cpu);
}
/* A host-side hint, no effect on the model: the engine calls it once per
 * record run, for the records a few places ahead, so that the host lines
 * their simulation will read (the page-table entry, the simulated cache
 * sets of the entry and of the data) are on their way.  Stages, far to
 * near: CPU_PREFETCH_FAR records ahead the leaf table of the record's
 * region (one lookup in `region`, else a descent of the page table), whose
 * node struct it starts loading; CPU_PREFETCH_MID ahead the entry and its
 * simulated cache sets; CPU_PREFETCH_NEAR ahead the data line's sets (once
 * the entry has arrived).  One call does the far stage of record `pos`
 * (`far`, NULL when there is none) and the nearer stages of the records
 * the far stage saw earlier: it leaves what it found in the slot of `pos`
 * of a ring of CPU_PREFETCH_RING slots by record position, which the
 * nearer stages read.  The engine keeps a CpuPrefetch per run
 * (cpu_prefetch_new), clears its ring (cpu_prefetch_clear) before each run
 * of records and passes consecutive positions. */
/* A slot holds no count of freed nodes: the call that sees the count (or
 * the page table) change empties the whole ring first, so that a slot the
 * nearer stages find was filled under the current count.  32 bytes: a
 * slot's address is a shift away. */
typedef struct {
  const uint64_t *e;    /* the entries of the table that holds va's; NULL: nothing to do */
  uint64_t pfn;         /* that table's page */
  uint64_t va;
  unsigned level, idx;
} CpuPrefetchSlot;
G_STATIC_ASSERT(sizeof(CpuPrefetchSlot) == 32);
/* Far enough for a host DRAM miss to complete while the records in between
 * run.  Host tuning, not model. */
#define CPU_PREFETCH_FAR 15
#define CPU_PREFETCH_MID 10
#define CPU_PREFETCH_NEAR 5
#define CPU_PREFETCH_RING 16 /* a power of two above the farthest distance */
G_STATIC_ASSERT(CPU_PREFETCH_RING > CPU_PREFETCH_FAR); /* a slot lives from its far stage to its near one */
/* Leaf tables by region (the span of one, 2 MiB on x86-64), direct-mapped:
 * one load instead of a descent whose every level is a dependent load that
 * a random run has pushed out of the host's L1.  4096 regions cover 8 GiB
 * of contiguous 4K pages in 128 KiB.  Host tuning, not model. */
#define CPU_PREFETCH_REGIONS 4096
#define CPU_PREFETCH_EPOCH_BITS 24
/* A region's leaf table, with its entries and page, so that the nearer
 * stages need not wait for the node itself. */
typedef struct {
  uint64_t key;
  const PtNode *n;
  const uint64_t *e;
  uint64_t pfn;
} CpuPrefetchRegion;
typedef struct {
  CpuPrefetchSlot ring[CPU_PREFETCH_RING];
  /* region[] holds leaves of `pt` found while its nodes_freed was `freed`:
   * a node freed since may be gone, so a change of either starts a new
   * epoch, which every key carries (region << CPU_PREFETCH_EPOCH_BITS |
   * epoch; 0: none), instead of clearing the array. */
  const PageTable *pt;
  uint64_t freed, epoch;
  CpuPrefetchRegion region[CPU_PREFETCH_REGIONS];
} CpuPrefetch;
CpuPrefetch *cpu_prefetch_new(void);
void cpu_prefetch_free(CpuPrefetch *pf);
void cpu_prefetch(const Cpu *cpu, const Thread *t, const TraceRecord *far, CpuPrefetch *pf, size_t pos);
void cpu_prefetch_clear(CpuPrefetch *pf);
/* Drop the region array, after anything that may have ended an address
 * space (a system call): another may take its host memory, with as many
 * nodes freed.  An Mm lives until the kernel is freed (kernel/kernel.c); the
 * OOM killer tears a process's page table down (pgtable_destroy), which
 * moves nodes_freed on, so cpu_prefetch starts afresh and, with no root
 * left, prefetches nothing.  The engine calls this after every system
 * call. */
void cpu_prefetch_forget(CpuPrefetch *pf);
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
/* Forget the last-translation shortcuts only (another address space). */
void cpu_forget_shortcuts(Cpu *cpu);

/* The CPU of a kernel handle (the machine's side of kernel/hooks.h). */
static inline Cpu *cpu_of(KCpu *kc)
{
  return (Cpu *)((char *)kc - offsetof(Cpu, kc));
}

/* Translate va for `kind` without timing, for `explain`: fills the text of
 * every step in `ex` and returns the physical address (or ~0 on a fault that
 * could not be resolved). */
uint64_t cpu_explain(Cpu *cpu, Thread *t, uint64_t va, AccessKind kind, GString *ex);

#endif
