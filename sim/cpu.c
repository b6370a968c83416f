/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cpu.c - the core: timing model and the translation path of every access.
 *
 * Per access: the L1 TLB (ITLB or DTLB arrays by page size, probed as the
 * hardware probes them in parallel), then the architecture's second level and
 * walk (arch/), faults handled by the kernel (kernel/fault.c) and retried, then
 * the data reference through the cache hierarchy (sim/memsys.c).  The timing
 * rules are listed in cpu.h.
 *
 * Leaves out: branch prediction and the front end beyond instruction-fetch
 * misses; an access that straddles two pages is translated for its first byte
 * only; loads never forward from stores.
 *
 * Hot path notes: a repeat access to the same 4K granule as the previous data
 * (or fetch) access skips the L1 probe.  This is exact, not an approximation:
 * that entry is the most recently used in its array, so probing it would
 * change nothing; every invalidation clears the shortcut.
 */
#include "config.h"
#include "cpu.h"

#include <math.h>
#include <string.h>
#include "events.h"
#include "fault.h"
#include "machine.h"
#include "cpu-translate.h"

#define NO_KEY (~0ULL)

static gboolean translate_generic(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t, uint64_t *pfn,
                                  uint8_t *flags);

static uint64_t granule_key(unsigned asid, uint64_t va)
{
  return cpu_granule_key(asid, va);
}

Cpu *cpu_new(Machine *m, int id, int node, Cache *llc)
{
  const Settings *s = m->s;
  Cpu *cpu = g_new0(Cpu, 1);
  cpu->id = id;
  cpu->node = node;
  cpu->kc.id = (unsigned)id;
  cpu->kc.node = node;
  cpu->kc.clock = &cpu->clock;
  cpu->kc.ctr = &cpu->ctr;
  cpu->m = m;
  cpu->arch = m->arch;
  /* The L1 miss path takes a page of size 0 as the 4K granule itself
   * (cpu_translate_attempt_with). */
  g_assert(m->arch->page_shift[0] == 12);
  cpu->cpi = settings_double(s, SET_CPU_CPI);
  for (unsigned k = 0; k <= CPU_CPI_SHIFT_MAX; k++) {
    double u = ldexp(cpu->cpi, (int)k);
    if (u == floor(u) && u < (double)(1u << CPU_CPI_UNITS_BITS)) {
      cpu->cpi_fixed = TRUE;
      cpu->cpi_shift = k;
      cpu->cpi_units = (uint64_t)u;
      break;
    }
  }
  cpu->ud_key = cpu->ui_key = NO_KEY;
  cpu_quick_keys(cpu);
  cpu->mshr_head_done = cpu->mshr_rob_due = UINT64_MAX; /* no miss outstanding */
  cpu->l1_hit_cycles = (uint32_t)settings_int(s, SET_TLB_L1_HIT_CYCLES);
  cpu->rob_size = (unsigned)settings_int(s, SET_CPU_ROB_SIZE);
  cpu->n_mshr = (unsigned)settings_int(s, SET_CPU_MSHRS);
  cpu->mshr_done = g_new0(uint64_t, cpu->n_mshr);
  cpu->mshr_insn = g_new0(uint64_t, cpu->n_mshr);
  cpu->n_walkers = (unsigned)settings_int(s, SET_CPU_PAGE_WALKERS);
  cpu->walker_free = g_new0(uint64_t, cpu->n_walkers);
  cpu->llc = llc;
  return cpu;
}

/* What cpu_build made, freed (the CPU as cpu_new left it). */
static void cpu_unbuild(Cpu *cpu)
{
  for (unsigned sz = 0; sz < ARCH_MAX_SIZES; sz++) {
    tlb_free(cpu->l1d[sz]);
    tlb_free(cpu->l1i[sz]);
    cpu->l1d[sz] = cpu->l1i[sz] = NULL;
  }
  cpu->n_l1d_probe = cpu->n_l1i_probe = 0;
  if (cpu->arch_state)
    cpu->arch->cpu_free(cpu->arch_state);
  cpu->arch_state = NULL;
  memsys_free(cpu->mem);
  cpu->mem = NULL;
  cpu->built = FALSE;
}

