/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * registry.h - the one convention of every pluggable part: a table of rows.
 *
 * A pluggable part (a THP policy, a NUMA balancing scheme, a TLB
 * replacement policy, a prefetcher, a memory policy mode, an architecture,
 * a workload generator, a trace reader) is a struct whose first member is
 * REGISTRY_ROW: its name (what a setting, -w or -f takes), a one-line help
 * and the source of its rule (a kernel function, a paper, a manual), then
 * its hooks.  Its folder keeps a table of pointers to the rows, in the
 * order of the setting's choices where a setting names them, and finds a
 * row by name with registry_find().  A name no row has is an error naming
 * the choices (registry_names()): nothing falls back to a default.
 *
 * REGISTRY_ROW is a union, so that `row->name` reads as before and
 * `&row->row` is the same three fields as a RegistryRow, at the start of
 * the struct (C11 6.7.2.1: a pointer to a struct points to its first
 * member).  REGISTRY_ROWS(table) checks that the table's rows have that
 * head and gives the table as RegistryRow pointers; the caller indexes
 * its own table with what registry_find() returns, so it keeps its type.
 * Names are matched exactly (the settings' own parser already takes an
 * enum value in any case and hands on its canonical name).
 */
#ifndef MMUSIM_REGISTRY_H
#define MMUSIM_REGISTRY_H

#include <glib.h>
#include <string.h>

typedef struct {
  const char *name;   /* what a setting, -w or -f names it by */
  const char *help;   /* one line */
  const char *source; /* where the rule comes from */
} RegistryRow;

/* The head of every row struct: `name`, `help` and `source` as members of
 * the row, and the same three as `row`. */
#define REGISTRY_ROW                                                       \
  union {                                                                  \
    RegistryRow row;                                                       \
    struct {                                                               \
      const char *name;                                                    \
      const char *help;                                                    \
      const char *source;                                                  \
    };                                                                     \
  }

/* A table of pointers to rows (`const T *const table[]`, T opening with
 * REGISTRY_ROW) as `const RegistryRow *const *`; a table of anything else
 * does not compile. */
#define REGISTRY_ROWS(table) \
  ((void)sizeof(&(table)[0]->row == (const RegistryRow *)NULL), (const RegistryRow *const *)(const void *)(table))

/* The index of the row whose name is the first `len` bytes of `name`, or
 * -1 when no row has that name. */
static inline int registry_find_len(const RegistryRow *const *rows, unsigned n, const char *name, size_t len)
{
  for (unsigned i = 0; i < n; i++)
    if (strlen(rows[i]->name) == len && memcmp(rows[i]->name, name, len) == 0)
      return (int)i;
  return -1;
}

/* The index of the row named `name`, or -1. */
static inline int registry_find(const RegistryRow *const *rows, unsigned n, const char *name)
{
  return registry_find_len(rows, n, name, strlen(name));
}

/* The names in table order for a message or a choices string: "a, b, c"
 * (sep ", ", last_sep ", "), "a, b or c" (last_sep " or "), "a|b|c". */
static inline char *registry_names(const RegistryRow *const *rows, unsigned n, const char *sep, const char *last_sep)
{
  GString *s = g_string_new(NULL);
  for (unsigned i = 0; i < n; i++)
    g_string_append_printf(s, "%s%s", i == 0 ? "" : i + 1 == n ? last_sep : sep, rows[i]->name);
  return g_string_free(s, FALSE);
}

/* The error for a name no row has: "WHAT cannot be 'NAME': it takes one
 * of a, b, c". */
static inline void registry_set_unknown(GError **error, GQuark domain, int code, const char *what,
                                        const RegistryRow *const *rows, unsigned n, const char *name)
{
  g_autofree char *names = registry_names(rows, n, ", ", ", ");
  g_set_error(error, domain, code, "%s cannot be '%s': it takes one of %s", what, name, names);
}

/* One line per row for `mmusim list`: "  NAME  HELP" with names padded to
 * `width`. */
static inline void registry_list(GString *out, const RegistryRow *const *rows, unsigned n, int width)
{
  for (unsigned i = 0; i < n; i++)
    g_string_append_printf(out, "  %-*s %s\n", width, rows[i]->name, rows[i]->help);
}

#endif
