/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology.h - the NUMA shape of a machine: nodes, CPUs per node and the
 * SLIT distance matrix (ACPI System Locality Information Table, as
 * /sys/devices/system/node/nodeN/distance shows it).
 *
 * Built from machine.nodes, machine.cpus_per_node, numa.distances and
 * numa.remote_distance.  CPU c sits on node c / cpus_per_node.  Every node's
 * list of nodes nearest first (ties to the lower node number) is the
 * fallback order of its allocations, as build_zonelists() orders them.
 */
#ifndef MMUSIM_TOPOLOGY_H
#define MMUSIM_TOPOLOGY_H

#include <glib.h>
#include "settings.h"

/* SLIT's distance of a node to itself (include/linux/topology.h). */
#define TOPOLOGY_LOCAL_DISTANCE 10
/* CPUs in all (machine.nodes x machine.cpus_per_node): the most Linux
 * builds for, NR_CPUS_RANGE_END of arch/x86/Kconfig with MAXSMP and the
 * NR_CPUS range of arch/powerpc/platforms/Kconfig.cputype (8192 both).
 * Each CPU costs about 5 KiB of host memory, and 95 KiB more once it
 * ran something and has its TLBs and caches (doc/performance.md). */
#define TOPOLOGY_MAX_CPUS 8192

typedef struct {
  unsigned nodes, cpus_per_node;
  unsigned *dist;   /* [a * nodes + b] */
  unsigned *order;  /* [a * nodes + i]: the i-th nearest node to a (a itself first) */
} Topology;

/* NULL and a GError naming numa.distances when the matrix is malformed:
 * wrong row or column count, a diagonal entry other than 10, an off-diagonal
 * entry below 11 or above 254. */
Topology *topology_new(const Settings *s, GError **error);
void topology_free(Topology *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Topology, topology_free)

static inline unsigned topology_distance(const Topology *t, unsigned a, unsigned b)
{
  return t->dist[a * t->nodes + b];
}
/* Nodes by distance from `node`, nearest (itself) first; t->nodes entries. */
static inline const unsigned *topology_order(const Topology *t, unsigned node)
{
  return &t->order[node * t->nodes];
}
static inline unsigned topology_cpu_node(const Topology *t, unsigned cpu)
{
  return cpu / t->cpus_per_node;
}

#endif
