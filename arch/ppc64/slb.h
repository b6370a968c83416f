/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slb.h - ppc64 segments: effective to virtual addresses through the SLB.
 *
 * An effective address (EA) lies in a segment of 256M (SID_SHIFT 28) or 1T
 * (SID_SHIFT_1T 40); its effective segment id (ESID) is EA >> SID_SHIFT.
 * Linux gives every segment of a process a virtual segment id (VSID) by
 * scrambling a proto-VSID built from the mm's context number and the ESID
 * (mmu-hash.h get_vsid(), vsid_scramble()).  The SLB caches ESID -> VSID per
 * CPU; misses are handled in software (slb.c do_slb_fault).
 *
 * The SLB here follows arch/powerpc/mm/book3s64/slb.c: entries 0 and 1 are
 * bolted for the kernel (the linear map; the kernel stack, which shares the
 * linear map's segment on machines below 1T of RAM, so its slot stays
 * empty), a user miss takes the first free entry of the used bitmap, then
 * replaces round-robin from entry 2 (alloc_slb_index()); switch_slb()
 * drops every user entry and loads the thread's preload list.
 */
#ifndef MMUSIM_PPC64_SLB_H
#define MMUSIM_PPC64_SLB_H

#include <glib.h>
#include <stdint.h>

/* Segment sizes, as the B field of SLB entries and HPTEs encodes them. */
enum { PPC64_SEG_256M = 0, PPC64_SEG_1T = 1 };

#define PPC64_SID_SHIFT 28
#define PPC64_SID_SHIFT_1T 40
/* mmu-hash.h: VA_BITS 68, CONTEXT_BITS 19, so a 256M proto-VSID has
 * 68 - (28 + 19) = 21 ESID bits and a 1T one 68 - (40 + 19) = 9. */
#define PPC64_VA_BITS 68
#define PPC64_CONTEXT_BITS 19
#define PPC64_ESID_BITS (PPC64_VA_BITS - (PPC64_SID_SHIFT + PPC64_CONTEXT_BITS))
#define PPC64_ESID_BITS_1T (PPC64_VA_BITS - (PPC64_SID_SHIFT_1T + PPC64_CONTEXT_BITS))
#define PPC64_VSID_BITS_256M (PPC64_VA_BITS - PPC64_SID_SHIFT)     /* 40 */
#define PPC64_VSID_BITS_1T (PPC64_VA_BITS - PPC64_SID_SHIFT_1T)    /* 28 */
#define PPC64_VSID_MULTIPLIER 12538073ULL                          /* a 24-bit prime */
#define PPC64_SLB_NUM_BOLTED 2
#define PPC64_SLB_CACHE_ENTRIES 8
/* The kernel's linear map starts at PAGE_OFFSET; its context is 1. */
#define PPC64_PAGE_OFFSET 0xc000000000000000ULL
#define PPC64_KERNEL_LINEAR_CONTEXT 1

static inline unsigned ppc64_sid_shift(unsigned ssize)
{
  return ssize == PPC64_SEG_1T ? PPC64_SID_SHIFT_1T : PPC64_SID_SHIFT;
}

/* (protovsid * 12538073) mod (2^vsid_bits - 1), as vsid_scramble(). */
uint64_t ppc64_vsid_scramble(uint64_t protovsid, unsigned vsid_bits);
/* context << ESID_BITS | ESID (masked), as get_vsid() builds it. */
uint64_t ppc64_protovsid(uint64_t context, uint64_t ea, unsigned ssize);
/* get_vsid(): the scrambled VSID of ea's segment in `context`. */
uint64_t ppc64_vsid(uint64_t context, uint64_t ea, unsigned ssize);
/* hpt_vpn(): the virtual page number in 4K units, VSID above the offset of
 * ea in its segment (VPN_SHIFT 12). */
uint64_t ppc64_vpn(uint64_t ea, uint64_t vsid, unsigned ssize);

/* One SLB entry. */
typedef struct {
  uint64_t esid;       /* EA >> SID_SHIFT of its segment size */
  uint64_t vsid;
  uint64_t context;    /* mm context it was made for (for explain) */
  uint8_t ssize;       /* PPC64_SEG_* */
  uint8_t base_shift;  /* base page size of the segment (SLB L||LP) */
  uint8_t valid;
  uint8_t kernel;      /* a kernel (bolted) entry */
} Ppc64Slbe;

typedef struct {
  unsigned n;
  Ppc64Slbe *e;
  uint32_t used, kern;   /* slb_used_bitmap, slb_kern_bitmap: first 32 entries */
  unsigned rr;           /* stab_rr: the last round-robin victim */
  unsigned cache_ptr;    /* slb_cache_ptr: user entries since the last switch */
  unsigned last;         /* entry of the last hit (host shortcut, no model effect) */
} Ppc64Slb;

/* n entries (32..64), bolted kernel entries set up as slb_initialize()
 * does: entry 0 maps the linear map's segment, entry 1 is reserved for
 * the kernel stack.  `kernel_ssize` is the kernel's segment size. */
void ppc64_slb_init(Ppc64Slb *slb, unsigned n, unsigned kernel_ssize);
void ppc64_slb_clear(Ppc64Slb *slb);

/* The entry translating ea, or -1 (an SLB miss). */
static inline int ppc64_slb_lookup(Ppc64Slb *slb, uint64_t ea)
{
  const Ppc64Slbe *l = &slb->e[slb->last];
  if (l->valid && (ea >> ppc64_sid_shift(l->ssize)) == l->esid)
    return (int)slb->last;
  for (unsigned i = 0; i < slb->n; i++) {
    const Ppc64Slbe *s = &slb->e[i];
    if (s->valid && (ea >> ppc64_sid_shift(s->ssize)) == s->esid) {
      slb->last = i;
      return (int)i;
    }
  }
  return -1;
}

/* alloc_slb_index(false): the entry a new user segment goes to. */
unsigned ppc64_slb_alloc_index(Ppc64Slb *slb);
/* slb_insert_entry() for a user segment: allocate an entry, write it, note
 * it in the SLB cache.  Returns the entry index. */
unsigned ppc64_slb_insert_user(Ppc64Slb *slb, uint64_t ea, uint64_t context, unsigned ssize, unsigned base_shift);
/* The user half of switch_slb(): every user entry invalidated (slbie of
 * the cached ones, or slbia when the cache overflowed), bitmaps reset. */
void ppc64_slb_flush_user(Ppc64Slb *slb);
unsigned ppc64_slb_valid_user(const Ppc64Slb *slb);

/* A thread's SLB preload list (thread_info slb_preload_esid[]): the ESIDs
 * (EA >> 28, 1T-aligned above 1T) of its recent user SLB misses, oldest
 * first, at most `cap`. */
#define PPC64_PRELOAD_MAX 64

typedef struct {
  uint64_t esid[PPC64_PRELOAD_MAX];
  unsigned tail, nr;
} Ppc64Preload;

/* preload_add(): FALSE when the ESID is already there. */
gboolean ppc64_preload_add(Ppc64Preload *p, unsigned cap, uint64_t ea, gboolean seg_1t);
/* The i-th oldest preloaded EA (segment start). */
uint64_t ppc64_preload_ea(const Ppc64Preload *p, unsigned cap, unsigned i);

#endif
