/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mempolicy_syntax.h - the written form of a NUMA memory policy, one
 * grammar for the setting numa.mempolicy and the trace records
 * `mempolicy ADDR LEN POLICY` / `mempolicy process POLICY`:
 *
 *   POLICY = local | bind[=balancing]:NODES | preferred:N | interleave:NODES
 *          | weighted_interleave:NODES | preferred_many:NODES
 *   NODES  = RUN[,RUN]...    RUN = node | node-node (low first)
 *
 * `=balancing` is the mode flag MPOL_F_NUMA_BALANCING (numactl --balancing):
 * NUMA balancing may then move the range's pages between the policy's
 * nodes (kernel/numa_balance.c).  Only a mode whose row says so takes it.
 *
 * The modes, their names and the list each takes are the rows of the table
 * in mempolicy_mode.h; this file holds the grammar around them.  A node is
 * decimal.  A mode taking one node takes a list naming one (preferred:2,
 * also preferred:2-2).  The parser reports what is wrong as a kind and the
 * offending node, and each caller words the message in its own style (a
 * setting names itself and the machine, a trace line its file and line).
 * It needs nothing of the kernel model, so the trace reader uses it alone.
 */
#ifndef MMUSIM_MEMPOLICY_SYNTAX_H
#define MMUSIM_MEMPOLICY_SYNTAX_H

#include <glib.h>
#include <stdint.h>
#include "mempolicy_mode.h"

/* What the policies look like, for "expected ..." in messages: "local,
 * bind:NODES, preferred:N, ... or preferred_many:NODES", from the table. */
const char *mempolicy_syntax_expected(void);

typedef struct {
  uint8_t mode;   /* TracePolicy */
  uint8_t flags;  /* MEMPOLICY_F_* */
  uint64_t nodes; /* node mask (a mode taking one node: one bit; local: 0) */
} MemPolicy;

/* MemPolicy.flags: MPOL_F_NUMA_BALANCING, with which the kernel sets
 * MPOL_F_MOF | MPOL_F_MORON (sanitize_mpol_flags).  The same bit as the
 * trace record's (base/record.h), so that a record's flags give it by a
 * mask. */
enum { MEMPOLICY_F_BALANCING = MPOL_F_BALANCING };
#define MEMPOLICY_BALANCING_NAME "balancing"

/* What mempolicy_syntax_parse found wrong. */
typedef enum {
  MEMPOLICY_SYNTAX_OK,
  MEMPOLICY_SYNTAX_UNKNOWN_MODE, /* not local nor MODE:..., e.g. "spread", "local:0" */
  MEMPOLICY_SYNTAX_NO_NODES,     /* a mode that takes nodes with none: "bind", "bind:" */
  MEMPOLICY_SYNTAX_BAD_LIST,     /* NODES not like 0-3,5 (empty run, 3-1, letters) */
  MEMPOLICY_SYNTAX_NODE_LIMIT,   /* a node at or above the limit; *bad_node says which */
  MEMPOLICY_SYNTAX_NOT_ONE_NODE, /* a mode taking one node (preferred) given more */
  MEMPOLICY_SYNTAX_BAD_FLAG,     /* =balancing on a mode that does not take it, or +other */
} MempolicySyntaxError;

/* Parse `text` (all of it) into *out.  Nodes must be below `limit` (at most
 * MEMPOLICY_MAX_NODES: the machine's nodes for a setting, MEMPOLICY_MAX_NODES
 * for a trace).  On MEMPOLICY_SYNTAX_NODE_LIMIT, *bad_node (may be NULL) is
 * the node: the upper end of the run that went over.  The mode name is
 * checked first, then the list run by run (a run over the limit is
 * reported before a bad run after it), then the one node of a mode that
 * takes one.
 * *out is written only on success. */
MempolicySyntaxError mempolicy_syntax_parse(const char *text, unsigned limit, MemPolicy *out, unsigned *bad_node);

/* What takes "=balancing", for messages: "bind=balancing:NODES", from the
 * table (the rows with numa_balancing, joined by " or "). */
const char *mempolicy_syntax_flag_expected(void);

/* The name of mode (TracePolicy) as written ("interleave"), NULL when mode
 * is none. */
const char *mempolicy_syntax_mode_name(unsigned mode);

/* Read a decimal number below `limit` at *s and move *s past it; FALSE
 * (*s unmoved) when there is no digit or the number reaches the limit.
 * Node numbers, and the weights of numa.interleave_weights. */
gboolean mempolicy_syntax_number(const char **s, unsigned limit, unsigned *out);

/* Append the policy as mempolicy_syntax_parse reads it: "local",
 * "interleave:0-3,5", "bind=balancing:0,1"; a mode that is none is written
 * "?". */
void mempolicy_syntax_format(GString *out, unsigned mode, unsigned flags, uint64_t nodes);

#endif
