/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symbols.c - functions and lines of ELF files (symbols.h): with libdwfl
 * when built with it, else through one `addr2line -f` per file (binutils'
 * addr2line.c answers an address a line and flushes, so one process serves
 * every address of its file), and names demangled with libiberty's
 * cplus_demangle, as perf's cxx_demangle_sym (tools/perf/util/
 * demangle-cxx.cpp, 6.12) and c++filt do.
 *
 * Left out: addr2line names no offset into the function (SymInfo.offset 0).
 * The addr2line path reads the PT_LOAD segments with base/elfload.c, of
 * either class and byte order; addr2line itself reads a file of the other
 * byte order than the host's through binutils' generic elf32-big,
 * elf64-little ... targets, or answers "??".
 */
#include "config.h"
#include "symbols.h"
#include "elfload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

#ifdef HAVE_LIBDW
#include <elfutils/libdwfl.h>
#include <gelf.h>
#endif

/* Where the answers come from. */
typedef enum { SOURCE_NONE, SOURCE_LIBDW, SOURCE_ADDR2LINE } SymSource;

/* The environment variable that sets libdw aside (the addr2line path's
 * test, or a libdw that misreads a file). */
#define NO_LIBDW_ENV "MMUSIM_NO_LIBDW"
#define ADDR2LINE "addr2line"
/* addr2line's answer for what it cannot name (binutils addr2line.c) */
#define ADDR2LINE_UNKNOWN "??"

typedef struct {
  char *path;
  uint64_t offset;
} SymKey;

struct Symbolizer {
  char *symfs;
  SymSource source;
  gboolean demangle;   /* names as C++ (and Rust) sources spell them, not as mangled */
  GHashTable *files;   /* recorded path -> SymFile* (NULL: not at hand) */
  GHashTable *answers; /* SymKey* -> SymInfo* */
  GHashTable *strings; /* the functions' and files' names */
};

static guint key_hash(gconstpointer p)
{
  const SymKey *k = p;
  return g_str_hash(k->path) ^ (guint)(k->offset * 0x9e3779b9u);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
  const SymKey *x = a, *y = b;
  return x->offset == y->offset && strcmp(x->path, y->path) == 0;
}

static void key_free(gpointer p)
{
  SymKey *k = p;
  g_free(k->path);
  g_free(k);
}

static const char *keep(Symbolizer *s, const char *str)
{
  if (!str)
    return NULL;
  const char *kept = g_hash_table_lookup(s->strings, str);
  if (!kept) {
    char *copy = g_strdup(str);
    g_hash_table_add(s->strings, copy);
    kept = copy;
  }
  return kept;
}

/* A file at hand: its libdwfl module, or its addr2line process and the
 * PT_LOAD segments that turn file offsets into the addresses it reads. */
typedef struct {
#ifdef HAVE_LIBDW
  Dwfl *dwfl;
  Dwfl_Module *mod;
#endif
  GPid pid;       /* addr2line, 0: none (or ended) */
  FILE *answers;  /* its standard input and output: one socket, written with send() */
  ElfLoad *loads; /* its PT_LOAD segments (addr2line's files only) */
} SymFile;

static void addr2line_stop(SymFile *f)
{
  if (f->answers) {
    shutdown(fileno(f->answers), SHUT_WR); /* its end of input: addr2line exits */
    fclose(f->answers);
    f->answers = NULL;
  }
  if (f->pid) {
    while (waitpid(f->pid, NULL, 0) < 0 && errno == EINTR)
      ;
    g_spawn_close_pid(f->pid);
    f->pid = 0;
  }
}

static void file_free(gpointer p)
{
  SymFile *f = p;
  if (!f)
    return;
#ifdef HAVE_LIBDW
  if (f->dwfl)
    dwfl_end(f->dwfl);
#endif
  addr2line_stop(f);
  elfload_free(f->loads);
  g_free(f);
}

/* A file recorded as `path` made ready at `file`, the place it is
 * tried at; NULL when it is not there or cannot be used. */
