#include "config.h"
#include "testutil.h"
static Suite *thp_suite(void) { Suite *s = suite_create("thp"); return s; }
TEST_MAIN(thp_suite)
