/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the shared decoding pass (traces/shared_source.c): N
 * consumers in their own threads read exactly the batches of the source
 * read alone, and the input is decoded once; the ring bounds how far the
 * front runs ahead of a consumer that does not read; consumers that stop
 * early, close, or never come do not block the others; a decoding error
 * reaches every consumer at the same record; each pass decodes anew.
 */
#include "config.h"
#include <string.h>
#include "batch_testutil.h"
#include "shared_source.h"
#include "text.h"

/* ---- helpers ----------------------------------------------------------------- */

typedef struct {
  const char *text;
  int opens;
  gboolean fail_open;
} Input;

static TraceSource *open_input(void *data, unsigned pass, GError **error)
{
  Input *in = data;
  g_atomic_int_inc(&in->opens);
  if (in->fail_open) {
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "cannot open t.txt");
    return NULL;
  }
  return text_source_from_string("t.txt", in->text, error);
}

static void reference(const char *text, Seen *s)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = text_source_from_string("t.txt", text, &err);
  ck_assert_no_error(err);
  read_batches(src, s, 0, 0, FALSE);
}

typedef struct {
  SharedTrace *st;
  unsigned idx, passes, stop;
  gulong sleep_us;
  gboolean never_open;
  Seen seen[2];
} Reader;

static gpointer reader_thread(gpointer data)
{
  Reader *r = data;
  if (!r->never_open) {
    for (unsigned p = 0; p < r->passes; p++) {
      GError *err = NULL;
      TraceSource *src = shared_trace_open(r->st, r->idx, p, &err);
      if (!src) {
        r->seen[p].error = g_strdup(err->message);
        g_error_free(err);
        break;
      }
      /* Odd readers borrow the shared batches, even ones copy them. */
      read_batches(src, &r->seen[p], r->stop, r->sleep_us, r->idx % 2 == 1);
      trace_source_free(src);
    }
  }
  shared_trace_leave(r->st, r->idx);
  return NULL;
}

static void run_readers(Reader *r, unsigned n)
{
  GThread **t = g_new(GThread *, n);
  for (unsigned i = 0; i < n; i++)
    t[i] = g_thread_new("reader", reader_thread, &r[i]);
  for (unsigned i = 0; i < n; i++)
    g_thread_join(t[i]);
  g_free(t);
}

/* ---- tests --------------------------------------------------------------------- */

START_TEST(test_same_batches_decoded_once)
{
  g_autofree char *text = make_text(5 * TRACE_BATCH_MAX + 123, 0);
  Seen ref = { 0 };
  reference(text, &ref);
  ck_assert_uint_eq(ref.sizes->len, 6);
  Input in = { text };
  SharedTrace *st = shared_trace_new(4, 2, open_input, &in);
  Reader r[4];
  for (unsigned i = 0; i < 4; i++)
    r[i] = (Reader){ .st = st, .idx = i, .passes = 1, .sleep_us = i == 0 ? 2000 : 0 };
  run_readers(r, 4);
  for (unsigned i = 0; i < 4; i++) {
    assert_same(&r[i].seen[0], &ref);
    seen_clear(&r[i].seen[0]);
  }
  ck_assert_int_eq(in.opens, 1);
  ck_assert_uint_eq(shared_trace_decoded(st), 6);
  shared_trace_free(st);
  seen_clear(&ref);
}
END_TEST

/* With one place to work, four readers of one pass still all finish with
 * every batch (nothing deadlocks, the ring as small as 2) and never work on
 * two batches at once; with two places, at most two. */
START_TEST(test_active_bound)
{
  g_autofree char *text = make_text(7 * TRACE_BATCH_MAX + 5, 0);
  Seen ref = { 0 };
  reference(text, &ref);
  for (unsigned places = 1; places <= 2; places++) {
    Input in = { text };
    SharedTrace *st = shared_trace_new(4, 2, open_input, &in);
    shared_trace_set_active(st, places);
    Reader r[4];
    for (unsigned i = 0; i < 4; i++)
      r[i] = (Reader){ .st = st, .idx = i, .passes = 2, .sleep_us = 300 };
    run_readers(r, 4);
    for (unsigned i = 0; i < 4; i++)
      for (unsigned p = 0; p < 2; p++) {
        assert_same(&r[i].seen[p], &ref);
        seen_clear(&r[i].seen[p]);
      }
    ck_assert_uint_ge(shared_trace_active_peak(st), 1);
    ck_assert_uint_le(shared_trace_active_peak(st), places);
    ck_assert_int_eq(in.opens, 2);
    shared_trace_free(st);
  }
  seen_clear(&ref);
}
END_TEST

