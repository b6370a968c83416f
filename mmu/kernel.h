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
#include "arch.h"
#include "mm.h"
#include "physmem.h"
#include "record.h"
#include "settings.h"
#include "thp.h"

typedef struct Machine Machine;
typedef struct EventLog EventLog;

typedef struct Kernel {
  const Settings *s;
  const ArchOps *arch;
  Machine *m;            /* for TLB shootdowns */
  PhysMem *pm;
  PtGeometry geo;
  uint64_t zero_pfn;     /* the shared zero page */
  GHashTable *mms;       /* pid -> Mm */
  unsigned next_asid;
  gboolean oom;          /* simulated out of memory: the run cannot complete */
  int alloc_node;        /* node of the CPU in the kernel now: page tables go there */
  gboolean map_on_demand; /* accesses outside any VMA map memory (lackey, ChampSim) */
  EventLog *ev;
  const ThpPolicy *thp;  /* thp.policy */
  struct Khugepaged *khugepaged;
  /* costs in cycles */
  uint64_t zero_page_cycles, anon_cycles, segv_cycles, ptpage_cycles;
  uint64_t clear_4k_cycles, copy_4k_cycles, invlpg_cycles, full_flush_cycles;
  unsigned flush_ceiling_pages;
  double cycles_per_ns;
} Kernel;

Kernel *kernel_new(const Settings *s, const ArchOps *arch, Machine *m, GError **error);
void kernel_free(Kernel *k);

/* The address space of `pid`, created on first use; NULL when out of memory. */
Mm *kernel_mm(Kernel *k, uint32_t pid);

/* Cycles for clearing or copying `bytes` (hot when it fits in L2). */
uint64_t kernel_clear_cycles(const Kernel *k, uint64_t bytes);
uint64_t kernel_copy_cycles(const Kernel *k, uint64_t bytes);

/* Apply a mapping or policy record of the trace on `cpu`; returns the cycles
 * the system call cost the CPU.  Malformed ranges are counted as segv. */
uint64_t kernel_syscall(Kernel *k, Cpu *cpu, Mm *mm, const TraceRecord *r);

/* Map on demand for traces without mapping events (lackey, ChampSim): an
 * anonymous rw VMA around va, as the kernel did for the recorded program. */
void kernel_map_on_demand(Kernel *k, Mm *mm, uint64_t va);

/* Table-page allocator of Linux's page tables (buddy, unmovable). */
extern const PtAllocator kernel_pt_allocator_template;

#endif
