/*
 * source.c - the TraceSource operations every reader and generator shares.
 *
 * A source is a struct that begins with TraceSource and a const table of
 * operations; this file only dispatches to the table and owns the error
 * domain of the traces/ folder.  It leaves out everything format-specific:
 * buffering, parsing and generation live in the readers and generators.
 */
#include "config.h"
#include "source.h"

G_DEFINE_QUARK(mmusim-trace-error-quark, mmusim_trace_error)

gboolean trace_source_next(TraceSource *src, TraceBatch *batch, GError **error)
{
  g_return_val_if_fail(src != NULL && batch != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  batch->n = 0;
  return src->ops->next_batch(src, batch, error);
}

const TraceBatch *trace_source_view(TraceSource *src, TraceBatch *scratch, GError **error)
{
  g_return_val_if_fail(src != NULL && scratch != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  if (src->ops->view)
    return src->ops->view(src, error);
  scratch->n = 0;
  return src->ops->next_batch(src, scratch, error) ? scratch : NULL;
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
