/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_dram.c - DRAM and NUMA timing (sim/dram.c) on a hand-made machine
 * whose numbers are worked out by hand:
 *
 *   cpu.freq_mhz 1000: 1 cycle per ns.
 *   dram.latency_ns 80, dram.remote_latency_ns 140: 80 cycles local, 140 at
 *   distance 20, 80 + 60 * (d - 10) / 10 at distance d.
 *   64-byte lines at 6.4 GB/s (controllers and ports): 10 cycles a line.
 *   dram.window_ns 100: windows of 100 cycles, 10 lines of capacity.
 *
 * M/D/1 waits with s = 10: rho 0.1 -> 0.56, 0.2 -> 1.25, 0.4 -> 3.33,
 * 0.5 -> 5, 0.7 -> 11.67, 0.8 -> 20, 0.9 -> 45, capped at 0.95 -> 95;
 * rounded to whole cycles (x + 0.5, truncated).
 */
#include "config.h"
#include "dram.h"
#include "memsys.h"
#include "machine_fixture.h"

#include <string.h>

enum { W = 100, S = 10, LOCAL = 80, MB_PAGES = 256 };

#define NODE_PA(n, off) ((uint64_t)(n) * MB_PAGES * 4096 + (off))

static const char *const base[] = {
  "cpu.freq_mhz=1000",        "dram.latency_ns=80",     "dram.remote_latency_ns=140",
  "dram.bandwidth_gbps=6.4",  "numa.link_gbps=6.4",     "dram.window_ns=100",
  "dram.max_utilization=0.95", "cache.line_bytes=64",   NULL,
};

typedef struct {
  Settings *s;
  Topology *topo;
  Dram *d;
  Counters ctr;
} Fix;

static void fix_open(Fix *f, const char *const *extra)
{
  memset(f, 0, sizeof *f);
  g_autoptr(GError) err = NULL;
  f->s = settings_new();
  fixture_settings_apply(f->s, base);
  fixture_settings_apply(f->s, extra);
  f->topo = topology_new(f->s, &err);
  ck_assert_no_error(err);
  /* 1 MiB a node keeps the addresses short. */
  f->d = dram_new(f->s, f->topo, MB_PAGES, 64, 1.0, &err);
  ck_assert_no_error(err);
}

static void fix_close(Fix *f)
{
  dram_free(f->d);
  topology_free(f->topo);
  settings_free(f->s);
}

static const char *const two_nodes[] = { "machine.nodes=2", NULL };

/* n lines from a CPU of `node` to pa's node during window k. */
static void feed(Fix *f, unsigned node, uint64_t pa, uint64_t k, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    dram_access(f->d, node, pa, k * W + i, &f->ctr);
}

/* The queueing part of one line at the start of window k. */
static uint32_t probe(Fix *f, unsigned node, uint64_t pa, uint64_t k)
{
  unsigned home = dram_node_of(f->d, pa);
  return dram_access(f->d, node, pa, k * W, &f->ctr) - dram_idle_cycles(f->d, node, home);
}

