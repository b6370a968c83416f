/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symbols.c - functions and lines of ELF files with libdwfl (symbols.h).
 */
#include "config.h"
#include "symbols.h"

#include <string.h>

#ifdef HAVE_LIBDW
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#endif

typedef struct {
  char *path;
  uint64_t offset;
} SymKey;

struct Symbolizer {
  char *symfs;
  GHashTable *files;   /* recorded path -> Dwfl* (NULL: not at hand) */
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

#ifdef HAVE_LIBDW

gboolean symbols_available(void)
{
  return TRUE;
}

typedef struct {
  Dwfl *dwfl;
  Dwfl_Module *mod;
} SymFile;

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

static void file_free(gpointer p)
{
  SymFile *f = p;
  if (f)
    dwfl_end(f->dwfl);
  g_free(f);
}

/* The module of the file recorded as path, opened on first use; NULL when
 * the file is not at hand or not ELF. */
static Dwfl_Module *module_of(Symbolizer *s, const char *path)
{
  gpointer got;
  if (g_hash_table_lookup_extended(s->files, path, NULL, &got))
    return got ? ((SymFile *)got)->mod : NULL;
  SymFile *f = NULL;
  const char *where[] = { s->symfs, "" };
  for (unsigned r = 0; r < G_N_ELEMENTS(where) && !f; r++) {
    if (!where[r])
      continue;
    g_autofree char *file = g_strconcat(where[r], path, NULL);
    Dwfl *dwfl = dwfl_begin(&callbacks);
    if (!dwfl)
      break;
    Dwfl_Module *mod = dwfl_report_offline(dwfl, path, file, -1);
    dwfl_report_end(dwfl, NULL, NULL);
    if (!mod) {
      dwfl_end(dwfl);
      continue;
    }
    void **user = NULL;
    dwfl_module_info(mod, &user, NULL, NULL, NULL, NULL, NULL, NULL);
    if (user)
      *user = s->symfs; /* find_debuginfo's first root */
    f = g_new(SymFile, 1);
    f->dwfl = dwfl;
    f->mod = mod;
  }
  g_hash_table_insert(s->files, g_strdup(path), f);
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

static void resolve(Symbolizer *s, const char *path, uint64_t file_offset, SymInfo *out)
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
  out->function = keep(s, name);
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

#else

gboolean symbols_available(void)
{
  return FALSE;
}

static void file_free(gpointer p)
{
  (void)p;
}

static void resolve(Symbolizer *s, const char *path, uint64_t file_offset, SymInfo *out)
{
  (void)s, (void)path, (void)file_offset, (void)out;
}

#endif

Symbolizer *symbolizer_new(const char *symfs)
{
  Symbolizer *s = g_new0(Symbolizer, 1);
  s->symfs = symfs && *symfs ? g_strdup(symfs) : NULL;
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
