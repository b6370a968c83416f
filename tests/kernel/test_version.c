/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_version.c - kernel.version (kernel/version.h): the releases offered
 * agree with the setting's choices, each rule answers by its release, and
 * the rules keyed on it so far behave as the release they name.
 */
#include "config.h"
#include "kernel_fixture.h"

#include "mempolicy.h"

/* The setting's choices are the releases of version.c, oldest first, and
 * the default is the newest. */
START_TEST(test_choices_are_the_releases)
{
  const SettingDef *d = settings_def(SET_KERNEL_VERSION);
  g_auto(GStrv) choices = g_strsplit(d->choices, "|", -1);
  unsigned n = 0;
  for (; kernel_version_nth(n); n++) {
    ck_assert_msg(choices[n] != NULL, "kernel.version lacks %s", kernel_version_nth(n)->name);
    ck_assert_str_eq(choices[n], kernel_version_nth(n)->name);
    char buf[16];
    ck_assert_str_eq(kernel_version_name(kernel_version_nth(n)->kv, buf), choices[n]);
    if (n > 0)
      ck_assert_uint_gt(kernel_version_nth(n)->kv, kernel_version_nth(n - 1)->kv);
  }
  ck_assert_ptr_null(choices[n]);
  ck_assert_str_eq(d->def, "6.12");
  ck_assert_str_eq(kernel_version_nth(n - 1)->name, "6.12");
}
END_TEST

/* A rule answers "newer" from its release on, and each rule's text and
 * source are there for list settings and the docs. */
START_TEST(test_rule_by_release)
{
  for (int r = 0; r < N_KERNEL_RULES; r++) {
    const KernelRuleDef *d = kernel_rule_def((KernelRule)r);
    ck_assert_int_eq(d->id, r);
    ck_assert(d->name[0] && d->function[0] && d->before_text[0] && d->since_text[0]);
    uint32_t since = d->since;
    ck_assert(kernel_version_has(since, (KernelRule)r));
    ck_assert(kernel_version_has(since + 1, (KernelRule)r));
    ck_assert(!kernel_version_has(since - 1, (KernelRule)r));
    char buf[16];
    ck_assert_str_eq(kernel_version_name(since, buf), d->since_name);
    ck_assert(kernel_version_has(KV(6, 12), (KernelRule)r) ||
              !kernel_version_has(KV(3, 8), (KernelRule)r));
  }
  ck_assert(kernel_version_has(KV(6, 12), KR_MPOL_WEIGHTED_INTERLEAVE));
  ck_assert(!kernel_version_has(KV(6, 8), KR_MPOL_WEIGHTED_INTERLEAVE));
  ck_assert_str_eq(kernel_version_first_with(KR_MPOL_PREFERRED_MANY), "6.12");
}
END_TEST

START_TEST(test_kernel_takes_the_setting)
{
  const char *old[] = { "kernel.version=3.8", NULL };
  KernelFixture *f = kfix_new("skylake", old);
  ck_assert_uint_eq(f->k->version, KV(3, 8));
  ck_assert(!kernel_has(f->k, KR_MPOL_PREFERRED_MANY));
  kfix_free(f);
  f = kfix_new("skylake", NULL);
  ck_assert_uint_eq(f->k->version, KV(6, 12));
  ck_assert(kernel_has(f->k, KR_MPOL_WEIGHTED_INTERLEAVE));
  kfix_free(f);
}
END_TEST

/* numa.mempolicy naming a mode the release lacks is bad input, named. */
START_TEST(test_policy_setting_refused_before_its_release)
{
  static const char *const cases[][2] = {
    { "weighted_interleave:0-1", "6.9" },
    { "preferred_many:0-1", "5.15" },
    { "bind=balancing:0-1", "5.12" },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    Settings *s = settings_new();
    GError *err = NULL;
    ck_assert(preset_load(s, "skylake", &err));
    ck_assert(settings_set(s, "machine.mem_per_node", "1G", "test", &err));
    ck_assert(settings_set(s, "machine.nodes", "2", "test", &err));
    ck_assert(settings_set(s, "numa.mempolicy", cases[i][0], "test", &err));
    KernelArch arch = { .name = "x86_64", .user_va_limit = UINT64_C(1) << 47 };
    pgtable_geometry_x86_64(&arch.geo, 4);
    Kernel *k = kernel_new(s, &arch, &kfix_hooks, NULL, &err);
    ck_assert_msg(k != NULL, "%s under 6.12: %s", cases[i][0], err ? err->message : "");
    kernel_free(k);
    ck_assert(settings_set(s, "kernel.version", "3.8", "test", &err));
    k = kernel_new(s, &arch, &kfix_hooks, NULL, &err);
    ck_assert_msg(k == NULL, "%s accepted under 3.8", cases[i][0]);
    ck_assert_msg(strstr(err->message, "numa.mempolicy") && strstr(err->message, cases[i][1]) &&
                  strstr(err->message, "kernel.version=6.12"), "%s", err->message);
    g_clear_error(&err);
    settings_free(s);
  }
}
END_TEST

/* set_mempolicy of a mode the release lacks is EINVAL: the policy stays. */
static void set_policy(KernelFixture *f, Thread *t, TracePolicy mode, uint64_t nodes)
{
  TraceRecord r = { .type = REC_MEMPOLICY, .pid = t->pid, .arg = mode, .arg2 = nodes,
                    .flags = MPOL_F_PROCESS };
  kernel_syscall(f->k, f->kcpus[0], t->mm, &r);
}

START_TEST(test_trace_policy_einval_before_its_release)
{
  const char *sets[] = { "machine.nodes=2", "kernel.version=3.8", NULL };
  KernelFixture *f = kfix_new("skylake", sets);
  Thread *t = kfix_thread(f, 1);
  uint8_t before = t->mm->policy;
  uint64_t segv = f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED];
  set_policy(f, t, MPOL_WEIGHTED_INTERLEAVE, 3);
  ck_assert_uint_eq(t->mm->policy, before);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_SYSCALLS_FAILED], segv + 1);
  set_policy(f, t, MPOL_INTERLEAVE, 3);
  ck_assert_uint_eq(t->mm->policy, MPOL_INTERLEAVE);
  kfix_free(f);

  const char *now[] = { "machine.nodes=2", NULL };
  f = kfix_new("skylake", now);
  t = kfix_thread(f, 1);
  set_policy(f, t, MPOL_WEIGHTED_INTERLEAVE, 3);
  ck_assert_uint_eq(t->mm->policy, MPOL_WEIGHTED_INTERLEAVE);
  kfix_free(f);
}
END_TEST

static Suite *version_suite(void)
{
  Suite *s = suite_create("version");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_choices_are_the_releases);
  tcase_add_test(tc, test_rule_by_release);
  tcase_add_test(tc, test_kernel_takes_the_setting);
  tcase_add_test(tc, test_policy_setting_refused_before_its_release);
  tcase_add_test(tc, test_trace_policy_einval_before_its_release);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(version_suite)
