/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the recorded mappings: valgrind's --trace-syscalls lines as
 * records (traces/vgsyscall.h), in a lackey log, written to .mtr and read
 * back with the file flag (tests/system/test_file_mapping.c: what the
 * machine makes of them).
 */
#include "config.h"
#include <glib/gstdio.h>
#include "elf_testutil.h"
#include "lackey.h"
#include "mtr.h"
#include "text.h"
#include "trace_testutil.h"
#include "vgsyscall.h"

static unsigned one(VgSyscalls *s, const char *line, TraceRecord *out)
{
  unsigned n = 99;
  ck_assert(vg_syscall_line(s, line, strlen(line), out, &n));
  return n;
}

START_TEST(test_lines)
{
  VgSyscalls s;
  vg_syscalls_init(&s);
  TraceRecord r[VG_SYSCALL_MAX_RECORDS];
  unsigned n;
  ck_assert(!vg_syscall_line(&s, "I  04010000,3", 13, r, &n));
  ck_assert(!vg_syscall_line(&s, "==123== Lackey", 14, r, &n));
  /* A file mapping (MAP_PRIVATE, fd 4), its length rounded up to 4K. */
  ck_assert_uint_eq(one(&s, "SYSCALL[21367,1](9) sys_mmap ( 0x0, 43311, 1, 2, 4, 0 ) --> [pre-success] Success(0x483c000) ", r), 1);
  ck_assert_uint_eq(r[0].type, REC_MMAP);
  ck_assert_uint_eq(r[0].addr, 0x483c000);
  ck_assert_uint_eq(r[0].len, 45056);
  ck_assert_uint_eq(r[0].prot, PROT_R);
  ck_assert_uint_eq(r[0].flags, MAP_F_FILE);
  /* Anonymous (MAP_PRIVATE | MAP_ANONYMOUS), shared file, a stack. */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 2097152, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x4a2c000) ", r), 1);
  ck_assert_uint_eq(r[0].flags, 0);
  ck_assert_uint_eq(r[0].prot, PROT_R | PROT_W);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 4096, 3, 1, 5, 0 ) --> [pre-success] Success(0x5000) ", r), 1);
  ck_assert_uint_eq(r[0].flags, MAP_F_FILE | MAP_F_SHARED);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 8192, 3, 290, 4294967295, 0 ) --> [pre-success] Success(0x7000) ", r), 1);
  ck_assert_uint_eq(r[0].flags, MAP_F_STACK);
  /* MAP_HUGETLB: 2M-aligned, else nothing. */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 4096, 3, 262178, 4294967295, 0 ) --> [pre-success] Success(0x7000) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 2097152, 3, 262178, 4294967295, 0 ) --> [pre-success] Success(0x40000000) ", r), 1);
  ck_assert_uint_eq(r[0].flags, MAP_F_HUGETLB);
  /* mprotect and munmap, done at once. */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](10) sys_mprotect ( 0x4a2c000, 4096, 1 )[sync] --> Success(0x0) ", r), 1);
  ck_assert_uint_eq(r[0].type, REC_MPROTECT);
  ck_assert_uint_eq(r[0].prot, PROT_R);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](11) sys_munmap ( 0x483c000, 43311 )[sync] --> Success(0x0) ", r), 1);
  ck_assert_uint_eq(r[0].type, REC_MUNMAP);
  ck_assert_uint_eq(r[0].len, 45056);
  /* madvise, done on a second line; other advice changes nothing. */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](28) sys_madvise ( 0x4a2c000, 2097152, 14 ) --> [async] ... ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](28) ... [async] --> Success(0x0) ", r), 1);
  ck_assert_uint_eq(r[0].type, REC_MADVISE);
  ck_assert_int_eq(r[0].arg, ADV_HUGEPAGE);
  ck_assert_uint_eq(r[0].len, 2097152);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](28) sys_madvise ( 0x4a2c000, 2097152, 3 )[sync] --> Success(0x0) ", r), 0);
  /* Failed calls and other calls: nothing. */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](11) sys_munmap ( 0x483c001, 4096 )[sync] --> Failure(0x16) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](3) sys_close ( 4 )[sync] --> Success(0x0) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](257) sys_openat ( 4294967196, 0x4034bb0(/usr/lib/x.so), 524288 ) --> [async] ... ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](257) ... [async] --> Success(0x4) ", r), 0);
  /* brk: the first answer is the heap's start; moves map and unmap. */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](12) sys_brk ( 0x0 ) --> [pre-success] Success(0x4035000) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](12) sys_brk ( 0x4056800 ) --> [pre-success] Success(0x4056800) ", r), 1);
  ck_assert_uint_eq(r[0].type, REC_MMAP);
  ck_assert_uint_eq(r[0].addr, 0x4035000);
  ck_assert_uint_eq(r[0].len, 0x22000);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](12) sys_brk ( 0x4040000 ) --> [pre-success] Success(0x4040000) ", r), 1);
  ck_assert_uint_eq(r[0].type, REC_MUNMAP);
  ck_assert_uint_eq(r[0].addr, 0x4040000);
  ck_assert_uint_eq(r[0].len, 0x17000);
  /* mremap: unmap the old range, map the new. */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](25) sys_mremap ( 0x5000000, 8192, 16384, 1, 0 ) --> [pre-success] Success(0x6000000) ", r), 2);
  ck_assert_uint_eq(r[0].type, REC_MUNMAP);
  ck_assert_uint_eq(r[0].addr, 0x5000000);
  ck_assert_uint_eq(r[1].type, REC_MMAP);
  ck_assert_uint_eq(r[1].addr, 0x6000000);
  ck_assert_uint_eq(r[1].len, 16384);
  ck_assert_uint_eq(s.records, 12);
  vg_syscalls_clear(&s);
}
END_TEST

