/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_jbb.c - a SPECjbb-like Java job: warehouse threads allocating young
 * objects and working on their warehouses' data in a shared old heap.
 *
 * Imitates the memory behaviour that the NUMA-balancing measurements with
 * 32-warehouse SPECjbb rest on: one JVM, one thread per warehouse, one heap.
 * The heap is one mapping at 0x7f0000000000: first the young region of each
 * thread (`young` bytes each, thread T's at (T-1) x young: its TLABs in
 * eden), then the old heap (`old` bytes), which holds a part shared by all
 * (the first `shared_part` of it: company-wide data) and then one part per
 * warehouse, the rest split evenly (its tables of items, stock, orders).
 * `size` is threads x young + old, and the description shows it.
 *
 * Setup is startup, as a JVM does it: the loader thread (thread 1, the main
 * thread that builds the warehouses) stores to every line of the whole old
 * heap while the warehouse threads do not run yet, so first touch puts all
 * of it on the loader's node; then the other threads start and each stores
 * to every line of its young region (its first pass of allocation),
 * interleaved one by one.  loader=L makes thread L the loader (threads 2..L
 * start before it loads); loader=0 has each warehouse thread first touch its
 * own part (thread 1 the shared part, before the others start), as a
 * NUMA-aware load would.  promote=P (bytes, 0 by default) instead has every
 * thread start first and the old heap first touched in pieces of P bytes,
 * each by a thread drawn at random (a splitmix64 draw keyed by the seed
 * and the piece), as the parallel collector's threads, one on every CPU,
 * promote survivors into promotion buffers they grab in no fixed order;
 * `loader` then plays no part.
 *
 * The measured phase: `accesses` is the total over all threads, handed out
 * one by one in turn (thread 1, 2, ..., threads, 1, ...).  Each access of a
 * thread goes to the old heap with probability `old_accesses`, else it is
 * the next store of its allocation: a bump pointer walks its young region
 * word by word and starts again at its bottom when it reaches the top, as a
 * young collection empties eden.  An old-heap access goes to a uniformly
 * random word of the shared part with probability `shared`, else of the
 * thread's own warehouse part; `rw` of the old-heap accesses (evenly spread
 * per thread, workload_mix) are stores.  The draws come from a splitmix64
 * stream per thread keyed by the seed.
 *
 * Left out: the collector's copying of survivors and its promotion into the
 * old heap (a collection is only the pointer's reset), card marking, the
 * JIT's code, object headers and sizes (every access is one word), and
 * transactions that touch another warehouse's data.
 */
#include "config.h"
#include "workload_impl.h"
#include "perm.h"

#include <math.h>

enum { OWN_THREADS, OWN_YOUNG, OWN_OLD, OWN_OLD_ACCESSES, OWN_SHARED, OWN_SHARED_PART, OWN_RW, OWN_LOADER, OWN_PROMOTE };

static const WorkloadParam jbb_params[] = {
  { "threads", WPARAM_COUNT, "16", NULL, 1, WORKLOAD_THREADS_MAX, "warehouse threads (warehouses), tids 1..threads" },
  { "young", WPARAM_SIZE, "2M", NULL, WORKLOAD_WORD_BYTES, WORKLOAD_VA_END - WORKLOAD_BASE_VA,
    "bytes of each thread's young region (its part of eden), a multiple of 8" },
  { "old", WPARAM_SIZE, "128M", NULL, WORKLOAD_WORD_BYTES, WORKLOAD_VA_END - WORKLOAD_BASE_VA,
    "bytes of the old heap, shared part and warehouse parts, a multiple of 8" },
  { "old_accesses", WPARAM_FRACTION, "0.5", NULL, 0, 0,
    "fraction of the accesses that go to the old heap; the rest allocate young objects" },
  { "shared", WPARAM_FRACTION, "0.1", NULL, 0, 0, "fraction of the old-heap accesses that go to the shared part" },
  { "shared_part", WPARAM_FRACTION, "0.125", NULL, 0, 0, "fraction of the old heap's bytes that is the shared part" },
  { "rw", WPARAM_FRACTION, "0.2", NULL, 0, 0, "fraction of the old-heap accesses that are stores" },
  { "loader", WPARAM_COUNT, "1", NULL, 0, WORKLOAD_THREADS_MAX,
    "thread that first touches the whole old heap at startup; 0: each its own part" },
  { "promote", WPARAM_SIZE, "0", NULL, 0, WORKLOAD_VA_END - WORKLOAD_BASE_VA,
    "0, or the old heap is first touched in pieces of this many bytes by the threads in turn (promotion by parallel GC)" },
  { NULL },
};

typedef struct {
  uint32_t n, loader;
  uint64_t promote;          /* bytes of a promotion piece, 0: loader placement */
  uint64_t promote_key;      /* keys the draw of each piece's thread */
  uint64_t young;            /* bytes per thread */
  uint64_t old_va, old;      /* the old heap */
  uint64_t shared_bytes;     /* its first part */
  uint64_t part_bytes;       /* each warehouse's part, after the shared one */
  uint64_t young_words, shared_words, part_words;
  uint64_t to_old, to_shared; /* thresholds in units of 2^-32 */
  /* Setup, in order: thread records 2..L, the loader's lines, thread
   * records L+1..n, the warehouses' own parts (loader=0), the young regions. */
  uint64_t load_lines, part_lines, young_lines;
  uint64_t k;                /* measured accesses made */
  uint64_t *rng;             /* per thread: splitmix64 state */
  uint64_t *pos;             /* per thread: the bump pointer, in words */
  WorkloadMix *mix;          /* per thread */
} JbbGen;

static uint64_t lines_of(uint64_t bytes)
{
  return bytes ? (bytes - WORKLOAD_WORD_BYTES) / WORKLOAD_SETUP_STRIDE_BYTES + 1 : 0;
}

/* A fraction as a threshold for the 32 bits of a draw: exact at 0 and 1. */
static uint64_t threshold(double frac)
{
  return (uint64_t)llround(frac * 4294967296.0);
}

static gpointer jbb_init(WorkloadConfig *cfg, GError **error)
{
  uint64_t n = cfg->own[OWN_THREADS].u, young = cfg->own[OWN_YOUNG].u, old = cfg->own[OWN_OLD].u;
  uint64_t limit = WORKLOAD_VA_END - WORKLOAD_BASE_VA;
  if (young % WORKLOAD_WORD_BYTES || young > limit / n)
    return workload_reject(cfg, "young", "a multiple of 8 bytes, with threads x young at most 1T", error);
  if (old % WORKLOAD_WORD_BYTES || old > limit - n * young)
    return workload_reject(cfg, "old", "a multiple of 8 bytes, with threads x young + old at most 1T", error);
  if (n * young + old < WORKLOAD_MIN_SIZE_BYTES)
    return workload_reject(cfg, "old", "an old heap that makes threads x young + old at least 4K", error);
  if (cfg->own[OWN_LOADER].u > n)
    return workload_reject(cfg, "loader", "a thread from 1 to threads, or 0 for each its own part", error);
  double shared_part = cfg->own[OWN_SHARED_PART].frac;
  uint64_t shared_bytes = (uint64_t)(shared_part * (double)old) / WORKLOAD_WORD_BYTES * WORKLOAD_WORD_BYTES;
  uint64_t part_bytes = (old - shared_bytes) / n / WORKLOAD_WORD_BYTES * WORKLOAD_WORD_BYTES;
  gboolean old_used = cfg->own[OWN_OLD_ACCESSES].frac > 0;
  if (old_used && cfg->own[OWN_SHARED].frac > 0 && shared_bytes == 0)
    return workload_reject(cfg, "shared_part", "a fraction that leaves the shared part a word at least, as shared > 0 needs",
                           error);
  if (old_used && cfg->own[OWN_SHARED].frac < 1 && part_bytes == 0)
    return workload_reject(cfg, "old", "an old heap that leaves every warehouse a word of its own, as shared < 1 needs",
                           error);
  if (cfg->size_given && cfg->size_bytes != n * young + old)
    return workload_reject(cfg, "size", "threads x young + old, the heap's bytes (or leave size out)", error);

  JbbGen *g = g_new0(JbbGen, 1);
  g->n = (uint32_t)n;
  g->loader = (uint32_t)cfg->own[OWN_LOADER].u;
  g->promote = cfg->own[OWN_PROMOTE].u;
  if (g->promote)
    g->loader = 1; /* the whole old heap in the load phase, after every thread started */
  g->young = young;
  g->old_va = WORKLOAD_BASE_VA + n * young;
  g->old = old;
  g->shared_bytes = shared_bytes;
  g->part_bytes = part_bytes;
  g->young_words = young / WORKLOAD_WORD_BYTES;
  g->shared_words = shared_bytes / WORKLOAD_WORD_BYTES;
  g->part_words = part_bytes / WORKLOAD_WORD_BYTES;
  g->to_old = threshold(cfg->own[OWN_OLD_ACCESSES].frac);
  g->to_shared = threshold(cfg->own[OWN_SHARED].frac);
  g->load_lines = lines_of(g->loader ? old : shared_bytes);
  g->part_lines = g->loader ? 0 : lines_of(part_bytes);
  g->young_lines = lines_of(young);
  g->rng = g_new(uint64_t, n);
  g->pos = g_new0(uint64_t, n);
  g->mix = g_new(WorkloadMix, n);
  uint64_t s = cfg->seed;
  for (uint64_t t = 0; t < n; t++) {
    g->rng[t] = perm_splitmix64(&s);
    workload_mix_init(&g->mix[t], cfg->own[OWN_RW].frac);
  }
  g->promote_key = perm_splitmix64(&s); /* after the threads' streams, which stay as they were */
  cfg->size_bytes = n * young + old;
  cfg->map_len = (cfg->size_bytes + WORKLOAD_MAP_ALIGN_BYTES - 1) / WORKLOAD_MAP_ALIGN_BYTES * WORKLOAD_MAP_ALIGN_BYTES;
  cfg->setup_writes = (n - 1) + g->load_lines + n * (g->part_lines + g->young_lines);
  return g;
}

static void thread_record(TraceRecord *r, uint64_t tid)
{
  r->type = REC_THREAD;
  r->size = 0;
  r->tid = (uint32_t)tid;
  r->arg = -1;
}

static void jbb_setup(gpointer state, uint64_t k, TraceRecord *r)
{
  const JbbGen *g = state;
  uint64_t first = g->promote ? g->n : MAX(g->loader, 1); /* the threads that load */
  if (k < first - 1) { /* threads 2..first start */
    thread_record(r, k + 2);
    return;
  }
  k -= first - 1;
  if (k < g->load_lines) { /* the whole old heap, or (loader=0) its shared part */
    uint64_t off = k * WORKLOAD_SETUP_STRIDE_BYTES;
    uint64_t piece = g->promote_key ^ (g->promote ? off / g->promote : 0);
    r->tid = g->promote ? (uint32_t)(perm_splitmix64(&piece) % g->n) + 1 : (uint32_t)first;
    r->addr = g->old_va + off;
    return;
  }
  k -= g->load_lines;
  if (k < g->n - first) { /* the other threads start */
    thread_record(r, first + 1 + k);
    return;
  }
  k -= g->n - first;
  uint64_t t = k % g->n, line = k / g->n;
  r->tid = (uint32_t)t + 1;
  if (line < g->part_lines) { /* loader=0: each its own warehouse part */
    r->addr = g->old_va + g->shared_bytes + t * g->part_bytes + line * WORKLOAD_SETUP_STRIDE_BYTES;
    return;
  }
  line -= g->part_lines;
  r->addr = WORKLOAD_BASE_VA + t * g->young + line * WORKLOAD_SETUP_STRIDE_BYTES;
}

static void jbb_access(gpointer state, TraceRecord *r)
{
  JbbGen *g = state;
  uint64_t t = g->k % g->n;
  g->k++;
  r->tid = (uint32_t)t + 1;
  uint64_t draw = perm_splitmix64(&g->rng[t]);
  if ((draw >> 32) >= g->to_old) { /* allocation: the next word of the young region */
    r->kind = ACC_STORE;
    r->addr = WORKLOAD_BASE_VA + t * g->young + g->pos[t] * WORKLOAD_WORD_BYTES;
    if (++g->pos[t] == g->young_words)
      g->pos[t] = 0; /* a young collection: eden is empty again */
    return;
  }
  gboolean shared = (draw & 0xffffffffULL) < g->to_shared;
  uint64_t words = shared ? g->shared_words : g->part_words;
  uint64_t base = shared ? g->old_va : g->old_va + g->shared_bytes + t * g->part_bytes;
  uint64_t word = (uint64_t)(((unsigned __int128)perm_splitmix64(&g->rng[t]) * words) >> 64);
  r->kind = workload_mix_next(&g->mix[t]);
  r->addr = base + word * WORKLOAD_WORD_BYTES;
}

static void jbb_free(gpointer state)
{
  JbbGen *g = state;
  g_free(g->rng);
  g_free(g->pos);
  g_free(g->mix);
  g_free(g);
}

const WorkloadGenerator gen_jbb = {
  .name = "jbb",
  .help = "SPECjbb-like warehouse threads: young allocation and a shared old heap loaded by one thread",
  .source = "the NUMA-balancing measurements with 32-warehouse SPECjbb: one JVM, one thread per warehouse",
  .params = jbb_params,
  .init = jbb_init,
  .access = jbb_access,
  .free = jbb_free,
  .setup = jbb_setup,
  .several_threads = TRUE,
};
