/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_readers.c - lackey and ChampSim readers, the decompressing input and
 * format detection: records made from each line or instruction, exact
 * instruction counts, on-demand mappings, noise skipped and counted, errors
 * naming the line or offset, gzip/xz/zstd inputs.
 */
#include "config.h"
#include "trace_testutil.h"
#include "champsim.h"
#include "insnwriter.h"
#include "lackey.h"
#include "mtr.h"
#include "trace_format.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

static GArray *lackey_records(const char *text, TraceSource **keep)
{
  GError *err = NULL;
  TraceSource *src = lackey_source_from_input(trace_input_from_memory("lk", text, strlen(text), TRUE));
  GArray *recs = read_all(src, &err);
  ck_assert_no_error(err);
  if (keep)
    *keep = src;
  else
    trace_source_free(src);
  return recs;
}

static uint64_t instructions_of(GArray *recs)
{
  uint64_t n = 0;
  for (guint i = 0; i < recs->len; i++) {
    const TraceRecord *r = REC(recs, i);
    if (r->type == REC_ACCESS)
      n += (uint64_t)r->gap + 1;
    else if (r->type == REC_COMPUTE)
      n += r->len;
  }
  return n;
}

static const char LACKEY_SAMPLE[] =
  "==123== Lackey, an example Valgrind tool\n"
  "==123== Command: ./a.out\n"
  "I  0401ab70,3\n"          /* new block: X, gap 0 */
  "I  0401ab73,5\n"          /* same block: no fetch */
  " S 1fff000708,8\n"        /* gap 0 (one pending instruction: this one) */
  "I  0401ab78,2\n"
  "I  0401ab7a,2\n"
  " L 0421f9e8,4\n"          /* gap 1 */
  "I  0401ab80,4\n"          /* next block: X */
  " M 0421f9e8,4\n"          /* R then W: both beyond one per instruction */
  "I  0401ab84,1\n"          /* pays one back */
  "I  0401ab85,1\n"          /* pays the other */
  "I  0401ab86,1\n"          /* pending */
  "some output of the program\n"
  "==123== Exit code: 0\n";

START_TEST(lackey_records_and_counts)
{
  TraceSource *src;
  GArray *r = lackey_records(LACKEY_SAMPLE, &src);
  ck_assert_int_eq(src->unmapped, UNMAPPED_ONDEMAND);
  ck_assert_uint_eq(lackey_source_skipped(src), 4); /* three of valgrind's, one of the program's */
  ck_assert_uint_eq(lackey_source_instructions(src), 8);
  const struct { uint8_t type, kind; uint64_t addr; uint32_t size, gap; } want[] = {
    { REC_MMAP, 0, 0x4000000, 0, 0 },
    { REC_ACCESS, ACC_IFETCH, 0x401ab70, 3, 0 },
    { REC_MMAP, 0, 0x1fff000000, 0, 0 },
    { REC_ACCESS, ACC_STORE, 0x1fff000708, 8, 0 },
    { REC_MMAP, 0, 0x4200000, 0, 0 },
    { REC_ACCESS, ACC_LOAD, 0x421f9e8, 4, 1 },
    { REC_ACCESS, ACC_IFETCH, 0x401ab80, 4, 0 },
    { REC_ACCESS, ACC_LOAD, 0x421f9e8, 4, 0 },
    { REC_ACCESS, ACC_STORE, 0x421f9e8, 4, 0 },
    { REC_COMPUTE, 0, 0, 0, 0 },
  };
  ck_assert_uint_eq(r->len, G_N_ELEMENTS(want));
  for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
    const TraceRecord *x = REC(r, i);
    ck_assert_msg(x->type == want[i].type, "record %u: type %u", i, x->type);
    if (x->type == REC_ACCESS) {
      ck_assert_uint_eq(x->kind, want[i].kind);
      ck_assert_uint_eq(x->addr, want[i].addr);
      ck_assert_uint_eq(x->size, want[i].size);
      ck_assert_uint_eq(x->gap, want[i].gap);
    } else if (x->type == REC_MMAP) {
      ck_assert_uint_eq(x->addr, want[i].addr);
      ck_assert_uint_eq(x->len, 2 << 20);
      ck_assert_uint_eq(x->prot, PROT_R | PROT_W | PROT_X);
      ck_assert_uint_eq(x->flags, MAP_F_ONDEMAND);
    }
  }
  ck_assert_uint_eq(REC(r, 9)->len, 1);
  ck_assert_uint_eq(instructions_of(r), 8); /* exact, as rule 2 says */
  g_array_free(r, TRUE);
  trace_source_free(src);
}
END_TEST

