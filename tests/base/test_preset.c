/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_preset.c - machine files read from memory (preset_load_data, the
 * fuzz targets' entry point) as from a file, and inherit chains that loop
 * refused with a message rather than followed for ever.
 */
#include "config.h"
#include "testutil.h"

#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "errors.h"
#include "preset.h"

START_TEST(test_data_as_file)
{
  static const char text[] = "[machine]\ninherit = skylake\n[tlb]\nstlb_entries = 3072\n";
  g_autofree char *dir = g_dir_make_tmp("mmusim-preset.XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "m.ini", NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  g_autoptr(Settings) a = settings_new();
  g_autoptr(Settings) b = settings_new();
  ck_assert(preset_load(a, path, NULL));
  ck_assert(preset_load_data(b, path, text, strlen(text), NULL));
  ck_assert_int_eq(settings_int(a, SET_TLB_STLB_ENTRIES), 3072);
  ck_assert_int_eq(settings_int(b, SET_TLB_STLB_ENTRIES), 3072);
  ck_assert_str_eq(settings_origin(b, SET_TLB_STLB_ENTRIES), settings_origin(a, SET_TLB_STLB_ENTRIES));
  /* The checks of a file apply to the text too. */
  GError *err = NULL;
  ck_assert(!preset_load_data(b, "x.ini", "[machine]\ninherit = zen\3774\n", 25, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "x.ini:2: 'inherit = zen\\xff4' is not valid UTF-8"));
  g_clear_error(&err);
  ck_assert(!preset_load_data(b, "x.ini", "[tlb]\nstlb_entries = 1\0", 23, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "NUL byte"));
  g_clear_error(&err);
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* a.ini inherits b.ini, which inherits a.ini; c.ini inherits itself. */
START_TEST(test_inherit_loop)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-preset.XXXXXX", NULL);
  g_autofree char *a = g_build_filename(dir, "a.ini", NULL);
  g_autofree char *b = g_build_filename(dir, "b.ini", NULL);
  g_autofree char *c = g_build_filename(dir, "c.ini", NULL);
  g_autofree char *ta = g_strdup_printf("[machine]\ninherit = %s\n", b);
  g_autofree char *tb = g_strdup_printf("[machine]\ninherit = %s\n", a);
  g_autofree char *tc = g_strdup_printf("[machine]\ninherit = %s\n", c);
  ck_assert(g_file_set_contents(a, ta, -1, NULL));
  ck_assert(g_file_set_contents(b, tb, -1, NULL));
  ck_assert(g_file_set_contents(c, tc, -1, NULL));
  const char *paths[] = { a, c };
  for (unsigned i = 0; i < G_N_ELEMENTS(paths); i++) {
    g_autoptr(Settings) s = settings_new();
    GError *err = NULL;
    ck_assert(!preset_load(s, paths[i], &err));
    ck_assert_ptr_nonnull(strstr(err->message, "'inherit' chain is too deep (a loop?)"));
    ck_assert_int_eq(err->code, SIM_ERROR_MACHINE);
    g_clear_error(&err);
  }
  g_unlink(a);
  g_unlink(b);
  g_unlink(c);
  g_rmdir(dir);
}
END_TEST

static Suite *preset_suite(void)
{
  Suite *s = suite_create("preset");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_data_as_file);
  tcase_add_test(tc, test_inherit_loop);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(preset_suite)
