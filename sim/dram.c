/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dram.c - the memory of every node and the links between nodes: idle
 * latency by SLIT distance, and queueing at loaded memory controllers and
 * interconnect ports.
 *
 * Idle latency.  A line of node h read by a CPU of node c at SLIT distance
 * d costs dram.latency_ns + (dram.remote_latency_ns - dram.latency_ns) *
 * (d - 10) / 10, rounded up to whole cycles: distance / 10 as the latency
 * ratio is the common first approximation (mmu-facts 6), anchored at the
 * two measured points, local and one hop at distance 20.
 *
 * Queues.  Every node has one memory controller of dram.bandwidth_gbps (all
 * its channels as one server) and an interconnect port of numa.link_gbps in
 * each direction (QPI, UPI and NUMAlink links are full duplex).  A local
 * line loads its node's controller; a remote line loads the home node's
 * controller, the home node's outgoing port and the requester's incoming
 * port (one hop; a multi-hop fabric is not routed).  A queue serves a line
 * in s = line_bytes / bandwidth (1.07 ns for 64 B at 60 GB/s).
 *
 * Load is measured per window of dram.window_ns of simulated time: window
 * k = now / window.  A request of window k waits
 *   s * rho / (2 (1 - rho))       the M/D/1 mean waiting time, rho being the
 *                                 work of window k-1 over the window's
 *                                 length, capped at dram.max_utilization
 *   + backlog(k-1)                the fluid backlog: backlog(k) =
 *                                 max(0, backlog(k-1) + work(k) - window),
 *                                 the demand a saturated queue carries over
 * and the path's waits add up (controller, and for a remote line the two
 * ports).  An idle machine pays nothing; one thread cannot approach a
 * node's bandwidth, so it pays a cycle or two at most; many threads
 * hammering one node raise rho to the cap and then build a backlog that
 * grows as long as demand exceeds capacity, so their latency grows without
 * bound until their own stalls bring the demand down to what the node
 * serves, as on real machines.  Waits are rounded to whole cycles per
 * request (below half a cycle: nothing).
 *
 * Why windows: the engine interleaves CPUs by their clocks, so requests
 * arrive out of time order (a CPU's misses are issued ahead of another's
 * clock, and a CPU that was idle starts behind one that ran a long setup).
 * Every request loads the window of its own time.  A window's wait is fixed
 * when its first request arrives, from the windows before it as known then
 * (normally the one just before; windows never opened carried only bulk
 * flows); a CPU that runs behind the others therefore queues with the load
 * of its own time, not with theirs, and lines that arrive late for a
 * window still count in it for the windows opened after.  Each queue
 * remembers the last DRAM_WINDOWS windows.  Everything depends only on
 * the order the engine makes, so runs are deterministic.
 *
 * Bulk transfers (the kernel clearing and copying pages, dram_bulk_span)
 * are writes from the CPU's node to the page's (a copy's reads are charged
 * the same way) and flow: their lines spread evenly over the time the
 * transfer takes at the kernel's rate (mem.clear_* and mem.copy_*, priced
 * by the caller), loading every window they overlap, so that they slow
 * whoever shares the controller or port.  The transfer itself waits like
 * its first line for the queue ahead of it, or, when the transfers booked
 * over its time (itself included) and that queue need more than the
 * controller or port serves in that time, for the excess: concurrent
 * clears of many threads share the bandwidth, served in the order they
 * started.
 *
 * Left out: banks, rows, refresh and read/write turnarounds (the loaded
 * latency of real controllers rises earlier than M/D/1 with one server
 * says, so moderate loads are cheaper here than measured); write-backs of
 * dirty lines; routing across more than one hop; the requests that travel
 * against the data; the cache-coherence traffic of remote lines (snoops,
 * directory lookups); the idle-latency part of a bulk transfer (the kernel's rate
 * includes it).  Prefetched lines load the queues but wait for nothing:
 * prefetches are timely in sim/memsys.c.
 */