START_TEST(lackey_errors_name_the_line)
{
  static const struct { const char *text, *part; } cases[] = {
    { "I  0401ab70,3\nI  04zz,3\n", "lk:2: malformed lackey record near 'I  04zz,3'" },
    { " L 1000,0\n", "lk:1: access size out of range" },
    { " S 1000,4097\n", "lk:1: access size out of range" },
    { " L 200000000000000,8\n", "lk:1: address beyond the 57-bit virtual address space" },
    { " L 1ffffffffffffff,8\n", "lk:1: address beyond the 57-bit" },
    { " L 12345678901234567,8\n", "lk:1: malformed" },
    { "==1==\n M 10,\n", "lk:2: malformed" },
    /* Not one record: valgrind's log went elsewhere (no --log-fd=1). */
    { "hello\n==1== Memcheck\n", "lk: no lackey record in its 2 lines; valgrind writes lackey's trace to its log" },
    { "", "lk: no lackey record in its 0 lines; " },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    TraceSource *src = lackey_source_from_input(trace_input_from_memory("lk", cases[i].text, strlen(cases[i].text), TRUE));
    assert_read_fails(src, cases[i].part);
    trace_source_free(src);
  }
}
END_TEST

/* mmusim record judges an empty lackey pipe by valgrind's exit status: with
 * lackey_source_allow_empty the same input is an empty trace. */
