/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tlb_plru.c - tree pseudo-LRU replacement (tlb.replacement=plru): the
 * example of a TLB replacement policy made of hooks (struct TlbReplPolicy,
 * mmu/tlb.h).
 *
 * Each set keeps a binary tree over its ways: a leaf per way, a bit per
 * inner node (ways - 1 bits for a power of two).  A bit names the half of
 * its subtree that holds the next victim (0: left, the lower ways; 1:
 * right).  A hit or a fill of a way sets every bit on the way's path to
 * point away from it; a full set evicts the way reached by following the
 * bits from the root.  An invalid way is filled before the tree is asked,
 * the lowest first (the shared rule of tlb.c), as hardware does.  Worked
 * example, 4 ways (nodes: root 1, its children 2 over ways 0-1 and 3 over
 * ways 2-3):
 *
 *   fill ways 0, 1, 2, 3 in turn   bits 1=0 2=0 3=0   victim 0
 *   hit way 0                      bits 1=1 2=1 3=0   victim 2 (LRU: 1)
 *   hit way 1                      bits 1=1 2=0 3=0   victim 2
 *
 * A way count that is not a power of two (Skylake's 12-way STLB, 7- and
 * 24-way arrays, the fully associative L1s of 64 or 72 entries) gets the
 * tree of the next power of two, whose leaves past the last way are never
 * chosen: where a bit points into a subtree that holds no way, the walk
 * goes to the other half.  The tree is then lopsided (12 ways: the root
 * splits them 8 and 4), so under a stream of misses the smaller half's
 * ways are evicted more often.  Vendors do not publish how their 12-way
 * trees are built: this rule is the model's (UNCONFIRMED).
 *
 * Invalidation by page or by ASID leaves the bits alone, as hardware only
 * clears the entry's valid bit: the invalid way is refilled before the tree
 * is asked again, and any setting of the bits is a state the tree can be in.
 * A full flush clears every bit, so a flushed array behaves as a new one.
 *
 * Source: the tree-based PLRU ("PLRUt") of Al-Zoubi, Milenkovic and
 * Milenkovic, "Performance evaluation of cache replacement policies for the
 * SPEC CPU2000 benchmark suite", ACM Southeast Conference 2004.
 */
#include "config.h"
#include "tlb.h"

#include <string.h>

/* The bits of every set: node n (1 .. leaves - 1, the root 1, the children
 * of n 2n and 2n + 1, way w the leaf leaves + w) is bit n % 64 of word
 * n / 64 of the set's words. */
typedef struct {
  unsigned leaves; /* the next power of two of ways: 1 << t->way_bits */
  unsigned words;  /* per set */
  uint64_t bits[]; /* sets * words */
} PlruState;

static void *plru_state_new(const Tlb *t)
{
  unsigned leaves = 1u << t->way_bits, words = (leaves + 63) / 64;
  PlruState *p = g_malloc0(sizeof *p + sizeof(uint64_t) * words * t->sets);
  p->leaves = leaves;
  p->words = words;
  return p;
}

static void plru_state_free(void *state)
{
  g_free(state);
}

static inline uint64_t *plru_set_bits(const Tlb *t, unsigned set)
{
  PlruState *p = t->repl_state;
  return p->bits + (size_t)set * p->words;
}

/* Point every bit on the path of `way` away from it: a left child's parent
 * to the right (1), a right child's to the left (0).  The hit and fill hook. */
static void plru_touch(Tlb *t, unsigned set, unsigned way)
{
  const PlruState *p = t->repl_state;
  uint64_t *b = plru_set_bits(t, set);
  for (unsigned n = p->leaves + way; n > 1; n >>= 1) {
    unsigned parent = n >> 1;
    uint64_t m = 1ULL << (parent & 63);
    if (n & 1)
      b[parent >> 6] &= ~m;
    else
      b[parent >> 6] |= m;
  }
}

/* Follow the bits from the root; a subtree whose first leaf is past the
 * last way holds no way and is never entered. */
static unsigned plru_victim(Tlb *t, unsigned set)
{
  const PlruState *p = t->repl_state;
  const uint64_t *b = plru_set_bits(t, set);
  unsigned n = 1, lo = 0;
  for (unsigned half = p->leaves >> 1; half; half >>= 1) {
    gboolean right = (b[n >> 6] >> (n & 63)) & 1;
    if (right && lo + half < t->ways) {
      n = 2 * n + 1;
      lo += half;
    } else {
      n = 2 * n;
    }
  }
  return lo;
}

static void plru_flush(Tlb *t)
{
  PlruState *p = t->repl_state;
  memset(p->bits, 0, sizeof(uint64_t) * p->words * t->sets);
}

const TlbReplPolicy tlb_repl_plru = {
  .name = "plru",
  .help = "tree pseudo-LRU: a full set evicts the way its tree of bits points to",
  .source = "tree PLRU (Al-Zoubi et al., ACM SE 2004), the usual hardware approximation of LRU; "
            "the tree of a way count that is not a power of two is the model's (UNCONFIRMED)",
  .builtin = TLB_BUILTIN_NONE,
  .state_new = plru_state_new,
  .state_free = plru_state_free,
  .hit = plru_touch,
  .fill = plru_touch,
  .victim = plru_victim,
  .invalidate = NULL, /* the bits stay: see the head of this file */
  .flush = plru_flush,
};
