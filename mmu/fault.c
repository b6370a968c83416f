/*
 * fault.c - anonymous page faults, as mm/memory.c handles them.
 *
 * Models: VMA lookup and permission check (SIGSEGV counted, not fatal), the
 * zero page for read faults (do_anonymous_page without FAULT_FLAG_WRITE),
 * a zeroed movable order-0 page for write faults, copy-on-write of a zero-page
 * mapping (do_wp_page: a fresh zeroed page, the old translation flushed),
 * page-table pages allocated on the way, and the cost of each.  Node choice
 * is first touch: the faulting CPU's node, falling back by distance.
 * Leaves out: swap, file-backed memory, userfaultfd, and fault-around.
 * Costs: fault.* and mem.* settings (mmu-facts section 7).
 */
#include "config.h"
#include "fault.h"

#include "cpu.h"
#include "events.h"
#include "machine.h"

static uint64_t now_ns(const Kernel *k, const Cpu *cpu)
{
  return (uint64_t)((double)cpu->clock / k->cycles_per_ns);
}

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

static FaultResult segv(Kernel *k, Cpu *cpu, Mm *mm, uint64_t va, const char *why, uint64_t *cycles)
{
  cpu->ctr.c[CTR_SEGV]++;
  *cycles = k->segv_cycles;
  if (events_enabled(k->ev))
    events_emit(k->ev, now_ns(k, cpu), cpu->id, mm->pid, cpu->cur ? cpu->cur->tid : 0, "segv",
                "va=%#" G_GINT64_MODIFIER "x reason=%s", va, why);
  return FAULT_SEGV;
}

/* Allocate and map a zeroed page for a write at va. */
static FaultResult map_new_page(Kernel *k, Cpu *cpu, Mm *mm, const Vma *v, uint64_t va, uint64_t *cycles,
                                unsigned *tables)
{
  uint64_t pfn;
  if (!physmem_alloc(k->pm, cpu->node, 0, MT_MOVABLE, &pfn)) {
    k->oom = TRUE;
    return FAULT_OOM;
  }
  uint64_t entry = pte_make(pfn, leaf_flags(v) | PTE_RW | PTE_D);
  if (!pgtable_set(&mm->pt, va, 1, entry, tables)) {
    physmem_release(k->pm, pfn, 0);
    k->oom = TRUE;
    return FAULT_OOM;
  }
  uint64_t clear = kernel_clear_cycles(k, 4096);
  cpu->ctr.c[CTR_ZEROING_CYCLES] += clear;
  cpu->ctr.c[CTR_MEM_USED] += 4096;
  *cycles += k->anon_cycles + clear;
  return FAULT_MAPPED;
}

FaultResult fault_handle(Kernel *k, Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, uint64_t *cycles)
{
  *cycles = 0;
  cpu->ctr.c[CTR_PAGE_FAULTS]++;
  k->alloc_node = cpu->node;
  Vma *v = mm_find_vma(mm, va);
  if (!v && k->map_on_demand && va < k->arch->user_va_limit(k->s)) {
    kernel_map_on_demand(k, mm, va);
    v = mm_find_vma(mm, va);
  }
  if (!v)
    return segv(k, cpu, mm, va, "no-vma", cycles);
  if (!vma_allows(v, kind))
    return segv(k, cpu, mm, va, "protection", cycles);

  unsigned level, idx, tables = 0;
  PtNode *n = pgtable_lookup(&mm->pt, va, &level, &idx);
  uint64_t e = n->e[idx];
  const char *what;
  FaultResult r;
  uint64_t page_va = va & ~0xfffULL;

  if ((e & PTE_P) && level == 1 && (e & PTE_SW_ZERO) && kind == ACC_STORE) {
    /* Copy-on-write of the zero page: a fresh zeroed page replaces it. */
    r = map_new_page(k, cpu, mm, v, page_va, cycles, &tables);
    if (r != FAULT_MAPPED)
      return r;
    machine_flush_range(k->m, cpu, mm, page_va, page_va + 4096);
    cpu->ctr.c[CTR_FAULTS_COW]++;
    what = "cow";
  } else if ((e & PTE_P) && kind == ACC_STORE && !(e & PTE_RW)) {
    /* Write to an exclusive page made read-only by mprotect: reuse it
     * (wp_page_reuse).  The handler allocates nothing, like a zero-page fault. */
    n->e[idx] = e | PTE_RW | PTE_D;
    machine_flush_range(k->m, cpu, mm, page_va, page_va + 4096);
    *cycles += k->zero_page_cycles;
    what = "wp-reuse";
  } else if (e & PTE_P) {
    /* Already fixed (by another CPU or a huge mapping): nothing to do but
     * return from the trap, priced like a fault that allocates nothing. */
    *cycles += k->zero_page_cycles;
    return FAULT_MAPPED;
  } else if (kind != ACC_STORE) {
    uint64_t entry = pte_make(k->zero_pfn, leaf_flags(v) | PTE_SW_ZERO);
    if (!pgtable_set(&mm->pt, page_va, 1, entry, &tables)) {
      k->oom = TRUE;
      return FAULT_OOM;
    }
    *cycles += k->zero_page_cycles;
    cpu->ctr.c[CTR_FAULTS_ZERO_PAGE]++;
    cpu->ctr.c[CTR_MEM_TOUCHED] += 4096;
    mm->rss_pages++;
    what = "zero-page";
  } else {
    r = map_new_page(k, cpu, mm, v, page_va, cycles, &tables);
    if (r != FAULT_MAPPED)
      return r;
    cpu->ctr.c[CTR_FAULTS_ANON]++;
    cpu->ctr.c[CTR_MEM_TOUCHED] += 4096;
    mm->rss_pages++;
    what = "anon";
  }
  if (tables) {
    cpu->ctr.c[CTR_PT_PAGES_ALLOC] += tables;
    *cycles += tables * (k->ptpage_cycles + kernel_clear_cycles(k, 4096));
  }
  if (events_enabled(k->ev))
    events_emit(k->ev, now_ns(k, cpu), cpu->id, mm->pid, cpu->cur ? cpu->cur->tid : 0, "fault",
                "kind=%s va=%#" G_GINT64_MODIFIER "x access=%c tables=%u cycles=%" G_GUINT64_FORMAT, what, va,
                "RWDX"[kind], tables, *cycles);
  return FAULT_MAPPED;
}
