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
#include <stdlib.h>

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

/* Assert a GError-returning call succeeded, printing the message if not. */
#define ck_assert_no_error(err) \
  ck_assert_msg((err) == NULL, "unexpected error: %s", (err) ? (err)->message : "")

#endif
