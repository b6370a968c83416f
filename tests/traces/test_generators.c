/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_generators.c - the video, gups, hashjoin, graph, threads and jbb
 * generators: the access shape each file header promises, addresses inside
 * the mapping, the threads of the multi-threaded ones and who first touches
 * what, bad parameters refused.
 */
#include "config.h"
#include "trace_testutil.h"
#include "workload.h"

/* The measured accesses of a workload (between roi begin and roi end). */
static GArray *measured(const char *spec, uint64_t *map_len)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = workload_open(spec, NULL, &err);
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

/* thp=disable puts the prctl before the mapping, thp=hugepage/nohugepage a
 * madvise of the whole mapping after it; the default emits neither and the
 * description does not mention it. */
START_TEST(thp_parameter_emits_prctl_or_madvise)
{
  static const struct { const char *spec; int type; int arg; } cases[] = {
    { "seq:size=4M,accesses=10,thp=disable", REC_PRCTL, PRCTL_THP_DISABLE },
    { "threads:threads=2,size=4M,accesses=10,thp=hugepage", REC_MADVISE, ADV_HUGEPAGE },
    { "seq:size=4M,accesses=10,thp=nohugepage", REC_MADVISE, ADV_NOHUGEPAGE },
    { "seq:size=4M,accesses=10", -1, 0 },
  };
  for (unsigned c = 0; c < G_N_ELEMENTS(cases); c++) {
    GError *err = NULL;
    g_autoptr(TraceSource) src = workload_open(cases[c].spec, NULL, &err);
    ck_assert_no_error(err);
    ck_assert_msg((strstr(src->description, "thp=") != NULL) == (cases[c].type >= 0), "%s", src->description);
    GArray *all = read_all(src, &err);
    ck_assert_no_error(err);
    int mmap_at = -1, found_at = -1;
    for (guint i = 0; i < all->len; i++) {
      const TraceRecord *r = REC(all, i);
      if (r->type == REC_MMAP)
        mmap_at = (int)i;
      if (r->type == REC_PRCTL || r->type == REC_MADVISE) {
        ck_assert_int_eq(r->type, cases[c].type);
        ck_assert_int_eq(r->arg, cases[c].arg);
        if (r->type == REC_PRCTL)
          ck_assert_uint_eq(r->arg2, 1);
        else
          ck_assert_uint_eq(r->len, 4 * 1024 * 1024);
        found_at = (int)i;
      }
    }
    if (cases[c].type == REC_PRCTL)
      ck_assert_int_lt(found_at, mmap_at);
    else if (cases[c].type == REC_MADVISE)
      ck_assert_int_eq(found_at, mmap_at + 1);
    else
      ck_assert_int_eq(found_at, -1);
    g_array_free(all, TRUE);
  }
}
END_TEST

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


/* ---- the multi-threaded generators -------------------------------------- */

/* An assertion for per-record loops: Check's own mark every passing
 * assertion, which costs a system call each in fork mode. */
#define REQUIRE(cond)                                                                                                \
  do {                                                                                                               \
    if (!(cond))                                                                                                     \
      ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond);                                                          \
  } while (0)

/* Every record of a workload, checked against the stream workload.c
 * promises: thread 1, the mmap, then setup, roi begin, measured, roi end;
 * every access inside the mapping, of pid 1, and of a thread started
 * before it (by a thread record); tids 1..threads. */
typedef struct {
  GArray *all;
  guint mmap_at, roi_begin, roi_end; /* indices */
  uint64_t map_len;
  uint32_t threads;                  /* thread records seen */
} Stream;

