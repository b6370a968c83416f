/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_hashjoin.c - a no-partitioning hash join: build a hash table on one
 * relation, probe it with the other (the join of Blanas et al., SIGMOD 2011,
 * and of the hash-join studies of TLB behaviour).
 *
 * Memory holds the build relation R (nr tuples of 16 bytes: key, payload),
 * the probe relation S (`ratio` times as many tuples) and a hash table of
 * 2 * nr buckets of 16 bytes (load factor one half), in that order; nr is
 * what fits in size.  R's keys are a keyed permutation of [0, nr) (unique
 * keys, as a primary key); S's keys are drawn from them, so every probe
 * finds a match (a foreign-key join).  The measured phase is the build, then
 * the probe, then again, as long as `accesses` lasts:
 *
 *   build, for each tuple i of R:   R key of R[i]    (sequential)
 *                                   D bucket[h(key)] (address from the key)
 *                                   W bucket[h(key)]
 *   probe, for each tuple j of S:   R key of S[j]    (sequential)
 *                                   D bucket[h(key)]
 *                                   D the R tuple the bucket points to
 *
 * Setup writes every line of both relations and of the table, as loading
 * the relations and clearing the table do.
 *
 * Left out: collisions (each lookup finds its key in the first bucket),
 * output tuples, and radix partitioning.
 */
#include "config.h"
#include "workload_impl.h"
#include "perm.h"

#define HASHJOIN_TUPLE_BYTES 16
#define HASHJOIN_BUCKETS_PER_TUPLE 2

typedef struct {
  Perm keys;          /* R's keys */
  uint64_t nr, ns, nb;
  uint64_t r_va, s_va, ht_va;
  uint64_t i;         /* tuple of the current phase */
  uint64_t key, bucket;
  uint64_t match;     /* the R tuple an S tuple joins */
  uint64_t skey;      /* of S's key draws */
  gboolean probing;
  unsigned step;
} HashJoinGen;

enum { OWN_RATIO };

static const WorkloadParam hashjoin_params[] = {
  { "ratio", WPARAM_COUNT, "4", NULL, 1, 1000, "tuples of the probe relation per tuple of the build relation" },
  { NULL },
};

static gpointer hashjoin_init(WorkloadConfig *cfg, GError **error)
{
  uint64_t ratio = cfg->own[OWN_RATIO].u;
  uint64_t nr = cfg->size_bytes / (HASHJOIN_TUPLE_BYTES * (1 + ratio + HASHJOIN_BUCKETS_PER_TUPLE));
  if (nr < 1)
    return workload_reject(cfg, "ratio", "a ratio that leaves room for one build tuple in size", error);
  HashJoinGen *g = g_new0(HashJoinGen, 1);
  g->nr = nr;
  g->ns = nr * ratio;
  g->nb = nr * HASHJOIN_BUCKETS_PER_TUPLE;
  g->r_va = WORKLOAD_BASE_VA;
  g->s_va = g->r_va + nr * HASHJOIN_TUPLE_BYTES;
  g->ht_va = g->s_va + g->ns * HASHJOIN_TUPLE_BYTES;
  perm_init(&g->keys, nr, cfg->seed);
  uint64_t s = cfg->seed ^ 0x6a6f696e; /* S's draws: another stream of the same seed */
  g->skey = perm_splitmix64(&s);
  return g;
}

/* Multiplicative hashing of a key into [0, nb). */
static uint64_t bucket_of(const HashJoinGen *g, uint64_t key)
{
  uint64_t h = key * 0x9e3779b97f4a7c15ULL;
  return (uint64_t)(((unsigned __int128)h * g->nb) >> 64);
}

static void hashjoin_access(gpointer state, TraceRecord *r)
{
  HashJoinGen *g = state;
  if (!g->probing) {
    switch (g->step++) {
    case 0:
      g->key = perm_apply(&g->keys, g->i);
      g->bucket = bucket_of(g, g->key);
      r->addr = g->r_va + g->i * HASHJOIN_TUPLE_BYTES;
      return;
    case 1:
      r->kind = ACC_DEP_LOAD;
      r->addr = g->ht_va + g->bucket * HASHJOIN_TUPLE_BYTES;
      return;
    default:
      r->kind = ACC_STORE;
      r->addr = g->ht_va + g->bucket * HASHJOIN_TUPLE_BYTES;
      g->step = 0;
      if (++g->i == g->nr)
        g->i = 0, g->probing = TRUE;
      return;
    }
  }
  switch (g->step++) {
  case 0:
    /* S's tuple i joins R's tuple `match`, and carries its key. */
    g->match = (uint64_t)(((unsigned __int128)perm_splitmix64(&g->skey) * g->nr) >> 64);
    g->key = perm_apply(&g->keys, g->match);
    g->bucket = bucket_of(g, g->key);
    r->addr = g->s_va + g->i * HASHJOIN_TUPLE_BYTES;
    return;
  case 1:
    r->kind = ACC_DEP_LOAD;
    r->addr = g->ht_va + g->bucket * HASHJOIN_TUPLE_BYTES;
    return;
  default:
    r->kind = ACC_DEP_LOAD;
    r->addr = g->r_va + g->match * HASHJOIN_TUPLE_BYTES;
    g->step = 0;
    if (++g->i == g->ns)
      g->i = 0, g->probing = FALSE;
    return;
  }
}

const WorkloadGenerator gen_hashjoin = {
  .name = "hashjoin",
  .help = "hash join: build a table on R, probe it with S (no partitioning)",
  .source = "Blanas et al., Design and Evaluation of Main Memory Hash Join Algorithms, SIGMOD 2011 (no partitioning)",
  .params = hashjoin_params,
  .init = hashjoin_init,
  .access = hashjoin_access,
  .free = g_free,
};
