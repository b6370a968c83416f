/* SPDX-License-Identifier: GPL-2.0-or-later */
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
 *                                 ilx = (vm_pgoff >> order) + ((addr - vm_start)
 *                                 >> (PAGE_SHIFT + order)), vm_pgoff being
 *                                 vm_start >> PAGE_SHIFT for anonymous memory
 *                                 (so ilx = addr >> (PAGE_SHIFT + order) when
 *                                 vm_start is aligned to the page size) and 0
 *                                 for hugetlb, whichever policy (VMA's or
 *                                 process's) applies; outside a VMA: round
 *                                 robin per process (il_prev)
 *   weighted_interleave:NODES     as interleave, node n taking
 *                                 numa.interleave_weights[n] pages in turn
 *   preferred_many:NODES          NODES nearest to the faulting CPU first,
 *                                 without reclaim; then every node by
 *                                 distance from the CPU's
 * Huge pages (THP, hugetlb) are placed by the same rules at their order.
 * /proc/vmstat's numa_hit, numa_miss and numa_interleave are counted.
 * Each mode is a row of the table in mempolicy_mode.h.
 *
 * A VMA whose policy is `local` (TracePolicy 0, MPOL_DEFAULT) has none of
 * its own: the process's applies, as after mbind(MPOL_DEFAULT).  Node masks
 * of trace records are cut to the machine's nodes as mbind and
 * set_mempolicy cut them to the nodes with memory; a mask left empty is
 * EINVAL.  Settings must name existing nodes (an error at machine creation).
 */
#ifndef MMUSIM_MEMPOLICY_H
#define MMUSIM_MEMPOLICY_H

#include <glib.h>
#include <stdint.h>
#include "kernel.h"
#include "mempolicy_syntax.h"

typedef struct KCpu KCpu;

/* Parse a policy as a setting gives it (local, bind:0-3, preferred:1,
 * interleave:0,2, weighted_interleave:0-3, preferred_many:0,2;
 * mempolicy_syntax_parse): `what`
 * names the source in the error ("setting 'numa.mempolicy'"); nodes must
 * exist on a machine of `nodes` nodes. */
gboolean mempolicy_parse(const char *text, unsigned nodes, const char *what, MemPolicy *out, GError **error);

/* Weights of weighted interleave (numa.interleave_weights): "" gives 1 to
 * every node; else exactly `nodes` comma-separated values 1..255.  `what`
 * names the source in the error. */
gboolean mempolicy_parse_weights(const char *text, unsigned nodes, const char *what, uint8_t *weights,
                                 GError **error);

/* Read numa.mempolicy and numa.interleave_weights into k (at machine
 * creation): FALSE and an error naming the setting when one is bad. */
gboolean mempolicy_init(Kernel *k, GError **error);

/* The policy of a trace record (REC_MEMPOLICY) as the kernel takes it: the
 * mask cut to the machine's nodes.  FALSE when that leaves a policy that
 * needs nodes without any (EINVAL). */
gboolean mempolicy_from_record(const Kernel *k, const TraceRecord *r, MemPolicy *out);
/* Whether the kernel's release has p's mode and flags (kernel.version):
 * set_mempolicy and mbind of one that lacks them fail with EINVAL. */
gboolean mempolicy_in_kernel(const Kernel *k, const MemPolicy *p);

/* The policy in force for a fault in v (NULL: none): the VMA's unless it is
 * local/default, else the process's.  *is_vma tells which (may be NULL). */
MemPolicy mempolicy_effective(const Mm *mm, const Vma *v, gboolean *is_vma);

/* The policy in force for va (VMA's, process's, or local) and where its
 * mode's hook (mempolicy_mode.h) places a new page of 2^order 4K frames;
 * advances the process's interleave state. */
void mempolicy_place(Kernel *k, Mm *mm, const Vma *v, uint64_t va, unsigned order, unsigned cpu_node,
                     MemPlacement *out);

/* The second try of a then_any placement p: every node, nearest to
 * p->from first, counted against p->from (alloc_pages_preferred_many's
 * __alloc_pages(gfp, order, nid, NULL)). */
void mempolicy_then_any(const Kernel *k, const MemPlacement *p, MemPlacement *out);

/* Allocate 2^order frames as placed: the first node, then the allowed nodes
 * nearest to it (then, for then_any, the other nodes).  Counts numa_hit / numa_miss / numa_interleave on cpu.
 * FALSE when no allowed node has the memory. */
gboolean mempolicy_alloc(Kernel *k, KCpu *cpu, const MemPlacement *p, unsigned order, MigrateType mt,
                         uint64_t *pfn);

/* The nodes an allocation placed by p tries, in order (p->node, then the
 * allowed nodes nearest to p->from, then for then_any the nodes not allowed
 * nearest to p->from); returns how many (at most 64). */
unsigned mempolicy_nodes(const Kernel *k, const MemPlacement *p, int *nodes);

/* Count an allocation placed by p that landed on `node` (zone_statistics:
 * one per allocation, a THP counts one): numa_hit when node is p->node
 * (p->from for a then_any page outside the allowed nodes), else numa_miss;
 * numa_interleave when an interleave policy got its node. */
void mempolicy_count(KCpu *cpu, const MemPlacement *p, int node);

#endif