START_TEST(test_latency_by_distance)
{
  static const char *const three[] = { "machine.nodes=3", "numa.distances=10,20,30;20,10,25;30,25,10", NULL };
  Fix f;
  fix_open(&f, three);
  ck_assert_uint_eq(dram_idle_cycles(f.d, 0, 0), LOCAL);
  ck_assert_uint_eq(dram_idle_cycles(f.d, 2, 2), LOCAL);
  ck_assert_uint_eq(dram_idle_cycles(f.d, 0, 1), 140);
  ck_assert_uint_eq(dram_idle_cycles(f.d, 0, 2), 200);
  ck_assert_uint_eq(dram_idle_cycles(f.d, 1, 2), 170);
  ck_assert_uint_eq(dram_idle_cycles(f.d, 2, 1), 170);
  /* dram_access on an idle machine: the idle latency, counted by kind. */
  ck_assert_uint_eq(dram_access(f.d, 0, NODE_PA(0, 0x40), 0, &f.ctr), LOCAL);
  ck_assert_uint_eq(dram_access(f.d, 0, NODE_PA(2, 0x40), 10 * W, &f.ctr), 200);
  ck_assert_uint_eq(dram_access(f.d, 1, NODE_PA(2, 0x80), 20 * W, &f.ctr), 170);
  ck_assert_uint_eq(f.ctr.c[CTR_LOCAL_ACCESSES], 1);
  ck_assert_uint_eq(f.ctr.c[CTR_REMOTE_ACCESSES], 2);
  ck_assert_uint_eq(f.ctr.c[CTR_REMOTE_CYCLES], (200 - LOCAL) + (170 - LOCAL));
  ck_assert_uint_eq(f.ctr.c[CTR_DRAM_QUEUE_CYCLES], 0);
  fix_close(&f);

  /* Fractional nanoseconds round up to whole cycles: 33.3 ns at 3 GHz. */
  static const char *const frac[] = { "machine.nodes=2", "numa.remote_distance=21", NULL };
  fix_open(&f, frac);
  g_autoptr(GError) err = NULL;
  ck_assert(settings_set_pair(f.s, "dram.latency_ns=33.3", "test", &err));
  Dram *d = dram_new(f.s, f.topo, MB_PAGES, 64, 3.0, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(dram_idle_cycles(d, 0, 0), 100);                 /* 99.9 */
  ck_assert_uint_eq(dram_idle_cycles(d, 1, 0), 453);                 /* (33.3 + 106.7 * 1.1) * 3 = 452.01 */
  dram_free(d);
  fix_close(&f);
}
END_TEST

START_TEST(test_node_of)
{
  static const char *const four[] = { "machine.nodes=4", NULL };
  Fix f;
  fix_open(&f, four);
  ck_assert_uint_eq(dram_node_of(f.d, 0), 0);
  ck_assert_uint_eq(dram_node_of(f.d, NODE_PA(1, 0) - 1), 0);
  ck_assert_uint_eq(dram_node_of(f.d, NODE_PA(1, 0)), 1);
  ck_assert_uint_eq(dram_node_of(f.d, NODE_PA(3, 0xfff)), 3);
  ck_assert_uint_eq(dram_node_of(f.d, NODE_PA(9, 0)), 3); /* past the end: the last node */
  fix_close(&f);
}
END_TEST

START_TEST(test_bad_settings)
{
  static const char *const slow[] = { "machine.nodes=2", "dram.remote_latency_ns=50", NULL };
  g_autoptr(Settings) s = settings_new();
  for (const char *const *p = base; *p; p++)
    ck_assert(settings_set_pair(s, *p, "test", NULL));
  for (const char *const *p = slow; *p; p++)
    ck_assert(settings_set_pair(s, *p, "test", NULL));
  g_autoptr(Topology) t = topology_new(s, NULL);
  g_autoptr(GError) err = NULL;
  ck_assert_ptr_null(dram_new(s, t, MB_PAGES, 64, 1.0, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "dram.remote_latency_ns"));
  /* One node: there is no remote memory to be slower. */
  ck_assert(settings_set_pair(s, "machine.nodes=1", "test", NULL));
  g_autoptr(Topology) t1 = topology_new(s, NULL);
  g_clear_error(&err);
  Dram *d = dram_new(s, t1, MB_PAGES, 64, 1.0, &err);
  ck_assert_no_error(err);
  dram_free(d);
}
END_TEST

START_TEST(test_idle_pays_nothing)
{
  Fix f;
  fix_open(&f, two_nodes);
  /* A line every other window: the window before each is empty. */
  for (uint64_t k = 0; k < 200; k += 2) {
    ck_assert_uint_eq(dram_access(f.d, 0, NODE_PA(0, k * 64), k * W + 7, &f.ctr), LOCAL);
    ck_assert_uint_eq(dram_access(f.d, 1, NODE_PA(0, k * 64), k * W + 9, &f.ctr), 140);
  }
  ck_assert_uint_eq(f.ctr.c[CTR_DRAM_QUEUE_CYCLES], 0);
  ck_assert_uint_eq(f.ctr.c[CTR_LOCAL_ACCESSES], 100);
  ck_assert_uint_eq(f.ctr.c[CTR_REMOTE_ACCESSES], 100);
  fix_close(&f);

  /* The default bandwidth (60 GB/s, 1.07 ns a line) at a line per 100 ns,
   * a single thread's pointer chase: nothing either. */
  static const char *const fast[] = { "dram.bandwidth_gbps=60", NULL };
  fix_open(&f, fast);
  for (uint64_t i = 0; i < 1000; i++)
    ck_assert_uint_eq(dram_access(f.d, 0, NODE_PA(0, 0), i * W, &f.ctr), LOCAL);
  fix_close(&f);
}
END_TEST

START_TEST(test_queue_grows_with_load)
{
  /* n lines in window 0, the wait at the start of window 1. */
  static const unsigned lines[] = { 2, 5, 8, 10, 15 };
  static const uint32_t wait[] = { 1, 5, 20, 95, 95 + 50 };
  uint32_t last = 0;
  for (unsigned i = 0; i < G_N_ELEMENTS(lines); i++) {
    Fix f;
    fix_open(&f, NULL);
    feed(&f, 0, NODE_PA(0, 0), 0, lines[i]);
    ck_assert_uint_eq(f.ctr.c[CTR_DRAM_QUEUE_CYCLES], 0); /* window 0 follows nothing */
    uint32_t q = probe(&f, 0, NODE_PA(0, 0), 1);
    ck_assert_uint_eq(q, wait[i]);
    ck_assert_uint_eq(f.ctr.c[CTR_DRAM_QUEUE_CYCLES], wait[i]);
    ck_assert_uint_gt(q, last);
    last = q;
    /* The rest of window 1 waits as long; an idle window clears it. */
    ck_assert_uint_eq(probe(&f, 0, NODE_PA(0, 0), 1), wait[i]);
    fix_close(&f);
  }
}
END_TEST

START_TEST(test_backlog_over_capacity)
{
  Fix f;
  fix_open(&f, NULL);
  uint64_t pa = NODE_PA(0, 0);
  /* Twice the capacity, window after window: the backlog grows by a
   * window's worth each time, on top of the capped M/D/1 wait of 95. */
  feed(&f, 0, pa, 0, 20);                  /* backlog after w0: 100 */
  ck_assert_uint_eq(probe(&f, 0, pa, 1), 95 + 100);
  feed(&f, 0, pa, 1, 19);                  /* w1: 20 lines, backlog 200 */
  ck_assert_uint_eq(probe(&f, 0, pa, 2), 95 + 200);
  feed(&f, 0, pa, 2, 19);                  /* w2: 20 lines, backlog 300 */
  ck_assert_uint_eq(probe(&f, 0, pa, 3), 95 + 300);
  /* Then one line a window: rho 0.1 (0.56 cycles) and the backlog drains
   * by 90 a window. */
  ck_assert_uint_eq(probe(&f, 0, pa, 4), 1 + 210);
  ck_assert_uint_eq(probe(&f, 0, pa, 5), 1 + 120);
  ck_assert_uint_eq(probe(&f, 0, pa, 6), 1 + 30);
  ck_assert_uint_eq(probe(&f, 0, pa, 7), 1);
  /* Idle windows drain a whole window each: after 100 cycles of backlog
   * and two idle windows, nothing is left. */
  feed(&f, 0, pa, 10, 20);
  ck_assert_uint_eq(probe(&f, 0, pa, 13), 0);
  feed(&f, 0, pa, 20, 30);                 /* backlog 200 */
  ck_assert_uint_eq(probe(&f, 0, pa, 22), 100); /* w21 idle: 100 left, rho 0 */
  fix_close(&f);
}
END_TEST

START_TEST(test_remote_loads_ports)
{
  Fix f;
  fix_open(&f, two_nodes);
  /* 5 lines from node 0 to node 1's memory: controller 1, node 1's
   * outgoing port and node 0's incoming one at rho 0.5 (5 cycles each) in
   * the next window. */
  feed(&f, 0, NODE_PA(1, 0), 0, 5);
  ck_assert_uint_eq(f.ctr.c[CTR_REMOTE_ACCESSES], 5);
  ck_assert_uint_eq(probe(&f, 0, NODE_PA(1, 0), 1), 5 + 5 + 5);
  ck_assert_uint_eq(probe(&f, 0, NODE_PA(0, 0), 1), 0); /* node 0's controller is idle */
  ck_assert_uint_eq(probe(&f, 1, NODE_PA(1, 0), 1), 5); /* local to node 1: its controller */
  ck_assert_uint_eq(probe(&f, 1, NODE_PA(0, 0), 1), 0); /* the other direction */
  fix_close(&f);

  /* A slow link: the same remote traffic waits at the ports, not locally. */
  static const char *const slow_link[] = { "machine.nodes=2", "numa.link_gbps=3.2", NULL };
  fix_open(&f, slow_link);
  feed(&f, 0, NODE_PA(1, 0), 0, 4);  /* ports at rho 0.8 (s = 20): 40 each; controller rho 0.4 */
  ck_assert_uint_eq(probe(&f, 0, NODE_PA(1, 0), 1), 3 + 40 + 40); /* 10 * 0.4 / 1.2 = 3.33 */
  fix_close(&f);
}
END_TEST

START_TEST(test_requests_count_by_their_own_time)
{
  Fix f;
  fix_open(&f, NULL);
  uint64_t pa = NODE_PA(0, 0);
  /* A CPU ahead loads window 10 to rho 0.6. */
  feed(&f, 0, pa, 10, 6);
  /* A CPU behind loads window 0 to rho 0.7: its own window 1 waits for
   * that, not for what the CPU ahead did. */
  feed(&f, 0, pa, 0, 7);
  ck_assert_uint_eq(probe(&f, 0, pa, 1), 12);
  /* Catching up, it meets window 10 as it was opened (nothing before it
   * was known then), and window 11 sees everybody's load of window 10. */
  ck_assert_uint_eq(probe(&f, 0, pa, 10), 0);
  ck_assert_uint_eq(probe(&f, 0, pa, 11), 12); /* 7 lines */
  /* Lines late for window 1 still count there: window 2, opened after,
   * sees rho 0.5. */
  for (unsigned i = 0; i < 4; i++)
    ck_assert_uint_eq(dram_access(f.d, 0, pa, W + 50 + i, &f.ctr), LOCAL + 12);
  ck_assert_uint_eq(probe(&f, 0, pa, 2), 5);
  fix_close(&f);

  /* More than DRAM_WINDOWS windows apart: the old window is forgotten. */
  fix_open(&f, NULL);
  feed(&f, 0, pa, 0, 8);
  feed(&f, 0, pa, 256, 1); /* reuses window 0's slot */
  ck_assert_uint_eq(probe(&f, 0, pa, 1), 0);
  fix_close(&f);
}
END_TEST

START_TEST(test_bulk)
{
  Fix f;
  fix_open(&f, two_nodes);
  uint64_t pa = NODE_PA(0, 0);
  /* Idle machine: no extra cycles. */
  ck_assert_uint_eq(dram_bulk(f.d, 0, 0, 4096, 0, &f.ctr), 0);
  ck_assert_uint_eq(dram_bulk_span(f.d, 0, 1, 2 << 20, 0, 1000000, &f.ctr), 0);
  fix_close(&f);

  /* 20 lines over 500 cycles: 40% of the capacity of windows 0-4.
   * Probes add a line to each window they start (rho 0.5 in windows 1-4,
   * 0.1 after). */
  fix_open(&f, two_nodes);
  ck_assert_uint_eq(dram_bulk_span(f.d, 0, 0, 20 * 64, 0, 5 * W, &f.ctr), 0);
  static const uint32_t wait[] = { 3, 5, 5, 5, 5, 1, 1 };
  for (unsigned k = 1; k <= G_N_ELEMENTS(wait); k++)
    ck_assert_uint_eq(probe(&f, 0, pa, k), wait[k - 1]);
  /* Another bulk in a loaded window waits like its first line. */
  feed(&f, 0, pa, 20, 8);
  ck_assert_uint_eq(dram_bulk(f.d, 0, 0, 640, 21 * W, &f.ctr), 20);
  /* dram_bulk runs at the controller's full bandwidth: 10 lines fill
   * window 21, so window 22 waits the capped 95. */
  ck_assert_uint_eq(probe(&f, 0, pa, 22), 95);
  fix_close(&f);

  /* A remote bulk (a write) loads the home controller, the requester's
   * outgoing port and the home's incoming one, not the requester's
   * controller... */
  fix_open(&f, two_nodes);
  dram_bulk_span(f.d, 0, 1, 5 * 64, 0, W, NULL);
  ck_assert_uint_eq(probe(&f, 0, NODE_PA(0, 0), 1), 0);
  ck_assert_uint_eq(probe(&f, 1, NODE_PA(1, 0), 1), 5);
  fix_close(&f);
  /* ...and a line from node 1 to node 0 crosses the same two ports. */
  fix_open(&f, two_nodes);
  dram_bulk_span(f.d, 1, 0, 5 * 64, 0, W, NULL);
  ck_assert_uint_eq(probe(&f, 0, NODE_PA(1, 0), 1), 5 + 5);
  fix_close(&f);

  /* Transfers that together need more than the controller serves: 30
   * lines (300 cycles of service) over 500 cycles each, started together.
   * The first two fit; each one after waits for the excess, as served in
   * the order they started. */
  fix_open(&f, two_nodes);
  ck_assert_uint_eq(dram_bulk_span(f.d, 0, 0, 30 * 64, 1000, 5 * W, NULL), 0);
  ck_assert_uint_eq(dram_bulk_span(f.d, 0, 0, 30 * 64, 1000, 5 * W, NULL), 100);
  ck_assert_uint_eq(dram_bulk_span(f.d, 0, 0, 30 * 64, 1000, 5 * W, NULL), 400);
  /* A remote one: its path's most loaded queue (here the controller)
   * sets the excess. */
  ck_assert_uint_eq(dram_bulk_span(f.d, 1, 0, 30 * 64, 1000, 5 * W, &f.ctr), 700);
  ck_assert_uint_eq(f.ctr.c[CTR_DRAM_QUEUE_CYCLES], 700);
  fix_close(&f);

  /* A bulk longer than any window list: a 1G clear over 50 ms. */
  fix_open(&f, NULL);
  dram_bulk_span(f.d, 0, 0, UINT64_C(1) << 30, 0, 50000000, NULL);
  /* 16M lines * 10 cycles / 50M cycles = 3.355 per cycle: rho capped, and
   * 335.5 - 100 = 235.5 of backlog a window */
  ck_assert_uint_eq(probe(&f, 0, pa, 1), 331);
  ck_assert_uint_ge(probe(&f, 0, pa, 1001), 95 + 1001 * 235);
  fix_close(&f);
}
END_TEST

/* A deterministic mixed load: CPUs of 4 nodes, times slightly out of order,
 * lines, prefetches and bulks.  Returns a digest of every answer. */
static uint64_t replay(Counters *ctr)
{
  static const char *const four[] = { "machine.nodes=4", "numa.distances=10,20,30,30;20,10,30,30;30,30,10,20;30,30,20,10",
                                      NULL };
  Fix f;
  fix_open(&f, four);
  GRand *r = g_rand_new_with_seed(7);
  uint64_t digest = 0, now = 0;
  for (unsigned i = 0; i < 20000; i++) {
    now += (uint64_t)g_rand_int_range(r, 0, 6);
    uint64_t late = (uint64_t)g_rand_int_range(r, 0, 150); /* up to 1.5 windows; drawn once: MIN reads it twice */
    uint64_t t = now - MIN(now, late);
    unsigned node = (unsigned)g_rand_int_range(r, 0, 4);
    uint64_t pa = (uint64_t)g_rand_int_range(r, 0, 4 * MB_PAGES * 64) * 64;
    unsigned what = (unsigned)g_rand_int_range(r, 0, 100);
    if (what < 2)
      digest = digest * 31 + dram_bulk(f.d, node, dram_node_of(f.d, pa), 4096, t, &f.ctr);
    else if (what < 10)
      dram_prefetch(f.d, node, pa, t);
    else
      digest = digest * 31 + dram_access(f.d, node, pa, t, &f.ctr);
  }
  g_rand_free(r);
  *ctr = f.ctr;
  fix_close(&f);
  return digest;
}

START_TEST(test_deterministic)
{
  Counters a, b;
  uint64_t da = replay(&a), db = replay(&b);
  ck_assert_uint_eq(da, db);
  ck_assert_int_eq(memcmp(&a, &b, sizeof a), 0);
  /* The load was heavy enough to queue, and both kinds were seen. */
  ck_assert_uint_gt(a.c[CTR_DRAM_QUEUE_CYCLES], 0);
  ck_assert_uint_gt(a.c[CTR_LOCAL_ACCESSES], 0);
  ck_assert_uint_gt(a.c[CTR_REMOTE_ACCESSES], a.c[CTR_LOCAL_ACCESSES]); /* 3 of 4 nodes are remote */
}
END_TEST

START_TEST(test_memsys_attached)
{
  static const char *const sets[] = { "machine.nodes=2", "cache.llc_size=16K", "cache.llc_ways=4",
                                      "cache.llc_hit_cycles=40", "cache.l2_size=4K", "cache.l2_ways=4",
                                      "cache.prefetcher=none", NULL };
  Fix f;
  fix_open(&f, sets);
  g_autoptr(GError) err = NULL;
  g_autoptr(Cache) llc = memsys_llc_new(f.s, &err);
  ck_assert_no_error(err);
  Counters ctr = { 0 };
  g_autoptr(MemHier) h = memsys_new(f.s, llc, &ctr, &err);
  ck_assert_no_error(err);
  /* Unattached: the fixed local latency; attached and idle: the same. */
  ck_assert_uint_eq(memsys_access(h, NODE_PA(1, 0), MREQ_LOAD, NULL), 40 + LOCAL);
  ck_assert_uint_eq(ctr.c[CTR_LOCAL_ACCESSES] + ctr.c[CTR_REMOTE_ACCESSES], 0);
  uint64_t clock = 0;
  memsys_attach_dram(h, f.d, 0, &clock);
  ck_assert_uint_eq(memsys_level_cycles(h, MEM_DRAM), 40 + dram_idle_cycles(f.d, 0, 0));
  MemLevel lvl;
  ck_assert_uint_eq(memsys_access(h, NODE_PA(0, 0x1000), MREQ_LOAD, &lvl), 40 + LOCAL);
  ck_assert_int_eq(lvl, MEM_DRAM);
  ck_assert_uint_eq(memsys_access(h, NODE_PA(1, 0x1000), MREQ_WALK, &lvl), 40 + 140);
  ck_assert_uint_eq(ctr.c[CTR_LOCAL_ACCESSES], 1);
  ck_assert_uint_eq(ctr.c[CTR_REMOTE_ACCESSES], 1);
  ck_assert_uint_eq(ctr.c[CTR_REMOTE_CYCLES], 60);
  /* A cache hit does not reach DRAM. */
  ck_assert_uint_lt(memsys_access(h, NODE_PA(1, 0x1000), MREQ_STORE, &lvl), 40);
  ck_assert_uint_eq(ctr.c[CTR_REMOTE_ACCESSES], 1);
  /* The clock is read at each reference: 9 misses in window 0 load the
   * controller (rho 0.9), a miss in window 1 waits 45. */
  for (unsigned i = 0; i < 8; i++)
    memsys_access(h, NODE_PA(0, 0x10000 + i * 64), MREQ_LOAD, NULL);
  clock = W;
  ck_assert_uint_eq(memsys_access(h, NODE_PA(0, 0x20000), MREQ_LOAD, NULL), 40 + LOCAL + 45);
  ck_assert_uint_eq(ctr.c[CTR_DRAM_QUEUE_CYCLES], 45);
  fix_close(&f);
}
END_TEST

START_TEST(test_prefetch_loads_queues)
{
  Fix f;
  fix_open(&f, two_nodes);
  for (unsigned i = 0; i < 5; i++)
    dram_prefetch(f.d, 0, NODE_PA(1, i * 64), i);
  ck_assert_uint_eq(f.ctr.c[CTR_REMOTE_ACCESSES] + f.ctr.c[CTR_LOCAL_ACCESSES], 0); /* not counted */
  ck_assert_uint_eq(probe(&f, 0, NODE_PA(1, 0), 1), 15);
  fix_close(&f);
}
END_TEST

/* dram_prefetch_open() and dram_access_open() are dram_prefetch() and
 * dram_access() for the lines they take: the same mixed load on one node,
 * through each, gives the same answers and counts; they take most of the
 * lines (in the window of the last request) and none on a machine of two
 * nodes. */
static uint64_t replay_one_node(gboolean open, unsigned *taken)
{
  Fix f;
  fix_open(&f, NULL);
  GRand *r = g_rand_new_with_seed(11);
  uint64_t digest = 0, now = 0;
  *taken = 0;
  for (unsigned i = 0; i < 20000; i++) {
    now += (uint64_t)g_rand_int_range(r, 0, 4);
    uint64_t late = (uint64_t)g_rand_int_range(r, 0, 150); /* drawn once: MIN reads it twice */
    uint64_t t = now - MIN(now, late);
    uint64_t pa = (uint64_t)g_rand_int_range(r, 0, MB_PAGES * 64) * 64;
    if (g_rand_int_range(r, 0, 100) < 60) {
      if (!open)
        dram_prefetch(f.d, 0, pa, t);
      else if (dram_prefetch_open(f.d, t))
        (*taken)++;
      else
        dram_prefetch(f.d, 0, pa, t);
    } else {
      uint32_t cycles;
      if (open && dram_access_open(f.d, t, &f.ctr, &cycles))
        (*taken)++;
      else
        cycles = dram_access(f.d, 0, pa, t, &f.ctr);
      digest = digest * 31 + cycles;
    }
  }
  g_rand_free(r);
  for (unsigned c = 0; c < N_COUNTERS; c++)
    digest = digest * 31 + f.ctr.c[c];
  fix_close(&f);
  return digest;
}

START_TEST(test_open_window_paths)
{
  unsigned none, taken;
  ck_assert_uint_eq(replay_one_node(FALSE, &none), replay_one_node(TRUE, &taken));
  ck_assert_uint_gt(taken, 10000);  /* of 20000 lines */
  Fix f;
  fix_open(&f, two_nodes);
  dram_access(f.d, 0, NODE_PA(0, 0), 0, &f.ctr);  /* window 0 open */
  uint32_t cycles;
  ck_assert(!dram_prefetch_open(f.d, 1));
  ck_assert(!dram_access_open(f.d, 1, &f.ctr, &cycles));
  fix_close(&f);
}
END_TEST

/* DramHot.open0 is node 0's open window exactly when the slot of the last
 * request's window holds that window (what the open paths tested before
 * it was cached): NULL on a machine of more nodes. */
static void assert_open0(Dram *d, unsigned step)
{
  const DramHot *hot = (const DramHot *)d;  /* the first member */
  DramWindow *want = NULL;
  if (hot->mc0 != NULL) {
    DramWindow *w = &hot->mc0[hot->win_b % DRAM_WINDOWS];
    want = w->tag == hot->win_b + 1 ? w : NULL;
  }
  ck_assert_msg(hot->open0 == want, "step %u: open0 %p, the slot of window %" G_GUINT64_FORMAT " %p", step,
                (void *)hot->open0, hot->win_b, (void *)want);
}

/* The open paths against the full ones on twin Drams, request by request,
 * under what moves windows and tags: clocks that skew back within a window
 * and past the whole window list, jumps far ahead (the slots wrap), bulk
 * flows of every span that open windows of their own (at times other than
 * the last request's), and on two nodes remote lines and flows in both
 * directions.  After every step the cached open window is checked. */
static void stress_open0(const char *const *extra, gboolean one_node)
{
  Fix a, b;
  fix_open(&a, extra);
  fix_open(&b, extra);
  GRand *r = g_rand_new_with_seed(23);
  uint64_t now = 0;
  unsigned taken = 0, nodes = one_node ? 1 : 2;
  assert_open0(a.d, 0);
  for (unsigned i = 0; i < 40000; i++) {
    unsigned what = (unsigned)g_rand_int_range(r, 0, 1000);
    if (what < 5)
      now += (uint64_t)g_rand_int_range(r, 1, 3 * DRAM_WINDOWS) * W; /* far ahead: slots reused */
    else
      now += (uint64_t)g_rand_int_range(r, 0, 5);
    uint64_t t = now;
    unsigned skew = (unsigned)g_rand_int_range(r, 0, 100);
    uint64_t late = 0; /* drawn once: MIN reads its arguments twice */
    if (skew < 10)
      late = (uint64_t)g_rand_int_range(r, 0, 2 * W);
    else if (skew < 12)
      late = (uint64_t)g_rand_int_range(r, 0, 2 * DRAM_WINDOWS) * W; /* behind the list */
    t -= MIN(now, late);
    unsigned node = (unsigned)g_rand_int_range(r, 0, (gint32)nodes);
    unsigned home = (unsigned)g_rand_int_range(r, 0, (gint32)nodes);
    uint64_t pa = NODE_PA(home, (uint64_t)g_rand_int_range(r, 0, MB_PAGES * 64) * 64);
    what = (unsigned)g_rand_int_range(r, 0, 100);
    if (what < 3) {
      uint64_t bytes = (uint64_t)g_rand_int_range(r, 1, 64) * 4096;
      uint64_t span = g_rand_boolean(r) ? (uint64_t)g_rand_int_range(r, 0, 4 * W)
                                        : (uint64_t)g_rand_int_range(r, 0, 2 * DRAM_WINDOWS) * W;
      uint64_t qa = dram_bulk_span(a.d, node, home, bytes, t, span, &a.ctr);
      loop_assert_uint_eq(qa, dram_bulk_span(b.d, node, home, bytes, t, span, &b.ctr));
    } else if (what < 5) {
      uint64_t qa = dram_bulk(a.d, node, home, 8192, t, &a.ctr);
      loop_assert_uint_eq(qa, dram_bulk(b.d, node, home, 8192, t, &b.ctr));
    } else if (what < 50) {
      /* The caller's node is 0 when an open path is taken (memsys's). */
      if (node == 0 && dram_prefetch_open(a.d, t))
        taken++;
      else
        dram_prefetch(a.d, node, pa, t);
      dram_prefetch(b.d, node, pa, t);
    } else {
      uint32_t ca;
      if (node == 0 && home == 0 && dram_access_open(a.d, t, &a.ctr, &ca))
        taken++;
      else
        ca = dram_access(a.d, node, pa, t, &a.ctr);
      loop_assert_msg(ca == dram_access(b.d, node, pa, t, &b.ctr), "step %u", i);
    }
    assert_open0(a.d, i);
  }
  loop_assert_mem_eq(a.ctr.c, b.ctr.c, sizeof a.ctr.c);
  ck_assert_uint_gt(a.ctr.c[CTR_DRAM_QUEUE_CYCLES], 0);
  if (one_node)
    ck_assert_uint_gt(taken, 10000);
  else
    loop_assert_uint_eq(taken, 0);
  g_rand_free(r);
  fix_close(&a);
  fix_close(&b);
}

START_TEST(test_open0_stress)
{
  stress_open0(NULL, TRUE);
  stress_open0(two_nodes, FALSE);
}
END_TEST

/* The blocks' bounds on the flows' ends only skip work: a Dram that visits
 * every flow answers the same, request by request, under many flows of
 * every length from four nodes at once (sums of three and more flows,
 * whose order counts), clocks out of order, and windows far enough apart
 * that flows expire and are replaced in the middle of the array.  After
 * every step each flow lies within its block's bounds, and both keep the
 * same flows in the same order (the order their work is summed in). */
START_TEST(test_flow_blocks)
{
  static const char *const four[] = { "machine.nodes=4", NULL };
  Fix a, b;
  fix_open(&a, four);
  fix_open(&b, four);
  dram_scan_every_flow(b.d);
  GRand *r = g_rand_new_with_seed(41);
  uint64_t now = 0;
  unsigned bulks = 0;
  for (unsigned i = 0; i < 60000; i++) {
    if (g_rand_int_range(r, 0, 2000) == 0)
      now += (uint64_t)g_rand_int_range(r, 1, 2 * DRAM_WINDOWS) * W;
    else
      now += (uint64_t)g_rand_int_range(r, 0, 8);
    uint64_t late = (uint64_t)g_rand_int_range(r, 0, 3 * W);  /* drawn once: MIN() reads it twice */
    uint64_t t = now - MIN(now, late);
    unsigned node = (unsigned)g_rand_int_range(r, 0, 4);
    unsigned home = (unsigned)g_rand_int_range(r, 0, 4);
    uint64_t pa = NODE_PA(home, (uint64_t)g_rand_int_range(r, 0, MB_PAGES * 64) * 64);
    unsigned what = (unsigned)g_rand_int_range(r, 0, 100);
    if (what < 30) {
      uint64_t bytes = (uint64_t)g_rand_int_range(r, 1, 16) * 4096;
      unsigned len = (unsigned)g_rand_int_range(r, 0, 100);
      uint64_t span = len < 60 ? (uint64_t)g_rand_int_range(r, 1, 3 * W)
                    : len < 95 ? (uint64_t)g_rand_int_range(r, 1, 40 * W)
                               : (uint64_t)g_rand_int_range(r, 1, 3 * DRAM_WINDOWS) * W;
      uint64_t qa = dram_bulk_span(a.d, node, home, bytes, t, span, &a.ctr);
      loop_assert_msg(qa == dram_bulk_span(b.d, node, home, bytes, t, span, &b.ctr), "step %u", i);
      bulks++;
    } else if (what < 40) {
      dram_prefetch(a.d, node, pa, t);
      dram_prefetch(b.d, node, pa, t);
    } else {
      uint32_t ca = dram_access(a.d, node, pa, t, &a.ctr);
      loop_assert_msg(ca == dram_access(b.d, node, pa, t, &b.ctr), "step %u", i);
    }
    loop_assert_msg(dram_flow_bounds_hold(a.d), "step %u", i);
    loop_assert_msg(dram_same_flows(a.d, b.d), "step %u", i);
  }
  loop_assert_mem_eq(a.ctr.c, b.ctr.c, sizeof a.ctr.c);
  ck_assert_uint_gt(a.ctr.c[CTR_DRAM_QUEUE_CYCLES], 0);
  ck_assert_uint_gt(bulks, 10000);
  g_rand_free(r);
  fix_close(&a);
  fix_close(&b);
}
END_TEST

/* The groups of blocks, as a run of page faults fills them: a clear a few
 * windows long every half window on one node, so that a queue remembers
 * some 500 flows (several groups) and every new window drops the oldest,
 * with now and then a long flow, a clear out of time order and a burst of
 * lines.  A twin visiting every flow answers the same, and the bounds of
 * blocks and groups hold, after every step. */
START_TEST(test_flow_groups)
{
  Fix a, b;
  fix_open(&a, NULL);
  fix_open(&b, NULL);
  dram_scan_every_flow(b.d);
  GRand *r = g_rand_new_with_seed(5);
  uint64_t now = 0;
  unsigned most = 0;
  for (unsigned i = 0; i < 30000; i++) {
    now += W / 2 + (uint64_t)g_rand_int_range(r, 0, W / 10);
    unsigned what = (unsigned)g_rand_int_range(r, 0, 100);
    uint64_t late = what < 5 ? (uint64_t)g_rand_int_range(r, 0, 20 * W) : 0; /* drawn once: MIN() reads it twice */
    uint64_t t = now - MIN(now, late);
    uint64_t span = what < 2 ? (uint64_t)g_rand_int_range(r, 1, 2 * DRAM_WINDOWS) * W
                             : (uint64_t)g_rand_int_range(r, W, 4 * W);
    uint64_t qa = dram_bulk_span(a.d, 0, 0, 4096, t, span, &a.ctr);
    loop_assert_msg(qa == dram_bulk_span(b.d, 0, 0, 4096, t, span, &b.ctr), "step %u", i);
    for (unsigned k = 0; what >= 90 && k < 8; k++) {
      uint64_t pa = NODE_PA(0, (uint64_t)g_rand_int_range(r, 0, MB_PAGES * 64) * 64);
      uint32_t ca = dram_access(a.d, 0, pa, now + k, &a.ctr);
      loop_assert_msg(ca == dram_access(b.d, 0, pa, now + k, &b.ctr), "step %u", i);
    }
    loop_assert_msg(dram_flow_bounds_hold(a.d), "step %u", i);
    loop_assert_msg(dram_same_flows(a.d, b.d), "step %u", i);
    most = MAX(most, dram_flows_held(a.d, 0));
  }
  loop_assert_mem_eq(a.ctr.c, b.ctr.c, sizeof a.ctr.c);
  ck_assert_uint_gt(most, 400);
  g_rand_free(r);
  fix_close(&a);
  fix_close(&b);
}
END_TEST

static Suite *dram_suite(void)
{
  Suite *s = suite_create("dram");
  TCase *tc = tcase_create("dram");
  tcase_add_test(tc, test_latency_by_distance);
  tcase_add_test(tc, test_node_of);
  tcase_add_test(tc, test_bad_settings);
  tcase_add_test(tc, test_idle_pays_nothing);
  tcase_add_test(tc, test_queue_grows_with_load);
  tcase_add_test(tc, test_backlog_over_capacity);
  tcase_add_test(tc, test_remote_loads_ports);
  tcase_add_test(tc, test_requests_count_by_their_own_time);
  tcase_add_test(tc, test_bulk);
  tcase_add_test(tc, test_deterministic);
  tcase_add_test(tc, test_memsys_attached);
  tcase_add_test(tc, test_prefetch_loads_queues);
  tcase_add_test(tc, test_open_window_paths);
  tcase_add_test(tc, test_open0_stress);
  suite_add_tcase(s, tc);
  tc = tcase_create("flows");
  tcase_add_test(tc, test_flow_blocks);
  tcase_add_test(tc, test_flow_groups);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(dram_suite)
