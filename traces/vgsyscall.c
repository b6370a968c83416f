/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgsyscall.c - valgrind's system call lines as mapping records
 * (vgsyscall.h).
 */
#include "config.h"
#include "vgsyscall.h"
#include "reader.h"
#include "elfload.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define VG_PAGE 4096ULL
#define VG_VA_LIMIT (1ULL << 57)
#define VG_MAX_ARGS 6

/* Linux x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
enum {
  NR_OPEN = 2, NR_CLOSE = 3, NR_MMAP = 9, NR_MPROTECT = 10, NR_MUNMAP = 11, NR_BRK = 12, NR_MREMAP = 25,
  NR_MADVISE = 28, NR_DUP = 32, NR_DUP2 = 33, NR_FCNTL = 72, NR_OPENAT = 257, NR_DUP3 = 292,
};
/* include/uapi/linux/fcntl.h, asm-generic/fcntl.h: AT_FDCWD is -100, which
 * valgrind prints as the 32-bit 4294967196; F_DUPFD 0, F_DUPFD_CLOEXEC 1030. */
enum { LX_AT_FDCWD = -100, LX_F_DUPFD = 0, LX_F_DUPFD_CLOEXEC = 1030 };
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
  s->fds = g_hash_table_new(g_direct_hash, g_direct_equal);
}

void vg_syscalls_clear(VgSyscalls *s)
{
  if (s->pending)
    g_hash_table_destroy(s->pending);
  if (s->fds)
    g_hash_table_destroy(s->fds);
  g_free(s->libdir);
  g_free(s->split);
  if (s->paths)
    g_hash_table_destroy(s->paths);
  memset(s, 0, sizeof *s);
}

/* A file descriptor as valgrind prints it: a 32-bit number (-1 is
 * 4294967295); -1 when it is none. */
