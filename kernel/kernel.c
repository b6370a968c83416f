/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel.c - boot, address spaces and the memory system calls of a trace.
 *
 * Models: the shared zero page reserved at boot, and the hugetlbfs pools
 * (kernel/hugetlb.c); one mm per process with a PCID; mmap (anonymous, private
 * or shared, stack, hugetlb with 2M or 1G pages; a file mapping keeps the
 * file's name and offset, by which the page cache names its pages), munmap (pages freed, TLBs
 * shot down, emptied page tables freed, as unmap_region() and
 * free_pgtables() do), mprotect (write permission removed from PTEs when it
 * is dropped; given back at once to exclusive anonymous pages, as
 * change_protection does since 6.0, and on the next write fault under
 * kernel.version=3.8; the flush covers the entries changed at the stride
 * of the smallest level changed), madvise(DONTNEED)
 * (pages zapped), prctl and mempolicy recorded on the mm and VMAs.  Huge
 * pages: a range edge that falls inside a THP's PMD splits that PMD first
 * (vma_adjust_trans_huge, zap_pmd_range), a PMD wholly inside the range is
 * unmapped or changed whole; a THP left partly mapped goes on the deferred
 * split queue (kernel/thp.c); an edge inside a hugetlb page refuses the call
 * (EINVAL, hugetlb_vm_op_split), as does a hugetlb mmap whose address or
 * length is not a multiple of its page size.  Costs of the calls themselves
 * are the TLB flushes and PMD splits they cause; the syscall entry is not
 * priced.  Touched base pages under huge mappings are tracked here
 * (kernel_touch, see kernel.h).
 * Sources: mm/mmap.c, mm/mprotect.c, mm/madvise.c, mm/huge_memory.c,
 * mm/hugetlb.c, kernel/sys.c.
 */
#include "config.h"
#include "errors.h"
#include "tlb.h"
#include "kernel.h"

#include <math.h>
#include <string.h>
#include "events.h"
#include "filemap.h"
#include "kcompactd.h"
#include "rmap.h"
#include "khugepaged.h"
#include "hugetlb.h"
#include "numa_balance.h"
#include "mempolicy.h"
#include "oom_kill.h"

/* A bitmap of the base-page granules of one huge mapping (kernel_touch). */
typedef struct {
  const Mm *mm;   /* mm, base and span are the key */
  uint64_t base;  /* first va */
  uint64_t span;  /* bytes: a PMD's or a PUD's span */
  uint64_t bits[];
} TouchMap;

static gboolean pt_alloc(void *ctx, unsigned level, uint64_t *pfn)
{
  Kernel *k = ctx;
  (void)level;
  if (k->pt_reserved) {
    k->pt_reserved = FALSE;
    *pfn = k->pt_reserved_pfn;
    return TRUE;
  }
  if (!physmem_alloc(k->pm, k->alloc_node, 0, MT_UNMOVABLE, pfn)) {
    k->oom = TRUE;
    return FALSE;
  }
  /* pte_alloc_one and the upper levels' allocations take GFP_PGTABLE_USER,
   * __GFP_ZERO: the faulting CPU clears the page (post_alloc_hook,
   * kernel_init_pages; Linux 6.12), priced in the fault (fault.c
   * charge_tables). */
  if (k->pt_fill_cpu)
    kernel_fill_clear(k, k->pt_fill_cpu, *pfn, 4096);
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

void kernel_attach_cpus(Kernel *k, KCpu **cpus, unsigned n_cpus)
{
  k->cpus = cpus;
  k->n_cpus = n_cpus;
}

void kernel_event(const Kernel *k, const KCpu *cpu, uint32_t pid, const char *event, const char *fmt, ...)
{
  if (!events_enabled(k->ev))
    return;
  va_list ap;
  va_start(ap, fmt);
  events_emitv(k->ev, kernel_now_ns(k, cpu), (int)cpu->id, pid, cpu->cur ? cpu->cur->tid : 0, event, fmt, ap);
  va_end(ap);
}

gboolean kernel_cpu_setting(const Settings *s, SettingId id, const char *minus_one, int64_t *cpu, GError **error)
{
  int64_t n_cpus = settings_int(s, SET_MACHINE_NODES) * settings_int(s, SET_MACHINE_CPUS_PER_NODE);
  *cpu = settings_int(s, id);
  if (*cpu < n_cpus)
    return TRUE;
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
              "setting '%s' is %" G_GINT64_FORMAT " but the machine's CPUs are 0..%" G_GINT64_FORMAT "; use -1 for %s",
              settings_def(id)->name, *cpu, n_cpus - 1, minus_one);
  return FALSE;
}

uint64_t kernel_ns_to_cycles(const Kernel *k, double ns)
{
  return ns_to_cycles(k, ns);
}

static guint touch_hash(gconstpointer key)
{
  const TouchMap *t = key;
  uint64_t x = ((uint64_t)(guintptr)t->mm >> 4) * UINT64_C(0x9e3779b97f4a7c15) ^ (t->base >> 21) ^ t->span;
  return (guint)(x ^ (x >> 32));
}

static gboolean touch_equal(gconstpointer a, gconstpointer b)
{
  const TouchMap *x = a, *y = b;
  return x->mm == y->mm && x->base == y->base && x->span == y->span;
}