/* A lackey log with system call lines: the mappings come in order with
 * the accesses, and survive .mtr. */
START_TEST(test_lackey_log_to_mtr)
{
  const char *log = "==7== Lackey\n"
                    "SYSCALL[7,1](9) sys_mmap ( 0x0, 8192, 1, 2, 4, 0 ) --> [pre-success] Success(0x7f0000000000) \n"
                    "I  00401000,4\n"
                    " L 7f0000000000,8\n"
                    "SYSCALL[7,1](11) sys_munmap ( 0x7f0000000000, 8192 )[sync] --> Success(0x0) \n";
  GError *err = NULL;
  g_autoptr(TraceSource) src = lackey_source_from_input(trace_input_from_memory("l.txt", log, strlen(log), FALSE));
  GArray *got = read_all(src, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(lackey_source_syscall_records(src), 2);
  ck_assert_uint_eq(lackey_source_skipped(src), 1);
  /* mmap (file), the code's made-up region, fetch, the data's made-up region, load, munmap */
  ck_assert_uint_eq(got->len, 6);
  ck_assert_uint_eq(REC(got, 0)->type, REC_MMAP);
  ck_assert_uint_eq(REC(got, 0)->flags, MAP_F_FILE);
  ck_assert_uint_eq(REC(got, 1)->flags, MAP_F_ONDEMAND);
  ck_assert_uint_eq(REC(got, 2)->kind, ACC_IFETCH);
  ck_assert_uint_eq(REC(got, 3)->flags, MAP_F_ONDEMAND);
  ck_assert_uint_eq(REC(got, 4)->type, REC_ACCESS);
  ck_assert_uint_eq(REC(got, 4)->arg2, 0x401000); /* its instruction */
  ck_assert_uint_eq(REC(got, 5)->type, REC_MUNMAP);
  g_autofree char *path = temp_path(".mtr");
  MtrWriter *w = mtr_writer_open(path, &err);
  ck_assert_no_error(err);
  for (guint i = 0; i < got->len; i++)
    ck_assert(mtr_writer_write(w, REC(got, i), &err));
  ck_assert(mtr_writer_close(w, &err));
  g_autoptr(TraceSource) back = mtr_source_open(path, 0, &err);
  ck_assert_no_error(err);
  GArray *again = read_all(back, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(again->len, got->len);
  ck_assert_uint_eq(REC(again, 0)->flags, MAP_F_FILE);
  ck_assert_uint_eq(REC(again, 0)->len, 8192);
  g_array_free(got, TRUE);
  g_array_free(again, TRUE);
  g_unlink(path);
}
END_TEST

/* The text format: `file`, not with hugetlb. */
START_TEST(test_text_file_flag)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = text_source_from_string("t.txt", "mmap 0x7f0000000000 8K r file shared\n", &err);
  ck_assert_no_error(err);
  GArray *got = read_all(src, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(REC(got, 0)->flags, MAP_F_FILE | MAP_F_SHARED);
  g_array_free(got, TRUE);
  g_autoptr(TraceSource) bad = text_source_from_string("t.txt", "mmap 0x7f0000000000 2M rw hugetlb file\n", &err);
  ck_assert_no_error(err);
  assert_read_fails(bad, "a file mapping cannot be hugetlb");
}
END_TEST

/* File names: open/openat/dup/fcntl/close followed, mmap's fd and offset
 * give the record's path and arg2; a call line cut by a -v message. */
START_TEST(test_file_names)
{
  VgSyscalls s;
  vg_syscalls_init(&s);
  TraceRecord r[VG_SYSCALL_MAX_RECORDS];
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](257) sys_openat ( 4294967196, 0x4034bb0(/usr/lib/x.so), 524288 ) --> [async] ... ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](257) ... [async] --> Success(0x3) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 8192, 5, 2, 3, 4096 ) --> [pre-success] Success(0x5000000) ", r), 1);
  ck_assert_str_eq(r[0].path, "/usr/lib/x.so");
  ck_assert_uint_eq(r[0].arg2, 4096);
  /* a directory descriptor joins a relative path; open(2) takes its first argument */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](2) sys_open ( 0x40(/data dir), 65536, 0 )[sync] --> Success(0x4) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](257) sys_openat ( 4, 0x41(a (1).bin), 0 )[sync] --> Success(0x5) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 4096, 1, 1, 5, 0 ) --> [pre-success] Success(0x6000000) ", r), 1);
  ck_assert_str_eq(r[0].path, "/data dir/a (1).bin");
  /* dup, dup2 and fcntl(F_DUPFD_CLOEXEC) copy the name; close forgets it */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](32) sys_dup ( 3 )[sync] --> Success(0x7) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](33) sys_dup2 ( 7, 9 )[sync] --> Success(0x9) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](72) sys_fcntl ( 9, 1030, 20 )[sync] --> Success(0x14) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](3) sys_close ( 3 )[sync] --> Success(0x0) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 4096, 1, 2, 20, 0 ) --> [pre-success] Success(0x7000000) ", r), 1);
  ck_assert_str_eq(r[0].path, "/usr/lib/x.so");
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 4096, 1, 2, 3, 0 ) --> [pre-success] Success(0x7000000) ", r), 1);
  ck_assert_ptr_null(r[0].path); /* closed: a file of unknown name */
  /* relative to a directory descriptor not known: no name */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](257) sys_openat ( 11, 0x41(rel), 0 )[sync] --> Success(0x9) ", r), 0);
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x0, 4096, 1, 2, 9, 0 ) --> [pre-success] Success(0x7000000) ", r), 1);
  ck_assert_ptr_null(r[0].path);
  /* valgrind -v cuts a call line with a message; its result comes after */
  ck_assert_uint_eq(one(&s, "SYSCALL[1,1](9) sys_mmap ( 0x8000000, 8192, 3, 2066, 20, 8192 )--7095-- Reading syms from /x", r), 0);
  unsigned n = 99;
  ck_assert(!vg_syscall_line(&s, "--7095--    object doesn't have a symbol table", 46, r, &n));
  ck_assert_uint_eq(one(&s, " --> [pre-success] Success(0x8000000) ", r), 1);
  ck_assert_uint_eq(r[0].addr, 0x8000000);
  ck_assert_uint_eq(r[0].arg2, 8192);
  ck_assert_str_eq(r[0].path, "/usr/lib/x.so");
  vg_syscalls_clear(&s);
}
END_TEST

