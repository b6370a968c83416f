/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symbols.h - the function and source line at an offset of an ELF file, for
 * run --annotate (cli/annotate.h), as `perf report --sort=symbol,dso` and
 * addr2line name an address of a recorded program.
 *
 * Built with elfutils' libdw (libdwfl: dwfl_report_offline,
 * dwfl_module_addrinfo, dwfl_module_getsrc), when configure found it
 * (HAVE_LIBDW); without it every lookup is unresolved and
 * symbols_available() is FALSE.  A file is opened once and each (file,
 * offset) looked up once: the answers are cached for the symbolizer's life.
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

/* FALSE when built without libdw. */
gboolean symbols_available(void);
/* symfs: the root to look binaries up under first, or NULL.  Strings of the
 * answers belong to the symbolizer. */
Symbolizer *symbolizer_new(const char *symfs);
void symbolizer_free(Symbolizer *s);
/* The function and line at byte `file_offset` of the file `path` (the
 * address of an instruction less its mapping's start, plus the mapping's
 * file offset).  FALSE (out->function NULL) when unresolved. */
gboolean symbolizer_lookup(Symbolizer *s, const char *path, uint64_t file_offset, SymInfo *out);

#endif
