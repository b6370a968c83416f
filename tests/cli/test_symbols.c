/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_symbols.c - symbols.c: demangling known names (worked out with
 * c++filt), and naming a function of this very program through libdw and
 * through addr2line (MMUSIM_NO_LIBDW=1), which must agree.
 *
 * The offset looked up is the one run --annotate gives: the function's
 * address less its mapping's start plus the mapping's file offset, read
 * from /proc/self/maps.  Checks of a path the build or the host lacks
 * (libiberty, libdw, addr2line) print that they were skipped.
 */
#include "config.h"
#include "testutil.h"

#include <stdio.h>

#include "symbols.h"

/* The function looked up: not inlined, so that it has an address. */
__attribute__((noinline)) int symbols_test_marker(int x);
__attribute__((noinline)) int symbols_test_marker(int x)
{
  return x * 3 + 1;
}

/* The file and file offset of the code at addr, from /proc/self/maps. */
static gboolean where_is(const void *addr, char **path, uint64_t *offset)
{
  g_autofree char *maps = NULL;
  if (!g_file_get_contents("/proc/self/maps", &maps, NULL, NULL))
    return FALSE;
  g_auto(GStrv) lines = g_strsplit(maps, "\n", -1);
  uintptr_t a = (uintptr_t)addr;
  for (guint i = 0; lines[i]; i++) {
    unsigned long long start, end, off;
    int name_at = 0;
    if (sscanf(lines[i], "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &off, &name_at) != 3 || !name_at)
      continue;
    if (a >= start && a < end && lines[i][name_at] == '/') {
      *path = g_strdup(lines[i] + name_at);
      *offset = a - start + off;
      return TRUE;
    }
  }
  return FALSE;
}

static void expect_demangled(const char *mangled, const char *plain)
{
  g_autofree char *got = symbols_demangle(mangled);
  ck_assert_msg(g_strcmp0(got, plain) == 0, "%s: demangled '%s', expected '%s'", mangled, got ? got : "(null)",
                plain ? plain : "(null)");
}

START_TEST(test_demangle)
{
  if (!symbols_can_demangle()) {
    expect_demangled("_ZN5names8hot_loopIcEElPKT_l", NULL);
    printf("test_symbols: demangling skipped: built without libiberty\n");
    return;
  }
  expect_demangled("_ZN5names8hot_loopIcEElPKT_l", "long names::hot_loop<char>(char const*, long)");
  expect_demangled("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)");
  expect_demangled("_ZNK3Foo3barEv", "Foo::bar() const");
  expect_demangled("_Z3foov.cold", "foo() [clone .cold]");
  /* Rust (legacy mangling): the hash is left out, as rustfilt does. */
  expect_demangled("_ZN5Outer5inner3hot17h0123456789abcdefE", "Outer::inner::hot");
  /* A C name is not mangled: kept as it is by the caller. */
  expect_demangled("main", NULL);
  expect_demangled("_Z", NULL);
}
END_TEST

/* The name symbols_source() path gives this program's marker function. */
static const char *lookup_marker(Symbolizer *s)
{
  g_autofree char *path = NULL;
  uint64_t offset;
  ck_assert(where_is((const void *)symbols_test_marker, &path, &offset));
  SymInfo si;
  if (!symbolizer_lookup(s, path, offset, &si))
    return NULL;
  /* Asked again: the cached answer. */
  SymInfo again;
  ck_assert(symbolizer_lookup(s, path, offset, &again));
  ck_assert_ptr_eq(again.function, si.function);
  return si.function;
}

START_TEST(test_libdw_and_addr2line_agree)
{
  g_unsetenv("MMUSIM_NO_LIBDW");
  if (g_strcmp0(symbols_source(), "libdw") == 0) {
    Symbolizer *s = symbolizer_new(NULL, TRUE);
    ck_assert_str_eq(lookup_marker(s), "symbols_test_marker");
    symbolizer_free(s);
  } else {
    printf("test_symbols: libdw check skipped: built without libdw\n");
  }
  g_setenv("MMUSIM_NO_LIBDW", "1", TRUE);
  g_autofree char *a2l = g_find_program_in_path("addr2line");
  if (!a2l) {
    ck_assert_ptr_null(symbols_source());
    ck_assert(!symbols_available());
    printf("test_symbols: addr2line check skipped: no addr2line on PATH\n");
    return;
  }
  ck_assert_str_eq(symbols_source(), "addr2line");
  Symbolizer *s = symbolizer_new(NULL, TRUE);
  ck_assert_str_eq(lookup_marker(s), "symbols_test_marker");
  /* Not at hand, not ELF, or no PT_LOAD segment holds the offset:
   * unresolved, and the process of the file asked before still answers. */
  SymInfo si;
  ck_assert(!symbolizer_lookup(s, "/nonexistent/prog", 0x1000, &si));
  ck_assert_ptr_null(si.function);
  ck_assert(!symbolizer_lookup(s, "/proc/self/maps", 0, &si));
  g_autofree char *path = NULL;
  uint64_t offset;
  ck_assert(where_is((const void *)symbols_test_marker, &path, &offset));
  ck_assert(!symbolizer_lookup(s, path, G_MAXUINT64 / 2, &si));
  ck_assert(symbolizer_lookup(s, path, offset, &si));
  symbolizer_free(s);
  g_unsetenv("MMUSIM_NO_LIBDW");
}
END_TEST

static Suite *symbols_suite(void)
{
  Suite *s = suite_create("symbols");
  TCase *tc = tcase_create("names");
  tcase_add_test(tc, test_demangle);
  tcase_add_test(tc, test_libdw_and_addr2line_agree);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(symbols_suite)