/* The objects valgrind loaded before the first call (-v -v): an ELF file's
 * PT_LOAD segments, moved by avma - svma; valgrind's own tool and any
 * object read after the first call are left out.  The test's own binary
 * is the ELF file. */
START_TEST(test_loaded_objects)
{
  VgSyscalls s;
  vg_syscalls_init(&s);
  TraceRecord r[VG_SYSCALL_MAX_RECORDS];
  unsigned n = 99;
  const char *libdir = "--9-- Valgrind library directory: /usr/libexec/valgrind";
  ck_assert(!vg_syscall_line(&s, libdir, strlen(libdir), r, &n));
  const char *tool = "--9-- Reading syms from /usr/libexec/valgrind/lackey-amd64-linux";
  ck_assert(!vg_syscall_line(&s, tool, strlen(tool), r, &n));
  const char *svma = "--9--    svma 0x0058001000, avma 0x0058001000";
  ck_assert(!vg_syscall_line(&s, svma, strlen(svma), r, &n));
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  ck_assert_ptr_nonnull(self);
  g_autofree char *reading = g_strdup_printf("--9-- Reading syms from %s", self);
  ck_assert(!vg_syscall_line(&s, reading, strlen(reading), r, &n));
  const char *moved = "--9--    svma 0x0000001000, avma 0x0000109000"; /* loaded 0x108000 above */
  ck_assert(vg_syscall_line(&s, moved, strlen(moved), r, &n));
  ck_assert_uint_ge(n, 2);
  uint64_t end = 0;
  for (unsigned i = 0; i < n; i++) {
    ck_assert_uint_eq(r[i].type, REC_MMAP);
    ck_assert_uint_eq(r[i].flags, MAP_F_FILE);
    ck_assert_str_eq(r[i].path, self);
    ck_assert_uint_eq(r[i].arg2 % 4096, 0);
    ck_assert_uint_ge(r[i].addr, end); /* in order, none over the one before */
    end = r[i].addr + r[i].len;
  }
  ck_assert_uint_eq(r[0].arg2, 0); /* the ELF header's page */
  ck_assert_uint_ge(r[0].addr, 0x108000);
  ck_assert(one(&s, "SYSCALL[1,1](12) sys_brk ( 0x0 ) --> [pre-success] Success(0x4035000) ", r) == 0);
  ck_assert(!vg_syscall_line(&s, reading, strlen(reading), r, &n));
  ck_assert(!vg_syscall_line(&s, moved, strlen(moved), r, &n)); /* after the first call: syscalls say */
  ck_assert_uint_eq(n, 0);
  vg_syscalls_clear(&s);
}
END_TEST

