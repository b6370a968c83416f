/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.c - counter table, region arithmetic and derived counters.
 */
#include "config.h"
#include "stats.h"

#include <string.h>

static const CounterDef defs[N_COUNTERS] = {
#define C(id, nm, flags, help) { CTR_##id, nm, flags, help },
#include "counters.def"
#undef C
};

const CounterDef *counter_def(CounterId id)
{
  g_return_val_if_fail(id < N_COUNTERS, NULL);
  return &defs[id];
}

const CounterDef *counter_lookup(const char *name)
{
  for (int i = 0; i < N_COUNTERS; i++)
    if (strcmp(defs[i].name, name) == 0)
      return &defs[i];
  return NULL;
}

void counters_add(Counters *dst, const Counters *src)
{
  for (int i = 0; i < N_COUNTERS; i++)
    dst->c[i] += src->c[i];
}

void counters_diff(Counters *dst, const Counters *a, const Counters *b)
{
  for (int i = 0; i < N_COUNTERS; i++)
    dst->c[i] = a->c[i] - b->c[i];
}

void counter_values_from(CounterValues *out, const Counters *sum, uint64_t elapsed_cycles, double freq_mhz)
{
  for (int i = 0; i < N_COUNTERS; i++)
    out->v[i] = (double)sum->c[i];
  double seconds = (double)elapsed_cycles / (freq_mhz * 1e6);
  out->v[CTR_SECONDS] = seconds;
  double acc = (double)sum->c[CTR_ACCESSES];
  out->v[CTR_NS_PER_ACCESS] = acc > 0 ? seconds * 1e9 / acc : 0;
  double cyc = (double)sum->c[CTR_CYCLES];
  out->v[CTR_IPC] = cyc > 0 ? (double)sum->c[CTR_INSTRUCTIONS] / cyc : 0;
  /* perf's minor-faults (mm_account_fault): the faults handled, less the
   * major ones; a SIGSEGV counts in page-faults only. */
  uint64_t not_minor = sum->c[CTR_MAJOR_FAULTS] + sum->c[CTR_SEGV];
  out->v[CTR_MINOR_FAULTS] = sum->c[CTR_PAGE_FAULTS] > not_minor ? (double)(sum->c[CTR_PAGE_FAULTS] - not_minor) : 0;
}
