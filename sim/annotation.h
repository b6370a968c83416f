/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * annotation.h - where the misses come from: the TLB misses, walks, walk
 * cycles and faults of a run attributed to the instruction that made each
 * access and to the mapping (VMA) it touched, as cg_annotate attributes
 * cache misses to source lines and `perf report --sort=symbol,dso` samples
 * to symbols and objects.
 *
 * Bookkeeping: with an Annotation in EngineOptions, the engine runs every
 * access through the full path (never the quick one) and reads the CPU's
 * counters before and after it; the difference is the access's own cost,
 * added to its instruction's and its mapping's rows.  So the rows add up to
 * the run's counters exactly, but for what no access caused (mapping
 * events' flushes, khugepaged's and NUMA balancing's scans, context
 * switches), which the report shows as "not attributed".  The rows follow
 * the counted region as the counters do: cleared where the region (or the
 * end of --warmup) starts, frozen where it ends.
 *
 * The instruction of an access: the address its source gives (ChampSim's
 * ip, lackey's `I` line: TraceRecord.arg2 of an access); else, for a trace
 * that has fetch records (X), the address of the thread's last fetch, the
 * block of code the access came from; else unknown (0).
 *
 * Off (no Annotation), the engine pays one predictable branch per access.
 */
#ifndef MMUSIM_ANNOTATION_H
#define MMUSIM_ANNOTATION_H

#include <glib.h>
#include <stdint.h>
#include "mm.h"
#include "stats.h"

/* What is attributed, each a counter or a sum of counters of base/counters.def. */
typedef enum {
  ANN_ACCESSES,     /* accesses */
  ANN_TLB_MISSES,   /* dTLB-load-misses + dTLB-store-misses + iTLB-load-misses */
  ANN_STLB_MISSES,  /* stlb_misses */
  ANN_PAGE_WALKS,   /* page_walks */
  ANN_WALK_CYCLES,  /* walk_cycles */
  ANN_PAGE_FAULTS,  /* page-faults */
  ANN_FAULT_CYCLES, /* fault_cycles */
  N_ANN
} AnnMetric;

typedef struct {
  uint64_t v[N_ANN];
} AnnCounts;

/* One row: an instruction of a process, or a mapping of a process. */
typedef struct {
  uint32_t pid;
  uint64_t ip;          /* instruction rows: its address (0: unknown) */
  uint64_t start, end;  /* mapping rows: the VMA when last touched ([0, 0): none, a SIGSEGV) */
  uint8_t prot, flags;  /* mapping rows: the VMA's PROT_* and MAP_F_* */
  AnnCounts c;
} AnnRow;

typedef struct Annotation Annotation;

Annotation *annotation_new(void);
void annotation_free(Annotation *a);

/* The name of a metric as in the reports (the counter's name, or
 * "tlb_misses" for the sum). */
const char *annotation_metric_name(AnnMetric m);
/* The metrics of a run's counters. */
void annotation_counts_of(const Counters *c, AnnCounts *out);

/* Engine side. */
void annotation_reset(Annotation *a);  /* the counted region starts: forget what came before */
void annotation_freeze(Annotation *a); /* the counted region ends: add nothing more */
/* An access of thread `thread` (any pointer that tells threads apart) of
 * process pid: its kind (AccessKind), address, its source's instruction
 * address (0: none), the VMA it touched (NULL: none) and the counters of
 * its CPU before and after it. */
void annotation_add(Annotation *a, const void *thread, uint32_t pid, unsigned kind, uint64_t addr, uint64_t ip,
                    const Vma *vma, const Counters *before, const Counters *after);

/* A file mapping of process pid, from its trace's mmap record: [start,
 * start + len) shows the file `path` (copied; NULL: unknown) from `offset`.
 * Kept for the whole run (not cleared where the counted region starts), so
 * the report can name the object and symbol of an instruction. */
void annotation_map(Annotation *a, uint32_t pid, uint64_t start, uint64_t len, uint64_t offset, const char *path);

typedef struct {
  uint32_t pid;
  uint64_t start, end, offset;
  const char *path; /* NULL: a file mapping of unknown name */
} AnnMapping;

/* The file mapping of process pid that holds addr, the one mapped last
 * when several did (a range unmapped and mapped again), or NULL. */
const AnnMapping *annotation_mapping_at(const Annotation *a, uint32_t pid, uint64_t addr);

/* Results: the rows by instruction and by mapping, sorted by `by`
 * (descending; ties by pid, then address), newly allocated (g_free). */
AnnRow *annotation_by_ip(const Annotation *a, AnnMetric by, guint *n);
AnnRow *annotation_by_region(const Annotation *a, AnnMetric by, guint *n);
/* The sum of every row (by instruction and by mapping alike). */
void annotation_total(const Annotation *a, AnnCounts *out);
/* TRUE when the instruction of some access was known. */
gboolean annotation_has_ips(const Annotation *a);

#endif
