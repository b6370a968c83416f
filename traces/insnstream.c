/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * insnstream.c - instruction traces to records: fetch per 64-byte block,
 * exact instruction counts, 2M on-demand mappings (rules in insnstream.h).
 *
 * Left out: ChampSim's decoded instruction buffer, which spares fetches of
 * recently decoded blocks; branch outcomes and register dependences.
 */
#include "config.h"
#include "insnstream.h"

#include <string.h>

void insn_stream_init(InsnStream *s)
{
  memset(s, 0, sizeof *s);
  s->regions = g_hash_table_new(g_direct_hash, g_direct_equal);
}

void insn_stream_clear(InsnStream *s)
{
  if (s->regions)
    g_hash_table_destroy(s->regions);
  memset(s, 0, sizeof *s);
}

/* Rule 3: map the region of addr before its first access. */
static void ensure_mapped(InsnStream *s, TraceBatch *b, uint64_t addr)
{
  uint64_t key = addr / INSN_STREAM_REGION_BYTES + 1;
  if (G_LIKELY(key == s->last_region[0] || key == s->last_region[1]))
    return;
  s->last_region[1] = s->last_region[0];
  s->last_region[0] = key;
  if (g_hash_table_contains(s->regions, GSIZE_TO_POINTER(key)))
    return;
  g_hash_table_add(s->regions, GSIZE_TO_POINTER(key));
  TraceRecord *r = &b->rec[b->n++];
  memset(r, 0, sizeof *r);
  r->type = REC_MMAP;
  r->pid = r->tid = 1;
  r->addr = (key - 1) * INSN_STREAM_REGION_BYTES;
  r->len = INSN_STREAM_REGION_BYTES;
  r->prot = PROT_R | PROT_W | PROT_X;
  r->flags = MAP_F_ONDEMAND;
}

/* Rule 2: the gap of an access, and its debt. */
static void emit(InsnStream *s, TraceBatch *b, AccessKind kind, uint64_t addr, uint32_t size)
{
  ensure_mapped(s, b, addr);
  TraceRecord *r = &b->rec[b->n++];
  memset(r, 0, sizeof *r);
  r->type = REC_ACCESS;
  r->kind = kind;
  r->pid = r->tid = 1;
  r->addr = addr;
  r->size = size;
  r->arg2 = s->ip;
  uint64_t n = insn_count_access(&s->c);
  if (n) {
    uint64_t gap = n - 1;
    if (gap > UINT32_MAX) { /* a gap that does not fit goes ahead as compute */
      b->rec[b->n - 1] = (TraceRecord){ .type = REC_COMPUTE, .pid = 1, .tid = 1, .len = gap - UINT32_MAX };
      r = &b->rec[b->n++];
      *r = (TraceRecord){ .type = REC_ACCESS, .kind = kind, .pid = 1, .tid = 1, .addr = addr, .size = size,
                           .arg2 = s->ip };
      gap = UINT32_MAX;
    }
    r->gap = (uint32_t)gap;
  }
}

void insn_stream_instruction(InsnStream *s, TraceBatch *b, uint64_t ip, uint32_t size)
{
  s->instructions++;
  s->ip = ip;
  if (insn_count_instruction(&s->c, ip))
    emit(s, b, ACC_IFETCH, ip, size);
}

void insn_stream_access(InsnStream *s, TraceBatch *b, AccessKind kind, uint64_t addr, uint32_t size)
{
  emit(s, b, kind, addr, size);
}

void insn_stream_dep_load(InsnStream *s, TraceBatch *b, uint64_t addr, uint32_t size, uint32_t distance)
{
  emit(s, b, ACC_DEP_LOAD, addr, size);
  b->rec[b->n - 1].arg = (int32_t)distance; /* emit's last record is the access */
}

void insn_stream_finish(InsnStream *s, TraceBatch *b)
{
  if (!s->c.pending)
    return;
  TraceRecord *r = &b->rec[b->n++];
  *r = (TraceRecord){ .type = REC_COMPUTE, .pid = 1, .tid = 1, .len = s->c.pending };
  s->c.pending = 0;
}
