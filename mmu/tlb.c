/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tlb.c - set-associative TLB arrays, the replacement registry and its
 * three built-in policies: LRU, FIFO and random.
 *
 * Models: tags, sets, ways, replacement, invalidation by page, by ASID and
 * whole.  Leaves out: global pages (Linux user mappings are non-global) and
 * the way real arrays hash high VPN bits into the set index.  Source: Intel
 * SDM vol. 3A 4.10.
 *
 * Replacement is a row of the registry below (struct TlbReplPolicy in
 * tlb.h), named by tlb.replacement.  lru (true LRU, the default), fifo and
 * random are served by the stamps, inline: the probe's pass over a set
 * finds the refill's way in the same pass.  Hardware approximates LRU with
 * a tree of bits: that is the plru row, a policy of hooks in tlb_plru.c.
 * To add a policy: a file with its hooks and a row in tlb_repl_registry[]
 * (doc/ARCHITECTURE.md, "add a TLB replacement policy").
 */
#include "config.h"
#include "tlb.h"
#include "tlb-private.h"
#include "errors.h"

#include <stdlib.h>
#include <string.h>

/* ---- the registry --------------------------------------------------------- */

const TlbReplPolicy tlb_repl_lru = {
  .name = "lru",
  .help = "true LRU: a full set evicts the way used longest ago",
  .source = "the usual textbook model; hardware approximates it (plru)",
  .builtin = TLB_BUILTIN_LRU,
};

const TlbReplPolicy tlb_repl_fifo = {
  .name = "fifo",
  .help = "a full set evicts the way filled longest ago; hits do not count",
  .source = "round-robin replacement, as the POWER SLB's (mmu-facts 2)",
  .builtin = TLB_BUILTIN_FIFO,
};

const TlbReplPolicy tlb_repl_random = {
  .name = "random",
  .help = "a full set evicts a way drawn by xorshift64 with a fixed seed",
  .source = "Marsaglia, \"Xorshift RNGs\", J. Stat. Software 8(14), 2003",
  .builtin = TLB_BUILTIN_RANDOM,
};

/* The registry (base/registry.h), in the order of tlb.replacement's
 * choices in settings.def. */
static const TlbReplPolicy *const tlb_repl_registry[] = {
  &tlb_repl_lru,
  &tlb_repl_fifo,
  &tlb_repl_random,
  &tlb_repl_plru,
};

const TlbReplPolicy *const *tlb_repl_policies(unsigned *n)
{
  *n = G_N_ELEMENTS(tlb_repl_registry);
  return tlb_repl_registry;
}

const TlbReplPolicy *tlb_repl_lookup(const char *name)
{
  int i = registry_find(REGISTRY_ROWS(tlb_repl_registry), G_N_ELEMENTS(tlb_repl_registry), name);
  return i < 0 ? NULL : tlb_repl_registry[i];
}

const TlbReplPolicy *tlb_repl_from_settings(const Settings *s, GError **error)
{
  const char *name = settings_str(s, SET_TLB_REPLACEMENT);
  const TlbReplPolicy *p = tlb_repl_lookup(name);
  if (!p)
    registry_set_unknown(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "setting 'tlb.replacement'",
                         REGISTRY_ROWS(tlb_repl_registry), G_N_ELEMENTS(tlb_repl_registry), name);
  return p;
}

/* ---- arrays --------------------------------------------------------------- */

