/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * recorder.c - recording a program: valgrind lackey through a socket to .mtr.
 *
 * The program runs as `valgrind --tool=lackey --trace-mem=yes --log-fd=N
 * COMMAND...`, N being one end of a socket pair; lackey's lines (and
 * valgrind's own messages, which the lackey reader skips) come out of the
 * other end and are parsed and written as .mtr blocks as they arrive, so a
 * recording of any length costs constant memory and no temporary file.  The
 * program's standard input, output and error are left as they are.
 *
 * The log descriptor is out of the program's reach.  valgrind 3.19 copies
 * its log descriptor above the program's file limit but leaves the one it
 * was given (--log-fd) or opened (--log-file, --log-socket) open in the
 * program, which could write lines of its own into the trace.  So N is
 * placed where valgrind refuses the program every use of it: valgrind
 * raises the open-file limit by its reserved count (N_RESERVED_FDS: 10 to
 * 12 since 3.x) up to the hard limit and turns the program away from every
 * descriptor at or above the old one (setup_file_descriptors in
 * coregrind/m_main.c, ML_(fd_allowed) in coregrind/m_syswrap/syswrap-generic.c).
 * The child raises its soft limit to the hard limit (lowered first to
 * RECORDER_NOFILE_MAX, so the descriptor table stays small) and takes
 * N = limit - 1, the top of valgrind's reserved range, which valgrind's own
 * descriptors fill from the bottom.  The program then sees a limit of N
 * less valgrind's reserve (getrlimit), not the one it would inherit.  N is
 * a socket, not a pipe: /proc/self/fd/N of a pipe can be opened again for
 * writing, of a socket not (ENXIO).
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
 * closes its log, and the recorder writes the index as at a normal end, so
 * a long run can be cut short and what was recorded replayed.  SIGTERM sent
 * to the recorder is passed on to valgrind to the same end.  A recorder
 * killed outright (SIGKILL) takes valgrind and the program with it
 * (PR_SET_PDEATHSIG) and leaves only its temporary OUT.XXXXXX.partial.  The
 * progress line appears only when standard error is a terminal.
 *
 * Checked before the program runs: valgrind and the command can be found
 * and the command is executable; OUT and the lackey copy can be created
 * (not a folder, not a missing or read-only one).  A recording that fails
 * (valgrind cannot start its tool or the command, not one access came, the
 * trace cannot be read or written) leaves no output file: there is nothing
 * in it to replay, a file cut off before its index being unreadable.  The
 * trace is written under a temporary name beside OUT (base/outfile.h) and
 * renamed when it is complete, so a failed recording also leaves an older
 * OUT as it was; it is not inherited by the program (close-on-exec).  The lackey copy is kept when lackey ran (it shows what
 * lackey wrote).  A program that crashes is not a failure of the
 * recording: what it did is kept.
 *
 * Children: valgrind runs without --trace-children, so a program a child
 * runs by exec is not recorded, and a child that forks without exec goes on
 * under lackey and writes to the same log with nothing to tell its accesses
 * apart: they are recorded as process 1's.  valgrind's `==PID==` lines name
 * the child, and the recorder warns that the trace merges them.
 *
 * Left out: multi-threaded programs are recorded as one thread (lackey does
 * not say which thread made an access); attaching to a running process;
 * recording each child as a process of its own.
 */
#include "config.h"
#include "recorder.h"
#include "lackey.h"
#include "mtr.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define RECORDER_PROGRESS_US 1000000 /* a progress line a second */
#define RECORDER_EXEC_FAILED 127     /* the shell's status for "command not found" */
#define RECORDER_NOT_EXECUTABLE 126  /* the shell's status for "found but cannot run" */
/* SO_SNDBUF of valgrind's end (Linux caps it at net.core.wmem_max): valgrind
 * writes lackey's lines in small pieces, and a small buffer costs the
 * recorder a wakeup for each few of them. */
#define RECORDER_LOG_BYTES (1 << 20)
#define RECORDER_SETUP_FAILED 125    /* the child could not place valgrind's log (a message above) */
/* The highest open-file limit the child keeps: Linux's default
 * fs.nr_open (sysctl_nr_open, fs/file.c), so the log descriptor placed
 * at limit - 1 never asks for a descriptor table larger than 8 MiB. */
