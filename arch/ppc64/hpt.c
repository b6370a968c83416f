/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hpt.c - the hashed page table of a ppc64 machine.
 *
 * Models: the table's size (htab_shift_for_mem_size), its place in physical
 * memory (one naturally aligned run taken at machine start, as
 * memblock_phys_alloc_range(size, size) does in htab_initialize), the hash
 * (hpt_hash), the AVPN (hpte_encode_avpn), the group search of the hardware,
 * and the kernel's native HPTE operations: insert into the first invalid
 * slot (native_hpte_insert), eviction of the first valid non-bolted entry
 * from a starting slot (native_hpte_remove), invalidation, and bolted boot
 * entries (htab_bolt_mapping).
 * Leaves out: the HPTE lock bit and every concurrency concern (the
 * simulation is sequential), HPT resizing, and the hypervisor (PAPR) path.
 *
 * Host memory: the table's contents are kept as a two-level directory of
 * PTEGs created on their first write, so host memory grows with the PTEGs
 * the workload touches, never with the table's size.  Bolted entries of
 * PTEGs not written yet wait in a small hash table and move into the PTEG
 * when it is created.
 */
#include "config.h"
#include "hpt.h"

#include <string.h>
#include "cache.h"
#include "slb.h"
#include "tlb.h"

#define LEAF_SHIFT 12 /* PTEG pointers per directory leaf: 4096 (32 KiB) */

typedef struct {
  Ppc64Hpte e[PPC64_HPTES_PER_GROUP];
  uint16_t owner[PPC64_HPTES_PER_GROUP]; /* asid of a user HPTE, 0 for the kernel */
} Pteg;

struct Ppc64Hpt {
  PhysMem *pm;
  uint64_t base_pfn;
  unsigned shift;        /* log2 of the table's bytes */
  uint64_t n_ptegs, mask;
  Pteg ***dir;           /* [pteg >> LEAF_SHIFT][pteg & leaf mask], NULL until written */
  uint64_t n_leaves;
  GHashTable *bolted;    /* pteg (uint64_t *) -> Pteg *: bolted entries of PTEGs not created yet */
  uint64_t valid;
  uint32_t *owner_valid; /* per asid: valid user HPTEs */
};

unsigned ppc64_htab_shift_for_mem(uint64_t mem_bytes, unsigned page_shift)
{
  /* Round the memory up to a power of two; aim for 2 pages per PTEG. */
  unsigned memshift = 63 - (unsigned)__builtin_clzll(mem_bytes | 1);
  if ((1ULL << memshift) < mem_bytes)
    memshift++;
  int pteg_shift = (int)memshift - (int)(page_shift + 1);
  return (unsigned)MAX(pteg_shift + 7, PPC64_HPT_MIN_SHIFT);
}

uint64_t ppc64_hpt_hash(uint64_t vpn, unsigned shift, unsigned ssize)
{
  uint64_t hash;
  if (ssize == PPC64_SEG_256M) {
    uint64_t mask = (1ULL << (PPC64_SID_SHIFT - 12)) - 1;
    hash = (vpn >> (PPC64_SID_SHIFT - 12)) ^ ((vpn & mask) >> (shift - 12));
  } else {
    uint64_t mask = (1ULL << (PPC64_SID_SHIFT_1T - 12)) - 1;
    uint64_t vsid = vpn >> (PPC64_SID_SHIFT_1T - 12);
    hash = vsid ^ (vsid << 25) ^ ((vpn & mask) >> (shift - 12));
  }
  return hash & 0x7fffffffffULL;
}

uint64_t ppc64_hpte_avpn(uint64_t vpn, unsigned base_shift, unsigned ssize)
{
  /* The AVA omits the low 23 bits of the 78-bit VA; mmu_psize_defs[].avpnm
   * masks what a base page above 8M covers of the rest. */
  uint64_t avpnm = base_shift > 23 ? (1ULL << (base_shift - 23)) - 1 : 0;
  uint64_t v = (vpn >> (23 - 12)) & ~avpnm;
  return (v << HPTE_V_AVPN_SHIFT) | ((uint64_t)ssize << HPTE_V_SSIZE_SHIFT);
}

