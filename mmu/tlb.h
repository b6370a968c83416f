/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tlb.h - one set-associative TLB array, architecture-neutral.
 *
 * An entry maps (address-space id, virtual page number, page size) to a
 * physical frame with its permission and dirty state.  The hierarchy (which
 * arrays exist, which page sizes each holds, what is probed after a miss) is
 * built by sim/cpu.c and the architecture from the machine's settings.
 *
 * Keys: the VPN at the entry's own page size in bits 0..44 (57-bit VAs with
 * 4K pages leave 45 bits), the page-size code in bits 45..47 and the ASID
 * (PCID) in bits 48..62; bit 63 marks a valid entry.  The set index is the
 * VPN modulo the number of sets, as hardware indexes by low VPN bits.
 *
 * Replacement is a policy chosen by name (tlb.replacement), a row of the
 * registry in tlb.c (struct TlbReplPolicy below).  The built-ins lru, fifo
 * and random are the stamp machinery of this header and tlb.c, inline and
 * without a call per access; any other policy is a table of hooks in a file
 * of its own (mmu/tlb_plru.c, tree pseudo-LRU, is the example), called from
 * the out-of-line probe and refill.  The lookup is inline: it is on the
 * path of every access.
 */
#ifndef MMUSIM_TLB_H
#define MMUSIM_TLB_H

#include <glib.h>
#include <stdint.h>
#include "registry.h"
#include "settings.h"

#define TLB_VALID (1ULL << 63)
#define TLB_VPN_BITS 45
#define TLB_VPN_MASK ((1ULL << TLB_VPN_BITS) - 1)
#define TLB_SIZE_SHIFT 45
#define TLB_ASID_SHIFT 48
#define TLB_ASID_MASK 0x7fffULL

/* Entry flags. */
enum { TLBF_W = 1, TLBF_D = 2, TLBF_X = 4, TLBF_U = 8 };

typedef struct Tlb Tlb;

/* Which stamp rule of tlb.c serves a policy inline, or none (hooks). */
typedef enum {
  TLB_BUILTIN_NONE,   /* a policy of hooks */
  TLB_BUILTIN_LRU,    /* a hit restamps; a full set evicts its lowest stamp */
  TLB_BUILTIN_FIFO,   /* only a fill stamps; a full set evicts its lowest stamp */
  TLB_BUILTIN_RANDOM, /* only a fill stamps; a full set evicts a way drawn by xorshift64 */
} TlbBuiltin;

/* A TLB replacement policy: one row of the registry (tlb_repl_lookup).
 *
 * Every policy shares the rules around it (tlb.c): a refill of a key
 * already present rewrites its own way, else takes the set's first invalid
 * way (lowest index), and only a full set asks the policy for a victim.
 * The stamps go on underneath a policy of hooks as they do for fifo (a
 * fill stamps, a hit does not): they mark the invalid ways and keep the
 * host index; the hooks hold the policy's own state.
 *
 * Hooks get the set index (0 .. sets - 1) and the way in it (0 .. ways - 1).
 * They run on the slow path (tlb_probe_any, tlb_insert_search): an array
 * with a policy of hooks never takes the inline probe's pass nor its hint.
 * A policy's state must not change except through its hooks, so that a
 * run stays deterministic. */
typedef struct TlbReplPolicy {
  REGISTRY_ROW;       /* name: the choice of tlb.replacement; help: what a full set evicts */
  TlbBuiltin builtin; /* lru, fifo, random: the hooks below are NULL */
  /* The array's state, made by tlb_new (t's geometry is set, t->repl_state
   * still NULL) and freed by tlb_free; NULL hooks: no state. */
  void *(*state_new)(const Tlb *t);
  void (*state_free)(void *state);
  /* A probe found its key in `way` (tlb_probe, tlb_lookup; not tlb_peek). */
  void (*hit)(Tlb *t, unsigned set, unsigned way);
  /* An entry was written into `way`: the refill of an invalid way, of the
   * victim, or the refresh of the key's own way. */
  void (*fill)(Tlb *t, unsigned set, unsigned way);
  /* Every way of `set` is valid and a new key needs one: the way to evict,
   * below t->ways. */
  unsigned (*victim)(Tlb *t, unsigned set);
  /* `way` became invalid (tlb_invalidate, tlb_flush_asid); NULL: nothing to
   * do, since the way is refilled before the policy is asked again. */
  void (*invalidate)(Tlb *t, unsigned set, unsigned way);
  /* Every way became invalid (tlb_flush_all); NULL: nothing to do. */
  void (*flush)(Tlb *t);
} TlbReplPolicy;

