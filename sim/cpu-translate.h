/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cpu-translate.h - private to sim/cpu.c and the architectures: the core's
 * path after a miss of the last-translation shortcut, as an inline template.
 *
 * cpu_translate_miss() probes the L1 TLB and, on a miss, runs the
 * architecture's translation (second level, walk), takes a page walker,
 * refills the L1 and handles faults.  sim/cpu.c instantiates it with the
 * architecture's translate hook, called through ArchOps; an architecture may
 * instantiate it itself with its translation inlined and name the result in
 * ArchOps.l1_miss (arch/x86_64, arch/ppc64): one call per L1 TLB miss
 * instead of two, the Xlat in registers, and no prologue, epilogue and
 * argument spills of the second call, about 50 host instructions of a walk's
 * 680.  The steps and their order are the same either way; the rules are
 * those of sim/cpu.h.
 */
#ifndef MMUSIM_CPU_TRANSLATE_H
#define MMUSIM_CPU_TRANSLATE_H

#include <glib.h>
#include <stdint.h>
#include "arch.h"
#include "cpu.h"
#include "kernel.h"
#include "machine.h"
#include "tlb.h"

/* Whether an entry's flags allow the access. */
static inline gboolean cpu_flags_allow(uint8_t flags, AccessKind kind)
{
  if (kind == ACC_STORE)
    return (flags & (TLBF_W | TLBF_D)) == (TLBF_W | TLBF_D);
  if (kind == ACC_IFETCH)
    return (flags & TLBF_X) != 0;
  return TRUE;
}

/* Frame of the 4K granule of va inside a page of `size` starting at pfn. */
static inline uint64_t cpu_granule_pfn(const ArchOps *a, unsigned size, uint64_t pfn, uint64_t va)
{
  return pfn + ((va & ((1ULL << a->page_shift[size]) - 1)) >> 12);
}

/* The L1 hit of the array in `pr`: store the granule's frame and flags; FALSE
 * (and a dirty assist noted) when the entry does not allow the access. */
static inline G_ALWAYS_INLINE gboolean cpu_l1_hit(const struct L1Probe *pr, const TlbPayload *p, AccessKind kind,
                                                  uint64_t va, uint64_t *pfn, uint8_t *flags, unsigned *size,
                                                  gboolean *dirty_assist)
{
  if (!cpu_flags_allow(p->flags, kind)) {
    if (kind == ACC_STORE && (p->flags & TLBF_W))
      *dirty_assist = TRUE;
    return FALSE;
  }
  *pfn = p->pfn + ((va & ((1ULL << pr->shift) - 1)) >> 12);
  *flags = p->flags;
  *size = pr->size;
  return TRUE;
}

/* Probe the L1 arrays; on a hit store the granule's frame and flags.  The
 * first array is the base size's (cpu_new); when it holds entries of that
 * size, its key is left in *key0 for the refill (cpu_l1_fill), else *key0
 * stays 0 (a key has TLB_VALID set): no key is built for a size not held
 * (the base pages of the POWER presets are 64K, size 1). */
static inline G_ALWAYS_INLINE gboolean cpu_l1_probe(Cpu *cpu, AccessKind kind, uint64_t va, uint64_t *key0,
                                                    uint64_t *pfn, uint8_t *flags, unsigned *size,
                                                    gboolean *dirty_assist)
{
  const struct L1Probe *pr = kind == ACC_IFETCH ? cpu->l1i_probe : cpu->l1d_probe;
  unsigned n = kind == ACC_IFETCH ? cpu->n_l1i_live : cpu->n_l1d_live;
  if (n == 1) {
    if (!(pr[0].t->size_mask & 1u))
      return FALSE; /* tlb_probe's test, made before the key */
    *key0 = tlb_key(cpu->cur_asid, 0, va >> pr[0].shift);
    TlbPayload *p = tlb_probe_held(pr[0].t, *key0);
    return p && cpu_l1_hit(&pr[0], p, kind, va, pfn, flags, size, dirty_assist);
  }
  for (unsigned i = 0; i < n; i++) {
    Tlb *t = pr[i].t;
    unsigned sz = pr[i].size;
    if (!(t->size_mask & (1u << sz)))
      continue; /* no entry of that size (tlb_probe's test, made before the key) */
    TlbPayload *p = tlb_probe_held(t, tlb_key(cpu->cur_asid, sz, va >> pr[i].shift));
    if (p)
      return cpu_l1_hit(&pr[i], p, kind, va, pfn, flags, size, dirty_assist);
  }
  return FALSE;
}

