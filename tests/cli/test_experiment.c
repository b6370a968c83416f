/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_experiment.c - experiment files: axes, their order, ids, errors.
 */
#include "config.h"

#include <glib/gstdio.h>
#include "experiment.h"
#include "testutil.h"

/* Write text to a fresh file in a scratch folder; returns its path. */
static char *write_exp(const char *name, const char *text)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-exp-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  char *path = g_build_filename(dir, name, NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static void remove_exp(const char *path)
{
  g_autofree char *dir = g_path_get_dirname(path);
  g_remove(path);
  g_rmdir(dir);
}

static const ExpConfig *cfg(const Experiment *e, guint i)
{
  return g_ptr_array_index(e->configs, i);
}

START_TEST(test_product_order)
{
  g_autofree char *path = write_exp("modes.ini",
                                    "[experiment]\nworkload = seq:size=4M,accesses=1K\nrepeat = 3\n"
                                    "[settings]\nthp.defrag = madvise\n"
                                    "[vary]\nthp.enabled = never, always\ncpu.mshrs = 4, 8, 12\n");
  GError *err = NULL;
  g_autoptr(Experiment) e = experiment_load(path, &err);
  ck_assert_msg(e != NULL, "%s", err ? err->message : "");
  ck_assert_str_eq(e->name, "modes");
  ck_assert_str_eq(e->metric, "ns_per_access"); /* the default */
  ck_assert_uint_eq(e->repeat, 3);
  ck_assert_uint_eq(e->configs->len, 6);
  /* The last axis varies fastest. */
  ck_assert_str_eq(cfg(e, 0)->label, "thp.enabled=never, cpu.mshrs=4");
  ck_assert_str_eq(cfg(e, 1)->label, "thp.enabled=never, cpu.mshrs=8");
  ck_assert_str_eq(cfg(e, 3)->label, "thp.enabled=always, cpu.mshrs=4");
  ck_assert_str_eq(cfg(e, 5)->label, "thp.enabled=always, cpu.mshrs=12");
  /* [settings] first, then the axes. */
  ck_assert_str_eq(cfg(e, 5)->set[0], "thp.defrag=madvise");
  ck_assert_str_eq(cfg(e, 5)->set[1], "thp.enabled=always");
  ck_assert_str_eq(cfg(e, 5)->set[2], "cpu.mshrs=12");
  ck_assert_ptr_null(cfg(e, 5)->set[3]);
  ck_assert_str_eq(cfg(e, 0)->spec.machine, RUNNER_DEFAULT_MACHINE);
  ck_assert_uint_eq(cfg(e, 0)->spec.repeat, 3);
  /* Every id is different and 12 hex digits. */
  for (guint i = 0; i < 6; i++) {
    ck_assert_uint_eq(strlen(cfg(e, i)->id), 12);
    for (guint j = 0; j < i; j++)
      ck_assert_str_ne(cfg(e, i)->id, cfg(e, j)->id);
  }
  remove_exp(path);
}
END_TEST

/* The id depends on what decides the result, not on the file's name or the
 * order of unrelated lines. */
START_TEST(test_ids_are_stable)
{
  g_autofree char *a = write_exp("a.ini", "[experiment]\nworkload = seq:size=4M,accesses=1K\n[vary]\ncpu.mshrs = 4, 8\n");
  g_autofree char *b = write_exp("b.ini", "[vary]\ncpu.mshrs = 8\n[experiment]\nname = other\nworkload = seq:size=4M,accesses=1K\n");
  g_autofree char *c = write_exp("c.ini", "[experiment]\nworkload = seq:size=4M,accesses=1K\nrepeat = 2\n[vary]\ncpu.mshrs = 8\n");
  g_autoptr(Experiment) ea = experiment_load(a, NULL);
  g_autoptr(Experiment) eb = experiment_load(b, NULL);
  g_autoptr(Experiment) ec = experiment_load(c, NULL);
  ck_assert(ea && eb && ec);
  ck_assert_str_eq(cfg(ea, 1)->id, cfg(eb, 0)->id);
  ck_assert_str_ne(cfg(ea, 1)->id, cfg(ec, 0)->id); /* repeat changes the result */
  /* whole = true counts the setup: another result, passed to the run;
   * whole = false is the default and keeps the id. */
  g_autofree char *d = write_exp("d.ini", "[experiment]\nworkload = seq:size=4M,accesses=1K\nwhole = true\n[vary]\ncpu.mshrs = 8\n");
  g_autofree char *f = write_exp("f.ini", "[experiment]\nworkload = seq:size=4M,accesses=1K\nwhole = false\n[vary]\ncpu.mshrs = 8\n");
  g_autoptr(Experiment) ed = experiment_load(d, NULL);
  g_autoptr(Experiment) ef = experiment_load(f, NULL);
  ck_assert(ed && ef);
  ck_assert_str_ne(cfg(ea, 1)->id, cfg(ed, 0)->id);
  ck_assert(cfg(ed, 0)->spec.whole);
  ck_assert_str_eq(cfg(ea, 1)->id, cfg(ef, 0)->id);
  ck_assert(!cfg(ef, 0)->spec.whole);
  remove_exp(a);
  remove_exp(b);
  remove_exp(c);
  remove_exp(d);
  remove_exp(f);
}
END_TEST

/* `seed = 0` in the file is the seed 0, as run --seed 0: another run than
 * the workload's own seed of a file without a seed line, so another id;
 * files without a seed line keep the ids they always had. */
/* Load an experiment written to a scratch file, removed again (NULL if it
 * is rejected). */
static Experiment *load_text(const char *name, const char *text)
{
  g_autofree char *path = write_exp(name, text);
  Experiment *e = experiment_load(path, NULL);
  remove_exp(path);
  return e;
}

START_TEST(test_seed_zero_is_a_seed)
{
  const char *head = "[experiment]\nworkload = random:size=4M,accesses=1K,seed=5\n";
  g_autofree char *zero_text = g_strconcat(head, "seed = 0\n", NULL);
  g_autofree char *seven_text = g_strconcat(head, "seed = 7\n", NULL);
  g_autoptr(Experiment) en = load_text("none.ini", head);
  g_autoptr(Experiment) ez = load_text("zero.ini", zero_text);
  g_autoptr(Experiment) e7 = load_text("seven.ini", seven_text);
  ck_assert(en && ez && e7);
  ck_assert(!cfg(en, 0)->spec.seed_given);
  ck_assert(cfg(ez, 0)->spec.seed_given);
  ck_assert_uint_eq(cfg(ez, 0)->spec.seed, 0);
  ck_assert(cfg(e7, 0)->spec.seed_given);
  ck_assert_uint_eq(cfg(e7, 0)->spec.seed, 7);
  ck_assert_str_ne(cfg(en, 0)->id, cfg(ez, 0)->id);
  ck_assert_str_ne(cfg(ez, 0)->id, cfg(e7, 0)->id);
  /* The ids these files had before a seed line could say 0. */
  ck_assert_str_eq(cfg(en, 0)->id, "734e9c23f55e");
  ck_assert_str_eq(cfg(e7, 0)->id, "05bbfc90469e");
}
END_TEST

START_TEST(test_zip_and_special_axes)
{
  g_autofree char *path = write_exp("z.ini",
                                    "[experiment]\nmetric = cycles\ncombine = zip\n"
                                    "[vary]\nmachine = westmere, skylake\n"
                                    "workload = seq:size=4M,accesses=1K; random:size=4M,accesses=1K\n");
  GError *err = NULL;
  g_autoptr(Experiment) e = experiment_load(path, &err);
  ck_assert_msg(e != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(e->configs->len, 2);
  ck_assert_str_eq(cfg(e, 0)->machine, "westmere");
  ck_assert_str_eq(cfg(e, 0)->workload, "seq:size=4M,accesses=1K");
  ck_assert_str_eq(cfg(e, 1)->machine, "skylake");
  ck_assert_str_eq(cfg(e, 1)->workload, "random:size=4M,accesses=1K");
  ck_assert_ptr_null(cfg(e, 1)->set[0]); /* nothing for the settings */
  remove_exp(path);
}
END_TEST

/* A machine .ini and a trace are found next to the experiment file. */
START_TEST(test_paths_relative_to_file)
{
  g_autofree char *path = write_exp("rel.ini", "[experiment]\nmachine = my.ini\ntrace = t.txt\n");
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *ini = g_build_filename(dir, "my.ini", NULL);
  g_autofree char *trace = g_build_filename(dir, "t.txt", NULL);
  ck_assert(g_file_set_contents(ini, "[machine]\ninherit = westmere\n", -1, NULL));
  GError *err = NULL;
  g_autoptr(Experiment) e = experiment_load(path, &err);
  ck_assert_msg(e != NULL, "%s", err ? err->message : "");
  ck_assert_str_eq(cfg(e, 0)->machine, ini);
  ck_assert_str_eq(e->trace, trace);
  ck_assert_str_eq(cfg(e, 0)->label, "base");
  g_remove(ini);
  remove_exp(path);
}
END_TEST

static void assert_rejected(const char *text, const char *want)
{
  g_autofree char *path = write_exp("bad.ini", text);
  GError *err = NULL;
  Experiment *e = experiment_load(path, &err);
  ck_assert_ptr_null(e);
  ck_assert_ptr_nonnull(err);
  ck_assert_msg(strstr(err->message, want) != NULL, "'%s' lacks '%s'", err->message, want);
  ck_assert_msg(strstr(err->message, "bad.ini") != NULL, "'%s' does not name the file", err->message);
  g_error_free(err);
  remove_exp(path);
}

START_TEST(test_errors)
{
  assert_rejected("[settings]\ncpu.mshrs = 4\n", "no [experiment] group");
  assert_rejected("[experiment]\nworkload = seq\nmetrc = cycles\n", "no key 'metrc'");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\nthp.enable = never\n", "did you mean 'thp.enabled'");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\ncpu.mshrs = 4, 0\n", "cpu.mshrs=0");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\ntlb.stlb_entries = 1000\n",
                  "[vary] tlb.stlb_entries) cannot be split into sets of tlb.stlb_ways = 12");
  assert_rejected("[experiment]\nworkload = seq\nmetric = speed\n", "metric = speed");
  assert_rejected("[experiment]\nworkload = seq\nrepeat = 0\n", "repeat = 0");
  assert_rejected("[experiment]\nworkload = seq\nrepeat = many\n", "repeat = 'many'");
  assert_rejected("[experiment]\nworkload = seq\nwhole = maybe\n", "whole = 'maybe'");
  assert_rejected("[experiment]\nmachine = skylake\n", "neither workload nor trace");
  assert_rejected("[experiment]\nworkload = seq\ntrace = x.txt\n", "both a workload and a trace");
  assert_rejected("[experiment]\nworkload = seq\ncombine = zip\n[vary]\ncpu.mshrs = 4, 8\ncpu.cpi = 1\n", "as many values");
  assert_rejected("[experiment]\nworkload = seq\ncombine = cross\n", "combine = cross");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\ncpu.mshrs = 4, 4\n", "bad.ini:4: [vary] cpu.mshrs gives one value twice: '4' and '4'");
  /* one value spelled two ways, read by the setting's own parser */
  assert_rejected("[experiment]\nworkload = seq\n[vary]\ncpu.mshrs = 10, 0xa\n", "'10' and '0xa' are the same");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\ncpu.mshrs = 1, 2, 01\n", "'1' and '01' are the same");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\ntlb.pcid = on, 1\n", "'on' and '1' are the same");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\nmachine.mem_per_node = 1G, 1024M\n", "'1G' and '1024M'");
  /* a key or a group twice: GKeyFile would keep the last in silence */
  assert_rejected("[experiment]\nworkload = seq\nworkload = gups\n", "bad.ini:3: workload is given twice in [experiment] (first at line 2)");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\ncpu.mshrs = 4\n[vary]\ncpu.cpi = 1\n", "bad.ini:5: [vary] is given twice (first at line 3)");
  assert_rejected("[experiment]\nworkload = seq\n[vary]\ncpu.mshrs = 4\n cpu.mshrs=8\n", "bad.ini:5: cpu.mshrs is given twice in [vary]");
  assert_rejected("[experiment]\nworkload = seq\n[axes]\ncpu.mshrs = 4\n", "unknown group [axes]");
  assert_rejected("[experiment\nworkload = seq\n", "bad.ini:1: group header '[experiment' has no closing ']'");
  /* Malformed lines are named by file and line, as in machine files. */
  assert_rejected("[experiment]\nworkload = seq\n\nthis is not a setting\n",
                  "bad.ini:4: 'this is not a setting' is neither KEY = VALUE");
  assert_rejected("workload = seq\n[experiment]\n", "bad.ini:1: 'workload = seq' comes before any [group] header: put "
                                                     "it under one, such as [experiment], [settings] or [vary]");
}
END_TEST

