/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elfload.h - the PT_LOAD segments of an ELF file: what a loader maps of
 * it.  One reader for every part that needs them: the symbolizer's
 * file-offset-to-address lookup (cli/symbols.c) and the recorder's mappings
 * of the objects loaded before the first system call (traces/vgsyscall.c).
 *
 * A contract: the reader reads the file header and the program header
 * table and nothing else, each checked against the file's size first, so a
 * truncated or hostile file is refused, never read past its end.  Both
 * classes (32- and 64-bit) and both byte orders are read; which of them a
 * caller takes is its own rule (ElfLoad says what the file is).
 *
 * (Not named elf.h: base/ is on every include path, and that name would
 * hide the C library's <elf.h>.)
 */
#ifndef MMUSIM_ELFLOAD_H
#define MMUSIM_ELFLOAD_H

#include <glib.h>
#include <stdint.h>

/* One PT_LOAD program header, in the host's byte order. */
typedef struct {
  uint64_t vaddr, memsz;   /* where the segment is loaded, and its size there (bytes) */
  uint64_t offset, filesz; /* where its bytes are in the file, and how many (bytes) */
  uint32_t flags;          /* p_flags: PF_R, PF_W, PF_X (<elf.h>) */
} ElfSegment;

typedef struct {
  unsigned elf_class; /* ELFCLASS32 or ELFCLASS64 */
  unsigned data;      /* ELFDATA2LSB or ELFDATA2MSB: the file's byte order */
  GArray *segs;       /* ElfSegment: the PT_LOAD headers in file order (may be none) */
} ElfLoad;

/* The PT_LOAD segments of the ELF file at path.  NULL with error set when
 * the file cannot be opened (G_FILE_ERROR), or is not an ELF file this
 * reader takes, or is truncated or malformed (MMUSIM_SIM_ERROR,
 * SIM_ERROR_ELF, the message says which rule it broke). */
ElfLoad *elfload_read(const char *path, GError **error);
void elfload_free(ElfLoad *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ElfLoad, elfload_free)

#endif
