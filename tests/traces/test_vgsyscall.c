/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the recorded mappings: valgrind's --trace-syscalls lines as
 * records (traces/vgsyscall.h), in a lackey log, written to .mtr and read
 * back with the file flag (tests/system/test_file_mapping.c: what the
 * machine makes of them).
 */
#include "config.h"
#include <glib/gstdio.h>
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

static Suite *suite(void)
{
  Suite *s = suite_create("vgsyscall");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_lines);
  tcase_add_test(tc, test_lackey_log_to_mtr);
  tcase_add_test(tc, test_text_file_flag);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(suite)
