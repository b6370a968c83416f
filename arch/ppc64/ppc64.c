/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ppc64.c - the ppc64 Book3S hash MMU after an ERAT miss, and Linux's hash
 * fault handler behind it.
 *
 * Models (Power ISA 2.06-3.0 Book III-S, arch/powerpc/mm/book3s64/):
 * - the ERAT is the core's L1 arrays (sim/cpu.c, mixed sizes); a miss goes
 *   to the SLB (slb.c): a hit gives the segment's VSID, a miss is a software
 *   interrupt (do_slb_fault) that writes an entry, at ppc64.slb_miss_ns;
 * - the TLB: set-associative, tagged by the virtual address (here: the
 *   context's asid and the EA, which is the same thing), holding every page
 *   size; an entry lives on after its HPTE is evicted, until a tlbie;
 * - the hardware search of the hashed page table (hpt.c): the primary PTEG,
 *   then the secondary, every HPTE read a memory reference through the caches
 *   (MREQ_WALK); reference and change bits set in the HPTE;
 * - a hash fault (no HPTE, or one that forbids the access): hash_page_mm()
 *   and __hash_page_4K(): Linux's page table looked up in software (each
 *   entry read through the caches), the access checked against the Linux
 *   PTE (check_pte_access: a refusal goes to the generic fault path, as does
 *   a missing PTE), accessed and dirty set, the HPTE's flags converted from
 *   the PTE (htab_convert_pte_flags), and the HPTE inserted as the native
 *   path does: primary group, secondary group, else evict from the group
 *   the timebase's bit 0 picks, starting at slot (timebase & 7), and repeat
 *   (native_hpte_insert, native_hpte_remove); eviction does not tlbie, so the
 *   evicted translation may live on in TLBs.  A protection fault on an HPTE
 *   that exists updates its protection in place and tlbies the page
 *   (native_hpte_updatepp).  The faulting instruction then re-executes: the
 *   search runs again and hits;
 * - invalidation: flush_page removes the page's HPTE from the shared table
 *   and the page from this CPU's TLB (native_hpte_invalidate + tlbie),
 *   flush_asid every HPTE of the context; a switch to another mm drops the
 *   SLB's user entries and the ERAT and preloads the thread's recent
 *   segments (switch_slb).
 * Page sizes: the base page (mm.base_page_size: 4K or 64K) and 16M through
 * the L bit and LP encoding, also inside base-page segments (MPSS: hashed
 * with the base page shift, one HPTE per base page, mapping the whole 16M).
 * With 64K base pages a PMD maps 16M (hash-64k.h): a 16M THP or hugetlb
 * page is a PMD leaf, and a hash fault in it inserts the HPTE of the
 * faulting 64K subpage only, encoding 16M (__hash_page_thp: lazy, one HPTE
 * per subpage touched); a flush of the 16M page removes the HPTE of every
 * subpage (flush_hash_hugepage: machine_flush_range visits each granule).
 * A 16M hugetlb page in a slice of its own is instead one HPTE in a
 * 16M-base segment (__hash_page_huge, MMU_PAGE_16M; slice_base_shift).
 * With 4K base pages Linux has no THP on hash (hash__has_transparent_hugepage:
 * the 2M PMD is not a 16M page) and no 2M or 1G page at all: check()
 * refuses thp.enabled other than never and the hugetlb pools; a leaf of a
 * size the hardware lacks is mapped by base-page HPTEs.
 * Leaves out: kernel-address translation (the trace has no kernel accesses;
 * the kernel's bolted segment and its bolted linear-map HPTEs occupy their
 * SLB and HPT slots), hcalls other than H_ENTER, H_REMOVE, H_PROTECT and
 * H_BULK_REMOVE (virt.lpar: the HPT is the hypervisor's, each HPTE change
 * one of those, pseries/lpar.c), HPT resizing, the
 * PTE's hidx bits (the HPTE of a page is found by searching its two groups,
 * which finds the same entry: a page has at most one), segment page-size
 * slices other than the base size, the pipeline drain of the hash-fault
 * interrupt (charged as translation latency), the preload list's ageing,
 * and the POWER9 HPTE format (B in the second doubleword).
 * Sources: arch/powerpc/include/asm/book3s/64/{mmu-hash.h,hash-4k.h,
 * hash-64k.h}, arch/powerpc/mm/book3s64/{hash_utils.c,hash_native.c,
 * hash_4k.c,slb.c}, QEMU target/ppc/mmu-hash64.c; mmu-facts section 2.
 */
#include "config.h"
#include "ppc64.h"

#include <string.h>
#include "cache.h"
#include "cpu.h"
#include "cpu-translate.h"
#include "machine.h"
#include "memsys.h"
#include "mm.h"
#include "thp.h"

static const unsigned ppc64_shift[PPC64_N_SIZES] = { 12, 16, 24 };

/* Kernel constants that depend on the base page size (4K / 64K).
 * MAX_EA_BITS_PER_CONTEXT: 46 / 49 (hash-4k.h, hash-64k.h); MAX_PHYSMEM_BITS
 * 51 with SPARSEMEM_VMEMMAP (book3s/64/mmu.h), so MAX_KERNEL_CTX_CNT =
 * 2^(51 - 46) = 32 / 2^(51 - 49) = 4, and MIN_USER_CONTEXT = MAX_KERNEL_CTX_CNT
 * + MAX_VMALLOC_CTX_CNT + MAX_IO_CTX_CNT + MAX_VMEMMAP_CTX_CNT (1 each) + 2
 * ("the + 2 accounts for INVALID_REGION and 1 more to avoid overlap with
 * kernel", since 5.5) = 37 / 9 (book3s/64/mmu-hash.h, Linux 6.12). */
#define PPC64_MAX_PHYSMEM_BITS 51
#define PPC64_KERNEL_EXTRA_CONTEXTS (3 + 2)

/* log2 of the 4K frames of a 16M page. */
#define PPC64_16M_ORDER 12u

/* Up to this many hash-fault rounds per translation (fault, insert, the
 * re-executed search); more only if an eviction found nothing to evict. */
#define PPC64_MAX_ROUNDS 3

/* The machine-wide part: one HPT, the preload lists of every thread.
 * CPU 0 makes it; the other CPUs take a reference. */
typedef struct {
  unsigned refs;
  Ppc64Hpt *hpt;
  GHashTable *preload; /* (pid << 32 | tid) -> Ppc64Preload */
} Ppc64Shared;

typedef struct {
  Ppc64Shared *sh;
  Ppc64Slb slb;
  Tlb *tlb;                 /* NULL: tlb.stlb_entries = 0, every ERAT miss searches */
  unsigned base_shift;      /* base page of user segments */
  uint64_t user_limit;
  gboolean seg_1t;
  unsigned min_user_context;
  unsigned preload_cap;
  unsigned line_shift;      /* log2 of the cache line */
  uint64_t hpt_pa, hpt_mask; /* the shared HPT's base and PTEG mask (it is never resized), kept here
                              * for the search: no call into hpt.c for them */
  int slb_asid;             /* asid whose user segments the SLB holds; -1 none */
  const Thread *preload_owner;
  Ppc64Preload *preload;    /* the preload list of preload_owner */
  uint32_t tlb_hit_cycles, walk_overhead_cycles;
  uint32_t slb_miss_cycles, hash_fault_cycles, hpte_insert_cycles, tlbie_cycles;
  /* virt.lpar: the HPT is the hypervisor's; the hcalls' costs. */
  gboolean lpar;
  uint32_t h_enter_cycles, h_remove_cycles, h_protect_cycles, h_bulk_remove_cycles;
  unsigned pmd_shift;       /* log2 of what one PTE table maps: a lazy-MMU batch's reach */
  /* The invalidation batch of the range being flushed (ppc64_tlb_batch):
   * its key (PTE table, or 16M page of a THP), the HPTEs in it, whether it
   * is a THP's (hugepage_invalidate), and the hcall cycles of the range. */
  uint64_t batch_key;
  unsigned batch_n;
  gboolean batch_thp;
  uint64_t batch_cycles;
} Ppc64Cpu;

/* ---- kernel constants and encodings ------------------------------------------ */

/* The kernel's base page size (mm.base_page_size: 4K or 64K, CONFIG_PPC_4K_PAGES
 * or CONFIG_PPC_64K_PAGES); everything here follows from it.  check()
 * refuses other sizes; a bad one reads as 4K. */
static unsigned base_shift_of(const Settings *s)
{
  return settings_int(s, SET_MM_BASE_PAGE_SIZE) == 65536 ? 16 : 12;
}

