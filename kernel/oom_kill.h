/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * oom_kill.h - the OOM killer (mm/oom_kill.c), run when mem.oom_policy=kill
 * and a page fault finds no memory for its page or its page tables, or a
 * new process none for its first table (machine_thread).
 *
 * out_of_memory: select_bad_process scores every live process by
 * oom_badness (resident pages plus page-table pages, oom_score_adj 0 for
 * all) and takes the highest; among equal scores the one created last, as
 * for_each_process walks the task list in creation order and a score equal
 * to the best so far replaces it.  A live process scoring 0 may be chosen
 * too, as since Linux 5.9 (its page-table root is freed); with no live
 * process left to choose the machine is out of memory as under mem.oom_policy=fail (k->oom, exit status 1).
 * oom_kill_process then kills the victim: its address space is torn down at
 * once (kernel_exit_mmap: every VMA unmapped through munmap's path, off
 * khugepaged's and the NUMA scanner's lists, its page-table root freed), its
 * threads leave their CPUs, and it is marked dead (Mm.oom_killed) so that the
 * engine drops its later records.  The fault path then retries.
 *
 * Counted as /proc/vmstat's oom_kill (CTR_OOM_KILL) on the CPU whose
 * allocation ran the killer; each kill is kept in Kernel.oom_kills for the
 * report and written to --events as an "oom_kill" line.
 */
#ifndef MMUSIM_OOM_KILL_H
#define MMUSIM_OOM_KILL_H

#include <glib.h>
#include <stdint.h>
#include "kernel.h"

/* What ran the killer: an allocation of process by_pid that found no
 * memory.  The report names it ("fault of process N", "creation of
 * process N"), as do the JSON's "trigger" and the oom_kill event's. */
typedef enum {
  OOM_TRIGGER_FAULT,    /* a page fault: its page or its page tables (fault_handle) */
  OOM_TRIGGER_CREATION, /* a new process: its first page table (machine_thread) */
} OomTrigger;

/* "fault", "creation". */
const char *oom_trigger_name(OomTrigger trigger);

/* One kill, as the kernel log's "Out of memory: Killed process" line tells
 * it.  Pages are 4K frames. */
typedef struct {
  uint32_t pid;            /* the victim */
  uint32_t by_pid;         /* the process whose allocation ran the killer */
  OomTrigger trigger;      /* that allocation: a fault of by_pid, or its creation */
  int cpu;                 /* the CPU of that allocation */
  uint64_t time_ns;        /* simulated time of the kill */
  uint64_t badness;        /* oom_badness: rss_pages + pgtable_pages */
  uint64_t rss_pages;      /* resident pages (zero pages and hugetlb pages not counted, as get_mm_rss) */
  uint64_t pgtable_pages;  /* page-table pages below the root, deposited tables included (mm_pgtables_bytes) */
  uint64_t freed_pages;    /* frames the teardown gave back: to the buddy allocator and the hugetlb pools */
  uint64_t dropped_records; /* records of the victim the engine dropped after the kill (filled by the engine) */
} OomKill;

/* oom_badness() of mm, and through *rss and *pgtables its two parts (either
 * may be NULL).  0 for a dead mm. */
uint64_t oom_badness(const Kernel *k, const Mm *mm, uint64_t *rss, uint64_t *pgtables);

/* select_bad_process: the live mm with the highest badness (ties to the one
 * created last), or NULL when no live process has a page table. */
Mm *oom_select_bad_process(const Kernel *k);

/* out_of_memory for an allocation of process by_pid on cpu (a fault, or
 * the first page table of a new process: trigger says which): select a
 * victim and kill it.  Returns the victim (by_pid's own mm when it was
 * chosen: the fault's access is then dropped), with k->oom cleared; NULL
 * when there was none, k->oom left set. */
Mm *oom_kill(Kernel *k, KCpu *cpu, uint32_t by_pid, OomTrigger trigger);

#endif
