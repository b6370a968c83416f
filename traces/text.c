/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * text.c - reader and writer of the text trace format v1.
 *
 * The format is the one a person writes by hand (doc/trace-format.md, the
 * "Text trace format (v1)" section of the design): one record a line, `#`
 * comments, numbers decimal or 0x-hex, sizes with K/M/G as powers of 1024
 * (settings_parse_size) and counts with K/M/G as powers of 1000
 * (settings_parse_count).  Rules this reader adds, each with its reason:
 *
 *  1. `process P` makes P the current process, resets the current thread to
 *     1 and emits REC_THREAD(P, 1, cpu -1), so the engine learns of a process
 *     before its first access.  `thread T [cpu C]` makes T the current thread
 *     and emits REC_THREAD(P, T, C or -1).  Every record carries the current
 *     pid and tid; both start at 1.  Ids are 1..2^32-1, cpus 0..2^31-1.
 *  2. Addresses are below 2^57, the 57-bit virtual address space of 5-level
 *     paging (Intel SDM vol. 3A, 4.5); an access or a range must end there too.
 *  3. An access is 1..4096 bytes: one instruction moves at most a few cache
 *     lines; the engine splits an access that crosses a page.
 *  4. Mapping events (mmap, munmap, mprotect, madvise, mempolicy) take a
 *     4K-aligned address and a positive length in whole 4K pages, as the
 *     kernel requires of the address and as a writer of traces can always
 *     give for the length (mm/mmap.c, mm/madvise.c, mm/mempolicy.c).
 *  5. prot is a subset of rwx in that order, or `none`; mmap flags are
 *     `stack`, `hugetlb`, `hugetlb1g`, `shared` (and `ondemand`, which only
 *     readers of other formats produce).  `hugetlb1g` is MAP_HUGETLB with
 *     MAP_HUGE_1GB, so it sets both record bits and excludes `hugetlb`.
 *     Policies and node lists are those of mempolicy_syntax.c, nodes
 *     0..63 (MEMPOLICY_MAX_NODES, MAX_NUMNODES of the model).
 *
 * Any malformed line is a GError TRACE_ERROR_PARSE reading
 * "FILE:LINE: what is wrong near 'TOKEN'; expected WHAT IS ALLOWED".  A NUL
 * byte is one too ("FILE:LINE:COLUMN: a NUL byte ..."): lines are cut as C
 * strings, and it would end its line unseen.
 *
 * Speed: the reader refills a 1 MiB buffer from a TraceInput (input.c, which
 * also undoes gzip, xz and zstd), cuts lines with memchr
 * and tokenises them in place; numbers without a suffix never reach strtoull.
 * Measured: 1.2e7 to 1.6e7 access lines a second from a 190 MB file (about
 * 1.3e7 from a pipe) on one shared x86-64 server core at -O2, faster than an
 * engine consumes them.  Memory is constant: the longest accepted line is the buffer.
 *
 * Left out: text traces carry no timestamps and no register dependences
 * other than D's "address came from the previous load".
 */
#include "config.h"
#include "text.h"
#include "mempolicy_syntax.h"
#include "reader.h"
#include "settings.h"
#include "trace_format.h"

#include <string.h>

#define TEXT_VA_LIMIT (1ULL << 57)        /* rule 2 */
#define TEXT_ACCESS_MAX_BYTES 4096        /* rule 3 */
#define TEXT_PAGE_BYTES 4096ULL           /* rule 4 */
#define TEXT_BUFFER_BYTES (1u << 20)      /* read buffer, also the longest line */
#define TEXT_TOKEN_SHOWN 40               /* a token is cut to this in messages */
#define TEXT_NO_NUL SIZE_MAX              /* TextSource.nul: none read */

typedef struct {
  TraceReader rd;    /* rd.in is NULL when parsing a string */
  char *buf;         /* unread bytes are buf[start, end); buf[end] is writable */
  size_t cap, start, end;
  size_t nul;        /* index in buf of the first NUL byte read and not yet passed, or TEXT_NO_NUL */
  uint64_t buf_offset; /* offset in the input of buf[0], for messages */
  gboolean eof;      /* `in` has nothing more to give */
  uint64_t line_no;
  uint32_t pid, tid; /* current process and thread (rule 1) */
} TextSource;

/* The line being parsed: tokens are cut in place by writing NULs. */
typedef struct {
  TextSource *t;
  char *p;
  gboolean done;    /* end of line or start of a comment reached */
  const char *last; /* the last token taken, for "missing field" messages */
} Line;

static const char *const RECORD_NAMES =
  "R|W|D|X ADDR SIZE [+GAP], compute, mmap, munmap, mprotect, madvise, prctl, mempolicy, process, thread or roi";