/* Linux's hash page table (arch/powerpc/include/asm/book3s/64/):
 * hash-4k.h H_{PTE,PMD,PUD,PGD}_INDEX_SIZE 9, 7, 9, 9 (a PMD maps 2M);
 * hash-64k.h 8, 10, 10, 8: 256 PTEs of 64K, so a PMD entry maps 16M, a PUD
 * entry 16G, the PGD 4P (the 4P layout of Linux 5.x and 6.x; earlier kernels
 * had 8, 5, 5, 12: the same 16M PMD). */
void ppc64_geometry(PtGeometry *g, unsigned base_shift)
{
  static const unsigned bits_4k[5] = { 0, 9, 7, 9, 9 };   /* PTE, PMD, PUD, PGD */
  static const unsigned bits_64k[5] = { 0, 8, 10, 10, 8 };
  const unsigned *bits = base_shift == 16 ? bits_64k : bits_4k;
  memset(g, 0, sizeof *g);
  g->levels = 4;
  g->page_shift = base_shift == 16 ? 16 : 12;
  unsigned shift = g->page_shift;
  for (unsigned l = 1; l <= 4; l++) {
    g->bits[l] = bits[l];
    g->shift[l] = shift;
    g->table_bytes[l] = 8ULL << bits[l]; /* sizeof(pte_t) << H_*_INDEX_SIZE */
    shift += bits[l];
  }
}

uint64_t ppc64_user_limit(unsigned base_shift)
{
  return base_shift == 16 ? 1ULL << 47 : 1ULL << 46;
}

unsigned ppc64_min_user_context(unsigned base_shift)
{
  unsigned ea_bits = base_shift == 16 ? 49 : 46;
  return (1u << (PPC64_MAX_PHYSMEM_BITS - ea_bits)) + PPC64_KERNEL_EXTRA_CONTEXTS;
}

int ppc64_penc(unsigned base_shift, unsigned actual_shift)
{
  /* QEMU ppc_hash64_opts_POWER7 (POWER7, 8 and 9 alike):
   * base 4K: 4K 0, 64K 0x7, 16M 0x38; base 64K: 64K 0x1, 16M 0x8;
   * base 16M: 16M 0. */
  switch (base_shift) {
  case 12:
    return actual_shift == 12 ? 0 : actual_shift == 16 ? 0x7 : actual_shift == 24 ? 0x38 : -1;
  case 16:
    return actual_shift == 16 ? 0x1 : actual_shift == 24 ? 0x8 : -1;
  case 24:
    return actual_shift == 24 ? 0 : -1;
  default:
    return -1;
  }
}

/* ppc64_hpte_page_shift, inline for the hash search after a TLB miss. */
static inline G_ALWAYS_INLINE unsigned hpte_page_shift(unsigned base_shift, uint64_t v, uint64_t r)
{
  if (!(v & HPTE_V_LARGE))
    return base_shift == 12 ? 12 : 0; /* a 4K page only in a 4K segment */
  for (unsigned i = 1; i < PPC64_N_SIZES; i++) {
    unsigned a = ppc64_shift[i];
    int penc = ppc64_penc(base_shift, a);
    if (penc < 0)
      continue;
    uint64_t mask = ((1ULL << a) - 1) & HPTE_R_RPN;
    if ((r & mask) == ((uint64_t)penc << HPTE_R_LP_SHIFT))
      return a;
  }
  return 0;
}

unsigned ppc64_hpte_page_shift(unsigned base_shift, uint64_t v, uint64_t r)
{
  return hpte_page_shift(base_shift, v, r);
}

uint64_t ppc64_hpte_rpn(uint64_t pa, unsigned base_shift, unsigned actual_shift)
{
  if (actual_shift == 12)
    return pa & HPTE_R_RPN;
  int penc = ppc64_penc(base_shift, actual_shift);
  g_return_val_if_fail(penc >= 0, pa & HPTE_R_RPN);
  return (pa & ~((1ULL << actual_shift) - 1) & HPTE_R_RPN) | ((uint64_t)penc << HPTE_R_LP_SHIFT);
}

static unsigned size_code(unsigned shift)
{
  for (unsigned i = 0; i < PPC64_N_SIZES; i++)
    if (ppc64_shift[i] == shift)
      return i;
  g_return_val_if_reached(PPC64_4K);
}

/* htab_convert_pte_flags() for a user PTE: no-execute, PP 0b010 for a
 * writable dirty page, 0b011 (read-only) otherwise, R always, C when
 * dirty, M (coherent). */
static uint64_t pte_to_rflags(uint64_t pte)
{
  uint64_t r = HPTE_R_R | HPTE_R_M | 0x2;
  if (pte & PTE_NX)
    r |= HPTE_R_N;
  if (!((pte & PTE_RW) && (pte & PTE_D)))
    r |= 0x1;
  if (pte & PTE_D)
    r |= HPTE_R_C;
  return r;
}

/* Problem-state access with key 1 (user segments have Kp = 1): PP 0b010
 * reads and writes, 0b001/0b011 reads, 0b000 nothing; N forbids fetches.
 * As TLBF_* flags (QEMU ppc_hash64_pte_prot). */
static uint8_t hpte_flags(uint64_t r)
{
  unsigned pp = (unsigned)(r & HPTE_R_PP);
  uint8_t f = TLBF_U;
  if (pp == 0)
    return 0;
  if (pp == 2)
    f |= TLBF_W | TLBF_D;
  if (!(r & HPTE_R_N))
    f |= TLBF_X;
  return f;
}

static gboolean flags_allow(uint8_t f, AccessKind kind)
{
  if (!(f & TLBF_U))
    return FALSE;
  if (kind == ACC_STORE)
    return (f & (TLBF_W | TLBF_D)) == (TLBF_W | TLBF_D);
  if (kind == ACC_IFETCH)
    return (f & TLBF_X) != 0;
  return TRUE;
}

static uint32_t ns_cycles(const Settings *s, SettingId id)
{
  double c = settings_double(s, id) * (double)settings_int(s, SET_CPU_FREQ_MHZ) / 1000.0;
  return c >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)(c + 0.5);
}

/* ---- hypervisor calls ---------------------------------------------------------------- */

/* Under virt.lpar, n hcalls of one kind: counted, and their overhead
 * returned (0 on bare metal, where the kernel writes the HPT itself). */
static uint32_t hcalls(Cpu *cpu, const Ppc64Cpu *st, CounterId kind, uint32_t each, unsigned n)
{
  if (!st->lpar || !n)
    return 0;
  uint32_t c = each * n;
  cpu->ctr.c[kind] += n;
  cpu->ctr.c[CTR_HCALL_CYCLES] += c;
  return c;
}

/* Under virt.lpar, the invalidation of a range goes through the per-CPU
 * ppc64_tlb_batch (arch/powerpc/mm/book3s64/hash_tlb.c, Linux 6.12): the
 * hashed PTEs of one PTE table (zap_pte_range and change_pte_range run in
 * lazy MMU mode, left at the end of each table) up to PPC64_TLB_BATCH_NR
 * (192) of them; __flush_tlb_pending sends a batch of one to
 * flush_hash_page (pSeries_lpar_hpte_invalidate: one H_REMOVE) and a larger
 * one to pSeries_lpar_flush_hash_range: one H_BULK_REMOVE per 4 HPTEs
 * (FW_FEATURE_BULK_REMOVE, which PowerVM and KVM-HV offer).  A THP's HPTEs
 * go through pSeries_lpar_hugepage_invalidate: batches of
 * PPC64_HUGE_HPTE_BATCH (12), each hugepage_bulk_invalidate, one
 * H_BULK_REMOVE per 4 HPTEs, a single one included.  H_BLOCK_REMOVE
 * (newer PowerVM firmware on POWER9 and later) is not modelled. */
#define PPC64_TLB_BATCH_NR 192
#define PPC64_HUGE_HPTE_BATCH 12
#define PPC64_BULK_REMOVE_HPTES 4

static void batch_close(Cpu *cpu, Ppc64Cpu *st)
{
  if (!st->batch_n)
    return;
  if (st->batch_n == 1 && !st->batch_thp)
    st->batch_cycles += hcalls(cpu, st, CTR_HCALL_H_REMOVE, st->h_remove_cycles, 1);
  else
    st->batch_cycles += hcalls(cpu, st, CTR_HCALL_H_BULK_REMOVE, st->h_bulk_remove_cycles,
                               (st->batch_n + PPC64_BULK_REMOVE_HPTES - 1) / PPC64_BULK_REMOVE_HPTES);
  st->batch_n = 0;
}

/* One HPTE invalidated by a range flush: into the batch of its PTE table
 * (thp: of its 16M page), the batch closed first when it belongs to
 * another, and when it is full. */