Tlb *tlb_new(const char *name, unsigned entries, unsigned ways, const TlbReplPolicy *repl, GError **error)
{
  g_return_val_if_fail(repl != NULL, NULL);
  if (repl->builtin == TLB_BUILTIN_NONE && !(repl->hit && repl->fill && repl->victim)) {
    /* A policy in the making: say which, rather than crash later. */
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s: TLB replacement policy '%s' lacks a hook: a policy of hooks needs hit, fill and victim "
                "(mmu/tlb.h, struct TlbReplPolicy)",
                name, repl->name);
    return NULL;
  }
  if (entries == 0 || ways == 0 || entries % ways) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s: %u entries cannot be split into sets of %u ways; entries must be a nonzero multiple of ways",
                name, entries, ways);
    return NULL;
  }
  Tlb *t = g_new0(Tlb, 1);
  t->name = g_strdup(name);
  t->ways = ways;
  t->sets = entries / ways;
  t->sets_pow2 = (t->sets & (t->sets - 1)) == 0;
  t->set_mask = t->sets - 1;
  t->repl = repl;
  t->stamp_on_hit = repl->builtin == TLB_BUILTIN_LRU;
  t->hooked = repl->builtin == TLB_BUILTIN_NONE;
  t->drawn_victim = t->hooked || repl->builtin == TLB_BUILTIN_RANDOM;
  t->probe_ways = t->hooked ? 0 : ways;
  t->way_bits = ways > 1 ? 64 - (unsigned)__builtin_clzll(ways - 1ULL) : 0;
  t->way_mask = (1ULL << t->way_bits) - 1;
  t->tick_step = 1ULL << t->way_bits;
  t->tick_last = ((UINT64_MAX >> t->way_bits) - 1) << t->way_bits;
  t->tags = g_new0(uint64_t, entries);
  t->stamp = g_new(uint64_t, entries);
  for (unsigned i = 0; i < entries; i++)
    t->stamp[i] = i % ways; /* invalid: tick 0 */
  t->pay = g_new0(TlbPayload, entries);
  t->rng = 0x9e3779b97f4a7c15ULL;
  if (ways > TLB_INDEX_MIN_WAYS && ways <= TLB_INDEX_MAX_WAYS) {
    unsigned bits = 1;
    while ((1ULL << bits) < 2ULL * entries) /* at most half the buckets used */
      bits++;
    t->ix.shift = 64 - bits;
    t->ix.head = g_new0(uint32_t, 1ULL << bits);
    t->ix.next = g_new0(uint32_t, entries);
    t->ix.older = g_new0(uint16_t, entries);
    t->ix.newer = g_new0(uint16_t, entries);
    t->ix.oldest = g_new0(uint16_t, t->sets);
    t->ix.newest = g_new0(uint16_t, t->sets);
    t->ix.n_valid = g_new0(uint32_t, t->sets);
  }
  if (repl->state_new)
    t->repl_state = repl->state_new(t);
  return t;
}

static void ix_free(struct TlbIndex *x)
{
  g_free(x->head);
  g_free(x->next);
  g_free(x->older);
  g_free(x->newer);
  g_free(x->oldest);
  g_free(x->newest);
  g_free(x->n_valid);
}

Tlb *tlb_new_from_settings(const Settings *s, SettingId entries_id, SettingId ways_id, const TlbReplPolicy *repl,
                           GError **error)
{
  unsigned entries = (unsigned)settings_int(s, entries_id);
  unsigned ways = (unsigned)settings_int(s, ways_id);
  const char *entries_name = settings_def(entries_id)->name;
  if (entries == 0 || ways == 0 || entries % ways) {
    SettingId ids[] = { entries_id, ways_id };
    g_autofree char *entries_where = settings_blame(s, entries_id);
    g_autofree char *ways_where = settings_blame(s, ways_id);
    g_autofree char *fix = NULL;
    if (settings_latest(s, ids, G_N_ELEMENTS(ids)) == ways_id && entries)
      fix = g_strdup_printf("give %s a number that divides %u", settings_def(ways_id)->name, entries);
    else
      fix = g_strdup_printf("give %s a multiple of %u", entries_name, ways);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "%s cannot be split into sets of %s: entries must be a multiple of ways; %s",
                entries_where, ways_where, fix);
    return NULL;
  }
  g_autofree char *name = g_str_has_suffix(entries_name, "_entries")
                            ? g_strndup(entries_name, strlen(entries_name) - strlen("_entries"))
                            : g_strdup(entries_name);
  return tlb_new(name, entries, ways, repl, error);
}

void tlb_free(Tlb *t)
{
  if (!t)
    return;
  if (t->repl->state_free)
    t->repl->state_free(t->repl_state);
  g_free(t->name);
  g_free(t->tags);
  g_free(t->stamp);
  g_free(t->pay);
  ix_free(&t->ix);
  g_free(t);
}

/* ---- the host index (struct TlbIndex) ---------------------------------- */

/* A multiplicative hash: the keys of a set share their low VPN bits. */
static inline unsigned ix_bucket(const Tlb *t, uint64_t key)
{
  return (unsigned)((key * 0x9e3779b97f4a7c15ULL) >> t->ix.shift);
}

/* The slot holding key, whose bucket is b, or -1. */
static inline int ix_find_in(const Tlb *t, unsigned b, uint64_t key)
{
  for (uint32_t s = t->ix.head[b]; s; s = t->ix.next[s - 1])
    if (t->tags[s - 1] == key)
      return (int)(s - 1);
  return -1;
}