/* Consumer 1 opens the pass and does not read: consumer 0 gets `ring`
 * batches ahead and waits. */
typedef struct {
  SharedTrace *st;
  GMutex lock;
  GCond cond;
  gboolean go;
} Holder;

static gpointer holder_thread(gpointer data)
{
  Holder *h = data;
  GError *err = NULL;
  TraceSource *src = shared_trace_open(h->st, 1, 0, &err);
  g_mutex_lock(&h->lock);
  while (!h->go)
    g_cond_wait(&h->cond, &h->lock);
  g_mutex_unlock(&h->lock);
  Seen s = { 0 };
  read_batches(src, &s, 0, 0, FALSE);
  trace_source_free(src);
  shared_trace_leave(h->st, 1);
  seen_clear(&s);
  return NULL;
}

START_TEST(test_ring_bounds_the_lead)
{
  g_autofree char *text = make_text(8 * TRACE_BATCH_MAX, 0);
  Input in = { text };
  SharedTrace *st = shared_trace_new(2, 3, open_input, &in);
  Holder h = { .st = st };
  g_mutex_init(&h.lock);
  g_cond_init(&h.cond);
  GThread *ht = g_thread_new("holder", holder_thread, &h);
  Reader r = { .st = st, .idx = 0, .passes = 1 };
  GThread *rt = g_thread_new("reader", reader_thread, &r);
  /* Wait for the reader to fill the ring (generously: a loaded host may be
   * slow to schedule it), then give it time to run past it if it could. */
  for (int i = 0; i < 5000 && shared_trace_decoded(st) < 3; i++)
    g_usleep(2000);
  g_usleep(50000);
  ck_assert_uint_eq(shared_trace_decoded(st), 3); /* no further than the ring */
  g_mutex_lock(&h.lock);
  h.go = TRUE;
  g_cond_signal(&h.cond);
  g_mutex_unlock(&h.lock);
  g_thread_join(ht);
  g_thread_join(rt);
  ck_assert_uint_eq(shared_trace_decoded(st), 8);
  ck_assert_uint_eq(r.seen[0].records, 8 * TRACE_BATCH_MAX);
  seen_clear(&r.seen[0]);
  shared_trace_free(st);
  g_mutex_clear(&h.lock);
  g_cond_clear(&h.cond);
}
END_TEST

START_TEST(test_early_stop_and_absent)
{
  g_autofree char *text = make_text(7 * TRACE_BATCH_MAX, 0);
  Seen ref = { 0 };
  reference(text, &ref);
  Input in = { text };
  SharedTrace *st = shared_trace_new(4, 2, open_input, &in);
  Reader r[4] = {
    { .st = st, .idx = 0, .passes = 1, .sleep_us = 1000 },
    { .st = st, .idx = 1, .passes = 1, .stop = 1 },      /* closes after one batch */
    { .st = st, .idx = 2, .passes = 1, .never_open = TRUE }, /* fails before reading */
    { .st = st, .idx = 3, .passes = 1 },
  };
  run_readers(r, 4);
  assert_same(&r[0].seen[0], &ref);
  assert_same(&r[3].seen[0], &ref);
  ck_assert_uint_eq(r[1].seen[0].records, TRACE_BATCH_MAX);
  for (unsigned i = 0; i < 4; i++)
    seen_clear(&r[i].seen[0]);
  seen_clear(&ref);
  shared_trace_free(st);
}
END_TEST

START_TEST(test_error_reaches_everyone)
{
  g_autofree char *text = make_text(3 * TRACE_BATCH_MAX, 2 * TRACE_BATCH_MAX + 10);
  Seen ref = { 0 };
  reference(text, &ref);
  ck_assert_ptr_nonnull(ref.error);
  Input in = { text };
  SharedTrace *st = shared_trace_new(3, 2, open_input, &in);
  Reader r[3];
  for (unsigned i = 0; i < 3; i++)
    r[i] = (Reader){ .st = st, .idx = i, .passes = 1 };
  run_readers(r, 3);
  for (unsigned i = 0; i < 3; i++) {
    ck_assert_str_eq(r[i].seen[0].error, ref.error);
    ck_assert_uint_eq(r[i].seen[0].records, ref.records);
    seen_clear(&r[i].seen[0]);
  }
  seen_clear(&ref);
  shared_trace_free(st);
}
END_TEST

