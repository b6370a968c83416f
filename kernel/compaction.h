/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compaction.h - direct compaction of one zone, as mm/compaction.c does it
 * for an allocation that failed: a migrate scanner from the zone's start and
 * a free scanner from its end move movable pages out of low pageblocks into
 * free pages of high ones, until a free block of the wanted order exists or
 * the scanners meet.  Whether a zone is worth compacting (free memory,
 * fragmentation index against extfrag_threshold) and how often compaction is
 * deferred after failures are decided here too.  kernel/physmem.c walks the
 * zonelist and counts the outcome (CompactResult).
 */
#ifndef MMUSIM_COMPACTION_H
#define MMUSIM_COMPACTION_H

#include <glib.h>
#include <stdint.h>
#include "buddy.h"
#include "physmem.h"

/* mm/compaction.c COMPACT_MAX_DEFER_SHIFT: a zone that keeps failing is
 * compacted again at the (1 << 6) = 64th attempt, so at most 63 attempts
 * are skipped in between. */
#define COMPACT_MAX_DEFER_SHIFT 6
/* include/linux/mmzone.h PAGE_ALLOC_COSTLY_ORDER: above it the
 * fragmentation index decides whether compaction is worth running. */
#define COMPACT_COSTLY_ORDER 3

/* What compaction of one zone came to, in the kernel's order (enum
 * compact_result), so the best of several zones is the largest. */
typedef enum {
  COMPACT_SKIPPED,  /* too little free memory, or the failure is not due to fragmentation */
  COMPACT_DEFERRED, /* skipped: the zone failed recently (defer_compaction) */
  COMPACT_CONTINUE, /* suitable: the scanners may run */
  COMPACT_COMPLETE, /* the scanners met and no block of the order came free */
  COMPACT_SUCCESS,  /* a free block of the order exists */
} CompactStatus;

/* Per-zone state kept between compactions (struct zone's compact_* fields). */
typedef struct {
  unsigned considered;   /* attempts since the last deferral */
  unsigned defer_shift;  /* 1 << defer_shift attempts are skipped after a failure */
  unsigned order_failed; /* lowest order that failed; smaller orders are never deferred */
  /* Where the scanners stopped (compact_cached_migrate_pfn and
   * compact_cached_free_pfn): the next pageblock the migrate scanner
   * examines, and the end of the range the free scanner has not passed. */
  uint64_t migrate_pfn, free_end_pfn;
  /* What moves the processes' own pages (physmem_set_migrator), or NULL:
   * then only the background pages move. */
  const PhysMigrator *mig;
} CompactZone;

/* A zone's state before its first compaction. */
void compact_zone_init(CompactZone *cz, const BuddyZone *z);

/* mm/compaction.c compaction_deferred: TRUE when this attempt is skipped. */
gboolean compaction_deferred(CompactZone *cz, unsigned order);
/* defer_compaction: after a compaction that failed. */
void compaction_defer(CompactZone *cz, unsigned order);
/* compaction_defer_reset: after one that succeeded; alloc_success when the
 * allocation then got its block from the zone. */
void compaction_defer_reset(CompactZone *cz, unsigned order, gboolean alloc_success);

/* compaction_suitable: COMPACT_CONTINUE, or COMPACT_SKIPPED when the zone
 * has less free memory than compaction needs to work with (compact_gap) or,
 * for costly orders, its fragmentation index is 0..extfrag_threshold (the
 * failure is due to lack of memory, not to fragmentation). */
CompactStatus compaction_suitable(const BuddyZone *z, unsigned order, int extfrag_threshold);

/* compact_zone: run both scanners from where they stopped last time.
 * Returns COMPACT_SKIPPED (unsuitable), COMPACT_COMPLETE or COMPACT_SUCCESS,
 * and adds the pfns examined and the pages moved to *cr. */
CompactStatus compact_zone(BuddyZone *z, CompactZone *cz, unsigned order, int extfrag_threshold, CompactResult *cr);

/* One zone of try_to_compact_pages (mm/compaction.c 6.12):
 * COMPACT_DEFERRED when deferred (asked at every priority), else
 * compact_zone, resetting the deferral (without an allocation yet) after a
 * success and, only when `sync` (a priority other than COMPACT_PRIO_ASYNC),
 * deferring the zone after a failure. */
CompactStatus compact_zone_direct(BuddyZone *z, CompactZone *cz, unsigned order, int extfrag_threshold,
                                  gboolean sync, CompactResult *cr);

/* compaction_suit_allocation_order (mm/compaction.c 6.12, with
 * ALLOC_WMARK_MIN as kcompactd asks it): COMPACT_SUCCESS when the zone has a
 * free block of the order already (zone_watermark_ok at the order, the
 * watermark itself left out), else compaction_suitable's answer. */
CompactStatus compaction_suit_allocation_order(const BuddyZone *z, unsigned order, int extfrag_threshold);

/* One zone of kcompactd_do_work (mm/compaction.c 6.12): COMPACT_DEFERRED
 * when compaction_deferred, COMPACT_SKIPPED unless
 * compaction_suit_allocation_order says COMPACT_CONTINUE, else compact_zone
 * (MIGRATE_SYNC_LIGHT, which scans and migrates as the async pass does
 * here), resetting the deferral after a success and deferring the zone
 * after a failure. */
CompactStatus compact_zone_kcompactd(BuddyZone *z, CompactZone *cz, unsigned order, int extfrag_threshold,
                                     CompactResult *cr);

#endif
