/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lackey.c - reader of valgrind lackey memory traces.
 *
 * lackey (valgrind's lackey/lk_main.c, --trace-mem=yes) prints one line per
 * guest instruction and per data access, in program order:
 *
 *   I  0401ab70,3       instruction at 0x401ab70, 3 bytes
 *    L 1fff000708,8     load of 8 bytes
 *    S 1fff000700,8     store
 *    M 0421f9e8,4       modify: a load and a store of the same bytes
 *
 * Addresses are hexadecimal without 0x, sizes decimal.  What lackey and
 * valgrind print besides (`==PID==` banner and statistics lines, a program
 * writing to the same descriptor) is skipped and counted, never fatal.  A
 * line that starts as a record but does not finish as one (bad hex, a size
 * out of 1..4096, an address at or beyond 2^57) is an error naming its line.
 * M is a load followed by a store.  Instructions, fetches and mappings
 * follow insnstream.h.  lackey prints no thread ids (valgrind runs one thread
 * at a time and lackey does not say which): every record is process 1,
 * thread 1.
 *
 * Speed: one pass over a 1 MiB buffer with memchr, hand-written hex: 1.7e7
 * to 5.4e7 lines a second on the (shared) development machine, more than
 * the engine consumes (doc/performance.md, `make bench`).
 */
#include "config.h"
#include "lackey.h"
#include "insnstream.h"
#include "reader.h"
#include "trace_format.h"
#include "vgsyscall.h"

#include <string.h>

#define LACKEY_BUFFER_BYTES (1u << 20) /* also the longest line */
#define LACKEY_VA_LIMIT (1ULL << 57)

typedef struct {
  TraceReader rd;
  char *buf;
  size_t cap, start, end;
  gboolean eof, finished;
  gboolean allow_empty;   /* lackey_source_allow_empty */
  uint64_t line_no, skipped;
  /* The pids of valgrind's `==PID==` lines: a program that forks without
   * exec goes on under valgrind in the child, whose accesses come down the
   * same log, unmarked; its `==PID==` lines are the sign. */
  uint64_t first_pid;
  unsigned processes;
  InsnStream st;
  VgSyscalls sys; /* valgrind --trace-syscalls=yes lines (vgsyscall.h) */
} LackeySource;

/* A `==PID==` line of valgrind's: count the pids. */
static void note_pid(LackeySource *l, const char *line, size_t len)
{
  if (len < 4 || line[0] != '=' || line[1] != '=' || !g_ascii_isdigit(line[2]))
    return;
  uint64_t pid = 0;
  for (size_t i = 2; i < len && g_ascii_isdigit(line[i]) && pid < G_MAXUINT32; i++)
    pid = pid * 10 + (uint64_t)(line[i] - '0');
  if (!l->processes)
    l->first_pid = pid, l->processes = 1;
  else if (pid != l->first_pid && l->processes == 1)
    l->processes = 2; /* more than one: what matters */
}

static inline int hexval(unsigned char c)
{
  if ((unsigned)(c - '0') < 10u)
    return c - '0';
  c |= 0x20;
  if ((unsigned)(c - 'a') < 6u)
    return c - 'a' + 10;
  return -1;
}

/* "ADDR,SIZE" up to the end of the line; FALSE if malformed. */
static gboolean parse_operand(const char *s, const char *end, uint64_t *addr, uint32_t *size)
{
  uint64_t a = 0;
  int d, digits = 0;
  while (s < end && (d = hexval((unsigned char)*s)) >= 0) {
    if (++digits > 16)
      return FALSE;
    a = a << 4 | (uint64_t)d;
    s++;
  }
  if (!digits || s == end || *s != ',')
    return FALSE;
  s++;
  uint64_t n = 0;
  int nd = 0;
  while (s < end && (unsigned)(*s - '0') < 10u) {
    if (++nd > 10)
      return FALSE;
    n = n * 10 + (uint64_t)(*s - '0');
    s++;
  }
  while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
    s++;
  if (!nd || s != end)
    return FALSE;
  *addr = a;
  *size = (uint32_t)MIN(n, UINT32_MAX);
  return TRUE;
}

/* Which record a line starts as: 'I', 'L', 'S', 'M', or 0 for noise. */
static char line_kind(const char *s, size_t len)
{
  if (len >= 3 && s[0] == 'I' && s[1] == ' ' && s[2] == ' ')
    return 'I';
  if (len >= 3 && s[0] == ' ' && (s[1] == 'L' || s[1] == 'S' || s[1] == 'M') && s[2] == ' ')
    return s[1];
  return 0;
}

gboolean lackey_line_matches(const char *line, size_t len)
{
  if (len >= 4 && line[0] == '=' && line[1] == '=' && g_ascii_isdigit(line[2])) {
    size_t i = 2;
    while (i < len && g_ascii_isdigit(line[i]))
      i++;
    return i + 1 < len && line[i] == '=' && line[i + 1] == '=';
  }
  char k = line_kind(line, len);
  uint64_t a;
  uint32_t n;
  return k && parse_operand(line + (k == 'I' ? 3 : 3), line + len, &a, &n);
}

static gboolean line_error(LackeySource *l, GError **error, const char *line, size_t len, const char *what)
{
  g_autofree char *shown = g_strndup(line, MIN(len, 60));
  for (char *c = shown; *c; c++)
    if (!g_ascii_isprint(*c))
      *c = '?';
  g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE,
              "%s:%" G_GUINT64_FORMAT ": %s near '%s'; expected a lackey record 'I  ADDR,SIZE' or ' L|S|M ADDR,SIZE' "
              "(hex address below 2^57, size 1..4096)",
              l->rd.name, l->line_no, what, shown);
  return FALSE;
}

