/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mempolicy.c - NUMA memory policies: the node a new user page comes from
 * (mm/mempolicy.c, Linux 6.9) and the counters /proc/vmstat keeps of it.
 *
 * Models: the policy in force for a fault (get_vma_policy: the VMA's, else
 * the process's); the node each mode chooses is its row's hook in the table
 * of mempolicy_mode.h (policy_nodemask; local, bind, preferred and the
 * interleaves in mempolicy_mode.c, preferred_many in its own file), given
 * the page's interleave index (the VMA's offset) and the process's
 * interleave state.  The fallback when that node is full follows the
 * zonelist: the other nodes by SLIT distance (topology_order), only the
 * policy's nodes under bind, ordered from the faulting CPU's node as
 * __alloc_pages(nid = numa_node_id(), nodemask) orders them, and under
 * preferred_many every node after the policy's.  numa_hit and numa_miss
 * are counted once per allocation against the node intended
 * (zone_statistics against the preferred zone), numa_interleave when an
 * interleave policy got the node it chose (NUMA_INTERLEAVE_HIT of
 * alloc_pages_mpol, which counts weighted interleave too).
 *
 * Leaves out: numa_foreign, numa_local and numa_other, the mode flags
 * (MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES, MPOL_F_NUMA_BALANCING), home
 * nodes, cpusets, shared (shmem) policies (a shared anonymous mapping is placed as a private
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
#include "errors.h"

static uint64_t all_nodes(unsigned nodes)
{
  return nodes >= MEMPOLICY_MAX_NODES ? UINT64_MAX : (UINT64_C(1) << nodes) - 1;
}

gboolean mempolicy_parse(const char *text, unsigned nodes, const char *what, MemPolicy *out, GError **error)
{
  g_return_val_if_fail(text != NULL && what != NULL && out != NULL, FALSE);
  g_autofree char *expected = g_strdup_printf("%s (NODES like 0-3,5)", mempolicy_syntax_expected());
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
                strchr(text, '=') ? mempolicy_syntax_flag_expected() : expected);
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
  case MEMPOLICY_SYNTAX_BAD_FLAG:
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s '%s': the one mode flag is =balancing (MPOL_F_NUMA_BALANCING), which the kernel takes only "
                "as %s; drop the flag or use that form",
                what, text, mempolicy_syntax_flag_expected());
    return FALSE;
  case MEMPOLICY_SYNTAX_NOT_ONE_NODE: {
    g_autofree char *mode = g_strndup(text, strcspn(text, ":"));
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s '%s': %s takes one node; expected %s:N", what, text,
                mode, mode);
    return FALSE;
  }
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

/* Whether this kernel has policy p's mode and flags (kernel/version.def):
 * mpol_new and sanitize_mpol_flags of an older release refuse what it
 * lacks with EINVAL.  NULL when it has them, else the rule it lacks. */
static const KernelRuleDef *policy_missing(const Kernel *k, const MemPolicy *p)
{
  KernelRule r = N_KERNEL_RULES;
  if (p->mode == MPOL_PREFERRED_MANY)
    r = KR_MPOL_PREFERRED_MANY;
  else if (p->mode == MPOL_WEIGHTED_INTERLEAVE)
    r = KR_MPOL_WEIGHTED_INTERLEAVE;
  if (r == N_KERNEL_RULES && (p->flags & MEMPOLICY_F_BALANCING))
    r = KR_MPOL_F_NUMA_BALANCING;
  return r == N_KERNEL_RULES || kernel_has(k, r) ? NULL : kernel_rule_def(r);
}

gboolean mempolicy_init(Kernel *k, GError **error)
{
  unsigned nodes = (unsigned)physmem_nodes(k->pm);
  MemPolicy p;
  if (!mempolicy_parse(settings_str(k->s, SET_NUMA_MEMPOLICY), nodes, "setting 'numa.mempolicy'", &p, error))
    return FALSE;
  const KernelRuleDef *missing = policy_missing(k, &p);
  if (missing) {
    char v[16];
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "setting 'numa.mempolicy' '%s': Linux %s has no %s (it came in %s); "
                "set kernel.version=%s, or choose another policy",
                settings_str(k->s, SET_NUMA_MEMPOLICY), kernel_version_name(k->version, v), missing->name,
                missing->since_name, kernel_version_first_with(missing->id));
    return FALSE;
  }
  k->mpol_mode = p.mode;
  k->mpol_flags = p.flags;
  k->mpol_nodes = p.nodes;
  memset(k->il_weights, 1, sizeof k->il_weights);
  return mempolicy_parse_weights(settings_str(k->s, SET_NUMA_INTERLEAVE_WEIGHTS), nodes,
                                 "setting 'numa.interleave_weights'", k->il_weights, error);
}

