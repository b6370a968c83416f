/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * readahead.c - a source decoded in a thread of its own (see readahead.h).
 *
 * One producer (the decoding thread) and one reader share a ring of
 * batches under one mutex:
 *   - batches [read, decoded) are full and unread, batch s in slot s % ring;
 *   - the slot of batch `read - 1` is the reader's (its view) until the
 *     reader's next read or its close, so the producer fills a slot only
 *     while decoded - read < ring - 1 (one slot stays with the reader);
 *   - `done` is set once the producer met the end or an error (kept in
 *     `error`); the reader gets it after every batch decoded before it, as
 *     from the source alone.
 * The lock is held only to move the counters: decoding and reading happen
 * outside it, on slots the other side does not touch.
 *
 * Each side sleeps on a condition of its own and is signalled only when it
 * sleeps: a wake-up is a system call, and with one per batch on each side
 * they cost a few per cent of an .mtr replay.  A producer that found the
 * ring full sleeps until `refill` slots are free, so that it is woken once
 * for several batches (it decodes faster than the model reads, or it never
 * waits).
 */
#include "config.h"
#include "readahead.h"

#include <string.h>

typedef struct {
  TraceSource base;
  TraceSource *inner;
  GThread *thread;
  GMutex lock;
  GCond producer_cond;   /* the producer sleeps on it */
  GCond reader_cond;     /* the reader sleeps on it */
  TraceBatch *ring;
  unsigned n;            /* slots */
  unsigned refill;       /* free slots that wake a producer waiting for one */
  uint64_t decoded;      /* batches the producer filled */
  uint64_t read;         /* batches the reader took */
  gboolean producer_waits, reader_waits;
  gboolean done;         /* the producer met the end or an error */
  gboolean stop;         /* the reader is gone: stop decoding */
  GError *error;         /* why decoding stopped, if it failed */
} ReadAhead;

static const TraceSourceOps readahead_ops;

static gpointer producer(gpointer data)
{
  ReadAhead *ra = data;
  g_mutex_lock(&ra->lock);
  for (;;) {
    if (!ra->stop && ra->decoded - ra->read >= ra->n - 1) {
      ra->producer_waits = TRUE;
      while (!ra->stop && ra->decoded - ra->read > ra->n - 1 - ra->refill)
        g_cond_wait(&ra->producer_cond, &ra->lock);
      ra->producer_waits = FALSE;
    }
    if (ra->stop)
      break;
    TraceBatch *b = &ra->ring[ra->decoded % ra->n];
    g_mutex_unlock(&ra->lock);
    GError *err = NULL;
    gboolean ok = trace_source_next(ra->inner, b, &err);
    if (ok && b->n)
      trace_batch_note_threads(b); /* here rather than in the model's thread */
    g_mutex_lock(&ra->lock);
    if (!ok) {
      ra->error = err;
      ra->done = TRUE;
    } else if (b->n == 0) {
      ra->done = TRUE;
    } else {
      ra->decoded++;
    }
    if (ra->reader_waits)
      g_cond_signal(&ra->reader_cond);
    if (ra->done)
      break;
  }
  g_mutex_unlock(&ra->lock);
  return NULL;
}

static const TraceBatch *readahead_view(TraceSource *src, GError **error)
{
  ReadAhead *ra = (ReadAhead *)src;
  static const TraceBatch end = { .n = 0 };
  const TraceBatch *b = &end;
  g_mutex_lock(&ra->lock);
  if (ra->decoded == ra->read && !ra->done && !ra->stop) {
    ra->reader_waits = TRUE;
    while (ra->decoded == ra->read && !ra->done && !ra->stop)
      g_cond_wait(&ra->reader_cond, &ra->lock);
    ra->reader_waits = FALSE;
  }
  if (ra->decoded > ra->read) {
    b = &ra->ring[ra->read % ra->n];
    ra->read++;
    /* The previous batch is given back: its slot may be filled again. */
    if (ra->producer_waits && ra->decoded - ra->read <= ra->n - 1 - ra->refill)
      g_cond_signal(&ra->producer_cond);
  } else if (ra->error) {
    g_propagate_error(error, g_error_copy(ra->error));
    b = NULL;
  }
  g_mutex_unlock(&ra->lock);
  return b;
}

static gboolean readahead_next(TraceSource *src, TraceBatch *batch, GError **error)
{
  const TraceBatch *b = readahead_view(src, error);
  if (b == NULL)
    return FALSE;
  memcpy(batch->rec, b->rec, b->n * sizeof b->rec[0]);
  batch->n = b->n;
  batch->threads = b->threads;
  batch->thread_pid = b->thread_pid;
  batch->thread_tid = b->thread_tid;
  return TRUE;
}

/* Stop the producer and wait for it (it ends after the batch it decodes). */
static void readahead_join(ReadAhead *ra)
{
  if (ra->thread == NULL)
    return;
  g_mutex_lock(&ra->lock);
  ra->stop = TRUE;
  g_cond_signal(&ra->producer_cond);
  g_mutex_unlock(&ra->lock);
  g_thread_join(ra->thread);
  ra->thread = NULL;
}

static void readahead_close(TraceSource *src)
{
  ReadAhead *ra = (ReadAhead *)src;
  readahead_join(ra);
  trace_source_free(ra->inner);
  g_clear_error(&ra->error);
  g_mutex_clear(&ra->lock);
  g_cond_clear(&ra->producer_cond);
  g_cond_clear(&ra->reader_cond);
  g_free(ra->ring);
  g_free(ra);
}

static const TraceSourceOps readahead_ops = { "readahead", readahead_next, readahead_close, readahead_view, FALSE };

TraceSource *readahead_source_new(TraceSource *inner, unsigned ring)
{
  g_return_val_if_fail(inner != NULL, NULL);
  ring = MAX(ring, 2u); /* the reader's slot and one to fill */
  ReadAhead *ra = g_new0(ReadAhead, 1);
  ra->base.ops = &readahead_ops;
  ra->base.unmapped = inner->unmapped;
  ra->base.description = g_strdup(inner->description);
  ra->base.expected_records = inner->expected_records;
  ra->inner = inner;
  ra->n = ring;
  ra->refill = ring / 2; /* 1 to ring - 1 */
  ra->ring = g_new(TraceBatch, ring);
  g_mutex_init(&ra->lock);
  g_cond_init(&ra->producer_cond);
  g_cond_init(&ra->reader_cond);
  ra->thread = g_thread_new("readahead", producer, ra);
  return &ra->base;
}

TraceSource *readahead_source_finish(TraceSource *src)
{
  g_return_val_if_fail(src != NULL, NULL);
  if (src->ops != &readahead_ops)
    return src;
  ReadAhead *ra = (ReadAhead *)src;
  readahead_join(ra);
  return ra->inner;
}
