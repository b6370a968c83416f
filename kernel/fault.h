/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fault.h - the page-fault handler for anonymous, file-backed (kernel/filemap.h)
 * and hugetlb memory.
 *
 * Read fault on an empty PTE: map the shared zero page read-only.  Write
 * fault on an empty PTE: allocate a zeroed movable page on the faulting CPU's node.
 * Write fault on a zero-page PTE: copy-on-write (a fresh zeroed page, the old
 * translation flushed).  An empty PMD in a range THP may use: a huge page or
 * the huge zero page first (thp_fault_alloc, thp_zero_page_mapped), the 4K
 * path when the allocation fails (thp_fault_fallback).  A hugetlb VMA: a page
 * from its pool, or SIGBUS when the pool is empty.  Access outside a VMA or
 * against its protection: SIGSEGV, counted.  Sources: mm/memory.c
 * do_anonymous_page, do_wp_page; mm/huge_memory.c; mm/hugetlb.c.
 */
#ifndef MMUSIM_FAULT_H
#define MMUSIM_FAULT_H

#include "kernel.h"

typedef enum {
  FAULT_MAPPED, /* a translation now exists: retry the access */
  FAULT_SEGV,   /* the access is not allowed (SIGSEGV, or SIGBUS on an empty hugetlb pool): counted, dropped */
  FAULT_OOM,    /* no memory for the page or its tables: the run stops */
  FAULT_KILLED, /* no memory, and the OOM killer chose the faulting process (mem.oom_policy=kill): access dropped */
} FaultResult;

/* Handle a fault of `kind` at `va` taken by `cpu`; *cycles gets the cost.
 * With mem.oom_policy=kill a fault that finds no memory runs the OOM killer
 * (kernel/oom_kill.h) and, the victim another process, runs again (counted
 * once in page-faults); FAULT_OOM only when no process could be killed. */
FaultResult fault_handle(Kernel *k, KCpu *cpu, Mm *mm, uint64_t va, AccessKind kind, uint64_t *cycles);

#endif
