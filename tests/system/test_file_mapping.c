/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of file mappings on a whole machine: a file VMA never gets a
 * transparent huge page; a made-up (ondemand) mapping fills only holes and
 * leaves a recorded mapping as it is.
 */
#include "config.h"
#include "machine_fixture.h"

static Counters run_text(const char *text)
{
  Machine *m = fixture_machine("skylake", NULL); /* thp.enabled=always */
  GError *err = NULL;
  TraceSource *src = text_source_from_string("t.txt", text, &err);
  ck_assert_no_error(err);
  EngineResult res;
  ck_assert(engine_run(m, src, NULL, &res, &err));
  Counters c = res.counted;
  engine_result_clear(&res);
  trace_source_free(src);
  machine_free(m);
  return c;
}

/* A file mapping faults in base pages where an anonymous one takes a
 * huge page; a made-up mapping over it leaves it a file mapping. */
START_TEST(test_file_mapping_no_thp)
{
  Counters anon = run_text("mmap 0x7f0000000000 4M rw\nW 0x7f0000000000 8\nW 0x7f0000001000 8\n");
  ck_assert_uint_eq(anon.c[CTR_THP_FAULT_ALLOC], 1);
  ck_assert_uint_eq(anon.c[CTR_PAGE_FAULTS], 1);
  Counters file = run_text("mmap 0x7f0000000000 4M rw file\nmmap 0x7f0000000000 4M rwx ondemand\n"
                           "W 0x7f0000000000 8\nW 0x7f0000001000 8\nX 0x7f0000002000 4\n");
  ck_assert_uint_eq(file.c[CTR_THP_FAULT_ALLOC], 0);
  ck_assert_uint_eq(file.c[CTR_PAGE_FAULTS], 3); /* two base-page faults and the SIGSEGV below */
  /* The fetch: the file mapping's rw, not the made-up rwx, decides. */
  ck_assert_uint_eq(file.c[CTR_SEGV], 1);
  /* In a hole, the made-up mapping maps. */
  Counters hole = run_text("mmap 0x7f0000000000 4K r file\nmmap 0x7f0000000000 2M rwx ondemand\nX 0x7f0000002000 4\n");
  ck_assert_uint_eq(hole.c[CTR_SEGV], 0);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("file_mapping");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_file_mapping_no_thp);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(suite)
