/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_graph.c - breadth-first search over a random graph in CSR form, the
 * access shape of Graph500's BFS kernel and of GAP's bfs.
 *
 * The graph has n vertices of `degree` out-edges each, stored as CSR: an
 * offsets array (n + 1 words), an edges array (n * degree words) and, for
 * the search, a parent array and a queue (n words each); n is what fits in
 * size.  The neighbours of a vertex are random vertices (a keyed hash of the
 * vertex and the edge), as in a uniform random graph.  BFS visits vertices
 * in queue order, and on a random graph the order in which vertices are
 * first reached is itself random: the k-th visited vertex is perm(k) of a
 * keyed permutation (traces/perm.c), so the generator keeps O(1) state
 * instead of a queue and a visited set.  Visiting vertex u:
 *
 *   R queue[k]                   pop (sequential)
 *   D offsets[u], R offsets[u+1] its edge range; u came from the queue load
 *   for each edge j:
 *     R edges[u*degree + j]      the neighbour w (sequential within u)
 *     D parent[w]                visited?  w came from the edge load
 *     on discovery: W parent[w], W queue[tail++]
 *
 * Each vertex is discovered once, so one edge in `degree` on average
 * discovers (evenly spread, workload_mix).  When all n vertices are visited
 * the search starts again from a new source.  Setup writes every line, as
 * building the graph does.
 *
 * Left out: the degree skew of Kronecker graphs (Graph500) and
 * direction-optimising BFS.
 */
#include "config.h"
#include "workload_impl.h"
#include "perm.h"

typedef enum { G_POP, G_OFF0, G_OFF1, G_EDGE, G_PARENT, G_SET_PARENT, G_PUSH } GraphStep;

typedef struct {
  Perm order;        /* visit order */
  uint64_t n, degree;
  uint64_t offsets_va, edges_va, parent_va, queue_va;
  uint64_t k;        /* vertices visited in this search */
  uint64_t u;        /* the vertex being visited */
  uint64_t j;        /* its edge being examined */
  uint64_t w;        /* that edge's neighbour */
  uint64_t tail;     /* queue slots written in this search */
  uint64_t key;      /* of the neighbour hash */
  GraphStep step;
  WorkloadMix discover;
} GraphGen;

enum { OWN_DEGREE };

static const WorkloadParam graph_params[] = {
  { "degree", WPARAM_COUNT, "16", NULL, 1, 1024, "out-edges of every vertex (Graph500's edge factor is 16)" },
  { NULL },
};

static gpointer graph_init(WorkloadConfig *cfg, GError **error)
{
  uint64_t degree = cfg->own[OWN_DEGREE].u;
  uint64_t per_vertex = (degree + 3) * WORKLOAD_WORD_BYTES; /* offset, edges, parent, queue slot */
  uint64_t n = (cfg->size_bytes - WORKLOAD_WORD_BYTES) / per_vertex;
  if (n < 2)
    return workload_reject(cfg, "degree", "a degree that leaves room for 2 vertices in size", error);
  GraphGen *g = g_new0(GraphGen, 1);
  g->n = n;
  g->degree = degree;
  g->offsets_va = WORKLOAD_BASE_VA;
  g->edges_va = g->offsets_va + (n + 1) * WORKLOAD_WORD_BYTES;
  g->parent_va = g->edges_va + n * degree * WORKLOAD_WORD_BYTES;
  g->queue_va = g->parent_va + n * WORKLOAD_WORD_BYTES;
  uint64_t s = cfg->seed;
  g->key = perm_splitmix64(&s);
  perm_init(&g->order, n, cfg->seed);
  workload_mix_init(&g->discover, 1.0 / (double)degree);
  g->u = perm_apply(&g->order, 0);
  g->tail = 1; /* the source is in the queue */
  return g;
}

static uint64_t neighbour(const GraphGen *g, uint64_t u, uint64_t j)
{
  uint64_t x = g->key ^ (u * g->degree + j);
  uint64_t h = perm_splitmix64(&x);
  return (uint64_t)(((unsigned __int128)h * g->n) >> 64);
}

static void graph_access(gpointer state, TraceRecord *r)
{
  GraphGen *g = state;
  const uint64_t W = WORKLOAD_WORD_BYTES;
  switch (g->step) {
  case G_POP:
    r->addr = g->queue_va + g->k * W;
    g->step = G_OFF0;
    return;
  case G_OFF0:
    r->kind = ACC_DEP_LOAD;
    r->addr = g->offsets_va + g->u * W;
    g->step = G_OFF1;
    return;
  case G_OFF1:
    r->addr = g->offsets_va + (g->u + 1) * W;
    g->j = 0;
    g->step = G_EDGE;
    return;
  case G_EDGE:
    r->addr = g->edges_va + (g->u * g->degree + g->j) * W;
    g->w = neighbour(g, g->u, g->j);
    g->step = G_PARENT;
    return;
  case G_PARENT:
    r->kind = ACC_DEP_LOAD;
    r->addr = g->parent_va + g->w * W;
    if (workload_mix_next(&g->discover) == ACC_STORE && g->tail < g->n) {
      g->step = G_SET_PARENT;
      return;
    }
    break;
  case G_SET_PARENT:
    r->kind = ACC_STORE;
    r->addr = g->parent_va + g->w * W;
    g->step = G_PUSH;
    return;
  case G_PUSH:
    r->kind = ACC_STORE;
    r->addr = g->queue_va + g->tail++ * W;
    break;
  }
  /* After an edge: the next edge, or the next vertex. */
  if (++g->j < g->degree) {
    g->step = G_EDGE;
    return;
  }
  if (++g->k == g->n) { /* every vertex visited: a new search */
    g->k = 0;
    g->tail = 1;
  }
  g->u = perm_apply(&g->order, g->k);
  g->step = G_POP;
}

const WorkloadGenerator gen_graph = {
  .name = "graph",
  .help = "breadth-first search over a random graph in CSR form (Graph500, GAP bfs)",
  .source = "Graph500 BFS kernel; GAP benchmark suite bfs (CSR graph)",
  .params = graph_params,
  .init = graph_init,
  .access = graph_access,
  .free = g_free,
};