static void stream_read(Stream *st, const char *spec, uint32_t want_threads)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = workload_open(spec, NULL, &err);
  ck_assert_no_error(err);
  st->all = read_all(src, &err);
  ck_assert_no_error(err);
  GArray *a = st->all;
  REQUIRE(REC(a, 0)->type == REC_THREAD);
  REQUIRE(REC(a, 0)->tid == 1);
  REQUIRE(REC(a, 1)->type == REC_MMAP);
  st->mmap_at = 1;
  st->map_len = REC(a, 1)->len;
  REQUIRE(REC(a, 1)->addr == WORKLOAD_BASE_VA);
  REQUIRE(st->map_len % (2u << 20) == 0);
  gboolean *started = g_new0(gboolean, want_threads + 1);
  started[1] = TRUE;
  st->threads = 1;
  st->roi_begin = st->roi_end = 0;
  for (guint i = 2; i < a->len; i++) {
    const TraceRecord *r = REC(a, i);
    REQUIRE(r->pid == 1);
    REQUIRE(r->tid >= 1);
    REQUIRE(r->tid <= want_threads);
    switch (r->type) {
    case REC_THREAD:
      if (started[r->tid])
        ck_abort_msg("%s: thread %u started twice", spec, r->tid);
      if (st->roi_begin != 0)
        ck_abort_msg("%s: thread %u started in the measured phase", spec, r->tid);
      started[r->tid] = TRUE;
      st->threads++;
      break;
    case REC_ACCESS:
      if (!started[r->tid])
        ck_abort_msg("%s: record %u of thread %u before its thread record", spec, i, r->tid);
      REQUIRE(r->addr >= WORKLOAD_BASE_VA);
      if (!(r->addr + r->size <= WORKLOAD_BASE_VA + st->map_len))
        ck_abort_msg("%s: record %u beyond the mapping", spec, i);
      break;
    case REC_ROI_BEGIN:
      REQUIRE(st->roi_begin == 0);
      st->roi_begin = i;
      break;
    case REC_ROI_END:
      REQUIRE(i == a->len - 1);
      st->roi_end = i;
      break;
    default:
      ck_abort_msg("%s: unexpected record type %u", spec, r->type);
    }
  }
  REQUIRE(st->roi_begin > 0);
  REQUIRE(st->roi_end == a->len - 1);
  REQUIRE(st->threads == want_threads);
  g_free(started);
}

/* The measured access m (0-based). */
#define MEASURED(st, m) REC((st)->all, (st)->roi_begin + 1 + (m))
#define N_MEASURED(st) ((st)->roi_end - (st)->roi_begin - 1)

/* chunks=2: thread t owns blocks t and t + threads, first-touches both
 * (line by line, in turn with the other threads) and walks both in order. */
START_TEST(threads_deal_chunks_round_robin)
{
  Stream st;
  stream_read(&st, "threads:threads=3,chunk=4K,chunks=2,accesses=3000", 3);
  const uint64_t chunk = 4096, lines = chunk / 64;
  REQUIRE(st.map_len == 2u << 20); /* 24K rounded up to the 2M of a mapping */
  guint setup0 = 4; /* thread 1, mmap, threads 2 and 3 */
  REQUIRE(st.roi_begin - setup0 == 3 * 2 * lines);
  for (guint i = setup0; i < st.roi_begin; i++) {
    const TraceRecord *r = REC(st.all, i);
    uint64_t k = i - setup0, t = k % 3, line = k / 3, c = line / lines;
    REQUIRE(r->tid == t + 1);
    REQUIRE(r->addr == WORKLOAD_BASE_VA + (c * 3 + t) * chunk + line % lines * 64);
  }
  for (guint m = 0; m < N_MEASURED(&st); m++) {
    const TraceRecord *r = MEASURED(&st, m);
    uint64_t t = m % 3, w = m / 3 % (2 * chunk / 8), c = w / (chunk / 8);
    REQUIRE(r->tid == t + 1);
    REQUIRE(r->addr == WORKLOAD_BASE_VA + (c * 3 + t) * chunk + w % (chunk / 8) * 8);
  }
  g_array_free(st.all, TRUE);
}
END_TEST

