/*
 * test_generators.c - the video, gups, hashjoin and graph generators: the
 * access shape each file header promises, addresses inside the mapping,
 * bad parameters refused.
 */
#include "config.h"
#include "trace_testutil.h"
#include "workload.h"

/* The measured accesses of a workload (between roi begin and roi end). */
static GArray *measured(const char *spec, uint64_t *map_len)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = workload_open(spec, 0, &err);
  ck_assert_no_error(err);
  GArray *all = read_all(src, &err);
  ck_assert_no_error(err);
  GArray *m = g_array_new(FALSE, FALSE, sizeof(TraceRecord));
  gboolean in = FALSE;
  for (guint i = 0; i < all->len; i++) {
    const TraceRecord *r = REC(all, i);
    if (r->type == REC_MMAP)
      *map_len = r->len;
    if (r->type == REC_ROI_BEGIN || r->type == REC_ROI_END)
      in = r->type == REC_ROI_BEGIN;
    else if (in)
      g_array_append_val(m, *r);
  }
  g_array_free(all, TRUE);
  for (guint i = 0; i < m->len; i++) {
    const TraceRecord *r = REC(m, i);
    ck_assert_uint_eq(r->type, REC_ACCESS);
    ck_assert_uint_ge(r->addr, WORKLOAD_BASE_VA);
    ck_assert_msg(r->addr + r->size <= WORKLOAD_BASE_VA + *map_len, "%s: access %u at %#" G_GINT64_MODIFIER "x beyond the mapping",
                  spec, i, r->addr);
  }
  return m;
}

START_TEST(gups_updates_are_load_store_pairs_of_the_hpcc_stream)
{
  uint64_t len;
  GArray *m = measured("gups:size=3M,accesses=10001", &len);
  ck_assert_uint_eq(m->len, 10001);
  uint64_t table_words = (2ULL << 20) / 8; /* the largest power of two within 3M */
  for (guint i = 0; i + 1 < m->len; i += 2) {
    ck_assert_uint_eq(REC(m, i)->kind, ACC_LOAD);
    ck_assert_uint_eq(REC(m, i + 1)->kind, ACC_STORE);
    ck_assert_uint_eq(REC(m, i)->addr, REC(m, i + 1)->addr);
    uint64_t word = (REC(m, i)->addr - WORKLOAD_BASE_VA) / 8;
    ck_assert_uint_lt(word, table_words);
  }
  ck_assert_uint_eq(REC(m, 10000)->kind, ACC_LOAD); /* an odd count ends on a load */
  /* The low bits of ran follow ran << 1 ^ (POLY if the top bit was set):
   * word k+1 is (word k << 1 | 0) or ((word k << 1) ^ 7), masked. */
  for (guint i = 0; i + 2 < m->len; i += 2) {
    uint64_t a = (REC(m, i)->addr - WORKLOAD_BASE_VA) / 8, b = (REC(m, i + 2)->addr - WORKLOAD_BASE_VA) / 8;
    uint64_t mask = table_words - 1;
    ck_assert_msg(b == ((a << 1) & mask) || b == (((a << 1) ^ 7) & mask), "update %u does not follow the stream", i / 2);
  }
  g_array_free(m, TRUE);
}
END_TEST

START_TEST(graph_visits_every_vertex_once_per_search)
{
  uint64_t len;
  /* degree 4: 7 words a vertex; 56 KiB -> 1023 vertices (one word spare). */
  GArray *m = measured("graph:size=56K,degree=4,accesses=40000", &len);
  uint64_t n = (56 * 1024 - 8) / (7 * 8);
  uint64_t edges_va = WORKLOAD_BASE_VA + (n + 1) * 8, parent_va = edges_va + n * 4 * 8, queue_va = parent_va + n * 8;
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  uint64_t visits = 0, discoveries = 0;
  for (guint i = 0; i < m->len; i++) {
    const TraceRecord *r = REC(m, i);
    if (r->kind == ACC_DEP_LOAD && r->addr < edges_va) { /* offsets[u]: a visit */
      ck_assert_uint_eq(REC(m, i - 1)->addr, queue_va + visits % n * 8); /* popped from the queue */
      if (visits < n)
        g_hash_table_add(seen, GSIZE_TO_POINTER(r->addr));
      visits++;
    }
    if (r->kind == ACC_DEP_LOAD && r->addr >= parent_va && r->addr < queue_va) /* the edge load came first */
      ck_assert(REC(m, i - 1)->addr >= edges_va && REC(m, i - 1)->addr < parent_va);
    if (r->kind == ACC_STORE && r->addr < queue_va)
      discoveries++;
  }
  ck_assert_uint_gt(visits, n);
  ck_assert_uint_eq(g_hash_table_size(seen), n);
  /* One edge in `degree` discovers: one vertex a visit, less the one a
   * search that would overflow its queue. */
  ck_assert_uint_le(discoveries, visits);
  ck_assert_uint_ge(discoveries, visits - visits / n - 2);
  g_hash_table_destroy(seen);
  g_array_free(m, TRUE);
}
END_TEST

