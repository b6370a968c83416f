/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_random.c - independent uniformly random accesses over the buffer.
 *
 * Imitates GUPS-style random access (HPCC RandomAccess) without its
 * read-modify-write: each access is an independent 8-byte load or store at an
 * 8-aligned address drawn uniformly from [0, size), so many can be in flight
 * at once, unlike the pointer chase.  Addresses come from a splitmix64
 * stream keyed by the seed; which accesses are stores comes from `rw` alone
 * (evenly spread, workload_mix), so changing rw keeps the addresses.  Setup
 * writes every line once, as a benchmark initialising its table does.
 *
 * Left out: GUPS's update (a load and a store to the same address) and its
 * xor-shift address sequence.
 */
#include "config.h"
#include "workload_impl.h"
#include "perm.h"

typedef struct {
  uint64_t rng;   /* splitmix64 state */
  uint64_t words; /* 8-byte slots in size */
  WorkloadMix mix;
} RandomGen;

enum { OWN_RW };

static const WorkloadParam random_params[] = {
  { "rw", WPARAM_FRACTION, "0", NULL, 0, 0, "fraction of the accesses that are stores, 0 to 1" },
  { NULL },
};

static gpointer random_init(WorkloadConfig *cfg, GError **error)
{
  RandomGen *g = g_new0(RandomGen, 1);
  uint64_t s = cfg->seed;
  g->rng = perm_splitmix64(&s);
  g->words = cfg->size_bytes / WORKLOAD_WORD_BYTES;
  workload_mix_init(&g->mix, cfg->own[OWN_RW].frac);
  return g;
}

static void random_access(gpointer state, TraceRecord *r)
{
  RandomGen *g = state;
  /* Uniform in [0, words) by a 64x64->128 multiply (Lemire 2019): no
   * division, bias below words / 2^64. */
  uint64_t word = (uint64_t)(((unsigned __int128)perm_splitmix64(&g->rng) * g->words) >> 64);
  r->kind = workload_mix_next(&g->mix);
  r->addr = WORKLOAD_BASE_VA + word * WORKLOAD_WORD_BYTES;
}

/* random_access n times, with the stream and the mix in registers;
 * `mixed`: some accesses may be stores. */
static inline G_ALWAYS_INLINE void random_fill(RandomGen *g, const TraceRecord *proto, TraceRecord *r, unsigned n,
                                               gboolean mixed)
{
  const TraceRecord p = *proto; /* in registers: r may alias proto's type */
  uint64_t rng = g->rng, words = g->words;
  WorkloadMix mix = g->mix;
  for (unsigned k = 0; k < n; k++) {
    uint64_t word = (uint64_t)(((unsigned __int128)perm_splitmix64(&rng) * words) >> 64);
    r[k] = p;
    if (mixed)
      r[k].kind = workload_mix_next(&mix);
    r[k].addr = WORKLOAD_BASE_VA + word * WORKLOAD_WORD_BYTES;
  }
  g->rng = rng;
  g->mix = mix;
}

static void random_access_batch(gpointer state, const TraceRecord *proto, TraceRecord *r, unsigned n)
{
  RandomGen *g = state;
  if (workload_mix_loads_only(&g->mix)) /* proto is a load */
    random_fill(g, proto, r, n, FALSE);
  else
    random_fill(g, proto, r, n, TRUE);
}

const WorkloadGenerator gen_random = {
  .name = "random",
  .help = "independent 8-byte accesses at uniformly random addresses (GUPS-like)",
  .source = "HPCC RandomAccess without its read-modify-write",
  .params = random_params,
  .init = random_init,
  .access = random_access,
  .free = g_free,
  .access_batch = random_access_batch,
};
