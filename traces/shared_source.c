/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shared_source.c - one decoding pass read by several consumers (see
 * shared_source.h).
 *
 * There is no producer thread: the consumer in front decodes the next batch
 * itself when the ring has room, with the lock dropped, while the others go
 * on with batches already decoded.  One mutex and one condition per
 * SharedTrace; a consumer waits only when it is in front and either the ring
 * is full (the slowest consumer still needs the oldest batch) or another
 * consumer is decoding, or for a place among the working ones (it keeps its
 * place until it has to wait).
 *
 * Invariants of a pass, under the lock:
 *   1. batches [produced - ring, produced) are in the ring, batch s in slot
 *      s % ring, each holding one reference of its own;
 *   2. every consumer still reading (not closed, not left) is at pos >=
 *      produced - ring, so a slot is reused only once every consumer is past
 *      it; a consumer holds a reference of its own while it copies a batch
 *      or lends it to its engine (a view, until its next read), so the slot
 *      may be reused meanwhile;
 *   3. after a decoding error, consumers get it when they reach the batch
 *      that failed (pos == produced), as a run of the source alone would.
 * It leaves out any reordering: consumers read the batches in order.
 */
#include "config.h"
#include "shared_source.h"

#include <string.h>

typedef struct {
  TraceBatch b;
} SharedBatch;

typedef struct {
  unsigned pass;
  TraceSource *src;      /* the underlying input, opened by the first consumer */
  GError *open_error;    /* it could not be opened */
  SharedBatch **ring;
  uint64_t produced;     /* batches decoded */
  gboolean eof, decoding;
  GError *error;         /* decoding failed at batch `produced` */
  uint64_t *pos;         /* per consumer: the next batch it reads */
  gboolean *closed;      /* per consumer: closed its source of this pass */
} Pass;

struct SharedTrace {
  GMutex lock;
  GCond cond;
  unsigned n, ring;
  SharedTraceOpenFn open;
  void *data;
  gboolean *left;        /* per consumer */
  GHashTable *passes;    /* pass number -> Pass* (live ones) */
  uint64_t decoded;
  unsigned active_max;   /* consumers that may work on a batch at once (0: all) */
  unsigned active;       /* consumers working on a batch now */
  unsigned active_peak;  /* the most that ever worked at once */
};

typedef struct {
  TraceSource base;
  SharedTrace *st;
  Pass *p;
  unsigned idx;
  gboolean working;      /* holds one of the active_max places */
  SharedBatch *lent;     /* the batch of the last view, with a reference */
} Consumer;

/* The consumer is done with its last batch (called with the lock held). */
static void consumer_idle(Consumer *c)
{
  if (c->working) {
    c->working = FALSE;
    c->st->active--;
    g_cond_broadcast(&c->st->cond);
  }
}

/* The consumer returns a batch (or the end) to its engine: keep its place
 * among the active_max working ones, or wait for one (called with the lock
 * held).  Only consumers that work hold places, and they give them back
 * before they wait in a read or when they close, so this wait always ends.
 * Keeping the place from batch to batch, rather than giving it up at every
 * read, lets the same engines run on while they have batches: hand-offs
 * (and the host caches each brings back cold) come once per ring, when the
 * front consumers wait for the slowest. */
static void consumer_work(Consumer *c)
{
  SharedTrace *st = c->st;
  if (c->working)
    return;
  while (st->active_max && st->active >= st->active_max)
    g_cond_wait(&st->cond, &st->lock);
  st->active++;
  st->active_peak = MAX(st->active_peak, st->active);
  c->working = TRUE;
}

static void batch_unref(SharedBatch *b)
{
  if (b)
    g_atomic_rc_box_release(b);
}

static void pass_free(Pass *p)
{
  trace_source_free(p->src);
  g_clear_error(&p->open_error);
  g_clear_error(&p->error);
  g_free(p->pos);
  g_free(p->closed);
  g_free(p);
}

static void pass_destroy(SharedTrace *st, Pass *p)
{
  for (unsigned i = 0; i < st->ring; i++)
    batch_unref(p->ring[i]);
  g_free(p->ring);
  pass_free(p);
}