/* A second-level TLB hit (x86's STLB, ppc64's TLB) with entry p, `cycles`
 * after the L1 miss: counted, and the entry's translation in *out. */
static inline G_ALWAYS_INLINE XlatStatus cpu_stlb_hit(Cpu *cpu, Xlat *out, const TlbPayload *p, uint32_t cycles)
{
  cpu->ctr.c[CTR_STLB_HITS]++;
  out->pfn = p->pfn;
  out->flags = p->flags;
  out->size = p->size;
  out->cycles = cycles;
  return XLAT_OK;
}

/* cpu_l1_probe of one mixed array (tlb.l1_mixed): the sizes it holds, the
 * bits of its size_mask, smallest first.  The same probes in the same order
 * as cpu_l1_probe's, whose list is every size of that array in size order
 * (cpu_new) and whose sizes past the base one are live only once a larger
 * page was filled (and so its bit set), with no test per size not held (the
 * POWER presets' ERAT holds 64K pages only without THP: one probe, not
 * three tests and one).  No key is left for the refill. */
static inline G_ALWAYS_INLINE gboolean cpu_l1_probe_mixed(Cpu *cpu, AccessKind kind, uint64_t va, uint64_t *pfn,
                                                          uint8_t *flags, unsigned *size, gboolean *dirty_assist)
{
  const struct L1Probe *pr = kind == ACC_IFETCH ? cpu->l1i_probe : cpu->l1d_probe;
  Tlb *t = pr[0].t;
  for (unsigned held = t->size_mask; held; held &= held - 1) {
    unsigned sz = (unsigned)__builtin_ctz(held);
    TlbPayload *p = tlb_probe_held(t, tlb_key(cpu->cur_asid, sz, va >> pr[sz].shift));
    if (p)
      return cpu_l1_hit(&pr[sz], p, kind, va, pfn, flags, size, dirty_assist);
  }
  return FALSE;
}

/* cpu_l1_fill for a page larger than the base size (sim/cpu.c); the Xlat's
 * fields by value, so that the caller's stays in registers. */
void cpu_l1_fill_large(Cpu *cpu, AccessKind kind, uint64_t va, unsigned size, uint64_t pfn, uint8_t flags);

/* Refill the L1 array after a miss.  A base page (size 0) is its own home
 * and goes to the first array whole: inline, where the refill usually takes
 * the way that cpu_l1_probe's miss found (tlb_insert), with the key that
 * probe built (key0, 0 when it built none). */
static inline G_ALWAYS_INLINE void cpu_l1_fill(Cpu *cpu, AccessKind kind, uint64_t va, uint64_t key0, const Xlat *x)
{
  if (x->size) {
    cpu_l1_fill_large(cpu, kind, va, x->size, x->pfn, x->flags);
    return;
  }
  Tlb *t = kind == ACC_IFETCH ? cpu->l1i[0] : cpu->l1d[0];
  if (!key0)
    key0 = tlb_key(cpu->cur_asid, 0, va >> cpu->arch->page_shift[0]);
  tlb_insert_base(t, key0, x->pfn, x->flags);
}

/* cpu_l1_fill of a page larger than the base size into one array holding
 * every size (tlb.l1_mixed), inline: there the page is its own home, no
 * fragment, what cpu_l1_fill_large does for it.  For an architecture whose
 * base page is not size 0 (ppc64's 64K pages: every ERAT refill). */
static inline G_ALWAYS_INLINE void cpu_l1_fill_mixed(Cpu *cpu, AccessKind kind, uint64_t va, const Xlat *x)
{
  cpu->n_l1d_live = cpu->n_l1d_probe;
  cpu->n_l1i_live = cpu->n_l1i_probe;
  Tlb *t = kind == ACC_IFETCH ? cpu->l1i[0] : cpu->l1d[0];
  tlb_insert(t, tlb_key(cpu->cur_asid, x->size, va >> cpu->arch->page_shift[x->size]), x->pfn, x->flags, x->size);
}