/* From memory (the fuzz targets' entry point): the same configurations as
 * from the file; check_first bounds the machines built, not the
 * configurations made; a repeated configuration is found however far
 * apart its two copies are (an id looked up, not a scan of those before). */
START_TEST(test_parse_from_memory)
{
  static const char text[] = "[experiment]\nworkload = seq:size=4M,accesses=1K\n"
                             "[vary]\ncpu.mshrs = 1, 2, 3, 4, 5, 6, 7, 8\ntlb.stlb_entries = 1536, 3072\n";
  g_autofree char *path = write_exp("mem.ini", text);
  g_autoptr(Experiment) a = experiment_load(path, NULL);
  g_autoptr(Experiment) b = experiment_parse(path, text, strlen(text), G_MAXUINT, NULL);
  g_autoptr(Experiment) c = experiment_parse(path, text, strlen(text), 1, NULL);
  ck_assert(a && b && c);
  ck_assert_uint_eq(a->configs->len, 16);
  ck_assert_uint_eq(b->configs->len, 16);
  ck_assert_uint_eq(c->configs->len, 16);
  for (guint i = 0; i < 16; i++) {
    ck_assert_str_eq(cfg(a, i)->id, cfg(b, i)->id);
    ck_assert_str_eq(cfg(a, i)->id, cfg(c, i)->id);
  }
  remove_exp(path);
  /* With zip, the first and the last pair are one configuration. */
  static const char twice[] = "[experiment]\nworkload = seq\ncombine = zip\n[vary]\n"
                              "cpu.mshrs = 4, 5, 6, 7, 4\ncpu.cpi = 1, 1, 1, 1, 1\n";
  GError *err = NULL;
  ck_assert_ptr_null(experiment_parse("z.ini", twice, strlen(twice), 0, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "z.ini: configurations cpu.mshrs=4, cpu.cpi=1 and cpu.mshrs=4, cpu.cpi=1 "
                                             "are the same run"));
  g_clear_error(&err);
}
END_TEST

static Suite *experiment_suite(void)
{
  Suite *s = suite_create("experiment");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_product_order);
  tcase_add_test(tc, test_ids_are_stable);
  tcase_add_test(tc, test_seed_zero_is_a_seed);
  tcase_add_test(tc, test_zip_and_special_axes);
  tcase_add_test(tc, test_paths_relative_to_file);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_parse_from_memory);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(experiment_suite)
