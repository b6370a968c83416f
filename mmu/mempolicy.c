/*
 * mempolicy.c - NUMA memory policies: the node a new user page comes from
 * (mm/mempolicy.c, Linux 6.9) and the counters /proc/vmstat keeps of it.
 *
 * Models: the policy in force for a fault (get_vma_policy: the VMA's, else
 * the process's); the node each mode chooses (policy_nodemask): local, the
 * faulting CPU's node; preferred, its node; bind, the first of its nodes in
 * the faulting CPU's zonelist; interleave and weighted interleave by the
 * interleave index of the page for a VMA policy (interleave_nid,
 * weighted_interleave_nid), round-robin per process for the process policy
 * (interleave_nodes, weighted_interleave_nodes and their il_prev /
 * il_weight countdown).  The fallback when that node is full follows the
 * zonelist: the other nodes by SLIT distance (topology_order), only the
 * policy's nodes under bind, ordered from the faulting CPU's node as
 * __alloc_pages(nid = numa_node_id(), nodemask) orders them.  numa_hit and
 * numa_miss are counted once per allocation against the node intended
 * (zone_statistics against the preferred zone), numa_interleave when an
 * interleave policy got the node it chose (NUMA_INTERLEAVE_HIT of
 * alloc_pages_mpol, which counts weighted interleave too).
 *
 * Leaves out: MPOL_PREFERRED_MANY, the mode flags (MPOL_F_STATIC_NODES,
 * MPOL_F_RELATIVE_NODES, MPOL_F_NUMA_BALANCING), home nodes, cpusets,
 * shared (shmem) policies (a shared anonymous mapping is placed as a private
 * one), mbind's MPOL_MF_MOVE (pages already placed stay), and the counting
 * of page-table and kernel allocations, which stay on the faulting CPU's
 * node and are not counted.  Where Linux keeps the process policy and the
 * interleave state per thread (task_struct), the model keeps them per
 * process: the common case, a policy set before the threads start
 * (numactl), is the same.
 */
#include "config.h"
#include "mempolicy.h"

#include <string.h>
#include "cache.h"
#include "cpu.h"

static uint64_t all_nodes(unsigned nodes)
{
  return nodes >= MEMPOLICY_MAX_NODES ? UINT64_MAX : (UINT64_C(1) << nodes) - 1;
}

gboolean mempolicy_parse(const char *text, unsigned nodes, const char *what, MemPolicy *out, GError **error)
{
  g_return_val_if_fail(text != NULL && what != NULL && out != NULL, FALSE);
  static const char *const expected = MEMPOLICY_SYNTAX_EXPECTED " (NODES like 0-3,5)";
  nodes = MIN(nodes, MEMPOLICY_MAX_NODES);
  unsigned bad = 0;
  switch (mempolicy_syntax_parse(text, nodes, out, &bad)) {
  case MEMPOLICY_SYNTAX_OK:
    return TRUE;
  case MEMPOLICY_SYNTAX_UNKNOWN_MODE:
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s '%s': unknown memory policy; expected %s", what,
                text, expected);
    return FALSE;
  case MEMPOLICY_SYNTAX_NO_NODES: {
    g_autofree char *mode = g_strndup(text, strcspn(text, ":"));
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s '%s': %s needs nodes; expected %s", what, text, mode,
                expected);
    return FALSE;
  }
  case MEMPOLICY_SYNTAX_BAD_LIST:
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s '%s': bad node list; expected nodes like 0-3,5 (ranges and single nodes separated by ',')", what,
                text);
    return FALSE;
  case MEMPOLICY_SYNTAX_NODE_LIMIT:
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s '%s': node %u does not exist on this machine of %u node(s) (0-%u); "
                "name nodes below machine.nodes or raise machine.nodes",
                what, text, bad, nodes, nodes - 1);
    return FALSE;
  case MEMPOLICY_SYNTAX_NOT_ONE_NODE:
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s '%s': preferred takes one node; expected preferred:N",
                what, text);
    return FALSE;
  }
  g_return_val_if_reached(FALSE);
}

