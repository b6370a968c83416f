/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mempolicy_syntax.c - reading and writing a NUMA memory policy ("local",
 * "bind:0-3,5", "preferred:1", "interleave:0,2", "weighted_interleave:0-3",
 * "preferred_many:0,2"): the mode names of the table of
 * mempolicy_mode.c and the one node-list grammar behind the setting
 * numa.mempolicy (mempolicy.c) and the trace's mempolicy records
 * (traces/text.c).  The names are the kernel's (numactl --membind,
 * --preferred, --interleave, --weighted-interleave, --preferred-many;
 * MPOL_* of
 * include/uapi/linux/mempolicy.h), node lists the cpulist/nodelist form of
 * bitmap_parselist() without its strides (0-7:2).
 *
 * Mode flags: MPOL_F_NUMA_BALANCING, written "=balancing" after the mode
 * as the kernel writes it (mpol_to_str: /proc/PID/numa_maps, tmpfs's
 * mpol= option); numactl --balancing sets it.  Leaves out: the other mode
 * flags (=static, =relative of numactl), "all", "!" negation and node
 * strides.  Which nodes exist is the caller's question:
 * a setting asks for the machine's, a trace allows all 64 and leaves the
 * rest to the kernel model when the record is applied.
 */
#include "config.h"
#include "mempolicy_syntax.h"

#include <string.h>

/* A node number longer than this is not read as a node at all (so a message
 * never shows an overflowed number): a bad list. */
#define NODE_NUMBER_CAP 1000000u

/* "name", "name:N" or "name:NODES", as the mode's list asks. */
static void append_form(GString *out, const MempolicyMode *m)
{
  static const char *const FORMS[] = {
    [MEMPOLICY_NODES_NONE] = "", [MEMPOLICY_NODES_ONE] = ":N", [MEMPOLICY_NODES_SOME] = ":NODES",
  };
  g_string_append(out, m->name);
  g_string_append(out, FORMS[m->node_arg]);
}

const char *mempolicy_syntax_expected(void)
{
  static gsize once;
  static char text[256];
  if (g_once_init_enter(&once)) {
    g_autoptr(GString) s = g_string_new(NULL);
    unsigned n = 0;
    while (mempolicy_mode_nth(n))
      n++;
    for (unsigned i = 0; i < n; i++) {
      if (i)
        g_string_append(s, i + 1 == n ? " or " : ", ");
      append_form(s, mempolicy_mode_nth(i));
    }
    g_strlcpy(text, s->str, sizeof text);
    g_once_init_leave(&once, 1);
  }
  return text;
}

const char *mempolicy_syntax_flag_expected(void)
{
  static gsize once;
  static char text[256];
  if (g_once_init_enter(&once)) {
    g_autoptr(GString) s = g_string_new(NULL);
    for (unsigned i = 0; mempolicy_mode_nth(i); i++) {
      const MempolicyMode *m = mempolicy_mode_nth(i);
      if (!m->numa_balancing)
        continue;
      if (s->len)
        g_string_append(s, " or ");
      g_string_append_printf(s, "%s=" MEMPOLICY_BALANCING_NAME ":NODES", m->name);
    }
    g_strlcpy(text, s->str, sizeof text);
    g_once_init_leave(&once, 1);
  }
  return text;
}

const char *mempolicy_syntax_mode_name(unsigned mode)
{
  const MempolicyMode *m = mempolicy_mode_by_code(mode);
  return m ? m->name : NULL;
}

gboolean mempolicy_syntax_number(const char **s, unsigned limit, unsigned *out)
{
  const char *p = *s;
  unsigned v = 0;
  if (!g_ascii_isdigit(*p))
    return FALSE;
  while (g_ascii_isdigit(*p)) {
    v = v * 10 + (unsigned)(*p++ - '0');
    if (v >= limit)
      return FALSE;
  }
  *s = p;
  *out = v;
  return TRUE;
}