/* The slot holding key, or -1. */
static inline int ix_find(const Tlb *t, uint64_t key)
{
  return ix_find_in(t, ix_bucket(t, key), key);
}

static inline void ix_chain_add(Tlb *t, unsigned slot, uint64_t key)
{
  uint32_t *head = &t->ix.head[ix_bucket(t, key)];
  t->ix.next[slot] = *head;
  *head = slot + 1;
}

static inline void ix_chain_remove(Tlb *t, unsigned slot, uint64_t key)
{
  uint32_t *p = &t->ix.head[ix_bucket(t, key)];
  while (*p != slot + 1)
    p = &t->ix.next[*p - 1];
  *p = t->ix.next[slot];
}

/* Take way w of the set at base out of the set's order (it stays counted). */
static inline void ix_unlink(Tlb *t, unsigned set, unsigned base, unsigned w)
{
  struct TlbIndex *x = &t->ix;
  unsigned o = x->older[base + w], n = x->newer[base + w];
  if (x->oldest[set] == w)
    x->oldest[set] = (uint16_t)n;
  else
    x->newer[base + o] = (uint16_t)n;
  if (x->newest[set] == w)
    x->newest[set] = (uint16_t)o;
  else
    x->older[base + n] = (uint16_t)o;
}

/* Put way w at the newest end of a set whose order is not empty. */
static inline void ix_push_newest(Tlb *t, unsigned set, unsigned base, unsigned w)
{
  struct TlbIndex *x = &t->ix;
  x->older[base + w] = x->newest[set];
  x->newer[base + x->newest[set]] = (uint16_t)w;
  x->newest[set] = (uint16_t)w;
}

/* Slot i of key's set takes key with the next tick (before tlb_fill_slot
 * writes the tag). */
static inline __attribute__((always_inline)) void ix_fill(Tlb *t, unsigned i, uint64_t key)
{
  struct TlbIndex *x = &t->ix;
  unsigned set = tlb_set_of(t, key), base = set * t->ways, w = i - base;
  uint64_t old = t->tags[i];
  if (old & TLB_VALID) {
    if (old != key) {
      ix_chain_remove(t, i, old);
      ix_chain_add(t, i, key);
    }
    if (x->newest[set] == w)
      return;
    if (x->oldest[set] == w) /* the usual victim: the next oldest takes its place */
      x->oldest[set] = x->newer[base + w];
    else
      ix_unlink(t, set, base, w);
    ix_push_newest(t, set, base, w);
    return;
  }
  ix_chain_add(t, i, key);
  if (x->n_valid[set]++)
    ix_push_newest(t, set, base, w);
  else
    x->oldest[set] = x->newest[set] = (uint16_t)w;
}

/* ix_fill of the probe's hint in a full set, the usual refill of an array
 * that mostly misses: slot i is the set's oldest (ix_lowest) and holds
 * another key (the probe missed it); key's bucket is the probe's.  The set
 * has more than TLB_INDEX_MIN_WAYS valid ways, so its newest is another. */
static inline __attribute__((always_inline)) void ix_fill_oldest(Tlb *t, unsigned i, uint64_t key)
{
  struct TlbIndex *x = &t->ix;
  unsigned set = tlb_set_of(t, key), base = set * t->ways;
  ix_chain_remove(t, i, t->tags[i]);
  x->next[i] = x->head[t->hint_bucket];
  x->head[t->hint_bucket] = i + 1;
  x->oldest[set] = x->newer[i];
  ix_push_newest(t, set, base, i - base);
}

/* Slot i (holding key) becomes invalid. */
static void ix_invalidate(Tlb *t, unsigned i, uint64_t key)
{
  unsigned set = tlb_set_of(t, key), base = set * t->ways;
  ix_chain_remove(t, i, key);
  ix_unlink(t, set, base, i - base);
  t->ix.n_valid[set]--;
}

static void ix_clear(Tlb *t)
{
  struct TlbIndex *x = &t->ix;
  memset(x->head, 0, sizeof *x->head << (64 - x->shift));
  memset(x->n_valid, 0, sizeof *x->n_valid * t->sets);
}

/* The lowest stamp of the set at base, which holds no key being looked
 * for: with every way valid the oldest of the order, else the pass (the
 * first invalid way). */
