/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mempolicy_mode.c - the table of memory policy modes and the five modes
 * Linux has had longest (mm/mempolicy.c, Linux 6.9, policy_nodemask and the
 * interleave helpers): local, the faulting CPU's node; preferred, its node;
 * bind, the first of its nodes in the faulting CPU's zonelist, never
 * another; interleave and weighted interleave by the interleave index of
 * the page for a VMA policy (interleave_nid, weighted_interleave_nid),
 * round-robin per process for the process policy (interleave_nodes,
 * weighted_interleave_nodes and their il_prev / il_weight countdown).
 * preferred_many has its own file (mempolicy_preferred_many.c), the example
 * of a mode added to the table.
 *
 * Leaves out, for every mode: the mode flags (MPOL_F_STATIC_NODES,
 * MPOL_F_RELATIVE_NODES, MPOL_F_NUMA_BALANCING), home nodes
 * (set_mempolicy_home_node) and cpuset rebinding (mpol_ops' rebind).
 */
#include "config.h"
#include "mempolicy_mode.h"

#include <string.h>

/* The registry of modes (base/registry.h), in trace-code order.  A new
 * mode adds its row at the end. */
static const MempolicyMode *const MODES[] = {
  &mempolicy_mode_local,      /* MPOL_DEFAULT_LOCAL */
  &mempolicy_mode_bind,       /* MPOL_BIND */
  &mempolicy_mode_preferred,  /* MPOL_PREFERRED */
  &mempolicy_mode_interleave, /* MPOL_INTERLEAVE */
  &mempolicy_mode_weighted_interleave,
  &mempolicy_mode_preferred_many,
};

const MempolicyMode *mempolicy_mode_nth(unsigned i)
{
  return i < G_N_ELEMENTS(MODES) ? MODES[i] : NULL;
}

const MempolicyMode *mempolicy_mode_by_code(uint64_t code)
{
  for (unsigned i = 0; i < G_N_ELEMENTS(MODES); i++)
    if ((uint64_t)MODES[i]->code == code)
      return MODES[i];
  return NULL;
}

const MempolicyMode *mempolicy_mode_by_name(const char *name, size_t len)
{
  g_return_val_if_fail(name != NULL, NULL);
  int i = registry_find_len(REGISTRY_ROWS(MODES), G_N_ELEMENTS(MODES), name, len);
  return i < 0 ? NULL : MODES[i];
}

gboolean mempolicy_mode_nodes_ok(const MempolicyMode *m, uint64_t nodes)
{
  switch (m->node_arg) {
  case MEMPOLICY_NODES_NONE:
    return nodes == 0;
  case MEMPOLICY_NODES_ONE:
    return nodes != 0 && !(nodes & (nodes - 1));
  case MEMPOLICY_NODES_SOME:
    return nodes != 0;
  }
  g_return_val_if_reached(FALSE);
}

int mempolicy_mode_nearest(const MempolicyPlaceCtx *c, uint64_t mask)
{
  for (unsigned i = 0; i < c->nodes; i++)
    if (mask & (UINT64_C(1) << c->order[i]))
      return (int)c->order[i];
  return -1;
}

/* ---- node mask arithmetic (include/linux/nodemask.h) ---------------------- */

/* next_node_in(): the first node of mask after n, wrapping around. */
static int next_node_in(int n, uint64_t mask)
{
  for (int i = 1; i <= MEMPOLICY_MAX_NODES; i++) {
    int c = (n + i) % MEMPOLICY_MAX_NODES;
    if (c < 0)
      c += MEMPOLICY_MAX_NODES;
    if (mask & (UINT64_C(1) << c))
      return c;
  }
  return -1;
}

static int first_node(uint64_t mask)
{
  return mask ? __builtin_ctzll(mask) : -1;
}

/* ---- local, preferred, bind ----------------------------------------------- */

static void local_place(const MempolicyPlaceCtx *c, MemPlacement *out)
{
  (void)c, (void)out; /* the placement the caller starts from */
}

const MempolicyMode mempolicy_mode_local = {
  .name = "local",
  .help = "the faulting CPU's node first, then the others nearest to it",
  .source = "MPOL_LOCAL (MPOL_DEFAULT), mm/mempolicy.c; numactl --localalloc",
  .code = MPOL_DEFAULT_LOCAL, .node_arg = MEMPOLICY_NODES_NONE, .place = local_place,
};

static void preferred_place(const MempolicyPlaceCtx *c, MemPlacement *out)
{
  out->node = out->from = first_node(c->mask);
}

const MempolicyMode mempolicy_mode_preferred = {
  .name = "preferred",
  .help = "its one node first, then the others nearest to that node",
  .source = "MPOL_PREFERRED, mm/mempolicy.c policy_nodemask; numactl --preferred",
  .code = MPOL_PREFERRED, .node_arg = MEMPOLICY_NODES_ONE, .place = preferred_place,
};

/* The first node of the mask in the faulting CPU's zonelist, the fallback
 * the rest of the mask nearest to the CPU. */
static void bind_place(const MempolicyPlaceCtx *c, MemPlacement *out)
{
  out->allowed = c->mask;
  int nearest = mempolicy_mode_nearest(c, c->mask);
  if (nearest >= 0)
    out->node = nearest;
}

const MempolicyMode mempolicy_mode_bind = {
  .name = "bind",
  .help = "only its nodes, the one nearest to the faulting CPU first",
  .source = "MPOL_BIND, mm/mempolicy.c policy_nodemask; numactl --membind",
  .code = MPOL_BIND, .node_arg = MEMPOLICY_NODES_SOME, .place = bind_place,
  .numa_balancing = TRUE, /* Linux 5.12, commit bda420b98505 */
};

/* ---- interleave and weighted interleave ------------------------------------ */

/* interleave_nid(): the (ilx mod |mask|)-th node of mask. */
static int interleave_nid(uint64_t mask, uint64_t ilx)
{
  unsigned target = (unsigned)(ilx % (uint64_t)__builtin_popcountll(mask));
  int nid = first_node(mask);
  for (unsigned i = 0; i < target; i++)
    nid = next_node_in(nid, mask);
  return nid;
}

/* weighted_interleave_nid(): node n owns weight[n] consecutive indices of
 * every round of sum(weights). */
static int weighted_interleave_nid(const uint8_t *weights, uint64_t mask, uint64_t ilx)
{
  unsigned total = 0;
  for (int n = first_node(mask); n >= 0 && n < MEMPOLICY_MAX_NODES; n++)
    if (mask & (UINT64_C(1) << n))
      total += weights[n];
  uint64_t target = ilx % total;
  int nid = first_node(mask);
  while (target >= weights[nid]) {
    target -= weights[nid];
    nid = next_node_in(nid, mask);
  }
  return nid;
}

/* interleave_nodes(): the next node after the last one. */
static int interleave_nodes(int *il_prev, uint64_t mask)
{
  int nid = next_node_in(*il_prev, mask);
  *il_prev = nid;
  return nid;
}

/* weighted_interleave_nodes(): il_prev keeps taking pages until its weight
 * is used up, then the next node starts with its own weight. */
static int weighted_interleave_nodes(const uint8_t *weights, int *il_prev, unsigned *il_weight, uint64_t mask)
{
  int node = *il_prev;
  if (!*il_weight || node < 0 || !(mask & (UINT64_C(1) << node))) {
    node = next_node_in(node, mask);
    *il_prev = node;
    *il_weight = weights[node];
  }
  (*il_weight)--;
  return node;
}

/* get_vma_policy: in a VMA the index comes from the address whether the
 * policy is the VMA's or the task's (Linux 6.9); the task's round robin
 * serves allocations outside any VMA. */
static void interleave_place(const MempolicyPlaceCtx *c, MemPlacement *out)
{
  int nid = c->in_vma ? interleave_nid(c->mask, c->ilx) : interleave_nodes(c->il_prev, c->mask);
  out->node = out->from = nid;
  out->interleaved = TRUE;
}

const MempolicyMode mempolicy_mode_interleave = {
  .name = "interleave",
  .help = "page after page over its nodes, by the page's interleave index (round robin outside a VMA)",
  .source = "MPOL_INTERLEAVE, mm/mempolicy.c interleave_nid, interleave_nodes; numactl --interleave",
  .code = MPOL_INTERLEAVE, .node_arg = MEMPOLICY_NODES_SOME, .place = interleave_place,
};

static void weighted_interleave_place(const MempolicyPlaceCtx *c, MemPlacement *out)
{
  int nid = c->in_vma ? weighted_interleave_nid(c->weights, c->mask, c->ilx)
                      : weighted_interleave_nodes(c->weights, c->il_prev, c->il_weight, c->mask);
  out->node = out->from = nid;
  out->interleaved = TRUE;
}

const MempolicyMode mempolicy_mode_weighted_interleave = {
  .name = "weighted_interleave",
  .help = "interleave with numa.interleave_weights consecutive pages per node",
  .source = "MPOL_WEIGHTED_INTERLEAVE (Linux 6.9), mm/mempolicy.c weighted_interleave_nid; numactl --weighted-interleave",
  .code = MPOL_WEIGHTED_INTERLEAVE, .node_arg = MEMPOLICY_NODES_SOME,
  .place = weighted_interleave_place,
};