/* Names of the enum values of record.h, one table for reading and writing. */
static const char *const ADVICE_NAMES[] = {
  [ADV_HUGEPAGE] = "hugepage", [ADV_NOHUGEPAGE] = "nohugepage", [ADV_DONTNEED] = "dontneed",
  [ADV_COLLAPSE] = "collapse",
};
/* mmap flags in the order they are written. */
static const struct {
  const char *name;
  uint8_t bit;
} MAP_FLAGS[] = {
  { "stack", MAP_F_STACK },
  { "hugetlb", MAP_F_HUGETLB },
  { "hugetlb1g", MAP_F_HUGETLB | MAP_F_HUGETLB_1G },
  { "shared", MAP_F_SHARED },
  { "ondemand", MAP_F_ONDEMAND },
  { "file", MAP_F_FILE },
};
#define EXPECT_MAP_FLAGS \
  "flags stack, hugetlb or hugetlb1g, shared, file (each at most once), then with file offset=N and path=NAME, " \
  "or end of line"

/* The table entry that names the flags `bits` hold: hugetlb1g, not also
 * hugetlb, when the 1G bit is set. */
static gboolean map_flag_written(unsigned k, uint8_t bits)
{
  if (MAP_FLAGS[k].bit == MAP_F_HUGETLB && (bits & MAP_F_HUGETLB_1G))
    return FALSE;
  return (bits & MAP_FLAGS[k].bit) == MAP_FLAGS[k].bit;
}

/* ---- errors ---------------------------------------------------------- */

/* Append `token` for a message: printable, at most TEXT_TOKEN_SHOWN chars. */
static void append_token(GString *msg, const char *token)
{
  settings_append_shown(msg, token, TEXT_TOKEN_SHOWN);
}

static gboolean fail(Line *l, GError **error, const char *token, const char *what, const char *expected)
{
  GString *msg = g_string_new(NULL);
  g_string_append_printf(msg, "%s:%" G_GUINT64_FORMAT ": %s near '", l->t->rd.name, l->t->line_no, what);
  append_token(msg, token ? token : "");
  g_string_append_printf(msg, "'; expected %s", expected);
  g_set_error_literal(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE, msg->str);
  g_string_free(msg, TRUE);
  return FALSE;
}

/* ---- tokens and numbers ------------------------------------------------ */

static inline gboolean is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next token of the line, NUL-terminated in place, or NULL at the end. */
static char *next_token(Line *l)
{
  if (l->done)
    return NULL;
  char *p = l->p;
  while (is_blank(*p))
    p++;
  if (*p == '\0' || *p == '#') {
    l->done = TRUE;
    return NULL;
  }
  char *tok = p;
  while (*p && *p != '#' && !is_blank(*p))
    p++;
  if (*p == '\0' || *p == '#')
    l->done = TRUE;
  *p = '\0';
  l->p = p + 1;
  l->last = tok;
  return tok;
}

/* Decimal or 0x-hex without suffix; FALSE on anything else or on overflow. */
static gboolean parse_plain(const char *s, uint64_t *out)
{
  uint64_t v = 0;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s += 2;
    if (!*s)
      return FALSE;
    for (; *s; s++) {
      unsigned c = (unsigned char)*s, d;
      if (c - '0' < 10)
        d = c - '0';
      else if ((c | 0x20) - 'a' < 6)
        d = (c | 0x20) - 'a' + 10;
      else
        return FALSE;
      if (v >> 60)
        return FALSE;
      v = v << 4 | d;
    }
  } else {
    if (!*s)
      return FALSE;
    for (; *s; s++) {
      unsigned d = (unsigned)((unsigned char)*s - '0');
      if (d > 9 || v > (UINT64_MAX - d) / 10)
        return FALSE;
      v = v * 10 + d;
    }
  }
  *out = v;
  return TRUE;
}

static gboolean parse_size(const char *s, uint64_t *out)
{
  return parse_plain(s, out) || settings_parse_size(s, out);
}

static gboolean parse_count(const char *s, uint64_t *out)
{
  return parse_plain(s, out) || settings_parse_count(s, out);
}

/* Take the next token, failing with "missing WHAT" if the line ended. */
static char *need(Line *l, GError **error, const char *what, const char *expected)
{
  char *tok = next_token(l);
  if (!tok) {
    g_autofree char *missing = g_strconcat("missing ", what, NULL);
    fail(l, error, l->last, missing, expected);
  }
  return tok;
}

static gboolean end_of_line(Line *l, GError **error, const char *expected)
{
  char *tok = next_token(l);
  if (tok)
    return fail(l, error, tok, "unexpected text", expected);
  return TRUE;
}

static gboolean take_id(Line *l, GError **error, const char *what, uint64_t max, uint64_t *out)
{
  g_autofree char *expected = g_strdup_printf("a %s 1..%" G_GUINT64_FORMAT, what, max);
  char *tok = need(l, error, what, expected);
  if (!tok)
    return FALSE;
  if (!parse_plain(tok, out) || *out < 1 || *out > max) {
    g_autofree char *bad = g_strconcat("bad ", what, NULL);
    return fail(l, error, tok, bad, expected);
  }
  return TRUE;
}