#include "config.h"
#include "dram.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include "errors.h"

/* A bulk transfer in progress at one queue: `rate` cycles of service per
 * cycle of simulated time, over [start, end). */
typedef struct {
  double start, end;
  double rate;
} DramFlow;

/* Flows per block of a queue's flow array, blocks per group (below). */
#define DRAM_FLOW_BLOCK 8u
#define DRAM_FLOW_GROUP 8u
#define DRAM_GROUP_SLOTS (DRAM_FLOW_GROUP * DRAM_FLOW_BLOCK)

/* Bounds on the ends of the flows in one block (or group) of slots: every
 * live flow of the block ends in [min_end, max_end]. */
typedef struct {
  double min_end, max_end;
} DramFlowBlock;

/* One server: a node's memory controller or one direction of its
 * interconnect port.
 *
 * The flows are kept in the order their work is summed (flows_work()):
 * appended at the end, and a flow that matters no more replaced by the
 * last one (the order of a sum of doubles is part of the result).  A
 * queue remembers every flow of its last DRAM_WINDOWS windows, some 250 on
 * a run of page faults, of which one or two reach the present; so, a host
 * shortcut with no effect on the model, each block of DRAM_FLOW_BLOCK
 * slots keeps bounds on its flows' ends: a sum over a span skips the
 * blocks whose flows all ended before it, the pruning after a new window
 * those whose flows all end after the horizon.  Bounds may be loose (a
 * flow moved or removed leaves them wide, which only costs a visit); the
 * pruning makes those of a block it visits exact.  Each group of
 * DRAM_FLOW_GROUP blocks keeps bounds on its blocks' the same way, so that
 * a pass looks at a few groups and the blocks of one or two, not at every
 * block (a fault's clearing made three such passes over some 30 blocks). */
typedef struct {
  DramWindow win[DRAM_WINDOWS];  /* by window number % DRAM_WINDOWS */
  uint64_t newest;               /* highest window opened */
  DramFlow *flow;                /* bulk transfers that may still matter */
  DramFlowBlock *block;          /* [slot / DRAM_FLOW_BLOCK] */
  DramFlowBlock *group;          /* [slot / DRAM_GROUP_SLOTS] */
  unsigned n_flows, cap_flows;   /* cap_flows: a multiple of DRAM_GROUP_SLOTS */
} DramQueue;
struct Dram {
  DramHot hot;              /* first: dram_prefetch_open() in dram.h reads it */
  const Topology *topo;
  unsigned nodes;
  uint64_t pages_per_node;
  unsigned line_bytes;
  double max_rho;
  double link_line_cycles;  /* and at a port */
  uint32_t *idle;           /* [node * nodes + home], cycles */
  uint32_t *remote_extra;   /* idle[node][home] - idle[node][node] */
  DramQueue *mc, *out, *in; /* per node: controller, outgoing and incoming port */
  /* Host shortcut, no effect on the model: log2(pages_per_node) + 12 when
   * pages_per_node is a power of two (else 0), so that the home node is a
   * shift. */
  unsigned node_shift;
  gboolean flows_unblocked;  /* dram_scan_every_flow() */
};
/* dram.h's inline functions read the DramHot through a Dram pointer. */
G_STATIC_ASSERT(offsetof(struct Dram, hot) == 0);

/* Cycles of an idle-latency figure in ns.  The small subtraction keeps a
 * product that is whole in decimal from rounding up (as sim/memsys.c). */
static uint32_t ns_cycles(double ns, double cycles_per_ns)
{
  return (uint32_t)ceil(ns * cycles_per_ns - 1e-9);
}

static void dram_hot_sync(Dram *d);