Kernel *kernel_new(const Settings *s, const KernelArch *arch, const KernelHooks *hooks, void *hw, GError **error)
{
  Kernel *k = g_new0(Kernel, 1);
  k->s = s;
  k->version = kernel_version_of(s);
  k->hooks = hooks;
  k->hw = hw;
  k->arch_name = arch->name;
  k->user_va_limit = arch->user_va_limit;
  k->cycles_per_ns = (double)settings_int(s, SET_CPU_FREQ_MHZ) / 1000.0;
  k->geo = arch->geo;
  if ((UINT64_C(1) << k->geo.page_shift) != (uint64_t)settings_int(s, SET_MM_BASE_PAGE_SIZE)) {
    g_autofree char *want = settings_format_size((uint64_t)settings_int(s, SET_MM_BASE_PAGE_SIZE));
    g_autofree char *has = settings_format_size(UINT64_C(1) << k->geo.page_shift);
    g_autofree char *at = settings_prefix(s, SET_MM_BASE_PAGE_SIZE);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%ssetting 'mm.base_page_size' cannot be %s on %s: its page table has %s base pages", at, want,
                arch->name, has);
    g_free(k);
    return NULL;
  }
  k->base_shift = k->geo.page_shift;
  k->base_order = k->base_shift - 12;
  k->base_bytes = UINT64_C(1) << k->base_shift;
  k->pmd_shift = k->geo.shift[2];
  k->pmd_order = k->pmd_shift - 12;
  k->pmd_bytes = UINT64_C(1) << k->pmd_shift;
  k->pmd_subpages = 1u << (k->pmd_shift - k->base_shift);
  k->pm = physmem_new(s, error);
  if (!k->pm) {
    g_free(k);
    return NULL;
  }
  k->mms = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)mm_free);
  if (!(k->thp = thp_policy_from_settings(s, error))) {
    kernel_free(k);
    return NULL;
  }
  if (!thp_orders_init(k, error)) {
    kernel_free(k);
    return NULL;
  }
  k->next_asid = 1;
  /* x86 Linux tags user translations with per-CPU PCIDs where the CPU has
   * them (tlb.pcid) since 4.14; ppc64's context is the mm's everywhere. */
  if (strcmp(arch->name, "x86_64") != 0)
    k->asid_mode = KERNEL_ASID_GLOBAL;
  else
    k->asid_mode = settings_bool(s, SET_TLB_PCID) && kernel_has(k, KR_PCID) ? KERNEL_ASID_DYNAMIC : KERNEL_ASID_NONE;
  k->zero_page_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_ZERO_PAGE_NS));
  k->anon_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_ANON_NS));
  k->segv_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_SEGV_NS));
  k->ptpage_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_PTPAGE_NS));
  k->invlpg_cycles = ns_to_cycles(k, settings_double(s, SET_TLB_INVLPG_NS));
  k->full_flush_cycles = ns_to_cycles(k, settings_double(s, SET_TLB_FULL_FLUSH_NS));
  k->flush_ceiling_pages = (unsigned)settings_int(s, SET_TLB_FLUSH_CEILING_PAGES);
  k->l2_bytes = (uint64_t)settings_int(s, SET_CACHE_L2_SIZE);
  k->clear_cached = settings_bool(s, SET_MEM_CLEAR_CACHED);
  k->fills = g_array_new(FALSE, FALSE, sizeof(KernelFill));
  k->clear_4k_cycles = kernel_clear_cycles(k, 4096);
  k->clear_base_cycles = kernel_clear_cycles(k, k->base_bytes);
  k->huge_fault_cycles = ns_to_cycles(k, settings_double(s, SET_THP_HUGE_FAULT_NS));
  k->split_cycles = ns_to_cycles(k, settings_double(s, SET_THP_SPLIT_NS));
  k->file_cycles = ns_to_cycles(k, settings_double(s, SET_FAULT_FILE_NS));
  k->compact_scan_ns = settings_double(s, SET_COMPACT_SCAN_NS);
  k->compact_migrate_fixed_ns = settings_double(s, SET_COMPACT_MIGRATE_NS);
  k->compact_migrate_ns = k->compact_migrate_fixed_ns + 4096.0 / settings_double(s, SET_MEM_COPY_HOT_BYTES_PER_NS);
  rmap_init(k);
  k->thps = thp_state_new();
  k->oom_kill_policy = strcmp(settings_str(s, SET_MEM_OOM_POLICY), "kill") == 0;
  k->oom_kills = g_array_new(FALSE, TRUE, sizeof(OomKill));
  k->max_map_count = (unsigned)settings_int(s, SET_VM_MAX_MAP_COUNT);
  k->touched = g_hash_table_new_full(touch_hash, touch_equal, NULL, g_free);
  if (!mempolicy_init(k, error)) {
    kernel_free(k);
    return NULL;
  }
  if (!(k->khugepaged = khugepaged_new(k, error))) {
    kernel_free(k);
    return NULL;
  }
  if (!(k->kcompactd = kcompactd_new(k, error))) {
    kernel_free(k);
    return NULL;
  }
  if (!(k->numa_balance = numa_balance_new(k, error))) {
    kernel_free(k);
    return NULL;
  }
  k->filemap = filemap_new(k);
  /* The zero page, reserved at boot (mm/memory.c empty_zero_page). */
  if (!physmem_alloc(k->pm, 0, k->base_order, MT_UNMOVABLE, &k->zero_pfn)) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "no memory left for the zero page: raise machine.mem_per_node");
    kernel_free(k);
    return NULL;
  }
  /* The hugetlbfs pools (hugepages= on the command line, nr_hugepages). */
  k->hugetlb = hugetlb_new(s, k->pm, &k->geo, error);
  if (!k->hugetlb) {
    kernel_free(k);
    return NULL;
  }
  /* The machine's history, the background pages of a long uptime
   * (physmem_fragment), comes after the CPUs' boot allocations too: the
   * machine places it (machine_new). */
  return k;
}

void kernel_free(Kernel *k)
{
  if (!k)
    return;
  khugepaged_free(k->khugepaged);
  kcompactd_free(k->kcompactd);
  numa_balance_free(k->numa_balance);
  filemap_free(k->filemap);
  if (k->mms)
    g_hash_table_destroy(k->mms); /* page tables go back to physmem first */
  if (k->touched)
    g_hash_table_destroy(k->touched);
  thp_state_free(k->thps);
  if (k->oom_kills)
    g_array_free(k->oom_kills, TRUE);
  hugetlb_free(k->hugetlb, k->pm);
  physmem_free(k->pm);
  if (k->fills)
    g_array_free(k->fills, TRUE);
  g_free(k);
}

