/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fault.c - page faults on anonymous and hugetlb memory, as mm/memory.c,
 * mm/huge_memory.c and mm/hugetlb.c handle them.
 *
 * Models: VMA lookup and permission check (SIGSEGV counted, not fatal), the
 * zero page for read faults (do_anonymous_page without FAULT_FLAG_WRITE),
 * a zeroed movable order-0 page for write faults, copy-on-write of a zero-page
 * mapping (do_wp_page: a fresh zeroed page, the old translation flushed),
 * page-table pages allocated on the way, and the cost of each.  The node of
 * a new page is the memory policy's (kernel/mempolicy.c: first touch unless a
 * policy says otherwise); page tables go to the faulting CPU's node.
 *
 * Huge pages (__handle_mm_fault): when the PMD is empty, THP is allowed for
 * the VMA (thp_vma_allowed), the aligned 2M range lies inside it and the THP
 * policy wants a huge page, do_huge_pmd_anonymous_page runs: a read maps the
 * shared huge zero page read-only when thp.use_zero_page; otherwise an
 * order-9 page is allocated (thp_alloc, compaction as thp.defrag says),
 * cleared, mapped by the PMD writable and dirty, with a page-table page
 * deposited for a later split.  A failed allocation counts
 * thp_fault_fallback and the fault takes the 4K path.  A write to the huge
 * zero page splits the zero PMD and copies on write at 4K
 * (do_huge_pmd_wp_page's fallback, 6.12).  A write to a THP made read-only
 * by mprotect reuses it (do_huge_pmd_wp_page).  Faults in a
 * hugetlb VMA take a page from its pool (hugetlb_no_page): no zero page; a
 * read of a private mapping maps it read-only, the next write reuses it
 * (hugetlb_wp); an empty pool is a SIGBUS, counted as segv with reason
 * "sigbus".
 *
 * Sizes follow the page table (Kernel.base_* and pmd_*): a 4K base page and
 * a 2M PMD on x86-64, 64K and 16M on ppc64 hash with 64K pages (order 4 and
 * order 12 buddy blocks of 4K frames).
 *
 * Multi-size THP (mthp_anonymous): a write fault on an empty PTE may map a
 * folio of an order between the base page's and the PMD's, as
 * thp.hugepages_* allow (alloc_anon_folio, 6.12).
 *
 * File mappings (file_fault): the page comes from the page cache
 * (kernel/filemap.c), with fault-around on a read (do_read_fault), copied
 * on a private write (do_cow_fault, wp_page_copy), mapped dirty on a
 * shared one (do_shared_fault), Linux 6.12 mm/memory.c.
 *
 * Leaves out: swap, userfaultfd, shmem mTHP, PUD-sized THP, and hugetlb
 * reservations.
 * Costs: fault.*, thp.* and mem.* settings (mmu-facts section 7).
 */
#include "config.h"
#include "fault.h"

#include "events.h"
#include "filemap.h"
#include "khugepaged.h"
#include "hugetlb.h"
#include "numa_balance.h"
#include "mempolicy.h"
#include "oom_kill.h"
#include "rmap.h"

static gboolean vma_allows(const Vma *v, AccessKind kind)
{
  switch (kind) {
  case ACC_STORE: return (v->prot & PROT_W) != 0;
  case ACC_IFETCH: return (v->prot & PROT_X) != 0;
  default: return (v->prot & (PROT_R | PROT_W | PROT_X)) != 0;
  }
}

static uint64_t leaf_flags(const Vma *v)
{
  uint64_t f = PTE_P | PTE_US | PTE_A;
  if (!(v->prot & PROT_X))
    f |= PTE_NX;
  return f;
}

static FaultResult segv(Kernel *k, KCpu *cpu, Mm *mm, uint64_t va, const char *why, uint64_t *cycles)
{
  cpu->ctr->c[CTR_SEGV]++;
  *cycles = k->segv_cycles;
  kernel_event(k, cpu, mm->pid, "segv",
                "va=%#" G_GINT64_MODIFIER "x reason=%s", va, why);
  return FAULT_SEGV;
}

static void emit_fault(Kernel *k, KCpu *cpu, Mm *mm, const char *what, uint64_t va, AccessKind kind, unsigned tables,
                       uint64_t cycles)
{
  kernel_event(k, cpu, mm->pid, "fault",
                "kind=%s va=%#" G_GINT64_MODIFIER "x access=%c tables=%u cycles=%" G_GUINT64_FORMAT, what, va,
                "RWDX"[kind], tables, cycles);
}

/* Page-table pages made on the way: counted and priced. */
static void charge_tables(Kernel *k, KCpu *cpu, unsigned tables, uint64_t *cycles)
{
  if (!tables)
    return;
  cpu->ctr->c[CTR_PGTABLE_PAGES_ALLOC] += tables;
  *cycles += tables * (k->ptpage_cycles + k->clear_4k_cycles); /* table pages are 4K frames */
}

/* Allocate and map a page for a write at va, zeroed, or a copy of frame
 * src (KERNEL_FILL_CLEAR: zeroed).  found: what pgtable_find() found for
 * va, or NULL. */
static FaultResult map_new_page(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t va, const PtFound *found,
                                uint64_t src, uint64_t *cycles, unsigned *tables)
{
  uint64_t pfn;
  MemPlacement place;
  mempolicy_place(k, mm, v, va, k->base_order, cpu->node, &place);
  gboolean ok = mempolicy_alloc(k, cpu, &place, k->base_order, MT_MOVABLE, &pfn);
  if (!ok && thp_deferred_count(k) && thp_deferred_split_scan(k, cpu, cycles))
    ok = mempolicy_alloc(k, cpu, &place, k->base_order, MT_MOVABLE, &pfn); /* reclaim shrank the split queue */
  if (!ok) {
    k->oom = TRUE;
    return FAULT_OOM;
  }
  uint64_t entry = pte_make(pfn, leaf_flags(v) | PTE_RW | PTE_D);
  if (!(found ? pgtable_set_found(&mm->pt, found, va, entry, tables) : pgtable_set(&mm->pt, va, 1, entry, tables))) {
    physmem_release(k->pm, pfn, k->base_order);
    k->oom = TRUE;
    return FAULT_OOM;
  }
  cpu->ctr->c[CTR_MEM_USED_BYTES] += k->base_bytes;
  rmap_add_anon(k, mm, v, va, pfn); /* folio_add_new_anon_rmap */
  if (src != KERNEL_FILL_CLEAR) {
    /* __wp_page_copy_user / copy_mc_user_highpage: read src, write the new page. */
    uint64_t copy = kernel_copy_cycles(k, k->base_bytes);
    copy += kernel_dram_bulk(k, cpu, pfn, k->base_bytes, 0, copy);
    kernel_fill_copy(k, cpu, pfn, src, k->base_bytes);
    *cycles += k->anon_cycles + copy;
    return FAULT_MAPPED;
  }
  uint64_t clear = k->clear_base_cycles;
  clear += kernel_dram_bulk(k, cpu, pfn, k->base_bytes, 0, clear);
  kernel_fill_clear(k, cpu, pfn, k->base_bytes); /* clear_user_highpage: its lines stay in cpu's caches */
  cpu->ctr->c[CTR_ZEROING_CYCLES] += clear;
  *cycles += k->anon_cycles + clear;
  return FAULT_MAPPED;
}

/* ---- file mappings ------------------------------------------------------------
 * A fault on a file VMA's empty PTE (do_fault, mm/memory.c, Linux 6.12):
 * a read runs do_read_fault, a write to a private mapping do_cow_fault, a
 * write to a shared one do_shared_fault.  Each gets the page from the page
 * cache (filemap_fault, kernel/filemap.c): a minor fault costs
 * fault.file_ns, nothing cleared; a major one adds the read, file.read_ns.
 * A page-cache page is mapped with PTE_SW_FILE: unmapping leaves it in the
 * cache, mprotect never makes it writable in a private mapping, and a
 * write to it there copies it (do_wp_page's wp_page_copy). */

/* do_fault_around: map the pages of the fault-around window that the
 * page cache holds (filemap_map_pages), read-only, the PTEs already set
 * skipped.  The window is fault_around_pages aligned, cut to the VMA and
 * to the faulting PTE table.  TRUE when the faulting page was among them
 * (the fault is done, minor).  *oom: no memory for a table or a frame. */
static gboolean fault_around(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t page_va, uint64_t *cycles,
                             unsigned *tables, gboolean *oom)
{
  unsigned nr = filemap_around_pages(k->filemap);
  *oom = FALSE;
  if (nr <= 1)
    return FALSE; /* should_fault_around */
  uint64_t span = (uint64_t)nr << k->base_shift, table = k->pmd_bytes;
  uint64_t from = MAX(page_va & ~(span - 1), v->start);
  uint64_t to = MIN(MIN((page_va & ~(span - 1)) + span, (page_va & ~(table - 1)) + table), v->end);
  gboolean mapped = FALSE;
  uint64_t others = 0;
  for (uint64_t va = from; va < to; va += k->base_bytes) {
    unsigned level, idx;
    PtNode *n = pgtable_lookup(&mm->pt, va, &level, &idx);
    uint64_t pfn;
    if (level == 1 && n->e[idx])
      continue; /* filemap_map_folio_range: !pte_none */
    if (!filemap_cached(k, cpu, mm, v, va, &pfn, oom)) {
      if (*oom)
        return FALSE;
      continue;
    }
    if (!pgtable_set(&mm->pt, va, 1, pte_make(pfn, leaf_flags(v) | PTE_SW_FILE), tables)) {
      *oom = TRUE;
      return FALSE;
    }
    if (va == page_va)
      mapped = TRUE;
    else
      others++;
  }
  cpu->ctr->c[CTR_FAULT_AROUND_PAGES] += others;
  *cycles += others * filemap_around_page_cycles(k->filemap);
  return mapped;
}

/* do_read_fault, do_cow_fault or do_shared_fault on the empty PTE at va
 * of the file VMA v; *what names the fault for the event. */
static FaultResult file_fault(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t va, AccessKind kind,
                              const PtFound *found, uint64_t *cycles, unsigned *tables, const char **what)
{
  uint64_t page_va = va & ~(k->base_bytes - 1), pfn;
  gboolean major = FALSE, oom;
  cpu->ctr->c[CTR_FAULTS_FILE]++;
  if (kind != ACC_STORE) {
    *cycles += k->file_cycles;
    /* do_read_fault: fault-around first; the page itself only when the
     * cache did not hold it. */
    gboolean done = fault_around(k, cpu, mm, v, page_va, cycles, tables, &oom);
    if (oom) {
      k->oom = TRUE;
      return FAULT_OOM;
    }
    if (!done) {
      if (!filemap_get(k, cpu, mm, v, page_va, &pfn, &major, cycles) ||
          !pgtable_set(&mm->pt, page_va, 1, pte_make(pfn, leaf_flags(v) | PTE_SW_FILE), tables)) {
        k->oom = TRUE;
        return FAULT_OOM;
      }
    }
    *what = major ? "file-major" : "file";
  } else if (!(v->flags & MAP_F_SHARED)) {
    /* do_cow_fault: the page from the cache, copied into a new anonymous
     * page (inc_mm_counter(MM_ANONPAGES)), mapped writable and dirty. */
    if (!filemap_get(k, cpu, mm, v, page_va, &pfn, &major, cycles)) {
      k->oom = TRUE;
      return FAULT_OOM;
    }
    FaultResult r = map_new_page(k, cpu, mm, v, page_va, found, pfn, cycles, tables);
    if (r != FAULT_MAPPED)
      return r;
    mm->rss_pages++; /* its cost: fault.anon_ns and the copy, as a write fault's */
    cpu->ctr->c[CTR_FAULTS_COW]++;
    *what = major ? "file-cow-major" : "file-cow";
  } else {
    /* do_shared_fault: the page-cache page mapped writable and dirty
     * (do_page_mkwrite, fault_dirty_shared_page; no writeback modelled). */
    *cycles += k->file_cycles;
    if (!filemap_get(k, cpu, mm, v, page_va, &pfn, &major, cycles) ||
        !pgtable_set(&mm->pt, page_va, 1, pte_make(pfn, leaf_flags(v) | PTE_SW_FILE | PTE_RW | PTE_D), tables)) {
      k->oom = TRUE;
      return FAULT_OOM;
    }
    *what = major ? "file-shared-major" : "file-shared";
  }
  kernel_touch_fault(k, cpu, mm, va);
  return FAULT_MAPPED;
}

/* ---- transparent huge pages ---------------------------------------------- */

/* ---- multi-size THP ---------------------------------------------------------
 * alloc_anon_folio (mm/memory.c, Linux 6.12; mTHP came in 6.8) for a write
 * fault on an empty PTE of an anonymous VMA: the orders below the PMD's
 * that thp.hugepages_* and the VMA allow (thp_vma_allowable_orders), whose
 * aligned range lies inside the VMA (thp_vma_suitable_orders), highest
 * first; the first whose PTEs are all none (pte_range_none) and the lower
 * ones are tried in turn, an allocation that fails counting
 * anon_fault_fallback.  The folio is cleared whole and mapped by nr PTEs at
 * once (set_ptes), accessed (x86's vm_page_prot has _PAGE_ACCESSED), dirty
 * and writable: nr base pages of RSS for one fault (anon_fault_alloc).
 * *mapped stays FALSE when no order applies or every one failed, and the
 * order-0 page follows. */
static FaultResult mthp_anonymous(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t va, uint64_t *cycles,
                                  gboolean *mapped)
{
  unsigned pmd_order = k->pmd_order - k->base_order; /* PMD_ORDER, in base pages */
  uint32_t below = (UINT32_C(1) << pmd_order) - 1;
  *mapped = FALSE;
  if (!((k->anon_orders_always | k->anon_orders_madvise | k->anon_orders_inherit) & below))
    return FAULT_MAPPED; /* every mTHP size never: the default */
  if (v->flags & MAP_F_SHARED)
    return FAULT_MAPPED; /* shmem: shmem_enabled's sizes, not modelled */
  uint32_t orders = thp_vma_allowable_orders(k, mm, v, below);
  /* thp_vma_suitable_orders: the aligned range inside the VMA. */
  for (uint32_t o = orders; o; o &= o - 1) {
    unsigned order = (unsigned)__builtin_ctz(o);
    uint64_t size = k->base_bytes << order, addr = va & ~(size - 1);
    if (addr < v->start || addr + size > v->end)
      orders &= ~(UINT32_C(1) << order);
  }
  /* pte_range_none, highest order first: the lower ranges lie inside the
   * first that is all none, so only it is checked. */
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&mm->pt, va, &level, &idx);
  while (orders && level == 1) {
    unsigned order = 31u - (unsigned)__builtin_clz(orders), nr = 1u << order;
    unsigned first = idx & ~(nr - 1), i;
    for (i = first; i < first + nr && !n->e[i]; i++)
      ;
    if (i == first + nr)
      break;
    orders &= ~(UINT32_C(1) << order);
  }
  uint64_t pfn = 0;
  unsigned order = 0;
  gboolean got = FALSE;
  while (orders && !got) {
    order = 31u - (unsigned)__builtin_clz(orders);
    uint64_t addr = va & ~((k->base_bytes << order) - 1);
    MemPlacement place;
    mempolicy_place(k, mm, v, addr, order + k->base_order, cpu->node, &place);
    got = thp_alloc_order(k, cpu, &place, order + k->base_order, thp_defrag_compact(k, v), &pfn, cycles);
    if (!got) {
      thp_wake_kcompactd(k, cpu, v, &place, order + k->base_order);
      cpu->ctr->c[CTR_MTHP_ANON_FAULT_FALLBACK]++;
      thp_count_mthp(cpu, order + k->base_order, MTHP_STAT_ANON_FAULT_FALLBACK);
      orders &= ~(UINT32_C(1) << order);
    }
  }
  if (!got)
    return FAULT_MAPPED;
  unsigned nr = 1u << order, tables = 0;
  uint64_t size = k->base_bytes << order, addr = va & ~(size - 1);
  uint64_t flags = leaf_flags(v) | PTE_RW | PTE_D;
  for (unsigned i = 0; i < nr; i++)
    if (!pgtable_set(&mm->pt, addr + ((uint64_t)i << k->base_shift), 1,
                     pte_make(pfn + ((uint64_t)i << k->base_order), flags), &tables)) {
      /* Only the first can fail (the PTE table); nothing is mapped yet. */
      physmem_release(k->pm, pfn, order + k->base_order);
      k->oom = TRUE;
      return FAULT_OOM;
    }
  /* folio_zero_user of the whole folio: process_huge_page's order, the
   * faulting subpage last, its lines left in cpu's caches. */
  uint64_t clear = kernel_clear_cycles(k, size);
  clear += kernel_dram_bulk(k, cpu, pfn, size, 0, clear);
  kernel_fill_clear_huge(k, cpu, pfn, size, va - addr);
  cpu->ctr->c[CTR_ZEROING_CYCLES] += clear;
  cpu->ctr->c[CTR_MEM_USED_BYTES] += size;
  cpu->ctr->c[CTR_FAULTS_ANON]++;
  cpu->ctr->c[CTR_MTHP_ANON_FAULT_ALLOC]++;
  thp_count_mthp(cpu, order + k->base_order, MTHP_STAT_ANON_FAULT_ALLOC);
  thp_folio_add(k, pfn, order + k->base_order, FALSE);
  mm->rss_pages += (uint64_t)nr << k->base_order; /* add_mm_counter(MM_ANONPAGES, nr) */
  kernel_touch_fault(k, cpu, mm, va);
  *cycles += k->anon_cycles + clear;
  charge_tables(k, cpu, tables, cycles);
  kernel_event(k, cpu, mm->pid, "fault",
               "kind=mthp va=%#" G_GINT64_MODIFIER "x access=W tables=%u cycles=%" G_GUINT64_FORMAT
               " pages=%u", va, tables, *cycles, nr);
  *mapped = TRUE;
  return FAULT_MAPPED;
}


