/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the address-space picture (cli/map.c): a small machine state
 * built by running a text trace (VMAs with 4K and 2M pages, on x86-64; 64K
 * and 16M on ppc64 hash; pages on two NUMA nodes) is drawn to a temporary
 * SVG, which must be well-formed XML (GMarkup parses it) and name every
 * region with its start, size, flags and page sizes (adjacent VMAs alike
 * merged into one), its labels as <text> elements, not glyph outlines.  A
 * mapping of many
 * small pages alternating between nodes must stay a small file; an
 * unwritable path is an error, not a crash.
 */
#include "config.h"
#include <errno.h>
#include "errors.h"
#include <glib/gstdio.h>
#include <string.h>
#include "engine.h"
#include "machine_fixture.h"
#include "map.h"
#include "text.h"

/* ---- helpers ----------------------------------------------------------------- */

typedef struct {
  GString *desc;      /* text of <desc> */
  GString *texts;     /* the text of every <text> element, one a line */
  gboolean in_desc, in_text;
  unsigned elements;  /* every element */
  unsigned shapes;    /* <path> and <rect> */
  unsigned glyphs;    /* <symbol> or <use>: text drawn as outlines */
  gboolean saw_svg;
} Parsed;

static void p_start(GMarkupParseContext *c, const char *name, const char **an, const char **av, gpointer data,
                    GError **error)
{
  Parsed *p = data;
  p->elements++;
  p->saw_svg |= strcmp(name, "svg") == 0;
  p->in_desc = strcmp(name, "desc") == 0;
  p->in_text = strcmp(name, "text") == 0;
  if (strcmp(name, "path") == 0 || strcmp(name, "rect") == 0)
    p->shapes++;
  if (strcmp(name, "symbol") == 0 || strcmp(name, "use") == 0)
    p->glyphs++;
}

static void p_end(GMarkupParseContext *c, const char *name, gpointer data, GError **error)
{
  Parsed *p = data;
  if (p->in_text)
    g_string_append_c(p->texts, '\n');
  p->in_desc = p->in_text = FALSE;
}

static void p_text(GMarkupParseContext *c, const char *text, gsize len, gpointer data, GError **error)
{
  Parsed *p = data;
  if (p->in_desc)
    g_string_append_len(p->desc, text, (gssize)len);
  if (p->in_text)
    g_string_append_len(p->texts, text, (gssize)len);
}

/* Draw m to a temporary SVG, parse it, return the parse; *bytes the size. */
static Parsed draw_and_parse(const Machine *m, gsize *bytes)
{
  GError *err = NULL;
  g_autofree char *dir = g_dir_make_tmp("mmusim-map-XXXXXX", &err);
  ck_assert_no_error(err);
  g_autofree char *path = g_build_filename(dir, "map.svg", NULL);
  ck_assert_msg(map_write_svg(m, "test <title> & more", path, &err), "%s", err ? err->message : "");
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, bytes, &err));
  g_unlink(path);
  g_rmdir(dir);
  Parsed p = { .desc = g_string_new(NULL), .texts = g_string_new(NULL) };
  GMarkupParser parser = { p_start, p_end, p_text, NULL, NULL };
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &p, NULL);
  gboolean ok = g_markup_parse_context_parse(ctx, text, (gssize)*bytes, &err) &&
                g_markup_parse_context_end_parse(ctx, &err);
  ck_assert_msg(ok, "not well-formed XML: %s", err ? err->message : "");
  g_markup_parse_context_free(ctx);
  ck_assert(p.saw_svg);
  return p;
}

static void assert_has(const GString *desc, const char *want)
{
  ck_assert_msg(strstr(desc->str, want) != NULL, "missing \"%s\" in the description:\n%s", want, desc->str);
}

/* ---- tests --------------------------------------------------------------------- */

START_TEST(test_x86_4k_and_2m)
{
  const char *sets[] = { "thp.enabled=madvise", NULL };
  Machine *m = fixture_machine("skylake", sets);
  ck_assert(!fixture_run_text(m, "process 1\n"
              "mmap 0x7f0000000000 8M rw\n"
              "madvise 0x7f0000000000 8M hugepage\n"
              "mmap 0x7f1000000000 64K rw\n"
              "mmap 0x7ffff0000000 1M rw stack\n"
              "W 0x7f0000000000 8\n"
              "W 0x7f0000200000 8\n"
              "W 0x7f1000000000 8\n"
              "W 0x7f1000003000 8\n"
              "W 0x7ffff00ff000 8\n"
              "process 2\n"
              "mmap 0x400000 64K rx\n"
              "X 0x400000 4\n", FALSE));
  /* Adjacent VMAs alike but for their range (as on-demand mapping makes
   * them) are one region of the picture. */
  Thread *t = fixture_thread(m, 3);
  fixture_vma(t, 0x10000000, 2 << 20, PROT_R | PROT_W);
  fixture_vma(t, 0x10200000, 2 << 20, PROT_R | PROT_W);
  fixture_vma(t, 0x10400000, 2 << 20, PROT_R);
  gsize bytes;
  Parsed p = draw_and_parse(m, &bytes);
  assert_has(p.desc, "test <title> & more");
  assert_has(p.desc, "process 1: 3 VMAs");
  assert_has(p.desc, "process 2: 1 VMA,");
  assert_has(p.desc, "pid 1 0x7f0000000000-0x7f0000800000 8M rw-p hugepage: 2M pages 4M, unmapped 4M, node 0 4M\n");
  assert_has(p.desc, "pid 1 0x7f1000000000-0x7f1000010000 64K rw-p: 4K pages 8K, unmapped 56K, node 0 8K\n");
  assert_has(p.desc, "pid 1 0x7ffff0000000-0x7ffff0100000 1M rw-p stack: 4K pages 4K, unmapped 1020K");
  assert_has(p.desc, "pid 2 0x400000-0x410000 64K r-xp: 4K pages 4K");
  assert_has(p.desc, "pid 3 0x10000000-0x10400000 4M rw-p: unmapped 4M, 2 VMAs\n");
  assert_has(p.desc, "pid 3 0x10400000-0x10600000 2M r--p: unmapped 2M\n");
  ck_assert(p.shapes > 10);
  /* The labels are text a reader can select and search, not outlines. */
  ck_assert_uint_eq(p.glyphs, 0);
  assert_has(p.texts, "test <title> & more\n");
  assert_has(p.texts, "process 1: 3 VMAs");
  assert_has(p.texts, "0x7f0000000000\n8M\nrw-p hugepage\n");
  assert_has(p.texts, "2M pages\n");
  g_string_free(p.desc, TRUE);
  g_string_free(p.texts, TRUE);
  machine_free(m);
}
END_TEST

