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
  t->tags = g_new0(uint64_t, entries);
  t->stamp = g_new0(uint64_t, entries);
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
 * An invalid way keeps stamp 0 (every invalidation clears it) and a valid
 * one has a stamp of at least 1 (the tick is incremented before use), so
 * "the first invalid way, else the first valid way with the lowest stamp"
 * is the first way with the lowest stamp: one running minimum per way, no
 * test of the valid bit. */
static inline __attribute__((always_inline)) unsigned pick_way_search(const Tlb *t, unsigned base, uint64_t key,
                                                                       unsigned ways, uint64_t *lowest_out)
{
  const uint64_t *tag = t->tags + base;
  const uint64_t *stamp = t->stamp + base;
  unsigned victim = 0;
  uint64_t lowest = UINT64_MAX;
#pragma GCC unroll 16
  for (unsigned w = 0; w < ways; w++) {
    if (tag[w] == key) {
      lowest = 0; /* the key's own way: no random pick */
      victim = w;
      break;
    }
    if (stamp[w] < lowest) {
      lowest = stamp[w];
      victim = w;
    }
  }
  *lowest_out = lowest;
  return victim;
}

static unsigned pick_way(Tlb *t, unsigned base, uint64_t key)
{
  unsigned victim;
  uint64_t lowest;
  if (t->hint_key == key && t->hint_tick == t->tick) {
    /* tlb_probe missed this key and the array has not changed since: its
     * pass found what this one would. */
    victim = t->hint_slot - base;
    lowest = t->hint_lowest;
  } else {
    switch (t->ways) { /* unrolled for the associativities tlb_probe unrolls */
    case 4:
      victim = pick_way_search(t, base, key, 4, &lowest);
      break;
    case 8:
      victim = pick_way_search(t, base, key, 8, &lowest);
      break;
    case 12:
      victim = pick_way_search(t, base, key, 12, &lowest);
      break;
    case 16:
      victim = pick_way_search(t, base, key, 16, &lowest);
      break;
    default:
      victim = pick_way_search(t, base, key, t->ways, &lowest);
      break;
    }
  }
  if (lowest == 0 || t->repl != TLB_REPL_RANDOM)
    return victim;
  /* xorshift64: deterministic for a given sequence of insertions */
  t->rng ^= t->rng << 13;
  t->rng ^= t->rng >> 7;
  t->rng ^= t->rng << 17;
  return (unsigned)(t->rng % t->ways);
}

void tlb_insert_search(Tlb *t, uint64_t key, uint64_t pfn, uint8_t flags, uint8_t size)
{
  unsigned base = tlb_set_of(t, key) * t->ways;
  tlb_fill_slot(t, base + pick_way(t, base, key), key, pfn, flags, size);
}

gboolean tlb_invalidate(Tlb *t, uint64_t key)
{
  unsigned base = tlb_set_of(t, key) * t->ways;
  for (unsigned w = 0; w < t->ways; w++) {
    if (t->tags[base + w] == key) {
      t->tags[base + w] = 0;
      t->stamp[base + w] = 0; /* pick_way: invalid ways have stamp 0 */
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
      t->stamp[i] = 0;
    }
}

void tlb_flush_all(Tlb *t)
{
  memset(t->tags, 0, sizeof(uint64_t) * t->sets * t->ways);
  memset(t->stamp, 0, sizeof(uint64_t) * t->sets * t->ways);
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
