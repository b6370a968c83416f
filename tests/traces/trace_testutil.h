/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace_testutil.h - helpers of the trace reader tests: read a source to
 * the end, write temporary files, compare record arrays.
 */
#ifndef MMUSIM_TRACE_TESTUTIL_H
#define MMUSIM_TRACE_TESTUTIL_H

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>
#include "source.h"
#include "testutil.h"

#define REC(a, i) (&g_array_index((a), TraceRecord, (i)))

/* All records of a source; NULL with *error set on bad input. */
static inline GArray *read_all(TraceSource *src, GError **error)
{
  GArray *recs = g_array_new(FALSE, FALSE, sizeof(TraceRecord));
  TraceBatch *batch = g_new(TraceBatch, 1);
  for (;;) {
    if (!trace_source_next(src, batch, error)) {
      g_array_free(recs, TRUE);
      recs = NULL;
      break;
    }
    if (batch->n == 0)
      break;
    ck_assert_uint_le(batch->n, TRACE_BATCH_MAX);
    g_array_append_vals(recs, batch->rec, batch->n);
  }
  g_free(batch);
  return recs;
}

/* A fresh temporary file name (the file is created empty). */
static inline char *temp_path(const char *suffix)
{
  g_autofree char *tmpl = g_strconcat("mmusim-test-XXXXXX", suffix, NULL);
  char *path = NULL;
  int fd = g_file_open_tmp(tmpl, &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  return path;
}

static inline void write_file(const char *path, const void *data, size_t len)
{
  GError *err = NULL;
  ck_assert_msg(g_file_set_contents(path, data, (gssize)len, &err), "%s", err ? err->message : "");
}

static inline void assert_same_records(GArray *a, GArray *b)
{
  ck_assert_uint_eq(a->len, b->len);
  for (guint i = 0; i < a->len; i++)
    loop_assert_msg(memcmp(REC(a, i), REC(b, i), sizeof(TraceRecord)) == 0, "record %u differs", i);
}

/* Assert that reading `src` fails with a message containing `part`. */
static inline void assert_read_fails(TraceSource *src, const char *part)
{
  GError *err = NULL;
  GArray *recs = read_all(src, &err);
  ck_assert_msg(recs == NULL, "expected an error containing '%s'", part);
  ck_assert_ptr_nonnull(err);
  ck_assert_msg(strstr(err->message, part), "message '%s' lacks '%s'", err->message, part);
  /* A failure sticks: the next read repeats it word for word. */
  GError *again = NULL;
  TraceBatch *batch = g_new(TraceBatch, 1);
  ck_assert(!trace_source_next(src, batch, &again));
  ck_assert_ptr_nonnull(again);
  ck_assert_str_eq(again->message, err->message);
  ck_assert(g_error_matches(again, err->domain, err->code));
  g_free(batch);
  g_error_free(again);
  g_error_free(err);
}

#endif