static void batch_add(Cpu *cpu, Ppc64Cpu *st, uint64_t va, gboolean thp)
{
  uint64_t key = va >> (thp ? 24 : st->pmd_shift);
  if (st->batch_n && (key != st->batch_key || thp != st->batch_thp))
    batch_close(cpu, st);
  st->batch_key = key;
  st->batch_thp = thp;
  if (++st->batch_n == (thp ? PPC64_HUGE_HPTE_BATCH : PPC64_TLB_BATCH_NR))
    batch_close(cpu, st);
}

/* ---- settings, geometry ------------------------------------------------------- */

static gboolean ppc64_check(const Settings *s, GError **error)
{
  if (!settings_bool(s, SET_TLB_PCID)) {
    g_autofree char *pcid = settings_blame(s, SET_TLB_PCID);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "machine.arch=ppc64 needs tlb.pcid=true, not %s: ppc64 TLB entries are tagged by their VSID, "
                "which carries the process context, so a context switch never flushes them", pcid);
    return FALSE;
  }
  int64_t page = settings_int(s, SET_MM_BASE_PAGE_SIZE);
  if (page != 4096 && page != 65536) {
    g_autofree char *v = settings_format_size((uint64_t)page);
    g_autofree char *at = settings_prefix(s, SET_MM_BASE_PAGE_SIZE);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%ssetting 'mm.base_page_size' cannot be %s on ppc64 hash: Linux builds it with 4K or 64K pages", at, v);
    return FALSE;
  }
  unsigned base = base_shift_of(s);
  if (base == 12 && settings_int(s, SET_THP_ENABLED) != THP_ENABLED_NEVER) {
    g_autofree char *at = settings_prefix(s, SET_THP_ENABLED);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%ssetting 'thp.enabled' must be never on ppc64 hash with 4K base pages: Linux has no transparent "
                "huge pages there (hash__has_transparent_hugepage: a PMD maps 2M, the hash MMU's huge page is 16M)", at);
    return FALSE;
  }
  /* hugepage_init fails there before it makes hugepages-<size>kB: no
   * size of multi-size THP either. */
  for (SettingId id = SET_THP_HUGEPAGES_16KB; base == 12 && id <= SET_THP_HUGEPAGES_16384KB; id++) {
    ThpSizeMode m = (ThpSizeMode)settings_int(s, id);
    if (settings_is_set(s, id) && m != THP_SIZE_NEVER && m != THP_SIZE_INHERIT) {
      g_autofree char *at = settings_prefix(s, id);
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                  "%ssetting '%s' must be never on ppc64 hash with 4K base pages: Linux has no transparent "
                  "huge pages of any size there (hash__has_transparent_hugepage; set mm.base_page_size=64K)",
                  at, settings_def(id)->name);
      return FALSE;
    }
  }
  if (base == 12 && settings_int(s, SET_HUGETLB_NR_HUGEPAGES)) {
    g_autofree char *at = settings_prefix(s, SET_HUGETLB_NR_HUGEPAGES);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%ssetting 'hugetlb.nr_hugepages' must be 0 on ppc64 hash with 4K base pages: its huge page is 16M, "
                "which no level of the 4K page table maps (set mm.base_page_size=64K for a 16M pool)", at);
    return FALSE;
  }
  if (settings_int(s, SET_HUGETLB_NR_HUGEPAGES_1G)) {
    g_autofree char *at = settings_prefix(s, SET_HUGETLB_NR_HUGEPAGES_1G);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%ssetting 'hugetlb.nr_hugepages_1g' must be 0 on ppc64 hash: its gigantic page is 16G, "
                "which is not modelled, and there is no 1G page", at);
    return FALSE;
  }
  /* A 16M THP is an order-12 block of 4K frames: the buddy allocator must
   * hold blocks that large (ARCH_FORCE_MAX_ORDER 8 of 64K pages). */
  if (base == 16 && settings_int(s, SET_THP_ENABLED) != THP_ENABLED_NEVER &&
      settings_int(s, SET_BUDDY_MAX_ORDER) < PPC64_16M_ORDER) {
    g_autofree char *at = settings_prefix(s, SET_BUDDY_MAX_ORDER);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%ssetting 'buddy.max_order' must be at least %u on ppc64 hash with 64K pages and THP: "
                "a 16M transparent huge page is one block of 2^%u 4K frames", at, PPC64_16M_ORDER, PPC64_16M_ORDER);
    return FALSE;
  }
  uint64_t hpt = (uint64_t)settings_int(s, SET_PPC64_HPT_SIZE);
  if (hpt && ((hpt & (hpt - 1)) || hpt < (1ULL << PPC64_HPT_MIN_SHIFT) || hpt > (1ULL << PPC64_HPT_MAX_SHIFT))) {
    g_autofree char *v = settings_format_size(hpt);
    g_autofree char *at = settings_prefix(s, SET_PPC64_HPT_SIZE);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%ssetting 'ppc64.hpt_size' cannot be %s: it takes 0 (sized from RAM) or a power of two from 256K to 64T",
                at, v);
    return FALSE;
  }
  return TRUE;
}

static void ppc64_pgtable_geometry(const Settings *s, PtGeometry *g)
{
  ppc64_geometry(g, base_shift_of(s));
}

static uint64_t ppc64_user_va_limit(const Settings *s)
{
  return ppc64_user_limit(base_shift_of(s));
}

/* The level whose leaf maps the size: base pages at the PTE level, 16M at
 * the PMD level with 64K base pages (the 16M THP of hash-64k.h).  With 4K
 * base pages no level of Linux's table holds a 16M leaf. */
static unsigned ppc64_size_level(unsigned size_code)
{
  return size_code == PPC64_16M ? 2 : 1;
}

/* ---- the machine-wide part ------------------------------------------------------ */

static void shared_unref(Ppc64Shared *sh)
{
  if (!sh || --sh->refs)
    return;
  ppc64_hpt_free(sh->hpt);
  g_hash_table_destroy(sh->preload);
  g_free(sh);
}

/* htab_initialize(): the table sized from RAM (or ppc64.hpt_size), taken
 * from node 0, and the linear mapping of all RAM bolted with 16M pages. */
static Ppc64Shared *shared_new(const Settings *s, PhysMem *pm, unsigned base_shift, GError **error)
{
  uint64_t ram = (uint64_t)settings_int(s, SET_MACHINE_NODES) * (uint64_t)settings_int(s, SET_MACHINE_MEM_PER_NODE);
  uint64_t want = (uint64_t)settings_int(s, SET_PPC64_HPT_SIZE);
  unsigned shift = want ? 63 - (unsigned)__builtin_clzll(want) : ppc64_htab_shift_for_mem(ram, base_shift);
  Ppc64Hpt *hpt = ppc64_hpt_new(pm, 0, shift, error);
  if (!hpt) {
    /* Name where the size came from: the setting, or the memory it was
     * derived from (ppc64_htab_shift_for_mem). */
    g_autofree char *size_where = settings_blame(s, SET_PPC64_HPT_SIZE);
    g_autofree char *mem_where = settings_blame(s, SET_MACHINE_MEM_PER_NODE);
    g_prefix_error(error, "%s, %s: ", size_where, mem_where);
    return NULL;
  }
  Ppc64Shared *sh = g_new0(Ppc64Shared, 1);
  sh->refs = 1;
  sh->hpt = hpt;
  sh->preload = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  if (settings_bool(s, SET_PPC64_HPT_BOLT_LINEAR)) {
    unsigned kssize = settings_bool(s, SET_PPC64_SEGMENT_1T) ? PPC64_SEG_1T : PPC64_SEG_256M;
    const unsigned lshift = 24; /* mmu_linear_psize: 16M */
    for (uint64_t pa = 0; pa + (1ULL << lshift) <= ram; pa += 1ULL << lshift) {
      uint64_t ea = PPC64_PAGE_OFFSET + pa;
      uint64_t vsid = ppc64_vsid(PPC64_KERNEL_LINEAR_CONTEXT, ea, kssize);
      uint64_t vpn = ppc64_vpn(ea, vsid, kssize);
      uint64_t hash = ppc64_hpt_hash(vpn, lshift, kssize);
      uint64_t v = ppc64_hpte_avpn(vpn, lshift, kssize) | HPTE_V_LARGE;
      /* PAGE_KERNEL: privileged read-write (PP 0b000), dirty; executable
       * only where the kernel text lies (the first 16M). */
      uint64_t r = ppc64_hpte_rpn(pa, lshift, lshift) | HPTE_R_R | HPTE_R_C | HPTE_R_M | (pa ? HPTE_R_N : 0);
      if (!ppc64_hpt_bolt(hpt, hash, v, r))
        break; /* both groups full of bolted entries: htab_bolt_mapping fails */
    }
  }
  return sh;
}

