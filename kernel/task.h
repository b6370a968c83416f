/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * task.h - a thread of the workload, as the kernel knows it (task_struct):
 * its ids, its address space, the CPU it runs on and the time it ran.
 * The machine creates them (machine_thread) and the engine switches them.
 */
#ifndef MMUSIM_TASK_H
#define MMUSIM_TASK_H

#include <stdint.h>
#include "hooks.h"

typedef struct Mm Mm;

struct Thread {
  uint32_t pid, tid;
  int cpu;                  /* CPU it runs on */
  Mm *mm;
  uint64_t ran;             /* cycles it ran before its current stint on a CPU */
};

/* The cycles t has run (sum_exec_runtime): its past stints and, when it is
 * cpu's current thread, the time since it was switched in.  A context
 * switch's own cost counts for neither thread. */
static inline uint64_t thread_runtime(const Thread *t, const KCpu *cpu)
{
  return t->ran + (cpu->cur == t ? kcpu_now(cpu) - cpu->cur_since : 0);
}

#endif
