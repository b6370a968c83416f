/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_stats.c - the counter table: every counter's id is its visible name
 * spelled as a C constant, so that a reader who meets `mshr_stall_cycles`
 * in a report finds CTR_MSHR_STALL_CYCLES in the code.
 */
#include "config.h"
#include "testutil.h"

#include <string.h>

#include "stats.h"

/* Each counter's id as written in counters.def, in its order. */
static const char *const id_strings[] = {
#define C(id, name, flags, help) "CTR_" #id,
#include "counters.def"
#undef C
};

/* "CTR_" + name upper-cased, every character that is not a letter or a
 * digit made '_': "L1-dcache-loads" -> "CTR_L1_DCACHE_LOADS". */
static char *id_from_name(const char *name)
{
  GString *id = g_string_new("CTR_");
  for (const char *p = name; *p; p++)
    g_string_append_c(id, g_ascii_isalnum(*p) ? g_ascii_toupper(*p) : '_');
  return g_string_free(id, FALSE);
}

START_TEST(test_id_is_name)
{
  ck_assert_int_eq(G_N_ELEMENTS(id_strings), N_COUNTERS);
  for (int i = 0; i < N_COUNTERS; i++) {
    const CounterDef *d = counter_def((CounterId)i);
    ck_assert_int_eq(d->id, i);
    g_autofree char *want = id_from_name(d->name);
    ck_assert_msg(strcmp(id_strings[i], want) == 0, "counter \"%s\" has id %s, want %s", d->name, id_strings[i], want);
  }
}
END_TEST

START_TEST(test_id_from_name)
{
  g_autofree char *a = id_from_name("L1-dcache-loads");
  g_autofree char *b = id_from_name("thp_fault_alloc");
  ck_assert_str_eq(a, "CTR_L1_DCACHE_LOADS");
  ck_assert_str_eq(b, "CTR_THP_FAULT_ALLOC");
}
END_TEST

START_TEST(test_lookup_by_name)
{
  for (int i = 0; i < N_COUNTERS; i++) {
    const CounterDef *d = counter_def((CounterId)i);
    ck_assert_ptr_eq(counter_lookup(d->name), d);
  }
  ck_assert_ptr_null(counter_lookup("no_such_counter"));
}
END_TEST

static Suite *stats_suite(void)
{
  Suite *s = suite_create("stats");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, test_id_from_name);
  tcase_add_test(tc, test_id_is_name);
  tcase_add_test(tc, test_lookup_by_name);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(stats_suite)