/* "0-3,5" -> bits 0..3 and 5, every node below limit. */
static MempolicySyntaxError parse_node_list(const char *s, unsigned limit, uint64_t *mask, unsigned *bad_node)
{
  uint64_t m = 0;
  for (;;) {
    unsigned a, b;
    if (!mempolicy_syntax_number(&s, NODE_NUMBER_CAP, &a))
      return MEMPOLICY_SYNTAX_BAD_LIST;
    b = a;
    if (*s == '-') {
      s++;
      if (!mempolicy_syntax_number(&s, NODE_NUMBER_CAP, &b) || b < a)
        return MEMPOLICY_SYNTAX_BAD_LIST;
    }
    if (b >= limit) {
      if (bad_node)
        *bad_node = b;
      return MEMPOLICY_SYNTAX_NODE_LIMIT;
    }
    for (unsigned n = a; n <= b; n++)
      m |= UINT64_C(1) << n;
    if (*s == '\0')
      break;
    if (*s++ != ',')
      return MEMPOLICY_SYNTAX_BAD_LIST;
  }
  *mask = m;
  return MEMPOLICY_SYNTAX_OK;
}

MempolicySyntaxError mempolicy_syntax_parse(const char *text, unsigned limit, MemPolicy *out, unsigned *bad_node)
{
  g_return_val_if_fail(text != NULL && out != NULL, MEMPOLICY_SYNTAX_UNKNOWN_MODE);
  limit = MIN(limit, MEMPOLICY_MAX_NODES);
  const char *colon = strchr(text, ':');
  size_t len = colon ? (size_t)(colon - text) : strlen(text);
  const char *eq = memchr(text, '=', len);
  const MempolicyMode *m = mempolicy_mode_by_name(text, eq ? (size_t)(eq - text) : len);
  if (!m)
    return MEMPOLICY_SYNTAX_UNKNOWN_MODE;
  uint8_t flags = 0;
  if (eq) { /* a flag is judged before the list: "local=balancing" is a bad flag */
    size_t flen = len - (size_t)(eq + 1 - text);
    if (!m->numa_balancing || flen != strlen(MEMPOLICY_BALANCING_NAME) ||
        strncmp(eq + 1, MEMPOLICY_BALANCING_NAME, flen) != 0)
      return MEMPOLICY_SYNTAX_BAD_FLAG;
    flags = MEMPOLICY_F_BALANCING;
  }
  if (m->node_arg == MEMPOLICY_NODES_NONE && colon)
    return MEMPOLICY_SYNTAX_UNKNOWN_MODE; /* "local:0" is no policy */
  if (m->node_arg == MEMPOLICY_NODES_NONE) {
    *out = (MemPolicy){ .mode = (uint8_t)m->code, .flags = flags, .nodes = 0 };
    return MEMPOLICY_SYNTAX_OK;
  }
  if (!colon || !colon[1])
    return MEMPOLICY_SYNTAX_NO_NODES;
  uint64_t mask;
  MempolicySyntaxError e = parse_node_list(colon + 1, limit, &mask, bad_node);
  if (e != MEMPOLICY_SYNTAX_OK)
    return e;
  if (m->node_arg == MEMPOLICY_NODES_ONE && (mask & (mask - 1)))
    return MEMPOLICY_SYNTAX_NOT_ONE_NODE;
  *out = (MemPolicy){ .mode = (uint8_t)m->code, .flags = flags, .nodes = mask };
  return MEMPOLICY_SYNTAX_OK;
}

void mempolicy_syntax_format(GString *out, unsigned mode, unsigned flags, uint64_t nodes)
{
  const MempolicyMode *m = mempolicy_mode_by_code(mode);
  if (!m) {
    g_string_append_c(out, '?');
    return;
  }
  g_string_append(out, m->name);
  if (flags & MEMPOLICY_F_BALANCING)
    g_string_append(out, "=" MEMPOLICY_BALANCING_NAME);
  if (m->node_arg == MEMPOLICY_NODES_NONE)
    return;
  g_string_append_c(out, ':');
  /* Runs of set bits: bits 0-3 and 5 -> "0-3,5". */
  const char *sep = "";
  for (unsigned n = 0; n < MEMPOLICY_MAX_NODES; n++) {
    if (!(nodes >> n & 1))
      continue;
    unsigned end = n;
    while (end + 1 < MEMPOLICY_MAX_NODES && (nodes >> (end + 1) & 1))
      end++;
    g_string_append_printf(out, "%s%u", sep, n);
    if (end > n)
      g_string_append_printf(out, "-%u", end);
    sep = ",";
    n = end;
  }
}