/* The rows of the registry (tlb.c). */
extern const TlbReplPolicy tlb_repl_lru, tlb_repl_fifo, tlb_repl_random;
extern const TlbReplPolicy tlb_repl_plru; /* mmu/tlb_plru.c */

typedef struct {
  uint64_t pfn;   /* first 4K frame of the page */
  uint8_t flags;  /* TLBF_* */
  uint8_t size;   /* page-size code of the architecture */
} TlbPayload;

struct Tlb {
  char *name;
  unsigned sets, ways;
  uint64_t set_mask;  /* sets - 1 */
  gboolean sets_pow2; /* index by set_mask, else by modulo */
  unsigned size_mask; /* bit per page-size code inserted since the last full
                       * flush: a probe for a size never inserted is a miss
                       * without a search (a host shortcut, not a model rule) */
  const TlbReplPolicy *repl;
  /* Taken from repl by tlb_new, for the inline paths: */
  gboolean stamp_on_hit;  /* lru: a hit restamps its way */
  gboolean drawn_victim;  /* a full set's victim is not its lowest stamp
                           * (random, hooks): no hint into a full set */
  gboolean hooked;        /* repl's hooks decide (builtin NONE) */
  unsigned probe_ways;    /* ways, 0 when hooked: tlb_probe_held's switch,
                           * which sends 0 out of line */
  void *repl_state;       /* a policy of hooks' own (state_new) */
  uint64_t *tags;     /* sets * ways */
  /* Replacement stamps, tick << way_bits | w: the tick of the last use (LRU)
   * or of the insertion (FIFO, random, a policy of hooks), 0 while invalid, above the way's own index
   * in its set (fixed).  Ticks are unique, so the lowest stamp of a set is
   * its first invalid way, else its oldest, and names that way in its low
   * bits: a search keeps one running minimum and no index beside it. */
  uint64_t *stamp;
  TlbPayload *pay;
  unsigned way_bits;  /* bits of a way index: ways <= 1 << way_bits */
  uint64_t way_mask;  /* (1 << way_bits) - 1 */
  uint64_t tick;      /* the last tick given out, shifted by way_bits */
  uint64_t tick_step; /* one tick: 1 << way_bits */
  uint64_t tick_last; /* one step below the largest shifted tick: a tick
                       * that reaches it is renumbered (tlb_renumber) */
  uint64_t rng;       /* random replacement state */
  /* Left by tlb_probe's miss for the tlb_insert of the same key that
   * usually follows: the way pick_way would choose and the lowest stamp of
   * the set (whose low bits name that way).  Good while tick is unchanged
   * (every insert and LRU hit moves it) and hint_key is not cleared (every
   * invalidation and renumbering clears it). */
  uint64_t hint_key, hint_tick, hint_lowest;
  unsigned hint_slot;
  unsigned hint_bucket; /* an indexed array's: the key's bucket (tlb.c) */
  /* Host index of an array of more than TLB_INDEX_MIN_WAYS ways (the fully
   * associative L1s of the Zen and POWER presets, Zen 4's 24-way STLB),
   * head NULL for the others: a probe finds its key through a hash chain
   * instead of a pass over the set, and a refill takes the set's oldest way
   * from a list kept in the order of the stamps.  The stamps stay as they
   * are and remain the model's; the index only answers what a pass would. */
  struct TlbIndex {
    uint32_t *head;   /* by bucket (tlb_ix_bucket): slot + 1 of the chain's first entry, 0: none */
    uint32_t *next;   /* by slot: slot + 1 of the next entry of its chain, 0: none */
    unsigned shift;   /* 64 - log2(buckets) */
    uint16_t *older, *newer;   /* by slot: the way before and after it in its set's stamp order */
    uint16_t *oldest, *newest; /* by set: the ends of that order (while n_valid > 0) */
    uint32_t *n_valid;         /* by set: valid ways (all valid: no pass for the victim) */
  } ix;
};

/* Arrays with more ways than this get the host index (struct TlbIndex):
 * the unrolled passes of up to 16 ways cost about what the index's upkeep
 * does.  Host tuning, not model. */
#define TLB_INDEX_MIN_WAYS 16
/* The index's way numbers are 16 bits. */
#define TLB_INDEX_MAX_WAYS 65536

static inline uint64_t tlb_key(unsigned asid, unsigned size_code, uint64_t vpn)
{
  return TLB_VALID | ((uint64_t)(asid & TLB_ASID_MASK) << TLB_ASID_SHIFT) |
         ((uint64_t)size_code << TLB_SIZE_SHIFT) | (vpn & TLB_VPN_MASK);
}