/* Clear a new THP, faulted at byte `hint` of it, and count it: the lines
 * of the faulting subpage are cleared last (folio_zero_user). */
static uint64_t new_thp(Kernel *k, KCpu *cpu, uint64_t pfn, uint64_t hint)
{
  uint64_t clear = kernel_clear_cycles(k, k->pmd_bytes);
  clear += kernel_dram_bulk(k, cpu, pfn, k->pmd_bytes, 0, clear);
  kernel_fill_clear_huge(k, cpu, pfn, k->pmd_bytes, hint);
  cpu->ctr->c[CTR_ZEROING_CYCLES] += clear;
  cpu->ctr->c[CTR_THP_FAULT_ALLOC]++;
  thp_count_mthp(cpu, k->pmd_order, MTHP_STAT_ANON_FAULT_ALLOC); /* __do_huge_pmd_anonymous_page, 6.12 */
  cpu->ctr->c[CTR_MEM_USED_BYTES] += k->pmd_bytes;
  thp_page_add(k, pfn);
  return k->huge_fault_cycles + clear;
}

/* do_huge_pmd_anonymous_page, with the PMD empty and the range allowed.
 * *fallback is set when the 4K path must take over. */
static FaultResult huge_anonymous(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t va, AccessKind kind,
                                  uint64_t *cycles, gboolean *fallback)
{
  uint64_t haddr = va & ~(k->pmd_bytes - 1);
  unsigned tables = 0;
  uint64_t table, pfn, entry;
  const char *what;
  gboolean zero = kind != ACC_STORE && settings_bool(k->s, SET_THP_USE_ZERO_PAGE);
  if (zero) {
    /* Read: the huge zero page; the table to deposit comes first. */
    if (!mm->pt.a.alloc(mm->pt.a.ctx, 1, &table))
      return FAULT_OOM;
    if (!thp_huge_zero_page(k, cpu, &pfn, cycles)) {
      mm->pt.a.release(mm->pt.a.ctx, 1, table);
      cpu->ctr->c[CTR_THP_FAULT_FALLBACK]++;
      *fallback = TRUE;
      return FAULT_MAPPED;
    }
    entry = pte_make(pfn, leaf_flags(v) | PTE_PS | PTE_SW_ZERO);
  } else {
    MemPlacement place;
    mempolicy_place(k, mm, v, haddr, k->pmd_order, cpu->node, &place);
    if (!thp_alloc(k, cpu, &place, thp_defrag_compact(k, v), &pfn, cycles)) {
      thp_wake_kcompactd(k, cpu, v, &place, k->pmd_order);
      cpu->ctr->c[CTR_THP_FAULT_FALLBACK]++;
      thp_count_mthp(cpu, k->pmd_order, MTHP_STAT_ANON_FAULT_FALLBACK); /* do_huge_pmd_anonymous_page, 6.12 */
      *fallback = TRUE;
      return FAULT_MAPPED;
    }
    if (!mm->pt.a.alloc(mm->pt.a.ctx, 1, &table)) {
      physmem_release(k->pm, pfn, k->pmd_order);
      return FAULT_OOM;
    }
    /* maybe_pmd_mkwrite(pmd_mkdirty()): dirty, writable where the VMA is. */
    entry = pte_make(pfn, leaf_flags(v) | PTE_PS | PTE_D | ((v->prot & PROT_W) ? PTE_RW : 0));
  }
  tables++; /* the deposited table */
  if (!pgtable_set(&mm->pt, haddr, 2, entry, &tables)) {
    mm->pt.a.release(mm->pt.a.ctx, 1, table);
    if (!zero)
      physmem_release(k->pm, pfn, k->pmd_order);
    k->oom = TRUE;
    return FAULT_OOM;
  }
  mm_deposit(mm, haddr, table);
  if (zero) {
    cpu->ctr->c[CTR_THP_ZERO_PAGE_MAPPED]++;
    *cycles += k->zero_page_cycles;
    what = "thp-zero-page";
  } else {
    /* add_mm_counter(MM_ANONPAGES, HPAGE_PMD_NR) in
     * __do_huge_pmd_anonymous_page; set_huge_zero_folio counts nothing. */
    mm->rss_pages += k->pmd_bytes >> k->base_shift;
    *cycles += new_thp(k, cpu, pfn, va - haddr);
    what = "thp";
  }
  kernel_touch_huge(k, cpu, mm, haddr, k->pmd_bytes, va);
  charge_tables(k, cpu, tables, cycles);
  emit_fault(k, cpu, mm, what, va, kind, tables, *cycles);
  return FAULT_MAPPED;
}

