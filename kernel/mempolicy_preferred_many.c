/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mempolicy_preferred_many.c - MPOL_PREFERRED_MANY (Linux 5.15;
 * `preferred_many:NODES`, numactl --preferred-many): try a set of nodes
 * first, then any node.  The example of a mode added to the table of
 * mempolicy_mode.h.
 *
 * Models (mm/mempolicy.c, Linux 6.9): policy_nodemask() leaves the
 * allocation's node the faulting CPU's (numa_node_id()) and hands the
 * policy's nodes over as the mask; alloc_pages_preferred_many() then makes
 * two tries.  The first is __alloc_pages(nid, mask) without
 * __GFP_DIRECT_RECLAIM: the mask's nodes in the CPU's zonelist order (its
 * nodes by SLIT distance, nearest first), without reclaim, and so, for a
 * THP, without direct compaction.  The second is __alloc_pages(nid, NULL):
 * every node in the CPU's zonelist order, with the caller's full gfp (a THP
 * may compact there).  A THP skips the __GFP_THISNODE first try of other
 * modes (alloc_pages_mpol returns before it).  hugetlb pages are taken from
 * the pool of the mask's nodes first, then of any node
 * (dequeue_hugetlb_folio_vma).  Counting follows zone_statistics() against
 * each try's preferred zone: a page from the first try is numa_hit on the
 * first node of the mask in the zonelist and numa_miss on another of the
 * mask's; a page from the second try is numa_hit on the CPU's node and
 * numa_miss elsewhere.  It is not an interleave policy (no numa_interleave),
 * and NUMA balancing leaves its pages alone unless the policy carries
 * MPOL_F_NUMA_BALANCING (preferred_many=balancing), which kernels since
 * the 2024 commit "mm/numa_balancing: allow migrate on protnone reference
 * with MPOL_PREFERRED_MANY policy" take, as for bind: a page then moves to
 * the faulting CPU's node when that node is one of the mask's.  An empty mask is refused (mpol_new_nodemask:
 * EINVAL).
 *
 * Leaves out: the first try's __GFP_NOWARN and the kswapd wake-up it still
 * makes (the model has no kswapd; without __GFP_DIRECT_RECLAIM the first
 * try neither reclaims nor compacts, which is what the model can tell
 * apart), home nodes (set_mempolicy_home_node would move the zonelist's
 * origin), and the rebinding of the mask when a cpuset changes
 * (mpol_rebind_preferred).
 * The retry after the deferred-split queue is shrunk (fault.c) repeats
 * both tries, where the kernel's shrinker runs in the second try's reclaim
 * only.
 */
#include "config.h"
#include "mempolicy_mode.h"

static void preferred_many_place(const MempolicyPlaceCtx *c, MemPlacement *out)
{
  out->allowed = c->mask;
  out->node = mempolicy_mode_nearest(c, c->mask);
  out->from = (int)c->cpu_node;
  out->then_any = TRUE;
}

const MempolicyMode mempolicy_mode_preferred_many = {
  .name = "preferred_many",
  .help = "its nodes first, nearest to the faulting CPU first, then any node",
  .source = "MPOL_PREFERRED_MANY (Linux 5.15), mm/mempolicy.c; numactl --preferred-many",
  .code = MPOL_PREFERRED_MANY,
  .node_arg = MEMPOLICY_NODES_SOME,
  .place = preferred_many_place,
  .numa_balancing = TRUE,
};