/* The TLBs, caches and the architecture's state (its second-level TLB,
 * walk caches, segment buffers): most of a CPU's host memory, built when
 * the CPU first runs something (machine_cpu_ready).  On failure the CPU is
 * left unbuilt, so cpu_free frees what was made. */
gboolean cpu_build(Cpu *cpu, GError **error)
{
  if (cpu->built)
    return TRUE;
  Machine *m = cpu->m;
  const Settings *s = m->s;
  cpu->mem = memsys_new(s, cpu->llc, &cpu->ctr, error);
  if (!cpu->mem)
    goto fail;

  /* L1 TLB arrays.  Each page size lives in its own array, or, with
   * tlb.l1_mixed, in the 4K array; a size without an array is held as
   * fragments of the largest smaller size that has one. */
  const TlbReplPolicy *repl = tlb_repl_from_settings(s, error);
  if (!repl)
    goto fail;
  static const SettingId d_ent[] = { SET_TLB_L1D_4K_ENTRIES, SET_TLB_L1D_2M_ENTRIES, SET_TLB_L1D_1G_ENTRIES };
  static const SettingId d_way[] = { SET_TLB_L1D_4K_WAYS, SET_TLB_L1D_2M_WAYS, SET_TLB_L1D_1G_WAYS };
  static const SettingId i_ent[] = { SET_TLB_L1I_4K_ENTRIES, SET_TLB_L1I_2M_ENTRIES, 0 };
  static const SettingId i_way[] = { SET_TLB_L1I_4K_WAYS, SET_TLB_L1I_2M_WAYS, 0 };
  gboolean mixed = settings_bool(s, SET_TLB_L1_MIXED);
  cpu->l1_mixed = mixed;
  unsigned nsz = MIN(m->arch->n_sizes, 3u);
  for (unsigned sz = 0; sz < nsz; sz++) {
    if (sz > 0 && mixed) {
      cpu->l1d[sz] = NULL;
      cpu->l1i[sz] = NULL;
      continue;
    }
    unsigned de = (unsigned)settings_int(s, d_ent[sz]);
    if (de) {
      cpu->l1d[sz] = tlb_new_from_settings(s, d_ent[sz], d_way[sz], repl, error);
      if (!cpu->l1d[sz])
        goto fail;
    }
    unsigned ie = i_ent[sz] ? (unsigned)settings_int(s, i_ent[sz]) : 0;
    if (ie) {
      cpu->l1i[sz] = tlb_new_from_settings(s, i_ent[sz], i_way[sz], repl, error);
      if (!cpu->l1i[sz])
        goto fail;
    }
  }
  for (unsigned sz = 0; sz < nsz; sz++) {
    unsigned hd = sz, hi = sz;
    if (mixed) {
      hd = hi = sz; /* one array, keys carry the size */
    } else {
      while (hd > 0 && !cpu->l1d[hd])
        hd--;
      while (hi > 0 && !cpu->l1i[hi])
        hi--;
    }
    cpu->l1d_home[sz] = (uint8_t)hd;
    cpu->l1i_home[sz] = (uint8_t)hi;
  }
  for (unsigned sz = 0; sz < nsz; sz++) {
    Tlb *td = mixed ? cpu->l1d[0] : cpu->l1d[sz];
    Tlb *ti = mixed ? cpu->l1i[0] : cpu->l1i[sz];
    if (td && cpu->l1d_home[sz] == sz)
      cpu->l1d_probe[cpu->n_l1d_probe++] = (struct L1Probe){ td, sz, m->arch->page_shift[sz] };
    if (ti && cpu->l1i_home[sz] == sz)
      cpu->l1i_probe[cpu->n_l1i_probe++] = (struct L1Probe){ ti, sz, m->arch->page_shift[sz] };
  }
  /* The lists are in size order, the base size first and alone in it. */
  cpu->n_l1d_live = MIN(cpu->n_l1d_probe, 1u);
  cpu->n_l1i_live = MIN(cpu->n_l1i_probe, 1u);
  if (!cpu->l1d[0] || !cpu->l1i[0]) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "the L1 TLBs need 4K arrays: tlb.l1d_4k_entries and tlb.l1i_4k_entries must be at least 1");
    goto fail;
  }
  cpu->l1_miss = m->arch->l1_miss ? m->arch->l1_miss : translate_generic;
  cpu->arch_state = m->arch->cpu_new(s, cpu, error);
  if (!cpu->arch_state)
    goto fail;
  cpu->built = TRUE;
  return TRUE;