START_TEST(lackey_allow_empty)
{
  GError *err = NULL;
  TraceSource *src = lackey_source_from_input(trace_input_from_memory("lk", "hello\n", 6, TRUE));
  lackey_source_allow_empty(src);
  GArray *recs = read_all(src, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(recs->len, 0);
  ck_assert_uint_eq(lackey_source_skipped(src), 1);
  g_array_free(recs, TRUE);
  trace_source_free(src);
}
END_TEST

START_TEST(lackey_long_gap_and_no_newline)
{
  /* 5e9 instructions in one block: the gap does not fit 32 bits. */
  GString *t = g_string_new("I  1000,4\n");
  GArray *r = lackey_records(t->str, NULL);
  ck_assert_uint_eq(instructions_of(r), 1);
  g_array_free(r, TRUE);
  g_string_free(t, TRUE);
  r = lackey_records(" L 1000,8", NULL); /* last line without newline */
  ck_assert_uint_eq(r->len, 2);
  g_array_free(r, TRUE);
}
END_TEST

/* ---- ChampSim ---------------------------------------------------------- */

/* n instructions: every third loads (two addresses every ninth), every fifth
 * stores; returns the bytes and the expected counts. */
static GByteArray *champsim_trace(unsigned n, unsigned *loads, unsigned *stores)
{
  GByteArray *b = g_byte_array_new();
  *loads = *stores = 0;
  for (unsigned i = 0; i < n; i++) {
    ChampsimInstr ins = { .ip = 0x400000 + 4ULL * (i % 300) };
    if (i % 3 == 0)
      ins.src_mem[0] = 0x7f0000000000 + 64ULL * i, ++*loads;
    if (i % 9 == 0)
      ins.src_mem[3] = 0x7f1000000000 + 8ULL * i, ++*loads;
    if (i % 5 == 0)
      ins.dst_mem[1] = 0x7f2000000000 + 4096ULL * i, ++*stores;
    uint8_t rec[CHAMPSIM_RECORD_BYTES];
    champsim_encode(&ins, rec);
    g_byte_array_append(b, rec, sizeof rec);
  }
  return b;
}

static void count_kinds(GArray *r, unsigned *loads, unsigned *stores, unsigned *fetches)
{
  *loads = *stores = *fetches = 0;
  for (guint i = 0; i < r->len; i++)
    if (REC(r, i)->type == REC_ACCESS) {
      *loads += REC(r, i)->kind == ACC_LOAD;
      *stores += REC(r, i)->kind == ACC_STORE;
      *fetches += REC(r, i)->kind == ACC_IFETCH;
    }
}

/* The loads (R and D records) a ChampSim trace of `n` instructions makes,
 * in order. */
static GArray *champsim_loads(const ChampsimInstr *ins, unsigned n)
{
  GByteArray *b = g_byte_array_new();
  for (unsigned i = 0; i < n; i++) {
    uint8_t rec[CHAMPSIM_RECORD_BYTES];
    champsim_encode(&ins[i], rec);
    g_byte_array_append(b, rec, sizeof rec);
  }
  GError *err = NULL;
  TraceSource *src = champsim_source_from_input(trace_input_from_memory("cs", b->data, b->len, TRUE));
  GArray *all = read_all(src, &err);
  ck_assert_no_error(err);
  trace_source_free(src);
  g_byte_array_free(b, TRUE);
  GArray *loads = g_array_new(FALSE, FALSE, sizeof(TraceRecord));
  for (guint i = 0; i < all->len; i++)
    if (REC(all, i)->type == REC_ACCESS && (REC(all, i)->kind == ACC_LOAD || REC(all, i)->kind == ACC_DEP_LOAD))
      g_array_append_val(loads, *REC(all, i));
  g_array_free(all, TRUE);
  return loads;
}

/* Load i of `loads` is plain (dist < 0) or depends on the load dist before
 * the previous one. */
static void check_dep(GArray *loads, guint i, int dist)
{
  ck_assert_uint_lt(i, loads->len);
  const TraceRecord *r = REC(loads, i);
  if (dist < 0) {
    ck_assert_msg(r->kind == ACC_LOAD, "load %u: kind %u, expected a plain load", i, r->kind);
  } else {
    ck_assert_msg(r->kind == ACC_DEP_LOAD, "load %u: kind %u, expected a dependent load", i, r->kind);
    ck_assert_int_eq(r->arg, dist);
  }
}

enum { RAX = 56, RBX = 57, RCX = 58, RDX = 59, SP = 6, FLAGS = 25, IP = 26 };
#define DATA(i) (0x7f0000000000ULL + 64ULL * (i))

/* The dependences of ChampSim's renaming (traces/champsim.c): through
 * registers and the instructions between, the latest producer, the stack
 * pointer's folding, no wait on the instruction pointer, none too far back. */
START_TEST(champsim_register_dependences)
{
  ChampsimInstr ins[] = {
    /* 0: mov rax, [rax]: no load before, a plain load */
    { .ip = 0x400000, .src_regs = { RAX }, .dst_regs = { RAX }, .src_mem = { DATA(0) } },
    /* add rbx, rax (no access): rbx carries load 0 */
    { .ip = 0x400004, .src_regs = { RBX, RAX }, .dst_regs = { RBX } },
    /* 1: mov rcx, [rdx]: independent */
    { .ip = 0x400008, .src_regs = { RDX }, .dst_regs = { RCX }, .src_mem = { DATA(1) } },
    /* 2: mov rdx, [rbx + 8]: on load 0 through the add, one load between */
    { .ip = 0x40000c, .src_regs = { RBX }, .dst_regs = { RDX }, .src_mem = { DATA(2) } },
    /* 3: mov rax, [rcx + rdx]: the latest of loads 1 and 2, the previous one */
    { .ip = 0x400010, .src_regs = { RCX, RDX }, .dst_regs = { RAX }, .src_mem = { DATA(3) } },
    /* mov rsp, rax (no access, reads another register): rsp carries load 3 */
    { .ip = 0x400014, .src_regs = { RAX }, .dst_regs = { SP } },
    /* 4: pop rbx: on load 3 through rsp; the pop's own change of rsp is
     * folded, so rsp still carries load 3 */
    { .ip = 0x400018, .src_regs = { SP }, .dst_regs = { RBX, SP }, .src_mem = { DATA(4) } },
    /* 5: mov rcx, [rsp + 8]: on load 3, one load between */
    { .ip = 0x40001c, .src_regs = { SP }, .dst_regs = { RCX }, .src_mem = { DATA(5) } },
    /* cmp rcx, 0 then jne: the flags carry load 5, the branch writes the
     * instruction pointer, which carries nothing */
    { .ip = 0x400020, .src_regs = { RCX }, .dst_regs = { FLAGS } },
    { .ip = 0x400024, .is_branch = 1, .branch_taken = 1, .src_regs = { IP, FLAGS }, .dst_regs = { IP } },
    /* 6: mov rdx, [rip + x]: waits for no branch */
    { .ip = 0x400028, .src_regs = { IP }, .dst_regs = { RDX }, .src_mem = { DATA(6) } },
    /* 7: a flags-reading load (cmov from memory): on load 5 */
    { .ip = 0x40002c, .src_regs = { FLAGS }, .dst_regs = { RDX }, .src_mem = { DATA(7) } },
    /* 8, 9: two loads of one instruction on rdx (load 7), the previous
     * one for both; rbx then carries the second */
    { .ip = 0x400030, .src_regs = { RDX }, .dst_regs = { RBX }, .src_mem = { DATA(8), 0, DATA(9) } },
    /* 10: on rbx: load 9, the previous */
    { .ip = 0x400034, .src_regs = { RBX }, .dst_regs = { RAX }, .src_mem = { DATA(10) } },
  };
  g_autoptr(GArray) loads = champsim_loads(ins, G_N_ELEMENTS(ins));
  ck_assert_uint_eq(loads->len, 11);
  const int want[] = { -1, -1, 1, 0, 0, 1, -1, 1, 0, 1, 0 };
  for (guint i = 0; i < G_N_ELEMENTS(want); i++)
    check_dep(loads, i, want[i]);
}
END_TEST

/* A producer further back than a CPU remembers makes a plain load; a push
 * that writes the stack pointer from another register (not folded) passes
 * that register's load on. */
START_TEST(champsim_far_producer_and_unfolded_sp)
{
  const unsigned between = TRACE_DEP_MAX_DISTANCE;
  GArray *ins = g_array_new(FALSE, TRUE, sizeof(ChampsimInstr));
  ChampsimInstr first = { .ip = 0x400000, .src_regs = { RAX }, .dst_regs = { RAX }, .src_mem = { DATA(0) } };
  g_array_append_val(ins, first);
  for (unsigned i = 0; i < between; i++) {
    ChampsimInstr other = { .ip = 0x400004, .src_regs = { RCX }, .dst_regs = { RCX }, .src_mem = { DATA(1 + i) } };
    g_array_append_val(ins, other);
  }
  /* On load 0 with TRACE_DEP_MAX_DISTANCE loads between: still named. */
  ChampsimInstr edge = { .ip = 0x400008, .src_regs = { RAX }, .dst_regs = { RBX }, .src_mem = { DATA(9000) } };
  g_array_append_val(ins, edge);
  /* One more between: too far, a plain load. */
  ChampsimInstr far = { .ip = 0x40000c, .src_regs = { RAX }, .dst_regs = { RBX }, .src_mem = { DATA(9001) } };
  g_array_append_val(ins, far);
  /* and rsp, rcx (align the stack by a register: not folded), then a load
   * through rsp waits for rcx's load, the one two before. */
  ChampsimInstr and_sp = { .ip = 0x400010, .src_regs = { SP, RCX }, .dst_regs = { SP, FLAGS } };
  g_array_append_val(ins, and_sp);
  ChampsimInstr via_sp = { .ip = 0x400014, .src_regs = { SP }, .dst_regs = { RDX }, .src_mem = { DATA(9002) } };
  g_array_append_val(ins, via_sp);
  g_autoptr(GArray) loads = champsim_loads((const ChampsimInstr *)(void *)ins->data, ins->len);
  g_array_free(ins, TRUE);
  ck_assert_uint_eq(loads->len, between + 4);
  check_dep(loads, 0, -1);
  check_dep(loads, 1, -1);
  check_dep(loads, 2, 0); /* rcx chains */
  check_dep(loads, between + 1, TRACE_DEP_MAX_DISTANCE);
  check_dep(loads, between + 2, -1);
  check_dep(loads, between + 3, 2);
}
END_TEST

static GByteArray *xz_compress(const GByteArray *in)
{
  size_t cap = lzma_stream_buffer_bound(in->len), len = 0;
  GByteArray *out = g_byte_array_sized_new((guint)cap);
  g_byte_array_set_size(out, (guint)cap);
  ck_assert_int_eq(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, in->data, in->len, out->data, &len, cap), LZMA_OK);
  g_byte_array_set_size(out, (guint)len);
  return out;
}