#define RECORDER_NOFILE_MAX (1u << 20)

/* The child valgrind runs in, for the SIGTERM handler; 0 when none. */
static volatile sig_atomic_t recorder_child;

/* SIGTERM stops the recording as Ctrl-C does: valgrind and the program get
 * it, valgrind closes its log, and what was recorded is written whole. */
static void forward_sigterm(int sig)
{
  if (recorder_child > 0)
    kill((pid_t)recorder_child, sig);
}

/* valgrind's log as the recorder reads it.  Each piece arrives with the
 * pid of the process that wrote it (SO_PASSCRED: a Unix stream socket
 * never joins the bytes of two writers in one read, unix_stream_read_generic
 * in net/unix/af_unix.c), and only valgrind's own process makes the trace:
 * a child the program forked runs on under lackey in an address space of
 * its own, its accesses not told apart from the parent's, and a program a
 * child runs by exec runs outside valgrind with the log descriptor open
 * (valgrind 3.19 does not close it), free to write anything to it. */
typedef struct {
  pid_t pid;              /* valgrind's process */
  uint64_t other_bytes;   /* what other processes wrote, left out */
  GHashTable *other_pids; /* which */
} RecorderLog;

static ssize_t recorder_log_read(int fd, void *buf, size_t n, void *data)
{
  RecorderLog *log = data;
  for (;;) {
    union {
      struct cmsghdr h;
      char space[CMSG_SPACE(sizeof(struct ucred))]; /* no room for SCM_RIGHTS: such descriptors are dropped */
    } control;
    struct iovec iov = { .iov_base = buf, .iov_len = n };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control };
    ssize_t got = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
    if (got <= 0)
      return got;
    pid_t from = log->pid;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        struct ucred cred;
        memcpy(&cred, CMSG_DATA(c), sizeof cred);
        from = cred.pid;
      }
    if (from == log->pid)
      return got;
    log->other_bytes += (uint64_t)got;
    g_hash_table_add(log->other_pids, GINT_TO_POINTER(from));
  }
}

/* What can be checked before anything runs: the command and valgrind can
 * be found and run (exit 127 and 126 otherwise, after the output was
 * made).  NULL when fine, else the message, newly allocated. */
static char *check_command(const RecorderOptions *o)
{
  const char *valgrind = o->valgrind ? o->valgrind : "valgrind";
  g_autofree char *vg = g_find_program_in_path(valgrind);
  if (!vg)
    return g_strdup_printf("record: %s is not installed or not executable (Debian: apt-get install valgrind)",
                           valgrind);
  g_autofree char *cmd = g_find_program_in_path(o->argv[0]);
  if (!cmd && strchr(o->argv[0], '/') && access(o->argv[0], F_OK) == 0)
    return g_strdup_printf("record: %s is not executable: chmod +x it, or give its interpreter "
                           "(record -- sh %s)", o->argv[0], o->argv[0]);
  if (!cmd)
    return g_strdup_printf("record: %s: command not found (give its path, or put it on PATH)", o->argv[0]);
  return NULL;
}

