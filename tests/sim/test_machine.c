/*
 * Unit tests of machine presets and building: every preset loads and builds,
 * inheritance, errors that name the preset, group and key, impossible
 * machines rejected with the setting named.
 */
#include "config.h"
#include <glib/gstdio.h>
#include "engine.h"
#include "machine_fixture.h"
#include "text.h"

START_TEST(test_presets_build)
{
  g_auto(GStrv) names = machine_preset_names();
  ck_assert_uint_ge(g_strv_length(names), 4);
  for (int i = 0; names[i]; i++) {
    Machine *m = fixture_machine(names[i], NULL);
    ck_assert_uint_eq(m->n_cpus, 1);
    machine_free(m);
  }
  g_autoptr(Settings) s = settings_new();
  ck_assert(machine_load_preset(s, "westmere", NULL));
  ck_assert_int_eq(settings_int(s, SET_TLB_STLB_ENTRIES), 512);
  ck_assert_str_eq(settings_str(s, SET_TLB_STLB_SIZES), "4k");
  ck_assert_int_eq(settings_int(s, SET_CPU_FREQ_MHZ), 2930);
  ck_assert(machine_load_preset(s, "zen4", NULL));
  ck_assert(settings_bool(s, SET_TLB_L1_MIXED));
  ck_assert_int_eq(settings_int(s, SET_TLB_L1D_4K_ENTRIES), 72);
}
END_TEST

START_TEST(test_unknown_preset)
{
  g_autoptr(Settings) s = settings_new();
  g_autoptr(GError) err = NULL;
  ck_assert(!machine_load_preset(s, "pentium", &err));
  ck_assert_ptr_nonnull(strstr(err->message, "pentium"));
  ck_assert_ptr_nonnull(strstr(err->message, "skylake"));
}
END_TEST

START_TEST(test_ini_file_inherit_and_errors)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-XXXXXX", NULL);
  g_autofree char *good = g_build_filename(dir, "big.ini", NULL);
  g_autofree char *bad = g_build_filename(dir, "bad.ini", NULL);
  ck_assert(g_file_set_contents(good, "[machine]\ninherit = skylake\n[tlb]\nstlb_entries = 3072\n", -1, NULL));
  ck_assert(g_file_set_contents(bad, "[machine]\ninherit = skylake\n[tlb]\nstlb_entires = 3072\n", -1, NULL));
  g_autoptr(Settings) s = settings_new();
  ck_assert(machine_load_preset(s, good, NULL));
  ck_assert_int_eq(settings_int(s, SET_TLB_STLB_ENTRIES), 3072);
  ck_assert_int_eq(settings_int(s, SET_CPU_FREQ_MHZ), 3400); /* from skylake */
  g_autoptr(GError) err = NULL;
  ck_assert(!machine_load_preset(s, bad, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "bad.ini"));
  ck_assert_ptr_nonnull(strstr(err->message, "stlb_entires"));
  ck_assert_ptr_nonnull(strstr(err->message, "tlb.stlb_entries")); /* did you mean */
  g_unlink(good);
  g_unlink(bad);
  g_rmdir(dir);
}
END_TEST

START_TEST(test_impossible_machines)
{
  g_autoptr(Settings) s = settings_new();
  ck_assert(machine_load_preset(s, "skylake", NULL));
  ck_assert(settings_set(s, "tlb.stlb_ways", "7", "test", NULL));
  g_autoptr(GError) err = NULL;
  Machine *m = machine_new("skylake", s, NULL, &err);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(strstr(err->message, "tlb.stlb"));
  g_clear_error(&err);
  ck_assert(settings_set(s, "tlb.stlb_ways", "12", "test", NULL));
  ck_assert(settings_set(s, "machine.arch", "sparc", "test", NULL));
  m = machine_new("skylake", s, NULL, &err);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(strstr(err->message, "machine.arch"));
  ck_assert_ptr_nonnull(strstr(err->message, "x86_64"));
}
END_TEST

START_TEST(test_threads_and_shootdown)
{
  const char *two[] = { "machine.cpus_per_node=2", NULL };
  Machine *m = fixture_machine("skylake", two);
  ck_assert_uint_eq(m->n_cpus, 2);
  Thread *a = machine_thread(m, 1, 1, -1);
  Thread *b = machine_thread(m, 1, 2, -1);
  ck_assert_int_eq(a->cpu, 0);
  ck_assert_int_eq(b->cpu, 1); /* round-robin */
  ck_assert_ptr_eq(a->mm, b->mm);
  ck_assert_ptr_eq(machine_thread(m, 1, 1, -1), a);
  /* Both CPUs hold a translation; a shootdown from CPU 0 reaches CPU 1. */
  a->mm->cpumask = 3;
  for (unsigned i = 0; i < 2; i++) {
    Cpu *c = m->cpus[i];
    c->cur_asid = a->mm->asid;
    tlb_insert(c->l1d[0], tlb_key(a->mm->asid, 0, 0x7f0000000ULL), 0x42, TLBF_W | TLBF_D, 0);
  }
  uint64_t before = m->cpus[0]->clock;
  machine_flush_range(m, m->cpus[0], a->mm, 0x7f0000000000ULL, 0x7f0000001000ULL);
  for (unsigned i = 0; i < 2; i++)
    ck_assert_ptr_null(tlb_peek(m->cpus[i]->l1d[0], tlb_key(a->mm->asid, 0, 0x7f0000000ULL)));
  ck_assert_uint_eq(m->cpus[0]->clock - before, m->k->invlpg_cycles);
  ck_assert_uint_eq(m->cpus[1]->ctr.c[CTR_TLB_FLUSH_PAGES], 1);
  machine_free(m);
}
END_TEST

/* A thread that appears after its creator ran for a while starts then: its
 * CPU idles up to the creator's clock, and idle time is not cycles. */
START_TEST(test_new_thread_starts_at_creation)
{
  static const char *sets[] = { "machine.cpus_per_node=2", "sched.placement=fill", NULL };
  Machine *m = fixture_machine("skylake", sets);
  const char *text = "thread 1 cpu 0\ncompute 1000000\nthread 2 cpu 1\ncompute 10\n";
  GError *err = NULL;
  TraceSource *src = text_source_from_string("t.txt", text, &err);
  ck_assert_no_error(err);
  EngineOptions opt = { .whole = TRUE };
  EngineResult res;
  ck_assert(engine_run(m, src, &opt, &res, &err));
  trace_source_free(src);
  Cpu *c0 = m->cpus[0], *c1 = m->cpus[1];
  ck_assert_uint_ge(c1->clock, c0->clock);          /* started after 1M instructions of thread 1 */
  ck_assert_uint_eq(c1->idle_cycles, c0->clock);    /* idled until then */
  ck_assert_uint_lt(c1->clock - c1->idle_cycles, c0->clock / 100); /* ran 10 instructions */
  Counters sum;
  machine_counters(m, &sum);
  ck_assert_uint_eq(sum.c[CTR_CYCLES], c0->clock + c1->clock - c1->idle_cycles);
  machine_free(m);
}
END_TEST

static Suite *machine_suite(void)
{
  Suite *s = suite_create("machine");
  TCase *tc = tcase_create("presets");
  tcase_add_test(tc, test_presets_build);
  tcase_add_test(tc, test_unknown_preset);
  tcase_add_test(tc, test_ini_file_inherit_and_errors);
  tcase_add_test(tc, test_impossible_machines);
  tcase_add_test(tc, test_threads_and_shootdown);
  tcase_add_test(tc, test_new_thread_starts_at_creation);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(machine_suite)