static GByteArray *gzip_compress(const GByteArray *in)
{
  z_stream z = { 0 };
  ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  GByteArray *out = g_byte_array_new();
  g_byte_array_set_size(out, (guint)deflateBound(&z, in->len));
  z.next_in = in->data;
  z.avail_in = in->len;
  z.next_out = out->data;
  z.avail_out = out->len;
  ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
  g_byte_array_set_size(out, (guint)z.total_out);
  deflateEnd(&z);
  return out;
}

static GByteArray *zstd_compress(const GByteArray *in)
{
  GByteArray *out = g_byte_array_new();
  g_byte_array_set_size(out, (guint)ZSTD_compressBound(in->len));
  size_t n = ZSTD_compress(out->data, out->len, in->data, in->len, 3);
  ck_assert(!ZSTD_isError(n));
  g_byte_array_set_size(out, (guint)n);
  return out;
}

START_TEST(champsim_plain_and_compressed)
{
  unsigned loads, stores, l, s, f;
  GByteArray *plain = champsim_trace(5000, &loads, &stores);
  GByteArray *packed[] = { g_byte_array_ref(plain), xz_compress(plain), gzip_compress(plain), zstd_compress(plain) };
  static const char *const suffix[] = { ".champsim", ".champsim.xz", ".champsim.gz", ".champsim.zst" };
  for (unsigned k = 0; k < G_N_ELEMENTS(packed); k++) {
    g_autofree char *path = temp_path(suffix[k]);
    write_file(path, packed[k]->data, packed[k]->len);
    GError *err = NULL;
    TraceFormat fmt;
    g_autoptr(TraceSource) src = trace_format_open(path, TRACE_FORMAT_AUTO, &fmt, &err);
    ck_assert_no_error(err);
    ck_assert_int_eq(fmt, TRACE_FORMAT_CHAMPSIM);
    ck_assert_int_eq(src->unmapped, UNMAPPED_ONDEMAND);
    GArray *r = read_all(src, &err);
    ck_assert_no_error(err);
    count_kinds(r, &l, &s, &f);
    ck_assert_uint_eq(l, loads);
    ck_assert_uint_eq(s, stores);
    /* A fetch whenever the 64-byte block changes: 19 blocks a pass of the
     * 300-instruction loop (1200 bytes), 16 passes, then 200 instructions
     * (800 bytes, 13 blocks). */
    ck_assert_uint_eq(f, 16 * 19 + 13);
    ck_assert_uint_eq(instructions_of(r), 5000);
    g_array_free(r, TRUE);
    g_byte_array_unref(packed[k]);
    g_unlink(path);
  }
  g_byte_array_unref(plain);
}
END_TEST