/* A fault on a present huge PMD of an anonymous VMA.  *fallback is set
 * when the PMD was split and the PTE level must handle the fault. */
static FaultResult huge_present(Kernel *k, KCpu *cpu, Mm *mm, PtNode *n, unsigned idx, uint64_t va,
                                AccessKind kind, uint64_t *cycles, gboolean *fallback)
{
  uint64_t haddr = va & ~(k->pmd_bytes - 1);
  uint64_t e = n->e[idx];
  const char *what;
  if (kind == ACC_STORE && (e & PTE_SW_ZERO)) {
    /* do_huge_pmd_wp_page (Linux 6.12 mm/huge_memory.c): a write to the
     * huge zero page goes to `fallback`, __split_huge_pmd and
     * VM_FAULT_FALLBACK; handle_pte_fault then finds a zero-page PTE and
     * do_wp_page copies that one base page.  (do_huge_zero_wp_pmd, which
     * maps a new THP instead, came in 6.13.)  No event is counted. */
    if (!thp_split_pmd(k, cpu, mm, haddr, cycles))
      return FAULT_OOM;
    kernel_touch_fault(k, cpu, mm, va);
    *fallback = TRUE;
    return FAULT_MAPPED;
  } else if (kind == ACC_STORE && !(e & PTE_RW)) {
    /* The THP is ours alone: reuse it (do_huge_pmd_wp_page). */
    pgtable_entry_set(n, idx, e | PTE_RW | PTE_D);
    kernel_flush_tlb(k, cpu, mm, haddr, haddr + k->pmd_bytes, k->geo.shift[2], FALSE);
    *cycles += k->zero_page_cycles;
    what = "thp-wp-reuse";
  } else {
    *cycles += k->zero_page_cycles; /* spurious: fixed already */
    return FAULT_MAPPED;
  }
  emit_fault(k, cpu, mm, what, va, kind, 0, *cycles);
  return FAULT_MAPPED;
}

