/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * outfile.c - writing an output file whole or not at all (see outfile.h).
 *
 * The temporary file is made by g_mkstemp_full() with O_CLOEXEC (a program
 * started meanwhile, as `mmusim record` starts one, does not inherit it) and
 * mode 0666 less the umask, as fopen() would create the file.  The rename is
 * rename(2), atomic within a folder: a reader sees the old file or the new
 * one.  Left out: fsync (a crash of the host, not of the program, may still
 * lose the newest file) and following a symbolic link NAME (the link is
 * replaced by the file, as g_file_set_contents does).
 */
#include "config.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "errors.h"

struct OutFile {
  FILE *fp;
  char *path;    /* as given, for messages and the rename */
  char *temp;    /* the temporary name; NULL when written in place */
  gboolean is_stdout;
  int errnum;    /* the first write error, 0 if none */
};

/* The first error writing standard output, for out_file_close_stdout():
 * stdio drops a buffer it could not write, so a later fflush succeeds and
 * only ferror() is left, without the errno.  Set from the main thread. */
static int stdout_errno;
static gboolean stdout_said; /* an error of it went into a GError: said once */
static gboolean stdout_closed; /* out_file_close_stdout() ran */

static void set_error(GError **error, int code, const char *path, int errnum)
{
  const char *q = strcmp(path, "-") == 0 ? "" : "'";
  stdout_said |= !*q;
  g_set_error(error, MMUSIM_SIM_ERROR, code, "cannot write %s%s%s: %s", q, *q ? path : "standard output", q,
              g_strerror(errnum));
}

OutFile *out_file_open(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  OutFile *f = g_new0(OutFile, 1);
  if (strcmp(path, "-") == 0) {
    f->fp = stdout;
    f->path = g_strdup(path);
    f->is_stdout = TRUE;
    return f;
  }
  f->path = g_strdup(path);
  struct stat st;
  int e = 0;
  gboolean exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    e = EISDIR;
  } else if (exists && !S_ISREG(st.st_mode)) {
    /* A FIFO, a device: written in place, never replaced. */
    if (!(f->fp = fopen(path, "w")))
      e = errno;
  } else if (exists && access(path, W_OK) != 0) {
    e = errno; /* a read-only file stays so: it is not replaced either */
  } else {
    f->temp = g_strdup_printf("%s.XXXXXX.partial", path);
    int fd = g_mkstemp_full(f->temp, O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0 || !(f->fp = fdopen(fd, "w"))) {
      e = errno;
      if (fd >= 0) {
        close(fd);
        g_unlink(f->temp);
      }
    }
  }
  if (e) {
    set_error(error, SIM_ERROR_IO, path, e);
    g_free(f->temp);
    g_free(f->path);
    g_free(f);
    return NULL;
  }
  return f;
}

FILE *out_file_stream(OutFile *f)
{
  return f->fp;
}

const char *out_file_name(const OutFile *f)
{
  return f->is_stdout ? "standard output" : f->path;
}

void out_file_failed(OutFile *f, int errnum)
{
  if (!f->errnum)
    f->errnum = errnum ? errnum : EIO;
  if (f->is_stdout && !stdout_errno)
    stdout_errno = f->errnum;
}

void out_file_put_stdout(const char *s, size_t n)
{
  if (n && fwrite(s, 1, n, stdout) != n && !stdout_errno)
    stdout_errno = errno ? errno : EIO;
  if (fflush(stdout) != 0 && !stdout_errno)
    stdout_errno = errno ? errno : EIO;
}

gboolean out_file_write(OutFile *f, const void *p, size_t n, GError **error)
{
  if (n && fwrite(p, 1, n, f->fp) != n) {
    out_file_failed(f, errno);
    set_error(error, SIM_ERROR_WRITE, f->path, f->errnum);
    return FALSE;
  }
  return TRUE;
}

static void out_file_free(OutFile *f)
{
  g_free(f->path);
  g_free(f->temp);
  g_free(f);
}

gboolean out_file_commit(OutFile *f, GError **error)
{
  g_return_val_if_fail(f != NULL, FALSE);
  if (fflush(f->fp) != 0)
    out_file_failed(f, errno);
  else if (ferror(f->fp))
    out_file_failed(f, EIO); /* a failed write whose errno is gone */
  if (!f->is_stdout && fclose(f->fp) != 0)
    out_file_failed(f, errno);
  if (!f->errnum && f->temp && rename(f->temp, f->path) != 0)
    out_file_failed(f, errno);
  gboolean ok = !f->errnum;
  if (!ok) {
    set_error(error, SIM_ERROR_WRITE, f->path, f->errnum);
    if (f->temp)
      g_unlink(f->temp);
  }
  out_file_free(f);
  return ok;
}

void out_file_abort(OutFile *f)
{
  if (!f)
    return;
  if (f->is_stdout)
    fflush(f->fp);
  else
    fclose(f->fp);
  if (f->temp)
    g_unlink(f->temp);
  out_file_free(f);
}

gboolean out_file_set_contents(const char *path, const char *data, size_t len, GError **error)
{
  OutFile *f = out_file_open(path, error);
  if (!f)
    return FALSE;
  out_file_write(f, data, len, NULL); /* a failure is remembered: commit reports it */
  return out_file_commit(f, error);
}

FILE *out_text_begin(OutText *t)
{
  *t = (OutText){ 0 };
  if (!(t->fp = open_memstream(&t->buf, &t->len)))
    g_error("out of host memory (open_memstream)");
  return t->fp;
}

void out_text_to_stdout(OutText *t)
{
  fclose(t->fp);
  out_file_put_stdout(t->buf, t->len);
  free(t->buf);
  *t = (OutText){ 0 };
}

int out_file_close_stdout(int rc)
{
  stdout_closed = TRUE;
  int e = stdout_errno;
  if (fflush(stdout) != 0 && !e)
    e = errno;
  else if (ferror(stdout) && !e)
    e = EIO;
  if (fclose(stdout) != 0 && !e && errno != EBADF) /* EBADF: it was closed when we started */
    e = errno;
  if (!e || stdout_said)
    return e && !rc ? 1 : rc;
  fprintf(stderr, "mmusim: cannot write standard output: %s\n", g_strerror(e));
  return rc ? rc : 1;
}

static void close_stdout_at_exit(void)
{
  if (stdout_closed)
    return;
  int rc = out_file_close_stdout(0);
  if (rc)
    _exit(rc); /* from an atexit handler: the status exit() was given is 0 */
}

static void put_stdout_print(const char *s)
{
  out_file_put_stdout(s, strlen(s));
}

void out_file_watch_stdout(void)
{
  g_set_print_handler(put_stdout_print);
  atexit(close_stdout_at_exit);
}

int out_file_exit_status(const GError *err)
{
  return g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE) ? 1 : 2;
}