fail:
  cpu_unbuild(cpu);
  return FALSE;
}

void cpu_free(Cpu *cpu)
{
  if (!cpu)
    return;
  cpu_unbuild(cpu);
  g_free(cpu->mshr_done);
  g_free(cpu->mshr_insn);
  g_free(cpu->walker_free);
  g_free(cpu);
}

/* ---- time ----------------------------------------------------------------- */

/* cpu_mshr_retire's loop: in locals, since the compiler cannot tell that
 * the ring's stores leave the CPU's fields alone, and would write them back
 * at every step. */
void cpu_mshr_retire_done(Cpu *cpu)
{
  unsigned tail = cpu->mshr_tail, count = cpu->mshr_count, n = cpu->n_mshr;
  const uint64_t *done = cpu->mshr_done;
  uint64_t now = cpu->clock;
  do { /* called once the oldest, done[tail], completed */
    tail = tail + 1 == n ? 0 : tail + 1;
    count--;
  } while (count && done[tail] <= now);
  cpu->mshr_tail = tail;
  cpu->mshr_count = count;
  cpu_mshr_head_changed(cpu);
}

void cpu_rob_stall(Cpu *cpu)
{
  cpu->ctr.c[CTR_MSHR_STALL_CYCLES] += cpu->mshr_head_done - cpu->clock;
  cpu->clock = cpu->mshr_head_done;
  cpu_mshr_retire(cpu);
}

void cpu_rob_check(Cpu *cpu)
{
  cpu_mshr_retire(cpu);
  if (cpu->insns >= cpu->mshr_rob_due)
    cpu_rob_stall(cpu);
}

void cpu_issue_float(Cpu *cpu, uint64_t n)
{
  cpu->insns += n;
  cpu->ctr.c[CTR_INSTRUCTIONS] += n;
  if (cpu->cpi_fixed) { /* from now on the doubles, starting from the same value */
    cpu->frac = ldexp((double)cpu->frac_units, -(int)cpu->cpi_shift);
    cpu->cpi_fixed = FALSE;
    cpu_quick_keys(cpu);
  }
  cpu->frac += (double)n * cpu->cpi;
  uint64_t whole = (uint64_t)cpu->frac;
  cpu->frac -= (double)whole;
  cpu->clock += whole;
}

void cpu_compute(Cpu *cpu, uint64_t n)
{
  cpu_issue_insns(cpu, n);
}

/* Only the misses still outstanding are looked at: a retired one had
 * completed by the clock at its retirement, and clocks never go back. */
void cpu_drain(Cpu *cpu)
{
  uint64_t t = cpu_load_dep_ready(cpu, cpu->clock, 0);
  const uint64_t *done = cpu->mshr_done;
  unsigned n = cpu->n_mshr, i = cpu->mshr_tail;
  for (unsigned left = cpu->mshr_count; left; left--) {
    t = MAX(t, done[i]);
    i = i + 1 == n ? 0 : i + 1;
  }
  cpu->clock = t;
}

void cpu_stall(Cpu *cpu, uint64_t cycles)
{
  cpu_drain(cpu);
  cpu->clock += cycles;
}

/* ---- invalidation ------------------------------------------------------------- */

void cpu_forget_shortcuts(Cpu *cpu)
{
  cpu->ud_key = cpu->ui_key = NO_KEY;
  cpu_quick_keys(cpu);
}

