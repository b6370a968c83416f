/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mempolicy_mode.h - the NUMA memory policy modes as one table: each row is
 * a mode's name, its trace code, what node list it takes and the hook that
 * places a new page under it.  The setting numa.mempolicy, the text trace
 * reader and writer (mempolicy_syntax.c), the .mtr reader's check
 * (traces/mtr.c) and the kernel model (mempolicy_place) all read this table.
 *
 * A mode's hook sees a MempolicyPlaceCtx, not the kernel: the policy's node
 * mask cut to the machine, the faulting CPU's node and its distance order,
 * the page's interleave index, the process's interleave state.  It fills a
 * MemPlacement, which mempolicy_alloc(), thp_alloc() and hugetlb_alloc()
 * follow.  So the table, like the grammar, needs nothing of the kernel
 * model, and the trace tools link it alone.
 *
 * Adding a mode: one file defining a MempolicyMode (the example is
 * mempolicy_preferred_many.c), its extern below, its TracePolicy code at
 * the end of the enum in base/record.h (a code is never reused: .mtr
 * files keep it), its row in MODES[] of mempolicy_mode.c, and the file in
 * libmmusim_a_SOURCES and FUZZ_LIBSRC of Makefile.am (doc/ARCHITECTURE.md,
 * "add a memory policy mode").
 */
#ifndef MMUSIM_MEMPOLICY_MODE_H
#define MMUSIM_MEMPOLICY_MODE_H

#include <glib.h>
#include <stdint.h>
#include "record.h"
#include "registry.h"

/* Nodes a policy can name: the bits of a uint64_t node mask (MAX_NUMNODES
 * of the model; machine.nodes is at most this). */
#define MEMPOLICY_MAX_NODES 64

/* Where a new page of 2^order 4K frames goes. */
typedef struct MemPlacement {
  int node;             /* node to try first (the preferred zone's node) */
  int from;             /* the node whose distance order the fallback follows:
                         * `node`, except under bind and preferred_many, where
                         * it is the faulting CPU's node (its zonelist
                         * filtered by the mask) */
  uint64_t allowed;     /* nodes it may come from (bind), all nodes otherwise */
  gboolean interleaved; /* placed by an interleave policy (numa_interleave) */
  gboolean then_any;    /* the allowed nodes are a first try without reclaim
                         * or compaction; when none has the memory, every node
                         * nearest to `from` first, counted against `from`
                         * (mempolicy_then_any; preferred_many) */
} MemPlacement;

/* The node list a mode takes (mpol_new's checks).  No mode takes an empty
 * list: the kernel's MPOL_PREFERRED with no nodes is MPOL_LOCAL, written
 * `local` here. */
typedef enum {
  MEMPOLICY_NODES_NONE, /* no list at all ("local"; MPOL_DEFAULT refuses nodes) */
  MEMPOLICY_NODES_ONE,  /* exactly one node ("preferred:2") */
  MEMPOLICY_NODES_SOME, /* one node or more ("bind:0-3,5") */
} MempolicyNodeArg;

/* What a mode's hook may look at.  mask is the policy's nodes cut to the
 * machine's, never empty for a mode that takes nodes (the caller falls back
 * to local first, as the kernel's empty-mask guards do). */
typedef struct {
  uint64_t mask;            /* the policy's nodes on this machine */
  unsigned nodes;           /* the machine's nodes */
  unsigned cpu_node;        /* the faulting CPU's node (numa_node_id()) */
  const unsigned *order;    /* all nodes by SLIT distance from cpu_node,
                             * nearest first (its zonelist) */
  gboolean in_vma;          /* the page lies in a VMA: ilx is its interleave index */
  uint64_t ilx;             /* (vm_pgoff >> order) + ((addr - vm_start) >> (PAGE_SHIFT + order)) */
  const uint8_t *weights;   /* numa.interleave_weights, one per node */
  int *il_prev;             /* the process's round-robin node (-1 before the first) */
  unsigned *il_weight;      /* pages *il_prev still takes under weighted interleave */
} MempolicyPlaceCtx;

/* A mode: one row of the registry in mempolicy_mode.c (base/registry.h). */
typedef struct MempolicyMode {
  REGISTRY_ROW;              /* name: as numactl and the kernel's docs spell it, lower case */
  TracePolicy code;          /* the trace record's number for it (and .mtr's) */
  MempolicyNodeArg node_arg; /* the node list it takes */
  /* Whether it takes MPOL_F_NUMA_BALANCING (written MODE=balancing):
   * sanitize_mpol_flags refuses the flag with any other mode (EINVAL). */
  gboolean numa_balancing;
  /* Fill *out, which holds the local placement on entry (node and from the
   * CPU's node, all nodes allowed): policy_nodemask() and the node the
   * allocation starts from.  May advance the interleave state. */
  void (*place)(const MempolicyPlaceCtx *c, MemPlacement *out);
} MempolicyMode;

extern const MempolicyMode mempolicy_mode_local;
extern const MempolicyMode mempolicy_mode_bind;
extern const MempolicyMode mempolicy_mode_preferred;
extern const MempolicyMode mempolicy_mode_interleave;
extern const MempolicyMode mempolicy_mode_weighted_interleave;
extern const MempolicyMode mempolicy_mode_preferred_many;

/* The i-th row of the table (i from 0), NULL past the end: the order of
 * lists in messages and help. */
const MempolicyMode *mempolicy_mode_nth(unsigned i);

/* The mode of trace code `code`, NULL when none has it. */
const MempolicyMode *mempolicy_mode_by_code(uint64_t code);

/* The mode named by the first `len` bytes of name, NULL when none is. */
const MempolicyMode *mempolicy_mode_by_name(const char *name, size_t len);

/* Whether node mask `nodes` suits the mode's list: empty for NONE, one bit
 * for ONE, any bit for SOME.  The check of a .mtr record. */
gboolean mempolicy_mode_nodes_ok(const MempolicyMode *m, uint64_t nodes);

/* The first node of mask in the CPU's zonelist (c->order): the node bind and
 * preferred_many try first.  -1 when mask has none of the machine's nodes. */
int mempolicy_mode_nearest(const MempolicyPlaceCtx *c, uint64_t mask);

#endif
