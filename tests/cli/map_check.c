/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * map_check.c - helper of tests/cli/test_map_cli.sh: parse an SVG written by
 * `mmusim run --map` with GLib's GMarkup (no xmllint or Python needed),
 * exit 1 with the parser's message when it is not well-formed XML, else
 * print the text of its <desc> element (the description of every region).
 */
#include "config.h"
#include <glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  GString *desc;
  gboolean in_desc, saw_svg;
} Parsed;

static void p_start(GMarkupParseContext *c, const char *name, const char **an, const char **av, gpointer data,
                    GError **error)
{
  Parsed *p = data;
  p->saw_svg |= strcmp(name, "svg") == 0;
  p->in_desc = strcmp(name, "desc") == 0;
}

static void p_end(GMarkupParseContext *c, const char *name, gpointer data, GError **error)
{
  ((Parsed *)data)->in_desc = FALSE;
}

static void p_text(GMarkupParseContext *c, const char *text, gsize len, gpointer data, GError **error)
{
  Parsed *p = data;
  if (p->in_desc)
    g_string_append_len(p->desc, text, (gssize)len);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: map_check FILE.svg\n");
    return 2;
  }
  GError *err = NULL;
  char *text;
  gsize len;
  if (!g_file_get_contents(argv[1], &text, &len, &err)) {
    fprintf(stderr, "map_check: %s\n", err->message);
    return 2;
  }
  Parsed p = { .desc = g_string_new(NULL) };
  GMarkupParser parser = { p_start, p_end, p_text, NULL, NULL };
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &p, NULL);
  gboolean ok = g_markup_parse_context_parse(ctx, text, (gssize)len, &err) && g_markup_parse_context_end_parse(ctx, &err);
  int rc = 0;
  if (!ok || !p.saw_svg) {
    fprintf(stderr, "map_check: %s: %s\n", argv[1], ok ? "no <svg> element" : err->message);
    rc = 1;
  } else {
    fputs(p.desc->str, stdout);
  }
  g_clear_error(&err);
  g_markup_parse_context_free(ctx);
  g_string_free(p.desc, TRUE);
  g_free(text);
  return rc;
}