Dram *dram_new(const Settings *s, const Topology *topo, uint64_t pages_per_node, unsigned line_bytes,
               double cycles_per_ns, GError **error)
{
  g_return_val_if_fail(s != NULL && topo != NULL, NULL);
  if (pages_per_node == 0 || line_bytes == 0 || !(cycles_per_ns > 0)) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "DRAM: machine.mem_per_node, cache.line_bytes and cpu.freq_mhz must be positive");
    return NULL;
  }
  double local_ns = settings_double(s, SET_DRAM_LATENCY_NS);
  double remote_ns = settings_double(s, SET_DRAM_REMOTE_LATENCY_NS);
  if (topo->nodes > 1 && remote_ns < local_ns) {
    g_autofree char *remote = settings_blame(s, SET_DRAM_REMOTE_LATENCY_NS);
    g_autofree char *local = settings_blame(s, SET_DRAM_LATENCY_NS);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s is below %s: remote memory cannot be faster than local memory; give dram.remote_latency_ns "
                "at least %s", remote, local, settings_str(s, SET_DRAM_LATENCY_NS));
    return NULL;
  }
  Dram *d = g_new0(Dram, 1);
  d->topo = topo;
  d->nodes = topo->nodes;
  d->pages_per_node = pages_per_node;
  if ((pages_per_node & (pages_per_node - 1)) == 0)
    d->node_shift = 12 + (unsigned)__builtin_ctzll(pages_per_node);
  d->line_bytes = line_bytes;
  d->hot.window_cycles = MAX((uint64_t)llround(settings_double(s, SET_DRAM_WINDOW_NS) * cycles_per_ns), 1);
  d->max_rho = settings_double(s, SET_DRAM_MAX_UTILIZATION);
  /* GB/s are bytes per ns. */
  d->hot.mc_line_cycles = line_bytes / settings_double(s, SET_DRAM_BANDWIDTH_GBPS) * cycles_per_ns;
  d->link_line_cycles = line_bytes / settings_double(s, SET_NUMA_LINK_GBPS) * cycles_per_ns;
  unsigned n = d->nodes;
  d->idle = g_new(uint32_t, (gsize)n * n);
  d->remote_extra = g_new(uint32_t, (gsize)n * n);
  for (unsigned c = 0; c < n; c++)
    for (unsigned h = 0; h < n; h++) {
      double hops = ((double)topology_distance(topo, c, h) - TOPOLOGY_LOCAL_DISTANCE) / TOPOLOGY_LOCAL_DISTANCE;
      /* At most 10000 ns + 9990 ns x 24.4 at 10 GHz (the settings' bounds):
       * 2.5 million cycles, far from overflowing. */
      double ns = local_ns + (remote_ns - local_ns) * hops;
      d->idle[c * n + h] = ns_cycles(ns, cycles_per_ns);
    }
  for (unsigned c = 0; c < n; c++)
    for (unsigned h = 0; h < n; h++)
      d->remote_extra[c * n + h] = d->idle[c * n + h] - d->idle[c * n + c];
  d->mc = g_new0(DramQueue, n);   /* 8 KiB each */
  d->hot.mc0 = n == 1 ? d->mc[0].win : NULL;
  d->hot.idle0 = d->idle[0];
  dram_hot_sync(d);
  d->out = g_new0(DramQueue, n);
  d->in = g_new0(DramQueue, n);
  return d;
}

void dram_free(Dram *d)
{
  if (!d)
    return;
  for (unsigned i = 0; d->mc && i < d->nodes; i++) {
    DramQueue *qs[] = { &d->mc[i], &d->out[i], &d->in[i] };
    for (unsigned k = 0; k < G_N_ELEMENTS(qs); k++) {
      g_free(qs[k]->flow);
      g_free(qs[k]->block);
      g_free(qs[k]->group);
    }
  }
  g_free(d->mc);
  g_free(d->out);
  g_free(d->in);
  g_free(d->idle);
  g_free(d->remote_extra);
  g_free(d);
}

unsigned dram_node_of(const Dram *d, uint64_t pa)
{
  if (d->nodes == 1)
    return 0;
  uint64_t n = d->node_shift != 0 ? pa >> d->node_shift : (pa >> 12) / d->pages_per_node;
  return n < d->nodes ? (unsigned)n : d->nodes - 1;
}