START_TEST(threads_work_on_their_own_chunks)
{
  /* 768K chunks aligned to 2M: thread t's chunk at t x 2M. */
  Stream st;
  stream_read(&st, "threads:threads=5,chunk=768K,align=2M,accesses=100003", 5);
  const uint64_t stride = 2u << 20, chunk = 768u << 10, lines = chunk / 64;
  REQUIRE(st.map_len == 5 * stride);
  /* Setup: threads 2..5 start, then each stores to every line of its own
   * chunk, the threads' stores interleaved one by one. */
  for (guint i = 0; i < 4; i++) {
    REQUIRE(REC(st.all, 2 + i)->type == REC_THREAD);
    REQUIRE(REC(st.all, 2 + i)->tid == i + 2);
    REQUIRE(REC(st.all, 2 + i)->arg == -1);
  }
  guint setup0 = 6;
  REQUIRE(st.roi_begin - setup0 == 5 * lines);
  for (guint i = setup0; i < st.roi_begin; i++) {
    const TraceRecord *r = REC(st.all, i);
    uint64_t k = i - setup0, t = k % 5, line = k / 5;
    REQUIRE(r->kind == ACC_STORE);
    REQUIRE(r->tid == t + 1);
    REQUIRE(r->addr == WORKLOAD_BASE_VA + t * stride + line * 64);
  }
  /* Measured: round robin, each in its own chunk, word by word. */
  REQUIRE(N_MEASURED(&st) == 100003);
  uint64_t per[5] = { 0 };
  for (guint m = 0; m < N_MEASURED(&st); m++) {
    const TraceRecord *r = MEASURED(&st, m);
    uint64_t t = m % 5, j = m / 5;
    REQUIRE(r->tid == t + 1);
    REQUIRE(r->kind == ACC_LOAD);
    REQUIRE(r->addr == WORKLOAD_BASE_VA + t * stride + j % (chunk / 8) * 8);
    per[t]++;
  }
  REQUIRE(per[0] == 20001); /* 100003 = 5 x 20000 + 3 */
  REQUIRE(per[2] == 20001);
  REQUIRE(per[3] == 20000);
  g_array_free(st.all, TRUE);
}
END_TEST

START_TEST(threads_chunks_follow_align)
{
  /* 100000-byte chunks: stride 100000 with align=8, 102400 with 4K, and the
   * padding after each chunk is never touched. */
  static const struct { const char *spec; uint64_t stride; } cases[] = {
    { "threads:threads=7,chunk=100000,align=8,pattern=random,accesses=50000", 100000 },
    { "threads:threads=7,chunk=100000,align=4K,pattern=random,accesses=50000", 102400 },
    { "threads:threads=7,chunk=100000,align=64K,pattern=random,accesses=50000", 131072 },
  };
  for (unsigned c = 0; c < G_N_ELEMENTS(cases); c++) {
    Stream st;
    stream_read(&st, cases[c].spec, 7);
    for (guint i = st.mmap_at + 1; i < st.roi_end; i++) {
      const TraceRecord *r = REC(st.all, i);
      if (r->type != REC_ACCESS)
        continue;
      uint64_t off = r->addr - WORKLOAD_BASE_VA, t = off / cases[c].stride;
      REQUIRE(t == r->tid - 1);
      REQUIRE(off % cases[c].stride + r->size < 100000 + 1);
      REQUIRE(r->addr % 8 == 0);
    }
    g_array_free(st.all, TRUE);
  }
}
END_TEST

START_TEST(threads_random_visits_every_word_of_a_chunk)
{
  /* 4K chunks: 512 words; 3 threads x 512 accesses is one pass each. */
  Stream st;
  stream_read(&st, "threads:threads=3,chunk=4K,pattern=random,rw=0.25,accesses=1536", 3);
  for (uint64_t t = 0; t < 3; t++) {
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    unsigned stores = 0, in_order = 0;
    for (guint m = (guint)t; m < N_MEASURED(&st); m += 3) {
      const TraceRecord *r = MEASURED(&st, m);
      REQUIRE(r->tid == t + 1);
      REQUIRE(r->addr >= WORKLOAD_BASE_VA + t * 4096);
      REQUIRE(r->addr < WORKLOAD_BASE_VA + (t + 1) * 4096);
      g_hash_table_add(seen, GSIZE_TO_POINTER(r->addr));
      stores += r->kind == ACC_STORE;
      in_order += r->addr == WORKLOAD_BASE_VA + t * 4096 + (m / 3) * 8;
    }
    REQUIRE(g_hash_table_size(seen) == 512);
    REQUIRE(stores == 128); /* rw=0.25 of each thread's own accesses */
    REQUIRE(in_order < 16);
    g_hash_table_destroy(seen);
  }
  /* The threads' orders differ. */
  REQUIRE((MEASURED(&st, 0)->addr - WORKLOAD_BASE_VA) != (MEASURED(&st, 1)->addr - WORKLOAD_BASE_VA - 4096));
  g_array_free(st.all, TRUE);
}
END_TEST

