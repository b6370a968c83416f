/*
 * trace_format.h - opening a trace file of any format, named or detected.
 */
#ifndef MMUSIM_TRACE_FORMAT_H
#define MMUSIM_TRACE_FORMAT_H

#include "input.h"
#include "source.h"

typedef enum {
  TRACE_FORMAT_AUTO,
  TRACE_FORMAT_TEXT,
  TRACE_FORMAT_LACKEY,
  TRACE_FORMAT_MTR,
  TRACE_FORMAT_CHAMPSIM,
} TraceFormat;

/* "auto", "text", "lackey", "mtr", "champsim". */
gboolean trace_format_parse(const char *name, TraceFormat *out, GError **error);
const char *trace_format_name(TraceFormat f);
/* Which format the first bytes of `in` are (never AUTO); -1 on a read error. */
int trace_format_detect(TraceInput *in, GError **error);
/* Open `path` ("-" standard input) as `format`, detecting it for AUTO;
 * *detected (may be NULL) says which. */
TraceSource *trace_format_open(const char *path, TraceFormat format, TraceFormat *detected, GError **error);
/* The same on an input the source takes over (freed on failure). */
TraceSource *trace_format_open_input(TraceInput *in, TraceFormat format, TraceFormat *detected, GError **error);

#endif
