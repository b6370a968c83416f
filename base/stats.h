/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.h - the counters of a run, named as perf and /proc/vmstat name them.
 *
 * Counting is a plain increment of a per-CPU array: no branch on "are we in the
 * region of interest".  The region is cut out afterwards by subtracting a
 * snapshot taken at `roi begin` (or after --warmup) from one at `roi end`.
 */
#ifndef MMUSIM_STATS_H
#define MMUSIM_STATS_H

#include <glib.h>
#include <stdint.h>

/* CF_NUMA: in the text report only on machines with more than one CPU (JSON
 * and CSV carry every counter of the architecture).  CF_OOM_KILL: in every
 * report only with mem.oom_policy=kill; CF_COALESCE: only with
 * tlb.coalesce=true; CF_MTHP: only when a thp.hugepages_* setting is changed
 * from its default; CF_NESTED: only with virt.nested=true; CF_KCOMPACTD:
 * only with thp.defrag=defer or defer+madvise.  CF_TEXT_NONZERO: in the
 * text report only when not 0 (JSON and CSV carry it as its gate says) (the
 * gates are report.c's report_counter_gate). */
enum { CF_PPC64 = 1, CF_DERIVED = 2, CF_NUMA = 4, CF_OOM_KILL = 8, CF_COALESCE = 16, CF_MTHP = 32, CF_NESTED = 64,
       CF_KCOMPACTD = 128, CF_TEXT_NONZERO = 256 };

typedef enum {
#define C(id, name, flags, help) CTR_##id,
#include "counters.def"
#undef C
  N_COUNTERS
} CounterId;

typedef struct {
  CounterId id;
  const char *name;
  unsigned flags;
  const char *help;
} CounterDef;

typedef struct {
  uint64_t c[N_COUNTERS];
} Counters;

const CounterDef *counter_def(CounterId id);
const CounterDef *counter_lookup(const char *name);

void counters_add(Counters *dst, const Counters *src);
/* dst = a - b, counter by counter (a taken after b). */
void counters_diff(Counters *dst, const Counters *a, const Counters *b);

/* Final values of a run as doubles, derived counters filled in.
 * elapsed_cycles is the wall-clock span of the counted region. */
typedef struct {
  double v[N_COUNTERS];
} CounterValues;

void counter_values_from(CounterValues *out, const Counters *sum, uint64_t elapsed_cycles, double freq_mhz);

#endif