void cpu_flush_page(Cpu *cpu, unsigned asid, uint64_t va)
{
  const ArchOps *a = cpu->arch;
  for (unsigned sz = 0; sz < a->n_sizes && sz < 3; sz++) {
    for (unsigned h = 0; h <= sz; h++) {
      uint64_t key = tlb_key(asid, h, va >> a->page_shift[h]);
      /* With tlb.l1_mixed every size lives in the 4K array (the ERAT),
       * its keys carrying the size. */
      Tlb *d = cpu->l1_mixed ? cpu->l1d[0] : cpu->l1d[h], *i = cpu->l1_mixed ? cpu->l1i[0] : cpu->l1i[h];
      if (d)
        tlb_invalidate(d, key);
      if (i)
        tlb_invalidate(i, key);
    }
  }
  a->flush_page(cpu, asid, va);
  cpu_forget_shortcuts(cpu);
}

void cpu_flush_asid(Cpu *cpu, unsigned asid)
{
  for (unsigned sz = 0; sz < ARCH_MAX_SIZES; sz++) {
    if (cpu->l1d[sz])
      tlb_flush_asid(cpu->l1d[sz], asid);
    if (cpu->l1i[sz])
      tlb_flush_asid(cpu->l1i[sz], asid);
  }
  cpu->arch->flush_asid(cpu, asid);
  cpu_forget_shortcuts(cpu);
}

void cpu_flush_all(Cpu *cpu)
{
  for (unsigned sz = 0; sz < ARCH_MAX_SIZES; sz++) {
    if (cpu->l1d[sz])
      tlb_flush_all(cpu->l1d[sz]);
    if (cpu->l1i[sz])
      tlb_flush_all(cpu->l1i[sz]);
  }
  cpu->arch->flush_all(cpu);
  cpu_forget_shortcuts(cpu);
}

void cpu_flush_l1(Cpu *cpu)
{
  for (unsigned sz = 0; sz < ARCH_MAX_SIZES; sz++) {
    if (cpu->l1d[sz])
      tlb_flush_all(cpu->l1d[sz]);
    if (cpu->l1i[sz])
      tlb_flush_all(cpu->l1i[sz]);
  }
  cpu_forget_shortcuts(cpu);
}

/* ---- translation ---------------------------------------------------------------- */

/* The path after an L1 TLB miss is inline in sim/cpu-translate.h, for the
 * architectures that instantiate it with their translation inlined
 * (ArchOps.l1_miss); here are its cold parts and the instance for the
 * others. */

/* cpu_l1_fill for a page larger than the base size: into its home array, as
 * a fragment when that holds a smaller size. */
G_NO_INLINE void cpu_l1_fill_large(Cpu *cpu, AccessKind kind, uint64_t va, unsigned size, uint64_t pfn, uint8_t flags)
{
  const ArchOps *a = cpu->arch;
  const uint8_t *home = kind == ACC_IFETCH ? cpu->l1i_home : cpu->l1d_home;
  Tlb *const *l1 = kind == ACC_IFETCH ? cpu->l1i : cpu->l1d;
  unsigned h = home[size];
  Tlb *t = l1[h] ? l1[h] : l1[0];
  cpu->n_l1d_live = cpu->n_l1d_probe;
  cpu->n_l1i_live = cpu->n_l1i_probe;
  uint64_t sub = (va & ((1ULL << a->page_shift[size]) - 1)) >> a->page_shift[h];
  uint64_t fpfn = pfn + (sub << (a->page_shift[h] - 12));
  tlb_insert(t, tlb_key(cpu->cur_asid, h, va >> a->page_shift[h]), fpfn, flags, (uint8_t)h);
}

