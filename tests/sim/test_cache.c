/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cache.c - the set-associative array: geometry checks, LRU order by
 * hand, non-power-of-two set counts, and a random sequence against a
 * straightforward reference LRU.
 */
#include "config.h"
#include "cache.h"
#include "testutil.h"

#include <string.h>

/* Lines are numbered so that a one-set cache sees them all in set 0. */
enum { A = 10, B = 11, C = 12, D = 13, E = 14, F = 15 };

static Cache *one_set(unsigned ways)
{
  g_autoptr(GError) err = NULL;
  Cache *c = cache_new("T", (uint64_t)ways * 64, ways, 64, &err);
  ck_assert_no_error(err);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(cache_sets(c), 1);
  ck_assert_uint_eq(cache_ways(c), ways);
  return c;
}

static void expect_geometry_error(const char *name, uint64_t size, unsigned ways, unsigned line,
                                  const char *needle)
{
  g_autoptr(GError) err = NULL;
  Cache *c = cache_new(name, size, ways, line, &err);
  ck_assert_ptr_null(c);
  ck_assert_ptr_nonnull(err);
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE));
  ck_assert_msg(g_str_has_prefix(err->message, name), "message does not name %s: %s", name, err->message);
  ck_assert_msg(strstr(err->message, needle) != NULL, "expected \"%s\" in: %s", needle, err->message);
}

START_TEST(test_geometry_errors)
{
  expect_geometry_error("L1D", 1000, 2, 64, "1000 bytes is not a positive multiple of ways x line (2 x 64 = 128 bytes)");
  expect_geometry_error("L2", 4096, 0, 64, "at least one way");
  expect_geometry_error("LLC", 8192, 4, 48, "line size 48 bytes is not a power of two");
  expect_geometry_error("L1I", 0, 4, 64, "0 bytes is not a positive multiple");
  expect_geometry_error("L1I", 4096, 4, 0, "line size 0 bytes");
  /* NULL error: still refused, nothing reported. */
  ck_assert_ptr_null(cache_new("L1D", 1000, 2, 64, NULL));
}
END_TEST

