/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mtr.h - the native trace format .mtr (doc/trace-format.md, ".mtr format").
 *
 * A header (magic, version, "key value" metadata lines: what recorded the
 * trace, the command, page size, architecture, the format it came from, how
 * accesses outside mappings are treated), then blocks of records, each a zstd
 * frame of delta and varint encoded records with a CRC-32, then an index
 * (where each block starts, how many records it holds, and the summary that
 * `mmusim trace info` prints) and a 16-byte footer pointing at the index.
 * Every block starts from a fresh encoding state, so a reader can start at
 * any block the index names.
 */
#ifndef MMUSIM_MTR_H
#define MMUSIM_MTR_H

#include <stdio.h>
#include "input.h"
#include "source.h"
#include "summary.h"

#define MTR_MAGIC "\x89MTR\r\n\x1a\n" /* 8 bytes: catches text-mode and 7-bit transfers, as PNG's does */
#define MTR_MAGIC_BYTES 8
#define MTR_VERSION 1

/* ---- writing ---- */
typedef struct MtrWriter MtrWriter;

/* Create `path` ("-" is standard output).  The file is written under a
 * temporary name beside it (base/outfile.h) and gets its name only when
 * mtr_writer_close() succeeds. */
MtrWriter *mtr_writer_open(const char *path, GError **error);
/* Add a metadata line; only before the first record.  Keys are [a-z_0-9]+,
 * values one line of text. */
void mtr_writer_set_meta(MtrWriter *w, const char *key, const char *value);
gboolean mtr_writer_write(MtrWriter *w, const TraceRecord *r, GError **error);
/* Records written so far. */
uint64_t mtr_writer_records(const MtrWriter *w);
/* Bytes written so far (compressed blocks; the header once written). */
uint64_t mtr_writer_bytes(const MtrWriter *w);
/* Write the last block, the index and the footer; close, rename to the
 * file's name and free.  A failed write is a MMUSIM_SIM_ERROR /
 * SIM_ERROR_WRITE error naming the file, and leaves no file. */
gboolean mtr_writer_close(MtrWriter *w, GError **error);
/* Free without finishing the file (after an error): the temporary file is
 * removed, an older file of that name stays. */
void mtr_writer_abort(MtrWriter *w);

/* ---- reading ---- */
/* Read records from `in` (owned by the source from now on).  Checks the
 * header at once. */
TraceSource *mtr_source_from_input(TraceInput *in, GError **error);
/* Open a file and start at record `first` (0-based), seeking to its block
 * through the index. */
TraceSource *mtr_source_open(const char *path, uint64_t first, GError **error);
/* A metadata value of an open .mtr source, or NULL. */
const char *mtr_source_meta(TraceSource *src, const char *key);

typedef struct {
  uint32_t version;
  GPtrArray *meta;     /* "key value" strings, in file order */
  uint64_t blocks;
  uint64_t file_bytes;
  TraceSummary summary;
} MtrInfo;

/* Read the header and the index of a file, not the records. */
gboolean mtr_read_info(const char *path, MtrInfo *info, GError **error);
void mtr_info_clear(MtrInfo *info);

#endif