/* DramHot.open0 after a change of win_b or of a tag of node 0's windows. */
static void dram_hot_sync(Dram *d)
{
  DramWindow *w = d->hot.mc0 != NULL ? &d->hot.mc0[d->hot.win_b % DRAM_WINDOWS] : NULL;
  d->hot.open0 = w != NULL && w->tag == d->hot.win_b + 1 ? w : NULL;
}

/* Window of simulated time `now`: now / window_cycles. */
static inline uint64_t dram_window(Dram *d, uint64_t now)
{
  if (G_LIKELY(now - d->hot.win_start < d->hot.window_cycles))  /* also false when now < win_start */
    return d->hot.win_b;
  d->hot.win_b = now / d->hot.window_cycles;
  d->hot.win_start = d->hot.win_b * d->hot.window_cycles;
  dram_hot_sync(d);
  return d->hot.win_b;
}

uint32_t dram_idle_cycles(const Dram *d, unsigned node, unsigned home)
{
  g_return_val_if_fail(node < d->nodes && home < d->nodes, 0);
  return d->idle[node * d->nodes + home];
}

/* ---- the windows ---------------------------------------------------------- */

void dram_scan_every_flow(Dram *d)
{
  d->flows_unblocked = TRUE;
}

gboolean dram_flow_bounds_hold(const Dram *d)
{
  for (unsigned i = 0; i < 3 * d->nodes; i++) {
    const DramQueue *q = i < d->nodes ? &d->mc[i] : i < 2 * d->nodes ? &d->out[i - d->nodes] : &d->in[i - 2 * d->nodes];
    for (unsigned k = 0; k < q->n_flows; k++) {
      const DramFlowBlock *b = &q->block[k / DRAM_FLOW_BLOCK], *g = &q->group[k / DRAM_GROUP_SLOTS];
      if (!(q->flow[k].end >= b->min_end && q->flow[k].end <= b->max_end))
        return FALSE;
      if (!(b->min_end >= g->min_end && b->max_end <= g->max_end))
        return FALSE;
    }
  }
  return TRUE;
}

unsigned dram_flows_held(const Dram *d, unsigned node)
{
  g_return_val_if_fail(node < d->nodes, 0);
  return d->mc[node].n_flows;
}

gboolean dram_same_flows(const Dram *a, const Dram *b)
{
  if (a->nodes != b->nodes)
    return FALSE;
  for (unsigned i = 0; i < a->nodes; i++) {
    const DramQueue *qa[] = { &a->mc[i], &a->out[i], &a->in[i] }, *qb[] = { &b->mc[i], &b->out[i], &b->in[i] };
    for (unsigned k = 0; k < G_N_ELEMENTS(qa); k++)
      if (qa[k]->n_flows != qb[k]->n_flows ||
          (qa[k]->n_flows > 0 && memcmp(qa[k]->flow, qb[k]->flow, qa[k]->n_flows * sizeof(DramFlow)) != 0))
        return FALSE;
  }
  return TRUE;
}

static void flows_append(DramQueue *q, const DramFlow *f)
{
  if (q->n_flows == q->cap_flows) {
    q->cap_flows = q->cap_flows ? 2 * q->cap_flows : DRAM_GROUP_SLOTS;
    q->flow = g_renew(DramFlow, q->flow, q->cap_flows);
    q->block = g_renew(DramFlowBlock, q->block, q->cap_flows / DRAM_FLOW_BLOCK);
    q->group = g_renew(DramFlowBlock, q->group, q->cap_flows / DRAM_GROUP_SLOTS);
  }
  unsigned i = q->n_flows++;
  q->flow[i] = *f;
  DramFlowBlock *b = &q->block[i / DRAM_FLOW_BLOCK], *g = &q->group[i / DRAM_GROUP_SLOTS];
  if (i % DRAM_FLOW_BLOCK == 0) {  /* the block's other slots hold no flow */
    b->min_end = b->max_end = f->end;
  } else {
    b->min_end = MIN(b->min_end, f->end);
    b->max_end = MAX(b->max_end, f->end);
  }
  if (i % DRAM_GROUP_SLOTS == 0) {  /* nor do the group's */
    g->min_end = g->max_end = f->end;
  } else {
    g->min_end = MIN(g->min_end, f->end);
    g->max_end = MAX(g->max_end, f->end);
  }
}