/* ---- fields shared by several records --------------------------------- */

#define EXPECT_ADDR "an address, decimal or 0x-hex, below 2^57 (0x200000000000000)"
#define EXPECT_PAGE_ADDR "a 4K-aligned address (a multiple of 0x1000) below 2^57"
#define EXPECT_LEN "a length in bytes, K/M/G = powers of 1024, a positive multiple of 4K"
#define EXPECT_PROT "r, w, x, rw, rx, wx, rwx or none"

static gboolean take_addr(Line *l, GError **error, uint64_t *addr)
{
  char *tok = need(l, error, "address", EXPECT_ADDR);
  if (!tok)
    return FALSE;
  if (!parse_plain(tok, addr))
    return fail(l, error, tok, "bad address", EXPECT_ADDR);
  if (*addr >= TEXT_VA_LIMIT)
    return fail(l, error, tok, "address beyond the 57-bit virtual address space", EXPECT_ADDR);
  return TRUE;
}

/* ADDR LEN of a mapping event: page-aligned, inside 2^57 (rules 2, 4). */
static gboolean take_range(Line *l, GError **error, TraceRecord *r)
{
  char *atok = need(l, error, "address", EXPECT_PAGE_ADDR);
  if (!atok)
    return FALSE;
  if (!parse_plain(atok, &r->addr))
    return fail(l, error, atok, "bad address", EXPECT_PAGE_ADDR);
  if (r->addr >= TEXT_VA_LIMIT)
    return fail(l, error, atok, "address beyond the 57-bit virtual address space", EXPECT_PAGE_ADDR);
  if (r->addr % TEXT_PAGE_BYTES)
    return fail(l, error, atok, "address not 4K-aligned", EXPECT_PAGE_ADDR);
  char *tok = need(l, error, "length", EXPECT_LEN);
  if (!tok)
    return FALSE;
  if (!parse_size(tok, &r->len) || r->len == 0)
    return fail(l, error, tok, "bad length", EXPECT_LEN);
  if (r->len % TEXT_PAGE_BYTES)
    return fail(l, error, tok, "length not a multiple of 4K", EXPECT_LEN);
  if (r->len > TEXT_VA_LIMIT - r->addr)
    return fail(l, error, tok, "range ends beyond the 57-bit virtual address space",
                "ADDR + LEN at most 2^57 (0x200000000000000)");
  return TRUE;
}

static gboolean take_prot(Line *l, GError **error, uint8_t *prot)
{
  char *tok = need(l, error, "protection", EXPECT_PROT);
  if (!tok)
    return FALSE;
  if (strcmp(tok, "none") == 0) {
    *prot = 0;
    return TRUE;
  }
  const char *s = tok;
  uint8_t p = 0;
  if (*s == 'r')
    p |= PROT_R, s++;
  if (*s == 'w')
    p |= PROT_W, s++;
  if (*s == 'x')
    p |= PROT_X, s++;
  if (*s || !p)
    return fail(l, error, tok, "bad protection", EXPECT_PROT);
  *prot = p;
  return TRUE;
}

/* ---- records ------------------------------------------------------------ */

#define EXPECT_SIZE "the access size in bytes, 1..4096"
#define EXPECT_GAP "+N, the non-memory instructions before the access (N up to 4294967295), or end of line"

static gboolean parse_access(Line *l, AccessKind kind, TraceRecord *r, GError **error)
{
  r->type = REC_ACCESS;
  r->kind = kind;
  if (!take_addr(l, error, &r->addr))
    return FALSE;
  char *tok = need(l, error, "access size", EXPECT_SIZE);
  if (!tok)
    return FALSE;
  uint64_t size;
  if (!parse_size(tok, &size) || size < 1 || size > TEXT_ACCESS_MAX_BYTES)
    return fail(l, error, tok, "bad access size", EXPECT_SIZE);
  if (size > TEXT_VA_LIMIT - r->addr)
    return fail(l, error, tok, "access ends beyond the 57-bit virtual address space", "ADDR + SIZE at most 2^57");
  r->size = (uint32_t)size;
  tok = next_token(l);
  if (tok) {
    uint64_t gap;
    if (tok[0] != '+' || !parse_count(tok + 1, &gap) || gap > UINT32_MAX)
      return fail(l, error, tok, "bad gap", EXPECT_GAP);
    r->gap = (uint32_t)gap;
    return end_of_line(l, error, "end of line after the gap");
  }
  return TRUE;
}

#define EXPECT_OFFSET "offset=N, the offset in the file: a multiple of 4K (mmap's last argument)"
#define EXPECT_PATH "path=NAME to the end of the line, a backslash written \\\\ and a control byte \\xHH, " \
  "at most 4095 bytes"

