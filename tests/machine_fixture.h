/*
 * machine_fixture.h - build a small machine for unit tests.
 */
#ifndef MMUSIM_MACHINE_FIXTURE_H
#define MMUSIM_MACHINE_FIXTURE_H

#include "machine.h"
#include "testutil.h"

/* A machine from `preset` with 1G of memory and the given KEY=VALUE pairs
 * (NULL-terminated). */
static inline Machine *fixture_machine(const char *preset, const char *const *sets)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(machine_load_preset(s, preset, &err));
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

/* An anonymous VMA [start, start + len) with prot. */
static inline void fixture_vma(Thread *t, uint64_t start, uint64_t len, uint8_t prot)
{
  Vma v = { .start = start, .end = start + len, .prot = prot };
  mm_insert_vma(t->mm, &v);
}

/* Free 4K pages over every node. */
static inline uint64_t fixture_free_pages(const Kernel *k)
{
  uint64_t n = 0;
  for (int node = 0; node < physmem_nodes(k->pm); node++)
    n += physmem_free_pages(k->pm, node);
  return n;
}

/* Every zone's buddy invariants hold. */
static inline void fixture_check_buddy(const Kernel *k)
{
  for (int node = 0; node < physmem_nodes(k->pm); node++)
    for (ZoneType t = 0; t < N_ZONE_TYPES; t++) {
      BuddyZone *z = physmem_zone(k->pm, node, t);
      g_autoptr(GString) why = g_string_new(NULL);
      ck_assert_msg(!z || buddy_check(z, why), "node %d zone %s: %s", node, buddy_zone_name(t), why->str);
    }
}

#endif
