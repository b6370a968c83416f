/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_text.c - the text trace reader and writer: every record kind, the
 * process/thread context, error messages a user can act on, streaming from a
 * file larger than the read buffer, and text -> records -> text round trips.
 */
#include "config.h"
#include "trace_testutil.h"
#include "text.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static GArray *parse_string(const char *text, GError **error)
{
  g_autoptr(TraceSource) src = text_source_from_string("t.txt", text, error);
  ck_assert_ptr_nonnull(src);
  return read_all(src, error);
}

static GArray *parse_ok(const char *text)
{
  GError *err = NULL;
  GArray *recs = parse_string(text, &err);
  ck_assert_no_error(err);
  return recs;
}


static char *srcdir_path(const char *rel)
{
  g_autofree char *dir = g_path_get_dirname(__FILE__);
  return g_build_filename(dir, "..", "..", rel, NULL);
}

static char *read_text_file(const char *path)
{
  char *text = NULL;
  GError *err = NULL;
  g_file_get_contents(path, &text, NULL, &err);
  ck_assert_no_error(err);
  return text;
}

/* ---- every record kind -------------------------------------------------- */

START_TEST(parse_accesses)
{
  GArray *r = parse_ok("R 0x7f0000001000 8\n"
                       "W 4096 4 +12\n"
                       "D 0x10 1\n"
                       "X 0x400000 4K +2K\n"
                       "  R\t0x1ff 16   # trailing comment\n");
  ck_assert_uint_eq(r->len, 5);
  TraceRecord *a = REC(r, 0);
  ck_assert_uint_eq(a->type, REC_ACCESS);
  ck_assert_uint_eq(a->kind, ACC_LOAD);
  ck_assert_uint_eq(a->addr, 0x7f0000001000ULL);
  ck_assert_uint_eq(a->size, 8);
  ck_assert_uint_eq(a->gap, 0);
  ck_assert_uint_eq(a->pid, 1);
  ck_assert_uint_eq(a->tid, 1);
  ck_assert_uint_eq(REC(r, 1)->kind, ACC_STORE);
  ck_assert_uint_eq(REC(r, 1)->addr, 4096);
  ck_assert_uint_eq(REC(r, 1)->size, 4);
  ck_assert_uint_eq(REC(r, 1)->gap, 12);
  ck_assert_uint_eq(REC(r, 2)->kind, ACC_DEP_LOAD);
  ck_assert_uint_eq(REC(r, 2)->size, 1);
  ck_assert_uint_eq(REC(r, 3)->kind, ACC_IFETCH);
  ck_assert_uint_eq(REC(r, 3)->size, 4096); /* sizes: K = 1024 */
  ck_assert_uint_eq(REC(r, 3)->gap, 2000);  /* counts: K = 1000 */
  ck_assert_uint_eq(REC(r, 4)->addr, 0x1ff);
  ck_assert_uint_eq(REC(r, 4)->size, 16);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(parse_mapping_events)
{
  GArray *r = parse_ok("mmap 0x7f0000000000 64M rw\n"
                       "mmap 0x7ffffffde000 132K rw stack\n"
                       "mmap 0x7e0000000000 1G rwx hugetlb shared\n"
                       "mmap 0x1000 4096 none\n"
                       "munmap 0x7f0000000000 2M\n"
                       "mprotect 0x7f0000000000 0x200000 r\n"
                       "mprotect 0x7f0000000000 8K wx\n"
                       "mmap 0x7c0000000000 2G rw hugetlb1g\n");
  ck_assert_uint_eq(r->len, 8);
  /* hugetlb1g is MAP_HUGETLB | MAP_HUGE_1GB: both bits. */
  ck_assert_uint_eq(REC(r, 7)->flags, MAP_F_HUGETLB | MAP_F_HUGETLB_1G);
  ck_assert_uint_eq(REC(r, 7)->len, 2ULL << 30);
  TraceRecord *m = REC(r, 0);
  ck_assert_uint_eq(m->type, REC_MMAP);
  ck_assert_uint_eq(m->addr, 0x7f0000000000ULL);
  ck_assert_uint_eq(m->len, 64ULL << 20);
  ck_assert_uint_eq(m->prot, PROT_R | PROT_W);
  ck_assert_uint_eq(m->flags, 0);
  ck_assert_uint_eq(REC(r, 1)->len, 132 * 1024);
  ck_assert_uint_eq(REC(r, 1)->flags, MAP_F_STACK);
  ck_assert_uint_eq(REC(r, 2)->len, 1ULL << 30);
  ck_assert_uint_eq(REC(r, 2)->prot, PROT_R | PROT_W | PROT_X);
  ck_assert_uint_eq(REC(r, 2)->flags, MAP_F_HUGETLB | MAP_F_SHARED);
  ck_assert_uint_eq(REC(r, 3)->prot, 0);
  ck_assert_uint_eq(REC(r, 3)->len, 4096);
  ck_assert_uint_eq(REC(r, 4)->type, REC_MUNMAP);
  ck_assert_uint_eq(REC(r, 4)->len, 2ULL << 20);
  ck_assert_uint_eq(REC(r, 5)->type, REC_MPROTECT);
  ck_assert_uint_eq(REC(r, 5)->len, 2ULL << 20);
  ck_assert_uint_eq(REC(r, 5)->prot, PROT_R);
  ck_assert_uint_eq(REC(r, 6)->prot, PROT_W | PROT_X);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(parse_policy_events)
{
  GArray *r = parse_ok("madvise 0x7f0000000000 64M hugepage\n"
                       "madvise 0x7f0000000000 4K nohugepage\n"
                       "madvise 0x7f0000000000 4K dontneed\n"
                       "madvise 0x7f0000000000 2M collapse\n"
                       "prctl thp_disable 1\n"
                       "prctl thp_disable 0\n"
                       "mempolicy 0x7f0000000000 64M interleave:0-3,5\n"
                       "mempolicy 0x7f0000000000 64M local\n"
                       "mempolicy 0x7f0000000000 64M bind:2\n"
                       "mempolicy 0x7f0000000000 64M preferred:63\n"
                       "mempolicy 0x7f0000000000 64M weighted_interleave:0,1,62-63\n"
                       "mempolicy process interleave:0-3\n"
                       "mempolicy\tprocess  local # set_mempolicy(MPOL_DEFAULT)\n");
  ck_assert_uint_eq(r->len, 13);
  ck_assert_uint_eq(REC(r, 0)->type, REC_MADVISE);
  ck_assert_int_eq(REC(r, 0)->arg, ADV_HUGEPAGE);
  ck_assert_int_eq(REC(r, 1)->arg, ADV_NOHUGEPAGE);
  ck_assert_int_eq(REC(r, 2)->arg, ADV_DONTNEED);
  ck_assert_int_eq(REC(r, 3)->arg, ADV_COLLAPSE);
  ck_assert_uint_eq(REC(r, 4)->type, REC_PRCTL);
  ck_assert_int_eq(REC(r, 4)->arg, PRCTL_THP_DISABLE);
  ck_assert_uint_eq(REC(r, 4)->arg2, 1);
  ck_assert_uint_eq(REC(r, 5)->arg2, 0);
  TraceRecord *p = REC(r, 6);
  ck_assert_uint_eq(p->type, REC_MEMPOLICY);
  ck_assert_int_eq(p->arg, MPOL_INTERLEAVE);
  ck_assert_uint_eq(p->arg2, 0x2f); /* nodes 0,1,2,3,5 */
  ck_assert_uint_eq(p->len, 64ULL << 20);
  ck_assert_int_eq(REC(r, 7)->arg, MPOL_DEFAULT_LOCAL);
  ck_assert_uint_eq(REC(r, 7)->arg2, 0);
  ck_assert_int_eq(REC(r, 8)->arg, MPOL_BIND);
  ck_assert_uint_eq(REC(r, 8)->arg2, 4);
  ck_assert_int_eq(REC(r, 9)->arg, MPOL_PREFERRED);
  ck_assert_uint_eq(REC(r, 9)->arg2, 1ULL << 63);
  ck_assert_int_eq(REC(r, 10)->arg, MPOL_WEIGHTED_INTERLEAVE);
  ck_assert_uint_eq(REC(r, 10)->arg2, 0xc000000000000003ULL);
  ck_assert_uint_eq(REC(r, 10)->flags, 0); /* mbind of a range */
  /* set_mempolicy: the process's policy, no range. */
  p = REC(r, 11);
  ck_assert_uint_eq(p->type, REC_MEMPOLICY);
  ck_assert_uint_eq(p->flags, MPOL_F_PROCESS);
  ck_assert_int_eq(p->arg, MPOL_INTERLEAVE);
  ck_assert_uint_eq(p->arg2, 0xf);
  ck_assert_uint_eq(p->addr, 0);
  ck_assert_uint_eq(p->len, 0);
  ck_assert_uint_eq(REC(r, 12)->flags, MPOL_F_PROCESS);
  ck_assert_int_eq(REC(r, 12)->arg, MPOL_DEFAULT_LOCAL);
  g_array_free(r, TRUE);
}
END_TEST

/* The policy grammar is the setting's (mempolicy_syntax.c): lists in any
 * order, and preferred takes any list that names one node. */
START_TEST(parse_policy_grammar_of_setting)
{
  GArray *r = parse_ok("mempolicy process bind:5,0-3\n"
                       "mempolicy process preferred:2-2\n"
                       "mempolicy process interleave:007\n");
  ck_assert_uint_eq(r->len, 3);
  ck_assert_uint_eq(REC(r, 0)->arg2, 0x2f);
  ck_assert_int_eq(REC(r, 1)->arg, MPOL_PREFERRED);
  ck_assert_uint_eq(REC(r, 1)->arg2, 0x4);
  ck_assert_uint_eq(REC(r, 2)->arg2, 0x80);
  g_array_free(r, TRUE);
}
END_TEST

/* The mode flag =balancing (MPOL_F_NUMA_BALANCING) of mbind and
 * set_mempolicy: in the record's flags, and written back. */
START_TEST(parse_policy_balancing_flag)
{
  GArray *r = parse_ok("mempolicy 0x7f0000000000 64M bind=balancing:0-1\n"
                       "mempolicy process bind=balancing:2\n"
                       "mempolicy process bind:2\n");
  ck_assert_uint_eq(r->len, 3);
  ck_assert_int_eq(REC(r, 0)->arg, MPOL_BIND);
  ck_assert_uint_eq(REC(r, 0)->arg2, 0x3);
  ck_assert_uint_eq(REC(r, 0)->flags, MPOL_F_BALANCING);
  ck_assert_uint_eq(REC(r, 1)->flags, MPOL_F_PROCESS | MPOL_F_BALANCING);
  ck_assert_uint_eq(REC(r, 2)->flags, MPOL_F_PROCESS);
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint i = 0; i < r->len; i++) {
    text_format_record(REC(r, i), out);
    g_string_append_c(out, '\n');
  }
  ck_assert_str_eq(out->str, "mempolicy 0x7f0000000000 64M bind=balancing:0-1\n"
                             "mempolicy process bind=balancing:2\n"
                             "mempolicy process bind:2\n");
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(parse_compute_roi_and_context)
{
  GArray *r = parse_ok("# mmusim text trace v1\n"
                       "\n"
                       "compute 1000\n"
                       "process 7\n"
                       "R 0x1000 8\n"
                       "thread 3 cpu 2\n"
                       "roi begin\n"
                       "W 0x2000 8\n"
                       "thread 4\n"
                       "compute 2M\n"
                       "process 8\n"
                       "roi end\n");
  ck_assert_uint_eq(r->len, 10);
  ck_assert_uint_eq(REC(r, 0)->type, REC_COMPUTE);
  ck_assert_uint_eq(REC(r, 0)->len, 1000);
  ck_assert_uint_eq(REC(r, 0)->pid, 1); /* defaults before any process line */
  ck_assert_uint_eq(REC(r, 0)->tid, 1);
  /* `process 7` announces thread 1 of process 7, unplaced. */
  ck_assert_uint_eq(REC(r, 1)->type, REC_THREAD);
  ck_assert_uint_eq(REC(r, 1)->pid, 7);
  ck_assert_uint_eq(REC(r, 1)->tid, 1);
  ck_assert_int_eq(REC(r, 1)->arg, -1);
  ck_assert_uint_eq(REC(r, 2)->pid, 7);
  ck_assert_uint_eq(REC(r, 2)->tid, 1);
  ck_assert_uint_eq(REC(r, 3)->type, REC_THREAD);
  ck_assert_uint_eq(REC(r, 3)->pid, 7);
  ck_assert_uint_eq(REC(r, 3)->tid, 3);
  ck_assert_int_eq(REC(r, 3)->arg, 2);
  ck_assert_uint_eq(REC(r, 4)->type, REC_ROI_BEGIN);
  ck_assert_uint_eq(REC(r, 4)->tid, 3);
  ck_assert_uint_eq(REC(r, 5)->tid, 3);
  ck_assert_int_eq(REC(r, 6)->arg, -1);
  ck_assert_uint_eq(REC(r, 6)->tid, 4);
  ck_assert_uint_eq(REC(r, 7)->len, 2000000);
  ck_assert_uint_eq(REC(r, 7)->tid, 4);
  ck_assert_uint_eq(REC(r, 8)->pid, 8);
  ck_assert_uint_eq(REC(r, 8)->tid, 1); /* process resets the thread */
  ck_assert_uint_eq(REC(r, 9)->type, REC_ROI_END);
  ck_assert_uint_eq(REC(r, 9)->pid, 8);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(line_endings_and_empty_input)
{
  GArray *r = parse_ok("R 0x10 8\r\nW 0x20 8\r\n\r\nR 0x30 8");
  ck_assert_uint_eq(r->len, 3);
  ck_assert_uint_eq(REC(r, 2)->addr, 0x30);
  g_array_free(r, TRUE);
  r = parse_ok("");
  ck_assert_uint_eq(r->len, 0);
  g_array_free(r, TRUE);
  r = parse_ok("# only a comment\n   \n\t# another\n#R 0x10 8\n");
  ck_assert_uint_eq(r->len, 0);
  g_array_free(r, TRUE);
  r = parse_ok("R 0x10 8#glued comment\n");
  ck_assert_uint_eq(r->len, 1);
  ck_assert_uint_eq(REC(r, 0)->size, 8);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(limits_accepted)
{
  /* The last byte below 2^57, and the last page. */
  GArray *r = parse_ok("R 0x1ffffffffffffff 1\n"
                       "R 0x1fffffffffff000 4096\n"
                       "mmap 0x1fffffffffff000 4K r\n"
                       "thread 4294967295 cpu 2147483647\n");
  ck_assert_uint_eq(r->len, 4);
  ck_assert_uint_eq(REC(r, 0)->addr, (1ULL << 57) - 1);
  ck_assert_uint_eq(REC(r, 3)->tid, UINT32_MAX);
  ck_assert_int_eq(REC(r, 3)->arg, INT32_MAX);
  g_array_free(r, TRUE);
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

typedef struct {
  const char *text;
  const char *fragments[4]; /* all must appear in the message */
} BadCase;

static const BadCase bad_cases[] = {
  { "R 0x7f0000001000 8\nR 0xZZ 8\n", { "t.txt:2: ", "bad address", "'0xZZ'", "0x-hex" } },
  { "R 12ab 8\n", { "t.txt:1:", "'12ab'" } },
  { "R 99999999999999999999 8\n", { "t.txt:1:", "'99999999999999999999'" } },
  { "# c\n\nR 0x200000000000000 8\n", { "t.txt:3:", "57-bit", "'0x200000000000000'", "below 2^57" } },
  { "R 0x1ffffffffffffff 2\n", { "t.txt:1:", "beyond the 57-bit", "'2'" } },
  { "W 0x1000 0\n", { "t.txt:1:", "bad access size", "'0'", "1..4096" } },
  { "W 0x1000 4097\n", { "t.txt:1:", "'4097'", "1..4096" } },
  { "W 0x1000 8x\n", { "t.txt:1:", "'8x'", "1..4096" } },
  { "R 0x1000\n", { "t.txt:1:", "missing access size", "'0x1000'", "1..4096" } },
  { "R\n", { "t.txt:1:", "missing address", "'R'" } },
  { "R 0x1000 8 12\n", { "t.txt:1:", "bad gap", "'12'", "+N" } },
  { "R 0x1000 8 +1 extra\n", { "t.txt:1:", "unexpected text", "'extra'" } },
  { "R 0x1000 8 +5000000000\n", { "t.txt:1:", "'+5000000000'", "4294967295" } },
  { "r 0x1000 8\n", { "t.txt:1:", "upper case", "'r'" } },
  { "load 0x1000 8\n", { "t.txt:1:", "unknown record", "'load'", "mmap" } },
  { "mmap 0x7f0000000000 64M rwz\n", { "t.txt:1:", "bad protection", "'rwz'", "rwx" } },
  { "mmap 0x7f0000000000 64M wr\n", { "t.txt:1:", "bad protection", "'wr'" } },
  { "mmap 0x7f0000000000 64M\n", { "t.txt:1:", "missing protection", "'64M'" } },
  { "mmap 0x7f0000000000 64M rw huge\n", { "t.txt:1:", "unknown mmap flag", "'huge'", "hugetlb" } },
  { "mmap 0x7f0000000000 64M rw stack stack\n", { "t.txt:1:", "twice", "'stack'" } },
  { "mmap 0x7f0000000000 1G rw hugetlb1g hugetlb1g\n", { "t.txt:1:", "twice", "'hugetlb1g'" } },
  { "mmap 0x7f0000000000 1G rw hugetlb hugetlb1g\n", { "t.txt:1:", "exclude each other", "'hugetlb1g'", "hugetlb1g" } },
  { "mmap 0x7f0000000000 1G rw hugetlb1g hugetlb\n", { "t.txt:1:", "exclude each other", "'hugetlb'" } },
  { "mmap 0x7f0000000800 64M rw\n", { "t.txt:1:", "not 4K-aligned", "'0x7f0000000800'" } },
  { "mmap 0x7f0000000000 100 rw\n", { "t.txt:1:", "multiple of 4K", "'100'" } },
  { "munmap 0x7f0000000000 0\n", { "t.txt:1:", "bad length", "'0'", "positive" } },
  { "munmap 0x1fffffffffff000 8K\n", { "t.txt:1:", "beyond the 57-bit", "'8K'" } },
  { "madvise 0x7f0000000000 4K huge\n", { "t.txt:1:", "unknown advice", "'huge'", "hugepage, nohugepage" } },
  { "prctl thp_disable 2\n", { "t.txt:1:", "'2'", "0 or 1" } },
  { "prctl thp_enable 1\n", { "t.txt:1:", "'thp_enable'", "thp_disable" } },
  { "mempolicy 0x7f0000000000 4K interleave:0-64\n", { "t.txt:1:", "bad node list", "'interleave:0-64'", "0..63" } },
  { "mempolicy 0x7f0000000000 4K bind:3-1\n", { "t.txt:1:", "bad node list", "'bind:3-1'" } },
  { "mempolicy 0x7f0000000000 4K bind:\n", { "t.txt:1:", "bad node list", "'bind:'" } },
  { "mempolicy 0x7f0000000000 4K bind:1,,2\n", { "t.txt:1:", "'bind:1,,2'" } },
  { "mempolicy 0x7f0000000000 4K preferred:0-1\n", { "t.txt:1:", "'preferred:0-1'", "one node" } },
  { "mempolicy 0x7f0000000000 4K preferred=balancing:1\n",
    { "t.txt:1:", "bad mode flag", "'preferred=balancing:1'", "bind=balancing:NODES" } },
  { "mempolicy process bind=numa:1\n", { "t.txt:1:", "bad mode flag", "'bind=numa:1'" } },
  { "mempolicy process bind=balancing\n", { "t.txt:1:", "bind=balancing without nodes", "bind=balancing:NODES" } },
  { "mempolicy 0x7f0000000000 4K preferred:64\n", { "t.txt:1:", "bad preferred node", "'preferred:64'", "0..63" } },
  { "mempolicy 0x7f0000000000 4K preferred:0x1\n", { "t.txt:1:", "bad preferred node", "'preferred:0x1'" } },
  { "mempolicy 0x7f0000000000 4K preferred:\n", { "t.txt:1:", "bad preferred node", "'preferred:'" } },
  { "mempolicy 0x7f0000000000 4K bind\n", { "t.txt:1:", "bind without nodes", "'bind'", "bind:NODES" } },
  { "mempolicy 0x7f0000000000 4K local:0\n", { "t.txt:1:", "unknown memory policy", "'local:0'" } },
  { "mempolicy 0x7f0000000000 4K spread\n", { "t.txt:1:", "unknown memory policy", "'spread'", "interleave:NODES" } },
  { "mempolicy process\n", { "t.txt:1:", "missing policy", "'process'", "interleave:NODES" } },
  { "mempolicy process preferred_many\n", { "t.txt:1:", "preferred_many without nodes", "'preferred_many'",
                                             "or preferred_many:NODES" } },
  { "mempolicy process preferred_many:64\n", { "t.txt:1:", "bad node list", "'preferred_many:64'", "0..63" } },
  { "mempolicy process preferred_man:1\n", { "t.txt:1:", "unknown memory policy", "'preferred_man:1'" } },
  { "mempolicy process bind:0-64\n", { "t.txt:1:", "bad node list", "'bind:0-64'" } },
  { "mempolicy process 4K local\n", { "t.txt:1:", "unknown memory policy", "'4K'" } },
  { "mempolicy processes local\n", { "t.txt:1:", "bad address", "'processes'", "or 'process'" } },
  { "mempolicy process local 1\n", { "t.txt:1:", "unexpected text", "'1'" } },
  { "process 0\n", { "t.txt:1:", "bad process id", "'0'", "1..4294967295" } },
  { "process\n", { "t.txt:1:", "missing process id", "'process'" } },
  { "thread 2 core 1\n", { "t.txt:1:", "'core'", "cpu C" } },
  { "thread 2 cpu -1\n", { "t.txt:1:", "bad cpu number", "'-1'" } },
  { "compute lots\n", { "t.txt:1:", "bad instruction count", "'lots'" } },
  { "roi start\n", { "t.txt:1:", "'start'", "begin or end" } },
  { "R \x01\x02 8\n", { "t.txt:1:", "'\\x01\\x02'" } },
};

START_TEST(error_messages)
{
  const BadCase *c = &bad_cases[_i];
  GError *err = NULL;
  GArray *r = parse_string(c->text, &err);
  ck_assert_ptr_null(r);
  ck_assert_ptr_nonnull(err);
  ck_assert_msg(g_error_matches(err, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE), "wrong error for %s", c->text);
  for (unsigned k = 0; k < G_N_ELEMENTS(c->fragments) && c->fragments[k]; k++)
    ck_assert_msg(strstr(err->message, c->fragments[k]), "message \"%s\" lacks \"%s\"", err->message,
                  c->fragments[k]);
  /* Every message tells what would be right. */
  ck_assert_msg(strstr(err->message, "; expected "), "message \"%s\" says nothing expected", err->message);
  g_error_free(err);
}
END_TEST

START_TEST(error_keeps_earlier_records_and_repeats)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = text_source_from_string("t.txt", "R 0x10 8\nW 0x20 8\nbogus\nR 0x30 8\n", &err);
  TraceBatch *batch = g_new(TraceBatch, 1);
  ck_assert(!trace_source_next(src, batch, &err));
  ck_assert_uint_eq(batch->n, 2); /* the records above the bad line */
  ck_assert_ptr_nonnull(strstr(err->message, "t.txt:3:"));
  g_clear_error(&err);
  ck_assert(!trace_source_next(src, batch, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "t.txt:3:"));
  g_clear_error(&err);
  g_free(batch);
}
END_TEST

START_TEST(open_errors)
{
  GError *err = NULL;
  TraceSource *src = text_source_open("/nonexistent/dir/trace.txt", &err);
  ck_assert_ptr_null(src);
  ck_assert(g_error_matches(err, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN));
  ck_assert_ptr_nonnull(strstr(err->message, "/nonexistent/dir/trace.txt"));
  g_error_free(err);
}
END_TEST

/* ---- streaming ------------------------------------------------------------ */

START_TEST(streams_file_larger_than_buffer)
{
  /* 200000 lines, about 5 MB: the 1 MiB buffer is refilled several times,
   * each time with a line cut in two. */
  const unsigned n = 200000;
  GError *err = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp("mmusim-text-XXXXXX.txt", &path, &err);
  ck_assert_no_error(err);
  FILE *fp = fdopen(fd, "w");
  fprintf(fp, "# mmusim text trace v1\nprocess 3\n");
  for (unsigned i = 0; i < n; i++)
    fprintf(fp, "%c 0x%x %u +%u   # line %u\n", "RWDX"[i % 4], 0x10000000 + i * 64, 1 + i % 4096, i % 7, i);
  fclose(fp);

  g_autoptr(TraceSource) src = text_source_open(path, &err);
  ck_assert_no_error(err);
  ck_assert_str_eq(src->description, path);
  ck_assert_int_eq(src->unmapped, UNMAPPED_SEGV);
  TraceBatch *batch = g_new(TraceBatch, 1);
  unsigned seen = 0, batches = 0;
  gboolean thread_seen = FALSE;
  while (trace_source_next(src, batch, &err) && batch->n) {
    batches++;
    for (unsigned k = 0; k < batch->n; k++) {
      const TraceRecord *r = &batch->rec[k];
      if (r->type == REC_THREAD) {
        thread_seen = TRUE;
        continue;
      }
      unsigned i = seen++;
      if (r->type != REC_ACCESS || r->kind != i % 4 || r->addr != 0x10000000ULL + i * 64ULL ||
          r->size != 1 + i % 4096 || r->gap != i % 7 || r->pid != 3)
        ck_abort_msg("record %u read wrong: addr 0x%" G_GINT64_MODIFIER "x size %u", i, r->addr, r->size);
    }
  }
  ck_assert_no_error(err);
  ck_assert(thread_seen);
  ck_assert_uint_eq(seen, n);
  ck_assert_uint_ge(batches, (n + 1) / TRACE_BATCH_MAX);
  /* At the end it keeps saying "no more". */
  ck_assert(trace_source_next(src, batch, &err));
  ck_assert_uint_eq(batch->n, 0);
  g_free(batch);
  g_unlink(path);
  g_free(path);
}
END_TEST

/* Read `len` bytes of memory as a text trace to its end; the error. */
static GError *read_error(const char *data, size_t len)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = text_source_from_input(trace_input_from_memory("t.txt", data, len, TRUE));
  TraceBatch *batch = g_new(TraceBatch, 1);
  while (trace_source_next(src, batch, &err) && batch->n)
    ;
  g_free(batch);
  return err;
}

/* A NUL byte would cut a line short and hide the rest: an error naming the
 * line, column and offset, also past the first buffer refill. */
START_TEST(nul_byte_is_an_error)
{
  static const char one[] = "mmap 0x7f0000000000 2M rw\nR 0x7f0000000000 8\0 zzzz junk\nW 0x7f0000000000 8\0\n";
  GError *err = read_error(one, sizeof one - 1);
  ck_assert_ptr_nonnull(err);
  ck_assert_str_eq(err->message, "t.txt:2:19: a NUL byte (byte offset 44); a text trace has none: is this a binary "
                                 "file? give -f with its format (mtr, champsim)");
  g_clear_error(&err);
  /* In the last line, without a newline. */
  err = read_error("R 0x1000 8\nW 0x1000\0", 20);
  ck_assert_ptr_nonnull(err);
  ck_assert_ptr_nonnull(strstr(err->message, "t.txt:2:9: a NUL byte (byte offset 19)"));
  g_clear_error(&err);
  /* 3 MB of good lines first: the buffer is refilled and moved. */
  GString *big = g_string_new(NULL);
  unsigned lines = 0;
  while (big->len < 3u << 20) {
    g_string_append(big, "R 0x10000000 8\n");
    lines++;
  }
  gsize at = big->len + 4;
  g_string_append_len(big, "W 0x\0\n", 6);
  err = read_error(big->str, big->len);
  ck_assert_ptr_nonnull(err);
  g_autofree char *want = g_strdup_printf("t.txt:%u:5: a NUL byte (byte offset %" G_GSIZE_FORMAT ")", lines + 1, at);
  ck_assert_msg(strstr(err->message, want), "%s lacks %s", err->message, want);
  g_clear_error(&err);
  g_string_free(big, TRUE);
}
END_TEST

START_TEST(line_too_long)
{
  GError *err = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp("mmusim-text-XXXXXX.txt", &path, &err);
  ck_assert_no_error(err);
  FILE *fp = fdopen(fd, "w");
  fprintf(fp, "R 0x10 8\n#");
  for (unsigned i = 0; i < (2u << 20); i++)
    fputc('x', fp);
  fprintf(fp, "\nR 0x20 8\n");
  fclose(fp);
  g_autoptr(TraceSource) src = text_source_open(path, &err);
  ck_assert_no_error(err);
  GArray *r = read_all(src, &err);
  ck_assert_ptr_null(r);
  ck_assert(g_error_matches(err, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE));
  ck_assert_msg(strstr(err->message, ":2: line longer than"), "%s", err->message);
  g_error_free(err);
  g_unlink(path);
  g_free(path);
}
END_TEST

START_TEST(reads_standard_input)
{
  GError *err = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp("mmusim-text-XXXXXX.txt", &path, &err);
  ck_assert_no_error(err);
  const char text[] = "process 2\nR 0x1000 8\nbad line\n";
  ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
  close(fd);
  ck_assert_ptr_nonnull(freopen(path, "r", stdin));
  g_autoptr(TraceSource) src = text_source_open("-", &err);
  ck_assert_no_error(err);
  GArray *r = read_all(src, &err);
  ck_assert_ptr_null(r);
  /* Messages name standard input, and the source leaves it open. */
  ck_assert_msg(g_str_has_prefix(err->message, "<stdin>:3: unknown record near 'bad'"), "%s", err->message);
  g_error_free(err);
  g_clear_pointer(&src, trace_source_free);
  ck_assert_int_ne(fcntl(fileno(stdin), F_GETFD), -1);
  g_unlink(path);
  g_free(path);
}
END_TEST

/* ---- writing and round trips ------------------------------------------- */

static char *format_all(GArray *recs)
{
  GString *out = g_string_new(NULL);
  for (unsigned i = 0; i < recs->len; i++) {
    text_format_record(REC(recs, i), out);
    g_string_append_c(out, '\n');
  }
  return g_string_free(out, FALSE);
}

static const char canonical[] =
  "process 1\n"
  "thread 1 cpu 0\n"
  "mmap 0x7f0000000000 64M rw\n"
  "mmap 0x7ffffffde000 132K rw stack\n"
  "mmap 0x7e0000000000 3G rwx hugetlb shared\n"
  "mmap 0x7c0000000000 2G rw stack hugetlb1g shared\n"
  "mmap 0x1000 4K none\n"
  "mmap 0x2000 4K rw ondemand\n"
  "mprotect 0x7f0000000000 2M r\n"
  "munmap 0x7f0000000000 1536K\n"
  "madvise 0x7f0000000000 64M hugepage\n"
  "madvise 0x7f0000000000 4K collapse\n"
  "prctl thp_disable 1\n"
  "mempolicy 0x7f0000000000 64M local\n"
  "mempolicy 0x7f0000000000 64M interleave:0-3,5\n"
  "mempolicy 0x7f0000000000 64M preferred:7\n"
  "mempolicy 0x7f0000000000 64M weighted_interleave:0,2,4-5,63\n"
  "mempolicy 0x7f0000000000 64M bind:0-63\n"
  "mempolicy 0x7f0000000000 64M preferred_many:1-2\n"
  "mempolicy process weighted_interleave:0-1\n"
  "mempolicy process preferred_many:0,2,63\n"
  "mempolicy process local\n"
  "roi begin\n"
  "R 0x7f0000001000 8\n"
  "W 0x7f0000001008 8 +12\n"
  "D 0x7f0000002040 8\n"
  "X 0x400000 4\n"
  "compute 1000\n"
  "thread 2\n"
  "R 0x0 4096 +4294967295\n"
  "process 2\n"
  "thread 5 cpu 3\n"
  "R 0x1ffffffffffffff 1\n"
  "roi end\n";

START_TEST(round_trip_canonical)
{
  GArray *r = parse_ok(canonical);
  g_autofree char *text = format_all(r);
  ck_assert_str_eq(text, canonical);
  g_array_free(r, TRUE);
}
END_TEST

/* preferred_many (a row of kernel/mempolicy_mode.c) reads in both forms, any
 * number of nodes, and is written back as read. */
START_TEST(parse_preferred_many)
{
  static const char text[] = "mempolicy 0x7f0000000000 2M preferred_many:1-2\n"
                             "mempolicy process preferred_many:0,2\n";
  GArray *r = parse_ok(text);
  ck_assert_uint_eq(r->len, 2);
  ck_assert_int_eq(REC(r, 0)->arg, MPOL_PREFERRED_MANY);
  ck_assert_uint_eq(REC(r, 0)->arg2, 0x6);
  ck_assert_uint_eq(REC(r, 0)->flags, 0);
  ck_assert_uint_eq(REC(r, 0)->len, 2 << 20);
  ck_assert_int_eq(REC(r, 1)->arg, MPOL_PREFERRED_MANY);
  ck_assert_uint_eq(REC(r, 1)->arg2, 0x5);
  ck_assert_uint_eq(REC(r, 1)->flags, MPOL_F_PROCESS);
  g_autofree char *back = format_all(r);
  ck_assert_str_eq(back, text);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(round_trip_samples)
{
  const char *samples[] = { "traces/samples/hello.txt", "traces/samples/numa.txt", "traces/samples/policies.txt" };
  for (unsigned k = 0; k < G_N_ELEMENTS(samples); k++) {
    g_autofree char *path = srcdir_path(samples[k]);
    g_autofree char *orig = read_text_file(path);
    GError *err = NULL;
    g_autoptr(TraceSource) src = text_source_open(path, &err);
    ck_assert_no_error(err);
    GArray *r = read_all(src, &err);
    ck_assert_no_error(err);
    g_autofree char *text = format_all(r);
    /* The samples are canonical apart from their comment lines. */
    GString *stripped = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(orig, "\n", -1);
    for (char **l = lines; *l; l++)
      if (**l && **l != '#')
        g_string_append_printf(stripped, "%s\n", *l);
    ck_assert_str_eq(text, stripped->str);
    g_string_free(stripped, TRUE);
    g_array_free(r, TRUE);
  }
}
END_TEST

START_TEST(hello_sample_records)
{
  g_autofree char *path = srcdir_path("traces/samples/hello.txt");
  GError *err = NULL;
  g_autoptr(TraceSource) src = text_source_open(path, &err);
  ck_assert_no_error(err);
  GArray *r = read_all(src, &err);
  ck_assert_no_error(err);
  /* process, thread, mmap, madvise, 2 W, roi, 4 accesses, compute, X, roi, munmap */
  ck_assert_uint_eq(r->len, 15);
  unsigned roi = 0, accesses = 0;
  for (unsigned i = 0; i < r->len; i++) {
    roi += REC(r, i)->type == REC_ROI_BEGIN || REC(r, i)->type == REC_ROI_END;
    accesses += REC(r, i)->type == REC_ACCESS;
  }
  ck_assert_uint_eq(roi, 2);
  ck_assert_uint_eq(accesses, 7);
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(non_canonical_normalises)
{
  GArray *r = parse_ok("mmap 0X7F0000000000 0x4000000 rw shared stack\n"
                       "R 4096 0x8 +0\n"
                       "mempolicy 0x1000 4K bind:3,2,1,0\n"
                       "compute 1K\n");
  g_autofree char *text = format_all(r);
  ck_assert_str_eq(text, "mmap 0x7f0000000000 64M rw stack shared\n"
                         "R 0x1000 8\n"
                         "mempolicy 0x1000 4K bind:0-3\n"
                         "compute 1000\n");
  g_array_free(r, TRUE);
}
END_TEST

START_TEST(writer_makes_context_explicit)
{
  /* Records of two processes and threads without any thread records: the
   * writer adds the context lines, and reading back gives the same pid/tid. */
  const TraceRecord in[] = {
    { .type = REC_ACCESS, .kind = ACC_LOAD, .size = 8, .pid = 1, .tid = 1, .addr = 0x1000 },
    { .type = REC_ACCESS, .kind = ACC_STORE, .size = 8, .pid = 1, .tid = 2, .addr = 0x2000 },
    { .type = REC_COMPUTE, .pid = 4, .tid = 1, .len = 10 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .size = 4, .pid = 4, .tid = 9, .addr = 0x3000 },
    { .type = REC_THREAD, .pid = 5, .tid = 2, .arg = 1 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .size = 4, .pid = 5, .tid = 2, .addr = 0x4000 },
    { .type = REC_ACCESS, .kind = ACC_LOAD, .size = 4, .pid = 5, .tid = 1, .addr = 0x5000 },
  };
  TextWriter w;
  text_writer_init(&w);
  GString *out = g_string_new(NULL);
  for (unsigned i = 0; i < G_N_ELEMENTS(in); i++)
    text_writer_write(&w, &in[i], out);
  ck_assert_str_eq(out->str, "R 0x1000 8\n"
                             "thread 2\n"
                             "W 0x2000 8\n"
                             "process 4\n"
                             "compute 10\n"
                             "thread 9\n"
                             "R 0x3000 4\n"
                             "process 5\n"
                             "thread 2 cpu 1\n"
                             "R 0x4000 4\n"
                             "process 5\n"
                             "R 0x5000 4\n");
  GArray *r = parse_ok(out->str);
  unsigned k = 0;
  for (unsigned i = 0; i < r->len; i++) {
    const TraceRecord *got = REC(r, i);
    ck_assert_uint_lt(k, G_N_ELEMENTS(in));
    if (got->type == REC_THREAD && memcmp(got, &in[k], sizeof *got) != 0)
      continue; /* a context line the writer added */
    ck_assert_msg(memcmp(got, &in[k], sizeof *got) == 0, "record %u differs after the round trip", k);
    k++;
  }
  ck_assert_uint_eq(k, G_N_ELEMENTS(in));
  g_array_free(r, TRUE);
  g_string_free(out, TRUE);
}
END_TEST

static Suite *text_suite(void)
{
  Suite *s = suite_create("text");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, parse_accesses);
  tcase_add_test(tc, parse_mapping_events);
  tcase_add_test(tc, parse_policy_events);
  tcase_add_test(tc, parse_policy_grammar_of_setting);
  tcase_add_test(tc, parse_policy_balancing_flag);
  tcase_add_test(tc, parse_compute_roi_and_context);
  tcase_add_test(tc, line_endings_and_empty_input);
  tcase_add_test(tc, limits_accepted);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, error_messages, 0, G_N_ELEMENTS(bad_cases));
  tcase_add_test(tc, error_keeps_earlier_records_and_repeats);
  tcase_add_test(tc, open_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("stream");
  tcase_add_test(tc, streams_file_larger_than_buffer);
  tcase_add_test(tc, line_too_long);
  tcase_add_test(tc, nul_byte_is_an_error);
  tcase_add_test(tc, reads_standard_input);
  suite_add_tcase(s, tc);
  tc = tcase_create("write");
  tcase_add_test(tc, round_trip_canonical);
  tcase_add_test(tc, parse_preferred_many);
  tcase_add_test(tc, round_trip_samples);
  tcase_add_test(tc, hello_sample_records);
  tcase_add_test(tc, non_canonical_normalises);
  tcase_add_test(tc, writer_makes_context_explicit);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(text_suite)