/* The file name after `path=` (p, to the end of the line, trailing blanks
 * dropped), its escapes undone into out; NULL when fine, else what is wrong. */
static const char *unescape_path(const char *p, GString *out)
{
  size_t n = strlen(p);
  while (n && is_blank(p[n - 1]))
    n--;
  for (size_t i = 0; i < n; i++) {
    if (p[i] != '\\') {
      g_string_append_c(out, p[i]);
    } else if (i + 1 < n && p[i + 1] == '\\') {
      g_string_append_c(out, '\\');
      i++;
    } else if (i + 3 < n && p[i + 1] == 'x' && g_ascii_isxdigit(p[i + 2]) && g_ascii_isxdigit(p[i + 3])) {
      char c = (char)(g_ascii_xdigit_value(p[i + 2]) << 4 | g_ascii_xdigit_value(p[i + 3]));
      if (!c)
        return "a NUL byte (\\x00) in a path";
      g_string_append_c(out, c);
      i += 3;
    } else {
      return "bad escape in a path";
    }
    if (out->len > TRACE_PATH_MAX)
      return "path longer than 4095 bytes (PATH_MAX)";
  }
  return out->len ? NULL : "empty path";
}

/* `path=NAME` ends the line: NAME is the rest of it, spaces and `#` included. */
static gboolean take_path(Line *l, TraceRecord *r, GError **error)
{
  char *p = l->p;
  while (is_blank(*p))
    p++;
  g_autoptr(GString) name = g_string_new(NULL);
  const char *bad = unescape_path(p + 5, name);
  l->done = TRUE;
  if (!bad && !(r->flags & MAP_F_FILE))
    bad = "path= without the file flag";
  if (bad)
    return fail(l, error, p, bad, EXPECT_PATH);
  r->path = trace_path_intern(&l->t->rd.paths, name->str, name->len);
  return TRUE;
}

static gboolean parse_mmap(Line *l, TraceRecord *r, GError **error)
{
  r->type = REC_MMAP;
  if (!take_range(l, error, r) || !take_prot(l, error, &r->prot))
    return FALSE;
  gboolean offset = FALSE;
  for (;;) {
    const char *ahead = l->p;
    while (!l->done && is_blank(*ahead))
      ahead++;
    if (!l->done && strncmp(ahead, "path=", 5) == 0)
      return take_path(l, r, error);
    char *tok = next_token(l);
    if (!tok)
      break;
    if (strncmp(tok, "offset=", 7) == 0) {
      if (offset)
        return fail(l, error, tok, "offset= given twice", EXPECT_OFFSET);
      if (!(r->flags & MAP_F_FILE))
        return fail(l, error, tok, "offset= without the file flag", "the flag file before offset=");
      if (!parse_size(tok + 7, &r->arg2) || r->arg2 % TEXT_PAGE_BYTES)
        return fail(l, error, tok, "bad file offset", EXPECT_OFFSET);
      offset = TRUE;
      continue;
    }
    if (offset)
      return fail(l, error, tok, "unexpected text after offset=", "path=NAME or end of line");
    unsigned k = 0;
    while (k < G_N_ELEMENTS(MAP_FLAGS) && strcmp(tok, MAP_FLAGS[k].name))
      k++;
    if (k == G_N_ELEMENTS(MAP_FLAGS))
      return fail(l, error, tok, "unknown mmap flag", EXPECT_MAP_FLAGS);
    uint8_t bit = MAP_FLAGS[k].bit;
    if ((r->flags & bit & MAP_F_HUGETLB) && (r->flags & MAP_F_HUGETLB_1G) != (bit & MAP_F_HUGETLB_1G))
      return fail(l, error, tok, "hugetlb and hugetlb1g exclude each other", EXPECT_MAP_FLAGS);
    if (r->flags & bit)
      return fail(l, error, tok, "mmap flag given twice", EXPECT_MAP_FLAGS);
    r->flags |= bit;
    if ((r->flags & MAP_F_FILE) && (r->flags & MAP_F_HUGETLB))
      return fail(l, error, tok, "a file mapping cannot be hugetlb (a hugetlbfs file is written hugetlb shared)",
                  EXPECT_MAP_FLAGS);
  }
  return TRUE;
}

static gboolean parse_madvise(Line *l, TraceRecord *r, GError **error)
{
  const char *expected = "hugepage, nohugepage, dontneed or collapse";
  r->type = REC_MADVISE;
  if (!take_range(l, error, r))
    return FALSE;
  char *tok = need(l, error, "advice", expected);
  if (!tok)
    return FALSE;
  unsigned k = 0;
  while (k < G_N_ELEMENTS(ADVICE_NAMES) && strcmp(tok, ADVICE_NAMES[k]))
    k++;
  if (k == G_N_ELEMENTS(ADVICE_NAMES))
    return fail(l, error, tok, "unknown advice", expected);
  r->arg = (int32_t)k;
  return end_of_line(l, error, "end of line after the advice");
}