/* The preload list of thread t, made on first use. */
static Ppc64Preload *preload_of(Ppc64Cpu *st, const Thread *t)
{
  if (!t || !st->preload_cap)
    return NULL;
  if (st->preload_owner == t)
    return st->preload;
  uint64_t key = (uint64_t)t->pid << 32 | t->tid; /* pids and tids use all 32 bits */
  Ppc64Preload *p = g_hash_table_lookup(st->sh->preload, &key);
  if (!p) {
    p = g_new0(Ppc64Preload, 1);
    g_hash_table_insert(st->sh->preload, g_memdup2(&key, sizeof key), p);
  }
  st->preload_owner = t;
  st->preload = p;
  return p;
}

/* ---- per-CPU state ---------------------------------------------------------------- */

static void ppc64_cpu_free(void *state)
{
  Ppc64Cpu *st = state;
  if (!st)
    return;
  ppc64_slb_clear(&st->slb);
  tlb_free(st->tlb);
  shared_unref(st->sh);
  g_free(st);
}

static void *ppc64_cpu_new(const Settings *s, Cpu *cpu, GError **error)
{
  Ppc64Cpu *st = g_new0(Ppc64Cpu, 1);
  st->base_shift = base_shift_of(s);
  st->user_limit = ppc64_user_limit(st->base_shift);
  st->seg_1t = settings_bool(s, SET_PPC64_SEGMENT_1T);
  st->min_user_context = ppc64_min_user_context(st->base_shift);
  st->preload_cap = (unsigned)MIN(settings_int(s, SET_PPC64_SLB_PRELOAD), PPC64_PRELOAD_MAX);
  st->line_shift = (unsigned)__builtin_ctz(memsys_line_bytes(cpu->mem)); /* a power of two */
  st->slb_asid = -1;
  st->tlb_hit_cycles = (uint32_t)settings_int(s, SET_TLB_STLB_HIT_CYCLES);
  st->walk_overhead_cycles = (uint32_t)settings_int(s, SET_WALK_OVERHEAD_CYCLES);
  st->slb_miss_cycles = ns_cycles(s, SET_PPC64_SLB_MISS_NS);
  st->hash_fault_cycles = ns_cycles(s, SET_PPC64_HASH_FAULT_NS);
  st->hpte_insert_cycles = ns_cycles(s, SET_PPC64_HPTE_INSERT_NS);
  st->tlbie_cycles = ns_cycles(s, SET_TLB_INVLPG_NS);
  st->lpar = settings_bool(s, SET_VIRT_LPAR);
  st->h_enter_cycles = (uint32_t)settings_int(s, SET_VIRT_H_ENTER_CYCLES);
  st->h_remove_cycles = (uint32_t)settings_int(s, SET_VIRT_H_REMOVE_CYCLES);
  st->h_protect_cycles = (uint32_t)settings_int(s, SET_VIRT_H_PROTECT_CYCLES);
  st->h_bulk_remove_cycles = (uint32_t)settings_int(s, SET_VIRT_H_BULK_REMOVE_CYCLES);
  {
    PtGeometry g;
    ppc64_geometry(&g, st->base_shift);
    st->pmd_shift = g.shift[2];
  }
  ppc64_slb_init(&st->slb, (unsigned)settings_int(s, SET_PPC64_SLB_ENTRIES),
                 st->seg_1t ? PPC64_SEG_1T : PPC64_SEG_256M);
  unsigned n = (unsigned)settings_int(s, SET_TLB_STLB_ENTRIES);
  if (n) {
    const TlbReplPolicy *repl = tlb_repl_from_settings(s, error);
    st->tlb = repl ? tlb_new_from_settings(s, SET_TLB_STLB_ENTRIES, SET_TLB_STLB_WAYS, repl, error) : NULL;
    if (!st->tlb)
      goto fail;
  }
  /* One HPT per machine: CPU 0 makes it, the others share it. */
  Machine *m = cpu->m;
  if (!m || !m->k) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "ppc64: a CPU needs its machine's memory for the HPT");
    goto fail;
  }
  if (cpu->id > 0 && m->cpus && m->cpus[0]) {
    st->sh = ((Ppc64Cpu *)m->cpus[0]->arch_state)->sh;
    st->sh->refs++;
  } else {
    st->sh = shared_new(s, m->k->pm, st->base_shift, error);
    if (!st->sh)
      goto fail;
  }
  st->hpt_pa = ppc64_hpt_base_pa(st->sh->hpt);
  st->hpt_mask = ppc64_hpt_mask(st->sh->hpt);
  return st;
fail:
  ppc64_cpu_free(st);
  return NULL;
}

Ppc64Hpt *ppc64_cpu_hpt(const Cpu *cpu)
{
  return ((const Ppc64Cpu *)cpu->arch_state)->sh->hpt;
}

Ppc64Slb *ppc64_cpu_slb(const Cpu *cpu)
{
  return &((Ppc64Cpu *)cpu->arch_state)->slb;
}

Tlb *ppc64_cpu_tlb(const Cpu *cpu)
{
  return ((const Ppc64Cpu *)cpu->arch_state)->tlb;
}

static uint64_t context_of(const Ppc64Cpu *st, unsigned asid)
{
  /* hash__alloc_context_id() hands out the lowest free id from
   * MIN_USER_CONTEXT; mms are made in asid order and live for the run. */
  return st->min_user_context + (asid ? asid - 1 : 0);
}

uint64_t ppc64_context(const Cpu *cpu, unsigned asid)
{
  return context_of(cpu->arch_state, asid);
}

static unsigned user_ssize(const Ppc64Cpu *st, uint64_t ea)
{
  return st->seg_1t && ea >= (1ULL << PPC64_SID_SHIFT_1T) ? PPC64_SEG_1T : PPC64_SEG_256M;
}

/* ---- segments -------------------------------------------------------------------- */

/* Linux's slices (arch/powerpc/include/asm/book3s/64/slice.h, mm/book3s64/
 * slice.c, Linux 6.12): 256M below 4G (SLICE_LOW_SHIFT 28), 1T above
 * (SLICE_HIGH_SHIFT 40); every segment of a slice has the slice's base page
 * size, and slice_get_unmapped_area() gives a 16M hugetlb mapping slices
 * of its own, converted to MMU_PAGE_16M.  The 16M page of such a slice is
 * one HPTE with a 16M base page (__hash_page_huge with MMU_PAGE_16M).
 * The model's placement does not keep slices apart: a slice is 16M when
 * the mm's VMAs in it are all 16M hugetlb ones (and there is one); where a
 * hugetlb VMA shares a slice with others, its 16M pages stay hashed in the
 * base-page segment, one MPSS HPTE per 64K subpage, as THPs are.  With 4K
 * base pages there is no 16M hugetlb page (check()). */
#define PPC64_SLICE_LOW_SHIFT 28
#define PPC64_SLICE_HIGH_SHIFT 40
#define PPC64_SLICE_LOW_END (1ULL << 32)

static unsigned slice_base_shift(const Ppc64Cpu *st, const Mm *mm, uint64_t va)
{
  if (st->base_shift != 16 || !mm)
    return st->base_shift;
  unsigned shift = va < PPC64_SLICE_LOW_END ? PPC64_SLICE_LOW_SHIFT : PPC64_SLICE_HIGH_SHIFT;
  uint64_t start = va >> shift << shift, end = start + (1ULL << shift);
  gboolean huge = FALSE;
  for (guint i = mm_vma_index_from(mm, start), n = mm_vma_count(mm); i < n; i++) {
    const Vma *v = mm_vma(mm, i);
    if (v->start >= end)
      break;
    if (!(v->flags & MAP_F_HUGETLB))
      return st->base_shift;
    huge = TRUE;
  }
  return huge ? 24 : st->base_shift;
}

/* switch_slb(): the CPU now runs another mm.  User SLB entries go (slbie or
 * slbia, both invalidating the ERAT), the thread's preload list comes in. */
static void slb_switch(Cpu *cpu, Ppc64Cpu *st, Mm *mm, GString *ex)
{
  unsigned had = ppc64_slb_valid_user(&st->slb);
  ppc64_slb_flush_user(&st->slb);
  cpu_flush_l1(cpu);
  st->slb_asid = mm->asid;
  uint64_t ctx = context_of(st, mm->asid);
  const Thread *t = cpu->kc.cur && cpu->kc.cur->mm == mm ? cpu->kc.cur : NULL;
  Ppc64Preload *p = preload_of(st, t);
  unsigned loaded = 0;
  for (unsigned i = 0; p && i < p->nr; i++) {
    uint64_t ea = ppc64_preload_ea(p, st->preload_cap, i);
    if (ea >= st->user_limit)
      continue;
    ppc64_slb_insert_user(&st->slb, ea, ctx, user_ssize(st, ea), slice_base_shift(st, mm, ea));
    loaded++;
  }
  if (ex)
    g_string_append_printf(ex, "  context %" G_GUINT64_FORMAT " switched in (switch_slb): %u user SLB entries dropped, "
                           "ERAT flushed, %u segments preloaded for this thread\n", ctx, had, loaded);
}

