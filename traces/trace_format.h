/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace_format.h - opening a trace file of any format, named or detected:
 * the registry of trace readers.
 */
#ifndef MMUSIM_TRACE_FORMAT_H
#define MMUSIM_TRACE_FORMAT_H

#include "input.h"
#include "registry.h"
#include "source.h"

/* AUTO, then each reader's row of the registry in trace_format.c: the
 * format of row i is i + 1.  A reader that no code names needs no
 * constant here. */
typedef enum {
  TRACE_FORMAT_AUTO,
  TRACE_FORMAT_TEXT,
  TRACE_FORMAT_LACKEY,
  TRACE_FORMAT_MTR,
  TRACE_FORMAT_CHAMPSIM,
} TraceFormat;

/* A trace reader: one row of the registry in trace_format.c
 * (base/registry.h); name is what -f takes. */
typedef struct {
  REGISTRY_ROW;
  /* A source reading `in`, which it takes over (freed on failure). */
  TraceSource *(*open)(TraceInput *in, GError **error);
} TraceFormatRow;

/* The registry's rows, in format order (*n of them). */
const TraceFormatRow *const *trace_format_readers(unsigned *n);

/* What -f takes, for a help line: "auto (default), text, lackey, ...",
 * the readers in format order.  Free it with g_free. */
char *trace_format_choices(void);
/* "auto" or a reader's name. */
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
