/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * khugepaged.h - the khugepaged daemon in simulated time (mm/khugepaged.c).
 *
 * Registered mms sit on a list (khugepaged_enter_vma adds an mm whose VMA
 * became eligible); one cursor (mm, address) walks them.  Each wake scans
 * 2M-aligned ranges from the cursor, charging 512 per range, until
 * khugepaged.pages_to_scan, then sleeps khugepaged.scan_sleep_millisecs (or
 * khugepaged.alloc_sleep_millisecs after a failed huge allocation).  Every
 * range is judged by the THP policy (kernel/thp.h); refusals are counted by
 * reason (CTR_SCAN_*).  A collapse allocates an order-9 page on the node
 * holding most source pages, clears the PMD and shoots down the TLBs, copies
 * the 512 pages (zero-filling holes), installs the huge PMD with the old PTE
 * table deposited, and frees the old pages.  Its CPU time (scan and collapse)
 * is charged to the CPU named by khugepaged.cpu, as stalls in its timeline.
 * doc/khugepaged.md describes the model, its knobs and where it differs from
 * Linux.
 */
#ifndef MMUSIM_KHUGEPAGED_H
#define MMUSIM_KHUGEPAGED_H

#include <glib.h>
#include <stdint.h>
#include "mm.h"
#include "thp.h"

typedef struct Kernel Kernel;
typedef struct KCpu KCpu;
typedef struct Khugepaged Khugepaged;

/* The daemon of kernel k (k->s, k->m set; the CPUs need not exist yet).
 * NULL with an error when khugepaged.cpu names a CPU the machine lacks. */
Khugepaged *khugepaged_new(Kernel *k, GError **error);
void khugepaged_free(Khugepaged *kh);

/* __khugepaged_enter(): put mm on the scan list if it is not there.  The
 * first mm on an empty list wakes the daemon at once.  Ignored with
 * thp.enabled=never (the thread does not run). */
void khugepaged_enter(Khugepaged *kh, Mm *mm);
/* khugepaged_enter_vma(): khugepaged_enter when v may have huge pages
 * (thp_vma_allowed).  mmap, madvise(MADV_HUGEPAGE) and the huge fault path
 * call it. */
void khugepaged_enter_vma(Khugepaged *kh, Mm *mm, const Vma *v);
/* The mm is going away: take it off the list (the cursor moves on). */
void khugepaged_exit(Khugepaged *kh, Mm *mm);

/* Simulated time, in cycles, of the next wake: 0 when due at once (a first
 * registration), UINT64_MAX while no mm is registered. */
uint64_t khugepaged_next_wake(const Khugepaged *kh);
/* Where that time lives, for the engine's per-record test: it reads through
 * this pointer, so a registration made by a fault shows at the next record. */
const uint64_t *khugepaged_next_wake_ptr(const Khugepaged *kh);

/* Run every wake due at or before `now` (cycles).  The work is charged to
 * the CPU of khugepaged.cpu. */
void khugepaged_run(Khugepaged *kh, uint64_t now);

/* Collapse the range at haddr of mm now, on `cpu` (MADV_COLLAPSE, and the
 * collapse step of a wake).  Returns SCAN_SUCCEED or the refusal, counted. */
ScanResult khugepaged_collapse(Khugepaged *kh, KCpu *cpu, Mm *mm, uint64_t haddr, gboolean madv_collapse);

/* madvise(MADV_COLLAPSE) over [start, end) (madvise_collapse, 6.12):
 * khugepaged_collapse of every 2M range lying inside a VMA there, on the
 * calling CPU.  A VMA that may not have huge pages, or a range whose result
 * the kernel treats as final (an empty PMD, a failed allocation), ends the
 * call; an empty range (no PMD table) or a read-only one is passed over.
 * Returns what madvise returns: 0 when every range is a huge page at the
 * end, else -EINVAL, -ENOMEM (allocation failed, or a hole in the range)
 * or -EBUSY. */
int khugepaged_madvise_collapse(Khugepaged *kh, KCpu *cpu, Mm *mm, uint64_t start, uint64_t end);

/* The CPU khugepaged's work is charged to (khugepaged.cpu resolved). */
KCpu *khugepaged_cpu(const Khugepaged *kh);
/* Mms on the scan list. */
guint khugepaged_mm_count(const Khugepaged *kh);

#endif
