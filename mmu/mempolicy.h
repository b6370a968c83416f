/*
 * mempolicy.h - NUMA memory policies (mm/mempolicy.c): which node a new page
 * comes from.
 *
 * A policy is the one a VMA carries (the trace's `mempolicy ADDR LEN POLICY`
 * record, mbind), else the process's (`mempolicy process POLICY` in the
 * trace, set_mempolicy; numa.mempolicy for every process, as numactl), else
 * local.  Modes, as the kernel names them:
 *   local (MPOL_LOCAL / default)  the faulting CPU's node, then by distance
 *   preferred:N                   N, then by distance from N
 *   bind:NODES                    only NODES, nearest to the faulting CPU first
 *   interleave:NODES              VMA policy: node = NODES[ilx mod |NODES|] with
 *                                 ilx = (addr >> (PAGE_SHIFT + order)); process
 *                                 policy: round-robin per process (il_prev)
 *   weighted_interleave:NODES     as interleave, node n taking
 *                                 numa.interleave_weights[n] pages in turn
 * Huge pages (THP, hugetlb) are placed by the same rules at their order.
 * /proc/vmstat's numa_hit, numa_miss and numa_interleave are counted.
 */
#ifndef MMUSIM_MEMPOLICY_H
#define MMUSIM_MEMPOLICY_H

#include <glib.h>
#include <stdint.h>
#include "kernel.h"

typedef struct Cpu Cpu;

typedef struct {
  uint8_t mode;     /* TracePolicy */
  uint64_t nodes;   /* node mask (preferred: one bit) */
} MemPolicy;

/* Parse the trace syntax (local, bind:0-3, preferred:1, interleave:0,2,
 * weighted_interleave:0-3).  `what` names the source in the error
 * ("numa.mempolicy"); nodes must be below `nodes`. */
gboolean mempolicy_parse(const char *text, unsigned nodes, const char *what, MemPolicy *out, GError **error);

/* Where a new page of 2^order 4K frames for va goes. */
typedef struct {
  int node;             /* node to try first */
  uint64_t allowed;     /* nodes it may come from (bind), all nodes otherwise */
  gboolean interleaved; /* placed by an interleave policy (numa_interleave) */
} MemPlacement;

/* The policy in force for va (VMA's, process's, or local) and the node it
 * chooses; advances the process's interleave state. */
void mempolicy_place(Kernel *k, Mm *mm, const Vma *v, uint64_t va, unsigned order, unsigned cpu_node,
                     MemPlacement *out);

/* Allocate 2^order frames as placed: the first node, then the allowed nodes
 * nearest to it.  Counts numa_hit / numa_miss / numa_interleave on cpu.
 * FALSE when no allowed node has the memory. */
gboolean mempolicy_alloc(Kernel *k, Cpu *cpu, const MemPlacement *p, unsigned order, MigrateType mt,
                         uint64_t *pfn);

#endif