Ppc64Hpt *ppc64_hpt_new(PhysMem *pm, int node, unsigned shift, GError **error)
{
  g_return_val_if_fail(pm != NULL && shift >= PPC64_HPT_MIN_SHIFT && shift <= PPC64_HPT_MAX_SHIFT, NULL);
  uint64_t pfn;
  if (!physmem_alloc_contig(pm, node, shift - 12, &pfn)) {
    g_autofree char *size = settings_format_size(1ULL << shift);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "the hashed page table (%s) does not fit, aligned, in the free memory of node %d: "
                "lower ppc64.hpt_size or raise machine.mem_per_node", size, node);
    return NULL;
  }
  Ppc64Hpt *h = g_new0(Ppc64Hpt, 1);
  h->pm = pm;
  h->base_pfn = pfn;
  h->shift = shift;
  h->n_ptegs = (1ULL << shift) / PPC64_PTEG_BYTES;
  h->mask = h->n_ptegs - 1;
  h->n_leaves = (h->n_ptegs + (1ULL << LEAF_SHIFT) - 1) >> LEAF_SHIFT;
  h->dir = g_new0(Pteg **, h->n_leaves);
  h->bolted = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  h->owner_valid = g_new0(uint32_t, TLB_ASID_MASK + 1);
  return h;
}

void ppc64_hpt_free(Ppc64Hpt *h)
{
  if (!h)
    return;
  for (uint64_t l = 0; l < h->n_leaves; l++) {
    if (!h->dir[l])
      continue;
    for (unsigned i = 0; i < (1u << LEAF_SHIFT); i++)
      g_free(h->dir[l][i]);
    g_free(h->dir[l]);
  }
  g_free(h->dir);
  g_hash_table_destroy(h->bolted);
  g_free(h->owner_valid);
  physmem_release_range(h->pm, h->base_pfn, h->shift - 12);
  g_free(h);
}

uint64_t ppc64_hpt_bytes(const Ppc64Hpt *h)
{
  return 1ULL << h->shift;
}

uint64_t ppc64_hpt_mask(const Ppc64Hpt *h)
{
  return h->mask;
}

uint64_t ppc64_hpt_base_pa(const Ppc64Hpt *h)
{
  return h->base_pfn << 12;
}

/* The PTEG if it was written, else NULL. */
static inline Pteg *pteg_peek(const Ppc64Hpt *h, uint64_t g)
{
  Pteg **leaf = h->dir[g >> LEAF_SHIFT];
  return leaf ? leaf[g & ((1u << LEAF_SHIFT) - 1)] : NULL;
}

/* pteg_read of a PTEG never written: one holding bolted entries only, or
 * NULL.  Out of line, so that pteg_read is inline in the HPT search. */
static G_NO_INLINE const Pteg *pteg_read_bolted(const Ppc64Hpt *h, uint64_t g)
{
  if (!g_hash_table_size(h->bolted))
    return NULL;
  return g_hash_table_lookup(h->bolted, &g);
}

/* The PTEG for reading: written, or holding bolted entries only, or NULL
 * (all eight invalid). */
static inline const Pteg *pteg_read(const Ppc64Hpt *h, uint64_t g)
{
  const Pteg *p = pteg_peek(h, g);
  return p ? p : pteg_read_bolted(h, g);
}

/* The PTEG for writing, created (with its bolted entries) if needed. */
static Pteg *pteg_get(Ppc64Hpt *h, uint64_t g)
{
  Pteg **leaf = h->dir[g >> LEAF_SHIFT];
  if (!leaf)
    leaf = h->dir[g >> LEAF_SHIFT] = g_new0(Pteg *, 1u << LEAF_SHIFT);
  Pteg **slot = &leaf[g & ((1u << LEAF_SHIFT) - 1)];
  if (!*slot) {
    gpointer key, bolted;
    if (g_hash_table_steal_extended(h->bolted, &g, &key, &bolted)) {
      g_free(key);
      *slot = bolted;
    } else {
      *slot = g_new0(Pteg, 1);
    }
  }
  return *slot;
}

