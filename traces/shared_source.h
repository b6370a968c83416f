/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shared_source.h - one decoding pass over a trace, read by several
 * consumers at once.
 *
 * A sweep runs many configurations over the same trace file; decoding it
 * (decompression, varints, text parsing) once per configuration repeats the
 * same work.  A SharedTrace decodes each batch once and hands it, refcounted
 * and immutable, to N consumer TraceSources, each read by its own engine in
 * its own thread, without a copy when read through trace_source_view; the
 * decoding consumer also notes once for all whose records a batch holds
 * (trace_batch_note_threads).  Memory is bounded: a ring of `ring` batches; the thread
 * that decodes (whichever consumer is in front) waits while the slowest
 * consumer still needs the oldest batch of the ring.
 *
 * Every consumer sees exactly the batches the underlying source produced,
 * boundaries included, so a run fed from a shared pass is bit-identical to a
 * run that opened the trace itself.
 *
 * Passes: consumer i opens pass p for its repeat p; each pass is a fresh
 * decoding of the input (the open callback is called once per pass).
 * Deadlock rule: every consumer that has not left must eventually read the
 * pass (or close its source, or leave): the N consumers must run
 * concurrently, so give them at least N threads.  To bound the CPUs they
 * use, shared_trace_set_active lets only so many work on a batch at once
 * (a consumer works from the batch it was given until it has to wait in a
 * read, or its close: decoding counts, waiting for the ring or for another
 * consumer's decoding does not).
 *
 * Thread safety: every function may be called from any thread, except
 * shared_trace_free, once every consumer is closed.
 */
#ifndef MMUSIM_SHARED_SOURCE_H
#define MMUSIM_SHARED_SOURCE_H

#include <glib.h>
#include "source.h"

/* Batches a shared pass keeps decoded ahead of its slowest consumer: enough
 * that consumers of slightly different speeds rarely wait for each other
 * (8 batches of 4096 records are 1.5 MiB). */
#define SHARED_TRACE_RING 8

typedef struct SharedTrace SharedTrace;

/* Open the underlying input for pass `pass`. */
typedef TraceSource *(*SharedTraceOpenFn)(void *data, unsigned pass, GError **error);

SharedTrace *shared_trace_new(unsigned consumers, unsigned ring, SharedTraceOpenFn open, void *data);
void shared_trace_free(SharedTrace *st);

/* Consumer `idx`'s source for pass `pass`; the first consumer to open a pass
 * opens the input.  NULL with error set when the input cannot be opened. */
TraceSource *shared_trace_open(SharedTrace *st, unsigned idx, unsigned pass, GError **error);

/* Consumer idx opens no further pass (its run finished, ran out of memory or
 * failed): the others stop waiting for it. */
void shared_trace_leave(SharedTrace *st, unsigned idx);

/* At most `active_max` consumers work on a batch at once (0: no bound). */
void shared_trace_set_active(SharedTrace *st, unsigned active_max);
/* The most consumers that ever worked on a batch at once. */
unsigned shared_trace_active_peak(SharedTrace *st);

/* Batches decoded so far over every pass (each decoded once). */
uint64_t shared_trace_decoded(SharedTrace *st);

#endif
