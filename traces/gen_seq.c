/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_seq.c - sequential passes over the buffer with a fixed stride.
 *
 * Imitates a streaming kernel (STREAM, a strided array walk): access k is the
 * 8-byte word at (k mod positions) * stride, positions being the strides
 * whose word fits in size, so the walk wraps around as many times as
 * `accesses` needs.  Which accesses are stores comes from `rw`, evenly spread
 * (workload_mix).  The stream does not depend on the seed.  Setup writes
 * every line once, as a benchmark initialising its arrays does.
 *
 * Left out: STREAM's several arrays and its floating-point work (use gap).
 */
#include "config.h"
#include "workload_impl.h"

typedef struct {
  uint64_t stride;    /* bytes between consecutive accesses */
  uint64_t positions; /* accesses in one pass */
  uint64_t next;      /* position of the next access */
  WorkloadMix mix;
} SeqGen;

enum { OWN_STRIDE, OWN_RW };

static const WorkloadParam seq_params[] = {
  { "stride", WPARAM_SIZE, "64", NULL, WORKLOAD_WORD_BYTES, WORKLOAD_VA_END - WORKLOAD_BASE_VA,
    "bytes between consecutive accesses, a multiple of 8 up to size" },
  { "rw", WPARAM_FRACTION, "0", NULL, 0, 0, "fraction of the accesses that are stores, 0 to 1" },
  { NULL },
};

static gpointer seq_init(WorkloadConfig *cfg, GError **error)
{
  uint64_t stride = cfg->own[OWN_STRIDE].u;
  if (stride % WORKLOAD_WORD_BYTES || stride > cfg->size_bytes)
    return workload_reject(cfg, "stride", "a multiple of 8 bytes, at most size", error);
  SeqGen *g = g_new0(SeqGen, 1);
  g->stride = stride;
  g->positions = (cfg->size_bytes - WORKLOAD_WORD_BYTES) / stride + 1;
  workload_mix_init(&g->mix, cfg->own[OWN_RW].frac);
  return g;
}

static void seq_access(gpointer state, TraceRecord *r)
{
  SeqGen *g = state;
  r->kind = workload_mix_next(&g->mix);
  r->addr = WORKLOAD_BASE_VA + g->next * g->stride;
  if (++g->next == g->positions)
    g->next = 0;
}

/* seq_access n times, with the position and the mix in registers and the
 * address advanced by the stride; `mixed`: some accesses may be stores. */
static inline G_ALWAYS_INLINE void seq_fill(SeqGen *g, const TraceRecord *proto, TraceRecord *r, unsigned n, gboolean mixed)
{
  const TraceRecord p = *proto; /* in registers: r may alias proto's type */
  WorkloadMix mix = g->mix;
  uint64_t next = g->next, positions = g->positions, stride = g->stride;
  uint64_t addr = WORKLOAD_BASE_VA + next * stride;
  for (unsigned k = 0; k < n; k++) {
    r[k] = p;
    if (mixed)
      r[k].kind = workload_mix_next(&mix);
    r[k].addr = addr;
    addr += stride;
    if (++next == positions) {
      next = 0;
      addr = WORKLOAD_BASE_VA;
    }
  }
  g->mix = mix;
  g->next = next;
}

static void seq_access_batch(gpointer state, const TraceRecord *proto, TraceRecord *r, unsigned n)
{
  SeqGen *g = state;
  if (workload_mix_loads_only(&g->mix)) /* proto is a load */
    seq_fill(g, proto, r, n, FALSE);
  else
    seq_fill(g, proto, r, n, TRUE);
}

const WorkloadGenerator gen_seq = {
  .name = "seq",
  .help = "sequential passes with a fixed stride, wrapping around size (STREAM-like)",
  .source = "a strided array walk, as STREAM's kernels and strided TLB studies",
  .params = seq_params,
  .init = seq_init,
  .access = seq_access,
  .free = g_free,
  .access_batch = seq_access_batch,
};
