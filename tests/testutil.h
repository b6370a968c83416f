/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testutil.h - shared bits of the Check unit tests.
 *
 * Each test program is one suite; TEST_MAIN runs it and prints Check's
 * summary line.  Run one test under gdb with CK_FORK=no.
 *
 * Timeouts.  Check kills a test after 4 s unless told otherwise, and
 * `make check -j8` on a busy two-core host takes longer than that for
 * tests that need well under a second alone.  A timeout here only catches
 * a test that hangs, so every test case of every suite gets the same
 * generous one, TEST_TIMEOUT_S, set here and nowhere else: TEST_MAIN
 * gives it to Check as CK_DEFAULT_TIMEOUT before the suite is built
 * (tcase_create() reads it), unless the environment already sets one.
 * Check multiplies it by CK_TIMEOUT_MULTIPLIER if that is set (for slow
 * builds: valgrind, sanitizers).  Suites do not call tcase_set_timeout().
 */
#ifndef MMUSIM_TESTUTIL_H
#define MMUSIM_TESTUTIL_H

#include <check.h>
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Seconds before Check kills one test (see above). */
#define TEST_TIMEOUT_S "120"

#define TEST_MAIN(suite_fn)                            \
  int main(void)                                       \
  {                                                    \
    setenv("CK_DEFAULT_TIMEOUT", TEST_TIMEOUT_S, 0);   \
    SRunner *sr = srunner_create(suite_fn());          \
    srunner_run_all(sr, CK_NORMAL);                    \
    int failed = srunner_ntests_failed(sr);            \
    srunner_free(sr);                                  \
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;       \
  }

/* Assertions for loops of many steps.  Every Check assertion that holds
 * still records its file and line (_mark_point(), a write to the pipe or
 * file Check reads back: one system call), so a loop of a few hundred
 * thousand assertions spends seconds in the kernel, most of the run time
 * of the twin tests.  These test the condition first and call Check only
 * when it fails, with the same message; nothing is done while it holds.
 * The arguments are evaluated again on failure: no side effects. */
#define loop_assert(expr) \
  do { if (G_UNLIKELY(!(expr))) ck_assert(expr); } while (0)
#define loop_assert_msg(expr, ...) \
  do { if (G_UNLIKELY(!(expr))) ck_assert_msg(expr, __VA_ARGS__); } while (0)
#define loop_assert_int_eq(a, b) \
  do { if (G_UNLIKELY((intmax_t)(a) != (intmax_t)(b))) ck_assert_int_eq(a, b); } while (0)
#define loop_assert_uint_eq(a, b) \
  do { if (G_UNLIKELY((uintmax_t)(a) != (uintmax_t)(b))) ck_assert_uint_eq(a, b); } while (0)
#define loop_assert_mem_eq(a, b, len) \
  do { if (G_UNLIKELY(memcmp(a, b, len) != 0)) ck_assert_mem_eq(a, b, len); } while (0)

/* Assert a GError-returning call succeeded, printing the message if not. */
#define ck_assert_no_error(err) \
  ck_assert_msg((err) == NULL, "unexpected error: %s", (err) ? (err)->message : "")

#endif
