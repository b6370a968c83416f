/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symbols.h - the function and source line at an offset of an ELF file, for
 * run --annotate (cli/annotate.h), as `perf report --sort=symbol,dso` and
 * addr2line name an address of a recorded program.
 *
 * Built with elfutils' libdw (libdwfl: dwfl_report_offline,
 * dwfl_module_addrinfo, dwfl_module_getsrc), when configure found it
 * (HAVE_LIBDW).  Without it, or with MMUSIM_NO_LIBDW=1 in the
 * environment, through binutils' addr2line when it is on PATH: one
 * `addr2line -f -C -e FILE` process per file, the file's addresses sent
 * to it one a line (it names no offset into the function).  With neither,
 * every lookup is unresolved and symbols_available() is FALSE.  A file is
 * opened once and each (file, offset) looked up once: the answers are
 * cached for the symbolizer's life.
 *
 * Names are demangled (C++ and Rust, with their parameters) as perf
 * report does by default, when built with libiberty (HAVE_LIBIBERTY,
 * cplus_demangle) or by addr2line -C; symbolizer_new(.., FALSE) keeps
 * them as the binary spells them (perf's --no-demangle).
 *
 * Where a file is looked for: under --symfs DIR (DIR + its recorded path,
 * as perf's --symfs) first, then at its recorded path.  Its DWARF is its
 * own, or the separate file /usr/lib/debug/.build-id/NN/REST.debug of its
 * build id (Debian's -dbgsym packages), under DIR too; never fetched from
 * the network (no debuginfod).  A file not found, not ELF, or an offset in
 * no PT_LOAD segment: unresolved, never an error.
 */
#ifndef MMUSIM_CLI_SYMBOLS_H
#define MMUSIM_CLI_SYMBOLS_H

#include <glib.h>
#include <stdint.h>

typedef struct Symbolizer Symbolizer;

typedef struct {
  const char *function; /* the symbol holding the address, or NULL (unresolved) */
  uint64_t offset;      /* of the address from the function's start */
  const char *file;     /* its source file when the DWARF says, else NULL */
  int line;
} SymInfo;

/* FALSE when neither libdw (built without it, or MMUSIM_NO_LIBDW set) nor
 * addr2line is there. */
gboolean symbols_available(void);
/* What names the functions: "libdw", "addr2line", or NULL: nothing. */
const char *symbols_source(void);
/* FALSE when built without libiberty: libdw's names stay mangled. */
gboolean symbols_can_demangle(void);
/* name demangled ("_ZN2ns3hotEi" -> "ns::hot(int)"), newly allocated; NULL
 * when it is not a mangled name or built without libiberty. */
char *symbols_demangle(const char *name);
/* symfs: the root to look binaries up under first, or NULL; demangle: the
 * functions' names demangled.  Strings of the answers belong to the
 * symbolizer. */
Symbolizer *symbolizer_new(const char *symfs, gboolean demangle);
void symbolizer_free(Symbolizer *s);
/* The function and line at byte `file_offset` of the file `path` (the
 * address of an instruction less its mapping's start, plus the mapping's
 * file offset).  FALSE (out->function NULL) when unresolved. */
gboolean symbolizer_lookup(Symbolizer *s, const char *path, uint64_t file_offset, SymInfo *out);

#endif
