/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * physmem.h - the physical memory of the machine: nodes, their zones, and the
 * order in which an allocation tries them (the zonelist).
 *
 * Layout: node n owns pfns [n * pages_per_node, (n + 1) * pages_per_node).
 * Node 0 holds ZONE_DMA (below 16M) and ZONE_DMA32 (below 4G) as on x86-64;
 * the rest of every node is ZONE_NORMAL.  mem.kernel_reserved bytes at the
 * start of node 0 (above the DMA zone) are never given to the buddy allocator.
 * An allocation on node N tries N's zones from NORMAL down to DMA (like
 * GFP_HIGHUSER_MOVABLE), then the other nodes nearest first.
 */
#ifndef MMUSIM_PHYSMEM_H
#define MMUSIM_PHYSMEM_H

#include <glib.h>
#include <stdint.h>
#include "buddy.h"
#include "settings.h"
#include "topology.h"

#define PAGE_SHIFT_4K 12

typedef struct PhysMem PhysMem;

PhysMem *physmem_new(const Settings *s, GError **error);
void physmem_free(PhysMem *pm);
/* Scatter the background pages of mem.fragmentation over the zones (see
 * physmem.c).  The kernel calls it after the boot-time reservations
 * (hugetlb pools), which a fresh machine serves from unfragmented memory. */
void physmem_fragment(PhysMem *pm, const Settings *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PhysMem, physmem_free)

/* Allocate 2^order 4K pages, trying `node` first.  FALSE when no zone of any
 * node can serve it (simulated out of memory, or too fragmented). */
gboolean physmem_alloc(PhysMem *pm, int node, unsigned order, MigrateType mt, uint64_t *pfn);
/* Like physmem_alloc but only from `node` (for __GFP_THISNODE and bind). */
gboolean physmem_alloc_on(PhysMem *pm, int node, unsigned order, MigrateType mt, uint64_t *pfn);
/* Take the free aligned range [pfn, pfn + 2^order) itself, of any order,
 * beyond buddy.max_order too (alloc_contig_range, memblock at boot): the
 * range must lie in one zone and be wholly free, else FALSE and nothing
 * changes.  Above max_order it is held as max-order blocks: release it with
 * physmem_release_range. */
gboolean physmem_alloc_range(PhysMem *pm, uint64_t pfn, unsigned order, MigrateType mt);
void physmem_release_range(PhysMem *pm, uint64_t pfn, unsigned order);
/* split_page(): an allocated block becomes 2^order order-0 pages, each
 * released on its own. */
void physmem_split(PhysMem *pm, uint64_t pfn, unsigned order);
/* Split an allocated block of `order` into allocated blocks of `piece`
 * (split_page to the folio's base pages: order 0 with 4K pages, order 4
 * with 64K ones); the pieces keep migratetype `mt`. */
void physmem_split_to(PhysMem *pm, uint64_t pfn, unsigned order, unsigned piece, MigrateType mt);
void physmem_release(PhysMem *pm, uint64_t pfn, unsigned order);

/* What one direct compaction (mm/compaction.c) did, for counters and cost. */
typedef struct {
  gboolean ran;       /* compaction was tried (compact_stall) */
  unsigned stalls;    /* __alloc_pages_direct_compact calls that ran it: one compact_stall each */
  gboolean success;   /* the last of them gave the block (compact_success); the others compact_fail */
  uint64_t scanned;   /* pfns the migrate and free scanners examined */
  uint64_t free_scanned; /* of those, the free scanner's (compact_free_scanned; the rest compact_migrate_scanned) */
  uint64_t migrated;  /* 4K pages moved */
  uint64_t isolated;  /* pages isolated: the moved pages and their free targets (compact_isolated) */
  uint64_t anon_migrated; /* of the moved pages, the processes' own (PhysMigrator) */
  uint64_t copy_cycles;   /* what copying those cost (PhysMigrator.migrate) */
} CompactResult;

/* What direct compaction a costly allocation's slow path may run
 * (__alloc_pages_slowpath, mm/page_alloc.c 6.12), from its gfp flags. */
typedef enum {
  COMPACT_MODE_NONE,  /* no __GFP_DIRECT_RECLAIM (GFP_TRANSHUGE_LIGHT): none */
  COMPACT_MODE_ASYNC, /* __GFP_NORETRY: async passes only, never a deferral */
  COMPACT_MODE_SYNC,  /* GFP_TRANSHUGE: async, then sync-light, whose failure defers */
} CompactMode;

/* A huge (order >= pageblock order) movable allocation: physmem_alloc (or
 * physmem_alloc_on when this_node), and when that fails, the direct
 * compaction `mode` allows of the zones tried, each pass followed by one
 * more attempt.  *cr tells what compaction did (zeroed when it did not run). */
