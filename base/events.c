/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.c - the --events FILE writer.
 *
 * Each event is one text line, written through stdio's buffer: a run that
 * writes millions of events costs one write(2) per buffer, not per line.
 * Nothing is sorted or merged: lines appear in the order the simulator emits
 * them, which is simulated-time order per CPU.  Write errors are remembered and
 * reported once by events_flush() or events_finish(); the simulation itself
 * never stops for them.  The file is written under a temporary name
 * (base/outfile.h) and renamed by events_finish(): a run that fails leaves
 * no events file cut short.
 * Left out: binary formats and filtering by event kind (grep does that).
 */
#include "config.h"
#include "events.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "outfile.h"

/* key=value text longer than this is formatted on the heap. */
#define EVENTS_LINE_BYTES 512

struct EventLog {
  OutFile *file;
  FILE *out;       /* its stream */
  int write_errno; /* first write error, 0 if none */
  uint64_t lines;
};


EventLog *events_open(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  OutFile *f = out_file_open(path, error);
  if (!f) {
    g_prefix_error(error, "events file: ");
    return NULL;
  }
  EventLog *log = g_new0(EventLog, 1);
  log->file = f;
  log->out = out_file_stream(f);
  return log;
}

gboolean events_finish(EventLog *log, GError **error)
{
  if (!log)
    return TRUE;
  if (log->write_errno)
    out_file_failed(log->file, log->write_errno);
  gboolean ok = out_file_commit(log->file, error);
  g_free(log);
  return ok;
}

void events_close(EventLog *log)
{
  if (!log)
    return;
  out_file_abort(log->file);
  g_free(log);
}

gboolean events_enabled(const EventLog *log)
{
  return log != NULL;
}

uint64_t events_count(const EventLog *log)
{
  return log ? log->lines : 0;
}

void events_emit(EventLog *log, uint64_t sim_ns, int cpu, uint32_t pid, uint32_t tid, const char *event,
                 const char *fmt, ...)
{
  if (!log)
    return;
  va_list ap;
  va_start(ap, fmt);
  events_emitv(log, sim_ns, cpu, pid, tid, event, fmt, ap);
  va_end(ap);
}

void events_emitv(EventLog *log, uint64_t sim_ns, int cpu, uint32_t pid, uint32_t tid, const char *event,
                  const char *fmt, va_list ap)
{
  if (!log)
    return;
  /* Format the key=value part first, on the stack, so that an empty one
   * leaves no trailing blank; only an unusually long line allocates. */
  char args[EVENTS_LINE_BYTES];
  g_autofree char *long_args = NULL;
  const char *kv = "";
  if (fmt) {
    va_list again;
    va_copy(again, ap);
    int len = g_vsnprintf(args, sizeof args, fmt, ap);
    if (len >= (int)sizeof args)
      long_args = g_strdup_vprintf(fmt, again);
    va_end(again);
    kv = long_args ? long_args : len > 0 ? args : "";
  }
  int n = fprintf(log->out, "%" G_GUINT64_FORMAT " cpu=%d pid=%" G_GUINT32_FORMAT " tid=%" G_GUINT32_FORMAT " %s%s%s\n",
                  sim_ns, cpu, pid, tid, event, *kv ? " " : "", kv);
  if (n < 0 && !log->write_errno)
    log->write_errno = errno ? errno : EIO;
  log->lines++;
}

gboolean events_flush(EventLog *log, GError **error)
{
  if (!log)
    return TRUE;
  if (fflush(log->out) != 0 && !log->write_errno)
    log->write_errno = errno ? errno : EIO;
  if (log->write_errno) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE, "cannot write '%s': %s", out_file_name(log->file),
                g_strerror(log->write_errno));
    return FALSE;
  }
  return TRUE;
}