static inline unsigned tlb_set_of(const Tlb *t, uint64_t key)
{
  /* set_mask is below the VPN's bits (sets <= entries < 2^TLB_VPN_BITS):
   * a power-of-two index needs no mask of the VPN first. */
  if (t->sets_pow2)
    return (unsigned)(key & t->set_mask);
  return (unsigned)((key & TLB_VPN_MASK) % t->sets);
}

static inline unsigned tlb_key_size(uint64_t key)
{
  return (unsigned)((key >> TLB_SIZE_SHIFT) & 7);
}

/* Give the ticks 1, 2, ... to the valid entries in the order of their
 * stamps (tlb.c): only that order is the model's. */
void tlb_renumber(Tlb *t);

/* The stamp of a slot whose stamp was `old`, used or filled now: the next
 * tick, above the same way index. */
static inline uint64_t tlb_stamp_next(Tlb *t, uint64_t old)
{
  if (G_UNLIKELY(t->tick >= t->tick_last))
    tlb_renumber(t);
  t->tick += t->tick_step;
  return t->tick | (old & t->way_mask);
}

/* Probe; on a hit update the replacement state and return the payload. */
TlbPayload *tlb_probe_any(Tlb *t, uint64_t key, unsigned base);

static inline TlbPayload *tlb_lookup(Tlb *t, uint64_t key)
{
  if (!(t->size_mask & (1u << tlb_key_size(key))))
    return NULL;
  unsigned base = tlb_set_of(t, key) * t->ways;
  if (t->ix.head || t->hooked) /* the indexed probe and the hooks' (tlb.c) */
    return tlb_probe_any(t, key, base);
  const uint64_t *tag = t->tags + base;
  for (unsigned w = 0; w < t->ways; w++) {
    if (tag[w] == key) {
      if (t->stamp_on_hit)
        t->stamp[base + w] = tlb_stamp_next(t, t->stamp[base + w]);
      return &t->pay[base + w];
    }
  }
  return NULL;
}

/* tlb_probe's pass over one set: the tag compare and, for a miss, the
 * lowest stamp (the refill's way).  Unrolled when `ways` is a constant: the
 * loop counter, its compare and branch were a third of the instructions of
 * a 12-way pass; the minimum is a compare and a conditional move, with no
 * branch to mispredict on the set's ages. */
static inline __attribute__((always_inline)) TlbPayload *tlb_probe_set(Tlb *t, uint64_t key, unsigned base,
                                                                       unsigned ways)
{
  const uint64_t *tag = t->tags + base;
  uint64_t *stamp = t->stamp + base;
  uint64_t lowest = UINT64_MAX;
#pragma GCC unroll 16
  for (unsigned w = 0; w < ways; w++) {
    if (tag[w] == key) {
      if (t->stamp_on_hit)
        stamp[w] = tlb_stamp_next(t, stamp[w]);
      return &t->pay[base + w];
    }
    lowest = stamp[w] < lowest ? stamp[w] : lowest;
  }
  t->hint_key = key;
  t->hint_tick = t->tick;
  t->hint_lowest = lowest;
  t->hint_slot = base + (unsigned)(lowest & t->way_mask);
  return NULL;
}

/* tlb_probe_set for any number of ways, out of line (tlb.c), through the
 * host index when the array has one; the probe of an array with a policy
 * of hooks, which leaves no hint. */
TlbPayload *tlb_probe_any(Tlb *t, uint64_t key, unsigned base);

/* tlb_lookup that, on a miss, also finds the way a refill of `key` would
 * take (the first invalid way, else the oldest) in the same pass, so that a
 * tlb_insert of that key right after skips its own pass over the set.  For
 * arrays that mostly miss (a second-level TLB under random accesses).  The
 * presets' usual associativities get unrolled copies (4: Skylake's L1 DTLB,
 * the 1G arrays, the POWER TLBs, 8: the L1 ITLB and AMD's L2 ITLB, 12:
 * Skylake's STLB, 16: Zen 3's); the others (7, 24, the fully associative
 * L1s) take the loop.  tlb_probe_held is the
 * probe for a caller that tested size_mask for the key's size already. */
static inline __attribute__((always_inline)) TlbPayload *tlb_probe_held(Tlb *t, uint64_t key)
{
  unsigned base = tlb_set_of(t, key) * t->ways;
  switch (t->probe_ways) {
  case 4:
    return tlb_probe_set(t, key, base, 4);
  case 8:
    return tlb_probe_set(t, key, base, 8);
  case 12:
    return tlb_probe_set(t, key, base, 12);
  case 16:
    return tlb_probe_set(t, key, base, 16);
  default:
    return tlb_probe_any(t, key, base);
  }
}