typedef SymFile *(*SymFileOpen)(Symbolizer *s, const char *path, const char *file);

/* The file recorded as path, made ready by open_at on first use and kept,
 * or NULL (kept too) when it is not at hand: tried under --symfs first
 * (the recording machine's files, when they differ from this one's), then
 * where it was recorded. */
static SymFile *file_of(Symbolizer *s, const char *path, SymFileOpen open_at)
{
  gpointer got;
  if (g_hash_table_lookup_extended(s->files, path, NULL, &got))
    return got;
  SymFile *f = NULL;
  const char *where[] = { s->symfs, "" };
  for (unsigned r = 0; r < G_N_ELEMENTS(where) && !f; r++) {
    if (!where[r])
      continue;
    g_autofree char *file = g_strconcat(where[r], path, NULL);
    f = open_at(s, path, file);
  }
  g_hash_table_insert(s->files, g_strdup(path), f);
  return f;
}

static SymSource source_now(void)
{
#ifdef HAVE_LIBDW
  const char *no = g_getenv(NO_LIBDW_ENV);
  if (!no || !*no || strcmp(no, "0") == 0)
    return SOURCE_LIBDW;
#endif
  g_autofree char *a2l = g_find_program_in_path(ADDR2LINE);
  return a2l ? SOURCE_ADDR2LINE : SOURCE_NONE;
}

const char *symbols_source(void)
{
  static const char *const names[] = { [SOURCE_NONE] = NULL, [SOURCE_LIBDW] = "libdw",
                                       [SOURCE_ADDR2LINE] = ADDR2LINE };
  return names[source_now()];
}

gboolean symbols_available(void)
{
  return source_now() != SOURCE_NONE;
}

gboolean symbols_can_demangle(void)
{
#ifdef HAVE_LIBIBERTY
  return TRUE;
#else
  return FALSE;
#endif
}

char *symbols_demangle(const char *name)
{
#ifdef HAVE_LIBIBERTY
  /* Parameters and qualifiers, as __cxa_demangle, addr2line -C and c++filt
   * print them: overloads stay apart.  A name that is not mangled: NULL. */
  char *plain = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
  if (!plain)
    return NULL;
  char *copy = g_strdup(plain);
  free(plain); /* libiberty's, from malloc */
  return copy;
#else
  (void)name;
  return NULL;
#endif
}

#ifdef HAVE_LIBDW

/* The separate DWARF of a module: /usr/lib/debug/.build-id/NN/REST.debug,
 * under --symfs (the module's user data) first, then at the root.  No
 * debuginfod: a report is never held up by the network. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
  (void)modname, (void)base, (void)file_name, (void)debuglink_file, (void)debuglink_crc;
  const unsigned char *id;
  GElf_Addr vaddr;
  int len = dwfl_module_build_id(mod, &id, &vaddr);
  if (len < 2)
    return -1;
  GString *hex = g_string_new(NULL);
  for (int i = 1; i < len; i++)
    g_string_append_printf(hex, "%02x", id[i]);
  const char *roots[] = { userdata ? *userdata : NULL, "" };
  int fd = -1;
  for (unsigned r = 0; r < G_N_ELEMENTS(roots) && fd < 0; r++) {
    if (!roots[r])
      continue;
    g_autofree char *p = g_strdup_printf("%s/usr/lib/debug/.build-id/%02x/%s.debug", roots[r], id[0], hex->str);
    fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
      *debuginfo_file_name = strdup(p); /* libdwfl frees it with free() */
  }
  g_string_free(hex, TRUE);
  return fd;
}

static const Dwfl_Callbacks callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = find_debuginfo,
  .section_address = dwfl_offline_section_address,
};

/* The libdwfl module of file (recorded as path); NULL when it is not
 * there or not ELF. */