START_TEST(champsim_errors_name_the_offset)
{
  unsigned loads, stores;
  GByteArray *b = champsim_trace(10, &loads, &stores);
  GError *err = NULL;
  TraceSource *src = champsim_source_from_input(trace_input_from_memory("cs", b->data, b->len - 10, TRUE));
  assert_read_fails(src, "cs: offset 576 (instruction 9): file ends inside an instruction record");
  trace_source_free(src);
  ChampsimInstr far = { .ip = 0x400000, .dst_mem = { 0, 1ULL << 57 } };
  ChampsimInstr none = { .ip = 0 };
  champsim_encode(&none, b->data + 2 * CHAMPSIM_RECORD_BYTES);
  src = champsim_source_from_input(trace_input_from_memory("cs", b->data, b->len, TRUE));
  assert_read_fails(src, "cs: offset 128 (instruction 2): instruction pointer 0");
  trace_source_free(src);
  ChampsimInstr near = { .ip = 0x400000 };
  champsim_encode(&near, b->data + 2 * CHAMPSIM_RECORD_BYTES);
  champsim_encode(&far, b->data + 3 * CHAMPSIM_RECORD_BYTES);
  src = champsim_source_from_input(trace_input_from_memory("cs", b->data, b->len, TRUE));
  assert_read_fails(src, "cs: offset 192 (instruction 3): address 0x200000000000000 beyond the 57-bit");
  trace_source_free(src);
  GByteArray *xz = xz_compress(b);
  xz->data[xz->len / 2] ^= 0x55;
  src = champsim_source_from_input(trace_input_from_memory("cs.xz", xz->data, xz->len, TRUE));
  assert_read_fails(src, "cs.xz: corrupt xz data at compressed byte offset");
  trace_source_free(src);
  g_byte_array_set_size(xz, 0);
  g_byte_array_unref(xz);
  (void)err;
  g_byte_array_unref(b);
}
END_TEST

/* ---- writers: records to lackey and ChampSim, read back ----------------- */