int recorder_run(const RecorderOptions *o, GError **error)
{
  g_return_val_if_fail(o != NULL && o->output != NULL && o->argv != NULL && o->argv[0] != NULL, 2);
  g_autofree char *bad = check_command(o);
  if (bad) {
    g_set_error_literal(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, bad);
    return 2;
  }
  /* The outputs first: a name that cannot be written is refused before
   * the program runs.  Both have temporary names until they are complete
   * (base/outfile.h), opened close-on-exec: the program inherits neither. */
  OutFile *copy = NULL;
  if (o->lackey_copy && !(copy = out_file_open(o->lackey_copy, error))) {
    g_prefix_error(error, "record: --lackey-copy: ");
    return 2;
  }
  MtrWriter *w = mtr_writer_open(o->output, error);
  if (!w) {
    g_prefix_error(error, "record: -o: ");
    out_file_abort(copy);
    return 2;
  }
  /* lackey's log: fds[1] goes to valgrind at log_target, out of the
   * program's reach (the opening comment). */
  int fds[2];
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) != 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    int e = errno;
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "record: cannot make valgrind's log socket: %s",
                g_strerror(e));
    mtr_writer_abort(w);
    out_file_abort(copy);
    return 2;
  }
  if (nofile.rlim_max == RLIM_INFINITY || nofile.rlim_max > RECORDER_NOFILE_MAX)
    nofile.rlim_max = RECORDER_NOFILE_MAX;
  nofile.rlim_cur = nofile.rlim_max;
  int log_target = (int)nofile.rlim_max - 1;
  int log_bytes = RECORDER_LOG_BYTES, on = 1;
  setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &log_bytes, sizeof log_bytes); /* a hint: a smaller one works */
  if (setsockopt(fds[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
    int e = errno;
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "record: cannot make valgrind's log socket: %s",
                g_strerror(e));
    close(fds[0]);
    close(fds[1]);
    mtr_writer_abort(w);
    out_file_abort(copy);
    return 2;
  }
  g_autofree char *log_fd = g_strdup_printf("--log-fd=%d", log_target);
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, (gpointer)(o->valgrind ? o->valgrind : "valgrind"));
  g_ptr_array_add(args, (gpointer) "--tool=lackey");
  g_ptr_array_add(args, (gpointer) "--trace-mem=yes");
  g_ptr_array_add(args, (gpointer) "--trace-syscalls=yes"); /* the mappings: traces/vgsyscall.h */
  g_ptr_array_add(args, (gpointer) "-v"); /* -v -v: the objects loaded before the first call (vgsyscall.h) */
  g_ptr_array_add(args, (gpointer) "-v");
  g_ptr_array_add(args, log_fd);
  for (char **a = o->argv; *a; a++)
    g_ptr_array_add(args, *a);
  g_ptr_array_add(args, NULL);

  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    /* The child: a recorder killed outright (SIGKILL cannot be caught)
     * takes valgrind and the program with it.  valgrind's end of the
     * socket moves to log_target and stays open across exec (dup2 drops
     * close-on-exec), the recorder's end and the outputs not. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(RECORDER_EXEC_FAILED); /* it died before the line above */
    if (setrlimit(RLIMIT_NOFILE, &nofile) != 0 ||
        (fds[1] == log_target ? fcntl(log_target, F_SETFD, 0) : dup2(fds[1], log_target)) < 0) {
      fprintf(stderr, "mmusim record: cannot give valgrind descriptor %d for its log: %s\n", log_target,
              g_strerror(errno));
      _exit(RECORDER_SETUP_FAILED);
    }
    execvp((const char *)args->pdata[0], (char **)args->pdata);
    fprintf(stderr, "mmusim record: cannot run %s: %s\n", (const char *)args->pdata[0], g_strerror(errno));
    _exit(RECORDER_EXEC_FAILED);
  }
  int fork_errno = errno;
  /* Ctrl-C reaches the program (valgrind ends it and closes its log); the
   * recorder carries on to write the index, so what was recorded is kept.
   * SIGTERM, sent to the recorder alone, is passed on to do the same. */
  void (*old_int)(int) = signal(SIGINT, SIG_IGN);
  struct sigaction term = { .sa_handler = forward_sigterm, .sa_flags = SA_RESTART }, old_term;
  sigemptyset(&term.sa_mask);
  recorder_child = pid;
  sigaction(SIGTERM, &term, &old_term);
  close(fds[1]);
  if (pid < 0) {
    recorder_child = 0;
    sigaction(SIGTERM, &old_term, NULL);
    signal(SIGINT, old_int);
    g_ptr_array_free(args, TRUE);
    close(fds[0]);
    mtr_writer_abort(w);
    out_file_abort(copy);
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
  mtr_writer_set_meta(w, "recorder", "mmusim record " PACKAGE_VERSION " (valgrind lackey --trace-mem=yes --trace-syscalls=yes -v -v)");
  mtr_writer_set_meta(w, "syscalls", "mmap munmap mprotect madvise brk mremap open openat close dup dup2 dup3 fcntl");
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

  TraceInput *in = trace_input_from_fd(fds[0], "<lackey log>", FALSE);
  trace_input_own_fd(in);
  RecorderLog log = { .pid = pid, .other_pids = g_hash_table_new(NULL, NULL) };
  trace_input_set_read(in, recorder_log_read, &log);
  trace_input_gather(in);
  trace_input_set_tee(in, copy ? out_file_stream(copy) : NULL);
  TraceSource *src = lackey_source_from_input(in);
  lackey_source_allow_empty(src); /* valgrind's exit status says why there is nothing */
  TraceBatch *batch = g_new(TraceBatch, 1);
  uint64_t to_drop = o->start_after, accesses = 0, seen = 0;
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
      seen += r->type == REC_ACCESS;
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
  uint64_t mappings = lackey_source_syscall_records(src);
  unsigned processes = lackey_source_processes(src);
  trace_source_free(src); /* closes the read end: a valgrind still writing gets SIGPIPE */
  g_free(batch);
  if (!ok) /* stop valgrind and the program: nothing more can be kept */
    kill(pid, SIGTERM);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  recorder_child = 0;
  sigaction(SIGTERM, &old_term, NULL);
  signal(SIGINT, old_int);
  /* Not one access: valgrind, its tool or the command could not start
   * (exit 126, 127, or valgrind's own message above). */
  gboolean no_run = ok && seen == 0;
  /* `==PID==` lines of two pids in what valgrind's own process wrote:
   * valgrind writes only its own, so the program wrote to the log: a
   * program it ran by exec (outside valgrind, in the same process), or
   * one that copied valgrind's descriptor with dup2 (valgrind 3.19's
   * PRE(sys_dup2) checks the new descriptor only).  What it wrote cannot
   * be told from lackey's lines.  Nothing is kept but the copy. */
  if (ok && !no_run && processes > 1) {
    g_set_error(&err, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE,
                "%s: valgrind's log holds lines that valgrind did not write: the program wrote to valgrind's "
                "log descriptor (a program run by exec in its place, or one that copied the descriptor with "
                "dup2, which valgrind allows), and what it wrote cannot be told from lackey's lines: no file "
                "written", o->output);
    ok = FALSE;
  }
  if (ok && !no_run)
    ok = mtr_writer_close(w, &err);
  else
    mtr_writer_abort(w); /* no file: an older OUT stays as it was */
  if (copy && (ok || !no_run) && !out_file_commit(g_steal_pointer(&copy), ok ? &err : NULL))
    ok = FALSE; /* the copy shows what lackey wrote, also of a failed recording */
  out_file_abort(copy); /* lackey never ran: an empty copy says nothing */
  g_ptr_array_free(args, TRUE);
  if (shown)
    fputc('\n', stderr);
  int rc = 0;
  if (!ok) {
    rc = out_file_exit_status(err);
    g_propagate_prefixed_error(error, err, "record: ");
  } else if (no_run) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN,
                "record: nothing recorded, no file written: %s (see the message above)",
                code == RECORDER_EXEC_FAILED ? "valgrind or the command was not found (exit 127)"
                : code == RECORDER_SETUP_FAILED ? "valgrind's log could not be set up"
                : code == RECORDER_NOT_EXECUTABLE ? "the command is not executable (exit 126)"
                : WIFSIGNALED(status) ? "valgrind was killed before the program started"
                : "valgrind could not start its tool or the command");
    rc = 2;
  } else {
    unsigned others = g_hash_table_size(log.other_pids);
    if (others)
      fprintf(stderr, "mmusim record: warning: %s started other processes (%u wrote to valgrind's log, %"
                      G_GUINT64_FORMAT " bytes): what they did is not in %s, which holds process 1 alone "
                      "(lackey does not say which process made an access, and a program a child runs by "
                      "exec runs outside valgrind)\n", cmd->str, others, log.other_bytes, o->output);
    if (o->progress) {
      fprintf(stderr, "mmusim record: %s: %" G_GUINT64_FORMAT " accesses, %" G_GUINT64_FORMAT " instructions, %"
                      G_GUINT64_FORMAT " mapping records, %" G_GUINT64_FORMAT " lines of valgrind skipped; %s",
              o->output, accesses, insns, mappings, skipped, cmd->str);
      if (WIFEXITED(status))
        fprintf(stderr, " exited with status %d\n", WEXITSTATUS(status));
      else if (WIFSIGNALED(status))
        fprintf(stderr, " was killed by signal %d\n", WTERMSIG(status));
      else
        fputc('\n', stderr);
    }
  }
  g_hash_table_destroy(log.other_pids);
  g_string_free(cmd, TRUE);
  return rc;
}