/* Take a walker slot at time *t for `cycles`; advances *t to the end. */
static inline G_ALWAYS_INLINE void cpu_use_walker(Cpu *cpu, uint64_t *t, uint32_t cycles)
{
  /* The first walker free the earliest, by pointer and with its time in a
   * register: the indexed loop reloaded both times of every compare. */
  uint64_t *w = cpu->walker_free, *end = w + cpu->n_walkers, *best = w, free_at = *w;
  for (w++; w < end; w++)
    if (*w < free_at)
      best = w, free_at = *w;
  uint64_t start = MAX(*t, free_at);
  cpu->ctr.c[CTR_WALKER_STALL_CYCLES] += start - *t;
  *t = start + cycles;
  *best = *t;
}

/* With --events, before a translation: note the counters its walk event
 * would report (Cpu.walk_mark). */
static inline void cpu_walk_mark(Cpu *cpu)
{
  const uint64_t *c = cpu->ctr.c;
  cpu->walk_mark.refs = c[CTR_WALK_REFS];
  cpu->walk_mark.guest_refs = c[CTR_WALK_GUEST_REFS];
  cpu->walk_mark.host_refs = c[CTR_WALK_HOST_REFS];
  cpu->walk_mark.ntlb_hits = c[CTR_NTLB_HITS];
  cpu->walk_mark.ntlb_misses = c[CTR_NTLB_MISSES];
}

/* The walk sampler's countdown (events.walk_sample) reached this walk:
 * emit its event (sim/cpu.c), with the references it made since
 * cpu_walk_mark.  Takes the Xlat's fields by value, so that the Xlat of
 * the template stays in registers. */
void cpu_sample_walk_emit(Cpu *cpu, Thread *th, uint64_t va, XlatStatus st, unsigned size, uint32_t cycles,
                          uint32_t walk_cycles);

/* A translation failed with status st (not XLAT_OK) at time *t: drain, run
 * the fault handler, charge it, *t = the clock after it.  TRUE when the
 * access is to be retried (sim/cpu.c). */
gboolean cpu_translate_fault(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, XlatStatus st, uint64_t *t);

/* The architecture's translation after an L1 TLB miss (ArchOps.translate
 * without the explanation, or an inline copy of it). */
typedef XlatStatus (*CpuXlatFn)(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, Xlat *out, GString *ex);

/* One attempt of the translation after an L1 TLB miss, the first (attempt
 * 0) or a retry after a fault.  CPU_XLAT_DONE with *pfn and *flags set,
 * CPU_XLAT_DROPPED when the access is dropped (segmentation fault, out of
 * memory), CPU_XLAT_RETRY after a fault handled. */
enum { CPU_XLAT_DONE, CPU_XLAT_DROPPED, CPU_XLAT_RETRY };

static inline G_ALWAYS_INLINE int cpu_translate_attempt_with(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind,
                                                             uint64_t *t, uint64_t *pfn, uint8_t *flags,
                                                             uint64_t key0, unsigned attempt, CpuXlatFn xlat,
                                                             gboolean fill_mixed)
{
  /* The fields every status reads (pfn and flags only with XLAT_OK, which
   * sets them): cheaper than zeroing the struct. */
  Xlat x;
  x.size = 0;
  x.cycles = x.walk_cycles = 0;
  x.walks = 0;
  /* The instruction retried after a fault looks the L1 TLB up again and
   * misses again (the handler filled no TLB): both lookups count, and so do
   * both walks below, as Intel's DTLB_LOAD_MISSES.WALK_COMPLETED (perf's
   * dTLB-load-misses on Skylake) counts "page walks that page fault" too. */
  if (attempt)
    cpu->ctr.c[kind == ACC_IFETCH ? CTR_ITLB_LOADS : kind == ACC_STORE ? CTR_DTLB_STORES : CTR_DTLB_LOADS]++;
  cpu->ctr.c[CTR_L1_TLB_MISSES]++;
  if (G_UNLIKELY(cpu->m->ev != NULL))
    cpu_walk_mark(cpu);
  XlatStatus st = xlat(cpu, th->mm, va, kind, &x, NULL);
  *t += x.cycles - x.walk_cycles;
  if (x.walks) {
    cpu_use_walker(cpu, t, x.walk_cycles);
    cpu->ctr.c[kind == ACC_IFETCH ? CTR_ITLB_LOAD_MISSES : kind == ACC_STORE ? CTR_DTLB_STORE_MISSES : CTR_DTLB_LOAD_MISSES] += x.walks;
    /* m->ev first: a run without an event log (the usual one) pays a
     * load and a test per walk, not a call. */
    if (G_UNLIKELY(cpu->m->ev != NULL))
      cpu_sample_walk_emit(cpu, th, va, st, x.size, x.cycles, x.walk_cycles);
  }
  if (st == XLAT_OK) {
    /* A base page (size 0) is the 4K granule itself (cpu_new checks):
     * its frame is the granule's, with no page shift loaded and no mask
     * built (the usual case: 10 instructions a walk). */
    if (G_LIKELY(x.size == 0)) {
      cpu_l1_fill(cpu, kind, va, key0, &x);
      *pfn = x.pfn;
    } else {
      if (fill_mixed)
        kernel_touch_any(cpu->m->k, &cpu->kc, th->mm, va);
      else
        kernel_touch(cpu->m->k, &cpu->kc, th->mm, va);
      if (fill_mixed && cpu->l1_mixed)
        cpu_l1_fill_mixed(cpu, kind, va, &x);
      else
        cpu_l1_fill(cpu, kind, va, key0, &x);
      *pfn = cpu_granule_pfn(cpu->arch, x.size, x.pfn, va);
    }
    *flags = x.flags;
    return CPU_XLAT_DONE;
  }
  return cpu_translate_fault(cpu, th, va, kind, st, t) ? CPU_XLAT_RETRY : CPU_XLAT_DROPPED;
}

