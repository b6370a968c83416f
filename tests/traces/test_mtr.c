/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mtr.c - the .mtr writer and reader: every record kind round trips
 * exactly, files of several blocks, starting mid-file through the index,
 * the summary kept in the index, and corruption caught with its offset.
 */
#include "config.h"
#include "trace_testutil.h"
#include "mtr.h"
#include "perm.h"

#include <fcntl.h>

/* One record of each kind and shape the encoding distinguishes. */
static GArray *every_kind(void)
{
  GArray *a = g_array_new(FALSE, TRUE, sizeof(TraceRecord));
  TraceRecord r[] = {
    { .type = REC_THREAD, .pid = 1, .tid = 1, .arg = -1 },
    { .type = REC_MMAP, .pid = 1, .tid = 1, .addr = 0x7f0000000000, .len = 64 << 20, .prot = PROT_R | PROT_W, .flags = MAP_F_HUGETLB },
    { .type = REC_ACCESS, .kind = ACC_STORE, .pid = 1, .tid = 1, .addr = 0x7f0000000000, .size = 8 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .pid = 1, .tid = 1, .addr = 0x7f0000000008, .size = 8, .gap = 12 },
    { .type = REC_ACCESS, .kind = ACC_DEP_LOAD, .pid = 1, .tid = 1, .addr = 0x7efffffff000, .size = 4096, .gap = UINT32_MAX },
    { .type = REC_ACCESS, .kind = ACC_IFETCH, .pid = 1, .tid = 1, .addr = 0x400000, .size = 1 },
    { .type = REC_ACCESS, .kind = ACC_IFETCH, .pid = 1, .tid = 1, .addr = 0x1ffffffffffffff, .size = 1 },
    { .type = REC_COMPUTE, .pid = 1, .tid = 1, .len = UINT64_MAX },
    { .type = REC_ROI_BEGIN, .pid = 1, .tid = 1 },
    { .type = REC_MUNMAP, .pid = 1, .tid = 1, .addr = 0x1000, .len = 0x1000 },
    { .type = REC_MPROTECT, .pid = 1, .tid = 1, .addr = 0x7f0000000000, .len = 2 << 20, .prot = 0 },
    { .type = REC_MADVISE, .pid = 1, .tid = 1, .addr = 0x7f0000000000, .len = 2 << 20, .arg = ADV_COLLAPSE },
    { .type = REC_PRCTL, .pid = 1, .tid = 1, .arg = PRCTL_THP_DISABLE, .arg2 = 1 },
    { .type = REC_MEMPOLICY, .pid = 1, .tid = 1, .addr = 0x7f0000000000, .len = 4096, .arg = MPOL_INTERLEAVE, .arg2 = 0xf000000000000001 },
    { .type = REC_MEMPOLICY, .pid = 1, .tid = 1, .addr = 0x7f0000000000, .len = 4096, .arg = MPOL_PREFERRED, .arg2 = 1 << 5 },
    { .type = REC_MEMPOLICY, .pid = 1, .tid = 1, .flags = MPOL_F_PROCESS, .arg = MPOL_WEIGHTED_INTERLEAVE, .arg2 = 0x6 },
    { .type = REC_THREAD, .pid = 1, .tid = 7, .arg = 3 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .pid = 1, .tid = 7, .addr = 0x7f0000000010, .size = 2 },
    /* A record of another thread without a thread record: a context change. */
    { .type = REC_ACCESS, .kind = ACC_STORE, .pid = UINT32_MAX, .tid = UINT32_MAX, .addr = 0, .size = 1 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .pid = 1, .tid = 1, .addr = 0x7f0000000010, .size = 2 },
    { .type = REC_THREAD, .pid = 2, .tid = 1, .arg = INT32_MAX },
    { .type = REC_ROI_END, .pid = 2, .tid = 1 },
    { .type = REC_MMAP, .pid = 2, .tid = 1, .addr = 0x1ffffffffff000, .len = 0x1000, .prot = 7, .flags = 15 },
  };
  g_array_append_vals(a, r, G_N_ELEMENTS(r));
  return a;
}

static void write_mtr(const char *path, GArray *recs)
{
  GError *err = NULL;
  MtrWriter *w = mtr_writer_open(path, &err);
  ck_assert_no_error(err);
  mtr_writer_set_meta(w, "recorder", "test_mtr");
  mtr_writer_set_meta(w, "unmapped", "ondemand");
  for (guint i = 0; i < recs->len; i++)
    ck_assert(mtr_writer_write(w, REC(recs, i), &err));
  ck_assert_uint_eq(mtr_writer_records(w), recs->len);
  ck_assert(mtr_writer_close(w, &err));
  ck_assert_no_error(err);
}