static gboolean parse_prctl(Line *l, TraceRecord *r, GError **error)
{
  r->type = REC_PRCTL;
  char *tok = need(l, error, "prctl option", "thp_disable");
  if (!tok)
    return FALSE;
  if (strcmp(tok, "thp_disable"))
    return fail(l, error, tok, "unknown prctl option", "thp_disable");
  r->arg = PRCTL_THP_DISABLE;
  tok = need(l, error, "thp_disable value", "0 or 1");
  if (!tok)
    return FALSE;
  if (strcmp(tok, "0") && strcmp(tok, "1"))
    return fail(l, error, tok, "bad thp_disable value", "0 or 1");
  r->arg2 = tok[0] == '1';
  return end_of_line(l, error, "end of line after the value");
}

static gboolean parse_mempolicy(Line *l, TraceRecord *r, GError **error)
{
  const char *expected = mempolicy_syntax_expected();
  r->type = REC_MEMPOLICY;
  /* `mempolicy process POLICY` (set_mempolicy) or `mempolicy ADDR LEN
   * POLICY` (mbind). */
  const char *p = l->p;
  while (!l->done && is_blank(*p))
    p++;
  if (!l->done && g_str_has_prefix(p, "process") && (p[7] == '\0' || p[7] == '#' || is_blank(p[7]))) {
    next_token(l);
    r->flags = MPOL_F_PROCESS;
    r->addr = r->len = 0;
  } else if (!l->done && g_ascii_isalpha(*p)) {
    char *word = next_token(l);
    return fail(l, error, word, "bad address", EXPECT_PAGE_ADDR ", or 'process' for the process's policy");
  } else if (!take_range(l, error, r)) {
    return FALSE;
  }
  char *tok = need(l, error, "policy", expected);
  if (!tok)
    return FALSE;
  /* Any node of the 64 (rule 5): which ones the machine has is the
   * kernel's question when the record is applied (mempolicy_from_record). */
  MemPolicy pol;
  MempolicySyntaxError e = mempolicy_syntax_parse(tok, MEMPOLICY_MAX_NODES, &pol, NULL);
  if (e == MEMPOLICY_SYNTAX_UNKNOWN_MODE)
    return fail(l, error, tok, "unknown memory policy", expected);
  if (e == MEMPOLICY_SYNTAX_NO_NODES && !strchr(tok, ':')) {
    g_autofree char *bare = g_strdup_printf("%s without nodes", tok);
    return fail(l, error, tok, bare, strchr(tok, '=') ? mempolicy_syntax_flag_expected() : expected);
  }
  if (e == MEMPOLICY_SYNTAX_BAD_FLAG)
    return fail(l, error, tok, "bad mode flag", mempolicy_syntax_flag_expected());
  if (e != MEMPOLICY_SYNTAX_OK) {
    /* An empty or bad list, a node beyond 63, more than one node for a mode
     * that takes one. */
    const MempolicyMode *m = mempolicy_mode_by_name(tok, strcspn(tok, ":="));
    if (m && m->node_arg == MEMPOLICY_NODES_ONE) {
      g_autofree char *what = g_strdup_printf("bad %s node", m->name);
      g_autofree char *want = g_strdup_printf("%s:N with one node N in 0..63", m->name);
      return fail(l, error, tok, what, want);
    }
    return fail(l, error, tok, "bad node list", "node numbers 0..63 as a list like 0-3,5");
  }
  r->arg = pol.mode;
  r->arg2 = pol.nodes;
  r->flags |= pol.flags; /* MEMPOLICY_F_BALANCING is the record's bit */
  return end_of_line(l, error, "end of line after the policy");
}

static gboolean parse_thread(Line *l, TraceRecord *r, GError **error)
{
  uint64_t tid;
  if (!take_id(l, error, "thread id", UINT32_MAX, &tid))
    return FALSE;
  r->type = REC_THREAD;
  r->arg = -1;
  char *tok = next_token(l);
  if (tok) {
    if (strcmp(tok, "cpu"))
      return fail(l, error, tok, "unexpected text", "'cpu C' or end of line");
    const char *expected = "a cpu number 0..2147483647";
    uint64_t cpu;
    tok = need(l, error, "cpu number", expected);
    if (!tok)
      return FALSE;
    if (!parse_plain(tok, &cpu) || cpu > INT32_MAX)
      return fail(l, error, tok, "bad cpu number", expected);
    r->arg = (int32_t)cpu;
    if (!end_of_line(l, error, "end of line after the cpu"))
      return FALSE;
  }
  l->t->tid = r->tid = (uint32_t)tid;
  return TRUE;
}