/* do_slb_fault() for a user address: slb_allocate_user(), preload_add(). */
static int slb_miss(Cpu *cpu, Ppc64Cpu *st, Mm *mm, uint64_t va, unsigned ssize, uint64_t ctx)
{
  cpu->ctr.c[CTR_SLB_MISSES]++;
  unsigned e = ppc64_slb_insert_user(&st->slb, va, ctx, ssize, slice_base_shift(st, mm, va));
  const Thread *t = cpu->kc.cur && cpu->kc.cur->mm == mm ? cpu->kc.cur : NULL;
  Ppc64Preload *p = preload_of(st, t);
  if (p)
    ppc64_preload_add(p, st->preload_cap, va, st->seg_1t);
  return (int)e;
}

/* ---- the hashed page table ------------------------------------------------------------ */

/* A memory reference to the HPT or to Linux's page table, through the caches. */
static uint32_t table_ref(Cpu *cpu, uint64_t pa, MemLevel *where)
{
  return memsys_access(cpu->mem, pa, MREQ_WALK, where);
}

/* The hardware search of one PTEG: HPTEs read in order, each cache line
 * once, until one matches.  Adds the cycles to *walk; returns the slot, with
 * the entry in *e, or -1. */
static int pteg_search(Cpu *cpu, Ppc64Cpu *st, uint64_t pteg, uint64_t want_v, uint32_t *walk, Ppc64Hpte *e,
                       const char *which, GString *ex)
{
  Ppc64Hpt *h = st->sh->hpt;
  int hit = ppc64_hpt_find_entry(h, pteg, want_v, e);
  unsigned last = hit >= 0 ? (unsigned)hit : PPC64_HPTES_PER_GROUP - 1;
  uint64_t line = ~0ULL;
  uint64_t pa = st->hpt_pa + pteg * PPC64_PTEG_BYTES; /* ppc64_hpte_pa of slot i */
  for (unsigned i = 0; i <= last; i++, pa += PPC64_HPTE_BYTES) {
    if (pa >> st->line_shift == line)
      continue;
    line = pa >> st->line_shift;
    MemLevel where;
    uint32_t c = table_ref(cpu, pa, &where);
    *walk += c;
    cpu->ctr.c[CTR_WALK_REFS]++;
    cpu->ctr.c[CTR_WALK_REFS_L1 + where]++;
    if (ex)
      g_string_append_printf(ex, "    %-9s PTEG %#" G_GINT64_MODIFIER "x line at pa %#" G_GINT64_MODIFIER "x: %-4s %3u cycles\n",
                             which, pteg, line << st->line_shift, memsys_level_name(where), c);
  }
  if (ex) {
    unsigned bolted, valid = ppc64_hpt_valid_in(h, pteg, &bolted);
    if (hit >= 0) {
      g_string_append_printf(ex, "    %-9s PTEG slots 0-%d probed: slot %d matches, HPTE v 0x%016" G_GINT64_MODIFIER "x r 0x%016" G_GINT64_MODIFIER "x\n",
                             which, hit, hit, e->v, e->r);
    } else {
      g_string_append_printf(ex, "    %-9s PTEG slots 0-7 probed: no match (%u valid, %u bolted)\n", which, valid, bolted);
    }
  }
  return hit;
}

/* Charge a kernel scan of a PTEG's slots [from, from + n): each cache line
 * read once (native_hpte_insert and native_hpte_remove read the HPTEs). */
static uint32_t pteg_scan_cost(Cpu *cpu, Ppc64Cpu *st, uint64_t pteg, unsigned from, unsigned n)
{
  Ppc64Hpt *h = st->sh->hpt;
  uint32_t c = 0;
  uint64_t line = ~0ULL;
  for (unsigned k = 0; k < n; k++) {
    uint64_t pa = ppc64_hpte_pa(h, pteg, (from + k) & (PPC64_HPTES_PER_GROUP - 1));
    if (pa >> st->line_shift == line)
      continue;
    line = pa >> st->line_shift;
    c += table_ref(cpu, pa, NULL);
  }
  return c;
}

/* The insert loop of __hash_page_4K: primary group, secondary group (H
 * set), else evict from the group the timebase picks and repeat.  The CPU
 * clock stands for the timebase; *cycles is the time spent so far.  When
 * the group picked holds only bolted entries, the kernel goes round until
 * the timebase picks the other one; the model goes there at once.  Returns
 * the slot, with its PTEG in *pteg_out, or -1 when every valid entry of
 * both groups is bolted. */
static int hpte_insert(Cpu *cpu, Ppc64Cpu *st, uint64_t hash, uint64_t v, uint64_t r, unsigned owner,
                       uint32_t *cycles, uint64_t *pteg_out, GString *ex)
{
  Ppc64Hpt *h = st->sh->hpt;
  uint64_t mask = ppc64_hpt_mask(h);
  uint64_t prim = hash & mask, sec = ~hash & mask;
  for (;;) {
    /* Under a hypervisor each group tried is one H_ENTER
     * (pSeries_lpar_hpte_insert; H_PTEG_FULL sends the caller on). */
    unsigned used = ppc64_hpt_valid_in(h, prim, NULL);
    *cycles += pteg_scan_cost(cpu, st, prim, 0, MIN(used + 1, PPC64_HPTES_PER_GROUP));
    *cycles += hcalls(cpu, st, CTR_HCALL_H_ENTER, st->h_enter_cycles, 1);
    int slot = ppc64_hpt_insert(h, prim, v & ~HPTE_V_SECONDARY, r, owner);
    uint64_t g = prim;
    if (slot < 0) {
      used = ppc64_hpt_valid_in(h, sec, NULL);
      *cycles += pteg_scan_cost(cpu, st, sec, 0, MIN(used + 1, PPC64_HPTES_PER_GROUP));
      *cycles += hcalls(cpu, st, CTR_HCALL_H_ENTER, st->h_enter_cycles, 1);
      slot = ppc64_hpt_insert(h, sec, v | HPTE_V_SECONDARY, r, owner);
      g = sec;
    }
    if (slot >= 0) {
      *cycles += st->hpte_insert_cycles;
      *pteg_out = g;
      return slot;
    }
    /* Both groups full: mftb() & 1 picks the primary, else the secondary;
     * native_hpte_remove() starts at slot mftb() & 7. */
    uint64_t tb = cpu->clock + *cycles;
    uint64_t victim = (tb & 1) ? prim : sec;
    int gone = -1;
    Ppc64Hpte old = { 0 };
    uint64_t tb2 = 0;
    for (unsigned tries = 0; tries < 2 && gone < 0; tries++) {
      if (tries)
        victim = victim == prim ? sec : prim;
      *cycles += pteg_scan_cost(cpu, st, victim, 0, PPC64_HPTES_PER_GROUP);
      tb2 = cpu->clock + *cycles;
      gone = ppc64_hpt_remove(h, victim, (unsigned)(tb2 & 7), &old);
      /* pSeries_lpar_hpte_remove: one H_REMOVE (H_ANDCOND, not bolted)
       * per slot tried from the start slot until one succeeds. */
      unsigned tried = gone < 0 ? PPC64_HPTES_PER_GROUP : (((unsigned)gone - (unsigned)(tb2 & 7)) & 7) + 1;
      *cycles += hcalls(cpu, st, CTR_HCALL_H_REMOVE, st->h_remove_cycles, tried);
    }
    if (ex)
      g_string_append_printf(ex, "    both PTEGs full: timebase %#" G_GINT64_MODIFIER "x, bit 0 = %u picks the %s; ",
                             tb, (unsigned)(tb & 1), (tb & 1) ? "primary" : "secondary");
    if (gone < 0) {
      if (ex)
        g_string_append(ex, "every entry of both groups is bolted\n");
      return -1;
    }
    cpu->ctr.c[CTR_HPTE_EVICTIONS]++;
    if (ex)
      g_string_append_printf(ex, "%s PTEG scanned from slot %u (timebase %#" G_GINT64_MODIFIER "x & 7): slot %d evicted "
                             "(v 0x%016" G_GINT64_MODIFIER "x), no tlbie, so its translation may live on in a TLB\n",
                             victim == prim ? "primary" : "secondary", (unsigned)(tb2 & 7), tb2, gone, old.v);
  }
}

