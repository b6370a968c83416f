/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mm.h - an address space (mm_struct): its VMAs, page table and flags.
 *
 * VMAs are kept sorted and non-overlapping in a balanced tree (a GSequence,
 * where Linux 6.12 has the maple tree of mm->mm_mt): lookup, insert, split,
 * remove and the n-th VMA cost O(log n), and a merge looks only at the
 * neighbours of what changed since the last one (vma_merge_new_range /
 * vma_merge_existing_range), so that a process of many mappings costs
 * O(log n) per mapping event; the fault path caches the last VMA it found.
 * mmap over an existing range replaces it (MAP_FIXED semantics); munmap and
 * mprotect split VMAs at the range edges as the kernel does (__split_vma;
 * the upper part of a file VMA starts further into the file).
 * This file only keeps the VMA bookkeeping; kernel/kernel.c frees the pages and
 * flushes the TLBs.  Sources: mm/mmap.c, mm/mprotect.c, include/linux/mm_types.h.
 */
#ifndef MMUSIM_MM_H
#define MMUSIM_MM_H

#include <glib.h>
#include <stdint.h>
#include "pgtable.h"

/* Per-VMA huge-page advice (VM_HUGEPAGE / VM_NOHUGEPAGE). */
typedef enum { VMA_THP_DEFAULT, VMA_THP_HUGEPAGE, VMA_THP_NOHUGEPAGE } VmaThpAdvice;

typedef struct {
  uint64_t start, end; /* [start, end), page aligned */
  uint8_t prot;        /* PROT_R | PROT_W | PROT_X (base/record.h) */
  uint8_t flags;       /* MAP_F_* */
  uint8_t thp;         /* VmaThpAdvice */
  uint8_t policy;      /* TracePolicy of a mempolicy record (mbind); local: none of its own */
  uint8_t policy_flags; /* MEMPOLICY_F_* */
  uint64_t policy_nodes;
  /* A file mapping's file, as the page cache names it (vm_file's
   * address_space): the name interned by kernel/filemap.c
   * (filemap_intern), so one file is one pointer; NULL when the trace
   * does not name it, or for anonymous memory. */
  const char *file;
  uint64_t file_off;   /* bytes: where start falls in the file (vm_pgoff << PAGE_SHIFT) */
} Vma;

typedef struct Mm {
  uint32_t pid;
  uint16_t asid;       /* the address space's tag where it is global (ppc64's context); x86 PCIDs
                        * are per CPU (kernel_switch_asid) */
  uint64_t ctx_id;     /* context.ctx_id: never reused, from 1 */
  PageTable pt;
  GSequence *vmas;     /* of Vma *, sorted by start (mm->mm_mt) */
  Vma *last_vma;       /* the last VMA found (lookup cache, vmacache of old) */
  /* [dirty_lo, dirty_hi]: the span where VMAs were inserted, split or
   * changed since the last merge; mm_merge_vmas looks only there (dirty_lo >
   * dirty_hi: nothing changed). */
  uint64_t dirty_lo, dirty_hi;
  uint64_t vma_steps;  /* VMAs looked at by merges (a count of work, for tests) */
  gboolean thp_disable; /* prctl(PR_SET_THP_DISABLE): MMF_DISABLE_THP */
  uint64_t rss_pages;  /* MM_ANONPAGES: base pages mapped, a huge page as its base pages, the zero pages not */
  unsigned users;      /* threads made for it (mm_users; machine_thread counts them) */
  /* mm_cpumask: CPUs that run this mm now, the targets of its TLB
   * shootdowns, a bitmap of cpumask_words words grown on demand.  A CPU
   * that switches to another mm leaves it (x86 switch_mm_irqs_off, Linux
   * 4.19 to 6.12) and may keep the mm's entries under its PCID; tlb_gen
   * counts the flushes of the mm's translations (context.tlb_gen), and
   * left_gen[cpu] is 1 + tlb_gen when that CPU left (0: in the mask, or
   * never ran the mm), so that a CPU coming back after a flush it missed
   * drops the mm's entries first, as choose_new_asid decides. */
  uint64_t *cpumask;
  unsigned cpumask_words;
  uint64_t tlb_gen;
  uint64_t *left_gen;  /* cpumask_words * 64 entries */
  GHashTable *deposited; /* huge-PMD va -> pfn of the page table deposited for its split */
  gboolean khugepaged_listed; /* on khugepaged's scan list */
  /* Killed by the OOM killer (kernel/oom_kill.c): its VMAs and page tables,
   * root included, are gone; the struct stays for the threads that point
   * to it, and the engine drops their records, counting them here. */
  gboolean oom_killed;
  uint64_t oom_dropped_records;
  unsigned serial;     /* creation order among the kernel's mms (the task list's order) */
  /* The process's memory policy (set_mempolicy; numa.mempolicy until the
   * trace sets one) and its round-robin interleave state (task_struct's
   * il_prev and il_weight, kept per process here). */
  uint8_t policy;      /* TracePolicy */
  uint8_t policy_flags; /* MEMPOLICY_F_* */
  uint64_t policy_nodes;
  int il_prev;         /* node of the last round-robin pick; -1 before the first */
  unsigned il_weight;  /* pages il_prev still takes under weighted interleave */
} Mm;

