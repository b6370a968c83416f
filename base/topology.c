/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology.c - parse and check the SLIT matrix, order nodes by distance.
 */
#include "config.h"
#include "topology.h"

#include <stdlib.h>
#include <string.h>
#include "errors.h"

/* SLIT entries are one byte; 255 means unreachable, which Linux rejects. */
#define SLIT_MAX_DISTANCE 254

/* An error in numa.distances, named with the origin of its value. */
static gboolean bad(const Settings *s, GError **error, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean bad(const Settings *s, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *prefix = settings_prefix(s, SET_NUMA_DISTANCES);
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%ssetting 'numa.distances' cannot be '%s': %s", prefix,
              settings_str(s, SET_NUMA_DISTANCES), msg);
  return FALSE;
}

static gboolean parse_matrix(Topology *t, const Settings *s, const char *text, GError **error)
{
  unsigned n = t->nodes;
  g_auto(GStrv) rows = g_strsplit(text, ";", -1);
  if (g_strv_length(rows) != n) {
    g_autofree char *nodes = settings_blame(s, SET_MACHINE_NODES);
    return bad(s, error, "%u %s for %s; write one row per node, rows separated by ';'", g_strv_length(rows),
               g_strv_length(rows) == 1 ? "row" : "rows", nodes);
  }
  for (unsigned a = 0; a < n; a++) {
    g_auto(GStrv) cols = g_strsplit(rows[a], ",", -1);
    if (g_strv_length(cols) != n)
      return bad(s, error, "row %u has %u %s for %u nodes; write one distance per node, separated by ','", a,
                 g_strv_length(cols), g_strv_length(cols) == 1 ? "entry" : "entries", n);
    for (unsigned b = 0; b < n; b++) {
      char *tok = g_strstrip(cols[b]);
      char *end;
      long v = strtol(tok, &end, 10);
      if (!*tok || *end)
        return bad(s, error, "row %u entry %u '%s' is not a whole number", a, b, tok);
      if (a == b && v != TOPOLOGY_LOCAL_DISTANCE)
        return bad(s, error, "row %u: a node's distance to itself must be %d, not %ld", a, TOPOLOGY_LOCAL_DISTANCE, v);
      if (a != b && (v <= TOPOLOGY_LOCAL_DISTANCE || v > SLIT_MAX_DISTANCE))
        return bad(s, error, "row %u entry %u: %ld is out of range; distances between nodes are %d..%d", a, b, v,
                   TOPOLOGY_LOCAL_DISTANCE + 1, SLIT_MAX_DISTANCE);
      t->dist[a * n + b] = (unsigned)v;
    }
  }
  return TRUE;
}

Topology *topology_new(const Settings *s, GError **error)
{
  g_autoptr(Topology) t = g_new0(Topology, 1);
  t->nodes = (unsigned)settings_int(s, SET_MACHINE_NODES);
  t->cpus_per_node = (unsigned)settings_int(s, SET_MACHINE_CPUS_PER_NODE);
  if ((uint64_t)t->nodes * t->cpus_per_node > TOPOLOGY_MAX_CPUS) {
    g_autofree char *nodes = settings_blame(s, SET_MACHINE_NODES);
    g_autofree char *per = settings_blame(s, SET_MACHINE_CPUS_PER_NODE);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s x %s make %" G_GUINT64_FORMAT " CPUs, more than the %d a machine may have (Linux's largest NR_CPUS); "
                "give fewer nodes or fewer CPUs per node",
                nodes, per, (uint64_t)t->nodes * t->cpus_per_node, TOPOLOGY_MAX_CPUS);
    return NULL;
  }
  unsigned n = t->nodes;
  t->dist = g_new(unsigned, (gsize)n * n);
  t->order = g_new(unsigned, (gsize)n * n);
  const char *text = settings_str(s, SET_NUMA_DISTANCES);
  if (text && *text) {
    if (!parse_matrix(t, s, text, error))
      return NULL;
  } else {
    unsigned remote = (unsigned)settings_int(s, SET_NUMA_REMOTE_DISTANCE);
    for (unsigned a = 0; a < n; a++)
      for (unsigned b = 0; b < n; b++)
        t->dist[a * n + b] = a == b ? TOPOLOGY_LOCAL_DISTANCE : remote;
  }
  /* Insertion sort by distance, stable, so ties keep ascending node order. */
  for (unsigned a = 0; a < n; a++) {
    unsigned *row = &t->order[a * n];
    for (unsigned i = 0; i < n; i++) {
      unsigned j = i, d = t->dist[a * n + i];
      for (; j > 0 && t->dist[a * n + row[j - 1]] > d; j--)
        row[j] = row[j - 1];
      row[j] = i;
    }
  }
  return g_steal_pointer(&t);
}

void topology_free(Topology *t)
{
  if (!t)
    return;
  g_free(t->dist);
  g_free(t->order);
  g_free(t);
}
