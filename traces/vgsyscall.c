/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgsyscall.c - valgrind's system call lines as mapping records
 * (vgsyscall.h).
 */
#include "config.h"
#include "vgsyscall.h"

#include <stdlib.h>
#include <string.h>

#define VG_PAGE 4096ULL
#define VG_VA_LIMIT (1ULL << 57)
#define VG_MAX_ARGS 6

/* Linux x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
enum { NR_MMAP = 9, NR_MPROTECT = 10, NR_MUNMAP = 11, NR_BRK = 12, NR_MREMAP = 25, NR_MADVISE = 28 };
/* include/uapi/asm-generic/mman-common.h, mman.h, arch/x86 mman.h */
enum {
  LX_MAP_SHARED = 0x01, LX_MAP_ANONYMOUS = 0x20, LX_MAP_GROWSDOWN = 0x100, LX_MAP_HUGETLB = 0x40000,
  LX_MAP_HUGE_SHIFT = 26, LX_MAP_HUGE_MASK = 0x3f, LX_HUGE_1GB_LOG2 = 30,
  LX_MADV_DONTNEED = 4, LX_MADV_HUGEPAGE = 14, LX_MADV_NOHUGEPAGE = 15, LX_MADV_COLLAPSE = 25,
};

void vg_syscalls_init(VgSyscalls *s)
{
  memset(s, 0, sizeof *s);
  s->pending = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
}

void vg_syscalls_clear(VgSyscalls *s)
{
  if (s->pending)
    g_hash_table_destroy(s->pending);
  memset(s, 0, sizeof *s);
}

/* A number as valgrind prints an argument: 0x hex or decimal. */
static gboolean parse_num(const char **p, const char *end, uint64_t *v)
{
  const char *s = *p;
  while (s < end && *s == ' ')
    s++;
  if (s == end || !g_ascii_isdigit(*s))
    return FALSE;
  char buf[32];
  size_t n = 0;
  while (s < end && (g_ascii_isxdigit(*s) || *s == 'x') && n + 1 < sizeof buf)
    buf[n++] = *s++;
  buf[n] = 0;
  char *e;
  *v = g_ascii_strtoull(buf, &e, 0);
  if (*e)
    return FALSE;
  *p = s;
  return TRUE;
}

static const char *find(const char *s, const char *end, const char *what)
{
  size_t w = strlen(what);
  for (; s + w <= end; s++)
    if (memcmp(s, what, w) == 0)
      return s;
  return NULL;
}

/* The arguments of "sys_NAME ( A, B, ... )": up to VG_MAX_ARGS numbers
 * (an argument valgrind follows with its string, "0x4a(/path)", is its
 * number). */
static unsigned parse_args(const char *s, const char *end, uint64_t *args)
{
  const char *open = find(s, end, " ( ");
  if (!open)
    return 0;
  const char *p = open + 3;
  unsigned n = 0;
  while (n < VG_MAX_ARGS && parse_num(&p, end, &args[n])) {
    n++;
    if (p < end && *p == '(') { /* a string valgrind shows: skip it */
      const char *close = memchr(p, ')', (size_t)(end - p));
      if (!close)
        break;
      p = close + 1;
    }
    if (p >= end || *p != ',')
      break;
    p++;
  }
  return n;
}

static uint64_t page_up(uint64_t v)
{
  return v > UINT64_MAX - (VG_PAGE - 1) ? 0 : (v + VG_PAGE - 1) & ~(VG_PAGE - 1);
}

/* A range record when the text format would take it. */
static gboolean range(TraceRecord *r, TraceRecordType type, uint64_t addr, uint64_t len)
{
  len = page_up(len);
  if ((addr & (VG_PAGE - 1)) || !len || addr >= VG_VA_LIMIT || len > VG_VA_LIMIT - addr)
    return FALSE;
  *r = (TraceRecord){ .type = (uint8_t)type, .pid = 1, .tid = 1, .addr = addr, .len = len };
  return TRUE;
}

