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

START_TEST(test_random_against_reference)
{
  static const struct { uint64_t size; unsigned ways; } geo[] = {
    { 512, 2 }, { 384, 2 }, { 1024, 4 }, { 1280, 5 }, { 4096, 64 }, { 192, 1 }, { 2048, 8 },
    { 8192, 16 }, { 12288, 16 }, { 3072, 12 },  /* 4, 8, 16 ways have unrolled copies */
    { 11264, 11 }, { 20480, 20 }, { 30720, 24 }, { 18432, 24 },  /* and 11, 20, 24 */
  };
  GRand *rng = g_rand_new_with_seed(42);
  for (unsigned g = 0; g < G_N_ELEMENTS(geo); g++) {
    g_autoptr(GError) err = NULL;
    g_autoptr(Cache) c = cache_new("T", geo[g].size, geo[g].ways, 64, &err);
    ck_assert_no_error(err);
    unsigned sets = cache_sets(c), ways = geo[g].ways;
    ck_assert_uint_eq((uint64_t)sets * ways * 64, geo[g].size);
    RefWay *ref = g_new0(RefWay, (gsize)sets * ways);
    uint64_t span = (uint64_t)sets * ways * 3;  /* lines drawn from 3x the capacity */
    uint64_t hits = 0, misses = 0;
    for (uint64_t now = 1; now <= 20000; now++) {
      uint64_t line = g_rand_int_range(rng, 0, (gint32)span) + 1000;
      RefWay *set = ref + (line % sets) * ways;
      int w = ref_find(set, ways, line);
      switch (g_rand_int_range(rng, 0, 10)) {
      case 0:  /* contains */
        ck_assert_int_eq(cache_contains(c, line), w >= 0);
        break;
      case 1:  /* fill */
        cache_fill(c, line);
        if (w < 0)
          ref_insert(set, ways, line, now);
        break;
      case 2:  /* invalidate */
        cache_invalidate(c, line);
        if (w >= 0)
          set[w].valid = FALSE;
        break;
      default: { /* access */
        gboolean hit = cache_access(c, line);
        ck_assert_msg(hit == (w >= 0), "geometry %u step %u line %u: cache says %s",
                      g, (unsigned)now, (unsigned)line, hit ? "hit" : "miss");
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
    for (uint64_t line = 1000; line < 1000 + span; line++)
      ck_assert_int_eq(cache_contains(c, line), ref_find(ref + (line % sets) * ways, ways, line) >= 0);
    ck_assert_uint_gt(hits, 0);
    ck_assert_uint_gt(misses, 0);
    g_free(ref);
  }
  g_rand_free(rng);
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
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(cache_suite)
