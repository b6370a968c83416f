/*
 * recorder.c - recording a program: valgrind lackey through a pipe to .mtr.
 *
 * The program runs as `valgrind --tool=lackey --trace-mem=yes --log-fd=N
 * COMMAND...`, N being the write end of a pipe; lackey's lines (and
 * valgrind's own messages, which the lackey reader skips) come out of the
 * read end and are parsed and written as .mtr blocks as they arrive, so a
 * recording of any length costs constant memory and no temporary file.  The
 * program's standard input, output and error are left as they are.
 *
 * The header keeps what a replay needs to know: the recorder, the command
 * line, the page size of the recording host (sysconf(_SC_PAGESIZE)), its
 * architecture (uname -m), the source format (lackey), the unmapped rule
 * (ondemand) and the process table (trace process 1 = the host pid).
 *
 * Starting late: lackey has no start/stop switch, so `--start-after N` reads
 * and drops the first N memory accesses (fetches included), keeping the
 * mappings they made, and records from the next one.  Dynamic linking and
 * libc start-up are a few hundred thousand accesses (`mmusim trace info` on
 * a first recording tells how many to skip).
 *
 * Ctrl-C stops the program, not the recorder: valgrind ends the program and
 * closes the pipe, and the recorder writes the index as at a normal end, so
 * a long run can be cut short and what was recorded replayed.  The progress
 * line appears only when standard error is a terminal.
 *
 * A recording that fails (valgrind cannot run the command, the trace cannot
 * be read or written) leaves no output file: there is nothing in it to
 * replay, a file cut off before its index being unreadable.  The trace is
 * written beside OUT as OUT.PID.partial and renamed when it is complete, so
 * a failed recording also leaves an older OUT as it was.  The lackey copy
 * stays (it shows what lackey wrote) unless lackey never ran.  A program that
 * crashes is not a failure of the recording: what it did is kept.
 *
 * Left out: multi-threaded programs are recorded as one thread (lackey does
 * not say which thread made an access); attaching to a running process.
 */
#include "config.h"
#include "recorder.h"
#include "lackey.h"
#include "mtr.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define RECORDER_PROGRESS_US 1000000 /* a progress line a second */
#define RECORDER_EXEC_FAILED 127     /* the shell's status for "command not found" */
#define RECORDER_PIPE_BYTES (1 << 20) /* F_SETPIPE_SZ; the default 64K costs a wakeup per 64K */

/* The trace is written to OUT.PID.partial beside OUT and renamed to OUT
 * when the recording succeeds, so that a failed one leaves an older OUT as
 * it was; standard output is written directly.  The name, newly allocated. */
static char *partial_name(const RecorderOptions *o)
{
  if (strcmp(o->output, "-") == 0)
    return g_strdup(o->output);
  return g_strdup_printf("%s.%d.partial", o->output, (int)getpid());
}

/* The output of a failed recording: opened, so ours to remove. */
static void remove_output(const RecorderOptions *o, const char *partial)
{
  if (strcmp(o->output, "-") != 0)
    g_unlink(partial);
}

