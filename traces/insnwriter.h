/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * insnwriter.h - records to an instruction-by-instruction trace (lackey
 * text, ChampSim binary): the inverse of insnstream.h, for
 * `mmusim trace convert`.
 *
 * Contract: reading the output back with lackey.c or champsim.c gives the
 * same data accesses (kind, address, in order; ChampSim: every size 8) and
 * the same instruction count (gap + 1 per access, plus compute) as the
 * records written.  For records that came from a lackey or ChampSim trace
 * the gaps and fetches come back as well.  What the formats cannot hold is
 * dropped and counted (insn_writer_dropped, insn_writer_dropped_zero):
 * mapping, policy, thread and roi records, and in ChampSim accesses to
 * address 0 (0 marks an unused operand there).
 */
#ifndef MMUSIM_INSNWRITER_H
#define MMUSIM_INSNWRITER_H

#include <glib.h>
#include "champsim.h"
#include "insnstream.h"
#include "record.h"

typedef enum { INSN_WRITER_LACKEY, INSN_WRITER_CHAMPSIM } InsnWriterFormat;

/* Code address of instructions written before the first fetch record: the
 * usual start of an x86-64 executable's text. */
#define INSN_WRITER_DEFAULT_IP 0x400000ULL
#define INSN_WRITER_DEFAULT_INSN_BYTES 4

typedef struct {
  InsnWriterFormat format;
  /* What the reader will have done so far (insnstream.h, InsnStream). */
  InsnCount c;
  uint64_t ip;            /* of the last instruction written */
  uint32_t insn_bytes;    /* its size (lackey) */
  /* ChampSim: the instruction being filled, not yet in `out`. */
  gboolean open;
  ChampsimInstr cur;
  int n_loads, n_stores;
  uint64_t surplus;       /* instructions the reader will count beyond those of the records */
  uint64_t dropped;       /* mapping, policy, thread and roi records */
  uint64_t dropped_zero;  /* ChampSim: accesses to address 0 */
} InsnWriter;

void insn_writer_init(InsnWriter *w, InsnWriterFormat format);
/* Append what `r` stands for to `out` (text or binary bytes). */
void insn_writer_write(InsnWriter *w, const TraceRecord *r, GString *out);
/* At the end: the instruction still being filled (ChampSim). */
void insn_writer_finish(InsnWriter *w, GString *out);
/* Records dropped: mapping (but 'ondemand' ones, which the readers make
 * again), policy, thread and roi records; accesses to address 0 (ChampSim),
 * whose instructions stay. */
uint64_t insn_writer_dropped(const InsnWriter *w);
uint64_t insn_writer_dropped_zero(const InsnWriter *w);

#endif
