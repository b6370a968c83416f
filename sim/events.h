/*
 * events.h - the --events FILE log: one line per fault, sampled page walk or
 * kernel event, written as it happens.
 *
 * Line format: "<sim_ns> cpu=<n> pid=<p> tid=<t> <event> key=value ...".
 */
#ifndef MMUSIM_EVENTS_H
#define MMUSIM_EVENTS_H

#include <glib.h>
#include <stdint.h>

typedef struct EventLog EventLog;

/* "-" writes to standard output. */
EventLog *events_open(const char *path, GError **error);
void events_close(EventLog *log);
/* NULL-safe: a NULL log is disabled. */
gboolean events_enabled(const EventLog *log);
void events_emit(EventLog *log, uint64_t sim_ns, int cpu, uint32_t pid, uint32_t tid, const char *event,
                 const char *fmt, ...) G_GNUC_PRINTF(7, 8);

#endif