int recorder_run(const RecorderOptions *o, GError **error)
{
  g_return_val_if_fail(o != NULL && o->output != NULL && o->argv != NULL && o->argv[0] != NULL, 2);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    int e = errno;
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "record: pipe: %s", g_strerror(e));
    return 2;
  }
  g_autofree char *partial = partial_name(o);
  MtrWriter *w = mtr_writer_open(partial, error);
  if (!w) {
    close(fds[0]);
    close(fds[1]);
    return 2;
  }
  g_autofree char *log_fd = g_strdup_printf("--log-fd=%d", fds[1]);
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, (gpointer)(o->valgrind ? o->valgrind : "valgrind"));
  g_ptr_array_add(args, (gpointer) "--tool=lackey");
  g_ptr_array_add(args, (gpointer) "--trace-mem=yes");
  g_ptr_array_add(args, log_fd);
  for (char **a = o->argv; *a; a++)
    g_ptr_array_add(args, *a);
  g_ptr_array_add(args, NULL);

  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    /* The child: the write end stays open across exec, the read end not. */
    fcntl(fds[1], F_SETFD, 0);
    execvp((const char *)args->pdata[0], (char **)args->pdata);
    fprintf(stderr, "mmusim record: cannot run %s: %s\n", (const char *)args->pdata[0], g_strerror(errno));
    _exit(RECORDER_EXEC_FAILED);
  }
  int fork_errno = errno;
  /* Ctrl-C reaches the program (valgrind ends it and closes the pipe); the
   * recorder carries on to write the index, so what was recorded is kept. */
  void (*old_int)(int) = signal(SIGINT, SIG_IGN);
  close(fds[1]);
  if (pid < 0) {
    signal(SIGINT, old_int);
    g_ptr_array_free(args, TRUE);
    close(fds[0]);
    mtr_writer_abort(w);
    remove_output(o, partial);
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "record: fork: %s", g_strerror(fork_errno));
    return 2;
  }

  GString *cmd = g_string_new(NULL);
  for (char **a = o->argv; *a; a++) {
    g_autofree char *q = g_shell_quote(*a);
    g_string_append_printf(cmd, "%s%s", cmd->len ? " " : "", q);
  }
  struct utsname u;
  g_autofree char *page = g_strdup_printf("%ld", sysconf(_SC_PAGESIZE));
  g_autofree char *proc = g_strdup_printf("1 pid=%d", (int)pid);
  mtr_writer_set_meta(w, "recorder", "mmusim record " PACKAGE_VERSION " (valgrind lackey --trace-mem=yes)");
  mtr_writer_set_meta(w, "command", cmd->str);
  mtr_writer_set_meta(w, "page_size", page);
  mtr_writer_set_meta(w, "arch", uname(&u) == 0 ? u.machine : "unknown");
  mtr_writer_set_meta(w, "source", "lackey");
  mtr_writer_set_meta(w, "unmapped", "ondemand");
  mtr_writer_set_meta(w, "process", proc);
  if (o->start_after) {
    g_autofree char *n = g_strdup_printf("%" G_GUINT64_FORMAT, o->start_after);
    mtr_writer_set_meta(w, "start_after_accesses", n);
  }

  /* A larger pipe: valgrind writes lackey's lines in small pieces. */
  fcntl(fds[0], F_SETPIPE_SZ, RECORDER_PIPE_BYTES);
  TraceInput *in = trace_input_from_fd(fds[0], "<lackey pipe>", FALSE);
  trace_input_own_fd(in);
  trace_input_gather(in);
  FILE *copy = NULL;
  if (o->lackey_copy && !(copy = fopen(o->lackey_copy, "w"))) {
    int e = errno;
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "record: cannot create '%s': %s", o->lackey_copy, g_strerror(e));
    kill(pid, SIGTERM); /* the child we started */
    waitpid(pid, NULL, 0);
    signal(SIGINT, old_int);
    trace_input_free(in);
    mtr_writer_abort(w);
    remove_output(o, partial);
    g_ptr_array_free(args, TRUE);
    g_string_free(cmd, TRUE);
    return 2;
  }
  trace_input_set_tee(in, copy);
  TraceSource *src = lackey_source_from_input(in);
  lackey_source_allow_empty(src); /* valgrind's exit status says why there is nothing */
  TraceBatch *batch = g_new(TraceBatch, 1);
  uint64_t to_drop = o->start_after, accesses = 0;
  gint64 t0 = g_get_monotonic_time(), next_progress = t0 + RECORDER_PROGRESS_US;
  gboolean shown = FALSE, ok = TRUE;
  gboolean progress_line = o->progress && isatty(STDERR_FILENO); /* not in logs */
  GError *err = NULL;
  while (ok) {
    if (!trace_source_next(src, batch, &err)) {
      ok = FALSE;
      break;
    }
    if (batch->n == 0)
      break;
    for (unsigned i = 0; i < batch->n && ok; i++) {
      const TraceRecord *r = &batch->rec[i];
      if (to_drop && (r->type == REC_ACCESS || r->type == REC_COMPUTE)) {
        if (r->type == REC_ACCESS)
          to_drop--;
        continue;
      }
      accesses += r->type == REC_ACCESS;
      ok = mtr_writer_write(w, r, &err);
    }
    if (progress_line && g_get_monotonic_time() >= next_progress) {
      next_progress += RECORDER_PROGRESS_US;
      fprintf(stderr, "\rmmusim record: %" G_GUINT64_FORMAT " accesses, %.1f MiB written, %.0f s   ", accesses,
              (double)mtr_writer_bytes(w) / 1048576.0, (double)(g_get_monotonic_time() - t0) / 1e6);
      shown = TRUE;
    }
  }
  uint64_t skipped = lackey_source_skipped(src), insns = lackey_source_instructions(src);
  trace_source_free(src); /* closes the read end: a valgrind still writing gets SIGPIPE */
  if (copy && fclose(copy) != 0 && ok) {
    int e = errno;
    g_set_error(&err, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "cannot write '%s': %s", o->lackey_copy, g_strerror(e));
    ok = FALSE;
  }
  g_free(batch);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  signal(SIGINT, old_int);
  if (ok)
    ok = mtr_writer_close(w, &err);
  else
    mtr_writer_abort(w);
  /* valgrind could not run the command: nothing was recorded. */
  gboolean no_run = ok && WIFEXITED(status) && WEXITSTATUS(status) == RECORDER_EXEC_FAILED && accesses == 0;
  if (ok && !no_run && strcmp(o->output, "-") != 0 && g_rename(partial, o->output) != 0) {
    int e = errno;
    g_set_error(&err, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "cannot rename '%s' to '%s': %s", partial, o->output,
                g_strerror(e));
    ok = FALSE;
  }
  g_ptr_array_free(args, TRUE);
  if (shown)
    fputc('\n', stderr);
  int rc = 0;
  if (!ok) {
    g_propagate_prefixed_error(error, err, "record: ");
    rc = 2;
  } else if (no_run) {
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN,
                "record: valgrind could not run the command (see the message above; is valgrind installed? Debian: apt-get install valgrind)");
    rc = 2;
    if (o->lackey_copy)
      g_unlink(o->lackey_copy); /* empty: lackey never ran */
  } else if (o->progress) {
    fprintf(stderr, "mmusim record: %s: %" G_GUINT64_FORMAT " accesses, %" G_GUINT64_FORMAT " instructions, %"
                    G_GUINT64_FORMAT " lines of valgrind skipped; %s",
            o->output, accesses, insns, skipped, cmd->str);
    if (WIFEXITED(status))
      fprintf(stderr, " exited with status %d\n", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
      fprintf(stderr, " was killed by signal %d\n", WTERMSIG(status));
    else
      fputc('\n', stderr);
  }
  if (rc != 0)
    remove_output(o, partial); /* never renamed: an older OUT stays */
  g_string_free(cmd, TRUE);
  return rc;
}
