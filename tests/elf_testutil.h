/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elf_testutil.h - ELF files built by hand for the tests of their
 * readers (base/elfload.c and its callers): a file header and a program
 * header table right after it, of either class and byte order, through
 * <elf.h>'s structs and GLib's byte swaps (not elfload.c's decoding, so
 * the two check each other).
 */
#ifndef MMUSIM_ELF_TESTUTIL_H
#define MMUSIM_ELF_TESTUTIL_H

#include <check.h>
#include <elf.h>
#include <glib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* One program header as a test writes it. */
typedef struct {
  uint32_t type, flags;
  uint64_t offset, vaddr, filesz, memsz;
} TestPhdr;

/* A field of a file of byte order `data`, from the host's. */
static inline uint16_t test_elf16(unsigned data, uint16_t v)
{
  return data == ELFDATA2MSB ? GUINT16_TO_BE(v) : GUINT16_TO_LE(v);
}
static inline uint32_t test_elf32(unsigned data, uint32_t v)
{
  return data == ELFDATA2MSB ? GUINT32_TO_BE(v) : GUINT32_TO_LE(v);
}
static inline uint64_t test_elf64(unsigned data, uint64_t v)
{
  return data == ELFDATA2MSB ? GUINT64_TO_BE(v) : GUINT64_TO_LE(v);
}

/* A file header of class W (64 or 32 bits) and byte order data, then the
 * n program headers ph, appended to the GByteArray b: one text for both
 * classes, their structs differing only in width and field order. */
#define TEST_ELF_APPEND(W, b, data, ph, n, etype, emachine)                                        \
  do {                                                                                             \
    Elf##W##_Ehdr eh;                                                                              \
    memset(&eh, 0, sizeof eh);                                                                     \
    static const unsigned char magic[] = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3 };                   \
    memcpy(eh.e_ident, magic, sizeof magic);                                                       \
    eh.e_ident[EI_CLASS] = ELFCLASS##W;                                                            \
    eh.e_ident[EI_DATA] = (unsigned char)(data);                                                   \
    eh.e_ident[EI_VERSION] = EV_CURRENT;                                                           \
    eh.e_type = test_elf16(data, etype);                                                           \
    eh.e_machine = test_elf16(data, emachine);                                                     \
    eh.e_version = test_elf32(data, EV_CURRENT);                                                   \
    eh.e_phoff = test_elf##W(data, sizeof eh);                                                     \
    eh.e_ehsize = test_elf16(data, sizeof eh);                                                     \
    eh.e_phentsize = test_elf16(data, sizeof(Elf##W##_Phdr));                                      \
    eh.e_phnum = test_elf16(data, (uint16_t)(n));                                                  \
    g_byte_array_append(b, (const guint8 *)&eh, sizeof eh);                                        \
    for (unsigned i = 0; i < (n); i++) {                                                           \
      Elf##W##_Phdr p;                                                                             \
      memset(&p, 0, sizeof p);                                                                     \
      p.p_type = test_elf32(data, (ph)[i].type);                                                   \
      p.p_flags = test_elf32(data, (ph)[i].flags);                                                 \
      p.p_offset = test_elf##W(data, (uint##W##_t)(ph)[i].offset);                                 \
      p.p_vaddr = p.p_paddr = test_elf##W(data, (uint##W##_t)(ph)[i].vaddr);                       \
      p.p_filesz = test_elf##W(data, (uint##W##_t)(ph)[i].filesz);                                 \
      p.p_memsz = test_elf##W(data, (uint##W##_t)(ph)[i].memsz);                                   \
      g_byte_array_append(b, (const guint8 *)&p, sizeof p);                                        \
    }                                                                                              \
  } while (0)

/* The bytes of an ELF file of class cls and byte order data with the n
 * program headers ph right after its file header (an x86-64 shared object
 * or an i386 executable); g_byte_array_unref. */
static inline GByteArray *test_elf_image(unsigned cls, unsigned data, const TestPhdr *ph, unsigned n)
{
  GByteArray *b = g_byte_array_new();
  if (cls == ELFCLASS64)
    TEST_ELF_APPEND(64, b, data, ph, n, ET_DYN, EM_X86_64);
  else
    TEST_ELF_APPEND(32, b, data, ph, n, ET_EXEC, EM_386);
  return b;
}

/* len bytes written to a new temporary file; its name, g_free it
 * (and unlink the file). */
static inline char *test_elf_write(const void *bytes, size_t len)
{
  char *path = NULL;
  int fd = g_file_open_tmp("mmusim-elf-XXXXXX", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert(g_file_set_contents(path, bytes, (gssize)len, NULL));
  return path;
}

#endif