/* Record that `cpu` runs mm (called on context switches, not per access). */
void mm_cpumask_set(Mm *mm, unsigned cpu);
/* cpu switches from mm to another mm: it leaves the mask at the mm's
 * current tlb_gen. */
void mm_cpumask_leave(Mm *mm, unsigned cpu);
/* cpu switches to mm: it joins the mask; TRUE when it had left the mm and
 * a flush of the mm's translations went out since (its own entries of the
 * mm are stale: the caller drops them). */
gboolean mm_cpumask_enter(Mm *mm, unsigned cpu);
static inline gboolean mm_cpumask_test(const Mm *mm, unsigned cpu)
{
  return cpu / 64 < mm->cpumask_words && ((mm->cpumask[cpu / 64] >> (cpu % 64)) & 1);
}

/* Returns NULL when the root page table cannot be allocated. */
Mm *mm_new(uint32_t pid, uint16_t asid, const PtGeometry *g, const PtAllocator *a);
/* Frees the VMAs and the page-table pages, not the mapped pages. */
void mm_free(Mm *mm);
/* Gives back every page-table page, deposited ones and the root included
 * (__mmdrop's pgd_free), and the VMA list; the mm holds no table after. */
void mm_release_tables(Mm *mm);

/* The VMA containing va, or NULL. */
Vma *mm_find_vma(Mm *mm, uint64_t va);
/* The index of the first VMA ending above va (find_vma()'s answer), or the
 * VMA count when there is none. */
guint mm_vma_index_from(const Mm *mm, uint64_t va);
/* Insert a VMA for [start, end); the range must be free (remove first). */
void mm_insert_vma(Mm *mm, const Vma *v);
/* Remove [start, end) from the VMA list, splitting VMAs at the edges. */
void mm_remove_range(Mm *mm, uint64_t start, uint64_t end);
/* Split so that start and end fall on VMA boundaries; returns the index of
 * the first VMA inside the range and the count through *n. */
guint mm_split_range(Mm *mm, uint64_t start, uint64_t end, guint *n);
/* Merge neighbours that became identical (vma_merge), where VMAs changed
 * since the last merge. */
void mm_merge_vmas(Mm *mm);
guint mm_vma_count(const Mm *mm);

/* pgtable_trans_huge_deposit/withdraw: a huge PMD keeps one page-table page
 * aside so that a later split never needs an allocation. */
void mm_deposit(Mm *mm, uint64_t haddr, uint64_t table_pfn);
/* FALSE when nothing is deposited for haddr. */
gboolean mm_withdraw(Mm *mm, uint64_t haddr, uint64_t *table_pfn);
guint mm_deposited_count(const Mm *mm);
const Vma *mm_vma(const Mm *mm, guint i);
/* The same, to change the VMA's attributes in place (prot, advice,
 * policy): never its bounds, which keep the tree sorted.  The VMA is
 * looked at by the next mm_merge_vmas. */
Vma *mm_vma_mut(Mm *mm, guint i);

#endif
