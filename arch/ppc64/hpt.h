/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hpt.h - the ppc64 hashed page table (HPT): one per machine, shared by all
 * CPUs, living in simulated physical memory.
 *
 * The HPT is an array of page-table entry groups (PTEGs) of 8 HPTEs of 16
 * bytes: one PTEG is 128 bytes.  A virtual page hashes to a primary PTEG
 * (hash & mask) and a secondary one (~hash & mask); an HPTE in the secondary
 * group has its H bit set.  The table takes 2^n bytes of physical memory,
 * aligned to its size, from machine start; HPTE n of PTEG g sits at
 * base + g * 128 + n * 16, so every HPTE read a translation makes is a
 * memory reference through the caches.
 *
 * HPTE layout (the pre-ISA-3.0 one; POWER9 moves the B field to the second
 * doubleword, which changes nothing modelled here):
 *   v: B (segment size) 63..62 | AVPN 61..7 | BOLTED 4 | L (large) 2 |
 *      H (secondary) 1 | V (valid) 0
 *   r: RPN 59..12 with LP (the actual page size) in its low bits | R 8 |
 *      C 7 | M 4 | N (no execute) 2 | PP 1..0
 * Sources: arch/powerpc/include/asm/book3s/64/mmu-hash.h,
 * arch/powerpc/mm/book3s64/hash_native.c, QEMU target/ppc/mmu-hash64.c.
 */
#ifndef MMUSIM_PPC64_HPT_H
#define MMUSIM_PPC64_HPT_H

#include <glib.h>
#include <stdint.h>
#include "physmem.h"

#define PPC64_HPTES_PER_GROUP 8
#define PPC64_HPTE_BYTES 16
#define PPC64_PTEG_BYTES 128
#define PPC64_HPT_MIN_SHIFT 18          /* 2^11 PTEGs: the architecture's minimum */
#define PPC64_HPT_MAX_SHIFT 46          /* HTABSIZE of SDR1 / the partition table: 28 + 18 */

#define HPTE_V_SSIZE_SHIFT 62
#define HPTE_V_AVPN_SHIFT 7
#define HPTE_V_AVPN 0x3fffffffffffff80ULL
#define HPTE_V_COMPARE_MASK 0xffffffffffffff80ULL /* B and AVPN */
#define HPTE_V_BOLTED 0x10ULL
#define HPTE_V_LARGE 0x4ULL
#define HPTE_V_SECONDARY 0x2ULL
#define HPTE_V_VALID 0x1ULL

#define HPTE_R_RPN 0x0ffffffffffff000ULL
#define HPTE_R_LP_SHIFT 12
#define HPTE_R_R 0x100ULL
#define HPTE_R_C 0x80ULL
#define HPTE_R_M 0x10ULL
#define HPTE_R_N 0x4ULL
#define HPTE_R_PP 0x3ULL

typedef struct {
  uint64_t v, r;
} Ppc64Hpte;

typedef struct Ppc64Hpt Ppc64Hpt;

/* The shift (log2 of bytes) Linux gives the HPT on bare metal for
 * `mem_bytes` of RAM and a base page of 2^page_shift: one PTEG per two base
 * pages, at least 2^18 (htab_shift_for_mem_size()). */
unsigned ppc64_htab_shift_for_mem(uint64_t mem_bytes, unsigned page_shift);

/* hpt_hash(): the 39-bit hash of a virtual page number (4K units) for a
 * page of 2^shift bytes. */
uint64_t ppc64_hpt_hash(uint64_t vpn, unsigned shift, unsigned ssize);

/* hpte_encode_avpn(): the B and AVPN fields of a first doubleword; base
 * pages above 8M mask the AVPN bits that the page offset covers. */
uint64_t ppc64_hpte_avpn(uint64_t vpn, unsigned base_shift, unsigned ssize);

/* An HPT of 2^shift bytes taken from node `node` of `pm` (contiguous,
 * aligned).  NULL with an error when the memory cannot hold it. */
Ppc64Hpt *ppc64_hpt_new(PhysMem *pm, int node, unsigned shift, GError **error);
/* Gives the memory back to `pm`. */
void ppc64_hpt_free(Ppc64Hpt *h);

uint64_t ppc64_hpt_bytes(const Ppc64Hpt *h);
uint64_t ppc64_hpt_mask(const Ppc64Hpt *h);    /* htab_hash_mask: PTEGs - 1 */
uint64_t ppc64_hpt_base_pa(const Ppc64Hpt *h);
static inline uint64_t ppc64_hpte_pa(const Ppc64Hpt *h, uint64_t pteg, unsigned slot)
{
  return ppc64_hpt_base_pa(h) + pteg * PPC64_PTEG_BYTES + (uint64_t)slot * PPC64_HPTE_BYTES;
}

/* The HPTE in `slot` of PTEG `pteg` (all zero when invalid). */
Ppc64Hpte ppc64_hpt_get(const Ppc64Hpt *h, uint64_t pteg, unsigned slot);
/* The asid of the address space a user HPTE was made for (0: kernel). */
unsigned ppc64_hpt_owner(const Ppc64Hpt *h, uint64_t pteg, unsigned slot);
/* Valid HPTEs in a PTEG, and of those bolted. */
unsigned ppc64_hpt_valid_in(const Ppc64Hpt *h, uint64_t pteg, unsigned *bolted);

/* The first slot of PTEG `pteg` whose V, H, B and AVPN equal want_v's
 * (the hardware search of one group), or -1. */
int ppc64_hpt_find(const Ppc64Hpt *h, uint64_t pteg, uint64_t want_v);
/* ppc64_hpt_find that also copies the entry found into *e (the search's
 * read, without a second lookup of the group by ppc64_hpt_get). */
int ppc64_hpt_find_entry(const Ppc64Hpt *h, uint64_t pteg, uint64_t want_v, Ppc64Hpte *e);

/* native_hpte_insert(): the first invalid slot of the group gets (v, r);
 * -1 when all 8 are valid.  `owner` is the asid for flush_asid. */
int ppc64_hpt_insert(Ppc64Hpt *h, uint64_t pteg, uint64_t v, uint64_t r, unsigned owner);
/* native_hpte_remove(): from slot `start`, wrapping, invalidate the first
 * valid entry that is not bolted; its slot, or -1 when every valid entry
 * is bolted.  *old gets the evicted entry.  No TLB invalidation. */
int ppc64_hpt_remove(Ppc64Hpt *h, uint64_t pteg, unsigned start, Ppc64Hpte *old);
/* Invalidate one slot (native_hpte_invalidate, without the tlbie). */
void ppc64_hpt_invalidate(Ppc64Hpt *h, uint64_t pteg, unsigned slot);
/* Rewrite the second doubleword of a valid slot (updatepp, R/C updates). */
void ppc64_hpt_set_r(Ppc64Hpt *h, uint64_t pteg, unsigned slot, uint64_t r);
/* htab_bolt_mapping() of one page at boot: a bolted entry in the primary
 * group, or with H set in the secondary when the primary is full. */
gboolean ppc64_hpt_bolt(Ppc64Hpt *h, uint64_t hash, uint64_t v, uint64_t r);
/* Invalidate every user HPTE of `owner`; returns how many. */
uint64_t ppc64_hpt_remove_owner(Ppc64Hpt *h, unsigned owner);

/* Valid HPTEs in the table, bolted included; those of one owner. */
uint64_t ppc64_hpt_valid(const Ppc64Hpt *h);
uint64_t ppc64_hpt_owner_valid(const Ppc64Hpt *h, unsigned owner);

#endif