static unsigned make(VgSyscalls *s, unsigned nr, const uint64_t *a, unsigned na, uint64_t ret, TraceRecord *out)
{
  TraceRecord *r = out;
  switch (nr) {
  case NR_MMAP: {
    if (na < 4 || !range(r, REC_MMAP, ret, a[1]))
      return 0;
    uint64_t f = a[3];
    r->prot = (uint8_t)(a[2] & (PROT_R | PROT_W | PROT_X)); /* PROT_READ 1, PROT_WRITE 2, PROT_EXEC 4 */
    r->flags = (f & LX_MAP_SHARED ? MAP_F_SHARED : 0) | (f & LX_MAP_ANONYMOUS ? 0 : MAP_F_FILE) |
               (f & LX_MAP_GROWSDOWN ? MAP_F_STACK : 0);
    if (f & LX_MAP_HUGETLB) {
      gboolean g1 = ((f >> LX_MAP_HUGE_SHIFT) & LX_MAP_HUGE_MASK) == LX_HUGE_1GB_LOG2;
      uint64_t span = g1 ? 1ULL << 30 : 2ULL << 20;
      if ((r->addr | r->len) & (span - 1))
        return 0;
      r->flags = (uint8_t)((r->flags & ~MAP_F_FILE) | MAP_F_HUGETLB | (g1 ? MAP_F_HUGETLB_1G : 0));
    }
    return 1;
  }
  case NR_MUNMAP:
    return na >= 2 && range(r, REC_MUNMAP, a[0], a[1]);
  case NR_MPROTECT:
    if (na < 3 || !range(r, REC_MPROTECT, a[0], a[1]))
      return 0;
    r->prot = (uint8_t)(a[2] & (PROT_R | PROT_W | PROT_X));
    return 1;
  case NR_MADVISE: {
    int adv = na < 3 ? -1 : a[2] == LX_MADV_DONTNEED ? ADV_DONTNEED : a[2] == LX_MADV_HUGEPAGE ? ADV_HUGEPAGE
              : a[2] == LX_MADV_NOHUGEPAGE ? ADV_NOHUGEPAGE : a[2] == LX_MADV_COLLAPSE ? ADV_COLLAPSE : -1;
    if (adv < 0 || !range(r, REC_MADVISE, a[0], a[1]))
      return 0;
    r->arg = adv;
    return 1;
  }
  case NR_BRK: {
    /* sys_brk answers the break after the call: the first call (brk(0))
     * tells where the heap starts, the next ones where it ends now. */
    uint64_t end = page_up(ret);
    if (!s->brk_start) {
      s->brk_start = s->brk_end = end;
      return 0;
    }
    if (end > s->brk_end && range(r, REC_MMAP, s->brk_end, end - s->brk_end)) {
      r->prot = PROT_R | PROT_W;
      s->brk_end = end;
      return 1;
    }
    if (end < s->brk_end && end >= s->brk_start && range(r, REC_MUNMAP, end, s->brk_end - end)) {
      s->brk_end = end;
      return 1;
    }
    return 0;
  }
  case NR_MREMAP: {
    if (na < 3 || !range(r, REC_MUNMAP, a[0], a[1]) || !range(r + 1, REC_MMAP, ret, a[2]))
      return 0;
    r[1].prot = PROT_R | PROT_W;
    return 2;
  }
  default:
    return 0;
  }
}

gboolean vg_syscall_line(VgSyscalls *s, const char *line, size_t len, TraceRecord *out, unsigned *n)
{
  *n = 0;
  const char *end = line + len;
  if (len < 9 || memcmp(line, "SYSCALL[", 8) != 0)
    return FALSE;
  const char *p = line + 8;
  uint64_t pid, tid, nr;
  if (!parse_num(&p, end, &pid) || p == end || *p++ != ',' || !parse_num(&p, end, &tid) || p + 1 >= end ||
      *p++ != ']' || *p++ != '(' || !parse_num(&p, end, &nr) || p == end || *p++ != ')')
    return TRUE;
  if (nr != NR_MMAP && nr != NR_MPROTECT && nr != NR_MUNMAP && nr != NR_BRK && nr != NR_MREMAP && nr != NR_MADVISE)
    return TRUE;
  gpointer key = GSIZE_TO_POINTER((gsize)tid);
  const char *call = p, *call_end = end;
  g_autofree char *held = NULL;
  if (find(p, end, " ... [async] --> ")) { /* the completion of a call line seen before */
    held = g_hash_table_lookup(s->pending, key) ? g_strdup(g_hash_table_lookup(s->pending, key)) : NULL;
    g_hash_table_remove(s->pending, key);
    if (!held)
      return TRUE;
    call = held;
    call_end = held + strlen(held);
  } else if (find(p, end, "--> [async] ...")) { /* completes on a later line */
    g_hash_table_insert(s->pending, key, g_strndup(p, (size_t)(end - p)));
    return TRUE;
  }
  const char *ok = find(p, end, "Success(");
  if (!ok)
    return TRUE; /* Failure(...): nothing changed */
  const char *q = ok + 8;
  uint64_t ret;
  if (!parse_num(&q, end, &ret))
    return TRUE;
  uint64_t args[VG_MAX_ARGS] = { 0 };
  unsigned na = parse_args(call, call_end, args);
  *n = make(s, (unsigned)nr, args, na, ret, out);
  s->records += *n;
  return TRUE;
}
