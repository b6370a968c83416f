/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_elfload.c - the PT_LOAD reader: 64- and 32-bit files of both byte
 * orders built by hand (tests/elf_testutil.h) and this program itself read
 * right; a file cut anywhere, a file that is not ELF (a FIFO not waited
 * on), a program header table past the end or over the kernel's 64 KiB, a
 * bad e_phentsize and a segment that wraps are refused with SIM_ERROR_ELF,
 * never read past the end (valgrind and ASan would see it).
 */
#include "config.h"
#include "testutil.h"
#include "elf_testutil.h"

#include <stddef.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "elfload.h"
#include "errors.h"

/* A program's usual headers: PT_PHDR, text, data (whose bss makes memsz
 * larger than filesz), PT_GNU_STACK. */
static const TestPhdr usual[] = {
  { .type = PT_PHDR, .flags = PF_R, .offset = 64, .vaddr = 64, .filesz = 0x118, .memsz = 0x118 },
  { .type = PT_LOAD, .flags = PF_R | PF_X, .offset = 0, .vaddr = 0, .filesz = 0x1234, .memsz = 0x1234 },
  { .type = PT_LOAD, .flags = PF_R | PF_W, .offset = 0x1e10, .vaddr = 0x3e10, .filesz = 0x250, .memsz = 0x2468 },
  { .type = PT_GNU_STACK, .flags = PF_R | PF_W },
};

/* The file of bytes b read, or NULL with the error's code checked. */
static ElfLoad *read_bytes(const void *bytes, size_t len, GError **err)
{
  g_autofree char *path = test_elf_write(bytes, len);
  ElfLoad *e = elfload_read(path, err);
  g_unlink(path);
  ck_assert((e != NULL) == (*err == NULL));
  return e;
}

/* The usual headers read back from a file of class cls and order data. */
static void check_usual(unsigned cls, unsigned data)
{
  GByteArray *b = test_elf_image(cls, data, usual, G_N_ELEMENTS(usual));
  GError *err = NULL;
  g_autoptr(ElfLoad) e = read_bytes(b->data, b->len, &err);
  g_byte_array_unref(b);
  ck_assert_no_error(err);
  ck_assert_uint_eq(e->elf_class, cls);
  ck_assert_uint_eq(e->data, data);
  ck_assert_uint_eq(e->segs->len, 2);
  for (unsigned i = 0; i < 2; i++) {
    const ElfSegment *s = &g_array_index(e->segs, ElfSegment, i);
    const TestPhdr *want = &usual[i + 1];
    ck_assert_uint_eq(s->vaddr, want->vaddr);
    ck_assert_uint_eq(s->memsz, want->memsz);
    ck_assert_uint_eq(s->offset, want->offset);
    ck_assert_uint_eq(s->filesz, want->filesz);
    ck_assert_uint_eq(s->flags, want->flags);
  }
}

START_TEST(test_classes_and_orders)
{
  check_usual(ELFCLASS64, ELFDATA2LSB);
  check_usual(ELFCLASS64, ELFDATA2MSB);
  check_usual(ELFCLASS32, ELFDATA2LSB);
  check_usual(ELFCLASS32, ELFDATA2MSB);
}
END_TEST

/* This program, as the linker wrote it: text executable, the first
 * segment from the file's start (the ELF header's page). */
START_TEST(test_self)
{
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  ck_assert_ptr_nonnull(self);
  GError *err = NULL;
  g_autoptr(ElfLoad) e = elfload_read(self, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(e->elf_class, sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32);
  ck_assert_uint_eq(e->data, G_BYTE_ORDER == G_LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB);
  ck_assert_uint_ge(e->segs->len, 1);
  ck_assert_uint_eq(g_array_index(e->segs, ElfSegment, 0).offset, 0);
  gboolean text = FALSE;
  for (guint i = 0; i < e->segs->len; i++) {
    const ElfSegment *s = &g_array_index(e->segs, ElfSegment, i);
    ck_assert_uint_ge(s->memsz, s->filesz);
    text |= (s->flags & PF_X) != 0;
  }
  ck_assert(text);
}
END_TEST

/* Cut at every length short of the whole: the header or the table is
 * missing, and the file is refused. */
START_TEST(test_truncated)
{
  static const unsigned classes[] = { ELFCLASS64, ELFCLASS32 };
  for (unsigned c = 0; c < G_N_ELEMENTS(classes); c++) {
    GByteArray *b = test_elf_image(classes[c], ELFDATA2LSB, usual, G_N_ELEMENTS(usual));
    for (guint len = 0; len < b->len; len++) {
      GError *err = NULL;
      ElfLoad *e = read_bytes(b->data, len, &err);
      loop_assert(e == NULL);
      loop_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_ELF));
      g_clear_error(&err);
    }
    g_byte_array_unref(b);
  }
}
END_TEST

