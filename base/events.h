/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.h - the --events FILE writer: one line per simulated event.
 *
 * A line reads
 *
 *   <sim_ns> cpu=<n> pid=<p> tid=<t> <event> key=value ...
 *
 * with <sim_ns> the simulated time in nanoseconds and <event> a short word
 * (fault, walk, tlb_flush, segv, ...), so `grep ' fault '` or
 * `awk '$5 == "walk"'` pick one kind.  Callers test events_enabled() before
 * building arguments; a NULL EventLog means "no --events" and every call on it
 * does nothing.
 */
#ifndef MMUSIM_EVENTS_H
#define MMUSIM_EVENTS_H

#include <glib.h>
#include <stdarg.h>
#include <stdint.h>

typedef struct EventLog EventLog;

/* Open `path` for writing ("-" is standard output); the file is written
 * under a temporary name until events_finish().  On failure sets an
 * MMUSIM_SIM_ERROR / SIM_ERROR_IO error naming the path. */
EventLog *events_open(const char *path, GError **error);
/* The run is complete: flush, close and give the file its name; FALSE with
 * a SIM_ERROR_WRITE error naming the file when any line could not be
 * written (then no file is left).  Frees log; TRUE for NULL. */
gboolean events_finish(EventLog *log, GError **error);
/* Give up (the run failed): no file is left, standard output is flushed.
 * Accepts NULL. */
void events_close(EventLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EventLog, events_close)

/* FALSE for NULL. */
gboolean events_enabled(const EventLog *log);

/* Write one line.  `fmt` (may be NULL) formats the key=value part; it must
 * not contain a newline.  Does nothing when log is NULL. */
void events_emit(EventLog *log, uint64_t sim_ns, int cpu, uint32_t pid, uint32_t tid, const char *event,
                 const char *fmt, ...) G_GNUC_PRINTF(7, 8);
/* The same with the arguments of fmt in ap. */
void events_emitv(EventLog *log, uint64_t sim_ns, int cpu, uint32_t pid, uint32_t tid, const char *event,
                  const char *fmt, va_list ap) G_GNUC_PRINTF(7, 0);

/* Flush what was written and report the first write error since the log was
 * opened (a full disk): a SIM_ERROR_WRITE error naming the path.  TRUE for
 * NULL. */
gboolean events_flush(EventLog *log, GError **error);
/* Lines written so far (0 for NULL). */
uint64_t events_count(const EventLog *log);

#endif