static inline uint64_t ix_lowest(const Tlb *t, unsigned set, unsigned base)
{
  if (t->ix.n_valid[set] == t->ways)
    return t->stamp[base + t->ix.oldest[set]];
  uint64_t lowest = UINT64_MAX;
  for (unsigned w = 0; w < t->ways; w++)
    lowest = t->stamp[base + w] < lowest ? t->stamp[base + w] : lowest;
  return lowest;
}

/* The indexed probe's miss of key (bucket b) in its set at base: the hint
 * for the refill (see tlb_insert). */
static inline __attribute__((always_inline)) TlbPayload *ix_miss(Tlb *t, uint64_t key, unsigned b, unsigned base,
                                                                 uint64_t lowest)
{
  t->hint_bucket = b;
  t->hint_key = key;
  t->hint_tick = t->tick | 1; /* marked: see tlb_insert */
  t->hint_lowest = lowest;
  t->hint_slot = base + (unsigned)(lowest & t->way_mask);
  return NULL;
}

/* ix_miss in a set with an invalid way, whose lowest stamp takes a pass:
 * out of line, tlb_probe_any's tail call. */
static G_NO_INLINE TlbPayload *ix_miss_pass(Tlb *t, uint64_t key, unsigned b, unsigned base)
{
  return ix_miss(t, key, b, base, ix_lowest(t, tlb_set_of(t, key), base));
}

/* Way w of the set at base, slot s, becomes the newest of its set's
 * order, which it is not: out of line, ix_hit's tail call. */
static G_NO_INLINE TlbPayload *ix_hit_newest(Tlb *t, unsigned set, unsigned base, unsigned w, unsigned s)
{
  ix_unlink(t, set, base, w);
  ix_push_newest(t, set, base, w);
  return &t->pay[s];
}

/* An LRU hit of the indexed probe in slot s of key's set at base: the
 * slot's stamp and its place in the set's order. */
static inline __attribute__((always_inline)) TlbPayload *ix_hit(Tlb *t, uint64_t key, unsigned s, unsigned base)
{
  unsigned set = tlb_set_of(t, key);
  t->stamp[s] = tlb_stamp_next(t, t->stamp[s]);
  unsigned w = s - base;
  if (t->ix.newest[set] != w)
    return ix_hit_newest(t, set, base, w, s);
  return &t->pay[s];
}

/* ix_hit when the tick is about to run out (tlb_renumber), out of line:
 * tlb_probe_any's tail call. */
static G_NO_INLINE TlbPayload *ix_hit_renumber(Tlb *t, uint64_t key, unsigned s, unsigned base)
{
  return ix_hit(t, key, s, base);
}

/* tlb_probe_set's loop, for an array of any number of ways without the
 * index. */
static G_NO_INLINE TlbPayload *probe_set_loop(Tlb *t, uint64_t key, unsigned base)
{
  return tlb_probe_set(t, key, base, t->ways);
}

/* The probe of an array with a policy of hooks: the key's way, through
 * the host index when the array has one, and the hit hook.  It leaves no
 * hint, so that every refill goes through insert_search and its fill hook. */
static G_NO_INLINE TlbPayload *probe_hooked(Tlb *t, uint64_t key, unsigned base)
{
  int s = -1;
  if (t->ix.head) {
    s = ix_find(t, key);
  } else {
    for (unsigned w = 0; w < t->ways && s < 0; w++)
      if (t->tags[base + w] == key)
        s = (int)(base + w);
  }
  if (s < 0)
    return NULL;
  t->repl->hit(t, base / t->ways, (unsigned)s - base);
  return &t->pay[s];
}

/* The indexed probe saves no registers, for its miss (the usual case of
 * an array that mostly misses: the POWER presets' 64-way ERAT under random
 * accesses) nor its hit: the renumbering, the pass over a set with an
 * invalid way and the probe of an array without the index are tail calls
 * of their own. */
TlbPayload *tlb_probe_any(Tlb *t, uint64_t key, unsigned base)
{
  if (G_UNLIKELY(t->hooked))
    return probe_hooked(t, key, base);
  if (!t->ix.head)
    return probe_set_loop(t, key, base);
  unsigned b = ix_bucket(t, key);
  int s = ix_find_in(t, b, key);
  if (s >= 0) {
    if (!t->stamp_on_hit)
      return &t->pay[s];
    if (G_UNLIKELY(t->tick >= t->tick_last))
      return ix_hit_renumber(t, key, (unsigned)s, base);
    return ix_hit(t, key, (unsigned)s, base);
  }
  unsigned set = tlb_set_of(t, key);
  if (t->ix.n_valid[set] != t->ways)
    return ix_miss_pass(t, key, b, base);
  return ix_miss(t, key, b, base, t->stamp[base + t->ix.oldest[set]]);
}