START_TEST(threads_main_first_touch_and_pinning)
{
  Stream st;
  stream_read(&st, "threads:threads=4,chunk=100000,align=4K,first_touch=main,pin=1,accesses=400", 4);
  REQUIRE(REC(st.all, 0)->arg == 0); /* thread 1 on CPU 0 */
  /* Thread 1 stores to every line of the whole block (padding included),
   * and only then do the others start, each pinned to CPU tid - 1. */
  const uint64_t block = 4 * 102400, lines = block / 64;
  for (guint i = 0; i < lines; i++) {
    const TraceRecord *r = REC(st.all, 2 + i);
    REQUIRE(r->type == REC_ACCESS);
    REQUIRE(r->tid == 1);
    REQUIRE(r->addr == WORKLOAD_BASE_VA + i * 64);
  }
  for (guint i = 0; i < 3; i++) {
    const TraceRecord *r = REC(st.all, 2 + lines + i);
    REQUIRE(r->type == REC_THREAD);
    REQUIRE(r->tid == i + 2);
    REQUIRE(r->arg == (int)i + 1);
  }
  REQUIRE(st.roi_begin == 2 + lines + 3);
  g_array_free(st.all, TRUE);
}
END_TEST

START_TEST(threads_size_splits_into_chunks)
{
  GError *err = NULL;
  /* size alone: split, each chunk a whole number of aligns; the
   * description shows the chunk and the block, and reads back the same. */
  g_autoptr(TraceSource) a = workload_open("threads:size=10M,threads=3,align=64K", NULL, &err);
  ck_assert_no_error(err);
  ck_assert_ptr_nonnull(strstr(a->description, "size=10176K,"));
  ck_assert_ptr_nonnull(strstr(a->description, "chunk=3392K,"));
  g_autoptr(TraceSource) b = workload_open(a->description, NULL, &err);
  ck_assert_no_error(err);
  ck_assert_str_eq(a->description, b->description);
  /* Without size: threads x chunk rounded up to align. */
  g_autoptr(TraceSource) c = workload_open("threads:threads=3,chunk=1000", NULL, &err);
  ck_assert_no_error(err);
  ck_assert_ptr_nonnull(strstr(c->description, "size=12K,"));
}
END_TEST

START_TEST(jbb_threads_and_heap)
{
  /* 4 warehouses, 64K young each; old heap 1M, its first 1/8 shared. */
  Stream st;
  stream_read(&st, "jbb:threads=4,young=64K,old=1M,shared_part=0.125,shared=0.25,old_accesses=0.5,rw=0.5,accesses=40000",
              4);
  const uint64_t young = 64u << 10, old_va = WORKLOAD_BASE_VA + 4 * young, shared = 128u << 10;
  const uint64_t part = (1048576 - shared) / 4;
  REQUIRE(st.map_len == 2u << 20);
  /* Setup: thread 1 loads the whole old heap before the others start. */
  const uint64_t old_lines = 1048576 / 64;
  for (guint i = 0; i < old_lines; i++) {
    const TraceRecord *r = REC(st.all, 2 + i);
    REQUIRE(r->tid == 1);
    REQUIRE(r->kind == ACC_STORE);
    REQUIRE(r->addr == old_va + i * 64);
  }
  for (guint i = 0; i < 3; i++)
    REQUIRE(REC(st.all, 2 + old_lines + i)->type == REC_THREAD);
  /* ... then each thread stores to every line of its young region. */
  guint y0 = (guint)(2 + old_lines + 3);
  REQUIRE(st.roi_begin - y0 == 4 * young / 64);
  for (guint i = y0; i < st.roi_begin; i++) {
    const TraceRecord *r = REC(st.all, i);
    uint64_t k = i - y0;
    REQUIRE(r->tid == k % 4 + 1);
    REQUIRE(r->addr == WORKLOAD_BASE_VA + (k % 4) * young + k / 4 * 64);
  }
  /* Measured: round robin; young accesses are the thread's allocation,
   * stores walking its own region; old ones in its part or the shared one. */
  REQUIRE(N_MEASURED(&st) == 40000);
  uint64_t next[4] = { 0 }, n_old = 0, n_shared = 0, n_old_stores = 0;
  for (guint m = 0; m < N_MEASURED(&st); m++) {
    const TraceRecord *r = MEASURED(&st, m);
    uint64_t t = m % 4;
    REQUIRE(r->tid == t + 1);
    if (r->addr < old_va) {
      REQUIRE(r->kind == ACC_STORE);
      REQUIRE(r->addr == WORKLOAD_BASE_VA + t * young + next[t] * 8);
      next[t] = (next[t] + 1) % (young / 8);
      continue;
    }
    n_old++;
    n_old_stores += r->kind == ACC_STORE;
    if (r->addr < old_va + shared) {
      n_shared++;
      continue;
    }
    uint64_t own = old_va + shared + t * part;
    if (!(r->addr >= own && r->addr + 8 <= own + part))
      ck_abort_msg("access %u of thread %u outside its part", m, (unsigned)t + 1);
  }
  REQUIRE(next[0] + next[1] > 0);
  REQUIRE(n_old >= 19000); /* half of 40000, within a few sigma */
  REQUIRE(n_old <= 21000);
  REQUIRE(n_shared >= n_old / 4 - 500);
  REQUIRE(n_shared <= n_old / 4 + 500);
  REQUIRE(n_old_stores >= n_old / 2 - 4); /* rw exact per thread */
  REQUIRE(n_old_stores <= n_old / 2 + 4);
  g_array_free(st.all, TRUE);
}
END_TEST

