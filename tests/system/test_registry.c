/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_registry.c - every registry of pluggable parts keeps the convention
 * of base/registry.h: each row has a name, a one-line help and a source;
 * names are unique; a setting whose choices are a registry's names lists
 * them in the registry's order; a name no row has is an error naming the
 * choices.
 */
#include "config.h"
#include "testutil.h"

#include "arch.h"
#include "memsys-hot.h"
#include "mempolicy_mode.h"
#include "numa_balance.h"
#include "registry.h"
#include "settings.h"
#include "thp.h"
#include "tlb.h"
#include "tlb-private.h"
#include "trace_format.h"
#include "workload_impl.h"

#include <string.h>

typedef struct {
  const char *what;
  const RegistryRow *const *rows;
  unsigned n;
  int setting; /* the ENUM setting whose choices are the names, or -1 */
} RegistryCase;

#define MAX_CASES 8

/* Every registry, with the setting that names its rows. */
static unsigned all_registries(RegistryCase *out)
{
  unsigned k = 0, n;
  const ThpPolicy *const *thp = thp_policies(&n);
  out[k++] = (RegistryCase){ "THP policies", REGISTRY_ROWS(thp), n, SET_THP_POLICY };
  const NumaBalancePolicy *const *nb = numa_balance_policies(&n);
  out[k++] = (RegistryCase){ "NUMA balancing schemes", REGISTRY_ROWS(nb), n, SET_NUMA_BALANCING };
  const TlbReplPolicy *const *tlb = tlb_repl_policies(&n);
  out[k++] = (RegistryCase){ "TLB replacement policies", REGISTRY_ROWS(tlb), n, SET_TLB_REPLACEMENT };
  const MemPrefetcherRow *const *pf = memsys_prefetchers(&n);
  out[k++] = (RegistryCase){ "prefetchers", REGISTRY_ROWS(pf), n, SET_CACHE_PREFETCHER };
  const ArchOps *const *arches = arch_all(&n);
  out[k++] = (RegistryCase){ "architectures", REGISTRY_ROWS(arches), n, -1 };
  const WorkloadGenerator *const *gens = workload_generators(&n);
  out[k++] = (RegistryCase){ "workload generators", REGISTRY_ROWS(gens), n, -1 };
  const TraceFormatRow *const *readers = trace_format_readers(&n);
  out[k++] = (RegistryCase){ "trace readers", REGISTRY_ROWS(readers), n, -1 };
  /* The memory policy modes are reached one by one. */
  static const MempolicyMode *modes[16];
  n = 0;
  while (mempolicy_mode_nth(n)) {
    ck_assert_uint_lt(n, G_N_ELEMENTS(modes));
    modes[n] = mempolicy_mode_nth(n);
    n++;
  }
  out[k++] = (RegistryCase){ "memory policy modes", REGISTRY_ROWS(modes), n, -1 };
  ck_assert_uint_le(k, MAX_CASES);
  return k;
}

/* Each row: a name (unique in its registry, no blanks, not a separator of
 * a choices string), a help of one line and a source. */
START_TEST(test_rows_complete)
{
  RegistryCase c[MAX_CASES];
  unsigned k = all_registries(c);
  for (unsigned i = 0; i < k; i++) {
    ck_assert_msg(c[i].n > 0, "%s: no rows", c[i].what);
    for (unsigned r = 0; r < c[i].n; r++) {
      const RegistryRow *row = c[i].rows[r];
      ck_assert_msg(row->name && *row->name, "%s: row %u has no name", c[i].what, r);
      ck_assert_msg(strcspn(row->name, " \t\n|,:=") == strlen(row->name), "%s: name '%s'", c[i].what, row->name);
      ck_assert_msg(row->help && *row->help, "%s: %s has no help", c[i].what, row->name);
      ck_assert_msg(!strchr(row->help, '\n'), "%s: the help of %s is more than a line", c[i].what, row->name);
      ck_assert_msg(row->source && *row->source, "%s: %s has no source", c[i].what, row->name);
      ck_assert_msg(registry_find(c[i].rows, c[i].n, row->name) == (int)r, "%s: '%s' twice", c[i].what, row->name);
    }
  }
}
END_TEST

/* A setting that picks a row lists the registry's names, in its order,
 * and its default is one of them. */
START_TEST(test_setting_choices_match)
{
  RegistryCase c[MAX_CASES];
  unsigned k = all_registries(c), settings = 0;
  for (unsigned i = 0; i < k; i++) {
    if (c[i].setting < 0)
      continue;
    const SettingDef *d = settings_def((SettingId)c[i].setting);
    g_autofree char *names = registry_names(c[i].rows, c[i].n, "|", "|");
    ck_assert_int_eq(d->type, SETTING_ENUM);
    ck_assert_msg(strcmp(d->choices, names) == 0, "%s: choices \"%s\", registry \"%s\"", d->name, d->choices, names);
    ck_assert_int_ge(registry_find(c[i].rows, c[i].n, d->def), 0);
    settings++;
  }
  ck_assert_uint_eq(settings, 4);
  /* machine.arch is a string: its default must still be a row. */
  ck_assert_ptr_nonnull(arch_lookup(settings_def(SET_MACHINE_ARCH)->def));
  /* numa.mempolicy's help names every mode. */
  for (unsigned i = 0; mempolicy_mode_nth(i); i++)
    ck_assert_ptr_nonnull(strstr(settings_def(SET_NUMA_MEMPOLICY)->help, mempolicy_mode_nth(i)->name));
}
END_TEST

