/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * perm.h - a keyed pseudo-random permutation of [0, n) in O(1) state.
 *
 * Generators use it to visit n items in a random order without storing the
 * order: perm_apply(p, i) is the i-th item, and every item of [0, n) comes
 * up exactly once as i runs over [0, n).  The same (n, seed) gives the same
 * order on every host.
 */
#ifndef MMUSIM_PERM_H
#define MMUSIM_PERM_H

#include <stdint.h>

/* Feistel rounds; four already make a strong pseudo-random permutation with
 * random round functions (Luby-Rackoff), two more cover the weaker mixer. */
#define PERM_ROUNDS 6

/* A value type: initialise with perm_init, no heap, nothing to free. */
typedef struct {
  uint64_t n;          /* size of the domain */
  unsigned half_bits;  /* bits of each Feistel half */
  uint64_t half_mask;
  uint64_t key[PERM_ROUNDS];
} Perm;

/* A permutation of [0, n), n >= 1, keyed by `seed`. */
void perm_init(Perm *p, uint64_t n, uint64_t seed);
/* The image of i, for i < n. */
uint64_t perm_apply(const Perm *p, uint64_t i);
/* The inverse: perm_invert(p, perm_apply(p, i)) == i. */
uint64_t perm_invert(const Perm *p, uint64_t x);

/* The splitmix64 step (Steele, Lea, Flood 2014): advance *state and return
 * a well mixed 64-bit value.  Shared by the generators for seeding. */
uint64_t perm_splitmix64(uint64_t *state);

#endif
