/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * man-settings.c - prints the SETTINGS table of doc/mmusim.1 (the tbl(1)
 * rows between its BEGIN and END SETTINGS TABLE comments) from
 * base/settings.def, which it includes: the C compiler reads the rows, so
 * no script has to parse C string literals.  doc/man-settings.sh splices
 * the table into the page (`make man-settings`); tests/man-settings.sh
 * fails when the committed page differs from it.
 *
 * Each row: the name in bold, under it the default and its unit; then the
 * help, with "; one of a, b, c" for an enum.  Roff escapes: a backslash is
 * \e, a hyphen of a name or default \- (a minus sign, so it can be
 * pasted), `text` in the help bold, a slash may break the line (\:).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name, *def, *unit, *choices, *help;
} Row;

static const Row rows[] = {
#define X(id, name, type, def, unit, min, max, choices, help, source) { name, def, unit, choices, help },
#include "settings.def"
#undef X
};

/* s with roff's escapes; `hyphens`: a hyphen as \-; `slashes`: a slash
 * followed by \: (a place to break a long path). */
static void roff(const char *s, int hyphens, int slashes)
{
  for (const char *p = s; *p; p++) {
    if (*p == '`' && strchr(p + 1, '`')) { /* `text` in bold */
      const char *end = strchr(p + 1, '`');
      fputs("\\fB", stdout);
      for (const char *q = p + 1; q < end; q++) {
        if (*q == '\\')
          fputs("\\e", stdout);
        else if (*q == '/' && slashes)
          fputs("/\\:", stdout);
        else
          putchar(*q);
      }
      fputs("\\fR", stdout);
      p = end;
    } else if (*p == '\\') {
      fputs("\\e", stdout);
    } else if (*p == '-' && hyphens) {
      fputs("\\-", stdout);
    } else if (*p == '/' && slashes) {
      fputs("/\\:", stdout);
    } else {
      putchar(*p);
    }
  }
}

int main(void)
{
  puts(".nh\n.na\n.TS\ntab(@);\nlb lb\nlw(32n) lx .\nSetting, default@Meaning\n_");
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const Row *r = &rows[i];
    fputs("T{\n\\fB", stdout);
    roff(r->name, 1, 0);
    fputs("\\fR\n.br\n\\ \\ ", stdout);
    roff(r->def, 1, 0);
    if (*r->unit) {
      putchar(' ');
      roff(r->unit, 0, 0);
    }
    fputs("\nT}@T{\n", stdout);
    roff(r->help, 0, 1);
    if (r->choices) {
      fputs("; one of ", stdout);
      for (const char *p = r->choices; *p; p++) {
        if (*p == '|')
          fputs(", ", stdout);
        else if (*p == '/')
          fputs("/\\:", stdout);
        else if (*p == '\\')
          fputs("\\e", stdout);
        else
          putchar(*p);
      }
    }
    fputs("\nT}\n", stdout);
  }
  puts(".TE\n.ad\n.hy");
  return 0;
}
