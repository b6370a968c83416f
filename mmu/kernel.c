/*
 * kernel.c - boot, address spaces and the memory system calls of a trace.
 *
 * Models: the shared zero page reserved at boot; one mm per process with a
 * PCID; mmap (anonymous, private or shared, stack, hugetlb flag kept for the
 * huge-page code), munmap (pages freed, TLBs shot down, emptied page tables
 * freed, as unmap_region() and free_pgtables() do), mprotect (write
 * permission removed from PTEs when it is dropped; regained lazily on the
 * next write fault), madvise(DONTNEED) (pages zapped), prctl and mempolicy
 * recorded on the mm and VMAs.  Costs of the calls themselves are the TLB
 * flushes they cause; the syscall entry is not priced.
 * Sources: mm/mmap.c, mm/mprotect.c, mm/madvise.c, kernel/sys.c.
 */
#include "config.h"
#include "kernel.h"

#include <math.h>
#include "cpu.h"
#include "events.h"
#include "khugepaged.h"
#include "machine.h"

static gboolean pt_alloc(void *ctx, unsigned level, uint64_t *pfn)
{
  Kernel *k = ctx;
  if (!physmem_alloc(k->pm, k->alloc_node, 0, MT_UNMOVABLE, pfn)) {
    k->oom = TRUE;
    return FALSE;
  }
  return TRUE;
}

static void pt_release(void *ctx, unsigned level, uint64_t pfn)
{
  Kernel *k = ctx;
  physmem_release(k->pm, pfn, 0);
}

static uint64_t ns_to_cycles(const Kernel *k, double ns)
{
  return (uint64_t)llround(ns * k->cycles_per_ns);
}

Kernel *kernel_new(const Settings *s, const ArchOps *arch, Machine *m, GError **error)
{
  Kernel *k = g_new0(Kernel, 1);
  k->s = s;
  k->arch = arch;
  k->m = m;
  k->cycles_per_ns = (double)settings_int(s, SET_CPU_FREQ_MHZ) / 1000.0;
  k->pm = physmem_new(s, error);
  if (!k->pm) {
    g_free(k);
    return NULL;
  }
  arch->pgtable_geometry(s, &k->geo);
  k->mms = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)mm_free);
  k->thp = thp_policy_from_settings(s);
  k->next_asid = 1;
  k->zero_page_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_ZERO_PAGE_NS));
  k->anon_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_ANON_NS));
  k->segv_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_SEGV_NS));
  k->ptpage_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_PTPAGE_NS));
  k->invlpg_cycles = ns_to_cycles(k, settings_double(s, SET_TLB_INVLPG_NS));
  k->full_flush_cycles = ns_to_cycles(k, settings_double(s, SET_TLB_FULL_FLUSH_NS));
  k->flush_ceiling_pages = (unsigned)settings_int(s, SET_TLB_FLUSH_CEILING_PAGES);
  k->clear_4k_cycles = kernel_clear_cycles(k, 4096);
  k->copy_4k_cycles = kernel_copy_cycles(k, 4096);
  if (!(k->khugepaged = khugepaged_new(k, error))) {
    kernel_free(k);
    return NULL;
  }
  /* The zero page, reserved at boot (mm/memory.c empty_zero_page). */
  if (!physmem_alloc(k->pm, 0, 0, MT_UNMOVABLE, &k->zero_pfn)) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "no memory left for the zero page: raise machine.mem_per_node");
    kernel_free(k);
    return NULL;
  }
  return k;
}

void kernel_free(Kernel *k)
{
  if (!k)
    return;
  khugepaged_free(k->khugepaged);
  if (k->mms)
    g_hash_table_destroy(k->mms); /* page tables go back to physmem first */
  physmem_free(k->pm);
  g_free(k);
}

static uint64_t bandwidth_cycles(const Kernel *k, uint64_t bytes, SettingId hot, SettingId stream)
{
  gboolean fits = bytes <= (uint64_t)settings_int(k->s, SET_CACHE_L2_SIZE);
  double bw = settings_double(k->s, fits ? hot : stream);
  return ns_to_cycles(k, (double)bytes / bw);
}

uint64_t kernel_clear_cycles(const Kernel *k, uint64_t bytes)
{
  return bandwidth_cycles(k, bytes, SET_MEM_CLEAR_HOT_BYTES_PER_NS, SET_MEM_CLEAR_STREAM_BYTES_PER_NS);
}