gboolean physmem_alloc_huge(PhysMem *pm, int node, unsigned order, gboolean this_node, CompactMode mode,
                            uint64_t *pfn, CompactResult *cr);

/* kcompactd_node_suitable (mm/compaction.c 6.12): some zone of `node`
 * lacks a free block of `order` and is worth compacting for it. */
gboolean physmem_kcompactd_suitable(const PhysMem *pm, int node, unsigned order);
/* kcompactd_do_work (mm/compaction.c 6.12): compact_zone_kcompactd of each
 * zone of `node`, lowest first; what it scanned and moved is added to *cr
 * (ran and stalls stay unset: kcompactd is no allocation's stall). */
void physmem_kcompactd_work(PhysMem *pm, int node, unsigned order, CompactResult *cr);

int physmem_nodes(const PhysMem *pm);
/* The machine's NUMA topology (SLIT distances, nodes nearest first). */
const Topology *physmem_topology(const PhysMem *pm);
int physmem_node_of(const PhysMem *pm, uint64_t pfn);
uint64_t physmem_pages_per_node(const PhysMem *pm);
uint64_t physmem_free_pages(const PhysMem *pm, int node);
/* Zones of a node, NULL where the node has none of that type. */
BuddyZone *physmem_zone(const PhysMem *pm, int node, ZoneType t);
/* /proc/buddyinfo lines: "Node 0, zone   Normal   12 4 ... ". */
void physmem_buddyinfo(const PhysMem *pm, GString *out);
uint64_t physmem_host_bytes(const PhysMem *pm);

/* The last_cpupid Linux keeps in each page's flags (include/linux/mm.h
 * folio_last_cpupid, folio_xchg_last_cpupid; 6.12) for NUMA balancing:
 * 16 bits whose meaning is the caller's (kernel/numa_balance.c), all ones
 * (PHYSMEM_CPUPID_UNSET, the kernel's -1) for a page never given one.  A
 * freed page goes back to unset (free_pages_prepare calls
 * page_cpupid_reset_last). */
#define PHYSMEM_CPUPID_UNSET UINT16_C(0xffff)
uint16_t physmem_last_cpupid(const PhysMem *pm, uint64_t pfn);
/* Gives the page at pfn `cpupid`, returns its previous one. */
uint16_t physmem_xchg_last_cpupid(PhysMem *pm, uint64_t pfn, uint16_t cpupid);

/* The reverse map of anonymous base pages: which process maps the frame
 * at pfn, and at which address (what folio->mapping, the anon_vma, and
 * folio->index give rmap_walk_anon in mm/rmap.c, Linux 6.12; the model has
 * no fork, so an anonymous page has one mapping).  The kernel sets it when
 * it maps a new private anonymous base page (a fault, a copy-on-write of
 * the zero page, a migration); freeing the frame (physmem_release,
 * physmem_release_range, a page compaction moves) clears it.  A record is
 * a hint: compaction checks it against the page table before it moves the
 * page (kernel/kernel.c kernel_rmap_isolate), so a stale one is skipped.
 * Cost: 12 host bytes per 4K frame, in chunks of 2^16 frames (768 KiB)
 * made when a frame of theirs is first recorded. */
void physmem_rmap_set(PhysMem *pm, uint64_t pfn, uint32_t pid, uint64_t va);
/* FALSE when no mapping is recorded for pfn. */
gboolean physmem_rmap_get(const PhysMem *pm, uint64_t pfn, uint32_t *pid, uint64_t *va);

/* How compaction moves the pages of the simulated processes (set by the
 * kernel; without it compaction moves only the background pages). */
typedef struct PhysMigrator {
  /* isolate_migratepages_block's test of the allocated block of 2^order
   * frames at pfn: TRUE when it is a page the migrator can move. */
  gboolean (*isolate)(void *ctx, uint64_t pfn, unsigned order);
  /* migrate_pages of the page isolate accepted, into the frame dst (taken
   * already, MT_MOVABLE): copy it, remap it, free src.  `after`: cycles of
   * this compaction's copies so far (the copies run one after another).
   * Returns the cycles of the copy. */
  uint64_t (*migrate)(void *ctx, uint64_t src, uint64_t dst, uint64_t after);
  void *ctx;
} PhysMigrator;
/* Compaction of every zone uses m from now on (NULL: none). */
void physmem_set_migrator(PhysMem *pm, const PhysMigrator *m);

/* A naturally aligned run of 2^order pages on `node` for boot-time tables
 * (the ppc64 hashed page table); order may exceed buddy.max_order.  FALSE
 * when no zone of the node holds such a run free. */
gboolean physmem_alloc_contig(PhysMem *pm, int node, unsigned order, uint64_t *pfn);
/* Give it back with physmem_release_range(). */

#endif
