/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dram.h - the memory of every node and the links between nodes: idle
 * latency by SLIT distance, and queueing when a node's memory controllers
 * or interconnect ports are loaded.
 *
 * One Dram per machine, shared by every CPU's MemHier (sim/memsys.c calls
 * dram_access for each reference DRAM serves).  Node n owns the physical
 * pages [n * pages_per_node, (n + 1) * pages_per_node), as kernel/physmem.h lays
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

/* ---- private: the part of a Dram that dram_prefetch_open() reads inline ---- */

/* Windows each queue remembers, by window number modulo this.  CPUs run
 * ahead of each other by up to the engine's skew; a window further back
 * than this from one still in use is forgotten (its slot reused), so a
 * request that far behind finds it fresh.  Host memory, not model:
 * 256 windows of 1 us cover a quarter of a millisecond of skew. */
#define DRAM_WINDOWS 256u

/* One window of one queue (see dram.c). */
typedef struct {
  uint64_t tag;      /* window number + 1; 0: the slot is empty */
  double work;       /* service cycles booked in the window */
  double backlog;    /* demand carried into it from before, cycles */
  double wait;       /* what a line of the window waits, cycles */
} DramWindow;

/* The first member of struct Dram.  window_cycles and mc_line_cycles are
 * model; the rest are host shortcuts with no effect on it: the window of
 * the last request (window win_b starts at cycle win_start), because CPUs'
 * clocks mostly stay in one window from a request to the next and a 64-bit
 * division per request is slow; and the controller's windows of a machine
 * of one node (NULL with more), so that the common prefetch, a line of the
 * one node in the window of the last request, is a few instructions in
 * sim/memsys.c's prefetch loop instead of a call (one per access of a
 * sequential run), dram_prefetch_open(). */
typedef struct {
  uint64_t win_b, win_start;
  uint64_t window_cycles;   /* a window's length */
  double mc_line_cycles;    /* service time of a line at a controller */
  DramWindow *mc0;          /* node 0's controller windows; NULL: nodes > 1 */
  /* &mc0[win_b % DRAM_WINDOWS] while that slot holds window win_b (its tag
   * is win_b + 1), else NULL: kept by dram.c whenever win_b or a tag of mc0
   * changes, so that dram_open_line()'s test is one load and one compare
   * fewer (the slot's address and its tag). */
  DramWindow *open0;
  uint32_t idle0;           /* idle latency of node 0's memory from node 0, cycles */
} DramHot;

/* Waits are whole cycles; a wait past 2^31 cycles (a backlog of most of a
 * second) is clipped there, so that the latency it is added to cannot wrap. */
#define DRAM_MAX_WAIT_CYCLES (UINT32_MAX / 2)

static inline uint32_t dram_round_cycles(double c)
{
  return c >= (double)DRAM_MAX_WAIT_CYCLES ? DRAM_MAX_WAIT_CYCLES : (uint32_t)(c + 0.5);
}

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
 * loads the queues like dram_access and counts nothing.  Returns the
 * cycles of its DRAM part as dram_access does (idle latency by distance
 * plus queueing), which the timed prefetch model waits for and the ideal
 * one ignores (sim/memsys.c). */
uint32_t dram_prefetch(Dram *d, unsigned node, uint64_t pa, uint64_t now);
/* The common case of dram_prefetch(), inline (below). */
static inline gboolean dram_prefetch_open(Dram *d, uint64_t now);
/* The common case of dram_access(), inline (below). */
static inline gboolean dram_access_open(Dram *d, uint64_t now, Counters *ctr, uint32_t *cycles);

/* For tests: sums over the bulk flows visit every flow, as without the
 * blocks' bounds of dram.c (the results must not change). */
void dram_scan_every_flow(Dram *d);
/* For tests: every flow's end lies within the bounds of its block. */
gboolean dram_flow_bounds_hold(const Dram *d);
/* For tests: the bulk flows node's memory controller remembers. */
unsigned dram_flows_held(const Dram *d, unsigned node);
/* For tests: a and b hold the same flows in the same order at every queue. */
gboolean dram_same_flows(const Dram *a, const Dram *b);

/* Idle latency in cycles from `node` to the memory of `home`. */
uint32_t dram_idle_cycles(const Dram *d, unsigned node, unsigned home);

/* The step both functions below share: on a machine of one node, when
 * `now` lies in the window of the last request and that window is open,
 * books a line's service there (what queue_line() of sim/dram.c does) and
 * returns the window; otherwise changes nothing and returns NULL. */
static inline __attribute__((always_inline)) DramWindow *dram_open_line(Dram *d, uint64_t now)
{
  DramHot *hot = (DramHot *)d;  /* the first member */
  DramWindow *w = hot->open0;
  if (G_LIKELY(w != NULL && now - hot->win_start < hot->window_cycles)) {
    w->work += hot->mc_line_cycles;
    return w;
  }
  return NULL;
}

/* dram_prefetch() of a line on a machine of one node at `now`, when
 * dram_open_line() takes it: returns TRUE; otherwise changes nothing and
 * returns FALSE, and the caller calls dram_prefetch().  Inline, with no
 * address to compute: the caller's slow path computes it. */
static inline __attribute__((always_inline)) gboolean dram_prefetch_open(Dram *d, uint64_t now)
{
  return dram_open_line(d, now) != NULL;
}

/* dram_access() of a line on a machine of one node, for a CPU of that node,
 * at `now`, when dram_open_line() takes it: does the rest of what
 * dram_access() does there (counts a local access and its wait), stores
 * its cycles in *cycles and returns TRUE; otherwise changes nothing and
 * returns FALSE, and the caller calls dram_access().  Inline, as
 * dram_prefetch_open(). */
static inline __attribute__((always_inline)) gboolean dram_access_open(Dram *d, uint64_t now, Counters *ctr, uint32_t *cycles)
{
  DramWindow *w = dram_open_line(d, now);
  if (w == NULL)
    return FALSE;
  ctr->c[CTR_LOCAL_ACCESSES]++;
  uint32_t q = dram_round_cycles(w->wait);
  ctr->c[CTR_DRAM_QUEUE_CYCLES] += q;
  *cycles = ((DramHot *)d)->idle0 + q;
  return TRUE;
}

#endif
