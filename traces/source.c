/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * source.c - the TraceSource operations every reader and generator shares.
 *
 * A source is a struct that begins with TraceSource and a const table of
 * operations; this file only dispatches to the table and owns the error
 * domain of the traces/ folder, with its one rule: a failure sticks.  It leaves out everything format-specific:
 * buffering, parsing and generation live in the readers and generators.
 */
#include "config.h"
#include "source.h"

#include <string.h>

G_DEFINE_QUARK(mmusim-trace-error-quark, mmusim_trace_error)

gboolean trace_failure_repeat(const GError *failure, GError **error)
{
  if (!failure)
    return FALSE;
  g_propagate_error(error, g_error_copy(failure));
  return TRUE;
}

void trace_failure_keep(GError **failure, GError *err, GError **error)
{
  if (*failure == NULL) /* the first one stays */
    *failure = g_error_copy(err);
  g_propagate_error(error, err);
}

gboolean trace_source_next(TraceSource *src, TraceBatch *batch, GError **error)
{
  g_return_val_if_fail(src != NULL && batch != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  batch->n = 0;
  batch->threads = BATCH_THREADS_UNKNOWN;
  return src->ops->next_batch(src, batch, error);
}

const TraceBatch *trace_source_view(TraceSource *src, TraceBatch *scratch, GError **error)
{
  g_return_val_if_fail(src != NULL && scratch != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  if (src->ops->view)
    return src->ops->view(src, error);
  return trace_source_next(src, scratch, error) ? scratch : NULL;
}

void trace_source_free(TraceSource *src)
{
  if (!src)
    return;
  /* `close` frees the object itself, so take what we own first. */
  char *description = src->description;
  src->description = NULL;
  src->ops->close(src);
  g_free(description);
}

static gboolean batch_scan_threads(const TraceBatch *b, uint32_t *pid_out, uint32_t *tid_out)
{
  /* pid and tid side by side as one word: a record that names the thread
   * seen so far, or leaves both to the current one (0, 0), passes on one
   * compare. */
  G_STATIC_ASSERT(offsetof(TraceRecord, tid) == offsetof(TraceRecord, pid) + sizeof(uint32_t));
  uint32_t ids[2] = { 0, 0 };
  uint64_t both = 0;
  for (const TraceRecord *r = b->rec, *end = b->rec + b->n; r < end; r++) {
    uint64_t w;
    memcpy(&w, &r->pid, sizeof w);
    if (G_LIKELY(w == both || w == 0) && r->type != REC_THREAD)
      continue;
    if (r->type == REC_THREAD || (r->pid && ids[0] && r->pid != ids[0]) || (r->tid && ids[1] && r->tid != ids[1]))
      return FALSE;
    ids[0] = r->pid ? r->pid : ids[0];
    ids[1] = r->tid ? r->tid : ids[1];
    memcpy(&both, ids, sizeof both);
  }
  *pid_out = ids[0];
  *tid_out = ids[1];
  return TRUE;
}

gboolean trace_batch_one_thread(const TraceBatch *b, uint32_t *pid, uint32_t *tid)
{
  if (b->threads == BATCH_THREADS_ONE) {
    *pid = b->thread_pid;
    *tid = b->thread_tid;
    return TRUE;
  }
  if (b->threads == BATCH_THREADS_MANY)
    return FALSE;
  return batch_scan_threads(b, pid, tid);
}

void trace_batch_note_threads(TraceBatch *b)
{
  b->threads = batch_scan_threads(b, &b->thread_pid, &b->thread_tid) ? BATCH_THREADS_ONE : BATCH_THREADS_MANY;
}
