/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * champsim.c - reader of ChampSim binary instruction traces.
 *
 * A trace is a sequence of 64-byte input_instr records (ChampSim
 * inc/trace_instr.h, written by its Pin tracer on little-endian hosts):
 *
 *   0  ip                        u64
 *   8  is_branch, branch_taken   u8, u8
 *   10 destination_registers[2]  u8
 *   12 source_registers[4]       u8
 *   16 destination_memory[2]     u64: addresses stored to, 0 = unused
 *   32 source_memory[4]          u64: addresses loaded from, 0 = unused
 *
 * Each record is one instruction: it is fetched as insnstream.h says, then
 * makes a load for each nonzero source_memory entry and a store for each
 * nonzero destination_memory entry, loads first (ChampSim issues loads from
 * the load queue when the instruction executes, and stores at retirement).
 * ChampSim records no sizes: an instruction is taken to be
 * CHAMPSIM_INSN_BYTES long and a data access CHAMPSIM_DATA_BYTES, which
 * matters only for accesses that cross a page (ChampSim itself moves whole
 * 64-byte blocks).  Traces are usually .xz or .gz, which TraceInput undoes.
 * A file whose length is not a multiple of 64 ends with an error naming the
 * offset of the partial record; an address at or beyond 2^57, or an ip of
 * 0 (no instruction: Linux keeps the first pages unmapped, vm.mmap_min_addr
 * in mm/Kconfig DEFAULT_MMAP_MIN_ADDR), is an error naming the record's
 * offset, so an endless stream of zeros stops at its first record.
 *
 * Register dependences.  A load whose address registers carry, through any
 * instructions between, the value of an earlier load waits for that load,
 * as the D record of the text format does (base/record.h: the record names
 * the producing load by its distance back).  ChampSim forms the same waits
 * by renaming (src/ooo_cpu.cc, do_scheduling; src/register_allocator.cc):
 * an instruction executes when every source register's producer has
 * completed, and its loads issue then.  The reader follows, for each of the
 * 256 architectural register numbers, the latest load whose value it
 * carries (0: none), by the rules below, read from ChampSim's
 * inc/instruction.h, inc/trace_instruction.h and src/ooo_cpu.cc (release
 * of May 2025, commit 2ff2501):
 *  - register 0 is no register (ChampSim drops it, ooo_model_instr);
 *  - every load of an instruction depends on the latest of the loads its
 *    source registers carry (ChampSim waits for all its sources: the latest
 *    load stands for them, the only one a record can name);
 *  - a destination register then carries the instruction's last load if it
 *    makes one, else the latest load of its sources (a non-load instruction
 *    passes its inputs' dependence on);
 *  - stack-pointer folding (do_stack_pointer_folding): an instruction that
 *    writes REG_STACK_POINTER (6) leaves it as it was when it is a branch,
 *    makes a memory access, or reads no register but the stack pointer,
 *    the flags (25) and the instruction pointer (26): push, pop, call and
 *    ret change it by a constant the decoder knows;
 *  - REG_INSTRUCTION_POINTER (26) carries nothing: the front end predicts
 *    branches (mmusim models no mispredictions), so a load that reads the
 *    instruction pointer (RIP-relative) waits for no branch.  ChampSim
 *    renames it like any register, so there a RIP-relative load after a
 *    branch that depended on a load waits for that load; here it does not.
 * Limits: one producer per load (the latest by trace order, which is not
 * always the last to complete); no dependence through memory (a load that
 * reads what a store wrote waits for nothing; ChampSim forwards stores to
 * loads, lq_depend_on_me); a producer more than TRACE_DEP_MAX_DISTANCE loads
 * back is taken as complete (a plain load); the latency of the non-load
 * instructions between is not added (the core model charges cpu.cpi each).
 *
 * Left out: the "cloudsuite" variant (with ASIDs, 80-byte records) and
 * branch outcomes.
 */
#include "config.h"
#include "champsim.h"
#include "insnstream.h"
#include "reader.h"
#include "trace_format.h"

#include <string.h>

#define CHAMPSIM_INSN_BYTES 4  /* no length in the trace; 4 as on the RISC ISAs ChampSim also traces */
#define CHAMPSIM_DATA_BYTES 8  /* no size in the trace: one word */
#define CHAMPSIM_VA_LIMIT (1ULL << 57)
#define CHAMPSIM_READ_RECORDS 512 /* records read at a time */
/* ChampSim's special registers (inc/trace_instruction.h). */
#define CHAMPSIM_REG_STACK_POINTER 6
#define CHAMPSIM_REG_FLAGS 25
#define CHAMPSIM_REG_INSTRUCTION_POINTER 26
#define CHAMPSIM_REGS 256 /* register numbers are bytes */

typedef struct {
  TraceReader rd;
  uint8_t buf[CHAMPSIM_READ_RECORDS * CHAMPSIM_RECORD_BYTES];
  size_t pos, len;
  uint64_t offset;  /* of buf[0] in the stream */
  gboolean eof, finished;
  InsnStream st;
  uint64_t loads;                     /* made so far */
  uint64_t reg_load[CHAMPSIM_REGS];   /* per register: number + 1 of the latest load it carries, 0 none */
} ChampsimSource;

static uint64_t le64(const uint8_t *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static void put_le64(uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

void champsim_encode(const ChampsimInstr *ins, uint8_t out[CHAMPSIM_RECORD_BYTES])
{
  put_le64(out, ins->ip);
  out[8] = ins->is_branch;
  out[9] = ins->branch_taken;
  memcpy(out + 10, ins->dst_regs, 2);
  memcpy(out + 12, ins->src_regs, 4);
  for (int i = 0; i < CHAMPSIM_DST_MEM; i++)
    put_le64(out + 16 + 8 * i, ins->dst_mem[i]);
  for (int i = 0; i < CHAMPSIM_SRC_MEM; i++)
    put_le64(out + 32 + 8 * i, ins->src_mem[i]);
}

gboolean champsim_plausible(const uint8_t *b, size_t n)
{
  for (size_t at = 0; at + CHAMPSIM_RECORD_BYTES <= n; at += CHAMPSIM_RECORD_BYTES) {
    uint64_t ip = le64(b + at);
    if (ip == 0 || ip >= CHAMPSIM_VA_LIMIT)
      return FALSE;
  }
  return TRUE;
}

static gboolean fail_at(ChampsimSource *c, GError **error, uint64_t offset, const char *what, const char *expected)
{
  g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE, "%s: offset %" G_GUINT64_FORMAT " (instruction %" G_GUINT64_FORMAT
              "): %s; expected %s", c->rd.name, offset, offset / CHAMPSIM_RECORD_BYTES, what, expected);
  return FALSE;
}

static gboolean check_addr(ChampsimSource *c, GError **error, uint64_t offset, uint64_t addr, uint32_t size)
{
  if (addr >= CHAMPSIM_VA_LIMIT || size > CHAMPSIM_VA_LIMIT - addr) {
    g_autofree char *what = g_strdup_printf("address 0x%" G_GINT64_MODIFIER "x beyond the 57-bit virtual address space", addr);
    return fail_at(c, error, offset, what, "addresses below 2^57");
  }
  return TRUE;
}

/* The latest load (number + 1, 0: none) the source registers of the
 * instruction at p carry. */
static uint64_t champsim_source_load(const ChampsimSource *c, const uint8_t *p)
{
  uint64_t latest = 0;
  for (int i = 0; i < 4; i++) {
    uint8_t r = p[12 + i];
    if (r != 0 && r != CHAMPSIM_REG_INSTRUCTION_POINTER)
      latest = MAX(latest, c->reg_load[r]);
  }
  return latest;
}

/* After the instruction at p: its destination registers carry `value`
 * (number + 1 of a load, or 0), but for the stack pointer when ChampSim
 * folds it (do_stack_pointer_folding). */
static void champsim_write_regs(ChampsimSource *c, const uint8_t *p, gboolean has_mem, uint64_t value)
{
  gboolean reads_other = FALSE;
  for (int i = 0; i < 4; i++) {
    uint8_t r = p[12 + i];
    if (r != 0 && r != CHAMPSIM_REG_STACK_POINTER && r != CHAMPSIM_REG_FLAGS && r != CHAMPSIM_REG_INSTRUCTION_POINTER)
      reads_other = TRUE;
  }
  gboolean fold_sp = p[8] /* is_branch */ || has_mem || !reads_other;
  for (int i = 0; i < 2; i++) {
    uint8_t r = p[10 + i];
    if (r == 0 || r == CHAMPSIM_REG_INSTRUCTION_POINTER || (r == CHAMPSIM_REG_STACK_POINTER && fold_sp))
      continue;
    c->reg_load[r] = value;
  }
}

static gboolean champsim_fill(TraceReader *rd, TraceBatch *batch, GError **error)
{
  ChampsimSource *c = (ChampsimSource *)rd;
  /* One instruction makes a fetch and up to six accesses. */
  const unsigned per_insn = (1 + CHAMPSIM_DST_MEM + CHAMPSIM_SRC_MEM) * INSN_STREAM_MAX_RECORDS;
  while (batch->n + per_insn <= TRACE_BATCH_MAX && !c->finished) {
    if (c->len - c->pos < CHAMPSIM_RECORD_BYTES) {
      size_t rest = c->len - c->pos;
      memmove(c->buf, c->buf + c->pos, rest);
      c->offset += c->pos;
      c->pos = 0;
      c->len = rest;
      gssize got = c->eof ? 0 : trace_input_read_full(c->rd.in, c->buf + rest, sizeof c->buf - rest, error);
      if (got < 0)
        break;
      c->len += (size_t)got;
      if ((size_t)got < sizeof c->buf - rest)
        c->eof = TRUE;
      if (c->len < CHAMPSIM_RECORD_BYTES) {
        if (c->len) {
          fail_at(c, error, c->offset, "file ends inside an instruction record (truncated?)", "64-byte records");
          break;
        }
        insn_stream_finish(&c->st, batch);
        c->finished = TRUE;
        break;
      }
    }
    const uint8_t *p = c->buf + c->pos;
    uint64_t at = c->offset + c->pos;
    c->pos += CHAMPSIM_RECORD_BYTES;
    uint64_t ip = le64(p);
    if (ip == 0) {
      fail_at(c, error, at, "instruction pointer 0 (zeros, not a ChampSim record?)", "the address of an instruction");
      break;
    }
    if (!check_addr(c, error, at, ip, CHAMPSIM_INSN_BYTES))
      break;
    insn_stream_instruction(&c->st, batch, ip, CHAMPSIM_INSN_BYTES);
    gboolean ok = TRUE, has_mem = FALSE;
    uint64_t producer = champsim_source_load(c, p), loads_before = c->loads;
    for (int i = 0; i < CHAMPSIM_SRC_MEM && ok; i++) {
      uint64_t a = le64(p + 32 + 8 * i);
      if (!a || !(ok = check_addr(c, error, at, a, CHAMPSIM_DATA_BYTES)))
        continue;
      has_mem = TRUE;
      /* Loads before this one since the producer, number producer - 1. */
      uint64_t distance = c->loads - producer;
      if (producer != 0 && distance <= TRACE_DEP_MAX_DISTANCE)
        insn_stream_dep_load(&c->st, batch, a, CHAMPSIM_DATA_BYTES, (uint32_t)distance);
      else
        insn_stream_access(&c->st, batch, ACC_LOAD, a, CHAMPSIM_DATA_BYTES);
      c->loads++;
    }
    for (int i = 0; i < CHAMPSIM_DST_MEM && ok; i++) {
      uint64_t a = le64(p + 16 + 8 * i);
      if (a && (ok = check_addr(c, error, at, a, CHAMPSIM_DATA_BYTES))) {
        has_mem = TRUE;
        insn_stream_access(&c->st, batch, ACC_STORE, a, CHAMPSIM_DATA_BYTES);
      }
    }
    if (!ok)
      break;
    champsim_write_regs(c, p, has_mem, c->loads != loads_before ? c->loads : producer);
  }
  return *error == NULL;
}

static void champsim_clear(TraceReader *rd)
{
  insn_stream_clear(&((ChampsimSource *)rd)->st);
}

/* Read ahead: xz decompression costs hundreds of nanoseconds a record. */
static const TraceReaderOps champsim_ops = TRACE_READER_OPS("champsim", TRUE, champsim_fill, champsim_clear);

TraceSource *champsim_source_from_input(TraceInput *in)
{
  g_return_val_if_fail(in != NULL, NULL);
  ChampsimSource *c = g_new0(ChampsimSource, 1);
  trace_reader_init(&c->rd, &champsim_ops, UNMAPPED_ONDEMAND, in, trace_input_name(in));
  insn_stream_init(&c->st);
  return &c->rd.base;
}

TraceSource *champsim_source_open(const char *path, GError **error)
{
  TraceInput *in = trace_input_open(path, TRUE, error);
  return in ? champsim_source_from_input(in) : NULL;
}

/* The row of the registry of readers (trace_format.c): -f champsim. */
static TraceSource *champsim_open(TraceInput *in, GError **error)
{
  (void)error;
  return champsim_source_from_input(in);
}

const TraceFormatRow champsim_reader = {
  .name = "champsim",
  .help = "ChampSim binary instruction traces (64-byte input_instr records)",
  .source = "ChampSim inc/trace_instruction.h; doc/trace-format.md, ChampSim traces",
  .open = champsim_open,
};
