/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86_64.c - the x86-64 MMU after an L1 TLB miss.
 *
 * Models (Intel SDM vol. 3A chapter 4):
 * - the second-level TLB (STLB) holding the page sizes tlb.stlb_sizes names,
 *   an optional separate 1G array, and AMD's separate L2 ITLB; a page size the
 *   second level does not hold is cached as fragments of the largest size it
 *   does hold (1G as 2M on Zen) or not at all (2M on Westmere's 4K-only STLB);
 * - paging-structure caches (4.10.3): a PML5E, PML4E, PDPTE and PDE cache,
 *   each fully associative with LRU, tagged by PCID and the VA bits above the
 *   level's index, holding non-leaf entries only; a walk starts below the
 *   lowest level that hits, so a PDE-cache hit costs one reference;
 * - the walk itself: every entry read is a physical access through the data
 *   cache hierarchy (memsys_access with MREQ_WALK); accessed bits are set on
 *   every level, the dirty bit on the leaf for stores; permission checks
 *   (present, user, writable, NX) as the SDM lists them.
 * - nested paging (virt.nested, Intel EPT / AMD NPT; Intel SDM vol. 3C
 *   ch. 29, AMD APM vol. 2 15.25, Bhargava et al., ASPLOS 2008): the guest
 *   tables' addresses and the walk's final address are guest-physical, and
 *   each is translated by a walk of the host's 4-level table, through a
 *   nested TLB (gPA -> hPA) and host-dimension paging-structure caches
 *   (x86_host_walk); a guest paging-structure-cache hit yields the
 *   host-physical address of the next guest table (SDM 29.4.1, combined
 *   mappings), so that table needs no host walk.
 * - shadow paging (virt.shadow, KVM's shadow MMU and PVM): the walk reads
 *   the hypervisor's shadow table instead of the guest's, with its page
 *   no larger than the hypervisor's backing (X86Shadow); with virt.nested
 *   too, that table is itself translated by the host's (a guest of a
 *   guest whose hypervisor shadows it).
 * Leaves out: the PDPTE registers of PAE, the walker's speculative
 * behaviour, and global pages.
 */
#include "config.h"
#include "x86_64.h"

#include <string.h>
#include "cache.h"
#include "cpu.h"
#include "cpu-translate.h"
#include "memsys.h"
#include "mm.h"
#include "tlb.h"

#define PWC_MAX_LEVEL 5

/* A fully associative paging-structure cache with true LRU.
 *
 * Host layout, which changes neither what is cached nor its order: the
 * entries sit in fixed slots (0..valid-1 are the valid ones), a hash of the
 * tag leads to a chain of the slots holding it, and the recency order is a
 * doubly linked list over the slots.  A lookup follows one short chain (an
 * empty bucket is a sure miss: a random walk over a large range misses the
 * PDE cache nearly always), a hit relinks its slot at the front, a fill
 * takes the next free slot or the oldest one: nothing is searched or moved
 * along the recency order, which the linear scan and shift of a recency-
 * ordered array did on every hit (a third of x86_translate at 128 leaf
 * tables against 32 PDE-cache entries). */
#define PWC_BUCKETS 256
#define PWC_NONE 0xffff /* no slot (slots are below 4096, the settings' limit) */

typedef struct {
  unsigned n;
  unsigned valid;  /* valid entries: slots 0..valid-1 */
  uint16_t newest, oldest;  /* ends of the recency list (while valid > 0) */
  uint64_t *tag;   /* TLB_VALID | asid << 48 | va >> shift[level]; 0: invalid */
  PtNode **node;   /* the next-level table the cached entry points to */
  uint16_t *older, *newer;  /* by slot: neighbours in recency order, PWC_NONE at the ends */
  uint16_t *chain; /* by slot: the next slot of its hash chain, PWC_NONE at the end */
  uint64_t *keep_tag; /* pwc_flush's copy of the kept entries */
  PtNode **keep_node;
  uint16_t head[PWC_BUCKETS]; /* by pwc_hash: the chain's first slot, PWC_NONE: empty */
} Pwc;

/* The fields every translation reads come first, in the first host lines,
 * the paging-structure caches (half a KiB of chain heads each) after them:
 * under a random run over a large range the host's caches lose whatever one
 * translation does not touch again soon. */
typedef struct {
  uint64_t user_limit;
  unsigned levels;
  uint32_t stlb_hit_cycles, walk_overhead_cycles;
  gboolean coalesce; /* tlb.coalesce: 16K entries of four 4K pages in the data side's STLB */
  /* The probes of each list, and how many of them a lookup tries: those of
   * the base size (1, or 0 without a 4K array) until a larger page has been
   * filled into a second-level array (none can hold one before), then all. */
  unsigned n_probe[2], n_probe_live[2];
  uint8_t stlb_home[X86_N_SIZES]; /* array size code holding each page size, 0xff: none */
  Tlb *stlb, *stlb_1g, *l2i;
  /* The second-level probes in order, for data (0) and fetches (1): each
   * page size that is its own home, with its array (built from the above in
   * x86_cpu_new, so a probe skips the sizes held as fragments at no cost). */
  struct { Tlb *t; unsigned size; } probe[2][X86_N_SIZES];
  Pwc pwc[PWC_MAX_LEVEL + 1];     /* indexed by the level of the cached entry (2..5) */
  struct X86Host *host;           /* virt.nested: the host dimension, else NULL */
  struct X86Shadow *shadow;       /* virt.shadow: the hypervisor's shadow table, else NULL */
} X86State;

/* Shadow paging (virt.shadow): the hardware walks not the guest's table but
 * the one its hypervisor keeps from it (KVM's shadow MMU, arch/x86/kvm/mmu/
 * mmu.c, 6.12; PVM runs every guest so).  It is laid out here as the
 * hypervisor's memory (its "physical" addresses, which the host dimension
 * translates when there is one too):
 * - a shadow page for each guest table page, its image: the entry of guest
 *   table page P, index i, is read at image_base + P + 8i;
 * - "direct" shadow pages below a guest page larger than the hypervisor's
 *   own backing of it (virt.shadow_page_size: kvm_mmu_hugepage_adjust maps
 *   no larger than the host mapping's level), keyed by the guest-physical
 *   region they map (kvm_mmu_get_child_sp with role.direct: one per 2M
 *   region at level 1, per 1G region at level 2), at direct_base[level].
 * The guest's own entries are then read by the hypervisor only (on a shadow
 * fault), so a walk reads none of them.  Leaves out: the shadow faults that
 * fill the table and write-protect the guest's tables (a warmed-up run
 * takes none), and a paging-structure-cache entry for a shadow entry that
 * points to a direct page (each walk below a split guest page reads the
 * entry above its direct page again, a cache hit in practice). */
typedef struct X86Shadow {
  unsigned page_size;       /* virt.shadow_page_size: X86_4K, X86_2M or X86_1G */
  uint64_t image_base;      /* where the images of the guest table pages start */
  uint64_t direct_base[3];  /* by level (1, 2): where the direct pages of that level start */
  uint64_t end;             /* the end of the hypervisor memory laid out (a host's table covers it) */
} X86Shadow;

/* The host dimension of nested paging (virt.nested).  The host's table is
 * not a second Linux model but a fixed map: guest-physical address g is
 * host-physical g (so data and guest tables keep the caches' and DRAM's
 * behaviour of a native run), backed by pages of virt.host_page_size, or
 * 4K for the regions virt.host_huge_fraction leaves out.  Its table pages
 * are real host-physical addresses above the guest's memory, laid out
 * level by level (one PML4, a PDPT per 512G, a PD per 1G, a PT per 2M of
 * guest memory), and every entry a host walk reads goes through the cache
 * hierarchy as a guest entry does. */
#define HOST_PWC_MAX 4
typedef struct X86Host {
  unsigned page_size;       /* virt.host_page_size: X86_4K, X86_2M or X86_1G */
  uint64_t huge_below;      /* a region is backed huge when its hash is below this (of 2^32) */
  uint64_t guest_bytes;     /* guest-physical memory the table maps: machine.nodes x machine.mem_per_node,
                             * and the shadow table's above it (X86Shadow) */
  uint64_t table_pa[5];     /* by host level (1..4): host-physical address of the first table */
  Tlb *ntlb;                /* virt.ntlb_*: gPA -> hPA at the host page size, NULL: none */
  struct {                  /* by level (2..4): fully associative, LRU, most recent first */
    unsigned n, valid;
    uint64_t *tag;
  } pwc[HOST_PWC_MAX + 1];
} X86Host;

static const unsigned x86_shift[X86_N_SIZES] = { 12, 21, 30 };

/* tlb.coalesce (AMD's PTE coalescing, Zen 2 on): four 4K pages whose
 * entries, an aligned group of four in the walk's line, map four
 * physically contiguous frames aligned to 16K with the same permissions
 * and dirty bit, are held by the data side's STLB as one 16K entry.  Its
 * key takes the size code X86_COALESCED, which no page size has, and
 * va >> X86_COALESCED_SHIFT; its payload is the group's first frame, as a
 * 4K page (size 0).  A probe that misses the 4K key tries it next; a page
 * invalidation drops both keys of the page. */
enum { X86_COALESCED = 3 };
#define X86_COALESCED_SHIFT 14
#define X86_COALESCED_PAGES (1u << (X86_COALESCED_SHIFT - 12))
G_STATIC_ASSERT((int)X86_COALESCED >= (int)X86_N_SIZES);

uint64_t x86_64_user_limit(unsigned levels)
{
  return levels == 5 ? 1ULL << 56 : 1ULL << 47;
}

/* ---- paging-structure caches --------------------------------------------- */

static inline unsigned pwc_hash(uint64_t tag)
{
  return (unsigned)((tag ^ (tag >> TLB_ASID_SHIFT)) & (PWC_BUCKETS - 1));
}

static void pwc_init(Pwc *p, unsigned n)
{
  unsigned k = n ? n : 1;
  p->n = n;
  p->valid = 0;
  p->tag = g_new0(uint64_t, k);
  p->node = g_new0(PtNode *, k);
  p->older = g_new(uint16_t, k);
  p->newer = g_new(uint16_t, k);
  p->chain = g_new(uint16_t, k);
  p->keep_tag = g_new(uint64_t, k);
  p->keep_node = g_new(PtNode *, k);
  memset(p->head, 0xff, sizeof p->head);
}

static void pwc_clear(Pwc *p)
{
  g_free(p->tag);
  g_free(p->node);
  g_free(p->older);
  g_free(p->newer);
  g_free(p->chain);
  g_free(p->keep_tag);
  g_free(p->keep_node);
}

/* Put slot s at the front of the recency list (s is valid and linked). */
static inline void pwc_to_front(Pwc *p, unsigned s)
{
  unsigned o = p->older[s], y = p->newer[s]; /* y exists: s is not the newest */
  p->older[y] = (uint16_t)o;
  if (o != PWC_NONE)
    p->newer[o] = (uint16_t)y;
  else
    p->oldest = (uint16_t)y;
  p->older[s] = p->newest;
  p->newer[s] = PWC_NONE;
  p->newer[p->newest] = (uint16_t)s;
  p->newest = (uint16_t)s;
}

static inline PtNode *pwc_lookup(Pwc *p, uint64_t tag)
{
  for (unsigned s = p->head[pwc_hash(tag)]; s != PWC_NONE; s = p->chain[s]) {
    if (p->tag[s] == tag) {
      if (s != p->newest)
        pwc_to_front(p, s);
      return p->node[s];
    }
  }
  return NULL;
}

/* Link slot s, whose tag and node are set, as the newest entry. */
static inline void pwc_link_front(Pwc *p, unsigned s)
{
  uint16_t *h = &p->head[pwc_hash(p->tag[s])];
  p->chain[s] = *h;
  *h = (uint16_t)s;
  p->older[s] = p->valid ? p->newest : PWC_NONE;
  p->newer[s] = PWC_NONE;
  if (p->valid)
    p->newer[p->newest] = (uint16_t)s;
  else
    p->oldest = (uint16_t)s;
  p->newest = (uint16_t)s;
  p->valid++;
}

/* Fill an entry known to be absent: x86_translate fills a level only after
 * its lookup of the same tag missed in the same walk, and nothing in
 * between touches the cache.  It becomes the newest; the least recently
 * used one drops out when the cache is full. */
static inline void pwc_fill_absent(Pwc *p, uint64_t tag, PtNode *node)
{
  if (!p->n)
    return;
  unsigned s = p->valid;
  if (s == p->n) { /* full: reuse the oldest slot */
    s = p->oldest;
    uint16_t *link = &p->head[pwc_hash(p->tag[s])];
    while (*link != s)
      link = &p->chain[*link];
    *link = p->chain[s];
    p->oldest = p->newer[s]; /* exists: n > 1 here, or s is also the newest */
    if (p->oldest != PWC_NONE)
      p->older[p->oldest] = PWC_NONE;
    p->valid--;
  }
  p->tag[s] = tag;
  p->node[s] = node;
  pwc_link_front(p, s);
}

/* Invalidate entries of asid (or all): the kept ones move to slots
 * 0..keep-1 in their recency order, oldest first, and are relinked. */
static void pwc_flush(Pwc *p, gboolean all, unsigned asid)
{
  if (!p->valid)
    return;
  unsigned n = p->valid, keep = 0;
  uint64_t *tag = p->keep_tag;
  PtNode **node = p->keep_node;
  for (unsigned s = p->oldest; s != PWC_NONE; s = p->newer[s]) {
    uint64_t t = p->tag[s];
    if (all || ((t >> TLB_ASID_SHIFT) & TLB_ASID_MASK) == asid)
      continue;
    tag[keep] = t;
    node[keep] = p->node[s];
    keep++;
  }
  if (keep == n)
    return;
  memset(p->head, 0xff, sizeof p->head);
  p->valid = 0;
  for (unsigned s = 0; s < n; s++) {
    p->tag[s] = s < keep ? tag[s] : 0;
    p->node[s] = s < keep ? node[s] : NULL;
    if (s < keep)
      pwc_link_front(p, s);
  }
}

/* Keys and tags of one translation, built from `akey`, tlb_key(asid, 0, 0):
 * the walk runs only for a va below user_limit (at most 2^56), whose page
 * numbers fit TLB_VPN_BITS, so tlb_key's mask of the VPN is not needed. */
static inline uint64_t x86_key(uint64_t akey, unsigned size, uint64_t va)
{
  return akey | ((uint64_t)size << TLB_SIZE_SHIFT) | (va >> x86_shift[size]);
}

/* x86-64's tables have 9 index bits a level, level L's at bit 12 + 9 (L - 1)
 * of the va (pgtable_geometry_x86_64): as constants, the walk loads no
 * geometry and builds no mask. */
static inline unsigned x86_level_shift(unsigned level)
{
  return 3 + 9 * level;
}

static inline unsigned x86_index(unsigned level, uint64_t va)
{
  return (unsigned)(va >> x86_level_shift(level)) & 511;
}

static inline uint64_t pwc_tag(unsigned level, uint64_t akey, uint64_t va)
{
  return akey | (va >> x86_level_shift(level));
}

/* One page-table line a walk reads, through the data caches: its cycles,
 * where it was found, and the counters of the walk's references (`dim`:
 * the dimension's own counter under virtualisation, CTR_WALK_REFS alone
 * natively, counted once). */
static inline G_ALWAYS_INLINE uint32_t walk_read(Cpu *cpu, uint64_t pa, CounterId dim, MemLevel *where)
{
  uint32_t c = memsys_access(cpu->mem, pa, MREQ_WALK, where);
  cpu->ctr.c[CTR_WALK_REFS]++;
  if (dim != CTR_WALK_REFS)
    cpu->ctr.c[dim]++;
  cpu->ctr.c[CTR_WALK_REFS_L1 + *where]++;
  return c;
}

/* ---- the host dimension of nested paging ----------------------------------- */

static const char *host_level_name(unsigned l)
{
  static const char *names[] = { "", "hPTE", "hPDE", "hPDPTE", "hPML4E" };
  return names[l];
}

/* The host page size backing guest-physical address gpa: virt.host_page_size,
 * or 4K for a region left out by virt.host_huge_fraction (a multiplicative
 * hash of the region number, fixed, so every run backs the same regions). */
static unsigned host_size_of(const X86Host *h, uint64_t gpa)
{
  if (h->page_size == X86_4K)
    return X86_4K;
  uint64_t region = gpa >> x86_shift[h->page_size];
  uint64_t hash = (region * 0x9e3779b97f4a7c15ULL) >> 32;
  return hash < h->huge_below ? h->page_size : X86_4K;
}

/* Host-physical address of the host entry of `level` that maps gpa. */
static uint64_t host_entry_pa(const X86Host *h, unsigned level, uint64_t gpa)
{
  uint64_t g = MIN(gpa, h->guest_bytes - 1); /* the table; a gPA past the end shares the last */
  uint64_t table = level == 4 ? h->table_pa[4] : h->table_pa[level] + ((g >> x86_level_shift(level + 1)) << 12);
  return table + ((uint64_t)x86_index(level, gpa) << 3);
}

/* The host-dimension paging-structure cache of a level: hit moves to the front. */
static gboolean host_pwc_lookup(X86Host *h, unsigned level, uint64_t tag)
{
  __typeof__(h->pwc[0]) *p = &h->pwc[level];
  for (unsigned i = 0; i < p->valid; i++) {
    if (p->tag[i] == tag) {
      memmove(p->tag + 1, p->tag, i * sizeof *p->tag);
      p->tag[0] = tag;
      return TRUE;
    }
  }
  return FALSE;
}

static void host_pwc_fill(X86Host *h, unsigned level, uint64_t tag)
{
  __typeof__(h->pwc[0]) *p = &h->pwc[level];
  if (!p->n)
    return;
  if (p->valid < p->n)
    p->valid++;
  memmove(p->tag + 1, p->tag, (p->valid - 1) * sizeof *p->tag);
  p->tag[0] = tag;
}

/* Translate guest-physical address gpa to host-physical through the nested
 * TLB or, on a miss, a walk of the host table starting below the lowest
 * host paging-structure cache hit; `what` names the address in `ex`.
 * Returns the cycles of the host references; the host page size in *size.
 * The host-physical address is gpa itself (X86Host).  A hit of the nested
 * TLB costs no cycles beyond the walk's (its lookup is part of the walker's
 * step, as a paging-structure-cache lookup is here). */
static uint32_t x86_host_walk(Cpu *cpu, X86Host *h, uint64_t gpa, const char *what, GString *ex, unsigned *size)
{
  unsigned hs = host_size_of(h, gpa);
  *size = hs;
  uint64_t key = tlb_key(0, hs, gpa >> x86_shift[hs]);
  if (h->ntlb && tlb_probe(h->ntlb, key)) {
    cpu->ctr.c[CTR_NTLB_HITS]++;
    if (ex)
      g_string_append_printf(ex, "    gPA %#" G_GINT64_MODIFIER "x (%s): nested TLB hit (%s host page)\n", gpa, what,
                             x86_64_ops.size_name[hs]);
    return 0;
  }
  cpu->ctr.c[CTR_NTLB_MISSES]++;
  unsigned leaf = hs + 1, level = 4;
  for (unsigned l = leaf + 1; l <= HOST_PWC_MAX; l++) {
    if (host_pwc_lookup(h, l, gpa >> x86_level_shift(l))) {
      level = l - 1;
      cpu->ctr.c[CTR_HOST_PWC_HITS]++;
      break;
    }
  }
  if (ex) {
    g_string_append_printf(ex, "    gPA %#" G_GINT64_MODIFIER "x (%s): nested TLB miss, ", gpa, what);
    if (level < 4)
      g_string_append_printf(ex, "host %s cache hit, host walk starts at the %s\n", host_level_name(level + 1),
                             host_level_name(level));
    else
      g_string_append_printf(ex, "host walk starts at the host root (EPTP/nCR3 %#" G_GINT64_MODIFIER "x)\n",
                             h->table_pa[4]);
  }
  uint32_t cycles = 0;
  for (; level >= leaf; level--) {
    uint64_t pa = host_entry_pa(h, level, gpa);
    MemLevel where;
    uint32_t c = walk_read(cpu, pa, CTR_WALK_HOST_REFS, &where);
    cycles += c;
    if (ex)
      g_string_append_printf(ex, "      %-6s index %3u  read 0x%012" G_GINT64_MODIFIER "x  %-4s %3u cycles%s\n",
                             host_level_name(level), x86_index(level, gpa), pa, memsys_level_name(where), c,
                             level == leaf ? "" : "  -> next host table");
    if (level > leaf)
      host_pwc_fill(h, level, gpa >> x86_level_shift(level));
  }
  if (ex)
    g_string_append_printf(ex, "      -> %s host page, hPA %#" G_GINT64_MODIFIER "x\n", x86_64_ops.size_name[hs], gpa);
  if (h->ntlb)
    tlb_insert(h->ntlb, key, gpa >> 12, 0, (uint8_t)hs);
  return cycles;
}

static const unsigned x86_page_size_choice[] = { X86_4K, X86_2M, X86_1G }; /* "4K|2M|1G" settings, in order */

static uint64_t x86_guest_bytes(const Settings *s)
{
  return (uint64_t)settings_int(s, SET_MACHINE_NODES) * (uint64_t)settings_int(s, SET_MACHINE_MEM_PER_NODE);
}

#define X86_1G_UP(x) (((x) + (1ULL << 30) - 1) & ~((1ULL << 30) - 1))

/* The shadow table's layout (X86Shadow), from the next 1G above the
 * guest's memory: the images (one page per guest page), then the direct
 * pages of level 1 (one per 2M) and of level 2 (one per 1G). */
static X86Shadow *x86_shadow_new(const Settings *s)
{
  X86Shadow *sh = g_new0(X86Shadow, 1);
  uint64_t guest = x86_guest_bytes(s);
  sh->page_size = x86_page_size_choice[settings_int(s, SET_VIRT_SHADOW_PAGE_SIZE)];
  sh->image_base = X86_1G_UP(guest);
  sh->direct_base[1] = sh->image_base + X86_1G_UP(guest);
  sh->direct_base[2] = sh->direct_base[1] + X86_1G_UP(guest >> 9);
  sh->end = sh->direct_base[2] + X86_1G_UP(guest >> 18);
  return sh;
}

/* `covered`: the guest-physical memory the host's table maps, the guest's
 * and, under shadow paging, the hypervisor's shadow table above it. */
static X86Host *x86_host_new(const Settings *s, uint64_t covered, const TlbReplPolicy *repl, GError **error)
{
  X86Host *h = g_new0(X86Host, 1);
  h->page_size = x86_page_size_choice[settings_int(s, SET_VIRT_HOST_PAGE_SIZE)];
  h->huge_below = (uint64_t)(settings_double(s, SET_VIRT_HOST_HUGE_FRACTION) * 4294967296.0);
  h->guest_bytes = covered;
  /* The host's tables above the guest's memory, from the next 1G on: the
   * PML4, then the PDPTs, the PDs and the PTs, each for the whole range. */
  h->table_pa[4] = X86_1G_UP(h->guest_bytes);
  for (unsigned l = 3; l >= 1; l--) {
    uint64_t above = l == 3 ? 1 : (h->guest_bytes + (1ULL << x86_level_shift(l + 2)) - 1) >> x86_level_shift(l + 2);
    h->table_pa[l] = h->table_pa[l + 1] + (above << 12);
  }
  if (settings_int(s, SET_VIRT_NTLB_ENTRIES)) {
    h->ntlb = tlb_new_from_settings(s, SET_VIRT_NTLB_ENTRIES, SET_VIRT_NTLB_WAYS, repl, error);
    if (!h->ntlb) {
      g_free(h);
      return NULL;
    }
  }
  static const SettingId pwc_set[HOST_PWC_MAX + 1] = {
    0, 0, SET_VIRT_HOST_PWC_PDE_ENTRIES, SET_VIRT_HOST_PWC_PDPT_ENTRIES, SET_VIRT_HOST_PWC_PML4_ENTRIES
  };
  for (unsigned l = 2; l <= HOST_PWC_MAX; l++) {
    h->pwc[l].n = (unsigned)settings_int(s, pwc_set[l]);
    h->pwc[l].tag = g_new0(uint64_t, MAX(h->pwc[l].n, 1u));
  }
  return h;
}

static void x86_host_free(X86Host *h)
{
  if (!h)
    return;
  tlb_free(h->ntlb);
  for (unsigned l = 2; l <= HOST_PWC_MAX; l++)
    g_free(h->pwc[l].tag);
  g_free(h);
}

void x86_64_pwc_info(const Cpu *cpu, X86PwcInfo *info)
{
  const X86State *st = cpu->arch_state;
  memset(info, 0, sizeof *info);
  for (unsigned l = 2; l <= PWC_MAX_LEVEL; l++) {
    info->entries[l] = st->pwc[l].n;
    for (unsigned i = 0; i < st->pwc[l].n; i++)
      info->valid[l] += (st->pwc[l].tag[i] & TLB_VALID) != 0;
  }
}

/* ---- settings and geometry ------------------------------------------------- */

static gboolean x86_check(const Settings *s, GError **error)
{
  int levels = (int)settings_int(s, SET_X86_PAGING_LEVELS);
  if (levels == 4 && settings_int(s, SET_PWC_PML5_ENTRIES) && settings_is_set(s, SET_PWC_PML5_ENTRIES)) {
    g_autofree char *pml5 = settings_blame(s, SET_PWC_PML5_ENTRIES);
    g_autofree char *paging = settings_blame(s, SET_X86_PAGING_LEVELS);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s needs 5-level paging, but %s: set x86.paging_levels=5 or pwc.pml5_entries=0", pml5, paging);
    return FALSE;
  }
  return TRUE;
}

static void x86_geometry(const Settings *s, PtGeometry *g)
{
  pgtable_geometry_x86_64(g, (unsigned)settings_int(s, SET_X86_PAGING_LEVELS));
}

static uint64_t x86_user_va_limit(const Settings *s)
{
  return x86_64_user_limit((unsigned)settings_int(s, SET_X86_PAGING_LEVELS));
}

static unsigned x86_size_level(unsigned size_code)
{
  return size_code + 1;
}

/* ---- per-CPU state ----------------------------------------------------------- */

static void x86_cpu_free(void *state)
{
  X86State *st = state;
  if (!st)
    return;
  tlb_free(st->stlb);
  tlb_free(st->stlb_1g);
  tlb_free(st->l2i);
  for (unsigned l = 2; l <= PWC_MAX_LEVEL; l++)
    pwc_clear(&st->pwc[l]);
  x86_host_free(st->host);
  g_free(st->shadow);
  g_free(st);
}

static void *x86_cpu_new(const Settings *s, Cpu *cpu, GError **error)
{
  X86State *st = g_new0(X86State, 1);
  const TlbReplPolicy *repl = tlb_repl_from_settings(s, error);
  if (!repl)
    goto fail;
  st->levels = (unsigned)settings_int(s, SET_X86_PAGING_LEVELS);
  st->user_limit = x86_64_user_limit(st->levels);
  st->stlb_hit_cycles = (uint32_t)settings_int(s, SET_TLB_STLB_HIT_CYCLES);
  st->walk_overhead_cycles = (uint32_t)settings_int(s, SET_WALK_OVERHEAD_CYCLES);
  st->coalesce = settings_bool(s, SET_TLB_COALESCE);

  unsigned n = (unsigned)settings_int(s, SET_TLB_STLB_ENTRIES);
  if (n) {
    st->stlb = tlb_new_from_settings(s, SET_TLB_STLB_ENTRIES, SET_TLB_STLB_WAYS, repl, error);
    if (!st->stlb)
      goto fail;
  }
  n = (unsigned)settings_int(s, SET_TLB_STLB_1G_ENTRIES);
  if (n) {
    st->stlb_1g = tlb_new_from_settings(s, SET_TLB_STLB_1G_ENTRIES, SET_TLB_STLB_1G_WAYS, repl, error);
    if (!st->stlb_1g)
      goto fail;
  }
  n = (unsigned)settings_int(s, SET_TLB_L2I_ENTRIES);
  if (n) {
    st->l2i = tlb_new_from_settings(s, SET_TLB_L2I_ENTRIES, SET_TLB_L2I_WAYS, repl, error);
    if (!st->l2i)
      goto fail;
  }
  /* Which array and size a page of each size goes to in the second level. */
  int held = (int)settings_int(s, SET_TLB_STLB_SIZES); /* 0: 4k, 1: 4k+2m, 2: 4k+2m+1g */
  st->stlb_home[X86_4K] = st->stlb ? X86_4K : 0xff;
  st->stlb_home[X86_2M] = st->stlb ? (held >= 1 ? X86_2M : 0xff) : 0xff;
  st->stlb_home[X86_1G] = st->stlb_1g ? X86_1G : !st->stlb ? 0xff : held >= 2 ? X86_1G : held == 1 ? X86_2M : 0xff;

  for (unsigned side = 0; side < 2; side++) {
    Tlb *l2 = side && st->l2i ? st->l2i : st->stlb;
    for (unsigned sz = 0; l2 && sz < X86_N_SIZES; sz++) {
      Tlb *t = sz == X86_1G && st->stlb_1g && l2 == st->stlb ? st->stlb_1g : l2;
      unsigned home = l2 == st->l2i ? (sz == X86_1G ? X86_2M : sz) : st->stlb_home[sz];
      if (home != sz)
        continue; /* fragments are found by the probe of their home size */
      st->probe[side][st->n_probe[side]].t = t;
      st->probe[side][st->n_probe[side]].size = sz;
      st->n_probe[side]++;
      st->n_probe_live[side] += sz == X86_4K;
    }
  }

  static const SettingId pwc_set[PWC_MAX_LEVEL + 1] = {
    0, 0, SET_PWC_PDE_ENTRIES, SET_PWC_PDPT_ENTRIES, SET_PWC_PML4_ENTRIES, SET_PWC_PML5_ENTRIES
  };
  for (unsigned l = 2; l <= PWC_MAX_LEVEL; l++)
    pwc_init(&st->pwc[l], l <= st->levels ? (unsigned)settings_int(s, pwc_set[l]) : 0);
  uint64_t covered = x86_guest_bytes(s);
  if (settings_bool(s, SET_VIRT_SHADOW)) {
    st->shadow = x86_shadow_new(s);
    covered = st->shadow->end;
  }
  if (settings_bool(s, SET_VIRT_NESTED)) {
    st->host = x86_host_new(s, covered, repl, error);
    if (!st->host)
      goto fail;
  }
  return st;
fail:
  x86_cpu_free(st);
  return NULL;
}

/* ---- the walk ------------------------------------------------------------------ */

static const char *level_name(unsigned l)
{
  static const char *names[] = { "", "PTE", "PDE", "PDPTE", "PML4E", "PML5E" };
  return names[l];
}

static void explain_entry(GString *ex, unsigned l, unsigned idx, uint64_t pa, uint64_t e,
                          MemLevel where, uint32_t cyc)
{
  g_string_append_printf(ex, "  %-6s index %3u  read 0x%012" G_GINT64_MODIFIER "x  %-4s %3u cycles  entry 0x%016" G_GINT64_MODIFIER "x [",
                         level_name(l), idx, pa, memsys_level_name(where), cyc, e);
  if (!(e & PTE_P) || (e & PTE_SW_NUMA)) {
    g_string_append(ex, (e & PTE_SW_NUMA) ? "PROT_NONE for NUMA hinting: not present]\n" : "not present]\n");
    return;
  }
  g_string_append_printf(ex, "P%s%s%s%s%s%s%s] -> pfn %#" G_GINT64_MODIFIER "x\n",
                         e & PTE_RW ? " RW" : " RO", e & PTE_US ? " U" : " S", e & PTE_A ? " A" : "",
                         e & PTE_D ? " D" : "", e & PTE_PS ? " PS" : "", e & PTE_NX ? " NX" : "",
                         e & PTE_SW_ZERO ? " zero-page" : "", pte_pfn(e));
}

/* Insert a translation of page size `size` into array `t` whose entries
 * are of size `home` (<= size), as a fragment when they differ.  Inline in
 * the walk's one call: the refill usually takes the way that the probe's
 * miss found (tlb_insert). */
static inline G_ALWAYS_INLINE void insert_frag(Tlb *t, uint64_t akey, unsigned home, unsigned size, uint64_t va, uint64_t pfn, uint8_t flags)
{
  uint64_t fpfn = pfn;
  if (home != size) { /* the fragment of va */
    uint64_t sub = (va & ((1ULL << x86_shift[size]) - 1)) >> x86_shift[home];
    fpfn += sub << (x86_shift[home] - 12);
  }
  tlb_insert(t, x86_key(akey, home, va), fpfn, flags, (uint8_t)home);
}

/* Whether a second-level entry allows the access (else the probes go on,
 * and a walk follows). */
static inline G_ALWAYS_INLINE gboolean stlb_allows(const TlbPayload *p, gboolean write, gboolean fetch)
{
  return (!write || (p->flags & (TLBF_W | TLBF_D)) == (TLBF_W | TLBF_D)) && (!fetch || (p->flags & TLBF_X));
}

/* The key of the coalesced entry that would hold va's 4K page. */
static inline uint64_t x86_key_coalesced(uint64_t akey, uint64_t va)
{
  return akey | ((uint64_t)X86_COALESCED << TLB_SIZE_SHIFT) | ((va >> X86_COALESCED_SHIFT) & TLB_VPN_MASK);
}

/* Whether the leaf table entries around e[idx] may be held as one
 * coalesced entry (tlb.coalesce): the aligned group of four holding idx
 * maps four consecutive frames, the first aligned to four, every entry
 * present and accessed (and not marked for NUMA hinting) with the same
 * permission and dirty bits as the others.  A cached translation implies
 * an accessed entry on x86, and a coalesced hit sets no bit, so the group
 * must be accessed already (the fault handler maps pages accessed; the
 * walker sets the bit on the entry it walked to).  Which bits AMD
 * compares is not published (UNCONFIRMED); these are the ones a TLB entry
 * carries. */
static inline gboolean x86_coalescible(const uint64_t *e, unsigned idx)
{
  const uint64_t *g = e + (idx & ~(X86_COALESCED_PAGES - 1));
  const uint64_t same = PTE_P | PTE_A | PTE_RW | PTE_US | PTE_NX | PTE_D | PTE_SW_NUMA | PTE_SW_ZERO;
  uint64_t first = pte_pfn(g[0]);
  if ((g[0] & (PTE_P | PTE_A | PTE_SW_NUMA | PTE_SW_ZERO)) != (PTE_P | PTE_A) || (first & (X86_COALESCED_PAGES - 1)))
    return FALSE;
  for (unsigned i = 1; i < X86_COALESCED_PAGES; i++)
    if (((g[i] ^ g[0]) & same) || pte_pfn(g[i]) != first + i)
      return FALSE;
  return TRUE;
}

/* A second-level hit in array t, entry of size sz. */
static inline G_ALWAYS_INLINE XlatStatus stlb_hit(Cpu *cpu, Xlat *out, const TlbPayload *p, uint32_t cycles,
                                                  GString *ex, const Tlb *t, unsigned sz)
{
  if (ex)
    g_string_append_printf(ex, "  %s hit (%s entry): %u cycles\n", t->name, x86_64_ops.size_name[sz], cycles);
  return cpu_stlb_hit(cpu, out, p, cycles);
}

/* The second level and the walk; `ex` (explain) collects the text of each
 * step.  Always inline: x86_translate has a copy with ex NULL, free of the
 * text's tests and of the registers they keep live.  `virt` (a constant,
 * st->host or st->shadow set) adds the host dimension of the 2D walk and
 * the shadow table: the native copies hold none of it. */
static inline G_ALWAYS_INLINE XlatStatus x86_translate_body(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, Xlat *out,
                                                            GString *ex, gboolean virt)
{
  X86State *st = cpu->arch_state;
  const uint64_t akey = tlb_key(cpu->cur_asid, 0, 0); /* x86_key */
  gboolean write = kind == ACC_STORE, fetch = kind == ACC_IFETCH;
  out->walks = 0;
  out->walk_cycles = 0;

  if (va >= st->user_limit) {
    if (ex)
      g_string_append_printf(ex, "  %#" G_GINT64_MODIFIER "x is not a canonical user address (limit %#" G_GINT64_MODIFIER "x)\n",
                             va, st->user_limit);
    return XLAT_NONCANONICAL;
  }

  /* Second level: shared STLB (or the L2 ITLB for fetches on AMD).  The
   * first probe of a list, when there is one, is the 4K size's (x86_cpu_new):
   * its key, akey | va >> 12, is the one the walk's refill of a 4K page
   * takes too, built once. */
  Tlb *l2 = fetch && st->l2i ? st->l2i : st->stlb;
  uint32_t cycles = st->stlb_hit_cycles;
  const uint64_t key4k = x86_key(akey, X86_4K, va);
  const unsigned n_probe = st->n_probe_live[fetch];
  /* The 4K probe peeled off the loop: its array, size and key are known,
   * and with only 4K pages so far (n_probe 1) there is no loop. */
  if (n_probe) {
    Tlb *t = st->probe[fetch][0].t;
    TlbPayload *p;
    if ((t->size_mask & 1u) && (p = tlb_probe_held(t, key4k)) != NULL && /* a miss readies the refill */
        stlb_allows(p, write, fetch))
      return stlb_hit(cpu, out, p, cycles, ex, t, X86_4K);
    /* A coalesced entry of the data side, which only an array that holds
     * some has, after the 4K key missed or did not allow the access (its
     * probe readies the refill of a group that coalesces).  Fetches neither
     * fill nor probe them (AMD's L2 DTLB is the data side's). */
    if (!fetch && (t->size_mask & (1u << X86_COALESCED)) && (p = tlb_probe_held(t, x86_key_coalesced(akey, va))) != NULL &&
        stlb_allows(p, write, fetch)) {
      if (ex)
        g_string_append_printf(ex, "  %s hit (16K coalesced entry of four 4K pages): %u cycles\n", t->name, cycles);
      XlatStatus s = cpu_stlb_hit(cpu, out, p, cycles);
      cpu->ctr.c[CTR_STLB_COALESCED_HITS]++; /* counted in stlb_hits too */
      out->pfn += (va >> 12) & (X86_COALESCED_PAGES - 1);
      return s;
    }
    for (unsigned i = 1; i < n_probe; i++) {
      t = st->probe[fetch][i].t;
      unsigned sz = st->probe[fetch][i].size;
      if (!(t->size_mask & (1u << sz)))
        continue; /* no entry of that size (tlb_probe's test, made before the key) */
      p = tlb_probe_held(t, x86_key(akey, sz, va));
      if (p && stlb_allows(p, write, fetch))
        return stlb_hit(cpu, out, p, cycles, ex, t, sz);
    }
  }
  cpu->ctr.c[CTR_STLB_MISSES]++;
  if (ex)
    g_string_append_printf(ex, "  %s miss: %u cycles\n", l2 ? l2->name : "second-level TLB (none)", cycles);

  /* Page walk, starting below the lowest paging-structure cache hit. */
  out->walks = 1;
  cpu->ctr.c[CTR_PAGE_WALKS]++;
  uint32_t walk = st->walk_overhead_cycles;
  PtNode *node = mm->pt.root;
  unsigned level = st->levels;
  Pwc *p = &st->pwc[2];
  for (unsigned l = 2; l <= st->levels; l++, p++) {
    PtNode *n = pwc_lookup(p, pwc_tag(l, akey, va));
    if (n) {
      node = n;
      level = l - 1;
      cpu->ctr.c[CTR_PWC_HITS]++;
      break;
    }
  }
  if (ex) {
    if (level < st->levels)
      g_string_append_printf(ex, "  paging-structure cache: %s cache hit, walk starts at the %s\n",
                             level_name(level + 1), level_name(level));
    else
      g_string_append_printf(ex, "  paging-structure caches: miss, walk starts at CR3 (table pfn %#" G_GINT64_MODIFIER "x)\n",
                             mm->pt.root->pfn);
  }

  XlatStatus status = XLAT_OK;
  uint64_t allow_w = PTE_RW, allow_u = PTE_US;
  /* Nested: a guest table's address is guest-physical and needs a host
   * walk, except the one a paging-structure-cache hit gave, whose entry
   * holds the table's host-physical address (SDM vol. 3C 29.4.1).  Shadow
   * paging: the entry read is the guest entry's image in the shadow table
   * (X86Shadow), whose address the host walk translates when nested too. */
  X86Host *host = virt ? st->host : NULL;
  X86Shadow *shadow = virt ? st->shadow : NULL;
  static const char *guest_what[] = { "", "guest PTE", "guest PDE", "guest PDPTE", "guest PML4E", "guest PML5E" };
  static const char *shadow_what[] = { "", "shadow PTE", "shadow PDE", "shadow PDPTE", "shadow PML4E", "shadow PML5E" };
  const char *const *what = shadow ? shadow_what : guest_what;
  if (shadow && ex)
    g_string_append_printf(ex, "  shadow paging: the walk reads the hypervisor's shadow table, each guest table's image at "
                               "+%#" G_GINT64_MODIFIER "x\n", shadow->image_base);
  gboolean table_hpa = level < st->levels;
  for (;; level--) {
    unsigned idx = x86_index(level, va);
    uint64_t pa = (node->pfn << 12) | ((uint64_t)idx << 3);
    if (virt) {
      if (shadow)
        pa += shadow->image_base;
      unsigned hs;
      if (host && !table_hpa)
        walk += x86_host_walk(cpu, host, pa, what[level], ex, &hs);
      table_hpa = FALSE;
    }
    MemLevel where;
    uint32_t c = walk_read(cpu, pa, virt ? CTR_WALK_GUEST_REFS : CTR_WALK_REFS, &where);
    walk += c;
    uint64_t e = node->e[idx];
    if (ex)
      explain_entry(ex, level, idx, pa, e, where, c);
    if (!(e & PTE_P) || (e & PTE_SW_NUMA)) { /* PROT_NONE for NUMA hinting, never cached */
      status = XLAT_NOT_PRESENT;
      break;
    }
    allow_w &= e;
    allow_u &= e;
    pgtable_entry_set_flags(node, idx, PTE_A);
    if (level == 1 || (e & PTE_PS)) {
      if (!allow_u || (write && !allow_w) || (fetch && (e & PTE_NX))) {
        status = XLAT_PROTECTION;
        break;
      }
      if (write)
        pgtable_entry_set_flags(node, idx, PTE_D);
      unsigned size = level - 1;
      uint64_t leaf_pfn = pte_pfn(e);
      gboolean splinter = FALSE;
      if (virt) {
        /* The guest page's guest-physical address, which the hardware
         * reaches through the shadow table's direct pages when the
         * hypervisor backs the page with smaller ones, and translates
         * through the host's table when nested.  The translation is cached
         * at the smallest page size on its way (SDM vol. 3C 29.4.1: the
         * smaller of guest and host; Bhargava et al. 2008, 3.3). */
        uint64_t gmask = (1ULL << x86_shift[size]) - 1;
        uint64_t gpa = ((leaf_pfn << 12) & ~gmask) | (va & gmask);
        unsigned cached = size;
        const char *by = "";
        if (shadow && shadow->page_size < size) {
          for (unsigned dl = size; dl > shadow->page_size; dl--) {
            uint64_t dpa = shadow->direct_base[dl] + ((gpa >> x86_level_shift(dl + 1)) << 12) +
                           ((uint64_t)x86_index(dl, va) << 3);
            unsigned hs;
            if (host)
              walk += x86_host_walk(cpu, host, dpa, what[dl], ex, &hs);
            MemLevel dwhere;
            uint32_t dc = walk_read(cpu, dpa, CTR_WALK_GUEST_REFS, &dwhere);
            walk += dc;
            if (ex)
              g_string_append_printf(ex, "  %-6s index %3u  read 0x%012" G_GINT64_MODIFIER "x  %-4s %3u cycles  "
                                         "(a direct shadow page: the hypervisor backs this %s guest page with %s pages)\n",
                                     level_name(dl), x86_index(dl, va), dpa, memsys_level_name(dwhere), dc,
                                     x86_64_ops.size_name[size], x86_64_ops.size_name[shadow->page_size]);
          }
          cached = shadow->page_size;
          by = "shadowed by";
        }
        if (host) {
          unsigned hs;
          walk += x86_host_walk(cpu, host, gpa, "data", ex, &hs);
          if (hs < cached)
            cached = hs, by = "on a host page of";
        }
        if (cached < size) {
          if (ex)
            g_string_append_printf(ex, "  %s guest page %s %s: cached as a %s translation\n", x86_64_ops.size_name[size],
                                   by, x86_64_ops.size_name[cached], x86_64_ops.size_name[cached]);
          leaf_pfn = gpa >> 12;
          size = cached;
          splinter = TRUE;
          if (size == X86_4K) /* no large entry: the core counts no touch on its refill (cpu-translate.h) */
            kernel_touch(cpu->m->k, &cpu->kc, mm, va);
        }
      }
      out->size = (uint8_t)size;
      out->flags = (uint8_t)(TLBF_U | ((allow_w) ? TLBF_W : 0) | ((node->e[idx] & PTE_D) ? TLBF_D : 0) |
                             ((e & PTE_NX) ? 0 : TLBF_X));
      /* Fill the second level: the array and the size it holds the page as. */
      if (size == X86_4K) {
        /* A 4K page is held whole, by the array whose probe missed: the L2
         * ITLB for a fetch when there is one (AMD), else the STLB (whose
         * home of 4K pages is 4K, x86_cpu_new), when there is one.  The
         * key is the probe's (X86_4K is code 0). */
        out->pfn = leaf_pfn;
        Tlb *fill = fetch && st->l2i ? st->l2i : st->stlb;
        if (!fetch && st->coalesce && fill && !splinter && x86_coalescible(node->e, idx)) {
          if (ex)
            g_string_append_printf(ex, "  %s refill: a 16K coalesced entry of four 4K pages\n", fill->name);
          cpu->ctr.c[CTR_STLB_COALESCED_FILLS]++;
          tlb_insert(fill, x86_key_coalesced(akey, va), out->pfn & ~(uint64_t)(X86_COALESCED_PAGES - 1), out->flags,
                     X86_4K);
        } else if (fill) {
          tlb_insert_base(fill, key4k, out->pfn, out->flags);
        }
        break;
      }
      out->pfn = leaf_pfn & ~((1ULL << (x86_shift[size] - 12)) - 1);
      Tlb *fill = NULL;
      unsigned home = st->stlb_home[size]; /* 2M, 1G or none: a larger page is never held as 4K */
      if (fetch && st->l2i)
        fill = st->l2i, home = size == X86_1G ? X86_2M : size;
      else if (size == X86_1G && st->stlb_1g)
        fill = st->stlb_1g, home = X86_1G;
      else if (home != 0xff)
        fill = st->stlb;
      if (fill) {
        memcpy(st->n_probe_live, st->n_probe, sizeof st->n_probe); /* the probes try every size from now on */
        insert_frag(fill, akey, home, size, va, out->pfn, out->flags);
      }
      break;
    }
    /* A non-leaf entry: cache it and descend. */
    pwc_fill_absent(&st->pwc[level], pwc_tag(level, akey, va), node->child[idx]);
    node = node->child[idx];
  }
  out->walk_cycles = walk;
  out->cycles = cycles + walk;
  cpu->ctr.c[CTR_WALK_CYCLES] += walk;
  if (ex)
    g_string_append_printf(ex, "  walk: %u cycles (%u overhead)\n", walk, st->walk_overhead_cycles);
  return status;
}

/* ArchOps.translate: cpu_explain's path (with ex), and the tests'; the
 * core's hot path takes x86_l1_miss. */
static XlatStatus x86_translate(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, Xlat *out, GString *ex)
{
  const X86State *st = cpu->arch_state;
  if (st->host || st->shadow)
    return x86_translate_body(cpu, mm, va, kind, out, ex, TRUE);
  return x86_translate_body(cpu, mm, va, kind, out, ex, FALSE);
}

static inline G_ALWAYS_INLINE XlatStatus x86_translate_hot(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, Xlat *out,
                                                           GString *ex)
{
  (void)ex;
  return x86_translate_body(cpu, mm, va, kind, out, NULL, FALSE);
}

static inline G_ALWAYS_INLINE XlatStatus x86_translate_nested(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, Xlat *out,
                                                              GString *ex)
{
  (void)ex;
  return x86_translate_body(cpu, mm, va, kind, out, NULL, TRUE);
}

/* x86_l1_miss of a guest (virt.nested, virt.shadow): out of line, so that the native
 * copies stay as they were. */
static __attribute__((noinline)) gboolean x86_l1_miss_nested(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind,
                                                               uint64_t *t, uint64_t *pfn, uint8_t *flags)
{
  return cpu_translate_miss(cpu, th, va, kind, t, pfn, flags, x86_translate_nested);
}

/* ArchOps.l1_miss: the core's path after the shortcut missed with the
 * translation above inlined (sim/cpu-translate.h). */
static gboolean x86_l1_miss(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t, uint64_t *pfn,
                            uint8_t *flags)
{
  /* A copy each for plain loads and stores, nearly every access of most
   * workloads, where the kind is a constant: the tests of the other kinds'
   * rules, arrays and counters fold away, and the registers that held the
   * kind and its flags through the walk are free.  Fetches and dependent
   * loads take the general copy (test_arch_l1_miss_matches runs all four
   * against the generic path). */
  const X86State *st = cpu->arch_state;
  if (G_UNLIKELY(st->host != NULL || st->shadow != NULL))
    return x86_l1_miss_nested(cpu, th, va, kind, t, pfn, flags);
  if (G_LIKELY(kind == ACC_LOAD))
    return cpu_translate_miss(cpu, th, va, ACC_LOAD, t, pfn, flags, x86_translate_hot);
  if (kind == ACC_STORE)
    return cpu_translate_miss(cpu, th, va, ACC_STORE, t, pfn, flags, x86_translate_hot);
  return cpu_translate_miss(cpu, th, va, kind, t, pfn, flags, x86_translate_hot);
}

static void x86_flush_page(Cpu *cpu, unsigned asid, uint64_t va)
{
  X86State *st = cpu->arch_state;
  if (st->stlb && st->coalesce)
    tlb_invalidate(st->stlb, tlb_key(asid, X86_COALESCED, va >> X86_COALESCED_SHIFT));
  for (unsigned sz = 0; sz < X86_N_SIZES; sz++) {
    if (st->stlb)
      tlb_invalidate(st->stlb, tlb_key(asid, sz, va >> x86_shift[sz]));
    if (st->stlb_1g)
      tlb_invalidate(st->stlb_1g, tlb_key(asid, sz, va >> x86_shift[sz]));
    if (st->l2i)
      tlb_invalidate(st->l2i, tlb_key(asid, sz, va >> x86_shift[sz]));
  }
  /* INVLPG also drops paging-structure-cache entries of that context
   * (SDM 4.10.4.1); being coarse here is allowed and simple. */
  for (unsigned l = 2; l <= PWC_MAX_LEVEL; l++)
    pwc_flush(&st->pwc[l], FALSE, asid);
}

static void x86_flush_asid(Cpu *cpu, unsigned asid)
{
  X86State *st = cpu->arch_state;
  if (st->stlb)
    tlb_flush_asid(st->stlb, asid);
  if (st->stlb_1g)
    tlb_flush_asid(st->stlb_1g, asid);
  if (st->l2i)
    tlb_flush_asid(st->l2i, asid);
  for (unsigned l = 2; l <= PWC_MAX_LEVEL; l++)
    pwc_flush(&st->pwc[l], FALSE, asid);
}

static void x86_flush_all(Cpu *cpu)
{
  X86State *st = cpu->arch_state;
  if (st->stlb)
    tlb_flush_all(st->stlb);
  if (st->stlb_1g)
    tlb_flush_all(st->stlb_1g);
  if (st->l2i)
    tlb_flush_all(st->l2i);
  for (unsigned l = 2; l <= PWC_MAX_LEVEL; l++)
    pwc_flush(&st->pwc[l], TRUE, 0);
}

static void x86_tables_freed(Cpu *cpu, unsigned asid)
{
  X86State *st = cpu->arch_state;
  for (unsigned l = 2; l <= PWC_MAX_LEVEL; l++)
    pwc_flush(&st->pwc[l], FALSE, asid);
}

const ArchOps x86_64_ops = {
  .name = "x86_64",
  .help = "x86-64 4- or 5-level radix page tables with paging-structure caches",
  .source = "Intel SDM vol. 3A chapter 4 (4- and 5-level paging, 4.10 paging-structure caches)",
  .n_sizes = X86_N_SIZES,
  .page_shift = { 12, 21, 30 },
  .size_name = { "4K", "2M", "1G" },
  .l1_itlb_name = "ITLB",
  .l1_dtlb_name = "DTLB",
  .level_name = { "", "PT", "PD", "PDPT", "PML4", "PML5" }, /* SDM vol. 3A 4.5 */
  .asid_name = "PCID",
  .check = x86_check,
  .pgtable_geometry = x86_geometry,
  .user_va_limit = x86_user_va_limit,
  .size_level = x86_size_level,
  .cpu_new = x86_cpu_new,
  .cpu_free = x86_cpu_free,
  .translate = x86_translate,
  .l1_miss = x86_l1_miss,
  .flush_page = x86_flush_page,
  .flush_asid = x86_flush_asid,
  .flush_all = x86_flush_all,
  .tables_freed = x86_tables_freed,
};
