/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reader.c - the TraceSource operations of a trace file reader around its
 * decoder (reader.h): a failure sticks, and closing frees what every reader
 * holds.  Nothing here is format-specific.
 */
#include "config.h"
#include "reader.h"

void trace_reader_init(TraceReader *rd, const TraceReaderOps *ops, UnmappedRule unmapped, TraceInput *in,
                       const char *name)
{
  rd->base.ops = &ops->source;
  rd->base.unmapped = unmapped;
  rd->base.description = g_strdup(name);
  rd->in = in;
  rd->name = g_strdup(name);
  rd->failure = NULL;
  rd->paths = NULL;
}

gboolean trace_reader_next_batch(TraceSource *src, TraceBatch *batch, GError **error)
{
  TraceReader *rd = (TraceReader *)src;
  const TraceReaderOps *ops = (const TraceReaderOps *)src->ops;
  batch->n = 0;
  if (trace_failure_repeat(rd->failure, error))
    return FALSE;
  GError *err = NULL;
  if (!ops->fill(rd, batch, &err)) {
    trace_failure_keep(&rd->failure, err, error);
    return FALSE;
  }
  return TRUE;
}

void trace_reader_close(TraceSource *src)
{
  TraceReader *rd = (TraceReader *)src;
  const TraceReaderOps *ops = (const TraceReaderOps *)src->ops;
  if (ops->clear)
    ops->clear(rd);
  trace_input_free(rd->in);
  g_free(rd->name);
  g_clear_error(&rd->failure);
  if (rd->paths)
    g_hash_table_destroy(rd->paths);
  g_free(rd);
}

const char *trace_path_intern(GHashTable **set, const char *s, size_t len)
{
  if (!*set)
    *set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *probe = g_strndup(s, len);
  const char *kept = g_hash_table_lookup(*set, probe);
  if (!kept) {
    kept = probe;
    g_hash_table_add(*set, g_steal_pointer(&probe));
  }
  return kept;
}
