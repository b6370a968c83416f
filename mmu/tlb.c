/*
 * tlb.c - set-associative TLB arrays with LRU, FIFO or random replacement.
 *
 * Models: tags, sets, ways, replacement, invalidation by page, by ASID and
 * whole.  Leaves out: hardware's tree-PLRU approximation (true LRU instead),
 * global pages (Linux user mappings are non-global), and the way real arrays
 * hash high VPN bits into the set index.  Source: Intel SDM vol. 3A 4.10.
 */
#include "config.h"
#include "tlb.h"
#include "cache.h"

#include <stdlib.h>
#include <string.h>

int tlb_repl_from_name(const char *name)
{
  if (g_ascii_strcasecmp(name, "lru") == 0)
    return TLB_REPL_LRU;
  if (g_ascii_strcasecmp(name, "fifo") == 0)
    return TLB_REPL_FIFO;
  if (g_ascii_strcasecmp(name, "random") == 0)
    return TLB_REPL_RANDOM;
  return -1;
}

Tlb *tlb_new(const char *name, unsigned entries, unsigned ways, TlbRepl repl, GError **error)
{
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
  return t;
}

void tlb_free(Tlb *t)
{
  if (!t)
    return;
  g_free(t->name);
  g_free(t->tags);
  g_free(t->stamp);
  g_free(t->pay);
  g_free(t);
}

TlbPayload *tlb_probe_any(Tlb *t, uint64_t key, unsigned base)
{
  return tlb_probe_set(t, key, base, t->ways);
}

const TlbPayload *tlb_peek(const Tlb *t, uint64_t key)
{
  unsigned base = tlb_set_of(t, key) * t->ways;
  for (unsigned w = 0; w < t->ways; w++)
    if (t->tags[base + w] == key)
      return &t->pay[base + w];
  return NULL;
}

/* The way to refill: the key's own way if present, else the first invalid
 * way, else the policy's victim.  One pass over the set.
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
  if (t->hint_key == key && t->hint_tick == t->tick) {
    /* tlb_probe missed this key and the array has not changed since: its
     * pass found what this one would. */
    lowest = t->hint_lowest;
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
  if (lowest <= t->way_mask || t->repl != TLB_REPL_RANDOM)
    return (unsigned)(lowest & t->way_mask);
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

void tlb_insert_search(Tlb *t, uint64_t key, uint64_t pfn, uint8_t flags, uint8_t size)
{
  if (t->tick >= t->tick_last)
    tlb_renumber(t);
  unsigned base = tlb_set_of(t, key) * t->ways;
  tlb_fill_slot(t, base + pick_way(t, base, key), key, pfn, flags, size);
}

gboolean tlb_invalidate(Tlb *t, uint64_t key)
{
  unsigned base = tlb_set_of(t, key) * t->ways;
  for (unsigned w = 0; w < t->ways; w++) {
    if (t->tags[base + w] == key) {
      t->tags[base + w] = 0;
      t->stamp[base + w] = w; /* tick 0: pick_way takes invalid ways first */
      t->hint_key = 0;
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
      t->tags[i] = 0;
      t->stamp[i] &= t->way_mask;
    }
}

void tlb_flush_all(Tlb *t)
{
  memset(t->tags, 0, sizeof(uint64_t) * t->sets * t->ways);
  for (unsigned i = 0; i < t->sets * t->ways; i++)
    t->stamp[i] &= t->way_mask;
  t->hint_key = 0;
  t->size_mask = 0;
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