static gboolean consumer_done(const SharedTrace *st, const Pass *p, unsigned i)
{
  return p->closed[i] || st->left[i];
}

/* The lowest position of a consumer still reading. */
static uint64_t pass_min_pos(const SharedTrace *st, const Pass *p)
{
  uint64_t m = p->produced;
  for (unsigned i = 0; i < st->n; i++)
    if (!consumer_done(st, p, i))
      m = MIN(m, p->pos[i]);
  return m;
}

/* Free the pass when no consumer will read it any more.  Lock held. */
static void pass_maybe_drop(SharedTrace *st, Pass *p)
{
  for (unsigned i = 0; i < st->n; i++)
    if (!consumer_done(st, p, i))
      return;
  g_hash_table_remove(st->passes, GUINT_TO_POINTER(p->pass));
  pass_destroy(st, p);
}

/* The consumer's next batch, with a reference of its own (NULL at the end);
 * FALSE with *error set after a decoding error. */
static gboolean consumer_take(Consumer *c, SharedBatch **out, GError **error)
{
  SharedTrace *st = c->st;
  Pass *p = c->p;
  g_mutex_lock(&st->lock);
  for (;;) {
    uint64_t *pos = &p->pos[c->idx];
    if (*pos < p->produced) {
      SharedBatch *b = g_atomic_rc_box_acquire(p->ring[*pos % st->ring]);
      /* Only the slowest consumer's step can make room in the ring. */
      gboolean slowest = *pos == pass_min_pos(st, p);
      (*pos)++;
      if (slowest)
        g_cond_broadcast(&st->cond);
      consumer_work(c);
      g_mutex_unlock(&st->lock);
      *out = b;
      return TRUE;
    }
    if (p->error) {
      g_propagate_error(error, g_error_copy(p->error));
      consumer_work(c);
      g_mutex_unlock(&st->lock);
      return FALSE;
    }
    if (p->eof) {
      consumer_work(c);
      g_mutex_unlock(&st->lock);
      *out = NULL;
      return TRUE;
    }
    if (!p->decoding && p->produced - pass_min_pos(st, p) < st->ring) {
      p->decoding = TRUE;
      g_mutex_unlock(&st->lock);
      SharedBatch *b = g_atomic_rc_box_new(SharedBatch);
      GError *err = NULL;
      gboolean ok = trace_source_next(p->src, &b->b, &err);
      if (ok && b->b.n)
        trace_batch_note_threads(&b->b); /* once for every consumer */
      g_mutex_lock(&st->lock);
      p->decoding = FALSE;
      if (!ok) {
        p->error = err;
        batch_unref(b);
      } else if (b->b.n == 0) {
        p->eof = TRUE;
        batch_unref(b);
      } else {
        SharedBatch **slot = &p->ring[p->produced % st->ring];
        batch_unref(*slot);
        *slot = b;
        p->produced++;
        st->decoded++;
      }
      g_cond_broadcast(&st->cond);
      continue;
    }
    consumer_idle(c); /* waiting: let a consumer that has a batch work */
    g_cond_wait(&st->cond, &st->lock);
  }
}

static gboolean consumer_next(TraceSource *src, TraceBatch *batch, GError **error)
{
  SharedBatch *b;
  if (!consumer_take((Consumer *)src, &b, error))
    return FALSE;
  batch->n = 0;
  if (b) {
    memcpy(batch->rec, b->b.rec, sizeof(TraceRecord) * b->b.n);
    batch->n = b->b.n;
    batch->threads = b->b.threads;
    batch->thread_pid = b->b.thread_pid;
    batch->thread_tid = b->b.thread_tid;
    batch_unref(b);
  }
  return TRUE;
}

/* The shared batch itself, no copy: the consumer keeps a reference to it
 * until its next read or its close. */
static const TraceBatch *consumer_view(TraceSource *src, GError **error)
{
  static const TraceBatch end = { .n = 0 };
  Consumer *c = (Consumer *)src;
  batch_unref(c->lent);
  c->lent = NULL;
  if (!consumer_take(c, &c->lent, error))
    return NULL;
  return c->lent ? &c->lent->b : &end;
}

