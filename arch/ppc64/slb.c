/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slb.c - ppc64 segments: VSIDs, the SLB of one CPU and a thread's preload
 * list.
 *
 * Models: the proto-VSID and its multiplicative scramble, exactly as
 * arch/powerpc/include/asm/book3s/64/mmu-hash.h computes them (68-bit VA,
 * 19 context bits); the SLB as arch/powerpc/mm/book3s64/slb.c manages it:
 * two bolted kernel entries, first-free allocation through the used bitmap,
 * then round-robin replacement from entry SLB_NUM_BOLTED (alloc_slb_index),
 * the 8-entry SLB cache that decides between slbie and slbia at a switch
 * (slb_cache_update, switch_slb), and the per-thread preload list
 * (preload_add, preload_hit).
 * Leaves out: kernel SLB misses (vmalloc, I/O and vmemmap segments: the
 * trace has no kernel accesses), the every-256-switches ageing of the
 * preload list (thread.load_slb), stress_slb, and the SLB shadow buffer of
 * a hypervisor.
 */
#include "config.h"
#include "slb.h"

#include <string.h>

uint64_t ppc64_vsid_scramble(uint64_t protovsid, unsigned vsid_bits)
{
  /* The product fits 64 bits: proto-VSIDs have at most 40 bits and the
   * multiplier 24 (the table in mmu-hash.h).  The kernel avoids the
   * division with a fold; for arguments below 2^vsid_bits - 1 both agree. */
  uint64_t modulus = (1ULL << vsid_bits) - 1;
  return (protovsid * PPC64_VSID_MULTIPLIER) % modulus;
}

uint64_t ppc64_protovsid(uint64_t context, uint64_t ea, unsigned ssize)
{
  if (ssize == PPC64_SEG_256M)
    return (context << PPC64_ESID_BITS) | ((ea >> PPC64_SID_SHIFT) & ((1ULL << PPC64_ESID_BITS) - 1));
  return (context << PPC64_ESID_BITS_1T) | ((ea >> PPC64_SID_SHIFT_1T) & ((1ULL << PPC64_ESID_BITS_1T) - 1));
}

uint64_t ppc64_vsid(uint64_t context, uint64_t ea, unsigned ssize)
{
  return ppc64_vsid_scramble(ppc64_protovsid(context, ea, ssize),
                             ssize == PPC64_SEG_256M ? PPC64_VSID_BITS_256M : PPC64_VSID_BITS_1T);
}

uint64_t ppc64_vpn(uint64_t ea, uint64_t vsid, unsigned ssize)
{
  unsigned s = ppc64_sid_shift(ssize);
  uint64_t mask = (1ULL << (s - 12)) - 1;
  return (vsid << (s - 12)) | ((ea >> 12) & mask);
}

/* ---- the SLB of one CPU ------------------------------------------------------ */

static uint32_t bolted_mask(void)
{
  return (1u << PPC64_SLB_NUM_BOLTED) - 1;
}

void ppc64_slb_init(Ppc64Slb *slb, unsigned n, unsigned kernel_ssize)
{
  g_return_if_fail(n >= PPC64_SLB_NUM_BOLTED + 1);
  memset(slb, 0, sizeof *slb);
  slb->n = n;
  slb->e = g_new0(Ppc64Slbe, n);
  /* slb_initialize(): the linear map's segment in entry 0 (LINEAR_INDEX);
   * entry 1 (KSTACK_INDEX) is cleared when the stack lies in the first
   * segment of the linear map, as on every machine below 1T of RAM. */
  Ppc64Slbe *lin = &slb->e[0];
  lin->ssize = (uint8_t)kernel_ssize;
  lin->esid = PPC64_PAGE_OFFSET >> ppc64_sid_shift(kernel_ssize);
  lin->context = PPC64_KERNEL_LINEAR_CONTEXT;
  lin->vsid = ppc64_vsid(PPC64_KERNEL_LINEAR_CONTEXT, PPC64_PAGE_OFFSET, kernel_ssize);
  lin->base_shift = 24; /* mmu_linear_psize: 16M */
  lin->valid = 1;
  lin->kernel = 1;
  slb->e[1].kernel = 1;
  slb->kern = slb->used = bolted_mask();
  slb->rr = PPC64_SLB_NUM_BOLTED - 1;
}