static inline __attribute__((always_inline)) TlbPayload *tlb_probe(Tlb *t, uint64_t key)
{
  if (!(t->size_mask & (1u << tlb_key_size(key))))
    return NULL;
  return tlb_probe_held(t, key);
}

/* Write an entry into slot `i` (set * ways + way) as the newest.  The
 * caller made sure that one more tick fits (tick < tick_last): no call to
 * tlb_renumber here, so that the inline refill saves no registers. */
static inline void tlb_fill_slot(Tlb *t, unsigned i, uint64_t key, unsigned code, uint64_t pfn, uint8_t flags,
                                 uint8_t size)
{
  t->tags[i] = key;
  t->tick += t->tick_step;
  t->stamp[i] = t->tick | (t->stamp[i] & t->way_mask);
  t->pay[i] = (TlbPayload){ .pfn = pfn, .flags = flags, .size = size };
  t->size_mask |= 1u << code;
}

/* tlb_insert's search of the set, when no probe's hint serves, and the
 * renumbering when the tick is about to run out (tlb.c). */
void tlb_insert_search(Tlb *t, uint64_t key, uint64_t pfn, uint8_t flags, uint8_t size);

/* A stamp of tick 0: its way is invalid (the low bits name the way). */
static inline gboolean tlb_stamp_invalid(const Tlb *t, uint64_t stamp)
{
  return stamp <= t->way_mask;
}

/* The probe's hint for `key` names the way a refill takes now: nothing
 * changed the array since (hint_tick == due: the tick, marked for an
 * indexed array), one more tick fits before tlb_renumber, and random
 * replacement need not draw (the set had an invalid way).  An array with a
 * policy of hooks has no hints (its probe leaves none). */
static inline gboolean tlb_hint_serves(const Tlb *t, uint64_t key, uint64_t due)
{
  return t->hint_key == key && t->hint_tick == due && t->tick < t->tick_last &&
         (!t->drawn_victim || tlb_stamp_invalid(t, t->hint_lowest));
}

/* Insert (or refresh) an entry; evicts per the policy when the set is full.
 * Inline for the usual refill, right after tlb_probe missed the same key:
 * the probe's hint holds (nothing changed the array since) and names the
 * way, unless random replacement must draw one in a full set.  An array
 * with a host index marks its hints (hint_tick odd, which its ticks,
 * multiples of 32 at more than 16 ways, never are) so that its refills go
 * to tlb_insert_search, which keeps the index: no test here for the others. */
static inline void tlb_insert(Tlb *t, uint64_t key, uint64_t pfn, uint8_t flags, uint8_t size)
{
  if (tlb_hint_serves(t, key, t->tick))
    tlb_fill_slot(t, t->hint_slot, key, tlb_key_size(key), pfn, flags, size);
  else
    tlb_insert_search(t, key, pfn, flags, size);
}

/* tlb_insert of a key of the base size (code 0), which the caller knows:
 * the size mask's update then needs no decoding of the key. */
static inline void tlb_insert_base(Tlb *t, uint64_t key, uint64_t pfn, uint8_t flags)
{
  if (tlb_hint_serves(t, key, t->tick))
    tlb_fill_slot(t, t->hint_slot, key, 0, pfn, flags, 0);
  else
    tlb_insert_search(t, key, pfn, flags, 0);
}

Tlb *tlb_new(const char *name, unsigned entries, unsigned ways, const TlbReplPolicy *repl, GError **error);
/* The array that the settings entries_id (tlb.X_entries) and ways_id give,
 * named tlb.X.  A bad split is reported by both settings and where their
 * values came from. */
Tlb *tlb_new_from_settings(const Settings *s, SettingId entries_id, SettingId ways_id, const TlbReplPolicy *repl,
                           GError **error);
void tlb_free(Tlb *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Tlb, tlb_free)

/* Probe without changing replacement state. */
const TlbPayload *tlb_peek(const Tlb *t, uint64_t key);
/* Invalidate one key; TRUE if it was present. */
gboolean tlb_invalidate(Tlb *t, uint64_t key);
void tlb_flush_asid(Tlb *t, unsigned asid);
void tlb_flush_all(Tlb *t);
unsigned tlb_entries(const Tlb *t);
unsigned tlb_valid_entries(const Tlb *t);
/* The registry's row named `name` ("lru"); NULL if there is none. */
const TlbReplPolicy *tlb_repl_lookup(const char *name);
/* The row tlb.replacement names; an error names the setting when the
 * registry has no such row. */
const TlbReplPolicy *tlb_repl_from_settings(const Settings *s, GError **error);

#endif