START_TEST(hashjoin_builds_then_probes)
{
  uint64_t len;
  /* ratio 2: 5 x 16 bytes a build tuple; 80 KiB -> 1024 build tuples. */
  GArray *m = measured("hashjoin:size=80K,ratio=2,accesses=20000", &len);
  const uint64_t nr = 1024, ns = 2048;
  uint64_t s_va = WORKLOAD_BASE_VA + nr * 16, ht_va = s_va + ns * 16;
  /* Build: R[i] key, D bucket, W the same bucket, for i in order. */
  for (uint64_t i = 0; i < nr; i++) {
    const TraceRecord *r = REC(m, 3 * i);
    ck_assert_uint_eq(r->addr, WORKLOAD_BASE_VA + i * 16);
    ck_assert_uint_eq(REC(m, 3 * i + 1)->kind, ACC_DEP_LOAD);
    ck_assert_uint_ge(REC(m, 3 * i + 1)->addr, ht_va);
    ck_assert_uint_eq(REC(m, 3 * i + 2)->kind, ACC_STORE);
    ck_assert_uint_eq(REC(m, 3 * i + 2)->addr, REC(m, 3 * i + 1)->addr);
  }
  /* Probe: S[j], D bucket, D an R tuple; then the build again. */
  for (uint64_t j = 0; j < ns; j++) {
    guint k = (guint)(3 * nr + 3 * j);
    ck_assert_uint_eq(REC(m, k)->addr, s_va + j * 16);
    ck_assert_uint_ge(REC(m, k + 1)->addr, ht_va);
    ck_assert_uint_lt(REC(m, k + 2)->addr, s_va);
  }
  ck_assert_uint_eq(REC(m, (guint)(3 * nr + 3 * ns))->addr, WORKLOAD_BASE_VA);
  g_array_free(m, TRUE);
}
END_TEST

START_TEST(video_searches_near_each_macroblock)
{
  uint64_t len;
  /* 64x32 frames: 8 macroblocks; 2 refs, 3 candidates, range 8. */
  GArray *m = measured("video:size=8K,width=64,height=32,refs=2,range=8,candidates=3,accesses=2000", &len);
  const uint64_t frame = 64 * 32, per_mb = 16 + 2 * 3 * 16 + 16;
  for (guint i = 0; i < m->len; i++) {
    const TraceRecord *r = REC(m, i);
    ck_assert_uint_eq(r->size, 16);
    uint64_t mb = i / per_mb % 8, pos = i % per_mb, cur = i / (per_mb * 8) % 3;
    uint64_t off = r->addr - WORKLOAD_BASE_VA, f = off / frame, y = off % frame / 64, x = off % 64;
    int64_t mbx = (int64_t)(mb % 4) * 16, mby = (int64_t)(mb / 4) * 16;
    if (pos < 16 || pos >= per_mb - 16) { /* the macroblock's own rows */
      ck_assert_uint_eq(f, cur);
      ck_assert_uint_eq(x, (uint64_t)mbx);
      ck_assert_uint_eq(r->kind, pos < 16 ? ACC_LOAD : ACC_STORE);
    } else { /* a candidate row in a reference frame, within the range */
      ck_assert_uint_ne(f, cur);
      ck_assert_int_le(labs((int64_t)x - mbx), 8);
      int64_t row = (int64_t)((pos - 16) % 16);
      ck_assert_int_le(labs((int64_t)y - row - mby), 8);
    }
  }
  g_array_free(m, TRUE);
}
END_TEST

START_TEST(bad_parameters)
{
  static const struct { const char *spec, *part; } cases[] = {
    { "video:width=100", "bad value '100' for width; expected a multiple of 16" },
    { "video:size=16M,refs=3", "for refs; expected refs + 1 frames" },
    { "graph:size=4K,degree=1024", "for degree" },
    { "hashjoin:size=4K,ratio=1000", "for ratio" },
  };
  for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++) {
    GError *err = NULL;
    TraceSource *src = workload_open(cases[k].spec, 0, &err);
    ck_assert_msg(src == NULL, "'%s' accepted", cases[k].spec);
    ck_assert_msg(strstr(err->message, cases[k].part), "'%s' lacks '%s'", err->message, cases[k].part);
    g_error_free(err);
  }
}
END_TEST

static Suite *generators_suite(void)
{
  Suite *s = suite_create("generators");
  TCase *tc = tcase_create("generators");
  tcase_add_test(tc, gups_updates_are_load_store_pairs_of_the_hpcc_stream);
  tcase_add_test(tc, graph_visits_every_vertex_once_per_search);
  tcase_add_test(tc, hashjoin_builds_then_probes);
  tcase_add_test(tc, video_searches_near_each_macroblock);
  tcase_add_test(tc, bad_parameters);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(generators_suite)
