/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * text.h - reader of the text trace format v1 (doc/trace-format.md).
 */
#ifndef MMUSIM_TEXT_H
#define MMUSIM_TEXT_H

#include "input.h"
#include "source.h"

/* The first line a writer gives a text trace (a comment to the reader);
 * format detection takes a file that starts with it for text. */
#define TEXT_TRACE_HEADER "# mmusim text trace v1"

/* Open a text trace; path "-" reads standard input.  Lines are parsed as the
 * batches are read, so a stream of any length costs constant memory. */
TraceSource *text_source_open(const char *path, GError **error);
/* Read from an input, which the source owns from now on. */
TraceSource *text_source_from_input(TraceInput *in);
/* Parse from a string (tests, `explain`); `name` is used in messages. */
TraceSource *text_source_from_string(const char *name, const char *text, GError **error);

/* Write one record as a text line (no newline) into `out`; the writer keeps
 * process/thread lines implicit only when `cur_pid`/`cur_tid` match. */
void text_format_record(const TraceRecord *r, GString *out);

/* ---- additions ---------------------------------------------------------
 *
 * text_format_record appends the canonical line of one record and leaves the
 * process and thread implicit: a reader gives the line the pid and tid of the
 * `process`/`thread` lines above it.  A REC_THREAD record is itself such a
 * line: (P, 1, cpu -1) is written `process P`, any other `thread T [cpu C]`.
 *
 * TextWriter is the stateful writer that makes the implicit context explicit:
 * it remembers the current pid and tid (1 and 1, the reader's defaults) and
 * writes a `process`/`thread` line before a record whose pid or tid differ.
 * Reading its output back gives the same records, plus a REC_THREAD for each
 * context line it had to add.
 */
typedef struct {
  uint32_t pid, tid;
} TextWriter;

void text_writer_init(TextWriter *w);
/* Append `r` as one or more newline-terminated lines. */
void text_writer_write(TextWriter *w, const TraceRecord *r, GString *out);

#endif