START_TEST(test_not_elf)
{
  static const char text[] = "#!/bin/sh\necho not an ELF file, though long enough for its header\n";
  GError *err = NULL;
  ck_assert_ptr_null(read_bytes(text, sizeof text - 1, &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_ELF));
  g_clear_error(&err);
  /* The magic, but no class or no byte order this reader knows. */
  GByteArray *b = test_elf_image(ELFCLASS64, ELFDATA2LSB, usual, G_N_ELEMENTS(usual));
  static const struct { unsigned at; unsigned char v; } bad[] = {
    { EI_CLASS, ELFCLASSNONE }, { EI_CLASS, ELFCLASSNUM }, { EI_DATA, ELFDATANONE }, { EI_DATA, ELFDATANUM },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
    unsigned char keep = b->data[bad[i].at];
    b->data[bad[i].at] = bad[i].v;
    ck_assert_ptr_null(read_bytes(b->data, b->len, &err));
    ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_ELF));
    g_clear_error(&err);
    b->data[bad[i].at] = keep;
  }
  g_byte_array_unref(b);
  /* Not there; not a regular file. */
  ck_assert_ptr_null(elfload_read("/nonexistent/prog", &err));
  ck_assert(g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT));
  g_clear_error(&err);
  ck_assert_ptr_null(elfload_read("/", &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_ELF));
  g_clear_error(&err);
  /* A FIFO with no writer: refused at once, not waited on. */
  g_autofree char *dir = g_dir_make_tmp("mmusim-elf-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  ck_assert_ptr_null(elfload_read(fifo, &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_ELF));
  g_clear_error(&err);
  g_unlink(fifo);
  g_rmdir(dir);
}
END_TEST

/* The 64-bit header's e_phoff, e_phnum or e_phentsize set to v. */
static void refused_with(size_t at, size_t width, uint64_t v)
{
  GByteArray *b = test_elf_image(ELFCLASS64, ELFDATA2LSB, usual, G_N_ELEMENTS(usual));
  uint64_t le = GUINT64_TO_LE(v);
  memcpy(b->data + at, &le, width); /* the low bytes first: a little-endian field */
  GError *err = NULL;
  ElfLoad *e = read_bytes(b->data, b->len, &err);
  g_byte_array_unref(b);
  ck_assert_ptr_null(e);
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_ELF));
  g_error_free(err);
}

#define EH_FIELD(f) offsetof(Elf64_Ehdr, f), sizeof(((Elf64_Ehdr *)0)->f)

START_TEST(test_table_out_of_bounds)
{
  size_t ehsize = sizeof(Elf64_Ehdr), table = G_N_ELEMENTS(usual) * sizeof(Elf64_Phdr);
  refused_with(EH_FIELD(e_phoff), ehsize + 1);             /* the last header one byte past the end */
  refused_with(EH_FIELD(e_phoff), ehsize + table);         /* all past the end */
  refused_with(EH_FIELD(e_phoff), UINT64_MAX - 8);         /* offset + size wraps */
  refused_with(EH_FIELD(e_phnum), G_N_ELEMENTS(usual) + 1); /* one more header than the file holds */
  refused_with(EH_FIELD(e_phnum), PN_XNUM);                 /* over 64 KiB (load_elf_phdrs) */
  refused_with(EH_FIELD(e_phentsize), sizeof(Elf32_Phdr));  /* not the class's header size */
}
END_TEST

/* No program headers (an object file): nothing loaded, not an error. */
START_TEST(test_no_headers)
{
  GByteArray *b = test_elf_image(ELFCLASS64, ELFDATA2LSB, NULL, 0);
  GError *err = NULL;
  g_autoptr(ElfLoad) e = read_bytes(b->data, b->len, &err);
  g_byte_array_unref(b);
  ck_assert_no_error(err);
  ck_assert_uint_eq(e->segs->len, 0);
}
END_TEST

/* A PT_LOAD whose end wraps past 2^64, in the file or in memory. */
START_TEST(test_segment_wraps)
{
  TestPhdr ph[] = { { .type = PT_LOAD, .flags = PF_R, .offset = 0x1000, .vaddr = 0x1000, .filesz = 0x100,
                      .memsz = 0x100 } };
  for (unsigned which = 0; which < 2; which++) {
    TestPhdr bad = ph[0];
    if (which)
      bad.memsz = UINT64_MAX - 0x800;
    else
      bad.filesz = UINT64_MAX - 0x800;
    GByteArray *b = test_elf_image(ELFCLASS64, ELFDATA2LSB, &bad, 1);
    GError *err = NULL;
    ck_assert_ptr_null(read_bytes(b->data, b->len, &err));
    ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_ELF));
    g_clear_error(&err);
    g_byte_array_unref(b);
  }
}
END_TEST

static Suite *elfload_suite(void)
{
  Suite *s = suite_create("elfload");
  TCase *tc = tcase_create("read");
  tcase_add_test(tc, test_classes_and_orders);
  tcase_add_test(tc, test_self);
  tcase_add_test(tc, test_truncated);
  tcase_add_test(tc, test_not_elf);
  tcase_add_test(tc, test_table_out_of_bounds);
  tcase_add_test(tc, test_no_headers);
  tcase_add_test(tc, test_segment_wraps);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(elfload_suite)