static uint64_t bandwidth_cycles(const Kernel *k, uint64_t bytes, SettingId hot, SettingId stream)
{
  gboolean fits = bytes <= k->l2_bytes;
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

/* ---- clears and copies in the caches --------------------------------------- */

void kernel_fills_begin(Kernel *k)
{
  g_array_set_size(k->fills, 0);
}

void kernel_fills_add(Kernel *k, uint64_t pfn, uint64_t src_pfn, uint64_t bytes)
{
  /* A clear that continues the one before is one stretch (clear_page of
   * one subpage after the other, ascending). */
  if (k->fills->len && src_pfn == KERNEL_FILL_CLEAR) {
    KernelFill *last = &g_array_index(k->fills, KernelFill, k->fills->len - 1);
    if (last->src_pfn == KERNEL_FILL_CLEAR && last->pfn + (last->bytes >> 12) == pfn) {
      last->bytes += bytes;
      return;
    }
  }
  KernelFill f = { pfn, src_pfn, bytes };
  g_array_append_val(k->fills, f);
}

void kernel_fills_end(Kernel *k, KCpu *cpu)
{
  kernel_fill_lines(k, cpu, (const KernelFill *)(const void *)k->fills->data, k->fills->len);
}

void kernel_fill_clear(Kernel *k, KCpu *cpu, uint64_t pfn, uint64_t bytes)
{
  KernelFill f = { pfn, KERNEL_FILL_CLEAR, bytes };
  kernel_fill_lines(k, cpu, &f, 1);
}

void kernel_fill_copy(Kernel *k, KCpu *cpu, uint64_t dst, uint64_t src, uint64_t bytes)
{
  KernelFill f = { dst, src, bytes };
  kernel_fill_lines(k, cpu, &f, 1);
}

void kernel_fill_clear_huge(Kernel *k, KCpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t hint)
{
  if (!k->clear_cached)
    return;
  /* folio_zero_user (mm/memory.c, Linux 6.12): a folio of more than
   * MAX_ORDER_NR_PAGES (buddy.max_order) is cleared in order
   * (clear_gigantic_page); a smaller one by process_huge_page, which
   * clears the subpage of addr_hint last "to keep its cache lines hot":
   * with the target n in the first half, the subpages from the end down to
   * 2n, else those from the start up to the mirror of n; then the rest
   * left, right, left, right towards n. */
  if (bytes > (UINT64_C(4096) << settings_int(k->s, SET_BUDDY_MAX_ORDER))) {
    kernel_fill_clear(k, cpu, pfn, bytes);
    return;
  }
  uint64_t sub = k->base_bytes, frames = sub >> 12;
  uint64_t nr = bytes / sub, n = MIN(hint / sub, nr - 1), base, l;
  kernel_fills_begin(k);
  if (2 * n <= nr) {
    base = 0;
    l = n;
    for (uint64_t i = nr; i-- > 2 * n;)
      kernel_fills_add(k, pfn + i * frames, KERNEL_FILL_CLEAR, sub);
  } else {
    base = nr - 2 * (nr - n);
    l = nr - n;
    for (uint64_t i = 0; i < base; i++)
      kernel_fills_add(k, pfn + i * frames, KERNEL_FILL_CLEAR, sub);
  }
  for (uint64_t i = 0; i < l; i++) {
    kernel_fills_add(k, pfn + (base + i) * frames, KERNEL_FILL_CLEAR, sub);
    kernel_fills_add(k, pfn + (base + 2 * l - 1 - i) * frames, KERNEL_FILL_CLEAR, sub);
  }
  kernel_fills_end(k, cpu);
}

const PtAllocator kernel_pt_allocator_template = { pt_alloc, pt_release, NULL };

Mm *kernel_mm(Kernel *k, uint32_t pid)
{
  Mm *mm = g_hash_table_lookup(k->mms, GUINT_TO_POINTER(pid));
  if (mm)
    return mm;
  PtAllocator a = kernel_pt_allocator_template;
  a.ctx = k;
  /* Without PCIDs every context uses tag 0 and a switch flushes.  The
   * PCID is given out only to a process that is created: one whose root
   * table finds no page takes none (the OOM killer's retry gets it). */
  gboolean pcid = settings_bool(k->s, SET_TLB_PCID);
  mm = mm_new(pid, (uint16_t)((pcid ? k->next_asid : 0) & TLB_ASID_MASK), &k->geo, &a);
  if (!mm)
    return NULL;
  if (pcid)
    k->next_asid++;
  mm->serial = k->next_mm_serial++;
  mm->ctx_id = mm->serial + 1; /* init_mm has 0 (last_mm_ctx_id) */
  mm->policy = k->mpol_mode; /* numa.mempolicy, as numactl sets it before exec */
  mm->policy_flags = k->mpol_flags;
  mm->policy_nodes = k->mpol_nodes;
  g_hash_table_insert(k->mms, GUINT_TO_POINTER(pid), mm);
  numa_balance_mm_new(k->numa_balance, mm);
  return mm;
}

/* ---- x86 dynamic ASIDs ---------------------------------------------------- */

/* switch_mm_irqs_off and choose_new_asid (arch/x86/mm/tlb.c, Linux 6.12):
 * a slot of cpu->asids[] that holds next's ctx_id is taken again, its
 * entries flushed only when a flush of next went out since they were made
 * current (the slot's tlb_gen behind next's); otherwise the slot next_asid
 * names is taken, round robin over KCPU_NR_DYN_ASIDS, and flushed: the mm
 * that held it loses its entries on this CPU. */
unsigned kernel_switch_asid(Kernel *k, KCpu *cpu, const Mm *next, gboolean *need_flush)
{
  unsigned asid;
  if (k->asid_mode != KERNEL_ASID_DYNAMIC) {
    /* No PCID: every CR3 write flushes the TLB (before 4.14, or without
     * the feature: choose_new_asid's !X86_FEATURE_PCID case). */
    *need_flush = TRUE;
    cpu->loaded_asid = 0;
    return 0;
  }
  for (asid = 0; asid < KCPU_NR_DYN_ASIDS; asid++)
    if (cpu->asids[asid].ctx_id == next->ctx_id) {
      *need_flush = cpu->asids[asid].tlb_gen < next->tlb_gen;
      break;
    }
  if (asid == KCPU_NR_DYN_ASIDS) {
    asid = cpu->next_asid++;
    if (asid >= KCPU_NR_DYN_ASIDS) {
      asid = 0;
      cpu->next_asid = 1;
    }
    *need_flush = TRUE;
  }
  if (*need_flush) {
    cpu->asids[asid].ctx_id = next->ctx_id;
    cpu->asids[asid].tlb_gen = next->tlb_gen;
  }
  cpu->loaded_asid = asid;
  return asid;
}

int kernel_cpu_pcid(const Kernel *k, const KCpu *cpu, const Mm *mm)
{
  if (k->asid_mode == KERNEL_ASID_GLOBAL)
    return mm->asid;
  if (k->asid_mode == KERNEL_ASID_NONE)
    return 0;
  for (unsigned asid = 0; asid < KCPU_NR_DYN_ASIDS; asid++)
    if (cpu->asids[asid].ctx_id == mm->ctx_id)
      return (int)kernel_pcid_of(asid);
  return -1;
}

void kernel_asid_flushed(const Kernel *k, KCpu *cpu, const Mm *mm)
{
  if (k->asid_mode != KERNEL_ASID_DYNAMIC)
    return;
  for (unsigned asid = 0; asid < KCPU_NR_DYN_ASIDS; asid++)
    if (cpu->asids[asid].ctx_id == mm->ctx_id)
      cpu->asids[asid].tlb_gen = mm->tlb_gen;
}

/* ---- touched base pages ------------------------------------------------------ */

static TouchMap *touch_find(const Kernel *k, const Mm *mm, uint64_t base, uint64_t span)
{
  TouchMap key = { .mm = mm, .base = base, .span = span };
  return g_hash_table_lookup(k->touched, &key);
}

/* Set the bit of va in t; TRUE when it was clear. */
static inline gboolean touch_set(const Kernel *k, TouchMap *t, uint64_t va)
{
  uint64_t i = (va - t->base) >> k->base_shift;
  uint64_t bit = UINT64_C(1) << (i % 64);
  if (t->bits[i / 64] & bit)
    return FALSE;
  t->bits[i / 64] |= bit;
  return TRUE;
}

static TouchMap *touch_covering(const Kernel *k, const Mm *mm, uint64_t va)
{
  TouchMap *t = touch_find(k, mm, va & ~(k->pmd_bytes - 1), k->pmd_bytes);
  if (!t) {
    uint64_t gig = pgtable_entry_span(&k->geo, 3);
    t = touch_find(k, mm, va & ~(gig - 1), gig);
  }
  return t;
}

void kernel_touch(Kernel *k, KCpu *cpu, const Mm *mm, uint64_t va)
{
  if (k->touch_last_mm == mm && va - k->touch_last_base < k->touch_last_span) {
    uint64_t i = (va - k->touch_last_base) >> k->base_shift;
    uint64_t bit = UINT64_C(1) << (i % 64);
    if (!(k->touch_last_bits[i / 64] & bit)) {
      k->touch_last_bits[i / 64] |= bit;
      cpu->ctr->c[CTR_MEM_TOUCHED_BYTES] += k->base_bytes;
    }
    return;
  }
  if (!g_hash_table_size(k->touched))
    return;
  TouchMap *t = touch_covering(k, mm, va);
  if (!t)
    return;
  k->touch_last_mm = mm;
  k->touch_last_base = t->base;
  k->touch_last_span = t->span;
  k->touch_last_bits = t->bits;
  if (touch_set(k, t, va))
    cpu->ctr->c[CTR_MEM_TOUCHED_BYTES] += k->base_bytes;
}

void kernel_touch_fault(Kernel *k, KCpu *cpu, const Mm *mm, uint64_t va)
{
  TouchMap *t = g_hash_table_size(k->touched) ? touch_covering(k, mm, va) : NULL;
  if (!t || touch_set(k, t, va))
    cpu->ctr->c[CTR_MEM_TOUCHED_BYTES] += k->base_bytes;
}

void kernel_touch_huge(Kernel *k, KCpu *cpu, const Mm *mm, uint64_t base, uint64_t span, uint64_t va)
{
  if (kernel_touch_mark(k, mm, base, span, va))
    cpu->ctr->c[CTR_MEM_TOUCHED_BYTES] += k->base_bytes;
}

gboolean kernel_touch_mark(Kernel *k, const Mm *mm, uint64_t base, uint64_t span, uint64_t va)
{
  TouchMap *t = touch_find(k, mm, base, span);
  if (!t) {
    uint64_t words = MAX((span >> k->base_shift) / 64, 1);
    t = g_malloc0(sizeof(TouchMap) + words * sizeof(uint64_t));
    t->mm = mm;
    t->base = base;
    t->span = span;
    g_hash_table_add(k->touched, t);
    k->touch_maps++;
  }
  return touch_set(k, t, va);
}

/* [start, end) of mm was unmapped: its granules count again when mapped
 * again, as a 4K page does; bitmaps wholly inside go. */
static void touch_forget(Kernel *k, const Mm *mm, uint64_t start, uint64_t end)
{
  guint n = g_hash_table_size(k->touched);
  if (!n)
    return;
  k->touch_last_mm = NULL;
  GPtrArray *hit = g_ptr_array_new();
  if ((end - start) / k->pmd_bytes < n) {
    uint64_t spans[] = { k->pmd_bytes, pgtable_entry_span(&k->geo, 3) };
    for (unsigned s = 0; s < G_N_ELEMENTS(spans); s++)
      for (uint64_t b = start & ~(spans[s] - 1); b < end; b += spans[s]) {
        TouchMap *t = touch_find(k, mm, b, spans[s]);
        if (t)
          g_ptr_array_add(hit, t);
        if (b + spans[s] < b)
          break;
      }
  } else {
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, k->touched);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
      TouchMap *t = key;
      if (t->mm == mm && t->base < end && t->base + t->span > start)
        g_ptr_array_add(hit, t);
    }
  }
  for (guint i = 0; i < hit->len; i++) {
    TouchMap *t = g_ptr_array_index(hit, i);
    if (start <= t->base && t->base + t->span <= end) {
      g_hash_table_remove(k->touched, t);
      k->touch_maps--;
      continue;
    }
    for (uint64_t va = MAX(start, t->base); va < MIN(end, t->base + t->span); va += k->base_bytes) {
      uint64_t j = (va - t->base) >> k->base_shift;
      t->bits[j / 64] &= ~(UINT64_C(1) << (j % 64));
    }
  }
  g_ptr_array_free(hit, TRUE);
}

