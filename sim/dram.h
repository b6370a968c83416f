/*
 * dram.h - the memory of every node and the links between nodes: idle
 * latency by SLIT distance, and queueing when a node's memory controllers
 * or interconnect ports are loaded.
 *
 * One Dram per machine, shared by every CPU's MemHier (sim/memsys.c calls
 * dram_access for each reference DRAM serves).  Node n owns the physical
 * pages [n * pages_per_node, (n + 1) * pages_per_node), as mmu/physmem.h lays
 * memory out.
 *
 * Latency of a line from node h to a CPU on node c at distance d:
 *   dram.latency_ns + (dram.remote_latency_ns - dram.latency_ns) * (d - 10) / 10
 * plus the queueing delay of h's memory controllers and, when h != c, of the
 * interconnect ports of c and h (see dram.c for the queueing model and its
 * settings dram.bandwidth_gbps, numa.link_gbps, dram.window_ns,
 * dram.max_utilization).
 */
#ifndef MMUSIM_DRAM_H
#define MMUSIM_DRAM_H

#include <glib.h>
#include <stdint.h>
#include "settings.h"
#include "stats.h"
#include "topology.h"

typedef struct Dram Dram;

/* `topo` must outlive the Dram.  line_bytes: bytes one reference moves. */
Dram *dram_new(const Settings *s, const Topology *topo, uint64_t pages_per_node, unsigned line_bytes,
               double cycles_per_ns, GError **error);
void dram_free(Dram *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Dram, dram_free)

/* Node that owns physical address pa (past the last node: the last node). */
unsigned dram_node_of(const Dram *d, uint64_t pa);

/* One line of pa fetched from DRAM for a CPU on `node` at simulated time
 * `now` (cycles).  Returns the cycles of the DRAM part (idle latency by
 * distance plus queueing); counts local_accesses or remote_accesses,
 * remote_cycles and dram_queue_cycles into ctr.  Records the load it puts
 * on the memory controller and the ports. */
uint32_t dram_access(Dram *d, unsigned node, uint64_t pa, uint64_t now, Counters *ctr);

/* The kernel moves `bytes` (clearing or copying pages) between the memory of
 * node `home` and a CPU on `node`, starting at `now`: the load is recorded
 * like dram_access's, and the extra cycles that queueing adds to the bulk
 * transfer are returned (0 on an idle machine). */
uint64_t dram_bulk(Dram *d, unsigned node, unsigned home, uint64_t bytes, uint64_t now, Counters *ctr);
/* The same for a transfer that takes `span_cycles` (the kernel's clearing
 * or copying time): its load is spread over that time.  dram_bulk assumes
 * the controller's full bandwidth.  The returned cycles are the wait of
 * the transfer's first line, or, when the transfers under way need more
 * than the controller (or a port) serves over the span, the excess (see
 * dram.c); ctr may be NULL. */
uint64_t dram_bulk_span(Dram *d, unsigned node, unsigned home, uint64_t bytes, uint64_t now, uint64_t span_cycles,
                        Counters *ctr);
/* A line of pa that a prefetcher of a CPU on `node` brings in at `now`: it
 * loads the queues like dram_access but waits for nothing and counts
 * nothing (prefetches are timely in sim/memsys.c). */
void dram_prefetch(Dram *d, unsigned node, uint64_t pa, uint64_t now);

/* Idle latency in cycles from `node` to the memory of `home`. */
uint32_t dram_idle_cycles(const Dram *d, unsigned node, unsigned home);

#endif