static GArray *read_mtr(const char *path, uint64_t first)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = mtr_source_open(path, first, &err);
  ck_assert_no_error(err);
  GArray *got = read_all(src, &err);
  ck_assert_no_error(err);
  return got;
}

START_TEST(round_trip_every_kind)
{
  g_autofree char *path = temp_path(".mtr");
  GArray *in = every_kind();
  write_mtr(path, in);
  GError *err = NULL;
  g_autoptr(TraceSource) src = mtr_source_open(path, 0, &err);
  ck_assert_no_error(err);
  ck_assert_int_eq(src->unmapped, UNMAPPED_ONDEMAND);
  ck_assert_str_eq(mtr_source_meta(src, "recorder"), "test_mtr");
  ck_assert_ptr_null(mtr_source_meta(src, "command"));
  GArray *got = read_all(src, &err);
  ck_assert_no_error(err);
  assert_same_records(in, got);
  g_array_free(in, TRUE);
  g_array_free(got, TRUE);
  g_unlink(path);
}
END_TEST

/* Enough random accesses for several blocks, from two threads. */
static GArray *many_accesses(unsigned n)
{
  GArray *a = g_array_new(FALSE, TRUE, sizeof(TraceRecord));
  uint64_t x = 88172645463325252ULL;
  for (unsigned i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    TraceRecord r = { .type = REC_ACCESS, .kind = (uint8_t)(x & 3), .pid = 1, .tid = 1 + (uint32_t)(i / 1000 % 2),
                      .addr = 0x7f0000000000 + (x >> 20) % (1ULL << 34), .size = 1 + (uint32_t)(x >> 8) % 64,
                      .gap = (uint32_t)(x >> 40) % 100 };
    g_array_append_val(a, r);
  }
  return a;
}

/* About 130,000 of these records fill a block (1 MiB raw): 300,000 make
 * three, and the starts fall in the first block, on the last record (in
 * the last block), at the end and past it. */
START_TEST(several_blocks_and_start_mid_file)
{
  g_autofree char *path = temp_path(".mtr");
  GArray *in = many_accesses(300000);
  write_mtr(path, in);
  GArray *got = read_mtr(path, 0);
  assert_same_records(in, got);
  g_array_free(got, TRUE);

  MtrInfo info;
  GError *err = NULL;
  ck_assert(mtr_read_info(path, &info, &err));
  ck_assert_no_error(err);
  ck_assert_uint_ge(info.blocks, 3);
  ck_assert_uint_eq(info.summary.records, in->len);
  ck_assert_uint_eq(info.summary.threads->len, 2);
  mtr_info_clear(&info);

  const uint64_t starts[] = { 1, 123457, 299999, 300000, 350000 };
  for (unsigned k = 0; k < G_N_ELEMENTS(starts); k++) {
    got = read_mtr(path, starts[k]);
    uint64_t want = starts[k] < in->len ? in->len - starts[k] : 0;
    ck_assert_uint_eq(got->len, want);
    for (guint i = 0; i < got->len; i++)
      loop_assert_msg(memcmp(REC(got, i), REC(in, starts[k] + i), sizeof(TraceRecord)) == 0, "start %" G_GUINT64_FORMAT
                    ": record %u differs", starts[k], i);
    g_array_free(got, TRUE);
  }
  g_array_free(in, TRUE);
  g_unlink(path);
}
END_TEST

START_TEST(summary_in_the_index)
{
  g_autofree char *path = temp_path(".mtr");
  GArray *in = every_kind();
  write_mtr(path, in);
  MtrInfo info;
  GError *err = NULL;
  ck_assert(mtr_read_info(path, &info, &err));
  const TraceSummary *s = &info.summary;
  ck_assert_uint_eq(s->records, in->len);
  ck_assert_uint_eq(s->by_type[REC_ACCESS], 8);
  ck_assert_uint_eq(s->by_kind[ACC_LOAD], 3);
  ck_assert_uint_eq(s->by_kind[ACC_STORE], 2);
  ck_assert_uint_eq(s->by_kind[ACC_IFETCH], 2);
  ck_assert_uint_eq(s->by_type[REC_MEMPOLICY], 3);
  ck_assert_uint_eq(s->threads->len, 4); /* (1,1) (1,7) (max,max) (2,1) */
  /* 5 distinct 4K pages: 0x7f0000000000 (also that of thread 7, same
   * process), 0x7efffffff000, 0x400000, the top page, page 0 of pid max. */
  ck_assert_uint_eq(s->pages_4k, 5);
  g_assert_cmpuint(info.meta->len, ==, 2);
  ck_assert_str_eq(g_ptr_array_index(info.meta, 0), "recorder test_mtr");
  mtr_info_clear(&info);
  g_array_free(in, TRUE);
  g_unlink(path);
}
END_TEST