/* ---- unmapping ---------------------------------------------------------------- */

void kernel_unmap_begin(KernelUnmap *u, Kernel *k, Mm *mm)
{
  memset(u, 0, sizeof *u);
  u->k = k;
  u->mm = mm;
}

void kernel_unmap_leaf(void *ctx, uint64_t va, unsigned level, uint64_t entry)
{
  KernelUnmap *u = ctx;
  Kernel *k = u->k;
  Mm *mm = u->mm;
  u->leaves++;
  if (!u->min_level || level < u->min_level)
    u->min_level = level;
  uint64_t pages = pgtable_entry_span(&mm->pt.g, level) >> 12;
  /* zap_pte_range / zap_huge_pmd: the zero pages have no folio and no
   * mm counter; a page-cache page leaves MM_FILEPAGES, which the model does
   * not keep, and stays in the page cache (kernel/filemap.h); the others
   * give back their base pages. */
  if (!(entry & (PTE_SW_ZERO | PTE_SW_FILE))) {
    uint64_t base = pgtable_entry_span(&mm->pt.g, level) >> k->base_shift;
    mm->rss_pages -= MIN(mm->rss_pages, base);
  }
  uint64_t table, pfn = pte_pfn(entry);
  /* zap_deposited_table: a huge PMD (THP or huge zero page) kept one. */
  if (level == 2 && mm_withdraw(mm, va, &table)) {
    mm->pt.a.release(mm->pt.a.ctx, 1, table);
    u->tables_freed++;
  }
  if (entry & (PTE_SW_ZERO | PTE_SW_FILE))
    return;
  if (level > 1) {
    if (hugetlb_owns(k->hugetlb, pfn, NULL))
      hugetlb_put(k->hugetlb, pfn);
    else if (level == 2)
      thp_unmap_pmd(k, pfn);
    else {
      unsigned order = 0; /* a leaf nobody here makes: free it as one block */
      while ((UINT64_C(1) << order) < pages)
        order++;
      physmem_release_range(k->pm, pfn, order);
    }
    u->freed_pages += pages;
    return;
  }
  if (thp_unmap_pte(k, pfn, &u->thps))
    return;
  physmem_release(k->pm, pfn, k->base_order);
  u->freed_pages += UINT64_C(1) << k->base_order;
}