const TlbPayload *tlb_peek(const Tlb *t, uint64_t key)
{
  unsigned base = tlb_set_of(t, key) * t->ways;
  if (t->ix.head) {
    int s = ix_find(t, key);
    return s < 0 ? NULL : &t->pay[s];
  }
  for (unsigned w = 0; w < t->ways; w++)
    if (t->tags[base + w] == key)
      return &t->pay[base + w];
  return NULL;
}

/* The way to refill: the key's own way if present, else the first invalid
 * way, else the policy's victim (the lowest stamp for lru and fifo, a draw
 * for random, the victim hook for a policy of hooks).  One pass over the
 * set.
 *
 * An invalid way has tick 0 (every invalidation clears it) and a valid one
 * a tick of at least 1 (the tick is incremented before use), so "the first
 * invalid way, else the first valid way with the lowest tick" is the way of
 * the lowest stamp: one running minimum per way, no test of the valid bit.
 * Returns that stamp, or the key's own way with tick 0 (no random draw). */
static inline __attribute__((always_inline)) uint64_t pick_way_search(const Tlb *t, unsigned base, uint64_t key,
                                                                       unsigned ways)
{
  const uint64_t *tag = t->tags + base;
  const uint64_t *stamp = t->stamp + base;
  uint64_t lowest = UINT64_MAX;
#pragma GCC unroll 16
  for (unsigned w = 0; w < ways; w++) {
    if (tag[w] == key)
      return w;
    lowest = stamp[w] < lowest ? stamp[w] : lowest;
  }
  return lowest;
}

static unsigned pick_way(Tlb *t, unsigned base, uint64_t key)
{
  uint64_t lowest;
  uint64_t hint_due = t->tick | (t->ix.head != NULL); /* an indexed array's hints are marked */
  if (t->hint_key == key && t->hint_tick == hint_due) {
    /* tlb_probe missed this key and the array has not changed since: its
     * pass found what this one would. */
    lowest = t->hint_lowest;
  } else if (t->ix.head) {
    int s = ix_find(t, key);
    lowest = s >= 0 ? (unsigned)s - base : ix_lowest(t, tlb_set_of(t, key), base);
  } else {
    switch (t->ways) { /* unrolled for the associativities tlb_probe unrolls */
    case 4:
      lowest = pick_way_search(t, base, key, 4);
      break;
    case 8:
      lowest = pick_way_search(t, base, key, 8);
      break;
    case 12:
      lowest = pick_way_search(t, base, key, 12);
      break;
    case 16:
      lowest = pick_way_search(t, base, key, 16);
      break;
    default:
      lowest = pick_way_search(t, base, key, t->ways);
      break;
    }
  }
  if (tlb_stamp_invalid(t, lowest) || !t->drawn_victim)
    return (unsigned)(lowest & t->way_mask);
  if (t->hooked) {
    unsigned w = t->repl->victim(t, base / t->ways);
    g_assert(w < t->ways);
    return w;
  }
  /* xorshift64: deterministic for a given sequence of insertions */
  t->rng ^= t->rng << 13;
  t->rng ^= t->rng >> 7;
  t->rng ^= t->rng << 17;
  return (unsigned)(t->rng % t->ways);
}

typedef struct {
  uint64_t stamp;
  unsigned slot;
} StampSlot;

static int stamp_slot_cmp(const void *a, const void *b)
{
  uint64_t x = ((const StampSlot *)a)->stamp, y = ((const StampSlot *)b)->stamp;
  return x < y ? -1 : x > y;
}

/* Ticks are unique and only their order within a set matters (the
 * victim is the lowest); random replacement only asks whether a tick is 0.
 * So the valid entries can take the ticks 1..n in the order they had, and
 * the tick goes on from n.  Reached after 2^(64 - way_bits) - 1 uses and
 * fills (2^44 at the largest associativity the settings allow; 2^57 at
 * the presets' largest, 72 ways). */
