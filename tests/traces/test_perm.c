/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_perm.c - the keyed permutation is a bijection of [0, n) for every n,
 * depends on its key, and inverts.
 */
#include "config.h"
#include "testutil.h"
#include "perm.h"

/* Every value of [0, n) is hit exactly once, and perm_invert undoes it. */
static void check_bijection(uint64_t n, uint64_t seed)
{
  Perm p;
  perm_init(&p, n, seed);
  g_autofree guint8 *seen = g_malloc0(n);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = perm_apply(&p, i);
    /* Plain ifs: a passing ck_assert costs a system call in Check. */
    if (x >= n)
      ck_abort_msg("n=%" G_GUINT64_FORMAT ": perm(%" G_GUINT64_FORMAT ")=%" G_GUINT64_FORMAT " out of range", n, i, x);
    if (seen[x])
      ck_abort_msg("n=%" G_GUINT64_FORMAT ": value %" G_GUINT64_FORMAT " hit twice", n, x);
    seen[x] = 1;
    if (perm_invert(&p, x) != i)
      ck_abort_msg("n=%" G_GUINT64_FORMAT ": invert(perm(%" G_GUINT64_FORMAT ")) != itself", n, i);
  }
}

START_TEST(bijection_small_n)
{
  for (uint64_t n = 1; n <= 300; n++)
    for (uint64_t seed = 0; seed < 4; seed++)
      check_bijection(n, seed);
}
END_TEST

START_TEST(bijection_around_powers_of_two)
{
  /* The boundaries of the even-bit domains: 2^b - 1, 2^b, 2^b + 1. */
  for (unsigned b = 2; b <= 16; b++)
    for (int d = -1; d <= 1; d++)
      check_bijection((1ULL << b) + d, 42);
}
END_TEST

START_TEST(n_one_and_two)
{
  Perm p;
  perm_init(&p, 1, 7);
  ck_assert_uint_eq(perm_apply(&p, 0), 0);
  ck_assert_uint_eq(perm_invert(&p, 0), 0);
  /* n = 2: both orders must occur over a range of seeds. */
  gboolean identity = FALSE, swap = FALSE;
  for (uint64_t seed = 0; seed < 64; seed++) {
    perm_init(&p, 2, seed);
    uint64_t a = perm_apply(&p, 0), b = perm_apply(&p, 1);
    ck_assert_uint_ne(a, b);
    ck_assert_uint_lt(a, 2);
    ck_assert_uint_lt(b, 2);
    identity |= a == 0;
    swap |= a == 1;
  }
  ck_assert(identity && swap);
}
END_TEST

START_TEST(seeds_differ)
{
  const uint64_t n = 1000;
  Perm a, b, c;
  perm_init(&a, n, 1);
  perm_init(&b, n, 2);
  perm_init(&c, n, 1);
  unsigned same_ab = 0;
  for (uint64_t i = 0; i < n; i++) {
    same_ab += perm_apply(&a, i) == perm_apply(&b, i);
    if (perm_apply(&a, i) != perm_apply(&c, i))
      ck_abort_msg("same seed, different image of %" G_GUINT64_FORMAT, i);
  }
  /* Two random permutations agree on about one point. */
  ck_assert_uint_lt(same_ab, 10);
}
END_TEST

START_TEST(looks_random)
{
  /* Not the identity, and neighbours do not stay neighbours: the mean
   * distance between the images of i and i+1 is near n/3 for a random
   * order, and 1 for a sequential one. */
  const uint64_t n = 4096;
  Perm p;
  perm_init(&p, n, 1);
  unsigned fixed = 0;
  double dist = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = perm_apply(&p, i);
    fixed += x == i;
    if (i + 1 < n) {
      uint64_t y = perm_apply(&p, i + 1);
      dist += x > y ? x - y : y - x;
    }
  }
  ck_assert_uint_lt(fixed, 10);
  dist /= n - 1;
  ck_assert_msg(dist > n / 4.0 && dist < n / 2.5, "mean neighbour distance %g", dist);
}
END_TEST

START_TEST(large_n_spot_checks)
{
  const uint64_t ns[] = { 1ULL << 40, (1ULL << 40) + 3, 1000000007ULL, UINT64_MAX, UINT64_MAX - 1, 1ULL << 63 };
  for (unsigned k = 0; k < G_N_ELEMENTS(ns); k++) {
    Perm p;
    perm_init(&p, ns[k], 99);
    uint64_t prev = UINT64_MAX;
    for (uint64_t i = 0; i < 2000; i++) {
      uint64_t at = i * (ns[k] / 2000);
      uint64_t x = perm_apply(&p, at);
      if (x >= ns[k] || perm_invert(&p, x) != at || x == prev)
        ck_abort_msg("n=%" G_GUINT64_FORMAT ": perm(%" G_GUINT64_FORMAT ")=%" G_GUINT64_FORMAT " (previous %" G_GUINT64_FORMAT ")",
                     ns[k], at, x, prev);
      prev = x;
    }
  }
}
END_TEST

START_TEST(splitmix_reference)
{
  /* First outputs of splitmix64 seeded with 0 (reference implementation). */
  uint64_t s = 0;
  ck_assert_uint_eq(perm_splitmix64(&s), 0xe220a8397b1dcdafULL);
  ck_assert_uint_eq(perm_splitmix64(&s), 0x6e789e6aa1b965f4ULL);
  ck_assert_uint_eq(perm_splitmix64(&s), 0x06c45d188009454fULL);
}
END_TEST

static Suite *perm_suite(void)
{
  Suite *s = suite_create("perm");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, bijection_small_n);
  tcase_add_test(tc, bijection_around_powers_of_two);
  tcase_add_test(tc, n_one_and_two);
  tcase_add_test(tc, seeds_differ);
  tcase_add_test(tc, looks_random);
  tcase_add_test(tc, large_n_spot_checks);
  tcase_add_test(tc, splitmix_reference);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(perm_suite)