gboolean mempolicy_from_record(const Kernel *k, const TraceRecord *r, MemPolicy *out)
{
  const MempolicyMode *m = r->arg >= 0 ? mempolicy_mode_by_code((uint64_t)r->arg) : NULL;
  if (!m)
    return FALSE;
  /* The readers refuse the flag with a mode that does not take it. */
  *out = (MemPolicy){ .mode = (uint8_t)m->code,
                      .flags = m->numa_balancing ? r->flags & MEMPOLICY_F_BALANCING : 0 };
  if (m->node_arg == MEMPOLICY_NODES_NONE)
    return r->arg2 == 0; /* MPOL_DEFAULT takes no nodes */
  out->nodes = r->arg2 & all_nodes((unsigned)physmem_nodes(k->pm));
  return out->nodes != 0;
}

gboolean mempolicy_in_kernel(const Kernel *k, const MemPolicy *p)
{
  return policy_missing(k, p) == NULL;
}

MemPolicy mempolicy_effective(const Mm *mm, const Vma *v, gboolean *is_vma)
{
  gboolean vma = v && v->policy != MPOL_DEFAULT_LOCAL;
  if (is_vma)
    *is_vma = vma;
  if (vma)
    return (MemPolicy){ .mode = v->policy, .flags = v->policy_flags, .nodes = v->policy_nodes };
  return (MemPolicy){ .mode = mm->policy, .flags = mm->policy_flags, .nodes = mm->policy_nodes };
}

void mempolicy_place(Kernel *k, Mm *mm, const Vma *v, uint64_t va, unsigned order, unsigned cpu_node,
                     MemPlacement *out)
{
  unsigned nodes = (unsigned)physmem_nodes(k->pm);
  MemPolicy pol = mempolicy_effective(mm, v, NULL);
  const MempolicyMode *mode = mempolicy_mode_by_code(pol.mode);
  uint64_t mask = pol.nodes & all_nodes(nodes);
  *out = (MemPlacement){ .node = (int)cpu_node, .from = (int)cpu_node, .allowed = all_nodes(nodes) };
  g_return_if_fail(mode != NULL); /* every code stored was checked against the table */
  if (mode->node_arg != MEMPOLICY_NODES_NONE && !mask)
    return; /* no node left: local, as the kernel's empty-mask guards do */
  MempolicyPlaceCtx c = {
    .mask = mask, .nodes = nodes, .cpu_node = cpu_node,
    .order = topology_order(physmem_topology(k->pm), cpu_node), .weights = k->il_weights,
    .il_prev = &mm->il_prev, .il_weight = &mm->il_weight,
  };
  if (v) {
    /* ilx = (vm_pgoff >> order) + ((addr - vm_start) >> (PAGE_SHIFT +
     * order)), orders counted in base pages there and in 4K frames here,
     * so both shifts are 12 + order.  vm_pgoff of private anonymous memory
     * is vm_start >> PAGE_SHIFT; hugetlb memory is a file mapped from
     * offset 0. */
    unsigned shift = 12 + order;
    uint64_t pgoff_bytes = (v->flags & MAP_F_HUGETLB) ? 0 : v->start;
    c.in_vma = TRUE;
    c.ilx = (pgoff_bytes >> shift) + ((va - v->start) >> shift);
  }
  mode->place(&c, out);
}

void mempolicy_then_any(const Kernel *k, const MemPlacement *p, MemPlacement *out)
{
  *out = (MemPlacement){ .node = p->from, .from = p->from, .allowed = all_nodes((unsigned)physmem_nodes(k->pm)) };
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
  /* then_any: the second try's nodes after the first's (those already
   * tried have nothing to give it). */
  for (unsigned i = 0; p->then_any && i < nodes; i++)
    if ((int)row[i] != p->node && !(p->allowed & (UINT64_C(1) << row[i])))
      list[n++] = (int)row[i];
  return n;
}

void mempolicy_count(KCpu *cpu, const MemPlacement *p, int node)
{
  /* A page of then_any's second try is counted against its preferred
   * zone, the CPU's node. */
  int want = (p->then_any && !(p->allowed & (UINT64_C(1) << node))) ? p->from : p->node;
  if (node == want) {
    cpu->ctr->c[CTR_NUMA_HIT]++;
    if (p->interleaved)
      cpu->ctr->c[CTR_NUMA_INTERLEAVE]++;
  } else {
    cpu->ctr->c[CTR_NUMA_MISS]++;
  }
}

gboolean mempolicy_alloc(Kernel *k, KCpu *cpu, const MemPlacement *p, unsigned order, MigrateType mt,
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