START_TEST(test_passes_and_open_error)
{
  g_autofree char *text = make_text(2 * TRACE_BATCH_MAX + 5, 0);
  Seen ref = { 0 };
  reference(text, &ref);
  Input in = { text };
  SharedTrace *st = shared_trace_new(2, 2, open_input, &in);
  Reader r[2] = { { .st = st, .idx = 0, .passes = 2 }, { .st = st, .idx = 1, .passes = 2, .sleep_us = 500 } };
  run_readers(r, 2);
  for (unsigned i = 0; i < 2; i++)
    for (unsigned p = 0; p < 2; p++) {
      assert_same(&r[i].seen[p], &ref);
      seen_clear(&r[i].seen[p]);
    }
  ck_assert_int_eq(in.opens, 2);
  ck_assert_uint_eq(shared_trace_decoded(st), 6);
  shared_trace_free(st);

  Input bad = { text, .fail_open = TRUE };
  st = shared_trace_new(2, 2, open_input, &bad);
  Reader b[2] = { { .st = st, .idx = 0, .passes = 1 }, { .st = st, .idx = 1, .passes = 1 } };
  run_readers(b, 2);
  for (unsigned i = 0; i < 2; i++) {
    ck_assert_str_eq(b[i].seen[0].error, "cannot open t.txt");
    seen_clear(&b[i].seen[0]);
  }
  seen_clear(&ref);
  shared_trace_free(st);
}
END_TEST

/* A batch lent as a view stays the reader's while the others read on and
 * its ring slot takes a later batch; the batches come noted with whose
 * records they hold, copies and views alike. */
START_TEST(test_view_outlives_its_slot)
{
  g_autofree char *text = make_text(6 * TRACE_BATCH_MAX, 0);
  Input in = { text, 0, FALSE };
  SharedTrace *st = shared_trace_new(2, 2, open_input, &in);
  GError *err = NULL;
  TraceSource *a = shared_trace_open(st, 0, 0, &err);
  ck_assert_no_error(err);
  TraceSource *b = shared_trace_open(st, 1, 0, &err);
  ck_assert_no_error(err);
  TraceBatch *scratch = g_new(TraceBatch, 1), *first = g_new(TraceBatch, 1);
  const TraceBatch *lent = trace_source_view(a, scratch, &err);
  ck_assert_no_error(err);
  ck_assert(lent != scratch); /* the shared batch itself */
  ck_assert_uint_eq(lent->n, TRACE_BATCH_MAX);
  ck_assert_int_eq(lent->threads, BATCH_THREADS_ONE);
  memcpy(first, lent, sizeof *first);
  /* b reads batches 0 to 2: batch 2 takes batch 0's slot (ring of 2, a at 1). */
  for (unsigned i = 0; i < 3; i++) {
    ck_assert(trace_source_next(b, scratch, &err));
    ck_assert_uint_eq(scratch->n, TRACE_BATCH_MAX);
    ck_assert_int_eq(scratch->threads, BATCH_THREADS_ONE);
  }
  ck_assert_uint_eq(shared_trace_decoded(st), 3);
  ck_assert_int_eq(memcmp(lent->rec, first->rec, sizeof first->rec), 0);
  trace_source_free(a); /* gives the lent batch back */
  trace_source_free(b);
  shared_trace_free(st);
  g_free(scratch);
  g_free(first);
}
END_TEST

static Suite *shared_source_suite(void)
{
  Suite *s = suite_create("shared_source");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_same_batches_decoded_once);
  tcase_add_test(tc, test_ring_bounds_the_lead);
  tcase_add_test(tc, test_active_bound);
  tcase_add_test(tc, test_early_stop_and_absent);
  tcase_add_test(tc, test_error_reaches_everyone);
  tcase_add_test(tc, test_passes_and_open_error);
  tcase_add_test(tc, test_view_outlives_its_slot);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(shared_source_suite)
