/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lackey.h - reader of valgrind lackey's memory traces
 * (valgrind --tool=lackey --trace-mem=yes), see doc/trace-format.md.
 */
#ifndef MMUSIM_LACKEY_H
#define MMUSIM_LACKEY_H

#include "input.h"
#include "source.h"

/* The largest access size the reader takes (a line beyond it is an error). */
#define LACKEY_ACCESS_MAX_BYTES 4096

/* Read from `in` (owned by the source from now on). */
TraceSource *lackey_source_from_input(TraceInput *in);
/* An input without one lackey record ends as an empty trace instead of an
 * error (whose message points to valgrind's --log-fd): for a caller that
 * runs valgrind itself and judges its exit status (mmusim record). */
void lackey_source_allow_empty(TraceSource *src);
TraceSource *lackey_source_open(const char *path, GError **error);
/* Lines skipped so far: valgrind's own `==PID==` lines and other text that is
 * not a lackey record.  Also the instructions seen. */
uint64_t lackey_source_skipped(TraceSource *src);
/* How many processes valgrind's `==PID==` lines name so far: 0 (none
 * read), 1, or 2 for two and more (a program that forked). */
unsigned lackey_source_processes(TraceSource *src);
uint64_t lackey_source_instructions(TraceSource *src);
/* Mapping records made from valgrind's --trace-syscalls=yes lines
 * (traces/vgsyscall.h). */
uint64_t lackey_source_syscall_records(TraceSource *src);
/* Whether a line looks like lackey output (format detection). */
gboolean lackey_line_matches(const char *line, size_t len);

#endif