/* The file as bytes, to damage. */
static GByteArray *file_bytes(const char *path)
{
  gchar *data;
  gsize len;
  ck_assert(g_file_get_contents(path, &data, &len, NULL));
  return g_byte_array_new_take((guint8 *)data, len);
}

static void expect_error(const GByteArray *bytes, const char *part)
{
  g_autofree char *path = temp_path(".mtr");
  write_file(path, bytes->data, bytes->len);
  GError *err = NULL;
  TraceSource *src = mtr_source_open(path, 0, &err);
  if (src) {
    assert_read_fails(src, part);
    trace_source_free(src);
  } else {
    ck_assert_msg(strstr(err->message, part), "message '%s' lacks '%s'", err->message, part);
    g_error_free(err);
  }
  g_unlink(path);
}

START_TEST(corruption_is_caught_with_its_offset)
{
  g_autofree char *path = temp_path(".mtr");
  GArray *in = every_kind();
  write_mtr(path, in);
  GByteArray *good = file_bytes(path);
  GByteArray *b = g_byte_array_new();
  guint meta_len = good->data[12] | good->data[13] << 8;
  guint block = 20 + meta_len;

  g_byte_array_append(g_byte_array_set_size(b, 0), good->data, good->len);
  b->data[0] = 'X';
  expect_error(b, "offset 0: wrong magic number");

  g_byte_array_append(g_byte_array_set_size(b, 0), good->data, good->len);
  b->data[8] = 9;
  expect_error(b, "offset 8: unsupported .mtr version 9");

  g_byte_array_append(g_byte_array_set_size(b, 0), good->data, good->len);
  b->data[21] ^= 0x01; /* a metadata bit */
  expect_error(b, "offset 0: header checksum mismatch");

  g_byte_array_append(g_byte_array_set_size(b, 0), good->data, good->len);
  b->data[block + 25] ^= 0x10; /* a bit of the first block's payload */
  g_autofree char *want = g_strdup_printf("offset %u: block checksum mismatch", block);
  expect_error(b, want);

  g_byte_array_append(g_byte_array_set_size(b, 0), good->data, good->len);
  memset(b->data + block + 4, 0xff, 4); /* absurd compressed length */
  g_autofree char *absurd = g_strdup_printf("offset %u: absurd block size", block + 4);
  expect_error(b, absurd);

  g_byte_array_append(g_byte_array_set_size(b, 0), good->data, block + 30);
  expect_error(b, "file ends inside a block (truncated?)");

  g_byte_array_append(g_byte_array_set_size(b, 0), good->data, good->len - 16);
  expect_error(b, "file ends inside the footer");

  g_byte_array_append(g_byte_array_set_size(b, 0), good->data, good->len);
  g_byte_array_append(b, (const guint8 *)"x", 1);
  expect_error(b, "data after the footer");

  g_byte_array_free(b, TRUE);
  g_byte_array_free(good, TRUE);
  g_array_free(in, TRUE);
  g_unlink(path);
}
END_TEST

START_TEST(records_are_checked_like_text)
{
  /* The writer encodes what it is given; the reader refuses what the text
   * format would refuse, naming the block and the record. */
  g_autofree char *path = temp_path(".mtr");
  GArray *in = g_array_new(FALSE, TRUE, sizeof(TraceRecord));
  TraceRecord ok = { .type = REC_ACCESS, .kind = ACC_LOAD, .pid = 1, .tid = 1, .addr = 0x1000, .size = 8 };
  TraceRecord far = ok;
  far.addr = 1ULL << 57;
  g_array_append_val(in, ok);
  g_array_append_val(in, far);
  write_mtr(path, in);
  GError *err = NULL;
  g_autoptr(TraceSource) src = mtr_source_open(path, 0, &err);
  assert_read_fails(src, "record 1 of the block: address beyond the 57-bit virtual address space");

  TraceRecord big = ok;
  big.size = 4097;
  g_array_index(in, TraceRecord, 1) = big;
  write_mtr(path, in);
  g_autoptr(TraceSource) src2 = mtr_source_open(path, 0, &err);
  assert_read_fails(src2, "bad access size");
  g_array_free(in, TRUE);
  g_unlink(path);
}
END_TEST

/* The reader's policy check is the table's (kernel/mempolicy_mode.h): every
 * code of the table with the nodes its mode takes comes back as written;
 * the code past the table, or a mask the mode refuses, is an error. */