Ppc64Hpte ppc64_hpt_get(const Ppc64Hpt *h, uint64_t pteg, unsigned slot)
{
  g_return_val_if_fail(pteg <= h->mask && slot < PPC64_HPTES_PER_GROUP, (Ppc64Hpte){ 0 });
  const Pteg *p = pteg_read(h, pteg);
  return p ? p->e[slot] : (Ppc64Hpte){ 0 };
}

unsigned ppc64_hpt_owner(const Ppc64Hpt *h, uint64_t pteg, unsigned slot)
{
  g_return_val_if_fail(pteg <= h->mask && slot < PPC64_HPTES_PER_GROUP, 0);
  const Pteg *p = pteg_read(h, pteg);
  return p && (p->e[slot].v & HPTE_V_VALID) ? p->owner[slot] : 0;
}

unsigned ppc64_hpt_valid_in(const Ppc64Hpt *h, uint64_t pteg, unsigned *bolted)
{
  const Pteg *p = pteg_read(h, pteg);
  unsigned n = 0, b = 0;
  for (unsigned i = 0; p && i < PPC64_HPTES_PER_GROUP; i++) {
    n += (p->e[i].v & HPTE_V_VALID) != 0;
    b += (p->e[i].v & (HPTE_V_VALID | HPTE_V_BOLTED)) == (HPTE_V_VALID | HPTE_V_BOLTED);
  }
  if (bolted)
    *bolted = b;
  return n;
}

/* The first matching slot of a group that exists, or -1. */
static inline int pteg_match(const Pteg *p, uint64_t want_v)
{
  /* V, H, B and the AVPN must all match (QEMU HPTE64_V_COMPARE). */
  const uint64_t mask = HPTE_V_COMPARE_MASK | HPTE_V_SECONDARY | HPTE_V_VALID;
  for (unsigned i = 0; i < PPC64_HPTES_PER_GROUP; i++)
    if (((p->e[i].v ^ want_v) & mask) == 0)
      return (int)i;
  return -1;
}

int ppc64_hpt_find(const Ppc64Hpt *h, uint64_t pteg, uint64_t want_v)
{
  const Pteg *p = pteg_read(h, pteg);
  return p ? pteg_match(p, want_v) : -1;
}

int ppc64_hpt_find_entry(const Ppc64Hpt *h, uint64_t pteg, uint64_t want_v, Ppc64Hpte *e)
{
  const Pteg *p = pteg_read(h, pteg);
  int i = p ? pteg_match(p, want_v) : -1;
  if (i >= 0)
    *e = p->e[i];
  return i;
}

static void count(Ppc64Hpt *h, unsigned owner, int delta)
{
  h->valid += (uint64_t)(int64_t)delta;
  if (owner)
    h->owner_valid[owner & TLB_ASID_MASK] += (uint32_t)delta;
}

int ppc64_hpt_insert(Ppc64Hpt *h, uint64_t pteg, uint64_t v, uint64_t r, unsigned owner)
{
  g_return_val_if_fail(pteg <= h->mask, -1);
  Pteg *p = pteg_get(h, pteg);
  for (unsigned i = 0; i < PPC64_HPTES_PER_GROUP; i++) {
    if (p->e[i].v & HPTE_V_VALID)
      continue;
    p->e[i].r = r;
    p->e[i].v = v | HPTE_V_VALID;
    p->owner[i] = (uint16_t)(owner & TLB_ASID_MASK);
    count(h, p->owner[i], 1);
    return (int)i;
  }
  return -1;
}

