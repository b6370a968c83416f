/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * summary.h - what a trace holds: counts per record type and access kind,
 * per thread, the footprint in 4K pages and 2M huge pages, and the address
 * ranges touched.  `mmusim trace info` prints it; the .mtr writer computes it
 * as it writes and keeps it in the index, so info on a .mtr file reads it
 * instead of the records.
 */
#ifndef MMUSIM_SUMMARY_H
#define MMUSIM_SUMMARY_H

#include <glib.h>
#include "record.h"

typedef struct {
  uint32_t pid, tid;
  int32_t cpu;           /* the last placement a thread record gave, -1 none */
  uint64_t accesses;
  uint64_t instructions; /* accesses + gaps + compute */
} SummaryThread;

typedef struct {
  uint32_t pid;
  uint64_t start, end;   /* [start, end), whole 2M huge pages */
  uint64_t pages_4k;     /* 4K pages touched inside */
} SummaryRegion;

typedef struct SummarySet SummarySet;

typedef struct {
  uint64_t records;
  uint64_t by_type[N_REC_TYPES];
  uint64_t by_kind[4];   /* AccessKind */
  uint64_t instructions;
  uint64_t access_bytes;
  GArray *threads;       /* SummaryThread, in order of first appearance */
  /* Filled by trace_summary_finish (or read from an index): */
  uint64_t pages_4k, pages_2m;
  GArray *regions;       /* SummaryRegion, by pid then address */
  /* Private: */
  SummarySet *set_4k, *set_2m;
  GArray *pids;          /* uint32_t distinct pids: the index is part of set keys */
  uint32_t last_pid, last_tid, last_thread;
  uint64_t last_key_4k;
  uint32_t last_access_pid;
  uint64_t last_pid_index;
} TraceSummary;

void trace_summary_init(TraceSummary *s);
void trace_summary_clear(TraceSummary *s);
void trace_summary_add(TraceSummary *s, const TraceRecord *r);
/* Compute the footprint and regions from the pages seen. */
void trace_summary_finish(TraceSummary *s);
/* Append the report of `trace info` (after the header lines). */
void trace_summary_print(const TraceSummary *s, GString *out);
/* Serialise (varints) for the .mtr index, and read it back; FALSE on a
 * malformed encoding. */
void trace_summary_encode(const TraceSummary *s, GByteArray *out);
gboolean trace_summary_decode(TraceSummary *s, const uint8_t *p, const uint8_t *end);

#endif
