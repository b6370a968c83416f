/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of compressed trace output (traces/compress_out.c): the kind
 * and inner name come from the file's name; what is written in many pieces
 * under each compression reads back, through the trace input layer's
 * decompression, as the bytes written, and is compressed (smaller than a
 * repetitive input); a file that cannot be written reports it and leaves
 * no file; an abandoned file leaves nothing.
 */
#include "config.h"
#include <glib/gstdio.h>
#include <string.h>
#include "compress_out.h"
#include "errors.h"
#include "input.h"
#include "testutil.h"

START_TEST(test_kind_from_name)
{
  size_t inner;
  gboolean bz2;
  ck_assert_int_eq(compress_out_kind("a.champsimtrace.xz", &inner, &bz2), INPUT_XZ);
  ck_assert_uint_eq(inner, strlen("a.champsimtrace"));
  ck_assert(!bz2);
  ck_assert_int_eq(compress_out_kind("t.txt.gz", &inner, &bz2), INPUT_GZIP);
  ck_assert_uint_eq(inner, strlen("t.txt"));
  ck_assert_int_eq(compress_out_kind("t.lackey.zst", &inner, &bz2), INPUT_ZSTD);
  ck_assert_uint_eq(inner, strlen("t.lackey"));
  ck_assert_int_eq(compress_out_kind("t.txt", &inner, &bz2), INPUT_PLAIN);
  ck_assert_uint_eq(inner, strlen("t.txt"));
  ck_assert_int_eq(compress_out_kind("t.txt.bz2", &inner, &bz2), INPUT_PLAIN);
  ck_assert(bz2);
  ck_assert_int_eq(compress_out_kind("-", &inner, &bz2), INPUT_PLAIN);
}
END_TEST

/* Lines that repeat with a counter: compressible, and long enough (about
 * 3 MiB) to fill the compressor's output buffer many times. */
static GString *sample(void)
{
  GString *s = g_string_new(NULL);
  for (unsigned i = 0; i < 100000; i++)
    g_string_append_printf(s, "L 0x%08x 8 # line %u of the sample\n", i * 64, i);
  return s;
}

static const InputCompression kinds[] = { INPUT_PLAIN, INPUT_GZIP, INPUT_XZ, INPUT_ZSTD };
static const char *const names[] = { "out.txt", "out.txt.gz", "out.txt.xz", "out.txt.zst" };

START_TEST(test_round_trip)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-compress-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, names[_i], NULL);
  g_autoptr(GString) s = sample();
  GError *err = NULL;
  CompressOut *c = compress_out_open(path, kinds[_i], &err);
  ck_assert_no_error(err);
  /* In uneven pieces, some empty. */
  size_t off = 0, step = 1;
  while (off < s->len) {
    size_t n = MIN(step, s->len - off);
    ck_assert(compress_out_write(c, s->str + off, n, &err));
    ck_assert(compress_out_write(c, s->str + off, 0, &err));
    off += n;
    step = step * 3 + 7;
  }
  ck_assert(compress_out_commit(c, &err));
  ck_assert_no_error(err);
  GStatBuf st;
  ck_assert_int_eq(g_stat(path, &st), 0);
  if (kinds[_i] == INPUT_PLAIN)
    ck_assert_uint_eq((guint64)st.st_size, s->len);
  else
    ck_assert_uint_lt((guint64)st.st_size, s->len / 4);
  TraceInput *in = trace_input_open(path, TRUE, &err);
  ck_assert_no_error(err);
  char *back = g_malloc(s->len + 1);
  ck_assert_int_eq(trace_input_read_full(in, back, s->len + 1, &err), (gssize)s->len);
  ck_assert_no_error(err);
  ck_assert(memcmp(back, s->str, s->len) == 0);
  ck_assert_int_eq(trace_input_compression(in), kinds[_i]); /* known once read */
  g_free(back);
  trace_input_free(in);
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* /dev/full takes no byte: the commit (or a write, once the compressor's
 * buffer is full) fails with SIM_ERROR_WRITE naming the file. */
START_TEST(test_full_device)
{
  if (!g_file_test("/dev/full", G_FILE_TEST_EXISTS))
    return;
  g_autoptr(GString) s = sample();
  GError *err = NULL;
  CompressOut *c = compress_out_open("/dev/full", kinds[_i], &err);
  ck_assert_no_error(err);
  gboolean ok = compress_out_write(c, s->str, s->len, &err);
  if (ok)
    ok = compress_out_commit(c, &err);
  else
    compress_out_abort(c);
  ck_assert(!ok);
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE));
  ck_assert_ptr_nonnull(strstr(err->message, "/dev/full"));
  g_error_free(err);
}
END_TEST

START_TEST(test_abort_leaves_nothing)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-compress-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, names[_i], NULL);
  GError *err = NULL;
  CompressOut *c = compress_out_open(path, kinds[_i], &err);
  ck_assert_no_error(err);
  ck_assert(compress_out_write(c, "L 0x1000 8\n", 11, &err));
  compress_out_abort(c);
  GDir *d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_null(g_dir_read_name(d)); /* neither the file nor its temporary */
  g_dir_close(d);
  g_rmdir(dir);
}
END_TEST

static Suite *compress_out_suite(void)
{
  Suite *s = suite_create("compress_out");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_kind_from_name);
  tcase_add_loop_test(tc, test_round_trip, 0, G_N_ELEMENTS(kinds));
  tcase_add_loop_test(tc, test_full_device, 0, G_N_ELEMENTS(kinds));
  tcase_add_loop_test(tc, test_abort_leaves_nothing, 0, G_N_ELEMENTS(kinds));
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(compress_out_suite)