void kernel_unmap_end(KernelUnmap *u, KCpu *cpu)
{
  if (u->thps) {
    u->freed_pages += thp_unmap_settle(u->k, cpu, u->thps);
    g_ptr_array_free(u->thps, TRUE);
    u->thps = NULL;
  }
  cpu->ctr->c[CTR_PGTABLE_PAGES_FREED] += u->tables_freed;
  cpu->ctr->c[CTR_MEM_USED_BYTES] -= MIN(cpu->ctr->c[CTR_MEM_USED_BYTES], u->freed_pages * 4096);
}

/* Remove the pages of [start, end): clear PTEs, shoot down TLBs, free the
 * pages and the page tables left empty (the order of zap_page_range() plus
 * free_pgtables()).  Huge leaves must lie wholly inside (split first). */
static void zap_range(Kernel *k, KCpu *cpu, Mm *mm, uint64_t start, uint64_t end)
{
  KernelUnmap u;
  kernel_unmap_begin(&u, k, mm);
  unsigned tables = pgtable_clear_range(&mm->pt, start, end, kernel_unmap_leaf, &u);
  if (u.leaves || tables) {
    /* tlb_get_unmap_shift: the stride of the smallest leaf cleared. */
    kernel_flush_tlb(k, cpu, mm, start, end, k->geo.shift[u.min_level ? u.min_level : 1], tables != 0);
    cpu->ctr->c[CTR_PGTABLE_PAGES_FREED] += tables;
  }
  kernel_unmap_end(&u, cpu);
  touch_forget(k, mm, start, end);
}

/* Free 4K frames: the buddy allocator's and the hugetlb pools'. */
static uint64_t free_frames(const Kernel *k)
{
  uint64_t n = 0;
  for (int node = 0; node < physmem_nodes(k->pm); node++)
    n += physmem_free_pages(k->pm, node);
  for (HugetlbSize size = 0; size < N_HPAGE_SIZES; size++)
    n += hugetlb_free_count(k->hugetlb, size) << hugetlb_order(k->hugetlb, size);
  return n;
}

uint64_t kernel_exit_mmap(Kernel *k, KCpu *cpu, Mm *mm)
{
  uint64_t before = free_frames(k);
  guint n = mm_vma_count(mm);
  if (n) {
    /* unmap_vmas over the VMAs, then free_pgtables: one range from the
     * first VMA to the last (no leaf lies outside a VMA), so one TLB
     * shootdown covers the mm, as the full-mm gather of exit_mmap does. */
    uint64_t start = mm_vma(mm, 0)->start, end = mm_vma(mm, n - 1)->end;
    zap_range(k, cpu, mm, start, end);
    mm_remove_range(mm, start, end);
  }
  khugepaged_exit(k->khugepaged, mm);
  numa_balance_mm_exit(k->numa_balance, mm);
  /* The tables below the root: the root's own allocation (kernel_mm) is
   * not counted in pgtable_pages_alloc, so neither is its free. */
  unsigned tables = (unsigned)mm->pt.tables - 1 + mm_deposited_count(mm);
  mm_release_tables(mm); /* the root and anything deposited (__mmdrop's pgd_free) */
  cpu->ctr->c[CTR_PGTABLE_PAGES_FREED] += tables;
  kernel_flush_tlb(k, cpu, mm, 0, 0, PAGE_SHIFT_4K, TRUE); /* no range: the walk caches only */
  return free_frames(k) - before;
}

/* Map [start, end)'s holes, leaving the VMAs there as they are. */
static void map_holes(Kernel *k, Mm *mm, uint64_t start, uint64_t end, uint8_t prot, uint8_t flags)
{
  guint n;
  guint first = mm_split_range(mm, start, end, &n);
  /* Fill only the holes between existing VMAs. */
  uint64_t cur = start;
  GArray *holes = g_array_new(FALSE, FALSE, sizeof(Vma));
  for (guint i = first; i < first + n; i++) {
    const Vma *v = mm_vma(mm, i);
    if (v->start > cur)
      g_array_append_val(holes, ((Vma){ .start = cur, .end = v->start, .prot = prot, .flags = flags }));
    cur = v->end;
  }
  if (cur < end)
    g_array_append_val(holes, ((Vma){ .start = cur, .end = end, .prot = prot, .flags = flags }));
  for (guint i = 0; i < holes->len; i++) {
    mm_insert_vma(mm, &g_array_index(holes, Vma, i));
    khugepaged_enter_vma(k->khugepaged, mm, &g_array_index(holes, Vma, i));
  }
  g_array_free(holes, TRUE);
  mm_merge_vmas(mm);
}

void kernel_map_on_demand(Kernel *k, Mm *mm, uint64_t va)
{
  /* One PMD-aligned rw region (2M on x86-64) around the address, merged with neighbours,
   * like the heap and mmap regions a recorded program had. */
  uint64_t start = va & ~(k->pmd_bytes - 1);
  map_holes(k, mm, start, start + k->pmd_bytes, PROT_R | PROT_W, MAP_F_ONDEMAND);
}

/* A system call of the trace that fails: the program sees the error and
 * nothing changes.  Counted in syscalls_failed, not segv, which counts
 * accesses that fault fatally (the run's "every access faulted" warning
 * reads it). */
static void einval(Kernel *k, KCpu *cpu, Mm *mm, const TraceRecord *r, const char *why)
{
  cpu->ctr->c[CTR_SYSCALLS_FAILED]++;
  kernel_event(k, cpu, mm->pid, "einval", "addr=%#" G_GINT64_MODIFIER "x len=%" G_GUINT64_FORMAT "%s%s",
                r->addr, r->len, why ? " reason=" : "", why ? why : "");
}

static gboolean range_ok(Kernel *k, KCpu *cpu, Mm *mm, const TraceRecord *r)
{
  uint64_t limit = k->user_va_limit;
  if (r->len == 0 || (r->addr & (k->base_bytes - 1)) || r->addr + r->len > limit || r->addr + r->len < r->addr) {
    einval(k, cpu, mm, r, NULL);
    return FALSE;
  }
  return TRUE;
}

/* Bytes of one hugetlb page of a VMA or mmap with these flags. */
static uint64_t hugetlb_span(const Kernel *k, uint8_t flags)
{
  return UINT64_C(4096) << hugetlb_order(k->hugetlb, flags & MAP_F_HUGETLB_1G ? HPAGE_1G : HPAGE_2M);
}

/* hugetlb pages are never split: a hugetlb mmap must be aligned to its page
 * size (prepare_hugepage_range), and no range may cut a hugetlb VMA inside
 * one of its pages (hugetlb_vm_op_split).  FALSE: EINVAL. */