static int fd_of(uint64_t v)
{
  return v <= UINT32_MAX && (int32_t)(uint32_t)v >= 0 ? (int)v : -1;
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

/* The string valgrind shows after a pointer argument, "0x4a(/path), ..."
 * or "0x4a(/path) )": from p (at the '(') to the ')' before ", " or " )". */
static const char *string_end(const char *p, const char *end)
{
  const char *a = find(p, end, "), "), *b = find(p, end, ") )");
  return a && (!b || a < b) ? a : b;
}

typedef struct {
  uint64_t v[VG_MAX_ARGS];
  const char *str[VG_MAX_ARGS]; /* the string valgrind shows with the argument, or NULL */
  size_t str_len[VG_MAX_ARGS];
} VgArgs;

/* The arguments of "sys_NAME ( A, B, ... )": up to VG_MAX_ARGS numbers and
 * the strings valgrind shows with some ("0x4a(/path)"). */
static unsigned parse_args(const char *s, const char *end, VgArgs *a)
{
  const char *open = find(s, end, " ( ");
  if (!open)
    return 0;
  const char *p = open + 3;
  unsigned n = 0;
  while (n < VG_MAX_ARGS && parse_num(&p, end, &a->v[n])) {
    if (p < end && *p == '(') {
      const char *close = string_end(p, end);
      if (!close)
        break;
      a->str[n] = p + 1;
      a->str_len[n] = (size_t)(close - p - 1);
      p = close + 1;
    }
    n++;
    if (p >= end || *p != ',')
      break;
    p++;
  }
  return n;
}

/* What open or openat (at index `at` of a) opened as descriptor fd. */
static void opened(VgSyscalls *s, const VgArgs *a, unsigned na, unsigned at, uint64_t fd)
{
  if (na <= at || !a->str[at] || fd_of(fd) < 0 || !a->str_len[at] || a->str_len[at] > TRACE_PATH_MAX)
    return;
  const char *dir = at == 1 && fd_of(a->v[0]) >= 0 ? g_hash_table_lookup(s->fds, GINT_TO_POINTER(fd_of(a->v[0])))
                                                     : NULL;
  g_autofree char *joined = NULL;
  const char *path = a->str[at];
  size_t len = a->str_len[at];
  if (dir && path[0] != '/') {
    joined = g_strdup_printf("%s/%.*s", dir, (int)len, path);
    path = joined;
    len = strlen(joined);
    if (len > TRACE_PATH_MAX)
      return;
  }
  if (memchr(path, '\0', len))
    return;
  g_hash_table_insert(s->fds, GINT_TO_POINTER(fd_of(fd)), (gpointer)trace_path_intern(&s->paths, path, len));
}

/* The descriptor calls: what each descriptor names. */
static void descriptors(VgSyscalls *s, unsigned nr, const VgArgs *a, unsigned na, uint64_t ret)
{
  int from = na ? fd_of(a->v[0]) : -1, to = fd_of(ret);
  switch (nr) {
  case NR_OPEN:
    opened(s, a, na, 0, ret);
    return;
  case NR_OPENAT:
    if (na > 1 && a->str[1] && a->str[1][0] != '/' && (int32_t)(uint32_t)a->v[0] != LX_AT_FDCWD &&
        (from < 0 || !g_hash_table_contains(s->fds, GINT_TO_POINTER(from)))) {
      g_hash_table_remove(s->fds, GINT_TO_POINTER(to)); /* relative to a directory not known */
      return;
    }
    opened(s, a, na, 1, ret);
    return;
  case NR_CLOSE:
    if (from >= 0)
      g_hash_table_remove(s->fds, GINT_TO_POINTER(from));
    return;
  case NR_FCNTL:
    if (na < 2 || (a->v[1] != LX_F_DUPFD && a->v[1] != LX_F_DUPFD_CLOEXEC))
      return;
    G_GNUC_FALLTHROUGH; /* a duplicate */
  case NR_DUP:
  case NR_DUP2:
  case NR_DUP3: {
    if (from < 0 || to < 0)
      return;
    gpointer path = g_hash_table_lookup(s->fds, GINT_TO_POINTER(from));
    if (path)
      g_hash_table_insert(s->fds, GINT_TO_POINTER(to), path);
    else
      g_hash_table_remove(s->fds, GINT_TO_POINTER(to));
    return;
  }
  default:
    return;
  }
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

static unsigned make(VgSyscalls *s, unsigned nr, const VgArgs *va, unsigned na, uint64_t ret, TraceRecord *out)
{
  const uint64_t *a = va->v;
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
    if ((r->flags & MAP_F_FILE) && na >= 6 && !(a[5] & (VG_PAGE - 1))) {
      int fd = fd_of(a[4]);
      r->path = fd < 0 ? NULL : g_hash_table_lookup(s->fds, GINT_TO_POINTER(fd));
      r->arg2 = a[5];
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

/* The PT_LOAD segments of the ELF file at path, as the mappings of a
 * program loaded `bias` bytes above its addresses (what the kernel's
 * load_elf_binary and valgrind's own loader, coregrind/m_ume/elf.c, map:
 * each segment from its page, at its file offset's page, with its
 * protection); a segment's first page already mapped by the one before is
 * left to it.  0 when the file cannot be read or is not a 64-bit
 * little-endian ELF file: the system calls read are x86-64's, so the
 * program and what it loads are too, and a 32-bit program's calls are
 * i386's (arch/x86/entry/syscalls/syscall_32.tbl), which these records
 * would misread. */
static unsigned elf_loads(const char *path, uint64_t bias, TraceRecord *out, unsigned max)
{
  g_autoptr(ElfLoad) elf = elfload_read(path, NULL);
  if (!elf || elf->elf_class != ELFCLASS64 || elf->data != ELFDATA2LSB)
    return 0;
  unsigned n = 0;
  uint64_t mapped = 0;
  for (guint i = 0; i < elf->segs->len && n < max; i++) {
    const ElfSegment *ph = &g_array_index(elf->segs, ElfSegment, i);
    if (!ph->memsz || ph->vaddr > VG_VA_LIMIT || ph->memsz > VG_VA_LIMIT)
      continue;
    uint64_t start = (ph->vaddr + bias) & ~(VG_PAGE - 1), off = ph->offset & ~(VG_PAGE - 1);
    uint64_t end = page_up(ph->vaddr + bias + ph->memsz);
    if (start < mapped) { /* its first page is the last of the one before */
      off += mapped - start;
      start = mapped;
    }
    if (end <= start || !range(&out[n], REC_MMAP, start, end - start))
      continue;
    out[n].prot = (uint8_t)((ph->flags & PF_R ? PROT_R : 0) | (ph->flags & PF_W ? PROT_W : 0) |
                            (ph->flags & PF_X ? PROT_X : 0));
    out[n].flags = MAP_F_FILE;
    out[n].arg2 = off;
    n++;
    mapped = end;
  }
  return n;
}

/* valgrind -v -v's lines before the program's first system call, which
 * name the program and its interpreter (vgsyscall.h). */
static void verbose_line(VgSyscalls *s, const char *p, const char *end, TraceRecord *out, unsigned *n)
{
  static const char libdir[] = "Valgrind library directory: ", reading[] = "Reading syms from ", svma[] = "svma 0x";
  while (p < end && *p == ' ')
    p++;
  size_t len = (size_t)(end - p);
  if (len > sizeof libdir && memcmp(p, libdir, sizeof libdir - 1) == 0) {
    g_free(s->libdir);
    s->libdir = g_strndup(p + sizeof libdir - 1, len - (sizeof libdir - 1));
  } else if (len > sizeof reading && memcmp(p, reading, sizeof reading - 1) == 0) {
    const char *path = p + sizeof reading - 1;
    size_t plen = len - (sizeof reading - 1);
    gboolean tool = s->libdir && g_str_has_prefix(path, s->libdir); /* valgrind's tool, not the program's */
    s->reading = tool || plen > TRACE_PATH_MAX || memchr(path, '\0', plen) ? NULL
                 : trace_path_intern(&s->paths, path, plen);
  } else if (s->reading && len > sizeof svma && memcmp(p, svma, sizeof svma - 1) == 0) {
    const char *q = p + 5, *avma = find(p, end, ", avma ");
    uint64_t sv, av;
    if (avma && parse_num(&q, end, &sv) && (avma += 7, parse_num(&avma, end, &av))) {
      *n = elf_loads(s->reading, av - sv, out, VG_SYSCALL_MAX_RECORDS);
      for (unsigned i = 0; i < *n; i++)
        out[i].path = s->reading;
    }
    s->reading = NULL;
  }
}

/* Where a valgrind message "--PID-- ..." starts inside line, or NULL. */
static const char *message_inside(const char *line, const char *end)
{
  for (const char *m = line; (m = find(m, end, "--")) != NULL; m += 2) {
    const char *d = m + 2;
    while (d < end && g_ascii_isdigit(*d))
      d++;
    if (d > m + 2 && end - d >= 3 && memcmp(d, "-- ", 3) == 0)
      return m;
  }
  return NULL;
}

gboolean vg_syscall_line(VgSyscalls *s, const char *line, size_t len, TraceRecord *out, unsigned *n)
{
  *n = 0;
  const char *end = line + len;
  if (s->split && len >= 5 && memcmp(line, " --> ", 5) == 0) { /* the rest of a call line cut by a message */
    g_autofree char *held = g_steal_pointer(&s->split);
    g_autofree char *whole = g_strdup_printf("%s%.*s", held, (int)len, line);
    return vg_syscall_line(s, whole, strlen(whole), out, n);
  }
  if (!s->started && len > 2 && line[0] == '-' && line[1] == '-') { /* "--PID-- ...": valgrind -v */
    const char *p = line + 2;
    while (p < end && g_ascii_isdigit(*p))
      p++;
    if (end - p < 2 || p[0] != '-' || p[1] != '-')
      return FALSE;
    verbose_line(s, p + 2, end, out, n);
    s->records += *n;
    return *n > 0;
  }
  if (len < 9 || memcmp(line, "SYSCALL[", 8) != 0)
    return FALSE;
  s->started = TRUE;
  const char *p = line + 8;
  uint64_t pid, tid, nr;
  if (!parse_num(&p, end, &pid) || p == end || *p++ != ',' || !parse_num(&p, end, &tid) || p + 1 >= end ||
      *p++ != ']' || *p++ != '(' || !parse_num(&p, end, &nr) || p == end || *p++ != ')')
    return TRUE;
  if (nr != NR_MMAP && nr != NR_MPROTECT && nr != NR_MUNMAP && nr != NR_BRK && nr != NR_MREMAP && nr != NR_MADVISE &&
      nr != NR_OPEN && nr != NR_OPENAT && nr != NR_CLOSE && nr != NR_DUP && nr != NR_DUP2 && nr != NR_DUP3 &&
      nr != NR_FCNTL)
    return TRUE;
  const char *msg = message_inside(p, end);
  if (msg && !find(p, msg, " --> ")) {
    /* valgrind -v wrote a message ("Reading syms from ...", on mapping
     * an object's code) after the call and before its result, which
     * comes on a line of its own, " --> [pre-success] Success(...)". */
    g_free(s->split);
    s->split = g_strndup(line, (size_t)(msg - line));
    return TRUE;
  }
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
  VgArgs args = { { 0 } };
  unsigned na = parse_args(call, call_end, &args);
  descriptors(s, (unsigned)nr, &args, na, ret);
  *n = make(s, (unsigned)nr, &args, na, ret, out);
  s->records += *n;
  return TRUE;
}
