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
 * its channels as one server) and one interconnect port of numa.link_gbps.
 * A local line loads its node's controller; a remote line loads the home
 * node's controller and two ports, the requester's and the home node's
 * (one hop; a multi-hop fabric is not routed).  A queue serves a line in
 * s = line_bytes / bandwidth (1.07 ns for 64 B at 60 GB/s).
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
 * arrive slightly out of time order (a CPU's misses are issued ahead of
 * another's clock).  A window is closed when the first request of a later
 * window arrives; a request older than the open window counts in the open
 * window.  Everything depends only on the order the engine makes, so runs
 * are deterministic.
 *
 * Bulk transfers (the kernel clearing and copying pages, dram_bulk_span)
 * are a flow: their lines spread evenly over the time the transfer takes,
 * loading every window they overlap.  The transfer waits once, like its
 * first line, for the queue ahead of it, then streams at the kernel's rate
 * (mem.clear_* and mem.copy_*, priced by the caller); its own load slows
 * whoever shares the controller or port with it.
 *
 * Left out: banks, rows, refresh and read/write turnarounds (the loaded
 * latency of real controllers rises earlier than M/D/1 with one server
 * says, so moderate loads are cheaper here than measured); write-backs of
 * dirty lines; routing across more than one hop and link contention by
 * direction; the cache-coherence traffic of remote lines (snoops, directory
 * lookups); the idle-latency part of a bulk transfer (the kernel's rate
 * includes it).  Prefetched lines load the queues but wait for nothing:
 * prefetches are timely in sim/memsys.c.
 */
#include "config.h"
#include "dram.h"

#include <math.h>
#include <string.h>
#include "cache.h" /* MMUSIM_SIM_ERROR */

/* A bulk transfer in progress at one queue: `rate` cycles of service per
 * cycle of simulated time, over [start, end). */
typedef struct {
  double start, end;
  double rate;
} DramFlow;

/* One server: a node's memory controller or interconnect port. */
typedef struct {
  uint64_t bucket;   /* the open window */
  double work;       /* service cycles of lines booked in the open window */
  double backlog;    /* demand carried into the open window, cycles */
  double wait;       /* what a line of the open window waits, cycles */
  GArray *flows;     /* DramFlow, bulk transfers not finished */
} DramQueue;

struct Dram {
  const Topology *topo;
  unsigned nodes;
  uint64_t pages_per_node;
  unsigned line_bytes;
  uint64_t window_cycles;
  double max_rho;
  double mc_line_cycles;    /* service time of a line at a controller */
  double link_line_cycles;  /* and at a port */
  uint32_t *idle;           /* [node * nodes + home], cycles */
  uint32_t *remote_extra;   /* idle[node][home] - idle[node][node] */
  DramQueue *mc, *port;     /* per node */
};

/* Cycles of an idle-latency figure in ns.  The small subtraction keeps a
 * product that is whole in decimal from rounding up (as sim/memsys.c). */
static uint32_t ns_cycles(double ns, double cycles_per_ns)
{
  return (uint32_t)ceil(ns * cycles_per_ns - 1e-9);
}

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
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "setting 'dram.remote_latency_ns' (%g) is below 'dram.latency_ns' (%g): remote memory cannot be "
                "faster than local memory", remote_ns, local_ns);
    return NULL;
  }
  Dram *d = g_new0(Dram, 1);
  d->topo = topo;
  d->nodes = topo->nodes;
  d->pages_per_node = pages_per_node;
  d->line_bytes = line_bytes;
  d->window_cycles = MAX((uint64_t)llround(settings_double(s, SET_DRAM_WINDOW_NS) * cycles_per_ns), 1);
  d->max_rho = settings_double(s, SET_DRAM_MAX_UTILIZATION);
  /* GB/s are bytes per ns. */
  d->mc_line_cycles = line_bytes / settings_double(s, SET_DRAM_BANDWIDTH_GBPS) * cycles_per_ns;
  d->link_line_cycles = line_bytes / settings_double(s, SET_NUMA_LINK_GBPS) * cycles_per_ns;
  unsigned n = d->nodes;
  d->idle = g_new(uint32_t, (gsize)n * n);
  d->remote_extra = g_new(uint32_t, (gsize)n * n);
  for (unsigned c = 0; c < n; c++)
    for (unsigned h = 0; h < n; h++) {
      double hops = ((double)topology_distance(topo, c, h) - TOPOLOGY_LOCAL_DISTANCE) / TOPOLOGY_LOCAL_DISTANCE;
      d->idle[c * n + h] = ns_cycles(local_ns + (remote_ns - local_ns) * hops, cycles_per_ns);
    }
  for (unsigned c = 0; c < n; c++)
    for (unsigned h = 0; h < n; h++)
      d->remote_extra[c * n + h] = d->idle[c * n + h] - d->idle[c * n + c];
  d->mc = g_new0(DramQueue, n);
  d->port = g_new0(DramQueue, n);
  for (unsigned i = 0; i < n; i++) {
    d->mc[i].flows = g_array_new(FALSE, FALSE, sizeof(DramFlow));
    d->port[i].flows = g_array_new(FALSE, FALSE, sizeof(DramFlow));
  }
  return d;
}