/* Write `recs` in `format` and read the output back with its reader. */
static GArray *write_and_read(GArray *recs, InsnWriterFormat format, uint64_t *dropped)
{
  InsnWriter w;
  insn_writer_init(&w, format);
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < recs->len; i++)
    insn_writer_write(&w, REC(recs, i), out);
  insn_writer_finish(&w, out);
  if (dropped)
    *dropped = insn_writer_dropped(&w) + insn_writer_dropped_zero(&w);
  TraceInput *in = trace_input_from_memory("w", out->str, out->len, TRUE);
  TraceSource *src = format == INSN_WRITER_LACKEY ? lackey_source_from_input(in) : champsim_source_from_input(in);
  if (format == INSN_WRITER_LACKEY)
    lackey_source_allow_empty(src);
  GError *err = NULL;
  GArray *back = read_all(src, &err);
  ck_assert_no_error(err);
  trace_source_free(src);
  g_string_free(out, TRUE);
  return back;
}

/* The data accesses of `recs` as text: kind (D as R) and address, in order. */
static GString *data_accesses(GArray *recs)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < recs->len; i++) {
    const TraceRecord *r = REC(recs, i);
    if (r->type == REC_ACCESS && r->kind != ACC_IFETCH)
      g_string_append_printf(s, "%c%" G_GINT64_MODIFIER "x ", r->kind == ACC_STORE ? 'W' : 'R', r->addr);
  }
  return s;
}

/* The instruction address a reader gives each access (TraceRecord.arg2,
 * for run --annotate) is not written: the writers put an instruction
 * without a fetch of its own at the last fetch's address, so only the
 * block of code survives.  Cleared before comparing. */
static GArray *without_ips(GArray *a)
{
  for (guint i = 0; i < a->len; i++)
    if (REC(a, i)->type == REC_ACCESS)
      REC(a, i)->arg2 = 0;
  return a;
}

START_TEST(writers_give_back_lackey_and_champsim_records)
{
  /* From lackey: both writers give the same records back (ChampSim: data
   * sizes become 8 and instruction sizes 4). */
  GArray *lk = without_ips(lackey_records(LACKEY_SAMPLE, NULL));
  uint64_t dropped;
  GArray *back = without_ips(write_and_read(lk, INSN_WRITER_LACKEY, &dropped));
  assert_same_records(lk, back);
  ck_assert_uint_eq(dropped, 0); /* on-demand mappings are made again */
  g_array_free(back, TRUE);
  back = without_ips(write_and_read(lk, INSN_WRITER_CHAMPSIM, NULL));
  ck_assert_uint_eq(back->len, lk->len);
  for (guint i = 0; i < lk->len; i++) {
    TraceRecord a = *REC(lk, i), *b = REC(back, i);
    if (a.type == REC_ACCESS)
      a.size = a.kind == ACC_IFETCH ? 4 : 8;
    ck_assert_msg(memcmp(&a, b, sizeof a) == 0, "record %u differs", i);
  }
  g_array_free(back, TRUE);
  g_array_free(lk, TRUE);
  /* From ChampSim: both writers give the same records back. */
  unsigned loads, stores;
  GByteArray *b = champsim_trace(5000, &loads, &stores);
  TraceSource *src = champsim_source_from_input(trace_input_from_memory("cs", b->data, b->len, TRUE));
  GError *err = NULL;
  GArray *cs = without_ips(read_all(src, &err));
  ck_assert_no_error(err);
  trace_source_free(src);
  for (int f = INSN_WRITER_LACKEY; f <= INSN_WRITER_CHAMPSIM; f++) {
    back = without_ips(write_and_read(cs, (InsnWriterFormat)f, NULL));
    assert_same_records(cs, back);
    g_array_free(back, TRUE);
  }
  g_array_free(cs, TRUE);
  g_byte_array_unref(b);
}
END_TEST

