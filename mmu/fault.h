/*
 * fault.h - the page-fault handler for anonymous memory.
 *
 * Read fault on an empty PTE: map the shared zero page read-only.  Write
 * fault on an empty PTE: allocate a zeroed movable page on the policy's node.
 * Write fault on a zero-page PTE: copy-on-write (a fresh zeroed page, the old
 * translation flushed).  Access outside a VMA or against its protection:
 * SIGSEGV, counted.  Sources: mm/memory.c do_anonymous_page, do_wp_page.
 */
#ifndef MMUSIM_FAULT_H
#define MMUSIM_FAULT_H

#include "kernel.h"

typedef enum {
  FAULT_MAPPED, /* a translation now exists: retry the access */
  FAULT_SEGV,   /* the access is not allowed: counted, the access is dropped */
  FAULT_OOM,    /* no memory for the page or its tables: the run stops */
} FaultResult;

/* Handle a fault of `kind` at `va` taken by `cpu`; *cycles gets the cost. */
FaultResult fault_handle(Kernel *k, Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, uint64_t *cycles);

#endif