START_TEST(jbb_loader_choices)
{
  const uint64_t young = 4096, old_va = WORKLOAD_BASE_VA + 3 * young, old = 192u << 10, shared = 24u << 10;
  const uint64_t part = (old - shared) / 3;
  /* loader=2: thread 2 starts, loads the old heap alone, then thread 3. */
  Stream st;
  stream_read(&st, "jbb:threads=3,young=4K,old=192K,loader=2,accesses=300", 3);
  REQUIRE(REC(st.all, 2)->type == REC_THREAD);
  REQUIRE(REC(st.all, 2)->tid == 2);
  for (guint i = 0; i < old / 64; i++) {
    REQUIRE(REC(st.all, 3 + i)->tid == 2);
    REQUIRE(REC(st.all, 3 + i)->addr == old_va + i * 64);
  }
  REQUIRE(REC(st.all, 3 + old / 64)->type == REC_THREAD);
  REQUIRE(REC(st.all, 3 + old / 64)->tid == 3);
  g_array_free(st.all, TRUE);
  /* loader=0: thread 1 touches the shared part alone, then each warehouse
   * its own part, then the young regions. */
  stream_read(&st, "jbb:threads=3,young=4K,old=192K,loader=0,accesses=300", 3);
  guint i = 2;
  for (; i < 2 + shared / 64; i++) {
    REQUIRE(REC(st.all, i)->tid == 1);
    REQUIRE(REC(st.all, i)->addr == old_va + (i - 2) * 64);
  }
  REQUIRE(REC(st.all, i)->type == REC_THREAD);
  REQUIRE(REC(st.all, i + 1)->type == REC_THREAD);
  i += 2;
  uint64_t touched = 0;
  for (; i < st.roi_begin; i++) {
    const TraceRecord *r = REC(st.all, i);
    uint64_t t = r->tid - 1;
    if (r->addr >= old_va) {
      uint64_t own = old_va + shared + t * part;
      REQUIRE(r->addr >= own && r->addr < own + part);
      touched++;
    } else {
      REQUIRE((r->addr - WORKLOAD_BASE_VA) / young == t);
    }
  }
  REQUIRE(touched == 3 * ((part - 8) / 64 + 1));
  g_array_free(st.all, TRUE);
  /* promote=8K: threads 2 and 3 start, then the old heap is touched in
   * address order, each 8K piece by one thread (loader ignored), every
   * thread taking some, then the young regions. */
  guint by[4] = { 0 };
  stream_read(&st, "jbb:threads=3,young=4K,old=192K,loader=2,promote=8K,accesses=300", 3);
  REQUIRE(REC(st.all, 2)->type == REC_THREAD && REC(st.all, 2)->tid == 2);
  REQUIRE(REC(st.all, 3)->type == REC_THREAD && REC(st.all, 3)->tid == 3);
  for (i = 0; i < old / 64; i++) {
    const TraceRecord *r = REC(st.all, 4 + i);
    REQUIRE(r->type == REC_ACCESS);
    REQUIRE(r->addr == old_va + i * 64);
    if (i % 128)
      REQUIRE(r->tid == REC(st.all, 4 + i - 1)->tid);
    by[r->tid]++;
  }
  REQUIRE(by[1] > 0 && by[2] > 0 && by[3] > 0);
  for (i = 4 + old / 64; i < st.roi_begin; i++)
    REQUIRE(REC(st.all, i)->addr < old_va);
  REQUIRE(st.roi_begin == 4 + old / 64 + 3 * (young / 64));
  g_array_free(st.all, TRUE);
}
END_TEST