static SymFile *module_open(Symbolizer *s, const char *path, const char *file)
{
  Dwfl *dwfl = dwfl_begin(&callbacks);
  if (!dwfl)
    return NULL;
  Dwfl_Module *mod = dwfl_report_offline(dwfl, path, file, -1);
  dwfl_report_end(dwfl, NULL, NULL);
  if (!mod) {
    dwfl_end(dwfl);
    return NULL;
  }
  void **user = NULL;
  dwfl_module_info(mod, &user, NULL, NULL, NULL, NULL, NULL, NULL);
  if (user)
    *user = s->symfs; /* find_debuginfo's first root */
  SymFile *f = g_new0(SymFile, 1);
  f->dwfl = dwfl;
  f->mod = mod;
  return f;
}

/* The module of the file recorded as path, opened on first use; NULL when
 * the file is not at hand or not ELF. */
static Dwfl_Module *module_of(Symbolizer *s, const char *path)
{
  SymFile *f = file_of(s, path, module_open);
  return f ? f->mod : NULL;
}

/* The module's address of byte file_offset of its file, through the
 * PT_LOAD segment that holds it. */
static gboolean address_of(Dwfl_Module *mod, uint64_t file_offset, Dwarf_Addr *addr)
{
  GElf_Addr bias;
  Elf *elf = dwfl_module_getelf(mod, &bias);
  size_t n;
  if (!elf || elf_getphdrnum(elf, &n) != 0)
    return FALSE;
  for (size_t i = 0; i < n; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && file_offset >= ph.p_offset &&
        file_offset < ph.p_offset + ph.p_filesz) {
      *addr = file_offset - ph.p_offset + ph.p_vaddr + bias;
      return TRUE;
    }
  }
  return FALSE;
}

static void resolve_libdw(Symbolizer *s, const char *path, uint64_t file_offset, SymInfo *out)
{
  Dwfl_Module *mod = module_of(s, path);
  Dwarf_Addr addr;
  if (!mod || !address_of(mod, file_offset, &addr))
    return;
  GElf_Off off;
  GElf_Sym sym;
  const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
  if (!name)
    return;
  g_autofree char *plain = s->demangle ? symbols_demangle(name) : NULL;
  out->function = keep(s, plain ? plain : name);
  out->offset = off;
  Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
  int lineno = 0;
  const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
  if (src) {
    g_autofree char *base = g_path_get_basename(src);
    out->file = keep(s, base);
    out->line = lineno;
  }
}

#endif

/* ---- addr2line ---------------------------------------------------------- */

/* `addr2line -f [-C] -e file` with one socket for its standard input and
 * output: send() with MSG_NOSIGNAL, so that an addr2line that died is a
 * failed write, not a SIGPIPE. */
static gboolean addr2line_start(SymFile *f, const char *file, gboolean demangle)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return FALSE;
  const char *argv[] = { ADDR2LINE, "-f", "-e", file, demangle ? "-C" : NULL, NULL };
  gboolean ok = g_spawn_async_with_pipes_and_fds(NULL, argv, NULL,
                                                 G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                                                   G_SPAWN_STDERR_TO_DEV_NULL,
                                                 NULL, NULL, sv[1], sv[1], -1, NULL, NULL, 0, &f->pid, NULL, NULL,
                                                 NULL, NULL);
  close(sv[1]);
  f->answers = ok ? fdopen(sv[0], "r") : NULL;
  if (!f->answers) {
    close(sv[0]); /* addr2line, if it started, reads the end of its input and exits */
    addr2line_stop(f);
    return FALSE;
  }
  return TRUE;
}

/* file (recorded as path) with its PT_LOAD segments and its addr2line;
 * NULL when it is not there, not ELF, or addr2line does not start. */
static SymFile *addr2line_open(Symbolizer *s, const char *path, const char *file)
{
  (void)path;
  ElfLoad *loads = elfload_read(file, NULL);
  if (!loads)
    return NULL;
  SymFile *f = g_new0(SymFile, 1);
  f->loads = loads;
  if (!addr2line_start(f, file, s->demangle))
    g_clear_pointer(&f, file_free);
  return f;
}

/* The file recorded as path with its addr2line, started on first use;
 * NULL when the file is not at hand or not ELF. */