static gboolean hugetlb_range_ok(const Kernel *k, Mm *mm, const TraceRecord *r, uint64_t start, uint64_t end)
{
  if (r->type == REC_MMAP && (r->flags & MAP_F_HUGETLB) && ((start | end) & (hugetlb_span(k, r->flags) - 1)))
    return FALSE;
  uint64_t edges[2] = { start, end };
  for (unsigned i = 0; i < 2; i++) {
    const Vma *v = mm_find_vma(mm, edges[i]);
    if (v && (v->flags & MAP_F_HUGETLB) && v->start != edges[i] && (edges[i] & (hugetlb_span(k, v->flags) - 1)))
      return FALSE;
  }
  return TRUE;
}

/* Is [start, end) wholly covered by VMAs? */
static gboolean range_mapped(Mm *mm, uint64_t start, uint64_t end)
{
  uint64_t cur = start;
  while (cur < end) {
    const Vma *v = mm_find_vma(mm, cur);
    if (!v)
      return FALSE;
    cur = v->end;
  }
  return TRUE;
}

/* The first address of [start, end) no VMA covers, or end. */
static uint64_t first_hole(Mm *mm, uint64_t start, uint64_t end)
{
  uint64_t cur = start;
  while (cur < end) {
    const Vma *v = mm_find_vma(mm, cur);
    if (!v)
      return cur;
    cur = v->end;
  }
  return end;
}

/* Does the record change the VMA v (so that an edge inside v splits it)? */
static gboolean changes_vma(const Vma *v, const TraceRecord *r)
{
  switch ((TraceRecordType)r->type) {
  case REC_MPROTECT:
    return v->prot != r->prot; /* mprotect_fixup: nothing to do otherwise */
  case REC_MADVISE:
    switch ((TraceAdvice)r->arg) {
    case ADV_HUGEPAGE: return v->thp != VMA_THP_HUGEPAGE;
    case ADV_NOHUGEPAGE: return v->thp != VMA_THP_NOHUGEPAGE;
    case ADV_DONTNEED: return TRUE; /* zap_pmd_range splits a PMD it covers in part */
    case ADV_COLLAPSE: return FALSE;
    }
    return FALSE;
  case REC_MEMPOLICY:
    return v->policy != (uint8_t)r->arg || v->policy_nodes != r->arg2 ||
           v->policy_flags != (r->flags & MEMPOLICY_F_BALANCING);
  default:
    return TRUE; /* mmap over it, munmap */
  }
}

/* Split the THP PMDs that an edge of [start, end) cuts, where the record
 * changes the VMA there (vma_adjust_trans_huge); charge the work. */
static void split_edges(Kernel *k, KCpu *cpu, Mm *mm, const TraceRecord *r, uint64_t start, uint64_t end)
{
  uint64_t cycles = 0;
  uint64_t edges[2] = { start, end };
  for (unsigned i = 0; i < 2; i++) {
    if (!(edges[i] & (k->pmd_bytes - 1)))
      continue;
    const Vma *v = mm_find_vma(mm, edges[i]);
    if (v && !(v->flags & MAP_F_HUGETLB) && changes_vma(v, r))
      thp_split_at(k, cpu, mm, edges[i], &cycles);
  }
  if (cycles)
    kernel_stall(k, cpu, cycles);
}

/* Does the record give the VMA v other attributes (so that a range edge
 * inside v splits it in two VMAs)?  mprotect_fixup, madvise_update_vma and
 * mbind_range return at once when nothing changes; MADV_DONTNEED and
 * MADV_COLLAPSE leave the VMAs as they are. */
static gboolean splits_vma(const Vma *v, const TraceRecord *r)
{
  if (r->type == REC_MADVISE && (r->arg == ADV_DONTNEED || r->arg == ADV_COLLAPSE))
    return FALSE;
  return changes_vma(v, r);
}

/* vm.max_map_count, as Linux 6.12 checks it against mm->map_count (here
 * the VMA count): do_mmap refuses an mmap while map_count >
 * sysctl_max_map_count (a strict test: the process may reach one VMA more);
 * an unmap that must split one VMA in three (vms_gather_munmap_vmas, for
 * munmap and for an mmap over mapped memory) and each split of mprotect,
 * madvise and mbind (split_vma, through vma_modify) need map_count <
 * sysctl_max_map_count.  TRUE: the call fails with ENOMEM.  The model asks
 * before it changes anything, where Linux can be left with the first of two
 * splits done, and it does not credit the merge that lets
 * vma_merge_existing_range move a boundary instead of splitting. */
static gboolean over_map_count(const Kernel *k, Mm *mm, const TraceRecord *r, uint64_t start, uint64_t end)
{
  guint count = mm_vma_count(mm);
  if (r->type == REC_MMAP && count > k->max_map_count)
    return TRUE;
  if (r->type == REC_MMAP || r->type == REC_MUNMAP) {
    const Vma *v = mm_find_vma(mm, start);
    return v && v->start < start && end < v->end && count >= k->max_map_count;
  }
  guint splits = 0;
  uint64_t edges[2] = { start, end };
  for (unsigned i = 0; i < 2; i++) {
    const Vma *v = mm_find_vma(mm, edges[i]);
    if (v && v->start < edges[i] && splits_vma(v, r))
      splits++;
  }
  return splits && count + splits - 1 >= k->max_map_count;
}

/* ---- the system calls of a trace, one function each -------------------- */

/* mmap(MAP_FIXED): what was there goes, then the new VMA (vma_merge). */
static void sys_mmap(Kernel *k, KCpu *cpu, Mm *mm, const TraceRecord *r, uint64_t start, uint64_t end)
{
  /* A mapping a reader made up (MAP_F_ONDEMAND) stands for what the
   * program had mapped without the trace saying so: it fills the range's
   * holes and leaves the mappings the trace did record (a recording's
   * system calls, doc/trace-format.md) as they are. */
  if (r->flags & MAP_F_ONDEMAND) {
    map_holes(k, mm, start, end, r->prot, r->flags);
    return;
  }
  zap_range(k, cpu, mm, start, end);
  mm_remove_range(mm, start, end);
  Vma v = { .start = start, .end = end, .prot = r->prot, .flags = r->flags };
  /* vma_set_file and vm_pgoff: a named file's pages are found in its page
   * cache by their index in the file, from any mapping of it. */
  if ((r->flags & MAP_F_FILE) && r->path) {
    v.file = filemap_intern(k->filemap, r->path);
    v.file_off = r->arg2;
  }
  mm_insert_vma(mm, &v);
  mm_merge_vmas(mm);
  khugepaged_enter_vma(k->khugepaged, mm, &v);
}

static void sys_munmap(Kernel *k, KCpu *cpu, Mm *mm, uint64_t start, uint64_t end)
{
  zap_range(k, cpu, mm, start, end);
  mm_remove_range(mm, start, end);
}