START_TEST(writers_keep_a_streams_accesses_and_instructions)
{
  /* A generator's kind of stream: its own mapping, roi marks, threads,
   * dependent loads, gaps of 0 and more, compute in the middle and at the
   * end, several accesses of one instruction, more than ChampSim holds. */
  const TraceRecord in[] = {
    { .type = REC_MMAP, .addr = 0x7f0000000000, .len = 2 << 20, .prot = PROT_R | PROT_W, .pid = 1, .tid = 1 },
    { .type = REC_ACCESS, .kind = ACC_STORE, .addr = 0x7f0000000000, .size = 8, .pid = 1, .tid = 1 },
    { .type = REC_ACCESS, .kind = ACC_STORE, .addr = 0x7f0000000040, .size = 8, .pid = 1, .tid = 1 },
    { .type = REC_ACCESS, .kind = ACC_STORE, .addr = 0x7f0000000080, .size = 8, .pid = 1, .tid = 1 },
    { .type = REC_ROI_BEGIN, .pid = 1, .tid = 1 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = 0x7f0000000100, .size = 8, .gap = 3, .pid = 1, .tid = 1 },
    { .type = REC_ACCESS, .kind = ACC_DEP_LOAD, .addr = 0x7f0000000200, .size = 8, .pid = 1, .tid = 1 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = 0x7f0000000300, .size = 8, .pid = 1, .tid = 1 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = 0x7f0000000400, .size = 8, .pid = 1, .tid = 1 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = 0x7f0000000500, .size = 8, .pid = 1, .tid = 1 },
    { .type = REC_THREAD, .pid = 1, .tid = 2, .arg = -1 },
    { .type = REC_ACCESS, .kind = ACC_STORE, .addr = 0x7f0000000600, .size = 8, .pid = 1, .tid = 2 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .addr = 0x7f0000000700, .size = 8, .pid = 1, .tid = 2 },
    { .type = REC_COMPUTE, .len = 7, .pid = 1, .tid = 2 },
    { .type = REC_ACCESS, .kind = ACC_IFETCH, .addr = 0x500000, .size = 2, .gap = 1, .pid = 1, .tid = 2 },
    { .type = REC_ACCESS, .kind = ACC_STORE, .addr = 0x7f0000000800, .size = 4, .gap = 5, .pid = 1, .tid = 2 },
    { .type = REC_ROI_END, .pid = 1, .tid = 1 },
    { .type = REC_COMPUTE, .len = 11, .pid = 1, .tid = 1 },
  };
  GArray *recs = g_array_new(FALSE, FALSE, sizeof(TraceRecord));
  g_array_append_vals(recs, in, G_N_ELEMENTS(in));
  g_autoptr(GString) want = data_accesses(recs);
  for (int f = INSN_WRITER_LACKEY; f <= INSN_WRITER_CHAMPSIM; f++) {
    uint64_t dropped;
    GArray *back = write_and_read(recs, (InsnWriterFormat)f, &dropped);
    g_autoptr(GString) got = data_accesses(back);
    ck_assert_str_eq(got->str, want->str);
    ck_assert_uint_eq(dropped, 4); /* mmap, roi begin and end, thread */
    ck_assert_uint_eq(instructions_of(back), instructions_of(recs));
    g_array_free(back, TRUE);
  }
  g_array_free(recs, TRUE);
}
END_TEST

/* ---- input and detection ------------------------------------------------ */

static int detect(const void *data, size_t len)
{
  g_autoptr(TraceInput) in = trace_input_from_memory("d", data, len, TRUE);
  return trace_format_detect(in, NULL);
}

START_TEST(detection)
{
  ck_assert_int_eq(detect("", 0), TRACE_FORMAT_TEXT);
  ck_assert_int_eq(detect("# mmusim text trace v1\nR 0x1000 8\n", 32), TRACE_FORMAT_TEXT);
  /* The text header first: text, whatever binary follows (the reader then
   * names the line of the NUL byte). */
  ck_assert_int_eq(detect("# mmusim text trace v1\n\0\0\0\0\0\0\0\0", 31), TRACE_FORMAT_TEXT);
  ck_assert_int_eq(detect("# mmusim text trace v1\r\n\1\2", 26), TRACE_FORMAT_TEXT);
  ck_assert_int_eq(detect("# mmusim text trace v1 and more\n\0", 33), TRACE_FORMAT_CHAMPSIM);
  ck_assert_int_eq(detect(LACKEY_SAMPLE, strlen(LACKEY_SAMPLE)), TRACE_FORMAT_LACKEY);
  ck_assert_int_eq(detect("I  0401ab70,3\n", 14), TRACE_FORMAT_LACKEY);
  ck_assert_int_eq(detect(MTR_MAGIC "\1\0\0\0", 12), TRACE_FORMAT_MTR);
  unsigned l, s;
  GByteArray *cs = champsim_trace(3, &l, &s);
  ck_assert_int_eq(detect(cs->data, cs->len), TRACE_FORMAT_CHAMPSIM);
  /* Zeros (/dev/zero) and a record with ip 0 are no ChampSim trace: the
   * text reader reports them rather than the run going on for ever. */
  g_autofree uint8_t *zeros = g_malloc0(4096);
  ck_assert_int_eq(detect(zeros, 4096), TRACE_FORMAT_TEXT);
  ck_assert(!champsim_plausible(zeros, 64));
  ck_assert(champsim_plausible(cs->data, cs->len));
  memset(cs->data + CHAMPSIM_RECORD_BYTES, 0, 8);
  ck_assert_int_eq(detect(cs->data, cs->len), TRACE_FORMAT_TEXT);
  GByteArray *lk = g_byte_array_new();
  g_byte_array_append(lk, (const guint8 *)LACKEY_SAMPLE, strlen(LACKEY_SAMPLE));
  GByteArray *gz = gzip_compress(lk), *zs = zstd_compress(lk);
  ck_assert_int_eq(detect(gz->data, gz->len), TRACE_FORMAT_LACKEY);
  ck_assert_int_eq(detect(zs->data, zs->len), TRACE_FORMAT_LACKEY);
  g_byte_array_unref(gz);
  g_byte_array_unref(zs);
  g_byte_array_unref(lk);
  g_byte_array_unref(cs);
}
END_TEST

