/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rmap.c - compaction migrates the processes' own anonymous pages.
 *
 * The reverse map.  Linux finds the PTEs of an anonymous folio through
 * folio->mapping (its anon_vma) and folio->index: rmap_walk_anon visits
 * each VMA of the anon_vma's interval tree that covers the index
 * (mm/rmap.c, Linux 6.12).  mmusim has no fork, so an anonymous page is
 * mapped once, by the process that faulted it in, and the record is that
 * process's pid and the page's address, kept per frame
 * (physmem_rmap_set: 12 host bytes per 4K frame, in chunks of 65536
 * frames made on first use).  It is set where a new private anonymous
 * base page is mapped (do_anonymous_page, wp_page_copy of the zero page:
 * kernel/fault.c) and where one is migrated (NUMA balancing, compaction:
 * remove_migration_ptes maps the new page where the old one was), and
 * cleared when the frame is freed.  Compaction trusts no record: at
 * isolation the page table of that process must map the frame at that
 * address by a PTE (not the zero page, not a PMD, not a page of a THP
 * folio), else the page is not isolated.
 *
 * What isolate_migratepages_block (mm/compaction.c 6.12) takes: base
 * pages on the LRU of a MOVABLE pageblock.  It leaves compound pages when
 * their order is at least the target order or pageblock_order
 * (skip_isolation_on_order, since 6.9), so a PMD-mapped THP never moves;
 * mTHP folios below the target order would move in 6.12 but are not
 * isolated here (the free scanner hands out single pages only): a
 * pageblock holding one is given up as one holding a page that cannot
 * move.  Not modelled, so never met: pinned pages (no GUP), mlocked
 * (unevictable) pages, pages under writeback.  The zero page and hugetlb
 * pages are no anonymous LRU pages and have no record.  Pages of 64K base
 * pages (ppc64) are order-4 blocks and are not isolated either.
 *
 * The migration (migrate_pages -> migrate_folio_unmap, move_to_new_folio,
 * migrate_folio_move; 6.12): try_to_migrate_one clears the PTE and flushes
 * it (ptep_clear_flush: every CPU that may cache the mm's translations,
 * through kernel/hooks.h) unless it was PROT_NONE for NUMA hinting and so
 * in no TLB; folio_copy copies the page on the compacting CPU, read from
 * the old frame's DRAM and written to the new one's as NUMA migration's
 * copy is (the lines stay in that CPU's caches with mem.clear_cached);
 * folio_migrate_flags gives the new page the old one's last_cpupid;
 * remove_migration_pte maps the new frame with the old entry's
 * permissions, accessed and dirty bits (x86 keeps them in the migration
 * entry since 6.1); the old frame is freed.  The fixed cost of a page is
 * compact.migrate_page_ns, the copy kernel_copy_cycles plus the DRAM
 * queueing (kernel/thp.c thp_compact_cycles adds them up).
 */
#include "config.h"
#include "rmap.h"
#include "thp.h"

/* rmap_walk_anon's one mapping of pfn: the PTE that maps it, through the
 * record, checked against the page table. */
static gboolean anon_pte(Kernel *k, uint64_t pfn, Mm **mm, uint64_t *va, PtNode **t, unsigned *idx)
{
  uint32_t pid;
  if (!physmem_rmap_get(k->pm, pfn, &pid, va))
    return FALSE;
  *mm = g_hash_table_lookup(k->mms, GUINT_TO_POINTER(pid));
  if (!*mm)
    return FALSE;
  unsigned level;
  *t = pgtable_lookup(&(*mm)->pt, *va, &level, idx);
  uint64_t e = (*t)->e[*idx];
  return level == 1 && pte_present(e) && !pte_zero_page(e) && pte_pfn(e) == pfn && !thp_page_of(k, pfn, NULL);
}

static gboolean rmap_isolate(void *ctx, uint64_t pfn, unsigned order)
{
  Kernel *k = ctx;
  Mm *mm;
  uint64_t va;
  PtNode *t;
  unsigned idx;
  return order == k->base_order && anon_pte(k, pfn, &mm, &va, &t, &idx);
}

static uint64_t rmap_migrate(void *ctx, uint64_t src, uint64_t dst, uint64_t after)
{
  Kernel *k = ctx;
  KCpu *cpu = k->compact_cpu;
  Mm *mm;
  uint64_t va;
  PtNode *t;
  unsigned idx;
  gboolean mapped = anon_pte(k, src, &mm, &va, &t, &idx);
  g_assert(mapped); /* isolated just before, nothing ran in between */
  uint64_t e = t->e[idx];
  /* try_to_migrate_one: ptep_clear_flush of an entry TLBs may hold. */
  if (cpu && !pte_protnone(e))
    kernel_flush_tlb_4k(k, cpu, mm, va, va + k->base_bytes);
  /* folio_copy on the compacting CPU. */
  uint64_t copy = kernel_copy_cycles(k, k->base_bytes);
  if (cpu) {
    copy += kernel_dram_bulk(k, cpu, src, k->base_bytes, after, copy);
    copy += kernel_dram_bulk(k, cpu, dst, k->base_bytes, after, copy);
    kernel_fill_copy(k, cpu, dst, src, k->base_bytes);
  }
  /* folio_migrate_flags: the last_cpupid goes with the page. */
  uint16_t last = physmem_last_cpupid(k->pm, src);
  if (last != PHYSMEM_CPUPID_UNSET)
    physmem_xchg_last_cpupid(k->pm, dst, last);
  /* remove_migration_pte: the same entry, the new frame. */
  pgtable_entry_set(t, idx, pte_make(dst, e & ~PTE_PFN_MASK));
  physmem_rmap_set(k->pm, dst, mm->pid, va);
  physmem_release(k->pm, src, k->base_order);
  return copy;
}

void rmap_init(Kernel *k)
{
  k->migrator = (PhysMigrator){ rmap_isolate, rmap_migrate, k };
  physmem_set_migrator(k->pm, &k->migrator);
}

void rmap_add_anon(Kernel *k, const Mm *mm, const Vma *v, uint64_t va, uint64_t pfn)
{
  if (!(v->flags & (MAP_F_SHARED | MAP_F_FILE)))
    physmem_rmap_set(k->pm, pfn, mm->pid, va);
}

void rmap_move(Kernel *k, uint64_t old, uint64_t pfn)
{
  uint32_t pid;
  uint64_t va;
  if (physmem_rmap_get(k->pm, old, &pid, &va))
    physmem_rmap_set(k->pm, pfn, pid, va);
}