/* Drops the flows that ended by `horizon`, each replaced by the last flow
 * (visiting the slots in order, a replaced slot again).  Blocks and groups
 * whose flows all end after the horizon lose none and gain none, and are
 * skipped; a group visited gets the bounds of its blocks. */
static void flows_prune(const Dram *d, DramQueue *q, double horizon)
{
  double skip_from = d->flows_unblocked ? INFINITY : horizon;
  DramFlowBlock *g = q->group;
  DramFlow *flow = q->flow;
  unsigned n = q->n_flows;  /* in a local: the stores to flow[] could alias it */
  for (unsigned g0 = 0; g0 < n; g0 += DRAM_GROUP_SLOTS, g++) {
    if (g->min_end > skip_from)
      continue;
    double glo = INFINITY, ghi = -INFINITY;
    for (unsigned k0 = g0; k0 < MIN(g0 + DRAM_GROUP_SLOTS, n); k0 += DRAM_FLOW_BLOCK) {
      DramFlowBlock *b = &q->block[k0 / DRAM_FLOW_BLOCK];
      if (b->min_end <= skip_from) {
        double lo = INFINITY, hi = -INFINITY;
        for (unsigned i = k0; i < MIN(k0 + DRAM_FLOW_BLOCK, n);) {
          double end = flow[i].end;
          if (end <= horizon) {
            flow[i] = flow[--n];
          } else {
            lo = MIN(lo, end);
            hi = MAX(hi, end);
            i++;
          }
        }
        b->min_end = lo;
        b->max_end = hi;
      }
      glo = MIN(glo, b->min_end);
      ghi = MAX(ghi, b->max_end);
    }
    g->min_end = glo;
    g->max_end = ghi;
  }
  q->n_flows = n;
}

/* The bound below which a block's flows are skipped by a sum from lo. */
static inline double flows_floor(const Dram *d, double lo)
{
  return d->flows_unblocked ? -INFINITY : lo;
}

/* The sums of the flows of q over n spans [lo[k], hi[k]) into work[k], in
 * one pass over the flows, each sum taken in the same order (the flows').
 * Inlined into its two callers with n a constant, so that the sums stay in
 * registers and a one-span call does no more than a walk of its own. */
static inline __attribute__((always_inline)) void flows_sum(const Dram *d, const DramQueue *q, unsigned n,
                                                              const double *lo, const double *hi, double *work)
{
  double first = lo[0];
  for (unsigned k = 0; k < n; k++) {
    work[k] = 0;
    first = MIN(first, lo[k]);
  }
  double skip_to = flows_floor(d, first);
  unsigned nf = q->n_flows;
  const DramFlowBlock *grp = q->group;
  for (unsigned g0 = 0; g0 < nf; g0 += DRAM_GROUP_SLOTS, grp++) {
    if (grp->max_end <= skip_to)
      continue;
    unsigned g1 = MIN(g0 + DRAM_GROUP_SLOTS, nf);
    for (unsigned k0 = g0; k0 < g1; k0 += DRAM_FLOW_BLOCK) {
      if (q->block[k0 / DRAM_FLOW_BLOCK].max_end <= skip_to)
        continue;
      unsigned k1 = MIN(k0 + DRAM_FLOW_BLOCK, nf);
      for (unsigned i = k0; i < k1; i++) {
        const DramFlow *f = &q->flow[i];
        /* Most flows a queue remembers ended before the spans asked about:
         * one compare rules them out (b <= a below for them, nothing added). */
        if (f->end <= first)
          continue;
        for (unsigned k = 0; k < n; k++) {
          double a = MAX(f->start, lo[k]), b = MIN(f->end, hi[k]);
          if (b > a)
            work[k] += (b - a) * f->rate;
        }
      }
    }
  }
}

