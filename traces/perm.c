/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perm.c - keyed pseudo-random permutation by a Feistel network with cycle
 * walking.
 *
 * The domain [0, n) is embedded in [0, 2^b), b the smallest even number of
 * bits with 2^b >= n (at least 2).  A balanced Feistel network over the two
 * b/2-bit halves is a bijection of [0, 2^b) whatever its round function; to
 * land back in [0, n) we apply it again while the result is >= n ("cycle
 * walking", Black and Rogaway, "Ciphers with arbitrary finite domains", 2002).
 * Because 2^b < 4n, a walk takes fewer than four steps on average.
 *
 * Left out: cryptographic strength.  The round function is the splitmix64
 * finaliser, which mixes well enough that chains built from it defeat
 * stride prefetchers and look random to caches and TLBs; it is not a cipher.
 */
#include "config.h"
#include "perm.h"

#include <glib.h>

/* splitmix64's constants (Steele, Lea, Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014). */
#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ULL
#define SPLITMIX_MUL1 0xbf58476d1ce4e5b9ULL
#define SPLITMIX_MUL2 0x94d049bb133111ebULL

static inline uint64_t mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * SPLITMIX_MUL1;
  z = (z ^ (z >> 27)) * SPLITMIX_MUL2;
  return z ^ (z >> 31);
}

uint64_t perm_splitmix64(uint64_t *state)
{
  *state += SPLITMIX_GAMMA;
  return mix64(*state);
}

void perm_init(Perm *p, uint64_t n, uint64_t seed)
{
  g_return_if_fail(p != NULL && n >= 1);
  unsigned bits = 2;
  while (bits < 64 && (n - 1) >> bits)
    bits += 2;
  p->n = n;
  p->half_bits = bits / 2;
  p->half_mask = (1ULL << p->half_bits) - 1;
  uint64_t state = seed;
  for (int r = 0; r < PERM_ROUNDS; r++)
    p->key[r] = perm_splitmix64(&state);
}

static inline uint64_t round_fn(const Perm *p, uint64_t half, int r)
{
  return mix64(half ^ p->key[r]) & p->half_mask;
}

/* One pass of the network over [0, 2^b): (L, R) -> (R, L ^ F(R)) each round. */
static inline uint64_t feistel(const Perm *p, uint64_t x)
{
  uint64_t l = x >> p->half_bits, r = x & p->half_mask;
  for (int k = 0; k < PERM_ROUNDS; k++) {
    uint64_t t = l ^ round_fn(p, r, k);
    l = r;
    r = t;
  }
  return (l << p->half_bits) | r;
}

static inline uint64_t feistel_inverse(const Perm *p, uint64_t x)
{
  uint64_t l = x >> p->half_bits, r = x & p->half_mask;
  for (int k = PERM_ROUNDS - 1; k >= 0; k--) {
    uint64_t t = r ^ round_fn(p, l, k);
    r = l;
    l = t;
  }
  return (l << p->half_bits) | r;
}

/* Step until back inside [0, n); the cycle through x holds x itself, so the
 * walk ends.  `step` is a constant at each call and gets inlined. */
static inline uint64_t cycle_walk(const Perm *p, uint64_t x, uint64_t (*step)(const Perm *, uint64_t))
{
  do
    x = step(p, x);
  while (x >= p->n);
  return x;
}

uint64_t perm_apply(const Perm *p, uint64_t i)
{
  g_return_val_if_fail(i < p->n, 0);
  return cycle_walk(p, i, feistel);
}

uint64_t perm_invert(const Perm *p, uint64_t x)
{
  g_return_val_if_fail(x < p->n, 0);
  return cycle_walk(p, x, feistel_inverse);
}
