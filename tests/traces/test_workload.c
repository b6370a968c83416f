/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_workload.c - the workload generators: the shape of the stream (thread,
 * mmap, setup, ROI, measured accesses), determinism by seed, the chase
 * visiting every line once per cycle, addresses inside the mapping, STREAM's
 * kernels (order, operands, placements, gaps, length), and messages for bad
 * specs.
 */
#include "config.h"
#include "testutil.h"
#include "workload.h"
#include "workload_impl.h"

#include <string.h>

#define MiB (1ULL << 20)

/* Every record of a workload, checked on the way: batches are full except
 * the last, and every record belongs to pid 1, tid 1. */
static GArray *generate(const char *spec, const uint64_t *seed, char **description)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = workload_open(spec, seed, &err);
  ck_assert_no_error(err);
  ck_assert_int_eq(src->unmapped, UNMAPPED_SEGV);
  if (description)
    *description = g_strdup(src->description);
  GArray *recs = g_array_new(FALSE, FALSE, sizeof(TraceRecord));
  TraceBatch *batch = g_new(TraceBatch, 1);
  gboolean short_batch = FALSE;
  for (;;) {
    ck_assert(trace_source_next(src, batch, &err));
    if (batch->n == 0)
      break;
    ck_assert_msg(!short_batch, "a short batch before the end");
    short_batch = batch->n < TRACE_BATCH_MAX;
    for (unsigned i = 0; i < batch->n; i++)
      if (batch->rec[i].pid != 1 || batch->rec[i].tid != 1)
        ck_abort_msg("record %u of a batch is not pid 1, tid 1", i);
    g_array_append_vals(recs, batch->rec, batch->n);
  }
  ck_assert(trace_source_next(src, batch, &err)); /* still at the end */
  ck_assert_uint_eq(batch->n, 0);
  g_free(batch);
  return recs;
}

#define REC(a, i) (&g_array_index((a), TraceRecord, (i)))

/* The common frame: thread, mmap, `setup` writes, roi begin, `accesses`
 * accesses, roi end.  Checks every record outside the measured phase. */
static void check_frame(GArray *r, uint64_t size, uint64_t setup, uint64_t setup_stride, uint64_t accesses,
                        uint32_t gap, uint8_t map_flags)
{
  ck_assert_uint_eq(r->len, 2 + setup + 1 + accesses + 1);
  ck_assert_uint_eq(REC(r, 0)->type, REC_THREAD);
  ck_assert_int_eq(REC(r, 0)->arg, -1);
  const TraceRecord *m = REC(r, 1);
  ck_assert_uint_eq(m->type, REC_MMAP);
  ck_assert_uint_eq(m->addr, WORKLOAD_BASE_VA);
  ck_assert_uint_eq(m->len, (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB));
  ck_assert_uint_eq(m->prot, PROT_R | PROT_W);
  ck_assert_uint_eq(m->flags, map_flags);
  for (uint64_t k = 0; k < setup; k++) {
    const TraceRecord *w = REC(r, 2 + k);
    if (w->type != REC_ACCESS || w->kind != ACC_STORE || w->size != 8 || w->gap != 0 ||
        w->addr != WORKLOAD_BASE_VA + k * setup_stride)
      ck_abort_msg("setup write %" G_GUINT64_FORMAT " wrong: addr 0x%" G_GINT64_MODIFIER "x", k, w->addr);
  }
  ck_assert_uint_eq(REC(r, 2 + setup)->type, REC_ROI_BEGIN);
  for (uint64_t k = 0; k < accesses; k++) {
    const TraceRecord *a = REC(r, 3 + setup + k);
    if (a->type != REC_ACCESS || a->size != 8 || a->gap != gap || a->addr % 8 || a->addr < WORKLOAD_BASE_VA ||
        a->addr + a->size > WORKLOAD_BASE_VA + size)
      ck_abort_msg("access %" G_GUINT64_FORMAT " wrong or outside the buffer: addr 0x%" G_GINT64_MODIFIER "x", k,
                   a->addr);
  }
  ck_assert_uint_eq(REC(r, r->len - 1)->type, REC_ROI_END);
  /* ROI marks exactly once. */
  unsigned begins = 0, ends = 0;
  for (unsigned i = 0; i < r->len; i++) {
    begins += REC(r, i)->type == REC_ROI_BEGIN;
    ends += REC(r, i)->type == REC_ROI_END;
  }
  ck_assert_uint_eq(begins, 1);
  ck_assert_uint_eq(ends, 1);
}

/* The measured accesses only. */
static const TraceRecord *measured(GArray *r, uint64_t accesses)
{
  return REC(r, r->len - 1 - accesses);
}

static gboolean same_stream(GArray *a, GArray *b)
{
  return a->len == b->len && memcmp(a->data, b->data, a->len * sizeof(TraceRecord)) == 0;
}

/* ---- ptrchase ------------------------------------------------------------- */