void ppc64_slb_clear(Ppc64Slb *slb)
{
  g_free(slb->e);
  slb->e = NULL;
  slb->n = 0;
}

unsigned ppc64_slb_alloc_index(Ppc64Slb *slb)
{
  /* The bitmaps cover 32 entries; "SLBs beyond 32 entries are allocated
   * with stab_rr only". */
  if (slb->used != UINT32_MAX) {
    unsigned index = (unsigned)__builtin_ctz(~slb->used); /* ffz */
    slb->used |= 1u << index;
    return index;
  }
  unsigned index = slb->rr;
  if (index < slb->n - 1)
    index++;
  else
    index = PPC64_SLB_NUM_BOLTED;
  slb->rr = index;
  if (index < 32)
    slb->kern &= ~(1u << index);
  return index;
}

unsigned ppc64_slb_insert_user(Ppc64Slb *slb, uint64_t ea, uint64_t context, unsigned ssize, unsigned base_shift)
{
  unsigned i = ppc64_slb_alloc_index(slb);
  Ppc64Slbe *s = &slb->e[i];
  s->esid = ea >> ppc64_sid_shift(ssize);
  s->vsid = ppc64_vsid(context, ea, ssize);
  s->context = context;
  s->ssize = (uint8_t)ssize;
  s->base_shift = (uint8_t)base_shift;
  s->valid = 1;
  s->kernel = 0;
  slb->last = i;
  /* slb_cache_update(): remember up to 8 user entries for switch_slb's
   * slbie; one more marks the cache as overflowed (slbia then). */
  if (slb->cache_ptr < PPC64_SLB_CACHE_ENTRIES)
    slb->cache_ptr++;
  else
    slb->cache_ptr = PPC64_SLB_CACHE_ENTRIES + 1;
  return i;
}

void ppc64_slb_flush_user(Ppc64Slb *slb)
{
  /* Whether by slbie of each cached ESID or by slbia, no user entry is
   * left: every user entry was made through slb_insert_entry() and noted
   * in the cache, or the cache overflowed. */
  for (unsigned i = 0; i < slb->n; i++)
    if (!slb->e[i].kernel)
      slb->e[i].valid = 0;
  slb->cache_ptr = 0;
  slb->used = slb->kern;
  slb->last = 0;
}

unsigned ppc64_slb_valid_user(const Ppc64Slb *slb)
{
  unsigned n = 0;
  for (unsigned i = 0; i < slb->n; i++)
    n += slb->e[i].valid && !slb->e[i].kernel;
  return n;
}

/* ---- a thread's preload list ----------------------------------------------- */

static uint64_t preload_esid(uint64_t ea, gboolean seg_1t)
{
  /* "EAs are stored >> 28 so 256MB segments don't need clearing"; a 1T
   * segment is kept by its start. */
  uint64_t mask_1t = ~((1ULL << PPC64_SID_SHIFT_1T) - 1);
  if (seg_1t && (ea & mask_1t))
    ea &= mask_1t;
  return ea >> PPC64_SID_SHIFT;
}

gboolean ppc64_preload_add(Ppc64Preload *p, unsigned cap, uint64_t ea, gboolean seg_1t)
{
  if (cap == 0)
    return FALSE;
  cap = MIN(cap, PPC64_PRELOAD_MAX);
  uint64_t esid = preload_esid(ea, seg_1t);
  for (unsigned i = 0; i < p->nr; i++)
    if (p->esid[(p->tail + i) % cap] == esid)
      return FALSE; /* preload_hit() */
  p->esid[(p->tail + p->nr) % cap] = esid;
  if (p->nr == cap)
    p->tail = (p->tail + 1) % cap;
  else
    p->nr++;
  return TRUE;
}

uint64_t ppc64_preload_ea(const Ppc64Preload *p, unsigned cap, unsigned i)
{
  cap = MIN(cap, PPC64_PRELOAD_MAX);
  return p->esid[(p->tail + i) % cap] << PPC64_SID_SHIFT;
}
