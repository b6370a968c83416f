#include "config.h"
#include "testutil.h"
static Suite *s(void) { return suite_create("placeholder"); }
TEST_MAIN(s)