START_TEST(ptrchase_frame_and_counts)
{
  g_autofree char *desc = NULL;
  GArray *r = generate("ptrchase:size=64K,accesses=5000,gap=7", NULL, &desc);
  /* 64K / 64 = 1024 elements, each written once in setup. */
  check_frame(r, 64 * 1024, 1024, 64, 5000, 7, 0);
  const TraceRecord *a = measured(r, 5000);
  for (unsigned k = 0; k < 5000; k++)
    if (a[k].kind != ACC_DEP_LOAD || a[k].addr % 64)
      ck_abort_msg("chase load %u is not a line-aligned D", k);
  ck_assert_str_eq(desc, "ptrchase:size=64K,accesses=5000,seed=1,gap=7,backing=anon,line=64,order=random");
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(ptrchase_visits_every_line_once_per_cycle)
{
  /* 256 elements of 256 bytes, three and a half cycles. */
  const unsigned n = 256, cycles = 3;
  const uint64_t accesses = n * cycles + n / 2;
  g_autofree char *spec = g_strdup_printf("ptrchase:size=64K,line=256,accesses=%" G_GUINT64_FORMAT, accesses);
  GArray *r = generate(spec, NULL, NULL);
  check_frame(r, 64 * 1024, n, 256, accesses, 0, 0);
  const TraceRecord *a = measured(r, accesses);
  for (unsigned c = 0; c < cycles; c++) {
    unsigned hits[256] = { 0 };
    for (unsigned k = 0; k < n; k++) {
      const TraceRecord *x = &a[c * n + k];
      hits[(x->addr - WORKLOAD_BASE_VA) / 256]++;
      /* Every cycle follows the same order. */
      if (x->addr != a[k].addr)
        ck_abort_msg("cycle %u differs from the first at step %u", c, k);
    }
    for (unsigned e = 0; e < n; e++)
      if (hits[e] != 1)
        ck_abort_msg("cycle %u visits element %u %u times", c, e, hits[e]);
  }
  /* A random chain: consecutive loads are rarely neighbours. */
  unsigned neighbours = 0;
  for (unsigned k = 0; k + 1 < n; k++)
    neighbours += a[k + 1].addr == a[k].addr + 256;
  ck_assert_uint_lt(neighbours, 8);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(ptrchase_seq_order)
{
  GArray *r = generate("ptrchase:size=8K,line=1K,order=seq,accesses=20", NULL, NULL);
  check_frame(r, 8192, 8, 1024, 20, 0, 0);
  const TraceRecord *a = measured(r, 20);
  for (unsigned k = 0; k < 20; k++)
    ck_assert_uint_eq(a[k].addr, WORKLOAD_BASE_VA + (k % 8) * 1024);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(ptrchase_line_not_dividing_size)
{
  /* 10000 / 3072 = 3 elements; the tail of the buffer is not in the chain. */
  GArray *r = generate("ptrchase:size=10000,line=3K,accesses=6", NULL, NULL);
  check_frame(r, 10000, 3, 3072, 6, 0, 0);
  const TraceRecord *a = measured(r, 6);
  uint64_t seen = 0;
  for (unsigned k = 0; k < 3; k++)
    seen |= 1ULL << ((a[k].addr - WORKLOAD_BASE_VA) / 3072);
  ck_assert_uint_eq(seen, 7);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(ptrchase_defaults)
{
  /* Streamed and counted, not stored: 2M records. */
  GError *err = NULL;
  g_autoptr(TraceSource) src = workload_open("ptrchase", NULL, &err);
  ck_assert_no_error(err);
  ck_assert_str_eq(src->description,
                   "ptrchase:size=64M,accesses=1000000,seed=1,gap=0,backing=anon,line=64,order=random");
  TraceBatch *batch = g_new(TraceBatch, 1);
  uint64_t by_type[N_REC_TYPES] = { 0 }, stores = 0, dep_loads = 0;
  while (trace_source_next(src, batch, &err) && batch->n)
    for (unsigned i = 0; i < batch->n; i++) {
      by_type[batch->rec[i].type]++;
      stores += batch->rec[i].type == REC_ACCESS && batch->rec[i].kind == ACC_STORE;
      dep_loads += batch->rec[i].type == REC_ACCESS && batch->rec[i].kind == ACC_DEP_LOAD;
    }
  ck_assert_no_error(err);
  /* 64M of 64-byte lines written once, then 1M chase loads. */
  ck_assert_uint_eq(stores, 1 << 20);
  ck_assert_uint_eq(dep_loads, 1000000);
  ck_assert_uint_eq(by_type[REC_ACCESS], (1 << 20) + 1000000);
  ck_assert_uint_eq(by_type[REC_THREAD], 1);
  ck_assert_uint_eq(by_type[REC_MMAP], 1);
  ck_assert_uint_eq(by_type[REC_ROI_BEGIN], 1);
  ck_assert_uint_eq(by_type[REC_ROI_END], 1);
  g_free(batch);
}
END_TEST

/* ---- seeds ------------------------------------------------------------- */

START_TEST(same_seed_same_stream)
{
  const char *specs[] = { "ptrchase:size=1M,accesses=20000", "random:size=1M,accesses=20000,rw=0.3",
                          "seq:size=1M,accesses=20000,stride=192" };
  for (unsigned k = 0; k < G_N_ELEMENTS(specs); k++) {
    GArray *a = generate(specs[k], NULL, NULL);
    GArray *b = generate(specs[k], NULL, NULL);
    ck_assert_msg(same_stream(a, b), "%s: two runs differ", specs[k]);
    g_array_free(a, TRUE);
    g_array_free(b, TRUE);
  }
}
END_TEST

START_TEST(different_seed_different_stream)
{
  const char *specs[] = { "ptrchase:size=1M,accesses=20000", "random:size=1M,accesses=20000" };
  for (unsigned k = 0; k < G_N_ELEMENTS(specs); k++) {
    GArray *a = generate(specs[k], &(uint64_t){ 1 }, NULL);
    GArray *b = generate(specs[k], &(uint64_t){ 2 }, NULL);
    ck_assert_uint_eq(a->len, b->len);
    const TraceRecord *x = measured(a, 20000), *y = measured(b, 20000);
    unsigned same = 0;
    for (unsigned i = 0; i < 20000; i++)
      same += x[i].addr == y[i].addr;
    ck_assert_msg(same < 200, "%s: seeds 1 and 2 share %u of 20000 addresses", specs[k], same);
    g_array_free(a, TRUE);
    g_array_free(b, TRUE);
  }
}
END_TEST

START_TEST(seed_argument_overrides_spec)
{
  g_autofree char *d1 = NULL, *d2 = NULL, *d3 = NULL;
  GArray *a = generate("random:size=64K,accesses=1000,seed=5", NULL, &d1);
  GArray *b = generate("random:size=64K,accesses=1000,seed=9", &(uint64_t){ 5 }, &d2);
  GArray *c = generate("random:size=64K,accesses=1000,seed=9", NULL, &d3);
  ck_assert(same_stream(a, b));
  ck_assert(!same_stream(a, c));
  ck_assert_str_eq(d1, d2);
  ck_assert_ptr_nonnull(strstr(d2, ",seed=5,"));
  ck_assert_ptr_nonnull(strstr(d3, ",seed=9,"));
  g_array_free(a, TRUE);
  g_array_free(b, TRUE);
  g_array_free(c, TRUE);
}
END_TEST

/* 0 is a seed like any other: given, it replaces the spec's (run --seed 0). */
START_TEST(seed_argument_zero_overrides_spec)
{
  g_autofree char *d0 = NULL, *d5 = NULL, *dz = NULL;
  GArray *zero = generate("random:size=64K,accesses=1000,seed=0", NULL, &d0);
  GArray *five = generate("random:size=64K,accesses=1000,seed=5", NULL, &d5);
  GArray *over = generate("random:size=64K,accesses=1000,seed=5", &(uint64_t){ 0 }, &dz);
  ck_assert(same_stream(zero, over));
  ck_assert(!same_stream(five, over));
  ck_assert_str_eq(d0, dz);
  ck_assert_ptr_nonnull(strstr(dz, ",seed=0,"));
  g_array_free(zero, TRUE);
  g_array_free(five, TRUE);
  g_array_free(over, TRUE);
}
END_TEST

/* ---- random and seq ------------------------------------------------------ */

START_TEST(random_frame_and_spread)
{
  /* 64K = 16 pages; 64000 accesses put about 4000 in each. */
  GArray *r = generate("random:size=64K,accesses=64000,backing=hugetlb,gap=2", NULL, NULL);
  check_frame(r, 64 * 1024, 1024, 64, 64000, 2, MAP_F_HUGETLB);
  const TraceRecord *a = measured(r, 64000);
  unsigned pages[16] = { 0 }, stores = 0;
  for (unsigned k = 0; k < 64000; k++) {
    pages[(a[k].addr - WORKLOAD_BASE_VA) / 4096]++;
    stores += a[k].kind == ACC_STORE;
  }
  for (unsigned p = 0; p < 16; p++)
    ck_assert_msg(pages[p] > 3600 && pages[p] < 4400, "page %u got %u of 64000 accesses", p, pages[p]);
  ck_assert_uint_eq(stores, 0); /* rw=0 by default */
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(random_rw_fraction_keeps_addresses)
{
  GArray *loads = generate("random:size=1M,accesses=1000", NULL, NULL);
  GArray *mixed = generate("random:size=1M,accesses=1000,rw=0.25", NULL, NULL);
  GArray *all = generate("random:size=1M,accesses=1000,rw=1", NULL, NULL);
  const TraceRecord *l = measured(loads, 1000), *m = measured(mixed, 1000), *s = measured(all, 1000);
  unsigned stores = 0;
  for (unsigned k = 0; k < 1000; k++) {
    ck_assert_uint_eq(l[k].addr, m[k].addr);
    ck_assert_uint_eq(l[k].addr, s[k].addr);
    ck_assert_uint_eq(s[k].kind, ACC_STORE);
    ck_assert_uint_eq(l[k].kind, ACC_LOAD);
    /* Evenly spread: every fourth access, starting with the fourth. */
    ck_assert_uint_eq(m[k].kind, k % 4 == 3 ? ACC_STORE : ACC_LOAD);
    stores += m[k].kind == ACC_STORE;
  }
  ck_assert_uint_eq(stores, 250);
  g_array_free(loads, TRUE);
  g_array_free(mixed, TRUE);
  g_array_free(all, TRUE);
}
END_TEST

START_TEST(seq_wraps_with_stride)
{
  /* (4096 - 8) / 128 + 1 = 32 positions a pass; 100 accesses wrap 3 times. */
  g_autofree char *desc = NULL;
  GArray *r = generate("seq:size=4K,stride=128,accesses=100,rw=0.5", NULL, &desc);
  check_frame(r, 4096, 64, 64, 100, 0, 0);
  const TraceRecord *a = measured(r, 100);
  for (unsigned k = 0; k < 100; k++) {
    ck_assert_uint_eq(a[k].addr, WORKLOAD_BASE_VA + (k % 32) * 128);
    ck_assert_uint_eq(a[k].kind, k % 2 ? ACC_STORE : ACC_LOAD);
  }
  ck_assert_str_eq(desc, "seq:size=4K,accesses=100,seed=1,gap=0,backing=anon,stride=128,rw=0.5");
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(seq_size_not_multiple_of_stride)
{
  /* size 5000, stride 1000: words at 0, 1000, ..., 4000 fit (4000 + 8 <= 5000). */
  GArray *r = generate("seq:size=5000,stride=1000,accesses=7", NULL, NULL);
  /* setup: (5000 - 8) / 64 + 1 = 79 lines. */
  check_frame(r, 5000, 79, 64, 7, 0, 0);
  const TraceRecord *a = measured(r, 7);
  const uint64_t expect[] = { 0, 1000, 2000, 3000, 4000, 0, 1000 };
  for (unsigned k = 0; k < 7; k++)
    ck_assert_uint_eq(a[k].addr - WORKLOAD_BASE_VA, expect[k]);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(large_sizes_cost_nothing)
{
  /* 1T of memory, a few accesses: the source must not touch host memory in
   * proportion to size, and the mapping must end at 128T. */
  GError *err = NULL;
  g_autoptr(TraceSource) src = workload_open("ptrchase:size=1T,accesses=10", NULL, &err);
  ck_assert_no_error(err);
  TraceBatch *batch = g_new(TraceBatch, 1);
  ck_assert(trace_source_next(src, batch, &err));
  ck_assert_uint_eq(batch->n, TRACE_BATCH_MAX);
  ck_assert_uint_eq(batch->rec[1].len, 1ULL << 40);
  ck_assert_uint_eq(batch->rec[1].addr + batch->rec[1].len, 0x800000000000ULL);
  g_free(batch);
}
END_TEST

START_TEST(zero_accesses)
{
  GArray *r = generate("seq:size=4K,accesses=0", NULL, NULL);
  check_frame(r, 4096, 64, 64, 0, 0, 0);
  g_array_free(r, TRUE);
}
END_TEST

/* ---- stream --------------------------------------------------------------- */

#define STREAM_STATIC_VA 0x600000ULL
#define STREAM_STACK_TOP 0x7fffffe00000ULL

/* What stream.c does to element j in kernel k, operand op: the array
 * (0 a, 1 b, 2 c), load or store, and the instructions before it beyond
 * the common gap (loop before the first load, flops before the store). */
typedef struct {
  unsigned n;
  unsigned array[3];
  AccessKind kind[3];
  uint32_t extra[3]; /* in units: L = loop_insns, or a flop count */
  gboolean loop[3];
} KernelShape;

static const KernelShape stream_shape[4] = {
  { 2, { 0, 2 }, { ACC_LOAD, ACC_STORE }, { 0, 0 }, { TRUE, FALSE } },                   /* copy: c = a */
  { 2, { 2, 1 }, { ACC_LOAD, ACC_STORE }, { 0, 1 }, { TRUE, FALSE } },                   /* scale: b = s c */
  { 3, { 0, 1, 2 }, { ACC_LOAD, ACC_LOAD, ACC_STORE }, { 0, 0, 1 }, { TRUE, FALSE, FALSE } }, /* add: c = a + b */
  { 3, { 1, 2, 0 }, { ACC_LOAD, ACC_LOAD, ACC_STORE }, { 0, 0, 2 }, { TRUE, FALSE, FALSE } }, /* triad: a = b + s c */
};

/* The whole stream of `spec`: thread, one mmap at va of len with flags,
 * setup stores interleaving a, b, c line by line, roi begin, `measured`
 * accesses following the four kernels in order, roi end. */
static void check_stream(const char *spec, uint64_t va, uint64_t len, uint8_t flags, uint64_t elements, uint64_t measured,
                         uint32_t gap, uint32_t loop)
{
  GArray *r = generate(spec, NULL, NULL);
  uint64_t array_bytes = elements * 8, lines = (array_bytes - 8) / 64 + 1;
  ck_assert_uint_eq(r->len, 2 + 3 * lines + 1 + measured + 1);
  ck_assert_uint_eq(REC(r, 0)->type, REC_THREAD);
  const TraceRecord *m = REC(r, 1);
  ck_assert_uint_eq(m->type, REC_MMAP);
  ck_assert_uint_eq(m->addr, va);
  ck_assert_uint_eq(m->len, len);
  ck_assert_uint_eq(m->flags, flags);
  ck_assert_uint_eq(m->prot, PROT_R | PROT_W);
  ck_assert_uint_eq(m->addr % (2 * MiB), 0);
  for (uint64_t k = 0; k < 3 * lines; k++) {
    const TraceRecord *w = REC(r, 2 + k);
    if (w->type != REC_ACCESS || w->kind != ACC_STORE || w->gap != 0 ||
        w->addr != va + (k % 3) * array_bytes + (k / 3) * 64)
      ck_abort_msg("setup store %" G_GUINT64_FORMAT " wrong: 0x%" G_GINT64_MODIFIER "x", k, w->addr);
  }
  ck_assert_uint_eq(REC(r, 2 + 3 * lines)->type, REC_ROI_BEGIN);
  const TraceRecord *a = REC(r, 3 + 3 * lines);
  uint64_t i = 0;
  for (unsigned kernel = 0; i < measured; kernel = (kernel + 1) % 4)
    for (uint64_t j = 0; j < elements && i < measured; j++)
      for (unsigned op = 0; op < stream_shape[kernel].n && i < measured; op++, i++) {
        const KernelShape *k = &stream_shape[kernel];
        uint32_t want_gap = gap + (k->loop[op] ? loop : k->extra[op]);
        uint64_t want = va + k->array[op] * array_bytes + j * 8;
        if (a[i].type != REC_ACCESS || a[i].kind != k->kind[op] || a[i].size != 8 || a[i].addr != want ||
            a[i].gap != want_gap)
          ck_abort_msg("access %" G_GUINT64_FORMAT " (kernel %u, element %" G_GUINT64_FORMAT ", operand %u): kind %u "
                       "addr 0x%" G_GINT64_MODIFIER "x gap %u, expected kind %u addr 0x%" G_GINT64_MODIFIER "x gap %u",
                       i, kernel, j, op, a[i].kind, a[i].addr, a[i].gap, k->kind[op], want, want_gap);
        if (a[i].addr < va || a[i].addr + 8 > va + 3 * array_bytes || va + 3 * array_bytes > va + len)
          ck_abort_msg("access %" G_GUINT64_FORMAT " outside the arrays", i);
      }
  ck_assert_uint_eq(REC(r, r->len - 1)->type, REC_ROI_END);
  g_array_free(r, TRUE);
}

/* 4K arrays: 512 elements, 64 lines each; two iterations of the four
 * kernels are 2 x 10 x 512 accesses; static placement by default. */
START_TEST(stream_frame_and_kernel_order)
{
  check_stream("stream:size=4K,ntimes=2", STREAM_STATIC_VA, 2 * MiB, 0, 512, 10240, 0, 3);
  g_autofree char *desc = NULL;
  GArray *r = generate("stream:size=4K,ntimes=2", NULL, &desc);
  ck_assert_str_eq(desc, "stream:size=4K,accesses=10240,seed=1,gap=0,backing=anon,ntimes=2,placement=static,loop_insns=3");
  /* Per iteration: copy 512 loads + 512 stores, scale the same, add and
   * triad 1024 loads + 512 stores each. */
  const TraceRecord *a = measured(r, 10240);
  uint64_t loads = 0, stores = 0;
  for (unsigned k = 0; k < 10240; k++) {
    loads += a[k].kind == ACC_LOAD;
    stores += a[k].kind == ACC_STORE;
  }
  ck_assert_uint_eq(loads, 2 * 3072);
  ck_assert_uint_eq(stores, 2 * 2048);
  unsigned copy_end = 2 * 512, scale_end = copy_end + 2 * 512, add_end = scale_end + 3 * 512;
  ck_assert_uint_eq(a[copy_end - 1].addr, STREAM_STATIC_VA + 2 * 4096 + 511 * 8); /* c[511] */
  ck_assert_uint_eq(a[scale_end - 1].addr, STREAM_STATIC_VA + 4096 + 511 * 8);    /* b[511] */
  ck_assert_uint_eq(a[add_end - 1].addr, STREAM_STATIC_VA + 2 * 4096 + 511 * 8);  /* c[511] */
  ck_assert_uint_eq(a[10240 / 2 - 1].addr, STREAM_STATIC_VA + 511 * 8);           /* triad: a[511] */
  g_array_free(r, TRUE);
}
END_TEST

/* heap at the workload base; stack ending at the stack top, flagged stack;
 * backing=hugetlb adds the hugetlb flag to either.  3 x 1M = 3M of arrays
 * take two 2M pages.  The placement shows in the mapping and in every
 * address of the setup stores (all three arrays); of the 1310720 measured
 * accesses of an iteration, the first 12000 (the start of copy) show that
 * the measured phase uses the same arrays; the order of the kernels is
 * checked on the smaller arrays above and below. */
START_TEST(stream_placements_and_backing)
{
  check_stream("stream:size=1M,accesses=12000,placement=heap", WORKLOAD_BASE_VA, 4 * MiB, 0, 131072, 12000, 0, 3);
  check_stream("stream:size=1M,accesses=12000,placement=stack", STREAM_STACK_TOP - 4 * MiB, 4 * MiB, MAP_F_STACK,
               131072, 12000, 0, 3);
  check_stream("stream:size=1M,accesses=12000,placement=stack,backing=hugetlb", STREAM_STACK_TOP - 4 * MiB, 4 * MiB,
               MAP_F_STACK | MAP_F_HUGETLB, 131072, 12000, 0, 3);
  check_stream("stream:size=1M,accesses=12000,placement=static,backing=hugetlb", STREAM_STATIC_VA, 4 * MiB,
               MAP_F_HUGETLB, 131072, 12000, 0, 3);
}
END_TEST

/* The common gap goes on every access, loop_insns on each element's first
 * load and the flops on its store. */
START_TEST(stream_gaps)
{
  check_stream("stream:size=8K,ntimes=1,gap=5,loop_insns=2", STREAM_STATIC_VA, 2 * MiB, 0, 1024, 10240, 5, 2);
  check_stream("stream:size=8K,ntimes=1,loop_insns=0", STREAM_STATIC_VA, 2 * MiB, 0, 1024, 10240, 0, 0);
}
END_TEST

/* accesses given: the measured phase stops there (here inside scale), or at
 * the end of ntimes iterations if that comes first.  A size that is not a
 * multiple of 8 drops the last bytes. */
START_TEST(stream_accesses_caps_the_run)
{
  check_stream("stream:size=4K,accesses=1500", STREAM_STATIC_VA, 2 * MiB, 0, 512, 1500, 0, 3);
  check_stream("stream:size=4K,ntimes=3,accesses=1G", STREAM_STATIC_VA, 2 * MiB, 0, 512, 15360, 0, 3);
  check_stream("stream:size=4100,ntimes=1", STREAM_STATIC_VA, 2 * MiB, 0, 512, 5120, 0, 3);
  GError *err = NULL;
  g_autoptr(TraceSource) src = workload_open("stream", &(uint64_t){ 7 }, &err);
  ck_assert_no_error(err);
  /* 64M arrays: 8M elements x 10 accesses x 10 iterations. */
  ck_assert_str_eq(src->description,
                   "stream:size=64M,accesses=838860800,seed=7,gap=0,backing=anon,ntimes=10,placement=static,loop_insns=3");
  g_autoptr(TraceSource) big = workload_open("stream:size=1T,ntimes=4294967295", NULL, &err);
  ck_assert_no_error(err);
  ck_assert_ptr_nonnull(strstr(big->description, "accesses=18446744073709551615,"));
}
END_TEST

START_TEST(stream_ignores_the_seed)
{
  GArray *a = generate("stream:size=4K,ntimes=1", &(uint64_t){ 1 }, NULL);
  GArray *b = generate("stream:size=4K,ntimes=1", &(uint64_t){ 2 }, NULL);
  ck_assert(same_stream(a, b));
  g_array_free(a, TRUE);
  g_array_free(b, TRUE);
}
END_TEST

/* ---- bad specs ----------------------------------------------------------- */

typedef struct {
  const char *spec;
  const char *fragments[3];
} BadSpec;

static const BadSpec bad_specs[] = {
  { "pointerchase:size=1M", { "unknown workload 'pointerchase'", "ptrchase, random, seq" } },
  { "", { "unknown workload ''", "ptrchase" } },
  { "ptrchase:sise=1M", { "unknown parameter 'sise'", "size, accesses, seed, gap, backing, thp, line, order" } },
  { "random:line=64", { "workload random", "unknown parameter 'line'", "rw" } },
  { "ptrchase:size=lots", { "'lots' for size", "K/M/G", "4K to 1T" } },
  { "ptrchase:size=0", { "'0' for size", "4K to 1T" } },
  { "ptrchase:size=2T", { "'2T' for size", "4K to 1T" } },
  { "ptrchase:accesses=-5", { "'-5' for accesses", "count" } },
  { "ptrchase:gap=5G", { "'5G' for gap", "4294967295" } },
  { "ptrchase:line=12", { "'12' for line", "multiple of 8" } },
  { "ptrchase:size=4K,line=8K", { "'8K' for line", "at most size" } },
  { "ptrchase:order=sorted", { "'sorted' for order", "random or seq" } },
  { "seq:backing=thp", { "'thp' for backing", "anon or hugetlb" } },
  { "seq:stride=4", { "'4' for stride", "8" } },
  { "random:rw=1.5", { "'1.5' for rw", "fraction from 0 to 1" } },
  { "random:rw=half", { "'half' for rw", "fraction" } },
  { "random:size", { "'size' has no value", "size=VALUE" } },
  { "random:seed=1,seed=2", { "'seed' given twice" } },
  { "stream:placement=bss", { "'bss' for placement", "heap or stack or static" } },
  { "stream:size=400G,placement=heap", { "'400G' for size", "341G", "placement=heap" } },
  { "stream:ntimes=0", { "'0' for ntimes", "from 1 to 4294967295" } },
  { "stream:gap=4000000000,loop_insns=300000000", { "'300000000' for loop_insns", "4294967295" } },
};

START_TEST(bad_spec_messages)
{
  const BadSpec *b = &bad_specs[_i];
  GError *err = NULL;
  TraceSource *src = workload_open(b->spec, NULL, &err);
  ck_assert_msg(src == NULL, "'%s' accepted", b->spec);
  ck_assert(g_error_matches(err, MMUSIM_TRACE_ERROR, TRACE_ERROR_WORKLOAD));
  for (unsigned k = 0; k < G_N_ELEMENTS(b->fragments) && b->fragments[k]; k++)
    ck_assert_msg(strstr(err->message, b->fragments[k]), "message \"%s\" lacks \"%s\"", err->message,
                  b->fragments[k]);
  ck_assert_ptr_nonnull(strstr(err->message, "expected"));
  g_error_free(err);
}
END_TEST

START_TEST(list_names_everything)
{
  GString *out = g_string_new(NULL);
  workload_list(out);
  const char *want[] = { "ptrchase", "random", "seq", "stream", "size=64M", "accesses=1M", "seed=1", "gap=0",
                         "backing=anon", "line=64", "order=random", "rw=0", "stride=64", "ntimes=10",
                         "placement=static", "loop_insns=3", "hugetlb.nr_hugepages",
                         "threads", "first_touch=own", "jbb", "loader=1" };
  for (unsigned k = 0; k < G_N_ELEMENTS(want); k++)
    ck_assert_msg(strstr(out->str, want[k]), "list lacks %s", want[k]);
  g_string_free(out, TRUE);
}
END_TEST

/* A generator's access_batch against its access, record by record, from
 * twin states made by init: batches of several lengths (one record, a
 * prime, a whole TRACE_BATCH_MAX), across the wrap of a short seq pass,
 * with and without stores. */
static void check_batch_hook(const WorkloadGenerator *gen, uint64_t stride, double rw)
{
  WorkloadConfig cfg = { 0 };
  cfg.gen = gen;
  cfg.size_bytes = 4096;
  cfg.seed = 11;
  cfg.gap = 3;
  if (stride) { /* seq: stride, rw */
    cfg.own[0].u = stride;
    cfg.own[1].frac = rw;
  } else {
    cfg.own[0].frac = rw;
  }
  GError *err = NULL;
  gpointer one = gen->init(&cfg, &err), many = gen->init(&cfg, &err);
  ck_assert_no_error(err);
  ck_assert_ptr_nonnull(gen->access_batch);
  const TraceRecord proto = { .type = REC_ACCESS, .kind = ACC_LOAD, .size = 8, .pid = 1, .tid = 1, .gap = 3 };
  static const unsigned lengths[] = { 1, 7, TRACE_BATCH_MAX, 0, 173 };
  TraceRecord *got = g_new(TraceRecord, TRACE_BATCH_MAX);
  unsigned stores = 0;
  for (unsigned b = 0; b < G_N_ELEMENTS(lengths); b++) {
    gen->access_batch(many, &proto, got, lengths[b]);
    for (unsigned k = 0; k < lengths[b]; k++) {
      TraceRecord want = proto;
      gen->access(one, &want);
      ck_assert_int_eq(memcmp(&want, &got[k], sizeof want), 0);
      stores += want.kind == ACC_STORE;
    }
  }
  ck_assert_int_eq(stores > 0, rw > 0);
  g_free(got);
  gen->free(one);
  gen->free(many);
}

START_TEST(batch_hook_matches_access)
{
  check_batch_hook(&gen_seq, 24, 0); /* 171 positions: the pass wraps */
  check_batch_hook(&gen_seq, 64, 0.3);
  check_batch_hook(&gen_random, 0, 0);
  check_batch_hook(&gen_random, 0, 0.3);
}
END_TEST

/* The batches a generator's source says are one thread's
 * (TraceBatch.threads, from WorkloadGenerator.several_threads) are, by the
 * scan the engine would otherwise make; and the generators of several
 * threads say nothing, since their batches hold other threads. */
static void check_threads_mark(const WorkloadGenerator *gen, const char *spec)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = workload_open(spec, &(uint64_t){ 5 }, &err);
  ck_assert_no_error(err);
  TraceBatch *batch = g_new(TraceBatch, 1), *scan = g_new(TraceBatch, 1);
  unsigned marked = 0, batches = 0;
  while (trace_source_next(src, batch, &err) && batch->n) {
    batches++;
    *scan = *batch;
    scan->threads = BATCH_THREADS_UNKNOWN;
    uint32_t pid, tid;
    gboolean one = trace_batch_one_thread(scan, &pid, &tid);
    if (batch->threads == BATCH_THREADS_ONE) {
      marked++;
      ck_assert_msg(one && (pid == 0 || pid == batch->thread_pid) && (tid == 0 || tid == batch->thread_tid),
                    "%s: batch %u marked one thread's is not", gen->name, batches);
    } else {
      ck_assert_int_eq(batch->threads, BATCH_THREADS_UNKNOWN);
    }
  }
  ck_assert_no_error(err);
  ck_assert_msg(gen->several_threads ? marked == 0 : marked == batches - 1, "%s: %u of %u batches marked", gen->name,
                marked, batches);
  g_free(batch);
  g_free(scan);
}

START_TEST(one_thread_batches_are_marked)
{
  static const struct {
    const WorkloadGenerator *gen;
    const char *spec;
  } cases[] = {
    { &gen_ptrchase, "ptrchase:size=2M,accesses=40K" }, { &gen_random, "random:size=2M,accesses=40K" },
    { &gen_seq, "seq:size=2M,accesses=40K" },           { &gen_stream, "stream:size=1M,ntimes=2" },
    { &gen_video, "video:width=64,height=64,accesses=40K" },
    { &gen_gups, "gups:size=2M,accesses=40K" },
    { &gen_hashjoin, "hashjoin:size=2M,accesses=40K" },
    { &gen_graph, "graph:size=2M,accesses=40K" },
    { &gen_threads, "threads:threads=4,chunk=64K,accesses=40K" },
    { &gen_jbb, "jbb:threads=4,old=1M,accesses=40K" },
  };
  for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++)
    check_threads_mark(cases[k].gen, cases[k].spec);
  /* Every generator is a case: one added later must say whether it starts
   * threads (several_threads) and be checked here. */
  unsigned n;
  const WorkloadGenerator *const *all = workload_generators(&n);
  for (unsigned g = 0; g < n; g++) {
    gboolean found = FALSE;
    for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++)
      found |= cases[k].gen == all[g];
    ck_assert_msg(found, "generator %s has no case here", all[g]->name);
  }
}
END_TEST

static Suite *workload_suite(void)
{
  Suite *s = suite_create("workload");
  TCase *tc = tcase_create("ptrchase");
  tcase_add_test(tc, ptrchase_frame_and_counts);
  tcase_add_test(tc, ptrchase_visits_every_line_once_per_cycle);
  tcase_add_test(tc, ptrchase_seq_order);
  tcase_add_test(tc, ptrchase_line_not_dividing_size);
  tcase_add_test(tc, ptrchase_defaults);
  suite_add_tcase(s, tc);
  tc = tcase_create("seeds");
  tcase_add_test(tc, same_seed_same_stream);
  tcase_add_test(tc, different_seed_different_stream);
  tcase_add_test(tc, seed_argument_overrides_spec);
  tcase_add_test(tc, seed_argument_zero_overrides_spec);
  suite_add_tcase(s, tc);
  tc = tcase_create("random_seq");
  tcase_add_test(tc, random_frame_and_spread);
  tcase_add_test(tc, random_rw_fraction_keeps_addresses);
  tcase_add_test(tc, seq_wraps_with_stride);
  tcase_add_test(tc, seq_size_not_multiple_of_stride);
  tcase_add_test(tc, large_sizes_cost_nothing);
  tcase_add_test(tc, zero_accesses);
  tcase_add_test(tc, batch_hook_matches_access);
  tcase_add_test(tc, one_thread_batches_are_marked);
  suite_add_tcase(s, tc);
  tc = tcase_create("stream");
  tcase_add_test(tc, stream_frame_and_kernel_order);
  tcase_add_test(tc, stream_placements_and_backing);
  tcase_add_test(tc, stream_gaps);
  tcase_add_test(tc, stream_accesses_caps_the_run);
  tcase_add_test(tc, stream_ignores_the_seed);
  suite_add_tcase(s, tc);
  tc = tcase_create("specs");
  tcase_add_loop_test(tc, bad_spec_messages, 0, G_N_ELEMENTS(bad_specs));
  tcase_add_test(tc, list_names_everything);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(workload_suite)
