/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_threads.c - threads of one process, each working on its own chunk of
 * one shared allocation.
 *
 * Imitates the test program behind PR_SET_THP_DISABLE (thp_pthread -c 512
 * -b 256g on an SGI UV: 512 threads, each on its part of one 256 GB buffer,
 * twice as slow with THP as without): the process allocates one block, and
 * thread T (tids 1..threads; tid 1 is the main thread, which works too)
 * works on chunk T-1 of it (with chunks=C, on chunks T-1, T-1+threads, ...,
 * C of them dealt round robin as OpenMP's schedule(static, chunk) deals
 * them).  Chunk i starts at i x stride, stride being `chunk` rounded up to
 * `align`; the block is threads x C x stride bytes, one
 * mmap at 0x7f0000000000 (2M-aligned, so it is `align`-aligned for any
 * align up to 1G).  With the default chunk (15M, seven and a half huge
 * pages) every other chunk starts mid huge page, so that huge page holds
 * parts of two threads' chunks and is placed, under first touch, on the
 * node of whichever faults it first; with
 * align=2M every chunk starts on its own huge page.  `size`, when given
 * alone, is split into threads chunks (rounded down to align); given with
 * chunk it must equal threads x stride.  The description shows both.
 *
 * Setup is the first touch, one store per line (WORKLOAD_SETUP_STRIDE_BYTES):
 * first_touch=own (the default, as the test does) starts the other threads
 * and each stores to every line of its own chunk, the threads' stores
 * interleaved one by one; first_touch=main has the main thread store to
 * every line of the whole block (a memset before the threads start), and
 * only then starts the others.  pin=1 pins thread T to CPU T-1 (`thread T
 * cpu T-1`, modulo the machine's CPUs); pin=0 lets the scheduler place them.
 *
 * The measured phase: `accesses` is the total over all threads, handed out
 * one by one in turn (thread 1, 2, ..., threads, 1, ...), so each thread
 * makes accesses / threads of them (the first accesses % threads one more).
 * A thread's j-th access is word j of its chunk (pattern=seq, wrapping), or
 * word perm_T(j) of a keyed permutation of the chunk's words of its own
 * (pattern=random, a new pass of the same order after each full pass).
 * Which of a thread's accesses are stores comes from `rw`, evenly spread
 * over each thread's own accesses (workload_mix).  The interleaving of the
 * threads here is the order of the records, not of simulated time: the
 * engine runs each thread's records in order, the thread whose CPU is
 * furthest behind first.
 *
 * Left out: thread creation and joining costs, the test's own computation
 * (use gap), and sharing between threads.
 */
#include "config.h"
#include "workload_impl.h"
#include "perm.h"


enum { OWN_THREADS, OWN_CHUNK, OWN_ALIGN, OWN_FIRST_TOUCH, OWN_PATTERN, OWN_RW, OWN_PIN, OWN_CHUNKS };
enum { TOUCH_OWN, TOUCH_MAIN };
enum { PATTERN_SEQ, PATTERN_RANDOM };

static const WorkloadParam threads_params[] = {
  { "threads", WPARAM_COUNT, "16", NULL, 1, WORKLOAD_THREADS_MAX, "threads of the process, tids 1..threads, one chunk each" },
  { "chunk", WPARAM_SIZE, "15M", NULL, WORKLOAD_WORD_BYTES, WORKLOAD_VA_END - WORKLOAD_BASE_VA,
    "bytes of each thread's chunk, a multiple of 8 (15M: every other chunk starts mid huge page)" },
  { "align", WPARAM_SIZE, "4K", NULL, WORKLOAD_WORD_BYTES, 1ULL << 30,
    "alignment of the chunk starts, a power of two (2M: each chunk on its own huge pages)" },
  { "first_touch", WPARAM_CHOICE, "own", "own|main", 0, 0,
    "own: each thread first touches its own chunk; main: thread 1 touches the whole block first" },
  { "pattern", WPARAM_CHOICE, "seq", "seq|random", 0, 0,
    "seq: each thread walks its chunk word by word; random: in a keyed random order" },
  { "rw", WPARAM_FRACTION, "0", NULL, 0, 0, "fraction of the accesses that are stores, 0 to 1" },
  { "pin", WPARAM_COUNT, "0", NULL, 0, 1, "1: pin thread T to CPU T-1; 0: the scheduler places the threads" },
  { "chunks", WPARAM_COUNT, "1", NULL, 1, 1u << 20,
    "chunks per thread, dealt round robin (block-cyclic, as OpenMP schedule(static, chunk)): thread T owns chunks T-1, T-1+threads, ..." },
  { NULL },
};

typedef struct {
  uint32_t n;        /* threads */
  uint64_t chunk;    /* bytes of a chunk */
  uint64_t stride;   /* bytes from one chunk's start to the next */
  uint64_t words;    /* 8-byte words of a chunk */
  uint64_t chunks;   /* chunks per thread */
  uint64_t chunk_lines; /* setup stores per chunk */
  uint64_t lines;    /* setup stores per thread (own) or per block (main) */
  gboolean main_touch, random, pin;
  uint64_t k;        /* measured accesses made */
  Perm *perm;        /* per thread, pattern=random */
  WorkloadMix *mix;  /* per thread */
} ThreadsGen;

static uint64_t lines_of(uint64_t bytes)
{
  return (bytes - WORKLOAD_WORD_BYTES) / WORKLOAD_SETUP_STRIDE_BYTES + 1;
}

static gpointer threads_init(WorkloadConfig *cfg, GError **error)
{
  uint64_t n = cfg->own[OWN_THREADS].u;
  uint64_t chunks = cfg->own[OWN_CHUNKS].u;
  uint64_t chunk = cfg->own[OWN_CHUNK].u;
  uint64_t align = cfg->own[OWN_ALIGN].u;
  uint64_t limit = WORKLOAD_VA_END - WORKLOAD_BASE_VA;
  if (align & (align - 1))
    return workload_reject(cfg, "align", "a power of two from 8 bytes to 1G", error);
  if (chunk % WORKLOAD_WORD_BYTES)
    return workload_reject(cfg, "chunk", "a multiple of 8 bytes", error);
  uint64_t stride;
  if (cfg->size_given && !cfg->own_given[OWN_CHUNK]) {
    /* The size is the block: split it, each chunk a whole number of aligns. */
    stride = cfg->size_bytes / (n * chunks) / align * align;
    if (stride < WORKLOAD_WORD_BYTES)
      return workload_reject(cfg, "size", "at least threads x align bytes, so that every thread has a chunk", error);
    chunk = stride;
  } else {
    stride = (chunk + align - 1) / align * align; /* chunk <= 1T, align <= 1G: no overflow */
    if (stride > limit / n / chunks)
      return workload_reject(cfg, "chunk", "a chunk whose threads x chunks x (chunk rounded up to align) is at most 1T",
                             error);
    if (n * chunks * stride < WORKLOAD_MIN_SIZE_BYTES)
      return workload_reject(cfg, "chunk", "a chunk whose threads x chunks x (chunk rounded up to align) is at least 4K",
                             error);
    if (cfg->size_given && cfg->size_bytes != n * chunks * stride)
      return workload_reject(cfg, "size",
                             "threads x chunks x chunk rounded up to align, the block's bytes (or leave size out, or "
                             "give it without chunk to split it)",
                             error);
  }
  ThreadsGen *g = g_new0(ThreadsGen, 1);
  g->n = (uint32_t)n;
  g->chunk = chunk;
  g->stride = stride;
  g->words = chunk / WORKLOAD_WORD_BYTES;
  g->chunks = chunks;
  g->main_touch = cfg->own[OWN_FIRST_TOUCH].choice == TOUCH_MAIN;
  g->random = cfg->own[OWN_PATTERN].choice == PATTERN_RANDOM;
  g->pin = cfg->own[OWN_PIN].u == 1;
  g->mix = g_new(WorkloadMix, n);
  for (uint64_t t = 0; t < n; t++)
    workload_mix_init(&g->mix[t], cfg->own[OWN_RW].frac);
  if (g->random) {
    g->perm = g_new(Perm, n);
    uint64_t s = cfg->seed;
    for (uint64_t t = 0; t < n; t++)
      perm_init(&g->perm[t], g->words * chunks, perm_splitmix64(&s));
  }
  cfg->own[OWN_CHUNK].u = chunk;
  cfg->size_bytes = n * chunks * stride;
  cfg->map_len = (cfg->size_bytes + WORKLOAD_MAP_ALIGN_BYTES - 1) / WORKLOAD_MAP_ALIGN_BYTES * WORKLOAD_MAP_ALIGN_BYTES;
  g->chunk_lines = lines_of(chunk);
  g->lines = g->main_touch ? lines_of(cfg->size_bytes) : chunks * g->chunk_lines;
  cfg->setup_writes = (n - 1) + (g->main_touch ? g->lines : n * g->lines);
  cfg->main_cpu = g->pin ? 0 : -1;
  return g;
}

/* Setup record k: the other threads' records, then the first touch (own:
 * interleaved, thread by thread; main: thread 1 over the whole block), or
 * the first touch by thread 1 and then the other threads (main). */
static void threads_setup(gpointer state, uint64_t k, TraceRecord *r)
{
  const ThreadsGen *g = state;
  uint64_t starts = g->n - 1;
  uint64_t first = g->main_touch ? g->lines : 0; /* setup index of the first thread record */
  if (k >= first && k < first + starts) {
    uint32_t tid = (uint32_t)(k - first) + 2;
    r->type = REC_THREAD;
    r->size = 0;
    r->tid = tid;
    r->arg = g->pin ? (int32_t)(tid - 1) : -1;
    return;
  }
  if (g->main_touch) {
    r->addr = WORKLOAD_BASE_VA + k * WORKLOAD_SETUP_STRIDE_BYTES;
    return;
  }
  uint64_t i = k - starts, t = i % g->n, line = i / g->n;
  uint64_t c = line / g->chunk_lines, l = line % g->chunk_lines;
  r->tid = (uint32_t)t + 1;
  r->addr = WORKLOAD_BASE_VA + (c * g->n + t) * g->stride + l * WORKLOAD_SETUP_STRIDE_BYTES;
}

static void threads_access(gpointer state, TraceRecord *r)
{
  ThreadsGen *g = state;
  uint64_t t = g->k % g->n, j = g->k / g->n;
  g->k++;
  uint64_t word = j % (g->words * g->chunks);
  if (g->random)
    word = perm_apply(&g->perm[t], word);
  uint64_t c = word / g->words, w = word % g->words;
  r->tid = (uint32_t)t + 1;
  r->kind = workload_mix_next(&g->mix[t]);
  r->addr = WORKLOAD_BASE_VA + (c * g->n + t) * g->stride + w * WORKLOAD_WORD_BYTES;
}

static void threads_free(gpointer state)
{
  ThreadsGen *g = state;
  g_free(g->perm);
  g_free(g->mix);
  g_free(g);
}

const WorkloadGenerator gen_threads = {
  .name = "threads",
  .help = "threads of one process, each on its own chunk of one shared block (thp_pthread)",
  .source = "thp_pthread -c 512 -b 256g, the test program behind PR_SET_THP_DISABLE (seed 001)",
  .params = threads_params,
  .init = threads_init,
  .access = threads_access,
  .free = threads_free,
  .setup = threads_setup,
  .several_threads = TRUE,
};