START_TEST(input_concatenated_and_truncated)
{
  GByteArray *a = g_byte_array_new();
  g_byte_array_append(a, (const guint8 *)"first\n", 6);
  GByteArray *b = g_byte_array_new();
  g_byte_array_append(b, (const guint8 *)"second\n", 7);
  GByteArray *(*const compress[])(const GByteArray *) = { gzip_compress, xz_compress, zstd_compress };
  for (unsigned k = 0; k < G_N_ELEMENTS(compress); k++) {
    GByteArray *ca = compress[k](a), *cb = compress[k](b);
    GByteArray *both = g_byte_array_new();
    g_byte_array_append(both, ca->data, ca->len);
    g_byte_array_append(both, cb->data, cb->len);
    g_autoptr(TraceInput) in = trace_input_from_memory("c", both->data, both->len, TRUE);
    char buf[64];
    GError *err = NULL;
    gssize n = trace_input_read_full(in, buf, sizeof buf, &err);
    ck_assert_no_error(err);
    ck_assert_int_eq(n, 13);
    ck_assert(memcmp(buf, "first\nsecond\n", 13) == 0);
    ck_assert_uint_eq(trace_input_offset(in), 13);
    ck_assert_int_eq(trace_input_compression(in), (int)k + 1);
    /* Cut in the middle: an error, not a silent end. */
    g_autoptr(TraceInput) cut = trace_input_from_memory("c", ca->data, ca->len - 3, TRUE);
    n = trace_input_read_full(cut, buf, sizeof buf, &err);
    ck_assert_int_eq(n, -1);
    ck_assert_msg(err && strstr(err->message, "c: corrupt"), "%s", err ? err->message : "no error");
    g_clear_error(&err);
    g_byte_array_unref(ca);
    g_byte_array_unref(cb);
    g_byte_array_unref(both);
  }
  g_byte_array_unref(a);
  g_byte_array_unref(b);
}
END_TEST

START_TEST(format_names)
{
  TraceFormat f;
  GError *err = NULL;
  ck_assert(trace_format_parse("champsim", &f, &err));
  ck_assert_int_eq(f, TRACE_FORMAT_CHAMPSIM);
  ck_assert(!trace_format_parse("pin", &f, &err));
  ck_assert_msg(strstr(err->message, "expected auto, text, lackey, mtr or champsim"), "%s", err->message);
  g_error_free(err);
  ck_assert_str_eq(trace_format_name(TRACE_FORMAT_MTR), "mtr");
}
END_TEST

static Suite *readers_suite(void)
{
  Suite *s = suite_create("readers");
  TCase *tc = tcase_create("readers");
  tcase_add_test(tc, lackey_records_and_counts);
  tcase_add_test(tc, lackey_errors_name_the_line);
  tcase_add_test(tc, lackey_allow_empty);
  tcase_add_test(tc, lackey_long_gap_and_no_newline);
  tcase_add_test(tc, champsim_plain_and_compressed);
  tcase_add_test(tc, champsim_errors_name_the_offset);
  tcase_add_test(tc, champsim_register_dependences);
  tcase_add_test(tc, champsim_far_producer_and_unfolded_sp);
  tcase_add_test(tc, writers_give_back_lackey_and_champsim_records);
  tcase_add_test(tc, writers_keep_a_streams_accesses_and_instructions);
  tcase_add_test(tc, detection);
  tcase_add_test(tc, input_concatenated_and_truncated);
  tcase_add_test(tc, format_names);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(readers_suite)