/* Parse one line into *r.  Returns 1 for a record, 0 for a blank or comment
 * line, -1 on error. */
static int parse_line(TextSource *t, char *text, TraceRecord *r, GError **error)
{
  Line l = { t, text, FALSE, text };
  char *tok = next_token(&l);
  if (!tok)
    return 0;
  memset(r, 0, sizeof *r);
  r->pid = t->pid;
  r->tid = t->tid;
  gboolean ok;
  if (tok[1] == '\0') {
    switch (tok[0]) {
    case 'R': ok = parse_access(&l, ACC_LOAD, r, error); break;
    case 'W': ok = parse_access(&l, ACC_STORE, r, error); break;
    case 'D': ok = parse_access(&l, ACC_DEP_LOAD, r, error); break;
    case 'X': ok = parse_access(&l, ACC_IFETCH, r, error); break;
    case 'r': case 'w': case 'd': case 'x':
      ok = fail(&l, error, tok, "unknown record (access kinds are upper case)", RECORD_NAMES);
      break;
    default: ok = fail(&l, error, tok, "unknown record", RECORD_NAMES); break;
    }
  } else if (strcmp(tok, "compute") == 0) {
    const char *expected = "instructions, a count with K/M/G = powers of 1000";
    r->type = REC_COMPUTE;
    char *n = need(&l, error, "instruction count", expected);
    ok = n && (parse_count(n, &r->len) ? end_of_line(&l, error, "end of line after the count")
                                        : fail(&l, error, n, "bad instruction count", expected));
  } else if (strcmp(tok, "mmap") == 0) {
    ok = parse_mmap(&l, r, error);
  } else if (strcmp(tok, "munmap") == 0) {
    r->type = REC_MUNMAP;
    ok = take_range(&l, error, r) && end_of_line(&l, error, "end of line after the length");
  } else if (strcmp(tok, "mprotect") == 0) {
    r->type = REC_MPROTECT;
    ok = take_range(&l, error, r) && take_prot(&l, error, &r->prot) &&
         end_of_line(&l, error, "end of line after the protection");
  } else if (strcmp(tok, "madvise") == 0) {
    ok = parse_madvise(&l, r, error);
  } else if (strcmp(tok, "prctl") == 0) {
    ok = parse_prctl(&l, r, error);
  } else if (strcmp(tok, "mempolicy") == 0) {
    ok = parse_mempolicy(&l, r, error);
  } else if (strcmp(tok, "thread") == 0) {
    ok = parse_thread(&l, r, error);
  } else if (strcmp(tok, "process") == 0) {
    uint64_t pid;
    ok = take_id(&l, error, "process id", UINT32_MAX, &pid) && end_of_line(&l, error, "end of line after the id");
    if (ok) {
      t->pid = r->pid = (uint32_t)pid;
      t->tid = r->tid = 1;
      r->type = REC_THREAD;
      r->arg = -1;
    }
  } else if (strcmp(tok, "roi") == 0) {
    char *what = need(&l, error, "begin or end", "begin or end");
    ok = what != NULL;
    if (ok && strcmp(what, "begin") == 0)
      r->type = REC_ROI_BEGIN;
    else if (ok && strcmp(what, "end") == 0)
      r->type = REC_ROI_END;
    else if (ok)
      ok = fail(&l, error, what, "bad roi mark", "begin or end");
    ok = ok && end_of_line(&l, error, "end of line");
  } else {
    ok = fail(&l, error, tok, "unknown record", RECORD_NAMES);
  }
  return ok ? 1 : -1;
}

/* ---- the source --------------------------------------------------------- */

/* A NUL byte at buf[t->nul], in the line that starts at `from`: lines are
 * cut as C strings, so it would end the line there and hide the rest. */
static char *nul_error(TextSource *t, const char *from, GError **error)
{
  g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE,
              "%s:%" G_GUINT64_FORMAT ":%zu: a NUL byte (byte offset %" G_GUINT64_FORMAT "); a text trace has none: "
              "is this a binary file? give -f with its format (mtr, champsim)",
              t->rd.name, t->line_no + 1, (size_t)(t->buf + t->nul - from) + 1, t->buf_offset + t->nul);
  return NULL;
}

/* The next line, NUL-terminated in the buffer; NULL at the end or on error
 * (then *error is set).  A NUL byte in the input is an error: one memchr a
 * buffer refill finds the first (t->nul), not one a line. */