/* The mappings of an object built by hand, loaded 0x108000 above its
 * addresses: each segment from its page at its offset's page, the data
 * segment's first page left to the text that maps it already, an empty
 * segment left out.  A 32-bit or big-endian file gives none: the calls
 * read are x86-64's. */
static unsigned loaded(const GByteArray *b, TraceRecord *r)
{
  g_autofree char *path = test_elf_write(b->data, b->len);
  VgSyscalls s;
  vg_syscalls_init(&s);
  unsigned n = 99;
  g_autofree char *reading = g_strdup_printf("--9-- Reading syms from %s", path);
  ck_assert(!vg_syscall_line(&s, reading, strlen(reading), r, &n));
  const char *moved = "--9--    svma 0x0000001000, avma 0x0000109000";
  ck_assert(vg_syscall_line(&s, moved, strlen(moved), r, &n) == (n > 0));
  for (unsigned i = 0; i < n; i++)
    ck_assert_str_eq(r[i].path, path);
  vg_syscalls_clear(&s);
  g_unlink(path);
  return n;
}

START_TEST(test_loaded_object_rules)
{
  static const TestPhdr ph[] = {
    { .type = PT_PHDR, .flags = PF_R, .offset = 64, .vaddr = 64, .filesz = 0xe0, .memsz = 0xe0 },
    { .type = PT_LOAD, .flags = PF_R | PF_X, .offset = 0, .vaddr = 0, .filesz = 0x1234, .memsz = 0x1234 },
    { .type = PT_LOAD, .flags = PF_R | PF_W, .offset = 0x1e10, .vaddr = 0x1e10, .filesz = 0x250, .memsz = 0x2468 },
    { .type = PT_LOAD, .flags = PF_R, .offset = 0x5000, .vaddr = 0x8000 },
  };
  TraceRecord r[VG_SYSCALL_MAX_RECORDS];
  GByteArray *b = test_elf_image(ELFCLASS64, ELFDATA2LSB, ph, G_N_ELEMENTS(ph));
  ck_assert_uint_eq(loaded(b, r), 2);
  g_byte_array_unref(b);
  ck_assert_uint_eq(r[0].addr, 0x108000);
  ck_assert_uint_eq(r[0].len, 0x2000);
  ck_assert_uint_eq(r[0].prot, PROT_R | PROT_X);
  ck_assert_uint_eq(r[0].arg2, 0);
  ck_assert_uint_eq(r[1].addr, 0x10a000); /* 0x109000 is the text's last page */
  ck_assert_uint_eq(r[1].len, 0x3000);    /* up to the page of 0x108000 + 0x1e10 + 0x2468 */
  ck_assert_uint_eq(r[1].prot, PROT_R | PROT_W);
  ck_assert_uint_eq(r[1].arg2, 0x2000); /* 0x1000 and the page left to the text */
  for (unsigned i = 0; i < 2; i++) {
    ck_assert_uint_eq(r[i].type, REC_MMAP);
    ck_assert_uint_eq(r[i].flags, MAP_F_FILE);
  }
  b = test_elf_image(ELFCLASS32, ELFDATA2LSB, ph, G_N_ELEMENTS(ph));
  ck_assert_uint_eq(loaded(b, r), 0);
  g_byte_array_unref(b);
  b = test_elf_image(ELFCLASS64, ELFDATA2MSB, ph, G_N_ELEMENTS(ph));
  ck_assert_uint_eq(loaded(b, r), 0);
  g_byte_array_unref(b);
}
END_TEST