START_TEST(test_geometry_ok)
{
  g_autoptr(GError) err = NULL;
  g_autoptr(Cache) l1 = cache_new("L1D", 32 * 1024, 8, 64, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(cache_sets(l1), 64);
  ck_assert_uint_eq(cache_ways(l1), 8);
  g_autoptr(Cache) llc = cache_new("LLC", 12 * 1024 * 1024, 16, 64, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(cache_sets(llc), 12288);
  cache_free(NULL);
}
END_TEST

START_TEST(test_two_way_evicts_lru)
{
  g_autoptr(Cache) c = one_set(2);
  ck_assert(!cache_access(c, A));
  ck_assert(!cache_access(c, B));
  ck_assert(cache_access(c, A));
  ck_assert(cache_access(c, B));   /* order now B, A */
  ck_assert(!cache_access(c, C));  /* evicts A */
  ck_assert(!cache_contains(c, A));
  ck_assert(cache_contains(c, B));
  ck_assert(cache_contains(c, C));
  ck_assert(cache_access(c, B));   /* order B, C */
  ck_assert(!cache_access(c, A));  /* evicts C */
  ck_assert(!cache_contains(c, C));
  ck_assert(cache_contains(c, B));
}
END_TEST

START_TEST(test_lru_order_after_hits)
{
  g_autoptr(Cache) c = one_set(4);
  ck_assert(!cache_access(c, A));
  ck_assert(!cache_access(c, B));
  ck_assert(!cache_access(c, C));
  ck_assert(!cache_access(c, D));  /* MRU..LRU: D C B A */
  ck_assert(cache_access(c, A));   /* A D C B */
  ck_assert(cache_access(c, C));   /* C A D B */
  ck_assert(!cache_access(c, E));  /* E C A D, B out */
  ck_assert(!cache_contains(c, B));
  ck_assert(!cache_access(c, F));  /* F E C A, D out */
  ck_assert(!cache_contains(c, D));
  ck_assert(cache_contains(c, A));
  ck_assert(cache_contains(c, C));
  ck_assert(cache_contains(c, E));
  ck_assert(cache_access(c, A));   /* A F E C */
  ck_assert(!cache_access(c, B));  /* B A F E, C out */
  ck_assert(!cache_contains(c, C));
  ck_assert(cache_contains(c, E));
}
END_TEST

START_TEST(test_direct_mapped)
{
  g_autoptr(Cache) c = one_set(1);
  ck_assert(!cache_access(c, A));
  ck_assert(cache_access(c, A));
  ck_assert(!cache_access(c, B));
  ck_assert(!cache_contains(c, A));
}
END_TEST

START_TEST(test_non_power_of_two_sets)
{
  g_autoptr(GError) err = NULL;
  /* 384 bytes / (2 ways x 64 bytes) = 3 sets: line n goes to set n % 3. */
  g_autoptr(Cache) c = cache_new("L2", 384, 2, 64, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(cache_sets(c), 3);
  ck_assert(!cache_access(c, 0));
  ck_assert(!cache_access(c, 3));
  ck_assert(!cache_access(c, 1));
  ck_assert(!cache_access(c, 4));
  ck_assert(!cache_access(c, 2));
  ck_assert(!cache_access(c, 6));  /* set 0 is full: 0 goes */
  ck_assert(!cache_contains(c, 0));
  static const uint64_t kept[] = { 1, 2, 3, 4, 6 };
  for (unsigned i = 0; i < G_N_ELEMENTS(kept); i++)
    ck_assert_msg(cache_contains(c, kept[i]), "line %u lost", (unsigned)kept[i]);
  ck_assert(!cache_access(c, 7));  /* set 1: 1 goes */
  ck_assert(!cache_contains(c, 1));
  ck_assert(cache_contains(c, 4));
  ck_assert(cache_contains(c, 2));
}
END_TEST

START_TEST(test_power_of_two_index)
{
  g_autoptr(GError) err = NULL;
  /* 4 sets x 2 ways: lines 0, 4, 8 share set 0; 1 and 5 share set 1. */
  g_autoptr(Cache) c = cache_new("L1D", 512, 2, 64, &err);
  ck_assert_no_error(err);
  ck_assert_uint_eq(cache_sets(c), 4);
  cache_access(c, 0);
  cache_access(c, 4);
  cache_access(c, 1);
  cache_access(c, 5);
  cache_access(c, 8);  /* evicts 0 only */
  ck_assert(!cache_contains(c, 0));
  ck_assert(cache_contains(c, 4));
  ck_assert(cache_contains(c, 1));
  ck_assert(cache_contains(c, 5));
  ck_assert(cache_contains(c, 8));
  /* High line numbers index by their low bits. */
  ck_assert(!cache_access(c, (UINT64_C(1) << 58) + 2));
  ck_assert(cache_contains(c, (UINT64_C(1) << 58) + 2));
  ck_assert(!cache_contains(c, 2));
}
END_TEST

START_TEST(test_contains_keeps_lru)
{
  g_autoptr(Cache) c = one_set(2);
  cache_access(c, A);
  cache_access(c, B);              /* B A */
  ck_assert(cache_contains(c, A)); /* must not promote A */
  ck_assert(!cache_contains(c, C));
  ck_assert(!cache_contains(c, C)); /* and must not insert C */
  ck_assert(!cache_access(c, C));  /* evicts A, the LRU */
  ck_assert(!cache_contains(c, A));
  ck_assert(cache_contains(c, B));
}
END_TEST

START_TEST(test_fill)
{
  g_autoptr(Cache) c = one_set(2);
  cache_access(c, A);
  cache_access(c, B);  /* B A */
  ck_assert(!cache_fill(c, A)); /* present: not a use, order stays B A */
  cache_access(c, C);  /* evicts A */
  ck_assert(!cache_contains(c, A));
  ck_assert(cache_fill(c, D)); /* absent: inserted as MRU, D C, B out */
  ck_assert(cache_contains(c, D));
  ck_assert(!cache_contains(c, B));
  ck_assert(cache_access(c, D));
  ck_assert(cache_access(c, C));
}
END_TEST

/* A fill into a set with empty ways takes an empty way and evicts nothing,
 * also after an invalidation left a hole. */
START_TEST(test_fill_uses_empty_ways)
{
  g_autoptr(Cache) c = one_set(3);
  ck_assert(cache_fill(c, A));
  ck_assert(cache_fill(c, B));   /* B A - */
  cache_invalidate(c, A);        /* B - - */
  ck_assert(cache_fill(c, C));   /* C B - */
  ck_assert(cache_fill(c, D));   /* D C B */
  ck_assert(cache_contains(c, B));
  ck_assert(cache_contains(c, C));
  ck_assert(cache_fill(c, E));   /* E D C, B out */
  ck_assert(!cache_contains(c, B));
  ck_assert(!cache_fill(c, C));
}
END_TEST

START_TEST(test_invalidate)
{
  g_autoptr(Cache) c = one_set(3);
  cache_access(c, A);
  cache_access(c, B);
  cache_access(c, C);   /* C B A */
  cache_invalidate(c, B);
  ck_assert(!cache_contains(c, B));
  cache_invalidate(c, D);  /* absent: no-op */
  ck_assert(cache_contains(c, A));
  ck_assert(cache_contains(c, C));
  /* The freed way is used before the LRU line is evicted. */
  ck_assert(!cache_access(c, D));  /* D C A */
  ck_assert(cache_contains(c, A));
  ck_assert(!cache_access(c, E));  /* E D C, A out */
  ck_assert(!cache_contains(c, A));
  ck_assert(cache_contains(c, C));

  cache_invalidate_all(c);
  ck_assert(!cache_contains(c, C));
  ck_assert(!cache_contains(c, D));
  ck_assert(!cache_contains(c, E));
  ck_assert(!cache_access(c, E));
  ck_assert(cache_access(c, E));
}
END_TEST

/* Reference model: per way a line and a last-use time, victim = empty way
 * first, then the oldest use. */
typedef struct {
  uint64_t line;
  uint64_t used;
  gboolean valid;
} RefWay;

static int ref_find(RefWay *set, unsigned ways, uint64_t line)
{
  for (unsigned w = 0; w < ways; w++)
    if (set[w].valid && set[w].line == line)
      return (int)w;
  return -1;
}

static void ref_insert(RefWay *set, unsigned ways, uint64_t line, uint64_t now)
{
  unsigned victim = 0;
  for (unsigned w = 0; w < ways; w++) {
    if (!set[w].valid) {
      victim = w;
      break;
    }
    if (set[w].used < set[victim].used)
      victim = w;
  }
  set[victim] = (RefWay){ line, now, TRUE };
}

static const struct { uint64_t size; unsigned ways; } random_geo[] = {
  { 512, 2 }, { 384, 2 }, { 1024, 4 }, { 1280, 5 }, { 4096, 64 }, { 192, 1 }, { 2048, 8 },
  { 8192, 16 }, { 12288, 16 }, { 3072, 12 },  /* 4, 8, 16 ways have vector copies */
  { 11264, 11 }, { 20480, 20 }, { 30720, 24 }, { 18432, 24 },  /* 11 unrolled, 20 and 24 vector */
  { 24576, 12 }, { 6144, 24 }, { 15360, 20 }, { 256, 4 }, { 64, 1 },
  /* 64 sets and more: narrow tags line >> CACHE_TAG_SHIFT, inline */
  { 32768, 8 }, { 65536, 4 }, { 131072, 16 }, { 45056, 11 }, { 81920, 20 }, { 98304, 24 },
};

/* cache_access() and cache_fill(), or their copies that test a way count
 * first (4 and 16 in vectors, 11 unrolled), by turns: the same answers
 * whether the count matches the cache's or not. */
static gboolean access_by(Cache *c, uint64_t line, uint64_t now)
{
  switch (now % 4) {
  case 1:
    return cache_access_likely(c, line, 4);
  case 2:
    return cache_access_likely(c, line, 16);
  case 3:
    return cache_access_likely(c, line, 11);
  default:
    return cache_access(c, line);
  }
}

static gboolean fill_by(Cache *c, uint64_t line, uint64_t now)
{
  switch (now % 4) {
  case 1:
    return cache_fill_likely(c, line, 4);
  case 2:
    return cache_fill_likely(c, line, 16);
  case 3:
    return cache_fill_likely(c, line, 11);
  default:
    return cache_fill(c, line);
  }
}

/* `steps` random operations on lines base + [0, 3 x capacity) against the
 * reference model.  wide: the cache is widened first; at_step: the step at
 * which the lines jump to far_base (0: never). */
static void random_run(unsigned g, uint64_t base, gboolean wide, uint64_t far_base, unsigned at_step, unsigned steps,
                       guint32 seed)
{
  g_autoptr(GError) err = NULL;
  g_autoptr(Cache) c = cache_new("T", random_geo[g].size, random_geo[g].ways, 64, &err);
  ck_assert_no_error(err);
  if (wide)
    cache_widen(c);
  ck_assert_int_eq(cache_is_wide(c), wide);
  GRand *rng = g_rand_new_with_seed(seed);
  unsigned sets = cache_sets(c), ways = random_geo[g].ways;
  ck_assert_uint_eq((uint64_t)sets * ways * 64, random_geo[g].size);
  RefWay *ref = g_new0(RefWay, (gsize)sets * ways);
  uint64_t span = (uint64_t)sets * ways * 3;  /* lines drawn from 3x the capacity */
  uint64_t hits = 0, misses = 0;
  for (uint64_t now = 1; now <= steps; now++) {
    if (now == at_step)
      base = far_base;
    uint64_t line = g_rand_int_range(rng, 0, (gint32)span) + base;
    RefWay *set = ref + (line % sets) * ways;
    int w = ref_find(set, ways, line);
    switch (g_rand_int_range(rng, 0, 10)) {
    case 0:  /* contains */
      if (cache_contains(c, line) != (w >= 0))
        ck_abort_msg("geometry %u step %u line %" G_GUINT64_FORMAT ": contains wrong", g, (unsigned)now, line);
      break;
    case 1:  /* fill */
      if (fill_by(c, line, now) != (w < 0))
        ck_abort_msg("geometry %u step %u line %" G_GUINT64_FORMAT ": fill wrong", g, (unsigned)now, line);
      if (w < 0)
        ref_insert(set, ways, line, now);
      break;
    case 2:  /* invalidate */
      cache_invalidate(c, line);
      if (w >= 0)
        set[w].valid = FALSE;
      break;
    default: { /* access */
      gboolean hit = access_by(c, line, now);
      if (hit != (w >= 0))  /* (not ck_assert: Check records every passing assertion) */
        ck_abort_msg("geometry %u step %u line %" G_GUINT64_FORMAT ": cache says %s", g, (unsigned)now, line,
                     hit ? "hit" : "miss");
      if (w >= 0)
        set[w].used = now;
      else
        ref_insert(set, ways, line, now);
      if (hit)
        hits++;
      else
        misses++;
      break;
    }
    }
  }
  /* Every line the reference holds is in the cache, and nothing else. */
  for (uint64_t line = base; line < base + span; line++)
    if (cache_contains(c, line) != (ref_find(ref + (line % sets) * ways, ways, line) >= 0))
      ck_abort_msg("geometry %u line %" G_GUINT64_FORMAT ": contents differ at the end", g, line);
  ck_assert_uint_gt(hits, 0);
  ck_assert_uint_gt(misses, 0);
  g_free(ref);
  g_rand_free(rng);
}

START_TEST(test_random_against_reference)
{
  for (unsigned g = 0; g < G_N_ELEMENTS(random_geo); g++)
    random_run(g, 1000, FALSE, 0, 0, 20000, 42 + g);
}
END_TEST

/* The 64-bit layout gives the same answers. */
START_TEST(test_random_wide)
{
  for (unsigned g = 0; g < G_N_ELEMENTS(random_geo); g++)
    random_run(g, 1000, TRUE, 0, 0, 20000, 42 + g);
}
END_TEST

/* Lines whose narrow tags (line / sets, line >> CACHE_TAG_SHIFT with 64
 * sets or more) reach past 32 bits: the cache turns wide mid-run, with
 * lines of both kinds in its sets, and keeps its contents. */
START_TEST(test_random_turns_wide)
{
  for (unsigned g = 0; g < G_N_ELEMENTS(random_geo); g++) {
    g_autoptr(Cache) c = cache_new("T", random_geo[g].size, random_geo[g].ways, 64, NULL);
    uint64_t sets = cache_sets(c), span = sets * random_geo[g].ways * 3;
    /* The largest narrow tag is UINT32_MAX - 1: lines up to
     * (UINT32_MAX - 1) * k + k - 1 stay narrow, k lines a tag: the sets
     * (tag line / sets), but 2^CACHE_TAG_SHIFT for a power of two past
     * that (tag line >> CACHE_TAG_SHIFT). */
    uint64_t k = (sets & (sets - 1)) == 0 ? MIN(sets, UINT64_C(1) << CACHE_TAG_SHIFT) : sets;
    uint64_t last_narrow = (uint64_t)UINT32_MAX * k - 1;
    ck_assert(!cache_access(c, last_narrow));
    ck_assert(!cache_is_wide(c));
    ck_assert(cache_contains(c, last_narrow));
    ck_assert(!cache_contains(c, last_narrow + 1));
    ck_assert(!cache_is_wide(c));
    ck_assert(cache_fill(c, last_narrow + 1));
    ck_assert(cache_is_wide(c));
    /* (with one set of one way, the fill evicted it) */
    ck_assert_int_eq(cache_contains(c, last_narrow), sets > 1 || random_geo[g].ways > 1);
    ck_assert(cache_access(c, last_narrow + 1));
    /* Random runs across the boundary, and jumping far beyond it. */
    random_run(g, last_narrow - span / 2, FALSE, 0, 0, 6000, 7 + g);
    random_run(g, last_narrow - span, FALSE, (UINT64_C(1) << 58) - span / 2, 3000, 6000, 9 + g);
    random_run(g, 1000, FALSE, UINT64_MAX / 2 - span, 4000, 6000, 11 + g);
  }
}
END_TEST

/* The same operations on a narrow and a wide cache leave the same lines in
 * the same recency order: the next misses of each set evict in one order. */
/* cache_host_set(), what the host prefetch touches: the tags of the line's
 * set, line % sets, in either layout, on the inline path (a narrow cache of
 * 64 sets or more, a line below line_limit) and the other one (fewer sets,
 * a set count that is not a power of two, a line too large for a narrow
 * tag, a wide cache). */
START_TEST(test_host_set)
{
  static const struct { uint64_t size; unsigned ways; } geo[] = {
    {256 << 10, 4}, {8 << 20, 16}, {11 << 20, 11}, {30 << 20, 24}, {20 << 16, 20}, {16 << 10, 8}, {2 << 10, 2},
  };
  static const uint64_t lines[] = {
    0, 1, 63, 64, 4095, 4097, 123456789, (uint64_t)CACHE_EMPTY32 << CACHE_TAG_SHIFT,
    ((uint64_t)CACHE_EMPTY32 << CACHE_TAG_SHIFT) - 1, UINT64_C(1) << 50, UINT64_MAX >> 6,
  };
  for (size_t g = 0; g < G_N_ELEMENTS(geo); g++) {
    for (int wide = 0; wide < 2; wide++) {
      g_autoptr(GError) err = NULL;
      g_autoptr(Cache) c = cache_new("T", geo[g].size, geo[g].ways, 64, &err);
      ck_assert_no_error(err);
      if (wide)
        cache_widen(c);
      uint64_t sets = cache_sets(c), ways = cache_ways(c);
      for (size_t i = 0; i < G_N_ELEMENTS(lines); i++) {
        uint64_t line = lines[i] + g; /* other set indexes for each geometry */
        unsigned bytes = 0;
        const void *set = cache_host_set(c, line, &bytes);
        if (wide) {
          ck_assert_ptr_eq(set, c->tags + (line % sets) * ways);
          ck_assert_uint_eq(bytes, ways * 8);
        } else {
          ck_assert_ptr_eq(set, c->tags32 + (line % sets) * ways);
          ck_assert_uint_eq(bytes, ways * 4);
        }
        cache_host_prefetch(c, line); /* touches only that: valgrind checks */
      }
    }
  }
}
END_TEST

START_TEST(test_layouts_agree)
{
  static const unsigned ways[] = { 1, 2, 3, 4, 5, 8, 11, 12, 16, 20, 24, 32, 64 };
  for (unsigned i = 0; i < G_N_ELEMENTS(ways); i++) {
    unsigned sets = i % 2 ? 6 : 8;
    g_autoptr(Cache) n = cache_new("N", (uint64_t)sets * ways[i] * 64, ways[i], 64, NULL);
    g_autoptr(Cache) w = cache_new("W", (uint64_t)sets * ways[i] * 64, ways[i], 64, NULL);
    cache_widen(w);
    GRand *rng = g_rand_new_with_seed(ways[i]);
    uint64_t span = (uint64_t)sets * ways[i] * 2;
    for (unsigned k = 0; k < 5000; k++) {
      uint64_t line = g_rand_int_range(rng, 0, (gint32)span);
      int op = g_rand_int_range(rng, 0, 8);
      gboolean same = TRUE;
      if (op == 0)
        cache_invalidate(n, line), cache_invalidate(w, line);
      else if (op == 1)
        same = cache_fill(n, line) == cache_fill(w, line);
      else
        same = cache_access(n, line) == cache_access(w, line);
      if (!same)
        ck_abort_msg("%u ways, step %u: the layouts differ", ways[i], k);
    }
    /* Fresh lines push every set out way by way, LRU first. */
    for (uint64_t k = 0; k < (uint64_t)sets * ways[i]; k++) {
      uint64_t line = span + k;
      if (cache_access(n, line) || cache_access(w, line))
        ck_abort_msg("%u ways: fresh line %" G_GUINT64_FORMAT " hit", ways[i], line);
      for (uint64_t old = line % sets; old < span; old += sets)
        if (cache_contains(n, old) != cache_contains(w, old))
          ck_abort_msg("%u ways: line %" G_GUINT64_FORMAT " evicted from one layout only", ways[i], old);
    }
    g_rand_free(rng);
  }
}
END_TEST

static Suite *cache_suite(void)
{
  Suite *s = suite_create("cache");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_geometry_errors);
  tcase_add_test(tc, test_geometry_ok);
  tcase_add_test(tc, test_two_way_evicts_lru);
  tcase_add_test(tc, test_lru_order_after_hits);
  tcase_add_test(tc, test_direct_mapped);
  tcase_add_test(tc, test_non_power_of_two_sets);
  tcase_add_test(tc, test_power_of_two_index);
  tcase_add_test(tc, test_contains_keeps_lru);
  tcase_add_test(tc, test_fill);
  tcase_add_test(tc, test_fill_uses_empty_ways);
  tcase_add_test(tc, test_invalidate);
  tcase_add_test(tc, test_random_against_reference);
  tcase_add_test(tc, test_random_wide);
  tcase_add_test(tc, test_random_turns_wide);
  tcase_add_test(tc, test_layouts_agree);
  tcase_add_test(tc, test_host_set);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(cache_suite)