/* Each choice of a setting reaches its row through the lookup the machine
 * uses, whatever case the user wrote it in. */
START_TEST(test_lookup_from_settings)
{
  unsigned n;
  const ThpPolicy *const *thp = thp_policies(&n);
  for (unsigned i = 0; i < n; i++) {
    g_autoptr(Settings) s = settings_new();
    g_autoptr(GError) err = NULL;
    g_autofree char *upper = g_ascii_strup(thp[i]->name, -1);
    ck_assert(settings_set(s, "thp.policy", upper, "-s", &err));
    ck_assert_ptr_eq(thp_policy_from_settings(s, &err), thp[i]);
    ck_assert_no_error(err);
  }
  const TlbReplPolicy *const *tlb = tlb_repl_policies(&n);
  for (unsigned i = 0; i < n; i++) {
    g_autoptr(Settings) s = settings_new();
    g_autoptr(GError) err = NULL;
    ck_assert(settings_set(s, "tlb.replacement", tlb[i]->name, "-s", &err));
    ck_assert_ptr_eq(tlb_repl_from_settings(s, &err), tlb[i]);
  }
  const TraceFormatRow *const *readers = trace_format_readers(&n);
  for (unsigned i = 0; i < n; i++) {
    TraceFormat f;
    g_autoptr(GError) err = NULL;
    ck_assert(trace_format_parse(readers[i]->name, &f, &err));
    ck_assert_int_eq(f, (int)i + 1);
    ck_assert_str_eq(trace_format_name(f), readers[i]->name);
  }
  ck_assert_str_eq(trace_format_name(TRACE_FORMAT_TEXT), "text");
  ck_assert_str_eq(trace_format_name(TRACE_FORMAT_LACKEY), "lackey");
  ck_assert_str_eq(trace_format_name(TRACE_FORMAT_MTR), "mtr");
  ck_assert_str_eq(trace_format_name(TRACE_FORMAT_CHAMPSIM), "champsim");
}
END_TEST

/* A name no row has: not found (names are exact), and the error names
 * every choice. */
START_TEST(test_unknown_names_the_choices)
{
  unsigned n;
  const ArchOps *const *arches = arch_all(&n);
  ck_assert_int_eq(registry_find(REGISTRY_ROWS(arches), n, "X86_64"), -1);
  ck_assert_int_eq(registry_find(REGISTRY_ROWS(arches), n, "x86"), -1);
  ck_assert_int_eq(registry_find(REGISTRY_ROWS(arches), n, ""), -1);
  ck_assert_int_eq(registry_find_len(REGISTRY_ROWS(arches), n, "ppc64:x", 5), 1);
  ck_assert_ptr_null(arch_lookup("arm64"));
  g_autoptr(GError) err = NULL;
  registry_set_unknown(&err, MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE, "setting 'machine.arch'",
                       REGISTRY_ROWS(arches), n, "arm64");
  ck_assert_str_eq(err->message, "setting 'machine.arch' cannot be 'arm64': it takes one of x86_64, ppc64");
  g_autofree char *names = arch_names();
  ck_assert_str_eq(names, "x86_64, ppc64");

  TraceFormat f;
  g_autoptr(GError) ferr = NULL;
  ck_assert(!trace_format_parse("pin", &f, &ferr));
  /* The readers are named from the table, so a new one extends the list. */
  ck_assert_msg(g_str_has_prefix(ferr->message, "unknown trace format 'pin'; expected auto, text, lackey, mtr"), "%s",
                ferr->message);
  const TraceFormatRow *const *readers = trace_format_readers(&n);
  g_autofree char *last = g_strconcat(" or ", readers[n - 1]->name, NULL);
  ck_assert_msg(g_str_has_suffix(ferr->message, last), "%s", ferr->message);

  g_autoptr(GError) werr = NULL;
  ck_assert_ptr_null(workload_open("PTRCHASE", NULL, &werr));
  ck_assert_ptr_nonnull(strstr(werr->message, "expected one of ptrchase, random, seq"));
}
END_TEST

static Suite *registry_suite(void)
{
  Suite *s = suite_create("registry");
  TCase *tc = tcase_create("rows");
  tcase_add_test(tc, test_rows_complete);
  tcase_add_test(tc, test_setting_choices_match);
  tcase_add_test(tc, test_lookup_from_settings);
  tcase_add_test(tc, test_unknown_names_the_choices);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(registry_suite)
