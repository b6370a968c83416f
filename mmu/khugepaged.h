/*
 * khugepaged.h - the khugepaged daemon in simulated time (mm/khugepaged.c).
 *
 * Registered mms sit on a list (khugepaged_enter_vma adds an mm whose VMA
 * became eligible); one cursor (mm, address) walks them.  Each wake scans
 * 2M-aligned ranges from the cursor, charging 512 per range, until
 * khugepaged.pages_to_scan, then sleeps khugepaged.scan_sleep_millisecs (or
 * khugepaged.alloc_sleep_millisecs after a failed huge allocation).  Every
 * range is judged by the THP policy (mmu/thp.h); refusals are counted by
 * reason (CTR_SCAN_*).  A collapse allocates an order-9 page on the node
 * holding most source pages, clears the PMD and shoots down the TLBs, copies
 * the 512 pages (zero-filling holes), installs the huge PMD with the old PTE
 * table deposited, and frees the old pages.  Its CPU time (scan and collapse)
 * is charged to the CPU named by khugepaged.cpu, as stalls in its timeline.
 */
#ifndef MMUSIM_KHUGEPAGED_H
#define MMUSIM_KHUGEPAGED_H

#include <glib.h>
#include <stdint.h>
#include "mm.h"
#include "thp.h"

typedef struct Kernel Kernel;
typedef struct Cpu Cpu;
typedef struct Khugepaged Khugepaged;

Khugepaged *khugepaged_new(Kernel *k);
void khugepaged_free(Khugepaged *kh);

/* khugepaged_enter_vma(): put mm on the scan list if it is not there. */
void khugepaged_enter(Khugepaged *kh, Mm *mm);
/* The mm is going away: take it off the list (the cursor moves on). */
void khugepaged_exit(Khugepaged *kh, Mm *mm);

/* Simulated time, in cycles, of the next wake; UINT64_MAX while no mm is
 * registered. */
uint64_t khugepaged_next_wake(const Khugepaged *kh);

/* Run every wake due at or before `now` (cycles).  The work is charged to
 * the CPU of khugepaged.cpu. */
void khugepaged_run(Khugepaged *kh, uint64_t now);

/* Collapse the range at haddr of mm now, on `cpu` (MADV_COLLAPSE, and the
 * collapse step of a wake).  Returns SCAN_SUCCEED or the refusal, counted. */
ScanResult khugepaged_collapse(Khugepaged *kh, Cpu *cpu, Mm *mm, uint64_t haddr, gboolean madv_collapse);

#endif
