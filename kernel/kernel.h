/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel.h - the simulated kernel: physical memory, address spaces, the
 * system calls of the trace (mmap, munmap, mprotect, madvise, prctl,
 * mempolicy) and the costs of its work, converted to cycles once.
 *
 * Simulated outcomes (a segmentation fault, running out of memory) are
 * results, counted in the CPU's counters; only bad input is a GError.
 */
#ifndef MMUSIM_KERNEL_H
#define MMUSIM_KERNEL_H

#include <glib.h>
#include <stdint.h>
#include "hooks.h"
#include "mm.h"
#include "physmem.h"
#include "record.h"
#include "settings.h"
#include "task.h"
#include "thp.h"
#include "version.h"

typedef struct Hugetlb Hugetlb;
typedef struct ThpState ThpState;
typedef struct EventLog EventLog;

/* How the kernel tags the translations of user address spaces. */
typedef enum {
  KERNEL_ASID_GLOBAL,  /* one tag per mm on every CPU (ppc64: its context, Mm.asid) */
  KERNEL_ASID_DYNAMIC, /* x86 with PCIDs: per-CPU slots (choose_new_asid) */
  KERNEL_ASID_NONE,    /* x86 without: tag 0, every switch of CR3 flushes */
} KernelAsidMode;

typedef struct Kernel {
  const Settings *s;
  uint32_t version;      /* kernel.version as KV(): ask kernel_has(), never compare */
  /* The hardware: the hooks the machine implements and its pointer
   * (kernel/hooks.h), and its CPUs once it has made them. */
  const KernelHooks *hooks;
  void *hw;
  KCpu **cpus;
  unsigned n_cpus;
  const char *arch_name;  /* in messages */
  uint64_t user_va_limit; /* largest user address + 1 */
  PhysMem *pm;
  PtGeometry geo;
  /* Sizes from the geometry: the base page (PAGE_SIZE, mm.base_page_size)
   * and the PMD leaf (HPAGE_PMD_SIZE): 4K and 2M on x86-64, 64K and 16M on
   * ppc64 hash with 64K pages.  Orders count 4K frames of the buddy
   * allocator; pmd_subpages the base pages of a PMD leaf. */
  unsigned base_shift, base_order, pmd_shift, pmd_order, pmd_subpages;
  uint64_t base_bytes, pmd_bytes;
  uint64_t zero_pfn;     /* the shared zero page */
  GHashTable *mms;       /* pid -> Mm */
  unsigned next_asid;
  KernelAsidMode asid_mode; /* how user translations are tagged (kernel_switch_asid) */
  gboolean oom;          /* simulated out of memory: the run cannot complete */
  /* mem.oom_policy=kill: a fault that finds no memory runs the OOM killer
   * (kernel/oom_kill.c), which appends each kill to oom_kills (of OomKill);
   * oom_kill_count is its length, read by the engine through a pointer. */
  gboolean oom_kill_policy;
  unsigned max_map_count; /* vm.max_map_count (sysctl_max_map_count) */
  GArray *oom_kills;
  unsigned oom_kill_count;
  unsigned next_mm_serial;
  int alloc_node;        /* node of the CPU in the kernel now: page tables go there */
  /* mem.clear_cached: clears and copies leave their lines in the working
   * CPU's caches (kernel_fill_*).  pt_fill_cpu: the CPU whose page fault
   * is being handled, which zeroes the page-table pages it allocates
   * (NULL outside a fault); fills: the fills of one huge clear or copy. */
  gboolean clear_cached;
  KCpu *pt_fill_cpu;
  GArray *fills;         /* of KernelFill */
  gboolean map_on_demand; /* accesses outside any VMA map memory (lackey, ChampSim) */
  EventLog *ev;
  const ThpPolicy *thp;  /* thp.policy */
  /* thp.hugepages_*: bit n is a folio of 2^n base pages set always,
   * madvise or inherit (huge_anon_orders_*; thp_orders_init). */
  uint32_t anon_orders_always, anon_orders_madvise, anon_orders_inherit;
  struct Khugepaged *khugepaged;
  struct Kcompactd *kcompactd; /* the nodes' compaction daemons (kernel/kcompactd.c) */
  struct NumaBalance *numa_balance; /* automatic NUMA balancing (kernel/numa_balance.c) */
  struct Filemap *filemap; /* the page cache of file mappings (kernel/filemap.c) */
  ThpState *thps;        /* THP pages, the deferred split queue, the huge zero page (kernel/thp.c) */
  Hugetlb *hugetlb;      /* the hugetlbfs pools (kernel/hugetlb.c) */
  /* Memory policies (kernel/mempolicy.c): numa.mempolicy, every process's
   * policy until its trace sets one, and numa.interleave_weights. */
  uint8_t mpol_mode;     /* TracePolicy */
  uint8_t mpol_flags;    /* MEMPOLICY_F_* */
  uint64_t mpol_nodes;
  uint8_t il_weights[64];
  /* A table page the next page-table allocation hands out instead of a new
   * one: the deposited table a PMD split withdraws (pmd_populate). */
  gboolean pt_reserved;
  uint64_t pt_reserved_pfn;
  /* Base pages touched under huge mappings: (mm, base, 2M or 1G span) ->
   * bitmap of its 4K granules, and the last one looked up (kernel_touch). */
  GHashTable *touched;
  guint touch_maps; /* entries of touched, for kernel_touch_any's inline test */
  const void *touch_last_mm;
  uint64_t touch_last_base, touch_last_span;
  uint64_t *touch_last_bits;
  /* costs in cycles */
  uint64_t zero_page_cycles, anon_cycles, segv_cycles, ptpage_cycles;
  uint64_t clear_4k_cycles, invlpg_cycles, full_flush_cycles;
  uint64_t clear_base_cycles; /* clearing one base page */
  uint64_t huge_fault_cycles, split_cycles;
  uint64_t file_cycles;       /* a minor fault on a file mapping (fault.file_ns) */
  double compact_scan_ns, compact_migrate_ns; /* per pfn scanned; per page moved, copy included */
  double compact_migrate_fixed_ns; /* per page of a process moved, its copy priced apart (kernel/rmap.c) */
  PhysMigrator migrator;  /* compaction's mover of the processes' pages (kernel/rmap.c) */
  KCpu *compact_cpu;      /* the CPU compaction runs on now, or NULL (rmap_compact_cpu) */
  unsigned flush_ceiling_pages;
  double cycles_per_ns;
  uint64_t l2_bytes;     /* cache.l2_size: a clear or copy up to this size runs at the hot rate */
} Kernel;