START_TEST(policy_codes_are_the_tables)
{
  g_autofree char *path = temp_path(".mtr");
  GArray *in = g_array_new(FALSE, TRUE, sizeof(TraceRecord));
  TraceRecord pm = { .type = REC_MEMPOLICY, .pid = 1, .tid = 1, .addr = 0x7f0000000000, .len = 4096,
                     .arg = MPOL_PREFERRED_MANY, .arg2 = 0x6 };
  TraceRecord proc = { .type = REC_MEMPOLICY, .pid = 1, .tid = 1, .flags = MPOL_F_PROCESS,
                       .arg = MPOL_PREFERRED_MANY, .arg2 = UINT64_C(1) << 63 };
  g_array_append_val(in, pm);
  g_array_append_val(in, proc);
  /* bind=balancing, of a range and of the process: the flag comes back. */
  TraceRecord flagged[] = { pm, proc };
  for (unsigned i = 0; i < 2; i++) {
    flagged[i].arg = MPOL_BIND;
    flagged[i].flags |= MPOL_F_BALANCING;
    g_array_append_val(in, flagged[i]);
  }
  write_mtr(path, in);
  GArray *out = read_mtr(path, 0);
  assert_same_records(in, out);
  g_array_free(out, TRUE);
  g_array_set_size(in, 2);

  static const struct {
    int32_t code;
    uint64_t nodes;
  } bad[] = {
    { MPOL_PREFERRED_MANY + 1, 0x1 }, /* past the table */
    { MPOL_PREFERRED_MANY, 0 },       /* takes nodes: at least one */
    { MPOL_PREFERRED, 0x3 },          /* takes one node */
    { MPOL_DEFAULT_LOCAL, 0x1 },      /* takes none */
  };
  for (unsigned i = 0; i <= G_N_ELEMENTS(bad); i++) {
    TraceRecord r = pm;
    if (i < G_N_ELEMENTS(bad)) {
      r.arg = bad[i].code;
      r.arg2 = bad[i].nodes;
    } else { /* MPOL_F_NUMA_BALANCING with a mode that does not take it */
      r.arg = MPOL_INTERLEAVE;
      r.flags |= MPOL_F_BALANCING;
    }
    g_array_index(in, TraceRecord, 1) = r;
    write_mtr(path, in);
    GError *err = NULL;
    g_autoptr(TraceSource) src = mtr_source_open(path, 0, &err);
    ck_assert_no_error(err);
    assert_read_fails(src, "record 1 of the block: bad memory policy");
  }
  g_array_free(in, TRUE);
  g_unlink(path);
}
END_TEST

START_TEST(reads_from_a_pipe_and_memory)
{
  g_autofree char *path = temp_path(".mtr");
  GArray *in = every_kind();
  write_mtr(path, in);
  GByteArray *bytes = file_bytes(path);
  GError *err = NULL;
  g_autoptr(TraceSource) src = mtr_source_from_input(trace_input_from_memory("mem", bytes->data, bytes->len, TRUE), &err);
  ck_assert_no_error(err);
  GArray *got = read_all(src, &err);
  ck_assert_no_error(err);
  assert_same_records(in, got);
  g_array_free(got, TRUE);
  g_byte_array_free(bytes, TRUE);
  g_array_free(in, TRUE);
  g_unlink(path);
}
END_TEST

START_TEST(empty_trace)
{
  g_autofree char *path = temp_path(".mtr");
  GArray *in = g_array_new(FALSE, TRUE, sizeof(TraceRecord));
  write_mtr(path, in);
  GArray *got = read_mtr(path, 0);
  ck_assert_uint_eq(got->len, 0);
  MtrInfo info;
  ck_assert(mtr_read_info(path, &info, NULL));
  ck_assert_uint_eq(info.blocks, 0);
  mtr_info_clear(&info);
  g_array_free(got, TRUE);
  g_array_free(in, TRUE);
  g_unlink(path);
}
END_TEST

static Suite *mtr_suite(void)
{
  Suite *s = suite_create("mtr");
  TCase *tc = tcase_create("mtr");
  tcase_add_test(tc, round_trip_every_kind);
  tcase_add_test(tc, several_blocks_and_start_mid_file);
  tcase_add_test(tc, summary_in_the_index);
  tcase_add_test(tc, corruption_is_caught_with_its_offset);
  tcase_add_test(tc, records_are_checked_like_text);
  tcase_add_test(tc, policy_codes_are_the_tables);
  tcase_add_test(tc, reads_from_a_pipe_and_memory);
  tcase_add_test(tc, empty_trace);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(mtr_suite)