void dram_free(Dram *d)
{
  if (!d)
    return;
  for (unsigned i = 0; d->mc && i < d->nodes; i++) {
    g_array_free(d->mc[i].flows, TRUE);
    g_array_free(d->port[i].flows, TRUE);
  }
  g_free(d->mc);
  g_free(d->port);
  g_free(d->idle);
  g_free(d->remote_extra);
  g_free(d);
}

unsigned dram_node_of(const Dram *d, uint64_t pa)
{
  uint64_t n = (pa >> 12) / d->pages_per_node;
  return n < d->nodes ? (unsigned)n : d->nodes - 1;
}

uint32_t dram_idle_cycles(const Dram *d, unsigned node, unsigned home)
{
  g_return_val_if_fail(node < d->nodes && home < d->nodes, 0);
  return d->idle[node * d->nodes + home];
}

/* ---- the windows ---------------------------------------------------------- */

/* Service cycles the flows of q put into [lo, hi); flows that end by hi
 * are dropped. */
static double flows_work(GArray *flows, double lo, double hi)
{
  double w = 0;
  for (guint i = 0; i < flows->len;) {
    DramFlow *f = &g_array_index(flows, DramFlow, i);
    double a = MAX(f->start, lo), b = MIN(f->end, hi);
    if (b > a)
      w += (b - a) * f->rate;
    if (f->end <= hi)
      g_array_remove_index_fast(flows, i);
    else
      i++;
  }
  return w;
}

/* Close the windows before b, oldest first, and set the wait of window b. */
static void queue_advance(const Dram *d, DramQueue *q, uint64_t b, double line_cycles)
{
  double win = (double)d->window_cycles;
  double rho = 0; /* utilisation of the last window closed */
  uint64_t k = q->bucket;
  double work = q->work;
  while (k < b) {
    if (q->flows->len == 0) {
      /* Nothing booked past window k: it closes with `work`, the windows
       * after it are idle and drain the backlog a window's worth each. */
      rho = work / win;
      q->backlog = MAX(0.0, q->backlog + work - win);
      uint64_t idle = b - k - 1;
      if (idle) {
        rho = 0;
        q->backlog = (double)idle * win >= q->backlog ? 0.0 : q->backlog - (double)idle * win;
      }
      break;
    }
    work += flows_work(q->flows, (double)k * win, (double)(k + 1) * win);
    rho = work / win;
    q->backlog = MAX(0.0, q->backlog + work - win);
    work = 0;
    k++;
  }
  q->bucket = b;
  q->work = 0;
  rho = MIN(rho, d->max_rho);
  q->wait = line_cycles * rho / (2 * (1 - rho)) + q->backlog;
}

/* One line through q at window b: book its service, return its wait. */
static inline double queue_line(const Dram *d, DramQueue *q, uint64_t b, double line_cycles)
{
  if (G_UNLIKELY(b > q->bucket))
    queue_advance(d, q, b, line_cycles);
  q->work += line_cycles; /* a late line counts in the open window */
  return q->wait;
}