/* Names and offsets in the text format and .mtr, round trip: spaces, `#`,
 * a backslash, a newline, a last blank, bytes that are not UTF-8. */
START_TEST(test_names_round_trip)
{
  static const char *const names[] = { "/usr/lib/x.so", "/tmp/a b#c", "/tmp/back\\slash", "/tmp/new\nline",
                                       "/tmp/end ", "/tmp/\xff\xfe latin" };
  GError *err = NULL;
  g_autofree char *path = temp_path(".mtr");
  MtrWriter *w = mtr_writer_open(path, &err);
  ck_assert_no_error(err);
  GString *text = g_string_new(NULL);
  for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
    TraceRecord r = { .type = REC_MMAP, .pid = 1, .tid = 1, .addr = 0x10000000 + i * 0x10000, .len = 8192,
                      .prot = PROT_R, .flags = MAP_F_FILE, .arg2 = i * 4096, .path = names[i] };
    text_format_record(&r, text);
    g_string_append_c(text, '\n');
    ck_assert(mtr_writer_write(w, &r, &err));
  }
  TraceRecord plain = { .type = REC_MMAP, .pid = 1, .tid = 1, .addr = 0x20000000, .len = 4096, .prot = PROT_R,
                        .flags = MAP_F_FILE };
  ck_assert(mtr_writer_write(w, &plain, &err));
  ck_assert(mtr_writer_close(w, &err));
  ck_assert(strstr(text->str, "path=/tmp/new\\x0aline\n"));
  ck_assert(strstr(text->str, "path=/tmp/end\\x20\n"));
  ck_assert(strstr(text->str, "path=/tmp/back\\\\slash\n"));
  ck_assert(strstr(text->str, "offset=0x1000 path=/tmp/a b#c\n"));
  g_autoptr(TraceSource) t = text_source_from_string("t.txt", text->str, &err);
  GArray *from_text = read_all(t, &err);
  ck_assert_no_error(err);
  g_autoptr(TraceSource) m = mtr_source_open(path, 0, &err);
  ck_assert_no_error(err);
  GArray *from_mtr = read_all(m, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(from_text->len, G_N_ELEMENTS(names));
  ck_assert_uint_eq(from_mtr->len, G_N_ELEMENTS(names) + 1);
  for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
    ck_assert_str_eq(REC(from_text, i)->path, names[i]);
    ck_assert_str_eq(REC(from_mtr, i)->path, names[i]);
    ck_assert_uint_eq(REC(from_text, i)->arg2, i * 4096);
    ck_assert_uint_eq(REC(from_mtr, i)->arg2, i * 4096);
  }
  ck_assert_ptr_null(REC(from_mtr, G_N_ELEMENTS(names))->path); /* 0x8b as before */
  ck_assert_ptr_eq(REC(from_mtr, 0)->path, REC(from_mtr, 0)->path); /* interned */
  g_array_free(from_text, TRUE);
  g_array_free(from_mtr, TRUE);
  g_string_free(text, TRUE);
  g_unlink(path);
}
END_TEST