void cpu_sample_walk_emit(Cpu *cpu, Thread *th, uint64_t va, XlatStatus st, unsigned size, uint32_t cycles,
                          uint32_t walk_cycles)
{
  Machine *m = cpu->m;
  if (!events_enabled(m->ev) || !m->walk_sample_left || --m->walk_sample_left)
    return;
  m->walk_sample_left = (uint64_t)settings_int(m->s, SET_EVENTS_WALK_SAMPLE);
  /* The walk's own references: the counters less their values before it
   * (cpu_walk_mark).  Under virt.nested they split into the guest's
   * page-table entries and the host's (EPT/NPT) entries read to translate
   * guest-physical addresses, with the nested TLB's hits and misses on
   * those addresses; the fields are appended, so readers of the older
   * line keep working. */
  const uint64_t *c = cpu->ctr.c;
  g_autofree char *nested = NULL;
  if (settings_bool(m->s, SET_VIRT_NESTED))
    nested = g_strdup_printf(" guest_refs=%" G_GUINT64_FORMAT " host_refs=%" G_GUINT64_FORMAT " ntlb_hits=%" G_GUINT64_FORMAT
                             " ntlb_misses=%" G_GUINT64_FORMAT,
                             c[CTR_WALK_GUEST_REFS] - cpu->walk_mark.guest_refs, c[CTR_WALK_HOST_REFS] - cpu->walk_mark.host_refs,
                             c[CTR_NTLB_HITS] - cpu->walk_mark.ntlb_hits, c[CTR_NTLB_MISSES] - cpu->walk_mark.ntlb_misses);
  events_emit(m->ev, (uint64_t)((double)cpu->clock / m->k->cycles_per_ns), cpu->id, th->pid, th->tid, "walk",
              "va=%#" G_GINT64_MODIFIER "x status=%s size=%s cycles=%u walk_cycles=%u refs=%" G_GUINT64_FORMAT "%s", va,
              st == XLAT_OK ? "ok" : st == XLAT_NOT_PRESENT ? "not-present" : st == XLAT_PROTECTION ? "protection" : "noncanonical",
              cpu->arch->size_name[size], cycles, walk_cycles, c[CTR_WALK_REFS] - cpu->walk_mark.refs, nested ? nested : "");
}

/* A fault: precise, so the pipeline drains before the handler runs. */
gboolean cpu_translate_fault(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, XlatStatus st, uint64_t *t)
{
  Kernel *k = cpu->m->k;
  cpu->clock = MAX(cpu->clock, *t);
  cpu_drain(cpu);
  uint64_t cost = 0;
  FaultResult fr = st == XLAT_NONCANONICAL ? FAULT_SEGV : fault_handle(k, &cpu->kc, th->mm, va, kind, &cost);
  if (st == XLAT_NONCANONICAL) {
    cpu->ctr.c[CTR_SEGV]++;
    cpu->ctr.c[CTR_PAGE_FAULTS]++;
    cost = k->segv_cycles;
  }
  cpu->clock += cost;
  cpu->ctr.c[CTR_FAULT_CYCLES] += cost;
  *t = cpu->clock;
  return fr == FAULT_MAPPED;
}

G_NO_INLINE gboolean cpu_translate_retry(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t, uint64_t *pfn,
                                         uint8_t *flags, uint64_t key0)
{
  for (unsigned attempt = 1; attempt < 4; attempt++) {
    int r = cpu_translate_attempt(cpu, th, va, kind, t, pfn, flags, key0, attempt, cpu->arch->translate);
    if (r != CPU_XLAT_RETRY)
      return r == CPU_XLAT_DONE;
  }
  return FALSE;
}

/* cpu_translate_miss through ArchOps.translate, for the architectures
 * without an l1_miss of their own.  Out of line, with the L1 probe inlined
 * into it: the shortcut's path in cpu_access then saves fewer registers. */
static G_NO_INLINE gboolean translate_generic(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t,
                                              uint64_t *pfn, uint8_t *flags)
{
  return cpu_translate_miss(cpu, th, va, kind, t, pfn, flags, cpu->arch->translate);
}

CpuPrefetch *cpu_prefetch_new(void)
{
  return g_new0(CpuPrefetch, 1); /* epoch 0: no key matches before the first call sets one */
}

void cpu_prefetch_free(CpuPrefetch *pf)
{
  g_free(pf);
}

void cpu_prefetch_clear(CpuPrefetch *pf)
{
  for (unsigned i = 0; i < CPU_PREFETCH_RING; i++)
    pf->ring[i].e = NULL;
}

void cpu_prefetch_forget(CpuPrefetch *pf)
{
  pf->pt = NULL; /* the next call starts a new epoch */
}

static G_NO_INLINE void prefetch_descend(const PageTable *pt, uint64_t va, CpuPrefetchSlot *slot, uint64_t key,
                                         CpuPrefetchRegion *x);

/* The leaf table of va's region, or the last table present on the way to
 * it, in *slot: from pf's region array, else by a descent of the page
 * table, whose leaf the array then keeps.  Starts loading the leaf's node
 * struct, the load that misses. */