/* A bulk flow of `lines` through q from `now` over `span` cycles; returns
 * the wait of its first line. */
static double queue_flow(const Dram *d, DramQueue *q, uint64_t now, uint64_t span, double lines, double line_cycles)
{
  uint64_t b = now / d->window_cycles;
  if (b > q->bucket)
    queue_advance(d, q, b, line_cycles);
  double wait = q->wait;
  double start = (double)MAX(now, q->bucket * d->window_cycles);
  double work = lines * line_cycles;
  if (span == 0 || work == 0) {
    q->work += work;
    return wait;
  }
  DramFlow f = { start, start + (double)span, work / (double)span };
  /* The part in the open window counts there now (the window closes with
   * q->work); the flow carries the rest. */
  double open_end = (double)(q->bucket + 1) * d->window_cycles;
  if (f.end <= open_end) {
    q->work += work;
  } else {
    q->work += (open_end - f.start) * f.rate;
    f.start = open_end;
    g_array_append_val(q->flows, f);
  }
  return wait;
}

static inline uint32_t round_cycles(double c)
{
  return c >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)(c + 0.5);
}

/* ---- requests ------------------------------------------------------------- */

uint32_t dram_access(Dram *d, unsigned node, uint64_t pa, uint64_t now, Counters *ctr)
{
  unsigned home = dram_node_of(d, pa);
  uint64_t b = now / d->window_cycles;
  double wait = queue_line(d, &d->mc[home], b, d->mc_line_cycles);
  unsigned idx = node * d->nodes + home;
  if (G_LIKELY(home == node)) {
    ctr->c[CTR_LOCAL_ACCESSES]++;
  } else {
    wait += queue_line(d, &d->port[node], b, d->link_line_cycles);
    wait += queue_line(d, &d->port[home], b, d->link_line_cycles);
    ctr->c[CTR_REMOTE_ACCESSES]++;
    ctr->c[CTR_REMOTE_CYCLES] += d->remote_extra[idx];
  }
  uint32_t q = round_cycles(wait);
  ctr->c[CTR_DRAM_QUEUE_CYCLES] += q;
  return d->idle[idx] + q;
}

void dram_prefetch(Dram *d, unsigned node, uint64_t pa, uint64_t now)
{
  unsigned home = dram_node_of(d, pa);
  uint64_t b = now / d->window_cycles;
  queue_line(d, &d->mc[home], b, d->mc_line_cycles);
  if (home != node) {
    queue_line(d, &d->port[node], b, d->link_line_cycles);
    queue_line(d, &d->port[home], b, d->link_line_cycles);
  }
}

uint64_t dram_bulk_span(Dram *d, unsigned node, unsigned home, uint64_t bytes, uint64_t now, uint64_t span_cycles,
                        Counters *ctr)
{
  g_return_val_if_fail(node < d->nodes && home < d->nodes, 0);
  double lines = ceil((double)bytes / d->line_bytes);
  double wait = queue_flow(d, &d->mc[home], now, span_cycles, lines, d->mc_line_cycles);
  if (home != node) {
    wait += queue_flow(d, &d->port[node], now, span_cycles, lines, d->link_line_cycles);
    wait += queue_flow(d, &d->port[home], now, span_cycles, lines, d->link_line_cycles);
  }
  uint64_t q = round_cycles(wait);
  if (ctr)
    ctr->c[CTR_DRAM_QUEUE_CYCLES] += q;
  return q;
}

uint64_t dram_bulk(Dram *d, unsigned node, unsigned home, uint64_t bytes, uint64_t now, Counters *ctr)
{
  g_return_val_if_fail(node < d->nodes && home < d->nodes, 0);
  /* At the controller's full bandwidth: the shortest the transfer can take. */
  double lines = ceil((double)bytes / d->line_bytes);
  uint64_t span = (uint64_t)ceil(lines * d->mc_line_cycles);
  return dram_bulk_span(d, node, home, bytes, now, span, ctr);
}