/* Hostile names: too long (PATH_MAX), empty, without `file`, bad escapes,
 * a NUL; the writer refuses a name longer than PATH_MAX too. */
START_TEST(test_names_refused)
{
  static const struct { const char *line, *msg; } bad[] = {
    { "mmap 0x1000 4K r path=/x\n", "path= without the file flag" },
    { "mmap 0x1000 4K r file path=\n", "empty path" },
    { "mmap 0x1000 4K r file path=/a\\q\n", "bad escape in a path" },
    { "mmap 0x1000 4K r file path=/a\\x00b\n", "a NUL byte" },
    { "mmap 0x1000 4K r file offset=0x10 path=/a\n", "bad file offset" },
    { "mmap 0x1000 4K r offset=0x1000\n", "offset= without the file flag" },
    { "mmap 0x1000 4K r file offset=0x1000 shared\n", "unexpected text after offset=" },
  };
  GError *err = NULL;
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(TraceSource) src = text_source_from_string("t.txt", bad[i].line, &err);
    ck_assert_no_error(err);
    assert_read_fails(src, bad[i].msg);
  }
  GString *longest = g_string_new("mmap 0x1000 4K r file path=/");
  for (unsigned i = 0; i < TRACE_PATH_MAX; i++)
    g_string_append_c(longest, 'a');
  g_autoptr(TraceSource) src = text_source_from_string("t.txt", longest->str, &err);
  assert_read_fails(src, "path longer than 4095 bytes (PATH_MAX)");
  g_string_free(longest, TRUE);
  /* the longest a path may be, written and read back */
  char *name = g_malloc(TRACE_PATH_MAX + 2);
  memset(name, 'b', TRACE_PATH_MAX + 1);
  name[0] = '/';
  name[TRACE_PATH_MAX + 1] = 0;
  g_autofree char *path = temp_path(".mtr");
  MtrWriter *w = mtr_writer_open(path, &err);
  ck_assert_no_error(err);
  TraceRecord r = { .type = REC_MMAP, .pid = 1, .tid = 1, .addr = 0x1000, .len = 4096, .prot = PROT_R,
                    .flags = MAP_F_FILE, .path = name };
  ck_assert(!mtr_writer_write(w, &r, &err));
  ck_assert(strstr(err->message, "PATH_MAX"));
  g_clear_error(&err);
  name[TRACE_PATH_MAX] = 0;
  ck_assert(mtr_writer_write(w, &r, &err));
  ck_assert(mtr_writer_close(w, &err));
  g_autoptr(TraceSource) m = mtr_source_open(path, 0, &err);
  ck_assert_no_error(err);
  GArray *got = read_all(m, &err);
  ck_assert_no_error(err);
  ck_assert_str_eq(REC(got, 0)->path, name);
  g_array_free(got, TRUE);
  g_free(name);
  g_unlink(path);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("vgsyscall");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_lines);
  tcase_add_test(tc, test_lackey_log_to_mtr);
  tcase_add_test(tc, test_text_file_flag);
  tcase_add_test(tc, test_file_names);
  tcase_add_test(tc, test_loaded_objects);
  tcase_add_test(tc, test_loaded_object_rules);
  tcase_add_test(tc, test_names_round_trip);
  tcase_add_test(tc, test_names_refused);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(suite)
