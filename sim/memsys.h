/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memsys.h - the memory hierarchy behind one CPU: L1I, L1D, L2 (private),
 * the LLC of its node (shared), an L2 prefetcher and DRAM.
 *
 * memsys_access() is the one entry point for data, instruction and page-walk
 * references.  It returns the latency in cycles of that reference alone and the
 * level that served it, and counts into the CPU's Counters.  Overlap of
 * independent misses is the core model's business (sim/cpu.c), not this one's.
 *
 * Prefetcher (cache.prefetcher): trains on L2 misses of data loads and stores
 * (not walks, not instruction fetches), detects ascending or descending
 * sequential streams by line, and fills cache.prefetch_degree lines ahead into
 * the L2 (and LLC).  A detected stream also advances on a data L2 hit on a line
 * it prefetched (the miss it removed), so it stays that many lines ahead.  Prefetches never cross a 4K physical page boundary unless
 * cache.prefetch_cross_page is set, because hardware prefetchers see physical
 * addresses and the next virtual page may live anywhere.
 */
#ifndef MMUSIM_MEMSYS_H
#define MMUSIM_MEMSYS_H

#include <glib.h>
#include <stdint.h>
#include "cache.h"
#include "dram.h"
#include "settings.h"
#include "stats.h"

typedef enum { MEM_L1 = 0, MEM_L2 = 1, MEM_LLC = 2, MEM_DRAM = 3 } MemLevel;
typedef enum { MREQ_LOAD, MREQ_STORE, MREQ_IFETCH, MREQ_WALK } MemReqKind;

typedef struct MemHier MemHier;

/* The LLC shared by the CPUs of one node; NULL when cache.llc_size is 0. */
Cache *memsys_llc_new(const Settings *s, GError **error);

/* `llc` is shared and not owned; `ctr` is the CPU's counter array. */
MemHier *memsys_new(const Settings *s, Cache *llc, Counters *ctr, GError **error);
void memsys_free(MemHier *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MemHier, memsys_free)

/* Serve DRAM references through `d` (not owned) for a CPU on `node` whose
 * clock is *clock: a reference DRAM serves then costs the LLC (or L2) hit
 * cycles plus dram_access(), idle latency by the page's node and queueing,
 * and prefetched lines load d's queues.  Without it (unit tests of the
 * caches) DRAM costs the fixed local latency. */
void memsys_attach_dram(MemHier *h, Dram *d, unsigned node, const uint64_t *clock);

/* One reference to physical address `pa`.  Returns its latency in cycles and
 * stores the level that served it in *level (may be NULL).  A walk's
 * reference, kind MREQ_WALK written as a constant (the page walkers' every
 * reference), goes to memsys_access_walk(), the same steps without the
 * tests and counts a walk skips; any other to memsys_access_any(). */
static inline uint32_t memsys_access(MemHier *h, uint64_t pa, MemReqKind kind, MemLevel *level);

/* memsys_access() without the dispatch.  Both return the cycles in the low
 * 32 bits and the level above (returned, not stored: the caller's level
 * then stays in a register). */
uint64_t memsys_access_any(MemHier *h, uint64_t pa, MemReqKind kind);
uint64_t memsys_access_walk(MemHier *h, uint64_t pa);
/* memsys_access_any() of a load (MREQ_LOAD written as a constant: the
 * core's copy for plain loads), its path a constant. */
uint64_t memsys_access_load(MemHier *h, uint64_t pa);

static inline uint32_t memsys_access(MemHier *h, uint64_t pa, MemReqKind kind, MemLevel *level)
{
  uint64_t both = __builtin_constant_p(kind) && kind == MREQ_WALK   ? memsys_access_walk(h, pa)
                  : __builtin_constant_p(kind) && kind == MREQ_LOAD ? memsys_access_load(h, pa)
                                                                    : memsys_access_any(h, pa, kind);
  if (level != NULL)
    *level = (MemLevel)(both >> 32);
  return (uint32_t)both;
}

/* memsys_host_prefetch(), the host prefetch of the simulated L2 and LLC
 * sets of a reference, is inline in memsys-hot.h. */

/* Latency in cycles of a hit at `level` (MEM_L1: the L1D; DRAM: the local idle
 * latency, as memsys_access() returns it on an idle machine: LLC (or L2) hit
 * cycles + DRAM). */
uint32_t memsys_level_cycles(const MemHier *h, MemLevel level);
const char *memsys_level_name(MemLevel level);
unsigned memsys_line_bytes(const MemHier *h);
/* Drop every cached line, the shared LLC's included, and the prefetcher's
 * streams (used by tests and by `explain` for a cold start). */
void memsys_flush(MemHier *h);

/* ---- lines the kernel writes: memsys_fill -------------------------------
 * A clear or a copy by the kernel (sim/machine.c's fill_lines hook) runs
 * on the CPU: its stores allocate their lines, write-allocate as every
 * store here, and a copy's loads allocate the source's.  One MemFill is a
 * stretch of it: `bytes` written from `pa` on and, for a copy, read from
 * `src_pa` on, line by line, each source line just before the destination
 * line it goes to (copy_page's loop). */
#define MEMSYS_FILL_CLEAR UINT64_MAX /* MemFill.src_pa of a clear */
typedef struct {
  uint64_t pa;
  uint64_t src_pa;  /* MEMSYS_FILL_CLEAR: nothing is read */
  uint64_t bytes;
} MemFill;

/* The host's working memory of memsys_fill(), shared by every CPU of a
 * machine (fills run one at a time). */
typedef struct MemFillScratch MemFillScratch;
MemFillScratch *memsys_fill_scratch_new(void);
void memsys_fill_scratch_free(MemFillScratch *sc);

/* The lines of fills[0..n), in that order, referenced as the kernel's
 * stores and loads reference them: the L1D, the L2 and the LLC end as
 * they would after every line was looked up and filled in turn (LRU, the
 * victims evicted), but only the lines that stay are looked up: those a
 * set keeps, the last `ways` of the lines that map to it (a 2M clear
 * leaves its last 1.25M in a 1.25M L2, its last 48K in a 48K L1D).  The
 * lines of a fill are distinct.  No cycles, no counters and no
 * prefetcher training: the kernel priced the work (mem.clear_*,
 * mem.copy_*, dram_bulk), and the model has no dirty bit, so written lines
 * and read ones are filled alike and an eviction writes nothing back. */
void memsys_fill(MemHier *h, const MemFill *fills, unsigned n, MemFillScratch *sc);

/* FALSE when the hierarchy has no LLC (cache.llc_size 0); then MEM_LLC never
 * serves a reference and memsys_level_cycles(h, MEM_LLC) is 0. */
gboolean memsys_has_llc(const MemHier *h);
/* TRUE if the line of `pa` is in `level` (MEM_L1: the L1I for MREQ_IFETCH, the
 * L1D otherwise; MEM_DRAM: always).  Changes nothing: no LRU update, no
 * prefetcher training. */
gboolean memsys_holds(const MemHier *h, uint64_t pa, MemReqKind kind, MemLevel level);

#endif