/* Service cycles the flows of q put into [lo, hi). */
static double flows_work(const Dram *d, const DramQueue *q, double lo, double hi)
{
  double w;
  flows_sum(d, q, 1, &lo, &hi, &w);
  return w;
}

/* flows_work() of three spans [lo[k], hi[k]) in one pass over the flows:
 * opening a window after a gap asks for three (a fault's clearing opens
 * one almost every time), otherwise the spans not asked for are empty.
 * Always three: a constant count keeps the sums in registers. */
static void flows_work_spans(const Dram *d, const DramQueue *q, const double *lo, const double *hi, double *work)
{
  flows_sum(d, q, 3, lo, hi, work);
}

/* Open window b of q: its backlog and wait follow from the nearest earlier
 * window q remembers (normally b - 1); windows between that were never
 * opened carried the flows' load only. */
static __attribute__((noinline)) DramWindow *queue_open(Dram *d, DramQueue *q, uint64_t b, double line_cycles)
{
  double win = (double)d->hot.window_cycles;
  const DramWindow *prev = NULL;
  const DramWindow *p = &q->win[(b - 1) % DRAM_WINDOWS];
  const DramWindow *newest = &q->win[q->newest % DRAM_WINDOWS];
  if (b > 0 && p->tag == b) {
    prev = p;
  } else if (b > q->newest && newest->tag == q->newest + 1) {
    prev = newest;  /* no window after it was opened: what the scan finds */
  } else {
    for (unsigned i = 0; i < DRAM_WINDOWS; i++) {
      p = &q->win[i];
      if (p->tag && p->tag <= b && (!prev || p->tag > prev->tag))
        prev = p;
    }
  }
  /* The flows' work in the gap since prev (GAP), in window b - 1 (LAST)
   * when prev is not b - 1, and in window b (OWN). */
  enum { GAP, LAST, OWN };
  double lo[3], hi[3], work[3];
  unsigned at[3] = { 0, 0, 0 }, n = 0;  /* span of each in lo, hi, work */
  uint64_t j = prev ? prev->tag - 1 : 0;
  if (prev != NULL && j + 1 < b) {
    at[GAP] = n;
    lo[n] = (double)(j + 1) * win;
    hi[n++] = (double)b * win;
  }
  if (prev != NULL ? j + 1 < b : b > 0) {
    at[LAST] = n;
    lo[n] = (double)(b - 1) * win;
    hi[n++] = (double)b * win;
  }
  at[OWN] = n;
  lo[n] = (double)b * win;
  hi[n++] = (double)(b + 1) * win;
  for (unsigned k = n; k < G_N_ELEMENTS(lo); k++)
    lo[k] = hi[k] = lo[at[OWN]];  /* empty, and no earlier: adds nothing, skips nothing */
  flows_work_spans(d, q, lo, hi, work);

  double backlog = 0, rho = 0;
  if (prev) {
    backlog = MAX(0.0, prev->backlog + prev->work - win);
    rho = prev->work / win;
    if (j + 1 < b) {
      double gap = (double)(b - 1 - j);
      backlog = MAX(0.0, backlog + work[at[GAP]] - gap * win);
      rho = work[at[LAST]] / win;
    }
  } else if (b > 0) {
    rho = work[at[LAST]] / win;
  }
  rho = MIN(rho, d->max_rho);
  DramWindow *w = &q->win[b % DRAM_WINDOWS];
  w->tag = b + 1;
  if (q->win == d->hot.mc0)
    dram_hot_sync(d);
  w->backlog = backlog;
  w->work = work[at[OWN]];
  w->wait = line_cycles * rho / (2 * (1 - rho)) + backlog;
  if (b > q->newest) {
    /* Flows that ended before every window q remembers matter no more. */
    q->newest = b;
    double horizon = b >= DRAM_WINDOWS ? (double)(b - DRAM_WINDOWS + 1) * win : 0;
    flows_prune(d, q, horizon);
  }
  return w;
}