/* What the kernel takes from the architecture: the geometry of its page
 * table (pgtable_geometry) and the end of the user address space. */
typedef struct {
  const char *name;
  PtGeometry geo;
  uint64_t user_va_limit;
} KernelArch;

/* The kernel of a machine whose architecture is `arch`, reaching the
 * hardware through `hooks` with `hw` (kernel/hooks.h). */
Kernel *kernel_new(const Settings *s, const KernelArch *arch, const KernelHooks *hooks, void *hw, GError **error);
void kernel_free(Kernel *k);
/* The machine's CPUs, once made (the kernel boots before them): the OOM
 * killer takes a victim's threads off them, khugepaged runs on one. */
void kernel_attach_cpus(Kernel *k, KCpu **cpus, unsigned n_cpus);

/* The hardware PCID of dynamic ASID slot `asid` (kern_pcid: asid + 1; PCID
 * 0 is the tag of CR3 writes without PCID). */
static inline unsigned kernel_pcid_of(unsigned asid)
{
  return asid + 1;
}
/* cpu switches to next (switch_mm_irqs_off): the ASID slot it loads, and
 * whether that slot's entries must be flushed first (choose_new_asid).
 * Without dynamic ASIDs: slot 0 and a flush. */
unsigned kernel_switch_asid(Kernel *k, KCpu *cpu, const Mm *next, gboolean *need_flush);
/* The tag mm's translations carry in cpu's TLB: its PCID there, -1 when no
 * slot of cpu holds mm (nothing of it can be cached there). */
int kernel_cpu_pcid(const Kernel *k, const KCpu *cpu, const Mm *mm);
/* cpu flushed mm's translations: its slot of mm is current with mm's
 * tlb_gen (flush_tlb_func). */
void kernel_asid_flushed(const Kernel *k, KCpu *cpu, const Mm *mm);

/* Whether this kernel follows rule r's newer behaviour (kernel/version.def). */
static inline gboolean kernel_has(const Kernel *k, KernelRule r)
{
  return kernel_version_has(k->version, r);
}

/* ---- the hooks, as the kernel calls them ------------------------------- */

/* flush_tlb_mm_range of [start, end), pages of 2^stride_shift bytes;
 * freed_tables: page-table pages were freed (walk caches drop them). */
