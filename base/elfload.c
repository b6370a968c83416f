/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elfload.c - the PT_LOAD segments of an ELF file (elfload.h).
 *
 * The rules a file must keep: the ident opens with ELFMAG and names a
 * class, ELFCLASS32 or ELFCLASS64, and a byte order, ELFDATA2LSB or
 * ELFDATA2MSB (the System V gABI, "ELF Identification"); e_phentsize is
 * the size of the class's program header and the table is at most 64 KiB,
 * as the kernel's load_elf_phdrs (fs/binfmt_elf.c, 6.12) demands before it
 * reads one, which also refuses PN_XNUM (0xffff headers, the true count
 * kept in section header 0).  The fields are decoded byte by byte in the
 * file's order, at the offsets of <elf.h>'s structs, so a file of the
 * other byte order than the host's reads the same and nothing is read
 * unaligned.
 *
 * Left out: e_machine and e_type are not checked (a caller that cares
 * does); a segment's bytes are not read nor checked against the file's
 * size, since nothing here reads them and a separate debug file
 * (objcopy --only-keep-debug) keeps the PT_LOADs of the file it was cut
 * from without their bytes.  A segment whose end wraps past 2^64 is
 * refused: no loader could map it.
 */
#include "config.h"
#include "elfload.h"
#include "errors.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* load_elf_phdrs: "size == 0 || size > 65536" refuses the table. */
#define ELFLOAD_MAX_PHDR_BYTES 65536u

/* The value of the n-byte unsigned field at p, in the file's byte order. */
static uint64_t field(const unsigned char *p, size_t n, gboolean big)
{
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t)p[big ? i : n - 1 - i] << (8 * (n - 1 - i));
  return v;
}

/* Field f of the struct T (an <elf.h> type) that starts at buf. */
#define FIELD(buf, T, f, big) field((buf) + offsetof(T, f), sizeof(((T *)0)->f), (big))
/* Field f of the class's struct Elf64_T or Elf32_T that starts at buf. */
#define CLASS_FIELD(buf, is64, T, f, big) \
  ((is64) ? FIELD(buf, Elf64_##T, f, big) : FIELD(buf, Elf32_##T, f, big))

/* len bytes at offset `at` of fd into buf; FALSE unless all of them came. */
static gboolean read_at(int fd, void *buf, size_t len, uint64_t at)
{
  unsigned char *p = buf;
  while (len) {
    ssize_t n = pread(fd, p, len, (off_t)at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    p += n;
    len -= (size_t)n;
    at += (uint64_t)n;
  }
  return TRUE;
}

static gboolean refuse(GError **error, const char *path, const char *why)
{
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_ELF, "%s: %s", path, why);
  return FALSE;
}

/* The PT_LOADs of the table (phnum headers at buf) into e->segs. */
static gboolean decode_table(ElfLoad *e, const unsigned char *buf, unsigned phnum, size_t phentsize,
                             const char *path, GError **error)
{
  gboolean big = e->data == ELFDATA2MSB, is64 = e->elf_class == ELFCLASS64;
  for (unsigned i = 0; i < phnum; i++) {
    const unsigned char *ph = buf + (size_t)i * phentsize;
    if (CLASS_FIELD(ph, is64, Phdr, p_type, big) != PT_LOAD)
      continue;
    ElfSegment s = {
      .vaddr = CLASS_FIELD(ph, is64, Phdr, p_vaddr, big),
      .memsz = CLASS_FIELD(ph, is64, Phdr, p_memsz, big),
      .offset = CLASS_FIELD(ph, is64, Phdr, p_offset, big),
      .filesz = CLASS_FIELD(ph, is64, Phdr, p_filesz, big),
      .flags = (uint32_t)CLASS_FIELD(ph, is64, Phdr, p_flags, big),
    };
    if (s.vaddr > UINT64_MAX - s.memsz || s.offset > UINT64_MAX - s.filesz)
      return refuse(error, path, "a PT_LOAD segment ends past 2^64");
    g_array_append_val(e->segs, s);
  }
  return TRUE;
}

/* The header of the file open as fd (size bytes), then its table. */
static gboolean read_file(ElfLoad *e, int fd, uint64_t size, const char *path, GError **error)
{
  unsigned char eh[sizeof(Elf64_Ehdr)]; /* the larger of the two classes' */
  if (size < EI_NIDENT || !read_at(fd, eh, EI_NIDENT, 0) || memcmp(eh, ELFMAG, SELFMAG) != 0)
    return refuse(error, path, "not an ELF file");
  e->elf_class = eh[EI_CLASS];
  e->data = eh[EI_DATA];
  if (e->elf_class != ELFCLASS32 && e->elf_class != ELFCLASS64)
    return refuse(error, path, "ELF class neither 32- nor 64-bit");
  if (e->data != ELFDATA2LSB && e->data != ELFDATA2MSB)
    return refuse(error, path, "ELF byte order neither little- nor big-endian");
  gboolean big = e->data == ELFDATA2MSB, is64 = e->elf_class == ELFCLASS64;
  size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (size < ehsize || !read_at(fd, eh, ehsize, 0))
    return refuse(error, path, "truncated in the ELF header");
  uint64_t phoff = CLASS_FIELD(eh, is64, Ehdr, e_phoff, big);
  unsigned phnum = (unsigned)CLASS_FIELD(eh, is64, Ehdr, e_phnum, big);
  size_t phentsize = (size_t)CLASS_FIELD(eh, is64, Ehdr, e_phentsize, big);
  if (!phnum)
    return TRUE; /* no program headers (an object file): nothing is loaded */
  if (phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
    return refuse(error, path, "e_phentsize is not the size of a program header");
  size_t bytes = (size_t)phnum * phentsize;
  if (bytes > ELFLOAD_MAX_PHDR_BYTES)
    return refuse(error, path, "program header table over 64 KiB");
  if (phoff > size || bytes > size - phoff)
    return refuse(error, path, "program header table past the end of the file");
  g_autofree unsigned char *table = g_malloc(bytes);
  if (!read_at(fd, table, bytes, phoff))
    return refuse(error, path, "program header table could not be read");
  return decode_table(e, table, phnum, phentsize, path, error);
}

ElfLoad *elfload_read(const char *path, GError **error)
{
  /* O_NONBLOCK: a FIFO a trace names would hold open() until a writer
   * came; it changes nothing for the regular file read after fstat. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s", path, g_strerror(err));
    return NULL;
  }
  ElfLoad *e = g_new0(ElfLoad, 1);
  e->segs = g_array_new(FALSE, FALSE, sizeof(ElfSegment));
  struct stat st;
  gboolean ok;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    ok = refuse(error, path, "not a regular file");
  else
    ok = read_file(e, fd, (uint64_t)st.st_size, path, error);
  close(fd);
  if (!ok)
    g_clear_pointer(&e, elfload_free);
  return e;
}

void elfload_free(ElfLoad *e)
{
  if (!e)
    return;
  g_array_free(e->segs, TRUE);
  g_free(e);
}