static inline DramWindow *queue_window(Dram *d, DramQueue *q, uint64_t b, double line_cycles)
{
  DramWindow *w = &q->win[b % DRAM_WINDOWS];
  return G_LIKELY(w->tag == b + 1) ? w : queue_open(d, q, b, line_cycles);
}

/* One line through q in window b: book its service, return its wait. */
static inline double queue_line(Dram *d, DramQueue *q, uint64_t b, double line_cycles)
{
  DramWindow *w = queue_window(d, q, b, line_cycles);
  w->work += line_cycles;
  return w->wait;
}

/* A bulk flow of `lines` through q from `now` over `span` cycles.  Returns
 * its first line's wait; *excess is what the flows booked over its span
 * (its own included) and the backlog before it need beyond what the queue
 * serves in that time: served in the order they were booked, the transfer
 * ends when all that work is done. */
static double queue_flow(Dram *d, DramQueue *q, uint64_t now, uint64_t span, double lines, double line_cycles,
                         double *excess)
{
  double win = (double)d->hot.window_cycles;
  uint64_t b0 = dram_window(d, now);
  DramWindow *first = queue_window(d, q, b0, line_cycles);
  double wait = first->wait;
  double work = lines * line_cycles;
  if (span == 0) {
    first->work += work;
    *excess = 0;
    return wait;
  }
  DramFlow f = { (double)now, (double)now + (double)span, work / (double)span };
  /* Windows already open get their share now, the others when they open.
   * Only windows b0 .. b1 overlap the flow: when they are fewer than the
   * slots, only their slots are looked at (a fault's clearing spans one or
   * two windows, and every fault of a run used to scan all the slots). */
  uint64_t b1 = (now + span - 1) / d->hot.window_cycles;
  unsigned n = b1 - b0 < DRAM_WINDOWS ? (unsigned)(b1 - b0 + 1) : DRAM_WINDOWS;
  for (unsigned k = 0; k < n; k++) {
    DramWindow *w = &q->win[n < DRAM_WINDOWS ? (b0 + k) % DRAM_WINDOWS : k];
    if (!w->tag)
      continue;
    double lo = (double)(w->tag - 1) * win;
    double a = MAX(f.start, lo), b = MIN(f.end, lo + win);
    if (b > a)
      w->work += (b - a) * f.rate;
  }
  flows_append(q, &f);
  *excess = MAX(0.0, first->backlog + flows_work(d, q, f.start, f.end) - (double)span);
  return wait;
}


/* ---- requests ------------------------------------------------------------- */

/* dram_access() of a line of `home` in window b, in full. */
static __attribute__((noinline)) uint32_t dram_access_path(Dram *d, unsigned node, unsigned home, uint64_t b,
                                                           Counters *ctr)
{
  double wait = queue_line(d, &d->mc[home], b, d->hot.mc_line_cycles);
  unsigned idx = node * d->nodes + home;
  if (G_LIKELY(home == node)) {
    ctr->c[CTR_LOCAL_ACCESSES]++;
  } else {
    wait += queue_line(d, &d->out[home], b, d->link_line_cycles);
    wait += queue_line(d, &d->in[node], b, d->link_line_cycles);
    ctr->c[CTR_REMOTE_ACCESSES]++;
    ctr->c[CTR_REMOTE_CYCLES] += d->remote_extra[idx];
  }
  uint32_t q = dram_round_cycles(wait);
  ctr->c[CTR_DRAM_QUEUE_CYCLES] += q;
  return d->idle[idx] + q;
}