/* change_protection's walk (Linux 6.12 mm/mprotect.c change_pte_range and
 * mm/huge_memory.c change_huge_pmd): each present leaf takes the new
 * protection (pte_modify), and the mmu_gather notes the entries whose
 * change needs a flush (x86 pte_needs_flush: RW or NX changed). */
typedef struct {
  Kernel *k;
  uint64_t set, clear;
  gboolean try_writable; /* MM_CP_TRY_CHANGE_WRITABLE */
  gboolean shared;       /* VM_SHARED: vm_page_prot itself carries the write bit */
  gboolean writenotify;  /* a shared file VMA: only a dirty page skips the write fault */
  uint64_t lo, hi;       /* the gather's range (__tlb_adjust_range) */
  unsigned min_level;    /* the smallest level changed (tlb_get_unmap_shift); 0: none */
} Mprotect;

/* can_change_pte_writable / can_change_pmd_writable (6.12): in a private
 * mapping only an exclusive anonymous page (PageAnonExclusive) skips the
 * write fault.  The model has no fork, KSM or soft-dirty/uffd-wp tracking,
 * so every anonymous page is exclusive; the zero pages and the page-cache
 * pages of a file mapping are not anonymous (a write to one must copy it,
 * do_wp_page), and a PROT_NONE NUMA hinting entry is never touched
 * (pte_protnone). */
static gboolean can_change_writable(uint64_t e)
{
  return !(e & (PTE_SW_ZERO | PTE_SW_FILE)) && !pte_protnone(e);
}

static int mprotect_leaf(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  Mprotect *mp = w->ctx;
  (void)next;
  if (!pte_present(e) || !pte_leaf(e, w->level))
    return 0;
  uint64_t ne = (e & ~mp->clear) | mp->set;
  if (!(ne & PTE_RW) && (mp->writenotify ? mp->try_writable && pte_dirty(e)
                         : mp->shared ? !(e & PTE_SW_ZERO) : mp->try_writable && can_change_writable(e)))
    ne |= PTE_RW;
  if (ne == e)
    return 0;
  pgtable_walk_set(w, ne);
  if ((ne ^ e) & (PTE_RW | PTE_NX)) {
    uint64_t span = pgtable_entry_span(&w->pt->g, w->level);
    uint64_t base = addr & ~(span - 1);
    mp->lo = MIN(mp->lo, base);
    mp->hi = MAX(mp->hi, base + span);
    if (!mp->min_level || w->level < mp->min_level)
      mp->min_level = w->level;
  }
  return 0;
}

static const PtWalkOps mprotect_ops = { .pud_entry = mprotect_leaf, .pmd_entry = mprotect_leaf,
                                        .pte_entry = mprotect_leaf };

/* mprotect_fixup for one VMA of the range: the VMA's own flags decide how
 * its PTEs take the new protection (Linux 6.12 mm/mprotect.c: newflags =
 * calc_vm_prot_bits(prot) | (vma->vm_flags & ~mask_off_old_flags), so
 * VM_SHARED and the file stay the VMA's; vma_set_page_prot and
 * vma_wants_manual_pte_write_upgrade then choose per VMA).  Its PTE
 * changes go into the caller's gather mp; a hugetlb VMA flushes on its own
 * (hugetlb_change_protection). */
static void mprotect_fixup(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, const TraceRecord *r, uint64_t start,
                           uint64_t end, Mprotect *mp)
{
  mp->shared = mp->writenotify = mp->try_writable = FALSE;
  if (r->prot & PROT_W) {
    /* vma_wants_manual_pte_write_upgrade: a private writable VMA tries
     * (since 6.0; before it, the write fault made each page writable); a
     * shared one (shmem, no writenotify) gets the write bit from its
     * vm_page_prot in pte_modify, in every release.  hugetlb_change_protection
     * has no such try: its private pages wait for hugetlb_wp.  In a
     * private file VMA a page-cache page stays read-only until its COW
     * (can_change_pte_writable: not anonymous). */
    mp->shared = (v->flags & MAP_F_SHARED) != 0;
    /* A shared file mapping wants write notification (vma_wants_writenotify:
     * dirty tracking of its page cache), so vm_page_prot has no write bit
     * and can_change_pte_writable lets only a dirty page be writable (6.0
     * on; before it, none: the write fault makes each page writable). */
    mp->writenotify = mp->shared && (v->flags & MAP_F_FILE);
    mp->try_writable =
      (mp->writenotify || !mp->shared) && !(v->flags & MAP_F_HUGETLB) && kernel_has(k, KR_MPROTECT_WRITABLE);
  }
  if (!(v->flags & MAP_F_HUGETLB)) {
    pgtable_walk(&mm->pt, start, end, &mprotect_ops, mp);
    return;
  }
  /* hugetlb_change_protection: flush_hugetlb_tlb_range over the VMA's part
   * of the range, at the huge page size, when a page changed; its entries
   * stay out of the caller's gather. */
  Mprotect own = *mp;
  own.lo = UINT64_MAX;
  own.hi = 0;
  own.min_level = 0;
  pgtable_walk(&mm->pt, start, end, &mprotect_ops, &own);
  if (own.min_level)
    kernel_flush_tlb(k, cpu, mm, start, end,
                     (unsigned)(12 + hugetlb_order(k->hugetlb, v->flags & MAP_F_HUGETLB_1G ? HPAGE_1G : HPAGE_2M)),
                     FALSE);
}

/* do_mprotect_pkey (Linux 6.12): one mmu_gather (tlb_gather_mmu) for the
 * whole range, mprotect_fixup for each VMA in it (for_each_vma_range),
 * then tlb_finish_mmu.  The range ends at its first hole (kernel_syscall).  Each VMA takes the new protection by its own
 * flags: a range over a private and a shared mapping treats each as what
 * it is. */
static void sys_mprotect(Kernel *k, KCpu *cpu, Mm *mm, const TraceRecord *r, uint64_t start, uint64_t end)
{
  guint n;
  guint first = mm_split_range(mm, start, end, &n);
  Mprotect mp = { .k = k, .lo = UINT64_MAX };
  if (!(r->prot & PROT_W))
    mp.clear |= PTE_RW;
  if (r->prot & PROT_X)
    mp.clear |= PTE_NX;
  else
    mp.set |= PTE_NX;
  for (guint i = first; i < first + n; i++) {
    Vma *v = mm_vma_mut(mm, i);
    if (v->prot == r->prot)
      continue; /* mprotect_fixup: newflags == oldflags, nothing to do */
    v->prot = r->prot;
    mprotect_fixup(k, cpu, mm, v, r, MAX(v->start, start), MIN(v->end, end), &mp);
  }
  if (mp.min_level) {
    /* tlb_finish_mmu: the gathered range at the stride of the smallest
     * level changed (tlb_flush_pte_range / tlb_flush_pmd_range, then
     * flush_tlb_mm_range with tlb_get_unmap_shift). */
    kernel_flush_tlb(k, cpu, mm, mp.lo, mp.hi, k->geo.shift[mp.min_level], FALSE);
  }
  mm_merge_vmas(mm);
}