int ppc64_hpt_remove(Ppc64Hpt *h, uint64_t pteg, unsigned start, Ppc64Hpte *old)
{
  g_return_val_if_fail(pteg <= h->mask, -1);
  Pteg *p = pteg_peek(h, pteg);
  if (!p)
    return -1; /* nothing written here: only bolted entries, if any */
  unsigned s = start & (PPC64_HPTES_PER_GROUP - 1);
  for (unsigned i = 0; i < PPC64_HPTES_PER_GROUP; i++, s = (s + 1) & (PPC64_HPTES_PER_GROUP - 1)) {
    uint64_t v = p->e[s].v;
    if ((v & HPTE_V_VALID) && !(v & HPTE_V_BOLTED)) {
      if (old)
        *old = p->e[s];
      p->e[s].v = 0;
      count(h, p->owner[s], -1);
      return (int)s;
    }
  }
  return -1;
}

void ppc64_hpt_invalidate(Ppc64Hpt *h, uint64_t pteg, unsigned slot)
{
  g_return_if_fail(pteg <= h->mask && slot < PPC64_HPTES_PER_GROUP);
  Pteg *p = pteg_peek(h, pteg);
  if (!p || !(p->e[slot].v & HPTE_V_VALID))
    return;
  p->e[slot].v = 0;
  count(h, p->owner[slot], -1);
}

void ppc64_hpt_set_r(Ppc64Hpt *h, uint64_t pteg, unsigned slot, uint64_t r)
{
  g_return_if_fail(pteg <= h->mask && slot < PPC64_HPTES_PER_GROUP);
  Pteg *p = pteg_peek(h, pteg);
  g_return_if_fail(p != NULL && (p->e[slot].v & HPTE_V_VALID));
  p->e[slot].r = r;
}

/* Insert a bolted entry into PTEG g, which only bolted entries use yet
 * (boot), keeping it outside the directory until something else writes
 * the PTEG. */
static gboolean bolt_into(Ppc64Hpt *h, uint64_t g, uint64_t v, uint64_t r)
{
  Pteg *p = pteg_peek(h, g);
  if (!p) {
    p = g_hash_table_lookup(h->bolted, &g);
    if (!p) {
      p = g_new0(Pteg, 1);
      g_hash_table_insert(h->bolted, g_memdup2(&g, sizeof g), p);
    }
  }
  for (unsigned i = 0; i < PPC64_HPTES_PER_GROUP; i++) {
    if (p->e[i].v & HPTE_V_VALID)
      continue;
    p->e[i].r = r;
    p->e[i].v = v | HPTE_V_VALID | HPTE_V_BOLTED;
    p->owner[i] = 0;
    count(h, 0, 1);
    return TRUE;
  }
  return FALSE;
}

gboolean ppc64_hpt_bolt(Ppc64Hpt *h, uint64_t hash, uint64_t v, uint64_t r)
{
  /* Primary first; at boot nothing non-bolted can be removed to make room,
   * so a full primary sends the entry to the secondary group. */
  if (bolt_into(h, hash & h->mask, v & ~HPTE_V_SECONDARY, r))
    return TRUE;
  return bolt_into(h, ~hash & h->mask, v | HPTE_V_SECONDARY, r);
}

uint64_t ppc64_hpt_remove_owner(Ppc64Hpt *h, unsigned owner)
{
  owner &= TLB_ASID_MASK;
  uint64_t removed = 0;
  for (uint64_t l = 0; l < h->n_leaves && h->owner_valid[owner]; l++) {
    Pteg **leaf = h->dir[l];
    if (!leaf)
      continue;
    for (unsigned i = 0; i < (1u << LEAF_SHIFT); i++) {
      Pteg *p = leaf[i];
      for (unsigned s = 0; p && s < PPC64_HPTES_PER_GROUP; s++) {
        if ((p->e[s].v & HPTE_V_VALID) && !(p->e[s].v & HPTE_V_BOLTED) && p->owner[s] == owner) {
          p->e[s].v = 0;
          count(h, owner, -1);
          removed++;
        }
      }
    }
  }
  return removed;
}

uint64_t ppc64_hpt_valid(const Ppc64Hpt *h)
{
  return h->valid;
}

uint64_t ppc64_hpt_owner_valid(const Ppc64Hpt *h, unsigned owner)
{
  return h->owner_valid[owner & TLB_ASID_MASK];
}
