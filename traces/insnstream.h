/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * insnstream.h - records from an instruction-by-instruction trace (lackey,
 * ChampSim): how instructions, fetches and data accesses become TraceRecords.
 *
 * Rules, shared by both readers (doc/trace-format.md, "Traces without
 * mapping events"):
 *  1. Fetches: an instruction whose 64-byte block differs from the previous
 *     instruction's is fetched (an X access at its address); the following
 *     instructions of the same block are not, as ChampSim's front end sends
 *     one L1I request for each run of instructions in one block
 *     (src/ooo_cpu.cc, fetch_instruction).
 *  2. Instructions: each access stands for gap + 1 instructions.  The
 *     instructions that no access stands for become the gap of the next
 *     access; an instruction that makes several accesses (a fetch and a load,
 *     lackey's M) pays for the extra ones with the next instructions that
 *     make none, and a `compute` record at the end carries the rest, so the
 *     instruction count of a whole trace is exact.
 *  3. Memory: these traces have no mapping events.  The first access to each
 *     2M-aligned region is preceded by `mmap REGION 2M rwx ondemand`, so the
 *     recorded program's code can be fetched and its data read and written,
 *     as the kernel let it; the source's rule is UNMAPPED_ONDEMAND as well.
 *  4. Every access (fetch or data) carries its instruction's address in
 *     TraceRecord.arg2, for run --annotate (sim/annotation.h).
 */
#ifndef MMUSIM_INSNSTREAM_H
#define MMUSIM_INSNSTREAM_H

#include "source.h"

#define INSN_STREAM_BLOCK_BYTES 64          /* rule 1: a cache line */
#define INSN_STREAM_REGION_BYTES (2ULL << 20) /* rule 3: as kernel_map_on_demand */
/* Records one call can add to a batch, at most. */
#define INSN_STREAM_MAX_RECORDS 3

/* Rules 1 and 2's count of instructions and accesses: the reader's, and
 * the writer's model of the reader (insnwriter.c). */
typedef struct {
  uint64_t pending;      /* instructions no access stands for yet */
  uint64_t debt;         /* accesses beyond one per instruction, to pay back */
  uint64_t last_block;   /* block of the previous instruction + 1 (0: none) */
} InsnCount;

/* Rule 1's block of an instruction at ip, + 1 (never 0). */
static inline uint64_t insn_count_block(uint64_t ip)
{
  return ip / INSN_STREAM_BLOCK_BYTES + 1;
}

/* An instruction at ip: TRUE when it is fetched (its block differs from
 * the previous instruction's). */
static inline gboolean insn_count_instruction(InsnCount *c, uint64_t ip)
{
  if (c->debt)
    c->debt--;
  else
    c->pending++;
  uint64_t block = insn_count_block(ip);
  if (block == c->last_block)
    return FALSE;
  c->last_block = block;
  return TRUE;
}

/* An access (a fetch or a data access): the instructions it stands for,
 * gap + 1, or 0 when none is pending and it adds to the debt. */
static inline uint64_t insn_count_access(InsnCount *c)
{
  uint64_t n = c->pending;
  if (n)
    c->pending = 0;
  else
    c->debt++;
  return n;
}

typedef struct {
  InsnCount c;
  uint64_t last_region[2]; /* region + 1 of the last two mapped */
  GHashTable *regions;   /* region + 1 -> present */
  uint64_t instructions; /* seen */
  uint64_t ip;           /* the current instruction's address: TraceRecord.arg2 of its accesses */
} InsnStream;

void insn_stream_init(InsnStream *s);
void insn_stream_clear(InsnStream *s);
/* An instruction at `ip` of `size` bytes. */
void insn_stream_instruction(InsnStream *s, TraceBatch *b, uint64_t ip, uint32_t size);
/* A data access of the current instruction. */
void insn_stream_access(InsnStream *s, TraceBatch *b, AccessKind kind, uint64_t addr, uint32_t size);
/* A load of the current instruction whose address depends on the load
 * `distance` loads before the previous one (an ACC_DEP_LOAD, base/record.h). */
void insn_stream_dep_load(InsnStream *s, TraceBatch *b, uint64_t addr, uint32_t size, uint32_t distance);
/* At the end of the trace: a compute record for instructions still pending. */
void insn_stream_finish(InsnStream *s, TraceBatch *b);

#endif
