/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * outfile.h - writing an output file whole or not at all.
 *
 * Every file the program writes (converted traces, recordings, --events,
 * --map, sweep results) goes through an OutFile: it is written under a
 * temporary name beside its final one (NAME.XXXXXX.partial, in the same
 * folder, so the rename cannot cross file systems) and renamed to NAME only
 * once every write, the flush and the close succeeded.  A run that fails
 * half way (a full disk, a file-size limit, an interrupted conversion)
 * leaves no file cut short under NAME and an older NAME as it was.
 *
 * "-" is standard output, and a NAME that exists and is not a regular file
 * (a FIFO, /dev/null, a terminal) is written in place: neither can be
 * renamed onto.  Standard output itself is checked once more at exit by
 * out_file_close_stdout(), as coreutils' close_stdout does.
 *
 * Errors: MMUSIM_SIM_ERROR.  SIM_ERROR_IO when the file cannot be created
 * (a folder, a missing folder, no permission: the name given is at fault);
 * SIM_ERROR_WRITE when a write, flush, close or rename failed (a run-time
 * failure; the command exits 1).  Both messages name the file and the errno
 * text.
 */
#ifndef MMUSIM_OUTFILE_H
#define MMUSIM_OUTFILE_H

#include <glib.h>
#include <stdio.h>

typedef struct OutFile OutFile;

/* Start writing `path`; NULL with a SIM_ERROR_IO error when it cannot be
 * created (checked now, before a long run, not at its end). */
OutFile *out_file_open(const char *path, GError **error);
/* The stream to write to. */
FILE *out_file_stream(OutFile *f);
/* The name for messages: the path as given, or "standard output". */
const char *out_file_name(const OutFile *f);
/* Remember a write error of the stream (errno of a failed fwrite or
 * fprintf) if it is the first; out_file_commit() reports it. */
void out_file_failed(OutFile *f, int errnum);
/* Write n bytes; FALSE with a SIM_ERROR_WRITE error when they were not. */
gboolean out_file_write(OutFile *f, const void *p, size_t n, GError **error);
/* Flush and close (standard output: flush), check that every write
 * succeeded and rename the file to its name.  FALSE with a SIM_ERROR_WRITE
 * error naming the file when anything failed; then the temporary file is
 * removed.  Frees f either way. */
gboolean out_file_commit(OutFile *f, GError **error);
/* Give up: close and remove the temporary file.  Accepts NULL. */
void out_file_abort(OutFile *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(OutFile, out_file_abort)

/* The whole of `path` at once: open, write, commit. */
gboolean out_file_set_contents(const char *path, const char *data, size_t len, GError **error);

/* Print n bytes of s on standard output and flush it, remembering the errno
 * of a failed write for out_file_close_stdout() (stdio forgets it). */
void out_file_put_stdout(const char *s, size_t n);

/* Text printed through a FILE * (report_json and its kin) that goes to
 * standard output whole, by out_file_put_stdout(), so that a write error
 * keeps its errno. */
typedef struct {
  FILE *fp;
  char *buf;
  size_t len;
} OutText;
/* The stream to print to (an open_memstream). */
FILE *out_text_begin(OutText *t);
/* Print what was printed to t on standard output and free it. */
void out_text_to_stdout(OutText *t);

/* The command is done with standard output: flush and close it and report
 * a write error (a full disk, /dev/full) on stderr.  Returns rc, or 1 when
 * standard output could not be written and rc was 0. */
int out_file_close_stdout(int rc);
/* Standard output checked also where main does not see it: GLib's option
 * parser prints a command's --help with g_print and calls exit(0).  What
 * g_print prints goes through out_file_put_stdout() (its errno kept), and
 * out_file_close_stdout() runs at exit() as well, a write error making the
 * exit status 1 (as coreutils' atexit(close_stdout) does). */
void out_file_watch_stdout(void);

/* The exit status of a failure: 1 for a SIM_ERROR_WRITE error (the run
 * could not complete), 2 for any other (bad usage or input). */
int out_file_exit_status(const GError *err);

#endif