START_TEST(test_ppc64_64k_and_16m)
{
  const char *sets[] = { "thp.enabled=always", NULL };
  Machine *m = fixture_machine("power9-hash", sets);
  ck_assert(!fixture_run_text(m, "mmap 0x7f0000000000 32M rw\n"
              "W 0x7f0000000000 8\n"
              "mmap 0x7f1000000000 1M rw\n"
              "W 0x7f1000000000 8\n", FALSE));
  gsize bytes;
  Parsed p = draw_and_parse(m, &bytes);
  assert_has(p.desc, "ppc64");
  assert_has(p.desc, "0x7f0000000000-0x7f0002000000 32M rw-p: 16M pages 16M, unmapped 16M");
  assert_has(p.desc, "0x7f1000000000-0x7f1000100000 1M rw-p: 64K pages 64K, unmapped 960K");
  /* Resident is the pages mapped (16M + 64K), counted in 64K base pages,
   * not 16 times more (a count of 4K units taken for 64K pages). */
  assert_has(p.desc, "process 1: 2 VMAs, 16.1M resident");
  g_string_free(p.desc, TRUE);
  g_string_free(p.texts, TRUE);
  machine_free(m);
}
END_TEST

/* Two threads on CPUs of different nodes touch alternate pages of one
 * mapping: 16384 4K pages whose node changes at every page.  The picture
 * aggregates them into columns, so it stays small. */
START_TEST(test_nodes_aggregated)
{
  const char *sets[] = { "thp.enabled=never", "machine.nodes=2", NULL };
  Machine *m = fixture_machine("skylake", sets);
  GString *t = g_string_new("mmap 0x7f0000000000 64M rw\n");
  for (uint64_t va = 0; va < (64u << 20); va += 4096)
    g_string_append_printf(t, "thread %u cpu %u\nW 0x%" G_GINT64_MODIFIER "x 8\n", (unsigned)(va / 4096 % 2) + 1,
                           (unsigned)(va / 4096 % 2), UINT64_C(0x7f0000000000) + va);
  ck_assert(!fixture_run_text(m, t->str, FALSE));
  g_string_free(t, TRUE);
  gsize bytes;
  Parsed p = draw_and_parse(m, &bytes);
  assert_has(p.desc, "2 NUMA nodes");
  assert_has(p.desc, "64M rw-p: 4K pages 64M, unmapped 0, node 0 32M, node 1 32M\n");
  ck_assert_msg(bytes < 256 * 1024, "%zu bytes for one 64M mapping", (size_t)bytes);
  ck_assert_msg(p.shapes < 2000, "%u shapes", p.shapes);
  g_string_free(p.desc, TRUE);
  g_string_free(p.texts, TRUE);
  machine_free(m);
}
END_TEST

START_TEST(test_unwritable)
{
  Machine *m = fixture_machine("skylake", NULL);
  ck_assert(!fixture_run_text(m, "mmap 0x7f0000000000 64K rw\nW 0x7f0000000000 8\n", FALSE));
  GError *err = NULL;
  ck_assert(!map_write_svg(m, "t", "/nonexistent-dir/map.svg", &err));
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_IO)); /* the name is at fault */
  ck_assert(strstr(err->message, "/nonexistent-dir/map.svg") != NULL);
  g_clear_error(&err);
  /* A full disk: a run-time failure, named as such. */
  if (g_file_test("/dev/full", G_FILE_TEST_EXISTS)) {
    ck_assert(!map_write_svg(m, "t", "/dev/full", &err));
    ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE));
    ck_assert_msg(strstr(err->message, "/dev/full") && strstr(err->message, g_strerror(ENOSPC)), "%s", err->message);
    g_clear_error(&err);
  }
  machine_free(m);
}
END_TEST

static Suite *map_suite(void)
{
  Suite *s = suite_create("map");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_x86_4k_and_2m);
  tcase_add_test(tc, test_ppc64_64k_and_16m);
  tcase_add_test(tc, test_nodes_aggregated);
  tcase_add_test(tc, test_unwritable);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(map_suite)