static void sys_madvise(Kernel *k, KCpu *cpu, Mm *mm, const TraceRecord *r, uint64_t start, uint64_t end)
{
  guint n;
  guint first = mm_split_range(mm, start, end, &n);
  switch ((TraceAdvice)r->arg) {
  case ADV_DONTNEED:
    zap_range(k, cpu, mm, start, end);
    break;
  case ADV_HUGEPAGE:
  case ADV_NOHUGEPAGE:
    for (guint i = first; i < first + n; i++) {
      mm_vma_mut(mm, i)->thp = r->arg == ADV_HUGEPAGE ? VMA_THP_HUGEPAGE : VMA_THP_NOHUGEPAGE;
      khugepaged_enter_vma(k->khugepaged, mm, mm_vma(mm, i)); /* hugepage_madvise */
    }
    break;
  case ADV_COLLAPSE:
    /* MADV_COLLAPSE came with 6.1: an older kernel refuses it (EINVAL). */
    if (kernel_has(k, KR_MADV_COLLAPSE))
      khugepaged_madvise_collapse(k->khugepaged, cpu, mm, start, end);
    break;
  }
  mm_merge_vmas(mm);
}

/* mbind_range: the VMAs split at the range edges take the policy; pages
 * already placed stay (no MPOL_MF_MOVE). */
static void sys_mbind(Mm *mm, const MemPolicy *pol, uint64_t start, uint64_t end)
{
  guint n;
  guint first = mm_split_range(mm, start, end, &n);
  for (guint i = first; i < first + n; i++) {
    Vma *v = mm_vma_mut(mm, i);
    v->policy = pol->mode;
    v->policy_flags = pol->flags;
    v->policy_nodes = pol->nodes;
  }
  mm_merge_vmas(mm);
}

uint64_t kernel_syscall(Kernel *k, KCpu *cpu, Mm *mm, const TraceRecord *r)
{
  uint64_t before = kcpu_now(cpu);
  k->alloc_node = cpu->node;
  uint64_t len = (r->len + k->base_bytes - 1) & ~(k->base_bytes - 1);
  TraceRecord rr = *r;
  rr.len = len;
  if (r->type == REC_PRCTL) {
    if (r->arg == PRCTL_THP_DISABLE)
      mm->thp_disable = r->arg2 != 0;
    return 0;
  }
  MemPolicy pol = { 0 };
  if (r->type == REC_MEMPOLICY) {
    /* mpol_set_nodemask: the mask cut to the nodes the machine has; a
     * policy left without nodes is EINVAL. */
    if (!mempolicy_from_record(k, r, &pol)) {
      einval(k, cpu, mm, r, "no-such-node");
      return 0;
    }
    if (!mempolicy_in_kernel(k, &pol)) {
      einval(k, cpu, mm, r, "not-in-this-kernel");
      return 0;
    }
    rr.arg2 = pol.nodes;
    if (r->flags & MPOL_F_PROCESS) {
      /* do_set_mempolicy: a new policy restarts the round-robin. */
      mm->policy = pol.mode;
      mm->policy_flags = pol.flags;
      mm->policy_nodes = pol.nodes;
      mm->il_prev = -1;
      mm->il_weight = 0;
      return 0;
    }
  }
  if (!range_ok(k, cpu, mm, &rr))
    return 0;
  uint64_t start = r->addr, end = r->addr + len;
  if (!hugetlb_range_ok(k, mm, r, start, end)) {
    einval(k, cpu, mm, r, "hugetlb-alignment");
    return 0;
  }
  if (r->type == REC_MMAP && (r->flags & MAP_F_FILE)) {
    /* x86's sys_mmap (offset_in_page: -EINVAL) and do_mmap (pgoff +
     * pages wrapping: -EOVERFLOW), 6.12: an offset of a page's multiple,
     * at the base page size, and a range of the file that fits. */
    if (r->arg2 & (k->base_bytes - 1)) {
      einval(k, cpu, mm, r, "offset-not-page-aligned");
      return 0;
    }
    if (r->arg2 + len < r->arg2) {
      einval(k, cpu, mm, r, "eoverflow");
      return 0;
    }
  }
  if (r->type == REC_MEMPOLICY && !range_mapped(mm, start, end)) {
    /* queue_pages_test_walk: mbind over a hole is EFAULT, nothing changes. */
    einval(k, cpu, mm, r, "efault");
    return 0;
  }
  /* do_mprotect_pkey: a hole ends the loop over the VMAs with -ENOMEM
   * (vma->vm_start != tmp); those before it keep their new protection
   * and are flushed, those after it are not reached, so neither split
   * nor counted against max_map_count.  A range that starts in a hole
   * changes nothing. */
  uint64_t hole = r->type == REC_MPROTECT ? first_hole(mm, start, end) : end;
  if (hole < end) {
    cpu->ctr->c[CTR_SYSCALLS_FAILED]++;
    kernel_event(k, cpu, mm->pid, "enomem",
                 "addr=%#" G_GINT64_MODIFIER "x len=%" G_GUINT64_FORMAT " reason=unmapped at=%#" G_GINT64_MODIFIER "x",
                 r->addr, r->len, hole);
    if (hole == start)
      return 0;
    end = hole;
    rr.len = end - start;
  }
  if (over_map_count(k, mm, &rr, start, end)) {
    cpu->ctr->c[CTR_SYSCALLS_FAILED]++;
    kernel_event(k, cpu, mm->pid, "enomem",
                 "addr=%#" G_GINT64_MODIFIER "x len=%" G_GUINT64_FORMAT " reason=max_map_count vmas=%u",
                 r->addr, r->len, mm_vma_count(mm));
    return 0;
  }
  split_edges(k, cpu, mm, &rr, start, end);
  switch ((TraceRecordType)r->type) {
  case REC_MMAP:
    sys_mmap(k, cpu, mm, r, start, end);
    break;
  case REC_MUNMAP:
    sys_munmap(k, cpu, mm, start, end);
    break;
  case REC_MPROTECT:
    sys_mprotect(k, cpu, mm, r, start, end);
    break;
  case REC_MADVISE:
    sys_madvise(k, cpu, mm, r, start, end);
    break;
  case REC_MEMPOLICY:
    sys_mbind(mm, &pol, start, end);
    break;
  default:
    break;
  }
  return kcpu_now(cpu) - before;
}