static void consumer_close(TraceSource *src)
{
  Consumer *c = (Consumer *)src;
  SharedTrace *st = c->st;
  batch_unref(c->lent);
  g_mutex_lock(&st->lock);
  consumer_idle(c);
  c->p->closed[c->idx] = TRUE;
  pass_maybe_drop(st, c->p);
  g_cond_broadcast(&st->cond);
  g_mutex_unlock(&st->lock);
  g_free(c);
}

static const TraceSourceOps consumer_ops = { "shared", consumer_next, consumer_close, consumer_view };

SharedTrace *shared_trace_new(unsigned consumers, unsigned ring, SharedTraceOpenFn open, void *data)
{
  g_return_val_if_fail(consumers >= 1 && ring >= 1, NULL);
  SharedTrace *st = g_new0(SharedTrace, 1);
  g_mutex_init(&st->lock);
  g_cond_init(&st->cond);
  st->n = consumers;
  st->ring = ring;
  st->open = open;
  st->data = data;
  st->left = g_new0(gboolean, consumers);
  st->passes = g_hash_table_new(NULL, NULL);
  return st;
}

void shared_trace_free(SharedTrace *st)
{
  if (!st)
    return;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, st->passes);
  while (g_hash_table_iter_next(&it, &k, &v))
    pass_destroy(st, v);
  g_hash_table_destroy(st->passes);
  g_free(st->left);
  g_mutex_clear(&st->lock);
  g_cond_clear(&st->cond);
  g_free(st);
}

TraceSource *shared_trace_open(SharedTrace *st, unsigned idx, unsigned pass, GError **error)
{
  g_return_val_if_fail(idx < st->n, NULL);
  g_mutex_lock(&st->lock);
  Pass *p = g_hash_table_lookup(st->passes, GUINT_TO_POINTER(pass));
  if (!p) {
    p = g_new0(Pass, 1);
    p->pass = pass;
    p->ring = g_new0(SharedBatch *, st->ring);
    p->pos = g_new0(uint64_t, st->n);
    p->closed = g_new0(gboolean, st->n);
    p->src = st->open(st->data, pass, &p->open_error);
    g_hash_table_insert(st->passes, GUINT_TO_POINTER(pass), p);
  }
  if (p->open_error) {
    g_propagate_error(error, g_error_copy(p->open_error));
    p->closed[idx] = TRUE;
    pass_maybe_drop(st, p);
    g_mutex_unlock(&st->lock);
    return NULL;
  }
  Consumer *c = g_new0(Consumer, 1);
  c->base.ops = &consumer_ops;
  c->base.unmapped = p->src->unmapped;
  c->base.description = g_strdup(p->src->description);
  c->st = st;
  c->p = p;
  c->idx = idx;
  g_mutex_unlock(&st->lock);
  return &c->base;
}

void shared_trace_leave(SharedTrace *st, unsigned idx)
{
  g_mutex_lock(&st->lock);
  st->left[idx] = TRUE;
  GList *live = g_hash_table_get_values(st->passes);
  for (GList *l = live; l; l = l->next)
    pass_maybe_drop(st, l->data);
  g_list_free(live);
  g_cond_broadcast(&st->cond);
  g_mutex_unlock(&st->lock);
}

uint64_t shared_trace_decoded(SharedTrace *st)
{
  g_mutex_lock(&st->lock);
  uint64_t n = st->decoded;
  g_mutex_unlock(&st->lock);
  return n;
}

void shared_trace_set_active(SharedTrace *st, unsigned active_max)
{
  g_mutex_lock(&st->lock);
  st->active_max = active_max;
  g_cond_broadcast(&st->cond);
  g_mutex_unlock(&st->lock);
}

unsigned shared_trace_active_peak(SharedTrace *st)
{
  g_mutex_lock(&st->lock);
  unsigned v = st->active_peak;
  g_mutex_unlock(&st->lock);
  return v;
}