/* The next line (without its newline), or NULL at the end or on error. */
static char *next_line(LackeySource *l, size_t *len, GError **error)
{
  for (;;) {
    char *from = l->buf + l->start;
    char *nl = memchr(from, '\n', l->end - l->start);
    if (nl) {
      *len = (size_t)(nl - from);
      l->start += *len + 1;
      l->line_no++;
      return from;
    }
    if (l->eof) {
      if (l->start == l->end)
        return NULL;
      *len = l->end - l->start;
      l->start = l->end;
      l->line_no++;
      return from;
    }
    memmove(l->buf, from, l->end - l->start);
    l->end -= l->start;
    l->start = 0;
    if (l->end == l->cap) {
      g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE,
                  "%s:%" G_GUINT64_FORMAT ": line longer than %zu bytes; expected lackey's short lines", l->rd.name,
                  l->line_no + 1, l->cap);
      return NULL;
    }
    gssize got = trace_input_read(l->rd.in, l->buf + l->end, l->cap - l->end, error);
    if (got < 0)
      return NULL;
    l->end += (size_t)got;
    if (got == 0)
      l->eof = TRUE;
  }
}

static gboolean lackey_fill(TraceReader *rd, TraceBatch *batch, GError **error)
{
  LackeySource *l = (LackeySource *)rd;
  while (batch->n + MAX(2 * INSN_STREAM_MAX_RECORDS, VG_SYSCALL_MAX_RECORDS) <= TRACE_BATCH_MAX && !l->finished) {
    size_t len;
    char *line = next_line(l, &len, error);
    if (!line) {
      if (*error)
        break;
      if (l->skipped == l->line_no && !l->allow_empty) { /* not one record: lackey's output went elsewhere */
        g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE,
                    "%s: no lackey record in its %" G_GUINT64_FORMAT " line%s; valgrind writes lackey's trace to its "
                    "log, which is standard error unless told otherwise: give valgrind --log-fd=1 to send it down "
                    "a pipe, or --log-file=FILE and read FILE", l->rd.name, l->line_no, l->line_no == 1 ? "" : "s");
        break;
      }
      insn_stream_finish(&l->st, batch);
      l->finished = TRUE;
      break;
    }
    char k = line_kind(line, len);
    unsigned made;
    if (!k && vg_syscall_line(&l->sys, line, len, &batch->rec[batch->n], &made)) {
      batch->n += made; /* the loop's bound leaves room for VG_SYSCALL_MAX_RECORDS */
      continue;
    }
    if (!k) {
      l->skipped++;
      note_pid(l, line, len);
      continue;
    }
    uint64_t addr;
    uint32_t size;
    if (!parse_operand(line + 3, line + len, &addr, &size)) {
      line_error(l, error, line, len, "malformed lackey record");
      break;
    }
    if (size < 1 || size > LACKEY_ACCESS_MAX_BYTES) {
      line_error(l, error, line, len, "access size out of range");
      break;
    }
    if (addr >= LACKEY_VA_LIMIT || size > LACKEY_VA_LIMIT - addr) {
      line_error(l, error, line, len, "address beyond the 57-bit virtual address space");
      break;
    }
    switch (k) {
    case 'I': insn_stream_instruction(&l->st, batch, addr, size); break;
    case 'L': insn_stream_access(&l->st, batch, ACC_LOAD, addr, size); break;
    case 'S': insn_stream_access(&l->st, batch, ACC_STORE, addr, size); break;
    default:
      insn_stream_access(&l->st, batch, ACC_LOAD, addr, size);
      insn_stream_access(&l->st, batch, ACC_STORE, addr, size);
      break;
    }
  }
  return *error == NULL;
}

