/*
 * Unit tests of the read-ahead source (traces/readahead.c): the reader sees
 * exactly the batches of the source read alone, through views and through
 * copies, with any ring; a decoding error comes after every batch decoded
 * before it, with the source's message; a reader that stops early, or
 * finishes the source to query the inner one, neither blocks nor leaks; the
 * producer stays at most ring - 1 batches ahead of a reader that does not
 * read.
 */
#include "config.h"
#include <string.h>
#include "batch_testutil.h"
#include "readahead.h"
#include "text.h"
#include "workload.h"

static TraceSource *text_src(const char *text)
{
  GError *err = NULL;
  TraceSource *src = text_source_from_string("t.txt", text, &err);
  ck_assert_no_error(err);
  return src;
}

/* The text read alone and read ahead with `ring`, by views and by copies. */
static void check_text(const char *text, unsigned ring)
{
  Seen ref = { 0 }, v = { 0 }, c = { 0 };
  TraceSource *alone = text_src(text);
  read_batches(alone, &ref, 0, 0, FALSE);
  trace_source_free(alone);
  TraceSource *ra = readahead_source_new(text_src(text), ring);
  ck_assert_str_eq(ra->description, "t.txt");
  read_batches(ra, &v, 0, 0, TRUE);
  trace_source_free(ra);
  ra = readahead_source_new(text_src(text), ring);
  read_batches(ra, &c, 0, 0, FALSE);
  trace_source_free(ra);
  assert_same(&v, &ref);
  assert_same(&c, &ref);
  seen_clear(&ref);
  seen_clear(&v);
  seen_clear(&c);
}

START_TEST(test_same_batches)
{
  g_autofree char *text = make_text(5 * TRACE_BATCH_MAX + 17, 0);
  for (unsigned ring = 0; ring <= 5; ring++) /* 0 and 1 count as 2 */
    check_text(text, ring);
  g_autofree char *empty = make_text(0, 0);
  check_text(empty, READAHEAD_RING);
}
END_TEST

START_TEST(test_workload_same_records)
{
  const char *spec = "random:size=16M,accesses=20000";
  GError *err = NULL;
  Seen ref = { 0 }, v = { 0 };
  TraceSource *alone = workload_open(spec, 7, &err);
  ck_assert_no_error(err);
  read_batches(alone, &ref, 0, 0, FALSE);
  TraceSource *inner = workload_open(spec, 7, &err);
  ck_assert_no_error(err);
  TraceSource *ra = readahead_source_new(inner, READAHEAD_RING);
  ck_assert_int_eq(ra->unmapped, alone->unmapped);
  read_batches(ra, &v, 0, 0, TRUE);
  assert_same(&v, &ref);
  ck_assert(readahead_source_finish(ra) == inner);
  ck_assert(readahead_source_finish(alone) == alone); /* not read ahead */
  trace_source_free(alone);
  trace_source_free(ra);
  seen_clear(&ref);
  seen_clear(&v);
}
END_TEST

/* A malformed line in the third batch: the two batches before it arrive,
 * then the error the source alone gives, and again on a further read. */
START_TEST(test_error_after_good_batches)
{
  g_autofree char *text = make_text(4 * TRACE_BATCH_MAX, 2 * TRACE_BATCH_MAX + 100);
  Seen ref = { 0 }, v = { 0 };
  TraceSource *alone = text_src(text);
  read_batches(alone, &ref, 0, 0, FALSE);
  trace_source_free(alone);
  ck_assert_ptr_nonnull(ref.error);
  ck_assert_ptr_nonnull(strstr(ref.error, "t.txt"));
  TraceSource *ra = readahead_source_new(text_src(text), READAHEAD_RING);
  read_batches(ra, &v, 0, 0, TRUE);
  assert_same(&v, &ref);
  TraceBatch *scratch = g_new(TraceBatch, 1);
  GError *err = NULL;
  ck_assert_ptr_null(trace_source_view(ra, scratch, &err));
  ck_assert_ptr_nonnull(err);
  ck_assert_str_eq(err->message, ref.error);
  g_error_free(err);
  g_free(scratch);
  trace_source_free(ra);
  seen_clear(&ref);
  seen_clear(&v);
}
END_TEST

/* The reader takes one batch and stops: closing must stop the producer,
 * which is waiting on a full ring. */
START_TEST(test_early_close)
{
  g_autofree char *text = make_text(20 * TRACE_BATCH_MAX, 0);
  for (unsigned stop = 0; stop <= 2; stop++) {
    TraceSource *ra = readahead_source_new(text_src(text), 3);
    Seen v = { 0 };
    if (stop)
      read_batches(ra, &v, stop, 0, TRUE);
    trace_source_free(ra);
    seen_clear(&v);
  }
}
END_TEST

/* Finishing stops the decoding: what was decoded can still be read, then
 * the source reads as ended, short of the input's end. */
START_TEST(test_finish_stops_decoding)
{
  g_autofree char *text = make_text(20 * TRACE_BATCH_MAX, 0);
  TraceSource *ra = readahead_source_new(text_src(text), 3);
  Seen v = { 0 };
  read_batches(ra, &v, 1, 0, TRUE);
  TraceSource *inner = readahead_source_finish(ra);
  ck_assert_str_eq(inner->ops->name, "text");
  Seen rest = { 0 };
  read_batches(ra, &rest, 0, 0, TRUE);
  ck_assert_ptr_null(rest.error);
  /* At most ring - 1 batches were ahead of the one read. */
  ck_assert_uint_le(rest.sizes->len, 2);
  ck_assert_uint_lt(v.records + rest.records, 20 * TRACE_BATCH_MAX);
  ck_assert(readahead_source_finish(ra) == inner); /* twice is harmless */
  trace_source_free(ra);
  seen_clear(&v);
  seen_clear(&rest);
}
END_TEST

static Suite *readahead_suite(void)
{
  Suite *s = suite_create("readahead");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_same_batches);
  tcase_add_test(tc, test_workload_same_records);
  tcase_add_test(tc, test_error_after_good_batches);
  tcase_add_test(tc, test_early_close);
  tcase_add_test(tc, test_finish_stops_decoding);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(readahead_suite)
