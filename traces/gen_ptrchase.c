/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_ptrchase.c - a pointer chase: dependent loads around a cyclic chain.
 *
 * Imitates lmbench's lat_mem_rd and the chase kernels of TLB studies: the
 * buffer holds one pointer per `line` bytes, linked into one cycle that
 * visits every element once; each load's address is the value the previous
 * load returned, so the loads are D records and no two can overlap.
 * order=random links the elements in the order of a keyed permutation
 * (traces/perm.c): element perm(k) points to perm(k+1), perm(n-1) back to
 * perm(0), and the measured loads follow that cycle from perm(0), wrapping
 * as often as `accesses` asks.  order=seq links them in address order, the
 * prefetch-friendly chase.  Setup writes each element once in address order,
 * as building the chain does.
 *
 * Left out: the pointer values themselves (the simulator needs addresses,
 * not data) and lat_mem_rd's unrolling.
 */
#include "config.h"
#include "workload_impl.h"
#include "perm.h"

typedef struct {
  Perm perm;
  uint64_t n;       /* elements in the chain */
  uint64_t line;    /* bytes per element */
  uint64_t next;    /* position in the cycle of the next load */
  gboolean random;
} PtrChase;

enum { OWN_LINE, OWN_ORDER };

static const WorkloadParam ptrchase_params[] = {
  { "line", WPARAM_SIZE, "64", NULL, WORKLOAD_WORD_BYTES, WORKLOAD_VA_END - WORKLOAD_BASE_VA,
    "bytes per chain element, a multiple of 8 up to size (64: a cache line, 4K: a page)" },
  { "order", WPARAM_CHOICE, "random", "random|seq",
    0, 0, "random: elements linked in a random cycle; seq: in address order (prefetch-friendly)" },
  { NULL },
};

static gpointer ptrchase_init(WorkloadConfig *cfg, GError **error)
{
  uint64_t line = cfg->own[OWN_LINE].u;
  if (line % WORKLOAD_WORD_BYTES || line > cfg->size_bytes)
    return workload_reject(cfg, "line", "a multiple of 8 bytes, at most size", error);
  PtrChase *p = g_new0(PtrChase, 1);
  p->line = line;
  p->n = cfg->size_bytes / line;
  p->random = cfg->own[OWN_ORDER].choice == 0;
  perm_init(&p->perm, p->n, cfg->seed);
  /* Building the chain writes every element once, in address order. */
  cfg->setup_stride_bytes = line;
  cfg->setup_writes = p->n;
  return p;
}

static void ptrchase_access(gpointer state, TraceRecord *r)
{
  PtrChase *p = state;
  uint64_t element = p->random ? perm_apply(&p->perm, p->next) : p->next;
  if (++p->next == p->n)
    p->next = 0;
  r->kind = ACC_DEP_LOAD;
  r->addr = WORKLOAD_BASE_VA + element * p->line;
}

const WorkloadGenerator gen_ptrchase = {
  .name = "ptrchase",
  .help = "dependent loads around a cyclic chain, one element per line (lmbench lat_mem_rd)",
  .source = "lmbench lat_mem_rd (McVoy and Staelin, USENIX 1996)",
  .params = ptrchase_params,
  .init = ptrchase_init,
  .access = ptrchase_access,
  .free = g_free,
};