gboolean mempolicy_parse_weights(const char *text, unsigned nodes, const char *what, uint8_t *weights,
                                 GError **error)
{
  g_return_val_if_fail(text != NULL && weights != NULL && nodes <= MEMPOLICY_MAX_NODES, FALSE);
  if (!*text) {
    memset(weights, 1, nodes); /* the system default: every node weight 1 */
    return TRUE;
  }
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  unsigned n = g_strv_length(parts);
  if (n != nodes) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s '%s': %u weight(s) for a machine of %u node(s); give one weight per node (machine.nodes), "
                "or leave it empty for 1 each",
                what, text, n, nodes);
    return FALSE;
  }
  for (unsigned i = 0; i < n; i++) {
    const char *p = g_strstrip(parts[i]);
    unsigned v;
    if (!mempolicy_syntax_number(&p, 256, &v) || *p || v == 0) {
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                  "%s '%s': weight '%s' of node %u is not 1..255 (the range of "
                  "/sys/kernel/mm/mempolicy/weighted_interleave/nodeN)",
                  what, text, parts[i], i);
      return FALSE;
    }
    weights[i] = (uint8_t)v;
  }
  return TRUE;
}

gboolean mempolicy_init(Kernel *k, GError **error)
{
  unsigned nodes = (unsigned)physmem_nodes(k->pm);
  MemPolicy p;
  if (!mempolicy_parse(settings_str(k->s, SET_NUMA_MEMPOLICY), nodes, "setting 'numa.mempolicy'", &p, error))
    return FALSE;
  k->mpol_mode = p.mode;
  k->mpol_nodes = p.nodes;
  memset(k->il_weights, 1, sizeof k->il_weights);
  return mempolicy_parse_weights(settings_str(k->s, SET_NUMA_INTERLEAVE_WEIGHTS), nodes,
                                 "setting 'numa.interleave_weights'", k->il_weights, error);
}

gboolean mempolicy_from_record(const Kernel *k, const TraceRecord *r, MemPolicy *out)
{
  if (r->arg < MPOL_DEFAULT_LOCAL || r->arg > MPOL_WEIGHTED_INTERLEAVE)
    return FALSE;
  *out = (MemPolicy){ .mode = (uint8_t)r->arg };
  if (r->arg == MPOL_DEFAULT_LOCAL)
    return r->arg2 == 0; /* MPOL_DEFAULT takes no nodes */
  out->nodes = r->arg2 & all_nodes((unsigned)physmem_nodes(k->pm));
  return out->nodes != 0;
}

MemPolicy mempolicy_effective(const Mm *mm, const Vma *v, gboolean *is_vma)
{
  gboolean vma = v && v->policy != MPOL_DEFAULT_LOCAL;
  if (is_vma)
    *is_vma = vma;
  if (vma)
    return (MemPolicy){ .mode = v->policy, .nodes = v->policy_nodes };
  return (MemPolicy){ .mode = mm->policy, .nodes = mm->policy_nodes };
}

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
static int weighted_interleave_nid(const Kernel *k, uint64_t mask, uint64_t ilx)
{
  unsigned total = 0;
  for (int n = first_node(mask); n >= 0 && n < MEMPOLICY_MAX_NODES; n++)
    if (mask & (UINT64_C(1) << n))
      total += k->il_weights[n];
  uint64_t target = ilx % total;
  int nid = first_node(mask);
  while (target >= k->il_weights[nid]) {
    target -= k->il_weights[nid];
    nid = next_node_in(nid, mask);
  }
  return nid;
}

/* interleave_nodes(): the next node after the last one. */
static int interleave_nodes(Mm *mm, uint64_t mask)
{
  int nid = next_node_in(mm->il_prev, mask);
  mm->il_prev = nid;
  return nid;
}

/* weighted_interleave_nodes(): il_prev keeps taking pages until its weight
 * is used up, then the next node starts with its own weight. */
static int weighted_interleave_nodes(const Kernel *k, Mm *mm, uint64_t mask)
{
  int node = mm->il_prev;
  if (!mm->il_weight || node < 0 || !(mask & (UINT64_C(1) << node))) {
    node = next_node_in(node, mask);
    mm->il_prev = node;
    mm->il_weight = k->il_weights[node];
  }
  mm->il_weight--;
  return node;
}

