/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rmap.h - the reverse map of anonymous pages and their migration by
 * compaction: from a physical frame to the one (mm, address) that maps it
 * (mm/rmap.c rmap_walk_anon, try_to_migrate; mm/migrate.c migrate_pages,
 * remove_migration_ptes; Linux 6.12).  The records live in kernel/physmem.c
 * (physmem_rmap_set); kernel/compaction.c calls the migrator set here.
 */
#ifndef MMUSIM_RMAP_H
#define MMUSIM_RMAP_H

#include "kernel.h"

/* Give compaction the kernel's migrator (kernel_new calls it). */
void rmap_init(Kernel *k);
/* folio_add_new_anon_rmap: the new base page at pfn is mapped at va of mm
 * in VMA v; recorded when v is private and anonymous (shared and file
 * pages are not the anonymous pages compaction moves here). */
void rmap_add_anon(Kernel *k, const Mm *mm, const Vma *v, uint64_t va, uint64_t pfn);
/* A page migrated from old to pfn keeps its mapping (call before old is
 * freed). */
void rmap_move(Kernel *k, uint64_t old, uint64_t pfn);

/* The CPU that does the compaction an allocation or kcompactd runs: the
 * copies run there and its TLB shootdowns start there.  Set around
 * physmem_alloc_huge and physmem_kcompactd_work, NULL otherwise; returns
 * the CPU set before, to be set back. */
static inline KCpu *rmap_compact_cpu(Kernel *k, KCpu *cpu)
{
  KCpu *was = k->compact_cpu;
  k->compact_cpu = cpu;
  return was;
}

#endif
