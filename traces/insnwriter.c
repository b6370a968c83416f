/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * insnwriter.c - records to lackey text or ChampSim binary, the inverse of
 * insnstream.h's rules, for `mmusim trace convert`.
 *
 * The writer keeps the state the reader will have (pending instructions,
 * debt, block of the last instruction) and, before each access, writes the
 * instructions that make the reader give the access its gap:
 *  - an access with gap g needs g + 1 pending instructions when it is read,
 *    written after the debt is paid, or none and g = 0 (then it is an extra
 *    access of the last instruction, paid back later, as lackey's M).
 *    Instructions still pending (a compute record's) join the next gap;
 *  - a fetch (X) is an instruction at its address; the instructions before
 *    it are written at the address of the last instruction, whose 64-byte
 *    block was fetched already, so they make no fetch when read.  Before the
 *    first instruction that address is INSN_WRITER_DEFAULT_IP;
 *  - a compute record of n is n instructions after the debt is paid, so a
 *    trace's last instructions come back as its last compute record.
 * A fetch into the block of the previous instruction cannot be a fetch when
 * read (rule 1): it stays an instruction, counted, without its access.
 * ChampSim puts the loads of one instruction before its stores and holds at
 * most 4 loads and 2 stores: an access that does not fit in the instruction
 * being filled starts the next one, which keeps the order of accesses.
 *
 * Left out: lackey's M (a load and a store are written as L and S, which
 * read back the same), ChampSim's branches and registers (written as 0),
 * sizes in ChampSim (its reader takes 8 bytes).
 */
#include "config.h"
#include "insnwriter.h"
#include "insnstream.h"
#include "lackey.h"

#include <string.h>


void insn_writer_init(InsnWriter *w, InsnWriterFormat format)
{
  memset(w, 0, sizeof *w);
  w->format = format;
  w->ip = INSN_WRITER_DEFAULT_IP;
  w->insn_bytes = INSN_WRITER_DEFAULT_INSN_BYTES;
}

uint64_t insn_writer_dropped(const InsnWriter *w)
{
  return w->dropped;
}

uint64_t insn_writer_dropped_zero(const InsnWriter *w)
{
  return w->dropped_zero;
}

static uint32_t lackey_size(uint32_t size)
{
  return size < 1 ? 1 : size > LACKEY_ACCESS_MAX_BYTES ? LACKEY_ACCESS_MAX_BYTES : size;
}

static void champsim_flush(InsnWriter *w, GString *out)
{
  if (!w->open)
    return;
  uint8_t rec[CHAMPSIM_RECORD_BYTES];
  champsim_encode(&w->cur, rec);
  g_string_append_len(out, (const char *)rec, sizeof rec);
  w->open = FALSE;
}

/* One instruction at ip; the reader's side as insn_stream_instruction. */
static void instruction(InsnWriter *w, GString *out, uint64_t ip, uint32_t size)
{
  w->ip = ip;
  w->insn_bytes = size;
  if (w->format == INSN_WRITER_LACKEY) {
    g_string_append_printf(out, "I  %08" G_GINT64_MODIFIER "x,%u\n", ip, size);
  } else {
    champsim_flush(w, out);
    memset(&w->cur, 0, sizeof w->cur);
    w->cur.ip = ip;
    w->open = TRUE;
    w->n_loads = w->n_stores = 0;
  }
  if (insn_count_instruction(&w->c, ip))
    insn_count_access(&w->c); /* the reader's fetch */
}

/* n instructions that make no access, at the last instruction's address,
 * less the surplus. */
static void fill(InsnWriter *w, GString *out, uint64_t n)
{
  uint64_t take = MIN(n, w->surplus);
  w->surplus -= take;
  n -= take;
  for (uint64_t i = 0; i < n; i++)
    instruction(w, out, w->ip, w->insn_bytes);
}

/* Whether a data access fits in the ChampSim instruction being filled. */
static gboolean champsim_fits(const InsnWriter *w, gboolean load)
{
  if (!w->open)
    return FALSE;
  return load ? w->n_stores == 0 && w->n_loads < CHAMPSIM_SRC_MEM : w->n_stores < CHAMPSIM_DST_MEM;
}

static void data_access(InsnWriter *w, GString *out, const TraceRecord *r)
{
  gboolean load = r->kind != ACC_STORE;
  if (w->format == INSN_WRITER_CHAMPSIM && r->addr == 0) { /* 0 marks an unused operand */
    w->dropped_zero++;
    fill(w, out, w->c.debt + r->gap + 1);
    return;
  }
  if (!(r->gap == 0 && w->c.pending == 0)) /* else an extra access of the last instruction */
    fill(w, out, w->c.debt + r->gap + 1);
  if (w->format == INSN_WRITER_LACKEY) {
    g_string_append_printf(out, " %c %08" G_GINT64_MODIFIER "x,%u\n", load ? 'L' : 'S', r->addr, lackey_size(r->size));
  } else {
    if (!champsim_fits(w, load)) {
      /* Before any instruction this one makes a fetch nobody asked for,
       * which the reader counts as an instruction of its own: written ones
       * later make up for it (surplus). */
      gboolean fetches = insn_count_block(w->ip) != w->c.last_block;
      instruction(w, out, w->ip, w->insn_bytes);
      w->surplus += fetches;
    }
    if (load)
      w->cur.src_mem[w->n_loads++] = r->addr;
    else
      w->cur.dst_mem[w->n_stores++] = r->addr;
  }
  insn_count_access(&w->c);
}

static void fetch(InsnWriter *w, GString *out, const TraceRecord *r)
{
  uint32_t size = lackey_size(r->size);
  if (insn_count_block(r->addr) == w->c.last_block) { /* read back, no fetch: an instruction */
    fill(w, out, w->c.debt + r->gap);
    instruction(w, out, r->addr, size);
    return;
  }
  if (!(r->gap == 0 && w->c.pending == 0)) /* else the fetch adds to the debt */
    fill(w, out, w->c.debt + r->gap);
  instruction(w, out, r->addr, size);
}

void insn_writer_write(InsnWriter *w, const TraceRecord *r, GString *out)
{
  switch (r->type) {
  case REC_ACCESS:
    if (r->kind == ACC_IFETCH)
      fetch(w, out, r);
    else
      data_access(w, out, r);
    break;
  case REC_COMPUTE:
    fill(w, out, w->c.debt + r->len);
    break;
  case REC_MMAP:
    if (r->flags & MAP_F_ONDEMAND) /* the reader makes these again */
      break;
    w->dropped++;
    break;
  default:
    w->dropped++;
    break;
  }
}

void insn_writer_finish(InsnWriter *w, GString *out)
{
  if (w->format == INSN_WRITER_CHAMPSIM)
    champsim_flush(w, out);
}