void tlb_renumber(Tlb *t)
{
  unsigned n = t->sets * t->ways, valid = 0;
  StampSlot *v = g_new(StampSlot, n);
  for (unsigned i = 0; i < n; i++)
    if (t->tags[i] & TLB_VALID)
      v[valid++] = (StampSlot){ t->stamp[i], i };
  qsort(v, valid, sizeof *v, stamp_slot_cmp);
  for (unsigned r = 0; r < valid; r++)
    t->stamp[v[r].slot] = ((uint64_t)(r + 1) << t->way_bits) | (v[r].stamp & t->way_mask);
  t->tick = (uint64_t)valid << t->way_bits;
  t->hint_key = 0;
  g_free(v);
}

/* tlb_insert without a hint: the search, and the renumbering when the tick
 * is about to run out. */
static G_NO_INLINE void insert_search(Tlb *t, uint64_t key, uint64_t pfn, uint8_t flags, uint8_t size)
{
  if (t->tick >= t->tick_last)
    tlb_renumber(t);
  unsigned base = tlb_set_of(t, key) * t->ways;
  unsigned w = pick_way(t, base, key), i = base + w;
  if (t->ix.head) /* before the tag changes: the index drops the old key */
    ix_fill(t, i, key);
  tlb_fill_slot(t, i, key, tlb_key_size(key), pfn, flags, size);
  if (G_UNLIKELY(t->hooked))
    t->repl->fill(t, base / t->ways, w);
}

void tlb_insert_search(Tlb *t, uint64_t key, uint64_t pfn, uint8_t flags, uint8_t size)
{
  if (tlb_hint_serves(t, key, t->tick | 1)) {
    /* tlb_insert's shortcut for an indexed array (its hints are marked) */
    unsigned i = t->hint_slot;
    if (t->tags[i] & TLB_VALID)
      ix_fill_oldest(t, i, key);
    else
      ix_fill(t, i, key);
    tlb_fill_slot(t, i, key, tlb_key_size(key), pfn, flags, size);
    return;
  }
  insert_search(t, key, pfn, flags, size);
}

gboolean tlb_invalidate(Tlb *t, uint64_t key)
{
  unsigned base = tlb_set_of(t, key) * t->ways;
  if (t->ix.head) {
    int s = ix_find(t, key);
    if (s < 0)
      return FALSE;
    ix_invalidate(t, (unsigned)s, key);
    t->tags[s] = 0;
    t->stamp[s] = (unsigned)s - base;
    t->hint_key = 0;
    if (t->hooked && t->repl->invalidate)
      t->repl->invalidate(t, base / t->ways, (unsigned)s - base);
    return TRUE;
  }
  for (unsigned w = 0; w < t->ways; w++) {
    if (t->tags[base + w] == key) {
      t->tags[base + w] = 0;
      t->stamp[base + w] = w; /* tick 0: pick_way takes invalid ways first */
      t->hint_key = 0;
      if (t->hooked && t->repl->invalidate)
        t->repl->invalidate(t, base / t->ways, w);
      return TRUE;
    }
  }
  return FALSE;
}

void tlb_flush_asid(Tlb *t, unsigned asid)
{
  unsigned n = t->sets * t->ways;
  t->hint_key = 0;
  for (unsigned i = 0; i < n; i++)
    if ((t->tags[i] & TLB_VALID) && ((t->tags[i] >> TLB_ASID_SHIFT) & TLB_ASID_MASK) == asid) {
      if (t->ix.head)
        ix_invalidate(t, i, t->tags[i]);
      t->tags[i] = 0;
      t->stamp[i] &= t->way_mask;
      if (t->hooked && t->repl->invalidate)
        t->repl->invalidate(t, i / t->ways, i % t->ways);
    }
}

void tlb_flush_all(Tlb *t)
{
  memset(t->tags, 0, sizeof(uint64_t) * t->sets * t->ways);
  for (unsigned i = 0; i < t->sets * t->ways; i++)
    t->stamp[i] &= t->way_mask;
  t->hint_key = 0;
  t->size_mask = 0;
  if (t->ix.head)
    ix_clear(t);
  if (t->hooked && t->repl->flush)
    t->repl->flush(t);
}

unsigned tlb_entries(const Tlb *t)
{
  return t->sets * t->ways;
}

unsigned tlb_valid_entries(const Tlb *t)
{
  unsigned n = 0;
  for (unsigned i = 0; i < t->sets * t->ways; i++)
    n += (t->tags[i] & TLB_VALID) != 0;
  return n;
}