void mempolicy_place(Kernel *k, Mm *mm, const Vma *v, uint64_t va, unsigned order, unsigned cpu_node,
                     MemPlacement *out)
{
  unsigned nodes = (unsigned)physmem_nodes(k->pm);
  MemPolicy pol = mempolicy_effective(mm, v, NULL);
  uint64_t mask = pol.nodes & all_nodes(nodes);
  *out = (MemPlacement){ .node = (int)cpu_node, .from = (int)cpu_node, .allowed = all_nodes(nodes) };
  if (pol.mode != MPOL_DEFAULT_LOCAL && !mask)
    return; /* no node left: local, as the kernel's empty-mask guards do */
  switch ((TracePolicy)pol.mode) {
  case MPOL_DEFAULT_LOCAL:
    break;
  case MPOL_PREFERRED:
    out->node = out->from = first_node(mask);
    break;
  case MPOL_BIND: {
    /* The first node of the mask in the faulting CPU's zonelist. */
    const unsigned *order_row = topology_order(physmem_topology(k->pm), cpu_node);
    out->allowed = mask;
    for (unsigned i = 0; i < nodes; i++)
      if (mask & (UINT64_C(1) << order_row[i])) {
        out->node = (int)order_row[i];
        break;
      }
    break;
  }
  case MPOL_INTERLEAVE:
  case MPOL_WEIGHTED_INTERLEAVE: {
    int nid;
    gboolean weighted = pol.mode == MPOL_WEIGHTED_INTERLEAVE;
    if (v) {
      /* get_vma_policy: in a VMA the index comes from the address whether
       * the policy is the VMA's or the task's (Linux 6.9); the task's
       * round robin serves allocations outside any VMA.
       * ilx = (vm_pgoff >> order) + ((addr - vm_start) >>
       * (PAGE_SHIFT + order)), orders counted in base pages there and in
       * 4K frames here, so both shifts are 12 + order.  vm_pgoff of private
       * anonymous memory is vm_start >> PAGE_SHIFT; hugetlb memory is a
       * file mapped from offset 0. */
      unsigned shift = 12 + order;
      uint64_t pgoff_bytes = (v->flags & MAP_F_HUGETLB) ? 0 : v->start;
      uint64_t ilx = (pgoff_bytes >> shift) + ((va - v->start) >> shift);
      nid = weighted ? weighted_interleave_nid(k, mask, ilx) : interleave_nid(mask, ilx);
    } else {
      nid = weighted ? weighted_interleave_nodes(k, mm, mask) : interleave_nodes(mm, mask);
    }
    out->node = out->from = nid;
    out->interleaved = TRUE;
    break;
  }
  }
}

unsigned mempolicy_nodes(const Kernel *k, const MemPlacement *p, int *list)
{
  unsigned nodes = (unsigned)physmem_nodes(k->pm);
  const unsigned *row = topology_order(physmem_topology(k->pm), (unsigned)p->from);
  unsigned n = 0;
  list[n++] = p->node;
  for (unsigned i = 0; i < nodes; i++)
    if ((int)row[i] != p->node && (p->allowed & (UINT64_C(1) << row[i])))
      list[n++] = (int)row[i];
  return n;
}

void mempolicy_count(Cpu *cpu, const MemPlacement *p, int node)
{
  if (node == p->node) {
    cpu->ctr.c[CTR_NUMA_HIT]++;
    if (p->interleaved)
      cpu->ctr.c[CTR_NUMA_INTERLEAVE]++;
  } else {
    cpu->ctr.c[CTR_NUMA_MISS]++;
  }
}

gboolean mempolicy_alloc(Kernel *k, Cpu *cpu, const MemPlacement *p, unsigned order, MigrateType mt,
                         uint64_t *pfn)
{
  int list[MEMPOLICY_MAX_NODES];
  unsigned n = mempolicy_nodes(k, p, list);
  for (unsigned i = 0; i < n; i++)
    if (physmem_alloc_on(k->pm, list[i], order, mt, pfn)) {
      mempolicy_count(cpu, p, list[i]);
      return TRUE;
    }
  return FALSE;
}
