/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * source.h - TraceSource: where records come from.
 *
 * File readers and workload generators implement the same three operations
 * (open, next batch, close), so the engine never knows which it reads and any
 * generator can be written out as a trace file.  A source fills a caller-owned
 * batch, or lends one of its own (the optional view); it allocates nothing
 * per record.  Errors a user can cause (malformed
 * input) are GErrors in MMUSIM_TRACE_ERROR naming the file and line or offset.
 */
#ifndef MMUSIM_SOURCE_H
#define MMUSIM_SOURCE_H

#include <glib.h>
#include <stdio.h>
#include "record.h"

#define MMUSIM_TRACE_ERROR (mmusim_trace_error_quark())
GQuark mmusim_trace_error_quark(void);
typedef enum {
  TRACE_ERROR_OPEN,     /* cannot open or read the file */
  TRACE_ERROR_PARSE,    /* malformed record */
  TRACE_ERROR_FORMAT,   /* unknown or undetectable format */
  TRACE_ERROR_WORKLOAD, /* bad workload specification */
} TraceError;

#define TRACE_BATCH_MAX 4096

typedef enum {
  BATCH_THREADS_UNKNOWN, /* not looked at (every batch a source fills) */
  BATCH_THREADS_ONE,     /* one thread's: see thread_pid, thread_tid */
  BATCH_THREADS_MANY,    /* several threads', or a thread switch */
} BatchThreads;

typedef struct {
  TraceRecord rec[TRACE_BATCH_MAX];
  unsigned n;
  /* Whose records these are, when a reader ahead of the model looked
   * (trace_batch_note_threads), so that the model's thread need not. */
  BatchThreads threads;
  uint32_t thread_pid, thread_tid; /* for BATCH_THREADS_ONE; 0: any */
} TraceBatch;

typedef struct TraceSource TraceSource;

typedef struct {
  const char *name;
  /* Fill `batch` with up to TRACE_BATCH_MAX records.  Returns FALSE with
   * *error set on bad input; TRUE with batch->n == 0 at the end. */
  gboolean (*next_batch)(TraceSource *src, TraceBatch *batch, GError **error);
  void (*close)(TraceSource *src);
  /* Optional: the next batch in the source's own memory, valid until the
   * next read or the close (no copy); NULL with *error set on bad input, a
   * batch with n == 0 at the end.  Sources without it are read through
   * next_batch. */
  const TraceBatch *(*view)(TraceSource *src, GError **error);
  /* Decoding costs more than handing the records from one host core to
   * another: worth a thread of its own (traces/readahead.h).  Text parsing
   * (tens of nanoseconds a record), ChampSim's xz (hundreds) and .mtr's
   * decompression and varints (about 8) are; a generator's record (a few
   * nanoseconds) is not. */
  gboolean read_ahead;
} TraceSourceOps;

/* What a source tells the engine about accesses outside any mapping. */
typedef enum {
  UNMAPPED_SEGV,    /* text and .mtr: count a segmentation fault */
  UNMAPPED_ONDEMAND /* lackey, ChampSim: map it as anonymous rw memory */
} UnmappedRule;

struct TraceSource {
  const TraceSourceOps *ops;
  UnmappedRule unmapped;
  char *description; /* "ptrchase:size=1G,..." or the file name */
  /* Records the source will give, about (a generator's measured accesses):
   * what run's progress line counts towards; 0 when unknown. */
  uint64_t expected_records;
};

/* A failure sticks: a reader or an input that failed once fails with the
 * same error on every later call, so a caller that reads on (a sweep's
 * other engines, a test) sees the first message and nothing is decoded
 * past a bad record.  trace_failure_repeat() is TRUE, with a copy of
 * `failure` in *error, when there is one; trace_failure_keep() keeps a copy
 * of `err` in *failure and hands `err` on in *error. */
gboolean trace_failure_repeat(const GError *failure, GError **error);
void trace_failure_keep(GError **failure, GError *err, GError **error);

gboolean trace_source_next(TraceSource *src, TraceBatch *batch, GError **error);
/* The next batch: the source's own (its view) when it has one, else
 * `scratch` filled by next_batch.  Valid until the next read or the close;
 * NULL with *error set on bad input; n == 0 at the end. */
const TraceBatch *trace_source_view(TraceSource *src, TraceBatch *scratch, GError **error);
void trace_source_free(TraceSource *src);

/* TRUE when no record of `b` is a thread switch and all name one thread or
 * leave it to the current one: every nonzero pid is *pid and every nonzero
 * tid is *tid (0 when no record names one).  From b->threads when known,
 * else by a pass over the records. */
gboolean trace_batch_one_thread(const TraceBatch *b, uint32_t *pid, uint32_t *tid);
/* Keep that answer in b->threads (a decoding thread does it for the model). */
void trace_batch_note_threads(TraceBatch *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceSource, trace_source_free)

#endif