static inline void kernel_flush_tlb(Kernel *k, KCpu *cpu, Mm *mm, uint64_t start, uint64_t end,
                                    unsigned stride_shift, gboolean freed_tables)
{
  k->hooks->flush_tlb_range(k->hw, cpu, mm, start, end, stride_shift, freed_tables);
}
/* The same for a range of base pages, one INVLPG per 4K granule. */
static inline void kernel_flush_tlb_4k(Kernel *k, KCpu *cpu, Mm *mm, uint64_t start, uint64_t end)
{
  kernel_flush_tlb(k, cpu, mm, start, end, PAGE_SHIFT_4K, FALSE);
}
/* A clear or copy of `bytes` at pfn, `after` cycles past cpu's clock:
 * the cycles DRAM queueing adds to span_cycles. */
static inline uint64_t kernel_dram_bulk(Kernel *k, KCpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t after,
                                        uint64_t span_cycles)
{
  return k->hooks->dram_bulk(k->hw, cpu, pfn, bytes, after, span_cycles);
}
/* The lines of clears and copies in cpu's caches (kernel/hooks.h
 * fill_lines), as the stores ran: nothing when mem.clear_cached is off.
 * They add no cycles (the work is priced by kernel_clear_cycles,
 * kernel_copy_cycles and kernel_dram_bulk). */
static inline void kernel_fill_lines(Kernel *k, KCpu *cpu, const KernelFill *fills, unsigned n)
{
  if (k->clear_cached)
    k->hooks->fill_lines(k->hw, cpu, fills, n);
}
/* clear_page (or __GFP_ZERO) of `bytes` at pfn, in ascending order. */
void kernel_fill_clear(Kernel *k, KCpu *cpu, uint64_t pfn, uint64_t bytes);
/* folio_zero_user (mm/memory.c, Linux 6.12) of the huge page of `bytes` at
 * pfn mapped at an address whose byte `hint` past the page's start was
 * faulted: process_huge_page's order, the faulting subpage last. */
void kernel_fill_clear_huge(Kernel *k, KCpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t hint);
/* copy_highpage of `bytes` from src to dst, subpage by subpage (folio_copy). */
void kernel_fill_copy(Kernel *k, KCpu *cpu, uint64_t dst, uint64_t src, uint64_t bytes);
/* A clear or copy of many stretches (khugepaged's collapse): begin, add
 * each in the order it runs (src_pfn KERNEL_FILL_CLEAR for a clear), end
 * on the CPU that ran them. */
void kernel_fills_begin(Kernel *k);
void kernel_fills_add(Kernel *k, uint64_t pfn, uint64_t src_pfn, uint64_t bytes);
void kernel_fills_end(Kernel *k, KCpu *cpu);
/* Kernel work: wait for cpu's outstanding misses; then `cycles`. */
static inline void kernel_drain(Kernel *k, KCpu *cpu)
{
  k->hooks->drain(k->hw, cpu);
}
static inline void kernel_stall(Kernel *k, KCpu *cpu, uint64_t cycles)
{
  k->hooks->stall(k->hw, cpu, cycles);
}
/* cpu's clock in simulated ns (the --events log's time). */
static inline uint64_t kernel_now_ns(const Kernel *k, const KCpu *cpu)
{
  return (uint64_t)((double)kcpu_now(cpu) / k->cycles_per_ns);
}
/* One line of the --events log about process pid, from cpu now: the
 * thread is cpu's current one, 0 when none.  Cheap when no log is open. */
void kernel_event(const Kernel *k, const KCpu *cpu, uint32_t pid, const char *event, const char *fmt, ...)
  G_GNUC_PRINTF(5, 6);

/* The address space of `pid`, created on first use; NULL when out of memory. */
Mm *kernel_mm(Kernel *k, uint32_t pid);

/* Cycles for clearing or copying `bytes` (hot when it fits in L2). */
uint64_t kernel_clear_cycles(const Kernel *k, uint64_t bytes);
uint64_t kernel_copy_cycles(const Kernel *k, uint64_t bytes);

/* Apply a mapping or policy record of the trace on `cpu`; returns the cycles
 * the system call cost the CPU.  Refused calls (a malformed range, ENOMEM) count in syscalls_failed. */
uint64_t kernel_syscall(Kernel *k, KCpu *cpu, Mm *mm, const TraceRecord *r);

/* Map on demand for traces without mapping events (lackey, ChampSim): an
 * anonymous rw VMA around va, as the kernel did for the recorded program. */
void kernel_map_on_demand(Kernel *k, Mm *mm, uint64_t va);

/* exit_mmap: tear down the whole address space of mm on `cpu`: every
 * present leaf unmapped and freed through munmap's path (kernel_unmap_leaf,
 * one TLB shootdown of the mm's CPUs, emptied tables freed), the VMAs
 * removed, the mm taken off khugepaged's and the NUMA scanner's lists, and
 * its remaining page-table pages, root included, given back.  Returns the 4K
 * frames given back to the buddy allocator and the hugetlb pools, tables
 * included.  The mm must not be used for a mapping again. */