/* The common case of both functions below, a local line in a window already
 * open, is done in line; the rest (another node's line, a window to open)
 * out of line, so that the common case saves no registers.  That case is
 * also dram_prefetch_open() and dram_access_open() in dram.h, for node 0
 * of one: the three are kept in step (test_open0_stress compares them). */
uint32_t dram_access(Dram *d, unsigned node, uint64_t pa, uint64_t now, Counters *ctr)
{
  unsigned home = dram_node_of(d, pa);
  uint64_t b = dram_window(d, now);
  DramWindow *w = &d->mc[home].win[b % DRAM_WINDOWS];
  if (G_UNLIKELY(home != node || w->tag != b + 1))
    return dram_access_path(d, node, home, b, ctr);
  w->work += d->hot.mc_line_cycles;  /* queue_line() */
  ctr->c[CTR_LOCAL_ACCESSES]++;
  uint32_t q = dram_round_cycles(w->wait);
  ctr->c[CTR_DRAM_QUEUE_CYCLES] += q;
  return d->idle[node * d->nodes + home] + q;
}

static __attribute__((noinline)) uint32_t dram_prefetch_path(Dram *d, unsigned node, unsigned home, uint64_t b)
{
  double wait = queue_line(d, &d->mc[home], b, d->hot.mc_line_cycles);
  if (home != node) {
    wait += queue_line(d, &d->out[home], b, d->link_line_cycles);
    wait += queue_line(d, &d->in[node], b, d->link_line_cycles);
  }
  return d->idle[node * d->nodes + home] + dram_round_cycles(wait);
}

/* In full: dram_prefetch_open() in dram.h is the common case. */
uint32_t dram_prefetch(Dram *d, unsigned node, uint64_t pa, uint64_t now)
{
  unsigned home = dram_node_of(d, pa);
  uint64_t b = dram_window(d, now);
  DramWindow *w = &d->mc[home].win[b % DRAM_WINDOWS];
  if (G_UNLIKELY(home != node || w->tag != b + 1))
    return dram_prefetch_path(d, node, home, b);
  w->work += d->hot.mc_line_cycles;  /* queue_line() */
  return d->idle[node * d->nodes + home] + dram_round_cycles(w->wait);
}

uint64_t dram_bulk_span(Dram *d, unsigned node, unsigned home, uint64_t bytes, uint64_t now, uint64_t span_cycles,
                        Counters *ctr)
{
  g_return_val_if_fail(node < d->nodes && home < d->nodes, 0);
  double lines = ceil((double)bytes / d->line_bytes);
  /* The first line waits at every queue of the path; the excess of the
   * most oversubscribed queue bounds the end of the stream. */
  double ex, excess;
  double wait = queue_flow(d, &d->mc[home], now, span_cycles, lines, d->hot.mc_line_cycles, &excess);
  if (home != node) {
    wait += queue_flow(d, &d->out[node], now, span_cycles, lines, d->link_line_cycles, &ex);
    excess = MAX(excess, ex);
    wait += queue_flow(d, &d->in[home], now, span_cycles, lines, d->link_line_cycles, &ex);
    excess = MAX(excess, ex);
  }
  uint64_t q = dram_round_cycles(MAX(wait, excess));
  if (ctr)
    ctr->c[CTR_DRAM_QUEUE_CYCLES] += q;
  return q;
}

uint64_t dram_bulk(Dram *d, unsigned node, unsigned home, uint64_t bytes, uint64_t now, Counters *ctr)
{
  g_return_val_if_fail(node < d->nodes && home < d->nodes, 0);
  /* At the controller's full bandwidth: the shortest the transfer can take. */
  double lines = ceil((double)bytes / d->line_bytes);
  uint64_t span = (uint64_t)ceil(lines * d->hot.mc_line_cycles);
  return dram_bulk_span(d, node, home, bytes, now, span, ctr);
}