static SymFile *addr2line_file_of(Symbolizer *s, const char *path)
{
  return file_of(s, path, addr2line_open);
}

static char *read_answer_line(FILE *in)
{
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, in);
  if (n <= 0) {
    free(line);
    return NULL;
  }
  if (line[n - 1] == '\n')
    line[n - 1] = '\0';
  char *copy = g_strdup(line);
  free(line); /* getline's, from malloc */
  return copy;
}

static void resolve_addr2line(Symbolizer *s, const char *path, uint64_t file_offset, SymInfo *out)
{
  SymFile *f = addr2line_file_of(s, path);
  if (!f || !f->answers)
    return;
  const ElfSegment *seg = NULL;
  for (guint i = 0; i < f->loads->segs->len && !seg; i++) {
    const ElfSegment *l = &g_array_index(f->loads->segs, ElfSegment, i);
    if (file_offset >= l->offset && file_offset < l->offset + l->filesz)
      seg = l;
  }
  if (!seg)
    return;
  char query[32];
  int len = g_snprintf(query, sizeof query, "0x%" G_GINT64_MODIFIER "x\n", file_offset - seg->offset + seg->vaddr);
  /* The answer: the function's name, then FILE:LINE, maybe followed by
   * " (discriminator N)"; "??" and "??:0" (or "??:?") for what it cannot
   * name. */
  g_autofree char *func = NULL, *where = NULL;
  if (send(fileno(f->answers), query, (size_t)len, MSG_NOSIGNAL) != len || !(func = read_answer_line(f->answers)) ||
      !(where = read_answer_line(f->answers))) {
    addr2line_stop(f); /* it died: the file's other addresses stay unresolved */
    return;
  }
  if (strcmp(func, ADDR2LINE_UNKNOWN) == 0)
    return;
  out->function = keep(s, func);
  char *disc = strstr(where, " (discriminator");
  if (disc)
    *disc = '\0';
  char *colon = strrchr(where, ':');
  int line = colon ? atoi(colon + 1) : 0;
  if (line > 0 && strncmp(where, ADDR2LINE_UNKNOWN ":", sizeof ADDR2LINE_UNKNOWN) != 0) {
    *colon = '\0';
    g_autofree char *base = g_path_get_basename(where);
    out->file = keep(s, base);
    out->line = line;
  }
}

static void resolve(Symbolizer *s, const char *path, uint64_t file_offset, SymInfo *out)
{
  switch (s->source) {
#ifdef HAVE_LIBDW
  case SOURCE_LIBDW:
    resolve_libdw(s, path, file_offset, out);
    break;
#endif
  case SOURCE_ADDR2LINE:
    resolve_addr2line(s, path, file_offset, out);
    break;
  default:
    break;
  }
}

Symbolizer *symbolizer_new(const char *symfs, gboolean demangle)
{
  Symbolizer *s = g_new0(Symbolizer, 1);
  s->symfs = symfs && *symfs ? g_strdup(symfs) : NULL;
  s->source = source_now();
  s->demangle = demangle;
  s->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, file_free);
  s->answers = g_hash_table_new_full(key_hash, key_equal, key_free, g_free);
  s->strings = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return s;
}

void symbolizer_free(Symbolizer *s)
{
  if (!s)
    return;
  g_hash_table_destroy(s->answers);
  g_hash_table_destroy(s->files);
  g_hash_table_destroy(s->strings);
  g_free(s->symfs);
  g_free(s);
}

gboolean symbolizer_lookup(Symbolizer *s, const char *path, uint64_t file_offset, SymInfo *out)
{
  SymKey probe = { (char *)path, file_offset };
  SymInfo *known = g_hash_table_lookup(s->answers, &probe);
  if (!known) {
    known = g_new0(SymInfo, 1);
    resolve(s, path, file_offset, known);
    SymKey *k = g_new(SymKey, 1);
    k->path = g_strdup(path);
    k->offset = file_offset;
    g_hash_table_insert(s->answers, k, known);
  }
  *out = *known;
  return out->function != NULL;
}