uint64_t kernel_copy_cycles(const Kernel *k, uint64_t bytes)
{
  return bandwidth_cycles(k, bytes, SET_MEM_COPY_HOT_BYTES_PER_NS, SET_MEM_COPY_STREAM_BYTES_PER_NS);
}

const PtAllocator kernel_pt_allocator_template = { pt_alloc, pt_release, NULL };

Mm *kernel_mm(Kernel *k, uint32_t pid)
{
  Mm *mm = g_hash_table_lookup(k->mms, GUINT_TO_POINTER(pid));
  if (mm)
    return mm;
  PtAllocator a = kernel_pt_allocator_template;
  a.ctx = k;
  /* Without PCIDs every context uses tag 0 and a switch flushes. */
  unsigned asid = settings_bool(k->s, SET_TLB_PCID) ? k->next_asid++ : 0;
  mm = mm_new(pid, (uint16_t)(asid & TLB_ASID_MASK), &k->geo, &a);
  if (!mm)
    return NULL;
  g_hash_table_insert(k->mms, GUINT_TO_POINTER(pid), mm);
  return mm;
}

/* ---- unmapping ---------------------------------------------------------------- */

typedef struct {
  Kernel *k;
  Mm *mm;
  uint64_t freed_pages;
  uint64_t leaves;
  unsigned deposits;   /* tables deposited under huge PMDs, freed with them */
} ZapCtx;

static void zap_leaf(void *ctx, uint64_t va, unsigned level, uint64_t entry)
{
  ZapCtx *z = ctx;
  z->leaves++;
  uint64_t pages = pgtable_entry_span(&z->mm->pt.g, level) >> 12;
  uint64_t table;
  if (level > 1 && mm_withdraw(z->mm, va, &table)) { /* zap_deposited_table */
    z->mm->pt.a.release(z->mm->pt.a.ctx, 1, table);
    z->deposits++;
  }
  z->mm->rss_pages -= MIN(z->mm->rss_pages, pages);
  if (entry & PTE_SW_ZERO)
    return;
  unsigned order = 0;
  while ((1ULL << order) < pages)
    order++;
  physmem_release(z->k->pm, pte_pfn(entry), order);
  z->freed_pages += pages;
}

/* Remove the pages of [start, end): clear PTEs, shoot down TLBs, free the
 * pages and the page tables left empty (the order of zap_page_range() plus
 * free_pgtables()). */
static void zap_range(Kernel *k, Cpu *cpu, Mm *mm, uint64_t start, uint64_t end)
{
  ZapCtx z = { k, mm, 0, 0, 0 };
  unsigned tables = pgtable_clear_range(&mm->pt, start, end, zap_leaf, &z) + z.deposits;
  if (!z.leaves && !tables)
    return; /* nothing was mapped: nothing to flush */
  machine_flush_range(k->m, cpu, mm, start, end);
  if (tables) {
    cpu->ctr.c[CTR_PT_PAGES_FREED] += tables;
    machine_tables_freed(k->m, mm);
  }
  cpu->ctr.c[CTR_MEM_USED] -= MIN(cpu->ctr.c[CTR_MEM_USED], z.freed_pages * 4096);
}

void kernel_map_on_demand(Kernel *k, Mm *mm, uint64_t va)
{
  /* One 2M-aligned rw region around the address, merged with neighbours,
   * like the heap and mmap regions a recorded program had. */
  uint64_t start = va & ~((1ULL << 21) - 1), end = start + (1ULL << 21);
  guint n;
  guint first = mm_split_range(mm, start, end, &n);
  /* Fill only the holes between existing VMAs. */
  uint64_t cur = start;
  GArray *holes = g_array_new(FALSE, FALSE, sizeof(Vma));
  for (guint i = first; i < first + n; i++) {
    const Vma *v = mm_vma(mm, i);
    if (v->start > cur)
      g_array_append_val(holes, ((Vma){ .start = cur, .end = v->start, .prot = PROT_R | PROT_W, .flags = MAP_F_ONDEMAND }));
    cur = v->end;
  }
  if (cur < end)
    g_array_append_val(holes, ((Vma){ .start = cur, .end = end, .prot = PROT_R | PROT_W, .flags = MAP_F_ONDEMAND }));
  for (guint i = 0; i < holes->len; i++) {
    mm_insert_vma(mm, &g_array_index(holes, Vma, i));
    khugepaged_enter_vma(k->khugepaged, mm, &g_array_index(holes, Vma, i));
  }
  g_array_free(holes, TRUE);
  mm_merge_vmas(mm);
}

