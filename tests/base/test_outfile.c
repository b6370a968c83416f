/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_outfile.c - an output file is written whole or not at all: under a
 * temporary name until out_file_commit(), renamed then; a failure (a full
 * disk: /dev/full) is a SIM_ERROR_WRITE error naming the file and leaves
 * an older file as it was.
 */
#include "config.h"
#include "testutil.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "errors.h"
#include "outfile.h"

/* The number of entries of folder `dir`. */
static unsigned entries(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  unsigned n = 0;
  while (g_dir_read_name(d))
    n++;
  g_dir_close(d);
  return n;
}

static char *read_all(const char *path)
{
  char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  return text;
}

START_TEST(test_commit_renames)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-out-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "a.txt", NULL);
  ck_assert(g_file_set_contents(path, "old\n", -1, NULL));
  GError *err = NULL;
  OutFile *f = out_file_open(path, &err);
  ck_assert_no_error(err);
  fputs("new\n", out_file_stream(f));
  ck_assert_str_eq(out_file_name(f), path);
  /* Meanwhile: the old file and a temporary one beside it. */
  ck_assert_uint_eq(entries(dir), 2);
  g_autofree char *before = read_all(path);
  ck_assert_str_eq(before, "old\n");
  ck_assert(out_file_commit(f, &err));
  ck_assert_no_error(err);
  ck_assert_uint_eq(entries(dir), 1);
  g_autofree char *after = read_all(path);
  ck_assert_str_eq(after, "new\n");
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

START_TEST(test_abort_keeps_old)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-out-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "a.txt", NULL);
  ck_assert(g_file_set_contents(path, "old\n", -1, NULL));
  OutFile *f = out_file_open(path, NULL);
  ck_assert(out_file_write(f, "half", 4, NULL));
  out_file_abort(f);
  out_file_abort(NULL);
  ck_assert_uint_eq(entries(dir), 1);
  g_autofree char *text = read_all(path);
  ck_assert_str_eq(text, "old\n");
  /* no older file: none is left */
  g_unlink(path);
  f = out_file_open(path, NULL);
  out_file_abort(f);
  ck_assert_uint_eq(entries(dir), 0);
  g_rmdir(dir);
}
END_TEST

/* The name is at fault: SIM_ERROR_IO, at open, before anything is run. */
START_TEST(test_bad_names)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-out-XXXXXX", NULL);
  GError *err = NULL;
  ck_assert_ptr_null(out_file_open(dir, &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_IO));
  ck_assert_msg(strstr(err->message, dir) && strstr(err->message, g_strerror(EISDIR)), "%s", err->message);
  g_clear_error(&err);
  g_autofree char *missing = g_build_filename(dir, "no", "a.txt", NULL);
  ck_assert_ptr_null(out_file_open(missing, &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_IO));
  ck_assert_msg(strstr(err->message, missing) && strstr(err->message, g_strerror(ENOENT)), "%s", err->message);
  g_clear_error(&err);
  if (geteuid() != 0) { /* root writes anywhere */
    g_autofree char *ro = g_build_filename(dir, "ro.txt", NULL);
    ck_assert(g_file_set_contents(ro, "keep\n", -1, NULL));
    ck_assert_int_eq(g_chmod(ro, 0444), 0);
    ck_assert_ptr_null(out_file_open(ro, &err));
    ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_IO));
    g_clear_error(&err);
    g_unlink(ro);
  }
  ck_assert_uint_eq(entries(dir), 0);
  g_rmdir(dir);
}
END_TEST

/* A full disk: every write fails with ENOSPC; the error says so, once the
 * stdio buffer is flushed at the latest. */
START_TEST(test_full_disk)
{
  if (!g_file_test("/dev/full", G_FILE_TEST_EXISTS))
    return;
  GError *err = NULL;
  OutFile *f = out_file_open("/dev/full", &err); /* a device: written in place */
  ck_assert_no_error(err);
  fputs("a line\n", out_file_stream(f));
  ck_assert(!out_file_commit(f, &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE));
  ck_assert_str_eq(err->message, "cannot write '/dev/full': No space left on device");
  g_clear_error(&err);
  ck_assert(!out_file_set_contents("/dev/full", "x", 1, &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE));
  g_clear_error(&err);
  /* /dev/null stays a device: written in place, not replaced */
  ck_assert(out_file_set_contents("/dev/null", "x", 1, &err));
  struct stat st;
  ck_assert(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
}
END_TEST

START_TEST(test_exit_status)
{
  GError *w = g_error_new(MMUSIM_SIM_ERROR, SIM_ERROR_WRITE, "w");
  GError *io = g_error_new(MMUSIM_SIM_ERROR, SIM_ERROR_IO, "io");
  ck_assert_int_eq(out_file_exit_status(w), 1);
  ck_assert_int_eq(out_file_exit_status(io), 2);
  g_error_free(w);
  g_error_free(io);
}
END_TEST

static Suite *outfile_suite(void)
{
  Suite *s = suite_create("outfile");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_commit_renames);
  tcase_add_test(tc, test_abort_keeps_old);
  tcase_add_test(tc, test_bad_names);
  tcase_add_test(tc, test_full_disk);
  tcase_add_test(tc, test_exit_status);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(outfile_suite)