static inline G_ALWAYS_INLINE int cpu_translate_attempt(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind,
                                                        uint64_t *t, uint64_t *pfn, uint8_t *flags, uint64_t key0,
                                                        unsigned attempt, CpuXlatFn xlat)
{
  return cpu_translate_attempt_with(cpu, th, va, kind, t, pfn, flags, key0, attempt, xlat, FALSE);
}

/* The attempts after a fault, through ArchOps.translate (sim/cpu.c). */
gboolean cpu_translate_retry(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t, uint64_t *pfn,
                             uint8_t *flags, uint64_t key0);

/* The path after the shortcut missed.  *t is the time the translation
 * starts; on return it is the time it completed.  FALSE when the access is
 * dropped (segmentation fault, out of memory).  `xlat` is called with ex
 * NULL; when it is a constant, always-inline function it is inlined.  The
 * retries after a fault are out of line: with no loop here, nothing of the
 * first attempt is kept across one.  With fill_mixed (a constant), a large
 * page's refill of a mixed L1 is inline (cpu_l1_fill_mixed), its probe
 * goes by the sizes it holds (cpu_l1_probe_mixed), and
 * kernel_touch, reached on every refill and hit when the base page is not
 * size 0, is kernel_touch_any; the cpu_translate_* without _with pass
 * FALSE. */
static inline G_ALWAYS_INLINE gboolean cpu_translate_miss_with(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind,
                                                               uint64_t *t, uint64_t *pfn, uint8_t *flags,
                                                               CpuXlatFn xlat, gboolean fill_mixed)
{
  gboolean assist = FALSE;
  unsigned size;
  /* The base size's L1 key, for the probe and the refill: cur_asid changes
   * only between records (engine.c), not in a fault handled here. */
  uint64_t key0 = 0;
  if (fill_mixed && cpu->l1_mixed ? cpu_l1_probe_mixed(cpu, kind, va, pfn, flags, &size, &assist)
                                  : cpu_l1_probe(cpu, kind, va, &key0, pfn, flags, &size, &assist)) {
    if (size && fill_mixed)
      kernel_touch_any(cpu->m->k, &cpu->kc, th->mm, va); /* a base page of a huge one: first touch? */
    else if (size)
      kernel_touch(cpu->m->k, &cpu->kc, th->mm, va);
    return TRUE;
  }
  if (assist)
    cpu->ctr.c[CTR_DIRTY_BIT_ASSISTS]++;
  int r = cpu_translate_attempt_with(cpu, th, va, kind, t, pfn, flags, key0, 0, xlat, fill_mixed);
  if (G_LIKELY(r == CPU_XLAT_DONE))
    return TRUE;
  if (r == CPU_XLAT_DROPPED)
    return FALSE;
  return cpu_translate_retry(cpu, th, va, kind, t, pfn, flags, key0);
}

static inline G_ALWAYS_INLINE gboolean cpu_translate_miss(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind,
                                                          uint64_t *t, uint64_t *pfn, uint8_t *flags, CpuXlatFn xlat)
{
  return cpu_translate_miss_with(cpu, th, va, kind, t, pfn, flags, xlat, FALSE);
}

#endif