/* ---- hugetlb --------------------------------------------------------------- */

static FaultResult hugetlb_fault(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t va, AccessKind kind,
                                 uint64_t *cycles)
{
  HugetlbSize size = (v->flags & MAP_F_HUGETLB_1G) ? HPAGE_1G : HPAGE_2M;
  unsigned want = size == HPAGE_1G ? 3 : 2;
  uint64_t span = pgtable_entry_span(&mm->pt.g, want);
  uint64_t haddr = va & ~(span - 1);
  unsigned level, idx, tables = 0;
  PtNode *n = pgtable_lookup(&mm->pt, va, &level, &idx);
  uint64_t e = n->e[idx];
  const char *what;
  if (level == want && (e & PTE_P) && (e & PTE_PS)) {
    if (kind == ACC_STORE && !(e & PTE_RW)) {
      /* hugetlb_wp on a page this mm alone maps: reuse it. */
      pgtable_entry_set(n, idx, e | PTE_RW | PTE_D);
      kernel_flush_tlb(k, cpu, mm, haddr, haddr + span, mm->pt.g.shift[want], FALSE);
      *cycles += k->zero_page_cycles;
      emit_fault(k, cpu, mm, "hugetlb-wp-reuse", va, kind, 0, *cycles);
    } else {
      *cycles += k->zero_page_cycles;
    }
    return FAULT_MAPPED;
  }
  if (level < want || e)
    return segv(k, cpu, mm, va, "sigbus", cycles); /* something else maps the range */
  uint64_t pfn;
  MemPlacement place;
  int nodes[64];
  mempolicy_place(k, mm, v, haddr, hugetlb_order(k->hugetlb, size), cpu->node, &place);
  if (!hugetlb_alloc(k->hugetlb, size, nodes, mempolicy_nodes(k, &place, nodes), &pfn)) {
    cpu->ctr->c[CTR_HUGETLB_ALLOC_FAIL]++;
    return segv(k, cpu, mm, va, "sigbus", cycles);
  }
  /* A private mapping is mapped writable only by a write; a shared one as
   * the VMA allows (make_huge_pte). */
  gboolean writable = (v->prot & PROT_W) && (kind == ACC_STORE || (v->flags & MAP_F_SHARED));
  uint64_t entry = pte_make(pfn, leaf_flags(v) | PTE_PS | (writable ? PTE_RW | PTE_D : 0));
  if (!pgtable_set(&mm->pt, haddr, want, entry, &tables)) {
    hugetlb_put(k->hugetlb, pfn);
    k->oom = TRUE;
    return FAULT_OOM;
  }
  uint64_t clear = kernel_clear_cycles(k, span);
  clear += kernel_dram_bulk(k, cpu, pfn, span, 0, clear);
  kernel_fill_clear_huge(k, cpu, pfn, span, va - haddr); /* hugetlb_no_page: folio_zero_user */
  cpu->ctr->c[CTR_ZEROING_CYCLES] += clear;
  cpu->ctr->c[CTR_HUGETLB_FAULTS]++;
  cpu->ctr->c[CTR_MEM_USED_BYTES] += span;
  mm->rss_pages += span >> k->base_shift;
  kernel_touch_huge(k, cpu, mm, haddr, span, va);
  *cycles += k->anon_cycles + clear;
  charge_tables(k, cpu, tables, cycles);
  /* Named by the page size: 2M and 1G on x86-64, 16M on ppc64 (64K pages). */
  what = span == (UINT64_C(1) << 30) ? "hugetlb-1g" : span == (UINT64_C(1) << 24) ? "hugetlb-16m" : "hugetlb-2m";
  emit_fault(k, cpu, mm, what, va, kind, tables, *cycles);
  return FAULT_MAPPED;
}