static void lackey_clear(TraceReader *rd)
{
  LackeySource *l = (LackeySource *)rd;
  insn_stream_clear(&l->st);
  vg_syscalls_clear(&l->sys);
  g_free(l->buf);
}

static const TraceReaderOps lackey_ops = TRACE_READER_OPS("lackey", TRUE, lackey_fill, lackey_clear);

TraceSource *lackey_source_from_input(TraceInput *in)
{
  g_return_val_if_fail(in != NULL, NULL);
  LackeySource *l = g_new0(LackeySource, 1);
  trace_reader_init(&l->rd, &lackey_ops, UNMAPPED_ONDEMAND, in, trace_input_name(in));
  l->cap = LACKEY_BUFFER_BYTES;
  l->buf = g_malloc(l->cap);
  insn_stream_init(&l->st);
  vg_syscalls_init(&l->sys);
  return &l->rd.base;
}

TraceSource *lackey_source_open(const char *path, GError **error)
{
  TraceInput *in = trace_input_open(path, TRUE, error);
  return in ? lackey_source_from_input(in) : NULL;
}

void lackey_source_allow_empty(TraceSource *src)
{
  g_return_if_fail(src != NULL && src->ops == &lackey_ops.source);
  ((LackeySource *)src)->allow_empty = TRUE;
}

uint64_t lackey_source_skipped(TraceSource *src)
{
  g_return_val_if_fail(src != NULL && src->ops == &lackey_ops.source, 0);
  return ((LackeySource *)src)->skipped;
}

unsigned lackey_source_processes(TraceSource *src)
{
  g_return_val_if_fail(src != NULL && src->ops == &lackey_ops.source, 0);
  return ((LackeySource *)src)->processes;
}

uint64_t lackey_source_syscall_records(TraceSource *src)
{
  g_return_val_if_fail(src != NULL && src->ops == &lackey_ops.source, 0);
  return ((LackeySource *)src)->sys.records;
}

uint64_t lackey_source_instructions(TraceSource *src)
{
  g_return_val_if_fail(src != NULL && src->ops == &lackey_ops.source, 0);
  return ((LackeySource *)src)->st.instructions;
}

/* The row of the registry of readers (trace_format.c): -f lackey. */
static TraceSource *lackey_open(TraceInput *in, GError **error)
{
  (void)error;
  return lackey_source_from_input(in);
}

const TraceFormatRow lackey_reader = {
  .name = "lackey",
  .help = "valgrind --tool=lackey --trace-mem=yes output: instruction fetches, loads, stores, modifies",
  .source = "valgrind lackey/lk_main.c; doc/trace-format.md, lackey traces",
  .open = lackey_open,
};
