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

typedef struct {
  TraceRecord rec[TRACE_BATCH_MAX];
  unsigned n;
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
};

gboolean trace_source_next(TraceSource *src, TraceBatch *batch, GError **error);
/* The next batch: the source's own (its view) when it has one, else
 * `scratch` filled by next_batch.  Valid until the next read or the close;
 * NULL with *error set on bad input; n == 0 at the end. */
const TraceBatch *trace_source_view(TraceSource *src, TraceBatch *scratch, GError **error);
void trace_source_free(TraceSource *src);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceSource, trace_source_free)

#endif