/* ---- the hash fault -------------------------------------------------------------------- */

/* hash_page_mm() and __hash_page_4K(): look the page up in Linux's page
 * table, check the access, mark the PTE, then fix the HPTE: update the one
 * at (found_pteg, found_slot) in place when there is one, else insert a new
 * one.  A protection fault (prot) also tlbies the page, whether or not its
 * HPTE is still there (native_hpte_updatepp; a fault for a missing HPTE
 * passes HPTE_NOHPTE_UPDATE and does not).  XLAT_OK when the HPT now allows
 * the access. */
static XlatStatus hash_page(Cpu *cpu, Ppc64Cpu *st, Mm *mm, uint64_t va, AccessKind kind, unsigned ssize,
                            uint64_t vpn, uint64_t hash, gboolean prot, int64_t found_pteg, int found_slot,
                            uint8_t *seg_base, uint32_t *cycles, GString *ex)
{
  Ppc64Hpt *h = st->sh->hpt;
  const PtGeometry *g = &mm->pt.g;
  gboolean write = kind == ACC_STORE, fetch = kind == ACC_IFETCH;
  *cycles += st->hash_fault_cycles;
  if (ex)
    g_string_append_printf(ex, "  hash fault (%s): hash_page %u cycles, then Linux's page table in software:\n",
                           prot ? "protection" : "no HPTE", st->hash_fault_cycles);

  /* The software walk; every entry is a load through the caches. */
  PtNode *n = mm->pt.root;
  unsigned level = g->levels, idx;
  uint64_t e;
  for (;; level--) {
    idx = pgtable_index(g, level, va);
    uint64_t pa = (n->pfn << 12) | ((uint64_t)idx << 3);
    MemLevel where;
    uint32_t c = table_ref(cpu, pa, &where);
    *cycles += c;
    e = n->e[idx];
    if (ex)
      g_string_append_printf(ex, "    %-3s index %3u  read 0x%012" G_GINT64_MODIFIER "x  %-4s %3u cycles  entry 0x%016" G_GINT64_MODIFIER "x%s\n",
                             ppc64_ops.level_name[level], idx, pa, memsys_level_name(where), c, e,
                             !(e & PTE_P) ? " [not present]" : (e & PTE_SW_NUMA) ? " [PROT_NONE for NUMA hinting]" : "");
    if (!(e & PTE_P) || (e & PTE_SW_NUMA))
      return XLAT_NOT_PRESENT;
    if (level == 1 || (e & PTE_PS))
      break;
    if (!n->child || !n->child[idx])
      return XLAT_NOT_PRESENT;
    n = n->child[idx];
  }
  /* check_pte_access(): read needs a user page, a store _PAGE_WRITE, a
   * fetch _PAGE_EXEC; else the generic fault handler decides. */
  if (!(e & PTE_US) || (write && !(e & PTE_RW)) || (fetch && (e & PTE_NX))) {
    if (ex)
      g_string_append(ex, "    the Linux PTE does not allow this access: a page fault\n");
    return XLAT_PROTECTION;
  }
  pgtable_entry_set_flags(n, idx, PTE_A | (write ? PTE_D : 0));
  e = n->e[idx];

  /* The segment's base page is its slice's; an SLB entry made before the
   * slice changed size is rewritten (slice_convert flushes the SLBs), and
   * the hash follows. */
  unsigned base = slice_base_shift(st, mm, va);
  if (base != *seg_base) {
    if (ex)
      g_string_append_printf(ex, "    the slice's base page is now %uK: the segment's SLB entry is rewritten\n",
                             (1u << base) >> 10);
    *seg_base = (uint8_t)base;
    hash = ppc64_hpt_hash(vpn, base, ssize);
    found_slot = -1;
  }
  /* The page the HPTE maps: the leaf's size where the hardware has it in
   * this segment (base page, 64K, 16M), else a base page of the leaf. */
  uint64_t span = pgtable_entry_span(g, level);
  unsigned leaf_shift = 63 - (unsigned)__builtin_clzll(span);
  unsigned actual = ppc64_penc(base, leaf_shift) >= 0 ? leaf_shift : base;
  uint64_t page_pa = (pte_pfn(e) << 12) + (va & (span - 1) & ~((1ULL << actual) - 1));
  uint64_t r = ppc64_hpte_rpn(page_pa, base, actual) | pte_to_rflags(e);
  uint64_t v = ppc64_hpte_avpn(vpn, base, ssize) | (actual != 12 ? HPTE_V_LARGE : 0);

  if (prot) {
    /* The tlbie of native_hpte_updatepp(): this CPU's TLB loses the page. */
    *cycles += st->tlbie_cycles;
    if (st->tlb)
      for (unsigned sz = 0; sz < PPC64_N_SIZES; sz++)
        tlb_invalidate(st->tlb, tlb_key(mm->asid, sz, va >> ppc64_shift[sz]));
  }
  if (found_slot >= 0) {
    /* native_hpte_updatepp(): new PP, N and C in place. */
    Ppc64Hpte old = ppc64_hpt_get(h, (uint64_t)found_pteg, (unsigned)found_slot);
    uint64_t keep = old.r & ~(HPTE_R_PP | HPTE_R_N | HPTE_R_C);
    ppc64_hpt_set_r(h, (uint64_t)found_pteg, (unsigned)found_slot, keep | (r & (HPTE_R_PP | HPTE_R_N | HPTE_R_C)));
    uint32_t c = table_ref(cpu, ppc64_hpte_pa(h, (uint64_t)found_pteg, (unsigned)found_slot), NULL);
    /* Under a hypervisor: pSeries_lpar_hpte_updatepp, one H_PROTECT. */
    c += hcalls(cpu, st, CTR_HCALL_H_PROTECT, st->h_protect_cycles, 1);
    *cycles += c + st->hpte_insert_cycles;
    if (ex)
      g_string_append_printf(ex, "    HPTE in PTEG %#" G_GINT64_MODIFIER "x slot %d updated in place (PP %u -> %u%s), "
                             "tlbie: %u cycles\n", found_pteg, found_slot, (unsigned)(old.r & HPTE_R_PP),
                             (unsigned)(r & HPTE_R_PP), st->lpar ? ", H_PROTECT" : "", c + st->hpte_insert_cycles + st->tlbie_cycles);
    return XLAT_OK;
  }
  uint32_t before = *cycles;
  uint64_t pteg;
  uint64_t enters = cpu->ctr.c[CTR_HCALL_H_ENTER], removes = cpu->ctr.c[CTR_HCALL_H_REMOVE];
  int slot = hpte_insert(cpu, st, hash, v, r, mm->asid, cycles, &pteg, ex);
  if (ex && st->lpar)
    g_string_append_printf(ex, "    hypervisor calls (virt.lpar): %" G_GUINT64_FORMAT " H_ENTER, %" G_GUINT64_FORMAT
                           " H_REMOVE\n", cpu->ctr.c[CTR_HCALL_H_ENTER] - enters, cpu->ctr.c[CTR_HCALL_H_REMOVE] - removes);
  if (slot < 0) {
    if (ex)
      g_string_append(ex, "    no slot could be freed in either group: the HPTE was not inserted\n");
    return XLAT_NOT_PRESENT;
  }
  cpu->ctr.c[CTR_HPTE_INSERTS]++;
  if (ex)
    g_string_append_printf(ex, "    HPTE inserted in the %s PTEG %#" G_GINT64_MODIFIER "x slot %d (%s page): "
                           "v 0x%016" G_GINT64_MODIFIER "x r 0x%016" G_GINT64_MODIFIER "x, %u cycles\n",
                           pteg == (hash & ppc64_hpt_mask(h)) ? "primary" : "secondary", pteg, slot,
                           ppc64_ops.size_name[size_code(actual)],
                           ppc64_hpt_get(h, pteg, (unsigned)slot).v, r, *cycles - before);
  return XLAT_OK;
}

/* ---- translation ------------------------------------------------------------------------ */

/* The hash and both PTEG numbers, for explain. */
static gboolean explain_hash(GString *ex, const Ppc64Hpt *h, uint64_t va, unsigned ssize, unsigned base, uint64_t hash)
{
  uint64_t mask = ppc64_hpt_mask(h), prim = hash & mask, sec = ~hash & mask;
  uint64_t index = (va & ((1ULL << ppc64_sid_shift(ssize)) - 1)) >> base;
  g_string_append_printf(ex, "  hash = (%spage index %#" G_GINT64_MODIFIER "x) & 0x7fffffffff = %#" G_GINT64_MODIFIER "x "
                         "(%uK base page)\n", ssize == PPC64_SEG_1T ? "VSID ^ (VSID << 25) ^ " : "VSID ^ ", index, hash,
                         (1u << base) >> 10);
  g_string_append_printf(ex, "  PTEGs: primary hash & %#" G_GINT64_MODIFIER "x = %#" G_GINT64_MODIFIER "x (pa %#" G_GINT64_MODIFIER "x), "
                         "secondary ~hash & mask = %#" G_GINT64_MODIFIER "x (pa %#" G_GINT64_MODIFIER "x)\n",
                         mask, prim, ppc64_hpte_pa(h, prim, 0), sec, ppc64_hpte_pa(h, sec, 0));
  return TRUE;
}