uint64_t kernel_exit_mmap(Kernel *k, KCpu *cpu, Mm *mm);

/* Table-page allocator of Linux's page tables (buddy, unmovable). */
extern const PtAllocator kernel_pt_allocator_template;

uint64_t kernel_ns_to_cycles(const Kernel *k, double ns);

/* A setting naming the CPU a kernel thread's work is charged to
 * (khugepaged.cpu, kcompactd.cpu): its value, -1 or a CPU of the machine;
 * else FALSE with an error naming the setting, the CPUs there are, and
 * what -1 means (`minus_one`). */
gboolean kernel_cpu_setting(const Settings *s, SettingId id, const char *minus_one, int64_t *cpu, GError **error);

/* ---- unmapping ----------------------------------------------------------
 * Whoever clears present leaves (munmap, madvise(DONTNEED), mmap over a
 * mapping, a collapse freeing the old pages) passes each to
 * kernel_unmap_leaf and finishes with kernel_unmap_end, which frees what is
 * no longer mapped: base pages at order 0, THPs at order 9 with their
 * deposited table, hugetlb pages back to their pool.  Subpages of a THP
 * mapped by PTEs are gathered over the whole batch, as zap_pte_range does
 * with folio_pte_batch: a THP left partly mapped goes on the deferred split
 * queue, one left unmapped is freed whole. */
typedef struct {
  Kernel *k;
  Mm *mm;
  uint64_t leaves;       /* present leaves cleared */
  uint64_t freed_pages;  /* 4K pages given back to the buddy allocator or a pool */
  unsigned tables_freed; /* deposited tables freed */
  unsigned min_level;    /* smallest leaf level seen (TLB flush stride) */
  GPtrArray *thps;       /* THPs whose subpages were unmapped in this batch */
} KernelUnmap;

void kernel_unmap_begin(KernelUnmap *u, Kernel *k, Mm *mm);
/* A PtLeafFn: `ctx` is the KernelUnmap. */
void kernel_unmap_leaf(void *ctx, uint64_t va, unsigned level, uint64_t entry);
/* Settle the THPs of the batch and the counters of `cpu`. */
void kernel_unmap_end(KernelUnmap *u, KCpu *cpu);

/* ---- touched base pages ------------------------------------------------
 * mem_touched_bytes counts the distinct base pages the workload touched.
 * A 4K mapping is counted by the fault that makes it.  A huge mapping (THP,
 * huge zero page, hugetlb) is faulted once for 512 or 262144 base pages, so
 * it gets a bitmap of its granules: the fault sets the faulting one, and
 * kernel_touch sets the others as the workload reaches them.  The bitmap
 * outlives a split; an unmap clears the bits of what it unmapped and drops
 * a bitmap it covers whole.  A 4K fault inside a bitmap counts only when
 * its bit was clear. */

/* The access at va of mm reached its base page: count it if it is the first
 * touch under a huge mapping.  Cheap when va is in the same huge mapping as
 * the last call (one compare and a bit test): meant to be called by the core
 * on each L1-TLB lookup of a huge page's new 4K granule. */
void kernel_touch(Kernel *k, KCpu *cpu, const Mm *mm, uint64_t va);
/* kernel_touch for a core that calls it on every L1 refill and on every L1
 * hit of a page larger than size 0, as ppc64's with its 64K base pages
 * (size 1): with no bitmap there is nothing to count, tested inline. */
static inline void kernel_touch_any(Kernel *k, KCpu *cpu, const Mm *mm, uint64_t va)
{
  if (k->touch_maps)
    kernel_touch(k, cpu, mm, va);
}
/* A fault mapped the base page at va: count it unless a huge mapping's
 * bitmap shows it counted already. */
void kernel_touch_fault(Kernel *k, KCpu *cpu, const Mm *mm, uint64_t va);
/* A fault mapped [base, base + span) huge: make its bitmap (or keep the one
 * there, as after a huge zero page) and count va's granule. */
void kernel_touch_huge(Kernel *k, KCpu *cpu, const Mm *mm, uint64_t base, uint64_t span, uint64_t va);
/* Mark va touched in the map of the huge mapping [base, base + span)
 * without counting it (a collapse carries over what its base pages had
 * counted); TRUE when it was not marked. */
gboolean kernel_touch_mark(Kernel *k, const Mm *mm, uint64_t base, uint64_t span, uint64_t va);

#endif