static inline void prefetch_find(CpuPrefetch *pf, const PageTable *pt, uint64_t va, CpuPrefetchSlot *slot)
{
  uint64_t region = va >> pt->g.shift[2];
  /* Exact below 2^(64 - EPOCH_BITS) regions (x86-64's 57-bit space has
   * 2^36); a wilder va may share a key, which costs only a useless
   * prefetch from another live table. */
  uint64_t key = region << CPU_PREFETCH_EPOCH_BITS | pf->epoch;
  CpuPrefetchRegion *x = &pf->region[region & (CPU_PREFETCH_REGIONS - 1)];
  if (x->key == key) {
    __builtin_prefetch(x->n); /* for the walk */
    *slot = (CpuPrefetchSlot){ x->e, x->pfn, va, 1, pgtable_index(&pt->g, 1, va) };
    return;
  }
  prefetch_descend(pt, va, slot, key, x);
}

/* prefetch_find() of a region the array does not hold: a descent of the
 * page table.  Out of line: after the first touch of each region it is
 * rare, and it is cpu_prefetch's last step (a tail call). */
static G_NO_INLINE void prefetch_descend(const PageTable *pt, uint64_t va, CpuPrefetchSlot *slot, uint64_t key,
                                         CpuPrefetchRegion *x)
{
  const PtNode *n = pt->root, *c;
  unsigned level = pt->g.levels;
  while (level > 1 && n->child && (c = n->child[pgtable_index(&pt->g, level, va)]) != NULL) {
    n = c;
    level--;
  }
  if (level == 1)
    *x = (CpuPrefetchRegion){ key, n, n->e, n->pfn };
  *slot = (CpuPrefetchSlot){ n->e, n->pfn, va, level, pgtable_index(&pt->g, level, va) };
}

/* Each part earns its instructions somewhere (user time, random:size=4G, 4K
 * pages, medians of four to seven alternated runs): the entry (the middle
 * stage) on every preset (skylake 4.88 s without it, 3.9 s with it); the
 * simulated cache sets of the entry and of the data line on zen4, whose
 * 32 MiB LLC has a 2 MiB tag array (3.52 s without either, 3.47 s with the
 * data's, 3.39 s with both), not on skylake, whose LLC tags fit the host's
 * L2 (3.88 s with and without).  A prefetch of the STLB set gave nothing
 * measurable on skylake (3.97 against 3.98 s).  The three stages are one
 * call: three calls, each testing its record again, cost twice the
 * instructions. */
void cpu_prefetch(const Cpu *cpu, const Thread *th, const TraceRecord *far, CpuPrefetch *pf, size_t pos)
{
  const PageTable *pt = &th->mm->pt;
  uint64_t freed = pt->host.nodes_freed;
  if (G_UNLIKELY(pt != pf->pt || freed != pf->freed)) {
    /* A node freed since a slot was filled may be gone: the nearer stages
     * take nothing found before (CpuPrefetchSlot). */
    cpu_prefetch_clear(pf);
    if (G_UNLIKELY(pt->root == NULL)) {
      pf->pt = NULL; /* torn down (the OOM killer): nothing to prefetch; ask again next time */
      return;
    }
    pf->pt = pt;
    pf->freed = freed;
    if (++pf->epoch == (1u << CPU_PREFETCH_EPOCH_BITS)) {
      memset(pf->region, 0, sizeof pf->region);
      pf->epoch = 1;
    }
  }
  /* The nearer stages take what the far one found for earlier records
   * (the ring was emptied above if a table was freed since), then the far
   * stage fills the slot of pos: the slots differ, and the far stage's
   * out-of-line descent is the call's last step, a tail call. */
  CpuPrefetchSlot *ring = pf->ring;
  CpuPrefetchSlot *s = &ring[(pos - (CPU_PREFETCH_FAR - CPU_PREFETCH_NEAR)) & (CPU_PREFETCH_RING - 1)];
  if (s->e != NULL) {
    uint64_t e = s->e[s->idx];
    if ((e & PTE_P) && (s->level == 1 || (e & PTE_PS)))
      memsys_host_prefetch(cpu->mem, (pte_pfn(e) << 12) + (s->va & (pgtable_entry_span(&pt->g, s->level) - 1)));
  }
  s = &ring[(pos - (CPU_PREFETCH_FAR - CPU_PREFETCH_MID)) & (CPU_PREFETCH_RING - 1)];
  if (s->e != NULL) {
    __builtin_prefetch(&s->e[s->idx]);
    memsys_host_prefetch(cpu->mem, (s->pfn << 12) | ((uint64_t)s->idx << 3));
  }
  s = &ring[pos & (CPU_PREFETCH_RING - 1)];
  s->e = NULL;
  /* The far stage, but not on the page of the last access: it is hot
   * already (sequential work). */
  if (far != NULL && far->type == REC_ACCESS &&
      granule_key(cpu->cur_asid, far->addr) != (far->kind == ACC_IFETCH ? cpu->ui_key : cpu->ud_key))
    prefetch_find(pf, pt, far->addr, s);
}