static char *next_line(TextSource *t, GError **error)
{
  for (;;) {
    char *from = t->buf + t->start;
    char *nl = memchr(from, '\n', t->end - t->start);
    if (nl && t->nul < (size_t)(nl - t->buf))
      return nul_error(t, from, error);
    if (nl) {
      *nl = '\0';
      t->start = (size_t)(nl - t->buf) + 1;
      t->line_no++;
      return from;
    }
    if (t->eof) {
      if (t->start == t->end)
        return NULL;
      if (t->nul < t->end)
        return nul_error(t, from, error);
      t->buf[t->end] = '\0'; /* a last line without newline */
      t->start = t->end;
      t->line_no++;
      return from;
    }
    memmove(t->buf, from, t->end - t->start);
    t->end -= t->start;
    t->buf_offset += t->start;
    if (t->nul != TEXT_NO_NUL)
      t->nul -= t->start;
    t->start = 0;
    if (t->end == t->cap - 1) {
      g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE,
                  "%s:%" G_GUINT64_FORMAT ": line longer than %zu bytes; expected one record a line",
                  t->rd.name, t->line_no + 1, t->cap - 1);
      return NULL;
    }
    gssize got = trace_input_read(t->rd.in, t->buf + t->end, t->cap - 1 - t->end, error);
    if (got < 0)
      return NULL;
    char *nul = t->nul == TEXT_NO_NUL ? memchr(t->buf + t->end, '\0', (size_t)got) : NULL;
    if (nul)
      t->nul = (size_t)(nul - t->buf);
    t->end += (size_t)got;
    if (got == 0)
      t->eof = TRUE;
  }
}

static gboolean text_fill(TraceReader *rd, TraceBatch *batch, GError **error)
{
  TextSource *t = (TextSource *)rd;
  while (batch->n < TRACE_BATCH_MAX) {
    char *line = next_line(t, error);
    if (!line)
      break;
    int got = parse_line(t, line, &batch->rec[batch->n], error);
    if (got < 0)
      break;
    batch->n += (unsigned)got;
  }
  return *error == NULL;
}

static void text_clear(TraceReader *rd)
{
  g_free(((TextSource *)rd)->buf);
}

static const TraceReaderOps text_ops = TRACE_READER_OPS("text", TRUE, text_fill, text_clear);

static TextSource *text_source_new(const char *name, TraceInput *in)
{
  TextSource *t = g_new0(TextSource, 1);
  trace_reader_init(&t->rd, &text_ops, UNMAPPED_SEGV, in, name);
  t->nul = TEXT_NO_NUL;
  t->pid = 1;
  t->tid = 1;
  return t;
}

TraceSource *text_source_open(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  TraceInput *in = trace_input_open(path, TRUE, error);
  return in ? text_source_from_input(in) : NULL;
}

TraceSource *text_source_from_input(TraceInput *in)
{
  g_return_val_if_fail(in != NULL, NULL);
  TextSource *t = text_source_new(trace_input_name(in), in);
  t->cap = TEXT_BUFFER_BYTES;
  t->buf = g_malloc(t->cap);
  return &t->rd.base;
}

TraceSource *text_source_from_string(const char *name, const char *text, GError **error)
{
  g_return_val_if_fail(name != NULL && text != NULL, NULL);
  TextSource *t = text_source_new(name, NULL);
  t->end = strlen(text);
  t->cap = t->end + 1;
  t->buf = g_strdup(text); /* parsed in place */
  t->eof = TRUE;
  return &t->rd.base;
}

/* ---- writing ---------------------------------------------------------- */