/* The translation after an ERAT miss; always inline, so that the hot
 * instance (ex NULL) loses every explanation. */
static inline G_ALWAYS_INLINE XlatStatus ppc64_translate_body(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind,
                                                              Xlat *out, GString *ex)
{
  Ppc64Cpu *st = cpu->arch_state;
  Ppc64Hpt *h = st->sh->hpt;
  unsigned asid = mm->asid;
  out->walks = 0;
  out->walk_cycles = 0;
  out->cycles = 0;
  cpu->ctr.c[CTR_ERAT_MISSES]++;

  if (va >= st->user_limit) {
    if (ex)
      g_string_append_printf(ex, "  %#" G_GINT64_MODIFIER "x is above the user address limit %#" G_GINT64_MODIFIER "x: "
                             "the SLB miss handler refuses it\n", va, st->user_limit);
    return XLAT_NONCANONICAL;
  }
  if (st->slb_asid != (int)asid)
    slb_switch(cpu, st, mm, ex);

  /* Segment: ESID -> VSID through the SLB. */
  uint32_t cycles = 0;
  unsigned ssize = user_ssize(st, va);
  uint64_t ctx = context_of(st, asid);
  int e = ppc64_slb_lookup(&st->slb, va);
  if (ex)
    g_string_append_printf(ex, "  %s segment, ESID %#" G_GINT64_MODIFIER "x (EA >> %u), context %" G_GUINT64_FORMAT "\n",
                           ssize == PPC64_SEG_1T ? "1T" : "256M", va >> ppc64_sid_shift(ssize), ppc64_sid_shift(ssize), ctx);
  if (e < 0) {
    e = slb_miss(cpu, st, mm, va, ssize, ctx);
    cycles += st->slb_miss_cycles;
    if (ex)
      g_string_append_printf(ex, "  SLB miss (%u entries, 0-1 bolted): software handler %u cycles, entry %d written\n",
                             st->slb.n, st->slb_miss_cycles, e);
  } else if (ex) {
    g_string_append_printf(ex, "  SLB hit in entry %d\n", e);
  }
  const Ppc64Slbe *seg = &st->slb.e[e];
  uint64_t vsid = seg->vsid;
  unsigned base = seg->base_shift;
  if (ex) {
    unsigned bits = ssize == PPC64_SEG_1T ? PPC64_VSID_BITS_1T : PPC64_VSID_BITS_256M;
    g_string_append_printf(ex, "  VSID: proto-VSID %" G_GUINT64_FORMAT " << %u | ESID = %#" G_GINT64_MODIFIER "x; "
                           "x 12538073 mod (2^%u - 1) = %#" G_GINT64_MODIFIER "x\n",
                           ctx, ssize == PPC64_SEG_1T ? PPC64_ESID_BITS_1T : PPC64_ESID_BITS,
                           ppc64_protovsid(ctx, va, ssize), bits, vsid);
    g_string_append_printf(ex, "  VPN = VSID << %u | (EA offset in segment >> 12) = %#" G_GINT64_MODIFIER "x\n",
                           ppc64_sid_shift(ssize) - 12, ppc64_vpn(va, vsid, ssize));
  }
  gboolean hash_shown = FALSE;

  for (unsigned round = 0; round < PPC64_MAX_ROUNDS; round++) {
    base = seg->base_shift; /* hash_page may have rewritten it */
    if (round > 0) {
      cpu->ctr.c[CTR_ERAT_MISSES]++; /* the faulting instruction re-executes */
      if (ex)
        g_string_append(ex, "  the instruction re-executes: ERAT miss, SLB hit\n");
    }
    /* TLB, tagged by the virtual address: every page size probed. */
    cycles += st->tlb_hit_cycles;
    TlbPayload *p = NULL;
    /* The sizes the TLB holds, smallest first (tlb_lookup's order and its
     * size_mask test, made once); tlb_probe_held's miss leaves the way of
     * the refill below when the page's size is the last one probed. */
    for (unsigned held = st->tlb ? st->tlb->size_mask : 0; held && !p; held &= held - 1) {
      unsigned sz = (unsigned)__builtin_ctz(held);
      p = tlb_probe_held(st->tlb, tlb_key(asid, sz, va >> ppc64_shift[sz]));
    }
    if (p && flags_allow(p->flags, kind)) {
      if (ex)
        g_string_append_printf(ex, "  TLB hit (%s entry): %u cycles\n", ppc64_ops.size_name[p->size], st->tlb_hit_cycles);
      return cpu_stlb_hit(cpu, out, p, cycles);
    }
    /* The VPN, hash and AVPN only past a TLB hit (pure functions of the
     * segment and va): the ERAT misses that the TLB serves need none. */
    uint64_t vpn = ppc64_vpn(va, vsid, ssize);
    uint64_t mask = st->hpt_mask;
    uint64_t hash = ppc64_hpt_hash(vpn, base, ssize);
    uint64_t want = ppc64_hpte_avpn(vpn, base, ssize) | HPTE_V_VALID;
    uint64_t prim = hash & mask, sec = ~hash & mask;
    int64_t pteg = -1;
    int slot = -1;
    if (p) {
      /* The TLB holds the page but forbids the access (a store to a
       * read-only entry): a protection interrupt straight away; the kernel
       * finds the HPTE through the PTE's slot bits, here by its groups. */
      cpu->ctr.c[CTR_STLB_HITS]++;
      if (ex)
        g_string_append_printf(ex, "  TLB hit (%s entry) without permission for this access: %u cycles\n",
                               ppc64_ops.size_name[p->size], st->tlb_hit_cycles);
      if (ex && !hash_shown)
        hash_shown = explain_hash(ex, h, va, ssize, base, hash);
      if ((slot = ppc64_hpt_find(h, prim, want)) >= 0)
        pteg = (int64_t)prim;
      else if ((slot = ppc64_hpt_find(h, sec, want | HPTE_V_SECONDARY)) >= 0)
        pteg = (int64_t)sec;
    } else {
      cpu->ctr.c[CTR_STLB_MISSES]++;
      if (ex)
        g_string_append_printf(ex, "  TLB miss (%s): %u cycles\n", st->tlb ? "tlb.stlb" : "no TLB", st->tlb_hit_cycles);
      if (ex && !hash_shown)
        hash_shown = explain_hash(ex, h, va, ssize, base, hash);
      /* The hardware searches the primary group, then the secondary. */
      out->walks++; /* a second search follows hash_page's insertion */
      cpu->ctr.c[CTR_PAGE_WALKS]++;
      uint32_t walk = st->walk_overhead_cycles;
      Ppc64Hpte hpte;
      slot = pteg_search(cpu, st, prim, want, &walk, &hpte, "primary", ex);
      if (slot >= 0) {
        pteg = (int64_t)prim;
      } else {
        slot = pteg_search(cpu, st, sec, want | HPTE_V_SECONDARY, &walk, &hpte, "secondary", ex);
        if (slot >= 0)
          pteg = (int64_t)sec;
      }
      out->walk_cycles += walk;
      cycles += walk;
      cpu->ctr.c[CTR_WALK_CYCLES] += walk;
      if (ex)
        g_string_append_printf(ex, "  HPT search: %u cycles (%u overhead)\n", walk, st->walk_overhead_cycles);
      if (slot >= 0) {
        unsigned a = hpte_page_shift(base, hpte.v, hpte.r);
        uint8_t f = hpte_flags(hpte.r);
        if (a && flags_allow(f, kind)) {
          /* Reference and change bits, as the hardware sets them. */
          uint64_t nr = hpte.r | HPTE_R_R | (kind == ACC_STORE ? HPTE_R_C : 0);
          if (nr != hpte.r)
            ppc64_hpt_set_r(h, (uint64_t)pteg, (unsigned)slot, nr);
          unsigned sz = size_code(a);
          out->size = (uint8_t)sz;
          out->pfn = (hpte.r & HPTE_R_RPN & ~((1ULL << a) - 1)) >> 12;
          out->flags = f;
          out->cycles = cycles;
          if (st->tlb)
            tlb_insert(st->tlb, tlb_key(asid, sz, va >> a), out->pfn, f, (uint8_t)sz);
          return XLAT_OK;
        }
        if (ex)
          g_string_append_printf(ex, "  the HPTE (PP %u%s) does not allow this access\n", (unsigned)(hpte.r & HPTE_R_PP),
                                 (hpte.r & HPTE_R_N) ? ", no-execute" : "");
      } else {
        cpu->ctr.c[CTR_HASH_FAULTS]++;
      }
    }
    XlatStatus s = hash_page(cpu, st, mm, va, kind, ssize, vpn, hash, p != NULL || slot >= 0, pteg, slot,
                             &st->slb.e[e].base_shift, &cycles, ex);
    /* pfn and flags are read only with XLAT_OK; set here too, so that the
     * compiler sees them set on every path of ppc64_l1_miss. */
    if (s != XLAT_OK) {
      out->cycles = cycles;
      out->pfn = 0;
      out->flags = 0;
      return s;
    }
  }
  out->cycles = cycles;
  out->pfn = 0;
  out->flags = 0;
  return XLAT_NOT_PRESENT;
}

