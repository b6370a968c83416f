/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_gups.c - HPCC RandomAccess (GUPS): read-modify-write updates of random
 * words of a table.
 *
 * The table is the largest power of two of 8-byte words that fits in size,
 * as HPCC sizes it.  Update k reads and writes Table[ran & (words - 1)]
 * (Table[i] ^= ran), ran being HPCC's stream ran = (ran << 1) ^ (ran < 0 ?
 * POLY : 0) with POLY = 7, started from the seed (HPCC starts it at a point
 * of the stream chosen by the process rank; RandomAccess.c, HPCC_starts).
 * Each update is two accesses, a load and a store to the same word, so
 * `accesses` counts both and an odd count ends on a load.  Setup writes
 * every line of the table, as its initialisation Table[i] = i does.
 *
 * Left out: the verification pass, and the look-ahead of 1024 updates the
 * benchmark allows (the loads of an update are independent of each other
 * already, so the core overlaps them as far as its window lets it).
 */
#include "config.h"
#include "workload_impl.h"
#include "perm.h"

#define GUPS_POLY 0x7ULL /* HPCC RandomAccess.h */

typedef struct {
  uint64_t ran;      /* the stream's current value */
  uint64_t mask;     /* words - 1 */
  gboolean store;    /* the next access is the update's store */
  uint64_t word;     /* word of the update under way */
} GupsGen;

static gpointer gups_init(WorkloadConfig *cfg, GError **error)
{
  GupsGen *g = g_new0(GupsGen, 1);
  uint64_t words = cfg->size_bytes / WORKLOAD_WORD_BYTES;
  uint64_t pow2 = 1;
  while (pow2 <= words / 2)
    pow2 <<= 1;
  g->mask = pow2 - 1;
  uint64_t s = cfg->seed;
  g->ran = perm_splitmix64(&s) | 1; /* any nonzero point of the stream */
  cfg->setup_writes = (pow2 * WORKLOAD_WORD_BYTES - WORKLOAD_WORD_BYTES) / WORKLOAD_SETUP_STRIDE_BYTES + 1;
  return g;
}

static void gups_access(gpointer state, TraceRecord *r)
{
  GupsGen *g = state;
  if (!g->store) {
    g->ran = (g->ran << 1) ^ ((int64_t)g->ran < 0 ? GUPS_POLY : 0);
    g->word = g->ran & g->mask;
    r->kind = ACC_LOAD;
  } else {
    r->kind = ACC_STORE;
  }
  g->store = !g->store;
  r->addr = WORKLOAD_BASE_VA + g->word * WORKLOAD_WORD_BYTES;
}

const WorkloadGenerator gen_gups = {
  .name = "gups",
  .help = "HPCC RandomAccess: Table[ran & mask] ^= ran, a load and a store per update",
  .source = "HPCC RandomAccess (GUPS), the update loop of RandomAccess.c",
  .init = gups_init,
  .access = gups_access,
  .free = g_free,
};