static gboolean range_ok(Kernel *k, Cpu *cpu, Mm *mm, const TraceRecord *r)
{
  uint64_t limit = k->arch->user_va_limit(k->s);
  if (r->len == 0 || (r->addr & 0xfff) || r->addr + r->len > limit || r->addr + r->len < r->addr) {
    cpu->ctr.c[CTR_SEGV]++;
    if (events_enabled(k->ev))
      events_emit(k->ev, (uint64_t)((double)cpu->clock / k->cycles_per_ns), cpu->id, mm->pid,
                  cpu->cur ? cpu->cur->tid : 0, "einval", "addr=%#" G_GINT64_MODIFIER "x len=%" G_GUINT64_FORMAT,
                  r->addr, r->len);
    return FALSE;
  }
  return TRUE;
}

uint64_t kernel_syscall(Kernel *k, Cpu *cpu, Mm *mm, const TraceRecord *r)
{
  uint64_t before = cpu->clock;
  k->alloc_node = cpu->node;
  uint64_t len = (r->len + 0xfff) & ~0xfffULL;
  TraceRecord rr = *r;
  rr.len = len;
  if (r->type != REC_PRCTL && !range_ok(k, cpu, mm, &rr))
    return 0;
  uint64_t start = r->addr, end = r->addr + len;
  switch ((TraceRecordType)r->type) {
  case REC_MMAP: {
    zap_range(k, cpu, mm, start, end); /* MAP_FIXED replaces what was there */
    mm_remove_range(mm, start, end);
    Vma v = { .start = start, .end = end, .prot = r->prot, .flags = r->flags };
    mm_insert_vma(mm, &v);
    mm_merge_vmas(mm);
    khugepaged_enter_vma(k->khugepaged, mm, &v);
    break;
  }
  case REC_MUNMAP:
    zap_range(k, cpu, mm, start, end);
    mm_remove_range(mm, start, end);
    break;
  case REC_MPROTECT: {
    guint n;
    guint first = mm_split_range(mm, start, end, &n);
    for (guint i = first; i < first + n; i++)
      ((Vma *)mm_vma(mm, i))->prot = r->prot;
    uint64_t set = 0, clear = 0;
    if (!(r->prot & PROT_W))
      clear |= PTE_RW;
    if (r->prot & PROT_X)
      clear |= PTE_NX;
    else
      set |= PTE_NX;
    pgtable_change_range(&mm->pt, start, end, set, clear);
    machine_flush_range(k->m, cpu, mm, start, end);
    mm_merge_vmas(mm);
    break;
  }
  case REC_MADVISE: {
    guint n;
    guint first = mm_split_range(mm, start, end, &n);
    switch ((TraceAdvice)r->arg) {
    case ADV_DONTNEED:
      zap_range(k, cpu, mm, start, end);
      break;
    case ADV_HUGEPAGE:
    case ADV_NOHUGEPAGE:
      for (guint i = first; i < first + n; i++) {
        ((Vma *)mm_vma(mm, i))->thp = r->arg == ADV_HUGEPAGE ? VMA_THP_HUGEPAGE : VMA_THP_NOHUGEPAGE;
        khugepaged_enter_vma(k->khugepaged, mm, mm_vma(mm, i)); /* hugepage_madvise */
      }
      break;
    case ADV_COLLAPSE:
      khugepaged_madvise_collapse(k->khugepaged, cpu, mm, start, end);
      break;
    }
    mm_merge_vmas(mm);
    break;
  }
  case REC_PRCTL:
    if (r->arg == PRCTL_THP_DISABLE)
      mm->thp_disable = r->arg2 != 0;
    break;
  case REC_MEMPOLICY: {
    guint n;
    guint first = mm_split_range(mm, start, end, &n);
    for (guint i = first; i < first + n; i++) {
      Vma *v = (Vma *)mm_vma(mm, i);
      v->policy = (uint8_t)r->arg;
      v->policy_nodes = r->arg2;
    }
    mm_merge_vmas(mm);
    break;
  }
  default:
    break;
  }
  return cpu->clock - before;
}