/* ArchOps.translate: cpu_explain's path (with ex), and the tests'; the
 * core's hot path takes ppc64_l1_miss. */
static XlatStatus ppc64_translate(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, Xlat *out, GString *ex)
{
  return ppc64_translate_body(cpu, mm, va, kind, out, ex);
}

static inline G_ALWAYS_INLINE XlatStatus ppc64_translate_hot(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind,
                                                             Xlat *out, GString *ex)
{
  (void)ex;
  return ppc64_translate_body(cpu, mm, va, kind, out, NULL);
}

/* ArchOps.l1_miss: the core's path after the shortcut missed (ERAT probe,
 * refill, walker, faults) with the translation above inlined
 * (sim/cpu-translate.h): one call per ERAT miss instead of two. */
static gboolean ppc64_l1_miss(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t, uint64_t *pfn,
                              uint8_t *flags)
{
  /* The ERAT is one mixed array (tlb.l1_mixed) and the base page is 64K
   * (size 1): its refills inline.  A copy each for plain loads and stores,
   * where the kind is a constant: the tests of the other kinds' rules and
   * counters fold away, and the registers that held the kind through the
   * HPT search are free.  Fetches and dependent loads take the general
   * copy (test_ppc64_l1_miss_matches runs all four against the generic
   * path). */
  if (G_LIKELY(kind == ACC_LOAD))
    return cpu_translate_miss_with(cpu, th, va, ACC_LOAD, t, pfn, flags, ppc64_translate_hot, TRUE);
  if (kind == ACC_STORE)
    return cpu_translate_miss_with(cpu, th, va, ACC_STORE, t, pfn, flags, ppc64_translate_hot, TRUE);
  return cpu_translate_miss_with(cpu, th, va, kind, t, pfn, flags, ppc64_translate_hot, TRUE);
}

/* ---- invalidation ------------------------------------------------------------------------ */

/* native_hpte_invalidate() of the page's HPTE (found in its two groups, see
 * the header) and the tlbie's effect on this CPU's TLB.  The HPT is shared:
 * the first CPU of a shootdown removes the entry; the time is the
 * initiator's, charged per page at tlb.invlpg_ns (machine_flush_range). */
static void ppc64_flush_page(Cpu *cpu, unsigned asid, uint64_t va)
{
  Ppc64Cpu *st = cpu->arch_state;
  if (va >= st->user_limit)
    return;
  Ppc64Hpt *h = st->sh->hpt;
  if (ppc64_hpt_owner_valid(h, asid)) {
    unsigned ssize = user_ssize(st, va);
    uint64_t vpn = ppc64_vpn(va, ppc64_vsid(context_of(st, asid), va, ssize), ssize);
    uint64_t mask = ppc64_hpt_mask(h);
    /* Hashed with the base page, or with 16M in a 16M slice (the mm, and
     * so the slice, is not known here: both are tried; a page has one). */
    unsigned bases[2] = { st->base_shift, st->base_shift == 16 ? 24 : 0 };
    for (unsigned b = 0; b < 2 && bases[b]; b++) {
      uint64_t hash = ppc64_hpt_hash(vpn, bases[b], ssize);
      uint64_t want = ppc64_hpte_avpn(vpn, bases[b], ssize) | HPTE_V_VALID;
      uint64_t pteg = hash & mask;
      int slot = ppc64_hpt_find(h, pteg, want);
      if (slot < 0 && (slot = ppc64_hpt_find(h, pteg = ~hash & mask, want | HPTE_V_SECONDARY)) < 0)
        continue;
      if (st->lpar) {
        /* A 16M HPTE in a 64K segment is a THP's (hugepage_invalidate). */
        Ppc64Hpte e = ppc64_hpt_get(h, pteg, (unsigned)slot);
        batch_add(cpu, st, va, bases[b] == 16 && hpte_page_shift(16, e.v, e.r) == 24);
      }
      ppc64_hpt_invalidate(h, pteg, (unsigned)slot);
      break;
    }
  }
  if (st->tlb)
    for (unsigned sz = 0; sz < PPC64_N_SIZES; sz++)
      tlb_invalidate(st->tlb, tlb_key(asid, sz, va >> ppc64_shift[sz]));
}

/* Every HPTE of the context, and its TLB entries here.  Linux on hash has
 * no whole-context flush of its own (every hashed PTE of a range is flushed,
 * flush_hash_range), so the ppc64 presets raise tlb.flush_ceiling_pages;
 * past it this over-invalidates, which is safe. */
static void ppc64_flush_asid(Cpu *cpu, unsigned asid)
{
  Ppc64Cpu *st = cpu->arch_state;
  uint64_t n = ppc64_hpt_remove_owner(st->sh->hpt, asid);
  /* Under a hypervisor, as H_BULK_REMOVE calls of 4, charged here (the
   * kernel has no whole-context flush; this stands for the flush of every
   * hashed PTE, and is also called outside a range flush). */
  cpu_stall(cpu, hcalls(cpu, st, CTR_HCALL_H_BULK_REMOVE, st->h_bulk_remove_cycles,
                        (unsigned)((n + PPC64_BULK_REMOVE_HPTES - 1) / PPC64_BULK_REMOVE_HPTES)));
  if (st->tlb)
    tlb_flush_asid(st->tlb, asid);
}

/* ArchOps.flush_done: the range's last batch goes out; the hcall cycles
 * of the range are the initiator's (the tlbies are charged per page by
 * machine_flush_range as on bare metal). */
static uint64_t ppc64_flush_done(Cpu *cpu)
{
  Ppc64Cpu *st = cpu->arch_state;
  batch_close(cpu, st);
  uint64_t c = st->batch_cycles;
  st->batch_cycles = 0;
  return c;
}

/* tlbiel of every set: this CPU's TLB.  The HPT is memory, not a cache. */
static void ppc64_flush_all(Cpu *cpu)
{
  Ppc64Cpu *st = cpu->arch_state;
  if (st->tlb)
    tlb_flush_all(st->tlb);
}

/* No walk caches: freed table pages matter to nothing here. */
static void ppc64_tables_freed(Cpu *cpu, unsigned asid)
{
  (void)cpu;
  (void)asid;
}

const ArchOps ppc64_ops = {
  .name = "ppc64",
  .help = "ppc64 Book3S hashed page table: SLB, ERAT, TLB, HPT, Linux's page table behind it",
  .source = "Power ISA 2.06-3.0 Book III-S (SLB, hashed page table); arch/powerpc/mm/book3s64/",
  .n_sizes = PPC64_N_SIZES,
  .page_shift = { 12, 16, 24 },
  .size_name = { "4K", "64K", "16M" },
  .l1_itlb_name = "I-ERAT",
  .l1_dtlb_name = "D-ERAT",
  /* arch/powerpc/include/asm/book3s/64/pgtable.h: pgd, pud, pmd, pte */
  .level_name = { "", "PTE", "PMD", "PUD", "PGD" },
  .asid_name = NULL,
  .check = ppc64_check,
  .pgtable_geometry = ppc64_pgtable_geometry,
  .user_va_limit = ppc64_user_va_limit,
  .size_level = ppc64_size_level,
  .cpu_new = ppc64_cpu_new,
  .cpu_free = ppc64_cpu_free,
  .translate = ppc64_translate,
  .l1_miss = ppc64_l1_miss,
  .flush_page = ppc64_flush_page,
  .flush_asid = ppc64_flush_asid,
  .flush_all = ppc64_flush_all,
  .tables_freed = ppc64_tables_freed,
  .flush_done = ppc64_flush_done,
};