/* cpu_access() of an access of kind `kind`: inline, for a copy with the
 * kind a constant (below). */
static inline G_ALWAYS_INLINE void cpu_access_kind(Cpu *cpu, Thread *th, const TraceRecord *r, AccessKind kind)
{
  Counters *ctr = &cpu->ctr;
  uint64_t va = r->addr;

  /* The ROB bound: the oldest outstanding miss blocks retirement once
   * rob_size younger instructions have issued. */
  if (G_UNLIKELY(cpu->insns >= cpu->mshr_rob_due))
    cpu_rob_check(cpu); /* retires first: see cpu_access_quick */
  cpu_issue_insns(cpu, (uint64_t)r->gap + 1);
  ctr->c[CTR_ACCESSES]++;

  MemReqKind mk;
  uint64_t t = cpu->clock;
  uint64_t *ukey, *upfn;
  uint8_t *uflags;
  /* Plain loads, which nearly every workload is made of, first: the
   * switch alone tested them last (after 2, 3 and 1). */
  if (G_LIKELY(kind == ACC_LOAD)) {
    ctr->c[CTR_LOADS]++;
    ctr->c[CTR_DTLB_LOADS]++;
    mk = MREQ_LOAD;
    ukey = &cpu->ud_key, upfn = &cpu->ud_pfn, uflags = &cpu->ud_flags;
  } else switch (kind) {
  case ACC_STORE:
    ctr->c[CTR_STORES]++;
    ctr->c[CTR_DTLB_STORES]++;
    mk = MREQ_STORE;
    ukey = &cpu->ud_key, upfn = &cpu->ud_pfn, uflags = &cpu->ud_flags;
    break;
  case ACC_IFETCH:
    ctr->c[CTR_IFETCHES]++;
    ctr->c[CTR_ITLB_LOADS]++;
    mk = MREQ_IFETCH;
    ukey = &cpu->ui_key, upfn = &cpu->ui_pfn, uflags = &cpu->ui_flags;
    break;
  case ACC_DEP_LOAD:
    t = cpu_load_dep_ready(cpu, t, r->arg < 0 ? 0 : (uint32_t)r->arg);
    /* fall through */
  default:
    ctr->c[CTR_LOADS]++;
    ctr->c[CTR_DTLB_LOADS]++;
    mk = MREQ_LOAD;
    ukey = &cpu->ud_key, upfn = &cpu->ud_pfn, uflags = &cpu->ud_flags;
    break;
  }

  uint64_t key = granule_key(cpu->cur_asid, va);
  uint64_t pfn;
  if (G_LIKELY(key == *ukey && cpu_flags_allow(*uflags, kind))) {
    pfn = *upfn;
  } else {
    uint8_t flags;
    if (!cpu->l1_miss(cpu, th, va, kind, &t, &pfn, &flags)) { /* the slow path (cpu_translate_miss) */
      if (mk == MREQ_LOAD)
        cpu_load_push(cpu, t); /* dropped, but counted: the loads after it keep their numbers */
      *ukey = NO_KEY;
      cpu_quick_keys(cpu);
      return;
    }
    *ukey = key;
    *upfn = pfn;
    *uflags = flags;
    if (mk != MREQ_IFETCH)
      cpu->quick_kinds = 0; /* until cpu_quick_keys (see Cpu.quick_key) */
  }
  t += cpu->l1_hit_cycles;

  MemLevel lvl;
  uint32_t lat = memsys_access(cpu->mem, (pfn << 12) | (va & 0xfff), mk, &lvl);
  uint64_t done = lvl != MEM_L1 ? cpu_mshr_push(cpu, t, lat) : t + lat;
  if (mk == MREQ_LOAD)
    cpu_load_push(cpu, done);
  else if (mk == MREQ_IFETCH && done > cpu->clock)
    cpu->clock = done; /* the front end waits for its instructions */
}

