/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * batch_testutil.h - helpers of the tests of sources that hand batches
 * between threads (shared_source, readahead): a text input of n loads with
 * an optional malformed line, and what a reader saw (batch sizes, a
 * checksum of the records, the error) to compare with the source read
 * alone.  read_batches makes no Check assertions: readers run in threads.
 */
#ifndef MMUSIM_BATCH_TESTUTIL_H
#define MMUSIM_BATCH_TESTUTIL_H

#include <string.h>
#include "source.h"
#include "testutil.h"

/* `n` loads; with bad_line > 0 that line is malformed. */
static inline char *make_text(unsigned n, unsigned bad_line)
{
  GString *s = g_string_new(NULL);
  for (unsigned i = 1; i <= n; i++) {
    if (i == bad_line)
      g_string_append(s, "bogus record\n");
    else
      g_string_append_printf(s, "R 0x%x 8\n", 0x1000 + i * 64);
  }
  return g_string_free(s, FALSE);
}

/* What a reader saw. */
typedef struct {
  GArray *sizes;
  uint64_t sum, records;
  char *error;
} Seen;

static inline void seen_clear(Seen *s)
{
  if (s->sizes)
    g_array_free(s->sizes, TRUE);
  g_free(s->error);
  memset(s, 0, sizeof *s);
}

/* Read src to its end or its error, or `stop` batches (0: all), sleeping
 * `sleep_us` a batch; through trace_source_view when `views`, else through
 * trace_source_next. */
static inline void read_batches(TraceSource *src, Seen *s, unsigned stop, gulong sleep_us, gboolean views)
{
  s->sizes = g_array_new(FALSE, FALSE, sizeof(unsigned));
  TraceBatch *scratch = g_new(TraceBatch, 1);
  for (;;) {
    GError *err = NULL;
    const TraceBatch *b = scratch;
    if (views)
      b = trace_source_view(src, scratch, &err);
    else if (!trace_source_next(src, scratch, &err))
      b = NULL;
    if (b == NULL) {
      s->error = g_strdup(err ? err->message : "(no message)");
      g_clear_error(&err);
      break;
    }
    if (b->n == 0)
      break;
    g_array_append_val(s->sizes, b->n);
    for (unsigned i = 0; i < b->n; i++)
      s->sum = s->sum * 31 + b->rec[i].addr + b->rec[i].type + b->rec[i].kind;
    s->records += b->n;
    if (sleep_us)
      g_usleep(sleep_us);
    if (stop && s->sizes->len == stop)
      break;
  }
  g_free(scratch);
}

/* The same batches, records and error (or none) as the reference. */
static inline void assert_same(const Seen *a, const Seen *ref)
{
  ck_assert_str_eq(a->error ? a->error : "", ref->error ? ref->error : "");
  ck_assert_uint_eq(a->sizes->len, ref->sizes->len);
  for (guint i = 0; i < ref->sizes->len; i++)
    ck_assert_uint_eq(g_array_index(a->sizes, unsigned, i), g_array_index(ref->sizes, unsigned, i));
  ck_assert_uint_eq(a->records, ref->records);
  ck_assert(a->sum == ref->sum);
}

#endif
