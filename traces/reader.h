/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reader.h - what every trace file reader shares: the input it decodes, the
 * name its messages give, the first error, and the TraceSource operations
 * around its decoder.
 *
 * A reader's struct begins with a TraceReader, its ops table is a
 * TraceReaderOps made with TRACE_READER_OPS, and it writes two hooks: `fill`
 * decodes the next records into a batch, `clear` frees what the reader owns
 * besides.  trace_reader_next_batch() keeps the skeleton every reader had
 * written out: an empty batch, the first failure repeated to every later
 * call (trace_failure_repeat), the failure of `fill` kept (records decoded
 * before it stay in the batch; the caller stops).  trace_reader_close()
 * frees the input, the name, the failure and the reader.  Left out: opening
 * (each reader's *_source_open picks whether the input is decompressed, and
 * .mtr reads its header before it is a source) and buffering, which differs
 * by format (lines, 64-byte records, compressed blocks).
 */
#ifndef MMUSIM_READER_H
#define MMUSIM_READER_H

#include <glib.h>
#include "input.h"
#include "source.h"

typedef struct TraceReader TraceReader;

typedef struct {
  /* First, so that TraceSource.ops points at the whole table: name and
   * read_ahead are the reader's, next_batch and close trace_reader's. */
  TraceSourceOps source;
  /* Decode up to TRACE_BATCH_MAX records into `batch` (empty on entry).
   * TRUE with batch->n == 0 at the end; FALSE with *error set on bad
   * input, the records before it left in the batch.  `error` is never
   * NULL (the records loop may test *error); `fill` is called no more
   * after it failed. */
  gboolean (*fill)(TraceReader *rd, TraceBatch *batch, GError **error);
  /* Free what the reader owns beyond its TraceReader; NULL for nothing. */
  void (*clear)(TraceReader *rd);
} TraceReaderOps;

#define TRACE_READER_OPS(name, read_ahead, fill, clear) \
  { { (name), trace_reader_next_batch, trace_reader_close, NULL, (read_ahead) }, (fill), (clear) }

struct TraceReader {
  TraceSource base;
  TraceInput *in;   /* owned; NULL for a reader of a string (text_source_from_string) */
  char *name;       /* the input's name, in messages */
  GError *failure;  /* the first error, repeated by every later call */
  GHashTable *paths; /* the file names of its mmap records (trace_path_intern), or NULL */
};

/* Start a reader of `in` (taken over; may be NULL) named `name`, which is
 * also the source's description. */
void trace_reader_init(TraceReader *rd, const TraceReaderOps *ops, UnmappedRule unmapped, TraceInput *in,
                       const char *name);
gboolean trace_reader_next_batch(TraceSource *src, TraceBatch *batch, GError **error);
void trace_reader_close(TraceSource *src);

/* The one copy in *set (made on first use; free it with
 * g_hash_table_destroy) of the len bytes at s, which hold no NUL: what a
 * source gives as TraceRecord.path, owned by the source.  A mapping's file
 * name recurs with every mapping of the file; one copy serves them all. */
const char *trace_path_intern(GHashTable **set, const char *s, size_t len);

#endif