/* Plain loads, nearly every access that misses the quick path, and stores
 * get a copy each: the kind's tests fold away, and the shortcut's fields
 * are the data side's, at fixed offsets instead of three pointers kept in
 * registers across the translation. */
void cpu_access(Cpu *cpu, Thread *th, const TraceRecord *r)
{
  AccessKind kind = (AccessKind)r->kind;
  if (G_LIKELY(kind == ACC_LOAD))
    cpu_access_kind(cpu, th, r, ACC_LOAD);
  else if (kind == ACC_STORE)
    cpu_access_kind(cpu, th, r, ACC_STORE);
  else
    cpu_access_kind(cpu, th, r, kind);
}

uint64_t cpu_explain(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, GString *ex)
{
  const ArchOps *a = cpu->arch;
  Kernel *k = cpu->m->k;
  uint64_t pfn = 0;
  uint8_t flags = 0;
  unsigned size;
  gboolean assist = FALSE;
  uint64_t key0 = 0;
  if (cpu_l1_probe(cpu, kind, va, &key0, &pfn, &flags, &size, &assist)) {
    g_string_append_printf(ex, "  L1 %s hit: %u cycles\n", kind == ACC_IFETCH ? a->l1_itlb_name : a->l1_dtlb_name,
                           cpu->l1_hit_cycles);
    return (pfn << 12) | (va & 0xfff);
  }
  g_string_append_printf(ex, "  L1 %s miss%s\n", kind == ACC_IFETCH ? a->l1_itlb_name : a->l1_dtlb_name,
                         assist ? " (entry found clean: the store re-walks to set the dirty bit)" : "");
  for (unsigned attempt = 0; attempt < 4; attempt++) {
    Xlat x = { 0 };
    XlatStatus st = a->translate(cpu, th->mm, va, kind, &x, ex);
    if (st == XLAT_OK) {
      if (x.size)
        kernel_touch(k, &cpu->kc, th->mm, va);
      cpu_l1_fill(cpu, kind, va, key0, &x);
      uint64_t pa = (cpu_granule_pfn(a, x.size, x.pfn, va) << 12) | (va & 0xfff);
      g_string_append_printf(ex, "  translation: %s page at pfn %#" G_GINT64_MODIFIER "x, flags%s%s%s -> pa %#" G_GINT64_MODIFIER "x, %u cycles after the L1 TLB\n",
                             a->size_name[x.size], x.pfn, x.flags & TLBF_W ? " W" : " RO", x.flags & TLBF_D ? " D" : "",
                             x.flags & TLBF_X ? " X" : " NX", pa, x.cycles);
      return pa;
    }
    if (st == XLAT_NONCANONICAL)
      return ~0ULL;
    uint64_t cost = 0;
    FaultResult fr = fault_handle(k, &cpu->kc, th->mm, va, kind, &cost);
    g_string_append_printf(ex, "  page fault (%s): %s, %" G_GUINT64_FORMAT " cycles\n",
                           st == XLAT_NOT_PRESENT ? "not present" : "protection",
                           fr == FAULT_MAPPED  ? "handled, retrying"
                           : fr == FAULT_SEGV  ? "SIGSEGV"
                           : fr == FAULT_KILLED ? "out of memory: the OOM killer killed this process"
                                                : "out of memory",
                           cost);
    if (fr != FAULT_MAPPED)
      return ~0ULL;
  }
  return ~0ULL;
}
