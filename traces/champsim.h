/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * champsim.h - reader (and, for tests, writer) of ChampSim's binary
 * instruction traces, plain or compressed with gzip, xz or zstd.
 */
#ifndef MMUSIM_CHAMPSIM_H
#define MMUSIM_CHAMPSIM_H

#include <stdio.h>
#include "input.h"
#include "source.h"

/* One input_instr of ChampSim's inc/trace_instr.h, 64 bytes on disk. */
#define CHAMPSIM_RECORD_BYTES 64
#define CHAMPSIM_DST_MEM 2
#define CHAMPSIM_SRC_MEM 4

typedef struct {
  uint64_t ip;
  uint8_t is_branch, branch_taken;
  uint8_t dst_regs[2], src_regs[4];
  uint64_t dst_mem[CHAMPSIM_DST_MEM]; /* stores; 0 = none */
  uint64_t src_mem[CHAMPSIM_SRC_MEM]; /* loads; 0 = none */
} ChampsimInstr;

TraceSource *champsim_source_from_input(TraceInput *in);
TraceSource *champsim_source_open(const char *path, GError **error);
/* Encode one instruction as its 64 bytes (little-endian, as x86-64 ChampSim
 * tracers write them). */
/* TRUE when every whole record of the first `n` bytes at `b` could be an
 * instruction: its ip is neither 0 (no code is mapped at page 0; mmap_min_addr
 * keeps it unmapped in Linux) nor beyond the 57-bit virtual address space.
 * Format detection asks it, so that zeros or other binary junk are not run
 * as an endless ChampSim trace. */
gboolean champsim_plausible(const uint8_t *b, size_t n);
void champsim_encode(const ChampsimInstr *ins, uint8_t out[CHAMPSIM_RECORD_BYTES]);

#endif
