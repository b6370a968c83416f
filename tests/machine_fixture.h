/*
 * machine_fixture.h - build a small machine for unit tests.
 */
#ifndef MMUSIM_MACHINE_FIXTURE_H
#define MMUSIM_MACHINE_FIXTURE_H

#include "kernel_fixture.h" /* fixture_vma, fixture_free_pages, fixture_check_buddy */
#include "machine.h"
#include "testutil.h"

/* A machine from `preset` with 1G of memory and the given KEY=VALUE pairs
 * (NULL-terminated). */
static inline Machine *fixture_machine(const char *preset, const char *const *sets)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, preset, &err));
  ck_assert(settings_set(s, "machine.mem_per_node", "1G", "test", &err));
  for (int i = 0; sets && sets[i]; i++) {
    ck_assert_msg(settings_set_pair(s, sets[i], "test", &err), "%s", err ? err->message : "");
  }
  Machine *m = machine_new(preset, s, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err ? err->message : "");
  return m;
}

/* Thread 1 of process `pid` on CPU 0, made current there. */
static inline Thread *fixture_thread(Machine *m, uint32_t pid)
{
  Thread *t = machine_thread(m, pid, 1, 0);
  Cpu *cpu = m->cpus[0];
  cpu->kc.cur = t;
  cpu->cur_asid = t->mm->asid;
  cpu_forget_shortcuts(cpu);
  mm_cpumask_set(t->mm, 0);
  return t;
}

#endif
