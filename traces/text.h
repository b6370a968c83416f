/*
 * text.h - reader of the text trace format v1 (doc/trace-format.md).
 */
#ifndef MMUSIM_TEXT_H
#define MMUSIM_TEXT_H

#include "source.h"

/* Open a text trace; path "-" reads standard input.  Lines are parsed as the
 * batches are read, so a stream of any length costs constant memory. */
TraceSource *text_source_open(const char *path, GError **error);
/* Parse from a string (tests, `explain`); `name` is used in messages. */
TraceSource *text_source_from_string(const char *name, const char *text, GError **error);

/* Write one record as a text line (no newline) into `out`; the writer keeps
 * process/thread lines implicit only when `cur_pid`/`cur_tid` match. */
void text_format_record(const TraceRecord *r, GString *out);

#endif