START_TEST(multithreaded_generators_are_deterministic)
{
  static const char *const specs[] = {
    "threads:threads=6,chunk=40K,pattern=random,rw=0.3,accesses=20000",
    "jbb:threads=6,young=16K,old=512K,accesses=20000",
  };
  for (unsigned k = 0; k < G_N_ELEMENTS(specs); k++) {
    GError *err = NULL;
    g_autoptr(TraceSource) a = workload_open(specs[k], NULL, &err);
    g_autoptr(TraceSource) b = workload_open(specs[k], NULL, &err);
    g_autoptr(TraceSource) c = workload_open(specs[k], &(uint64_t){ 2 }, &err);
    ck_assert_no_error(err);
    GArray *ra = read_all(a, &err), *rb = read_all(b, &err), *rc = read_all(c, &err);
    ck_assert_no_error(err);
    assert_same_records(ra, rb);
    /* Another seed: the same records in number, other addresses. */
    REQUIRE(ra->len == rc->len);
    ck_assert_msg(memcmp(ra->data, rc->data, ra->len * sizeof(TraceRecord)) != 0, "%s: the seed changes nothing", specs[k]);
    g_array_free(ra, TRUE);
    g_array_free(rb, TRUE);
    g_array_free(rc, TRUE);
  }
}
END_TEST

START_TEST(bad_parameters)
{
  static const struct { const char *spec, *part; } cases[] = {
    { "video:width=100", "bad value '100' for width; expected a multiple of 16" },
    { "video:size=16M,refs=3", "for refs; expected refs + 1 frames" },
    { "graph:size=4K,degree=1024", "for degree" },
    { "hashjoin:size=4K,ratio=1000", "for ratio" },
    { "threads:threads=0", "bad value '0' for threads" },
    { "threads:threads=5000", "bad value '5000' for threads" },
    { "threads:align=3000", "bad value '3000' for align; expected a power of two" },
    { "threads:chunk=100", "bad value '100' for chunk; expected a multiple of 8" },
    { "threads:threads=4096,chunk=1G", "for chunk" },
    { "threads:first_touch=node", "for first_touch; expected one of own or main" },
    { "threads:pattern=stride", "for pattern" },
    { "threads:pin=2", "for pin" },
    { "threads:rw=1.5", "for rw" },
    { "threads:threads=4,chunk=1M,size=5M", "bad value '5M' for size; expected threads x chunk" },
    { "threads:threads=4,align=2M,size=6M", "for size; expected at least threads x align" },
    { "threads:threads=1,chunk=4000,align=8", "bad value '4000' for chunk; expected a chunk whose threads x" },
    { "jbb:threads=4,loader=5", "bad value '5' for loader" },
    { "jbb:threads=1,young=8,old=4080", "bad value '4080' for old; expected an old heap that makes" },
    { "jbb:young=100", "bad value '100' for young" },
    { "jbb:old=1004", "bad value '1004' for old" },
    { "jbb:threads=4,young=1M,old=64M,size=64M", "for size; expected threads x young + old" },
    { "jbb:old=64K,shared_part=0", "for shared_part" },
    { "jbb:threads=4096,old=8K,shared_part=0.5", "for old" },
    { "jbb:shared=-0.1", "for shared" },
    { "jbb:old_accesses=2", "for old_accesses" },
  };
  for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++) {
    GError *err = NULL;
    TraceSource *src = workload_open(cases[k].spec, NULL, &err);
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
  tcase_add_test(tc, thp_parameter_emits_prctl_or_madvise);
  tcase_add_test(tc, gups_updates_are_load_store_pairs_of_the_hpcc_stream);
  tcase_add_test(tc, graph_visits_every_vertex_once_per_search);
  tcase_add_test(tc, hashjoin_builds_then_probes);
  tcase_add_test(tc, video_searches_near_each_macroblock);
  tcase_add_test(tc, threads_work_on_their_own_chunks);
  tcase_add_test(tc, threads_deal_chunks_round_robin);
  tcase_add_test(tc, threads_chunks_follow_align);
  tcase_add_test(tc, threads_random_visits_every_word_of_a_chunk);
  tcase_add_test(tc, threads_main_first_touch_and_pinning);
  tcase_add_test(tc, threads_size_splits_into_chunks);
  tcase_add_test(tc, jbb_threads_and_heap);
  tcase_add_test(tc, jbb_loader_choices);
  tcase_add_test(tc, multithreaded_generators_are_deterministic);
  tcase_add_test(tc, bad_parameters);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(generators_suite)
