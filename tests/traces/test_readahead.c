/* SPDX-License-Identifier: GPL-2.0-or-later */
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
  TraceSource *alone = workload_open(spec, &(uint64_t){ 7 }, &err);
  ck_assert_no_error(err);
  read_batches(alone, &ref, 0, 0, FALSE);
  TraceSource *inner = workload_open(spec, &(uint64_t){ 7 }, &err);
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

/* A batch of n accesses of thread (pid, tid), records that leave it to the
 * current thread (0, 0) or name only one half among them. */
static void fill(TraceBatch *b, unsigned n, uint32_t pid, uint32_t tid)
{
  memset(b, 0, sizeof *b);
  b->n = n;
  for (unsigned i = 0; i < n; i++) {
    b->rec[i].type = REC_ACCESS;
    b->rec[i].addr = 0x1000 + 64 * i;
    b->rec[i].pid = i % 3 == 1 ? 0 : pid;
    b->rec[i].tid = i % 3 == 2 ? 0 : tid;
  }
}

static gboolean one_thread(const TraceBatch *b, uint32_t *pid, uint32_t *tid)
{
  *pid = *tid = 99; /* must be written */
  return trace_batch_one_thread(b, pid, tid);
}

/* trace_batch_one_thread: one thread's records, with halves left to the
 * current thread, pass; a thread switch or a second pid or tid anywhere
 * does not; the noted answer is the scanned one. */
START_TEST(test_one_thread)
{
  TraceBatch *b = g_new(TraceBatch, 1);
  uint32_t pid, tid;
  fill(b, 100, 3, 7);
  ck_assert(one_thread(b, &pid, &tid));
  ck_assert_uint_eq(pid, 3);
  ck_assert_uint_eq(tid, 7);
  fill(b, 100, 0, 0);
  ck_assert(one_thread(b, &pid, &tid));
  ck_assert_uint_eq(pid, 0);
  ck_assert_uint_eq(tid, 0);
  b->rec[50].tid = 4; /* a tid alone, after records naming none */
  ck_assert(one_thread(b, &pid, &tid));
  ck_assert_uint_eq(pid, 0);
  ck_assert_uint_eq(tid, 4);
  b->n = 0;
  ck_assert(one_thread(b, &pid, &tid));
  ck_assert_uint_eq(pid + tid, 0);
  for (unsigned at = 0; at < 100; at += 33) {
    fill(b, 100, 3, 7);
    b->rec[at].type = REC_THREAD;
    ck_assert(!one_thread(b, &pid, &tid));
    fill(b, 100, 3, 7);
    b->rec[at].pid = 4;
    ck_assert(!one_thread(b, &pid, &tid));
    fill(b, 100, 3, 7);
    b->rec[at].tid = 8;
    b->rec[at].pid = 0;
    ck_assert(!one_thread(b, &pid, &tid));
  }
  /* Noted: the same answers without a scan (a stale note would show). */
  fill(b, 100, 3, 7);
  trace_batch_note_threads(b);
  ck_assert_int_eq(b->threads, BATCH_THREADS_ONE);
  b->rec[10].type = REC_THREAD;
  ck_assert(one_thread(b, &pid, &tid));
  ck_assert_uint_eq(pid, 3);
  ck_assert_uint_eq(tid, 7);
  trace_batch_note_threads(b);
  ck_assert_int_eq(b->threads, BATCH_THREADS_MANY);
  b->rec[10].type = REC_ACCESS;
  ck_assert(!one_thread(b, &pid, &tid));
  g_free(b);
}
END_TEST

/* Read ahead, every batch comes noted, with the answer of a scan; read
 * alone, none does.  A text of loads with a thread switch every 3000
 * lines gives both kinds. */
START_TEST(test_batches_noted)
{
  GString *t = g_string_new(NULL);
  for (unsigned i = 1; i <= 8 * TRACE_BATCH_MAX; i++) {
    if (i % 3000 == 0)
      g_string_append_printf(t, "thread %u\n", 1 + i / 3000 % 3);
    g_string_append_printf(t, "R 0x%x 8\n", 0x1000 + i * 64);
  }
  g_autofree char *text = g_string_free(t, FALSE);
  GError *err = NULL;
  TraceSource *alone = text_src(text);
  TraceSource *ra = readahead_source_new(text_src(text), READAHEAD_RING);
  TraceBatch *scratch = g_new(TraceBatch, 1), *copy = g_new(TraceBatch, 1);
  unsigned one = 0, many = 0;
  for (;;) {
    const TraceBatch *b = trace_source_view(ra, scratch, &err);
    ck_assert_no_error(err);
    const TraceBatch *a = trace_source_view(alone, copy, &err);
    ck_assert_no_error(err);
    ck_assert_uint_eq(a->n, b->n);
    if (b->n == 0)
      break;
    ck_assert_int_eq(a->threads, BATCH_THREADS_UNKNOWN);
    ck_assert_int_ne(b->threads, BATCH_THREADS_UNKNOWN);
    uint32_t ap, at, bp, bt;
    gboolean ao = trace_batch_one_thread(a, &ap, &at), bo = trace_batch_one_thread(b, &bp, &bt);
    ck_assert_int_eq(ao, bo);
    if (bo) {
      ck_assert_uint_eq(ap, bp);
      ck_assert_uint_eq(at, bt);
    }
    one += bo;
    many += !bo;
  }
  ck_assert_uint_gt(one, 0);
  ck_assert_uint_gt(many, 0);
  g_free(scratch);
  g_free(copy);
  trace_source_free(alone);
  trace_source_free(ra);
}
END_TEST

static Suite *readahead_suite(void)
{
  Suite *s = suite_create("readahead");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_same_batches);
  tcase_add_test(tc, test_workload_same_records);
  tcase_add_test(tc, test_error_after_good_batches);
  tcase_add_test(tc, test_early_close);
  tcase_add_test(tc, test_finish_stops_decoding);
  tcase_add_test(tc, test_one_thread);
  tcase_add_test(tc, test_batches_noted);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(readahead_suite)