/* ---- the handler ------------------------------------------------------------ */

static FaultResult fault_once(Kernel *k, KCpu *cpu, Mm *mm, uint64_t va, AccessKind kind, uint64_t *cycles)
{
  *cycles = 0;
  k->alloc_node = cpu->node;
  Vma *v = mm_find_vma(mm, va);
  if (!v && k->map_on_demand && va < k->user_va_limit) {
    kernel_map_on_demand(k, mm, va);
    v = mm_find_vma(mm, va);
  }
  if (!v)
    return segv(k, cpu, mm, va, "no-vma", cycles);
  if (!vma_allows(v, kind))
    return segv(k, cpu, mm, va, "protection", cycles);
  if (v->flags & MAP_F_HUGETLB)
    return hugetlb_fault(k, cpu, mm, v, va, kind, cycles);
  /* One descent serves the NUMA test, the paths below and the new PTE. */
  PtFound found;
  pgtable_find(&mm->pt, va, &found);
  if (numa_balance_marked_found(&found)) /* a PROT_NONE entry of the NUMA scanner */
    return numa_balance_fault(k, cpu, mm, v, va, kind, cycles);

  unsigned level = found.level, idx = found.index, tables = 0;
  PtNode *n = found.table;
  uint64_t e = n->e[idx];
  gboolean fallback = FALSE; /* a huge path handed the fault to the PTE level */
  if (level == 2 && (e & PTE_P) && (e & PTE_PS)) {
    FaultResult r = huge_present(k, cpu, mm, n, idx, va, kind, cycles, &fallback);
    if (r != FAULT_MAPPED || !fallback)
      return r;
  } else {
    uint64_t haddr = va & ~(k->pmd_bytes - 1);
    gboolean huge_ok = level >= 2 && !e && thp_vma_allowed(k, mm, v) && thp_range_in_vma(k, v, haddr);
    if (huge_ok)
      khugepaged_enter_vma(k->khugepaged, mm, v); /* as do_huge_pmd_anonymous_page */
    if (huge_ok && k->thp->fault_huge(k, mm, v, haddr)) {
      FaultResult r = huge_anonymous(k, cpu, mm, v, va, kind, cycles, &fallback);
      if (r != FAULT_MAPPED || !fallback)
        return r;
    }
  }
  if (fallback) {
    pgtable_find(&mm->pt, va, &found);
    level = found.level;
    idx = found.index;
    n = found.table;
    e = n->e[idx];
  }

  const char *what;
  FaultResult r;
  uint64_t page_va = va & ~(k->base_bytes - 1);
  if ((e & PTE_P) && level == 1 && (e & PTE_SW_ZERO) && kind == ACC_STORE) {
    /* Copy-on-write of the zero page: a fresh zeroed page replaces it. */
    r = map_new_page(k, cpu, mm, v, page_va, &found, KERNEL_FILL_CLEAR, cycles, &tables);
    if (r != FAULT_MAPPED)
      return r;
    kernel_flush_tlb_4k(k, cpu, mm, page_va, page_va + k->base_bytes);
    /* wp_page_copy: the zero page had no folio, the copy is a new anon
     * page (inc_mm_counter(MM_ANONPAGES), Linux 6.12 mm/memory.c). */
    mm->rss_pages++;
    cpu->ctr->c[CTR_FAULTS_COW]++;
    what = "cow";
  } else if ((e & PTE_P) && level == 1 && (e & PTE_SW_FILE) && kind == ACC_STORE && !(v->flags & MAP_F_SHARED)) {
    /* A write to a page-cache page mapped read-only in a private mapping:
     * wp_page_copy, a new anonymous page with its contents. */
    r = map_new_page(k, cpu, mm, v, page_va, &found, pte_pfn(e), cycles, &tables);
    if (r != FAULT_MAPPED)
      return r;
    kernel_flush_tlb_4k(k, cpu, mm, page_va, page_va + k->base_bytes);
    mm->rss_pages++;
    cpu->ctr->c[CTR_FAULTS_COW]++;
    cpu->ctr->c[CTR_FAULTS_FILE]++;
    what = "file-cow";
  } else if ((e & PTE_P) && kind == ACC_STORE && !(e & PTE_RW)) {
    /* Write to an exclusive page made read-only by mprotect: reuse it
     * (wp_page_reuse).  The handler allocates nothing, like a zero-page fault. */
    pgtable_entry_set(n, idx, e | PTE_RW | PTE_D);
    kernel_flush_tlb_4k(k, cpu, mm, page_va, page_va + k->base_bytes);
    *cycles += k->zero_page_cycles;
    what = "wp-reuse";
  } else if (e & PTE_P) {
    /* Already fixed (by another CPU or a huge mapping): nothing to do but
     * return from the trap, priced like a fault that allocates nothing. */
    *cycles += k->zero_page_cycles;
    return FAULT_MAPPED;
  } else if (v->flags & MAP_F_FILE) {
    r = file_fault(k, cpu, mm, v, va, kind, &found, cycles, &tables, &what);
    if (r != FAULT_MAPPED)
      return r;
  } else if (kind != ACC_STORE) {
    uint64_t entry = pte_make(k->zero_pfn, leaf_flags(v) | PTE_SW_ZERO);
    if (!pgtable_set(&mm->pt, page_va, 1, entry, &tables)) {
      k->oom = TRUE;
      return FAULT_OOM;
    }
    *cycles += k->zero_page_cycles;
    cpu->ctr->c[CTR_FAULTS_ZERO_PAGE]++;
    kernel_touch_fault(k, cpu, mm, va);
    /* No mm counter for the zero page (do_anonymous_page's zero-page path
     * jumps past inc_mm_counter, Linux 6.12 mm/memory.c). */
    what = "zero-page";
  } else {
    gboolean folio = FALSE;
    r = mthp_anonymous(k, cpu, mm, v, va, cycles, &folio);
    if (r != FAULT_MAPPED || folio)
      return r;
    r = map_new_page(k, cpu, mm, v, page_va, &found, KERNEL_FILL_CLEAR, cycles, &tables);
    if (r != FAULT_MAPPED)
      return r;
    cpu->ctr->c[CTR_FAULTS_ANON]++;
    kernel_touch_fault(k, cpu, mm, va);
    mm->rss_pages++; /* inc_mm_counter(MM_ANONPAGES): one base page */
    what = "anon";
  }
  charge_tables(k, cpu, tables, cycles);
  emit_fault(k, cpu, mm, what, va, kind, tables, *cycles);
  return FAULT_MAPPED;
}

FaultResult fault_handle(Kernel *k, KCpu *cpu, Mm *mm, uint64_t va, AccessKind kind, uint64_t *cycles)
{
  cpu->ctr->c[CTR_PAGE_FAULTS]++;
  *cycles = 0;
  for (;;) {
    uint64_t c;
    k->pt_fill_cpu = cpu; /* the page-table pages it allocates are zeroed on cpu */
    FaultResult r = fault_once(k, cpu, mm, va, kind, &c);
    k->pt_fill_cpu = NULL;
    *cycles += c;
    if (r != FAULT_OOM || !k->oom_kill_policy)
      return r;
    /* out_of_memory: the victim's memory is free now; the fault runs again
     * (each pass kills a process, so this ends). */
    k->oom = TRUE; /* every FAULT_OOM path sets it; made sure */
    Mm *victim = oom_kill(k, cpu, mm->pid, OOM_TRIGGER_FAULT);
    if (!victim)
      return FAULT_OOM;
    if (victim == mm)
      return FAULT_KILLED;
  }
}