static void append_hex(GString *out, uint64_t v)
{
  char tmp[24];
  int i = sizeof tmp;
  do {
    tmp[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  tmp[--i] = 'x';
  tmp[--i] = '0';
  g_string_append_len(out, tmp + i, (gssize)sizeof tmp - i);
}

static void append_dec(GString *out, uint64_t v)
{
  char tmp[24];
  int i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  g_string_append_len(out, tmp + i, (gssize)sizeof tmp - i);
}

/* Bytes with the largest of G, M, K that divides them exactly. */
static void append_len(GString *out, uint64_t bytes)
{
  static const char sfx[] = "GMK";
  for (int k = 0; k < 3; k++) {
    uint64_t unit = 1ULL << (10 * (3 - k));
    if (bytes && bytes % unit == 0) {
      append_dec(out, bytes / unit);
      g_string_append_c(out, sfx[k]);
      return;
    }
  }
  append_dec(out, bytes);
}

static void append_range(GString *out, const char *name, const TraceRecord *r)
{
  g_string_append(out, name);
  g_string_append_c(out, ' ');
  append_hex(out, r->addr);
  g_string_append_c(out, ' ');
  append_len(out, r->len);
}

/* " path=NAME", NAME as take_path reads it back: a backslash doubled, a
 * control byte (a newline among them) and a last blank as \\xHH. */
static void append_path(GString *out, const char *path)
{
  g_string_append(out, " path=");
  for (const char *c = path; *c; c++) {
    unsigned char b = (unsigned char)*c;
    if (b == '\\')
      g_string_append(out, "\\\\");
    else if (b < 0x20 || b == 0x7f || (c[1] == '\0' && is_blank(*c)))
      g_string_append_printf(out, "\\x%02x", b);
    else
      g_string_append_c(out, *c);
  }
}

static void append_prot(GString *out, unsigned prot)
{
  g_string_append_c(out, ' ');
  if (!(prot & (PROT_R | PROT_W | PROT_X)))
    g_string_append(out, "none");
  if (prot & PROT_R)
    g_string_append_c(out, 'r');
  if (prot & PROT_W)
    g_string_append_c(out, 'w');
  if (prot & PROT_X)
    g_string_append_c(out, 'x');
}

void text_format_record(const TraceRecord *r, GString *out)
{
  static const char kinds[] = "RWDX";
  switch ((TraceRecordType)r->type) {
  case REC_ACCESS:
    g_string_append_c(out, r->kind < 4 ? kinds[r->kind] : '?');
    g_string_append_c(out, ' ');
    append_hex(out, r->addr);
    g_string_append_c(out, ' ');
    append_dec(out, r->size);
    if (r->gap) {
      g_string_append(out, " +");
      append_dec(out, r->gap);
    }
    return;
  case REC_COMPUTE:
    g_string_append(out, "compute ");
    append_dec(out, r->len);
    return;
  case REC_MMAP:
    append_range(out, "mmap", r);
    append_prot(out, r->prot);
    for (unsigned k = 0; k < G_N_ELEMENTS(MAP_FLAGS); k++)
      if (map_flag_written(k, r->flags)) {
        g_string_append_c(out, ' ');
        g_string_append(out, MAP_FLAGS[k].name);
      }
    if ((r->flags & MAP_F_FILE) && r->arg2) {
      g_string_append(out, " offset=");
      append_hex(out, r->arg2);
    }
    if ((r->flags & MAP_F_FILE) && r->path)
      append_path(out, r->path);
    return;
  case REC_MUNMAP:
    append_range(out, "munmap", r);
    return;
  case REC_MPROTECT:
    append_range(out, "mprotect", r);
    append_prot(out, r->prot);
    return;
  case REC_MADVISE:
    append_range(out, "madvise", r);
    g_string_append_c(out, ' ');
    g_string_append(out, (unsigned)r->arg < G_N_ELEMENTS(ADVICE_NAMES) ? ADVICE_NAMES[r->arg] : "?");
    return;
  case REC_PRCTL:
    g_string_append(out, "prctl thp_disable ");
    append_dec(out, r->arg2 != 0);
    return;
  case REC_MEMPOLICY:
    if (r->flags & MPOL_F_PROCESS)
      g_string_append(out, "mempolicy process");
    else
      append_range(out, "mempolicy", r);
    g_string_append_c(out, ' ');
    mempolicy_syntax_format(out, (unsigned)r->arg, r->flags & MEMPOLICY_F_BALANCING, r->arg2);
    return;
  case REC_THREAD:
    if (r->tid == 1 && r->arg < 0) {
      g_string_append(out, "process ");
      append_dec(out, r->pid);
      return;
    }
    g_string_append(out, "thread ");
    append_dec(out, r->tid);
    if (r->arg >= 0) {
      g_string_append(out, " cpu ");
      append_dec(out, (uint64_t)r->arg);
    }
    return;
  case REC_ROI_BEGIN:
    g_string_append(out, "roi begin");
    return;
  case REC_ROI_END:
    g_string_append(out, "roi end");
    return;
  case N_REC_TYPES:
    break;
  }
  g_string_append_printf(out, "# record of unknown type %u", r->type);
}

void text_writer_init(TextWriter *w)
{
  w->pid = 1;
  w->tid = 1;
}

void text_writer_write(TextWriter *w, const TraceRecord *r, GString *out)
{
  TraceRecord ctx = { .type = REC_THREAD, .pid = r->pid, .tid = 1, .arg = -1 };
  if (r->pid != w->pid && !(r->type == REC_THREAD && r->tid == 1 && r->arg < 0)) {
    text_format_record(&ctx, out); /* `process P`: now at (P, 1) */
    g_string_append_c(out, '\n');
    w->pid = r->pid;
    w->tid = 1;
  }
  if (r->type != REC_THREAD && r->tid != w->tid) {
    ctx.tid = r->tid;
    text_format_record(&ctx, out); /* `thread T` (or `process P` for T = 1) */
    g_string_append_c(out, '\n');
  }
  text_format_record(r, out);
  g_string_append_c(out, '\n');
  w->pid = r->pid;
  w->tid = r->tid;
}

/* The row of the registry of readers (trace_format.c): -f text. */
static TraceSource *text_open(TraceInput *in, GError **error)
{
  (void)error;
  return text_source_from_input(in);
}

const TraceFormatRow text_reader = {
  .name = "text",
  .help = "mmusim's text format v1: one record a line",
  .source = "doc/trace-format.md, Text format v1",
  .open = text_open,
};
