/*
 * testutil.h - shared bits of the Check unit tests.
 *
 * Each test program is one suite; TEST_MAIN runs it and prints Check's
 * summary line.  Run one test under gdb with CK_FORK=no.
 */
#ifndef MMUSIM_TESTUTIL_H
#define MMUSIM_TESTUTIL_H

#include <check.h>
#include <glib.h>
#include <stdlib.h>

#define TEST_MAIN(suite_fn)                            \
  int main(void)                                       \
  {                                                    \
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
