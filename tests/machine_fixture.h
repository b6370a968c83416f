/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * machine_fixture.h - build a small machine for unit tests, and the steps
 * many tests take on it: set settings, run a text trace, fault, translate,
 * access, make a system call, read a counter.  A helper that a second test
 * file needs belongs here rather than in a copy.
 */
#ifndef MMUSIM_MACHINE_FIXTURE_H
#define MMUSIM_MACHINE_FIXTURE_H

#include "engine.h"
#include "fault.h"
#include "kernel_fixture.h" /* fixture_vma, fixture_free_pages, fixture_check_buddy */
#include "machine.h"
#include "testutil.h"
#include "text.h"

/* Set each "KEY=VALUE" of the NULL-terminated `pairs` (may be NULL), from
 * origin "test", asserting that each is accepted. */
static inline void fixture_settings_apply(Settings *s, const char *const *pairs)
{
  for (const char *const *p = pairs; p && *p; p++) {
    g_autoptr(GError) err = NULL;
    ck_assert_msg(settings_set_pair(s, *p, "test", &err), "%s: %s", *p, err ? err->message : "");
  }
}


/* A machine from `preset` with 1G of memory and the given KEY=VALUE pairs
 * (NULL-terminated). */
static inline Machine *fixture_machine(const char *preset, const char *const *sets)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  ck_assert(preset_load(s, preset, &err));
  ck_assert(settings_set(s, "machine.mem_per_node", "1G", "test", &err));
  fixture_settings_apply(s, sets);
  Machine *m = machine_new(preset, s, NULL, &err);
  ck_assert_msg(m != NULL, "%s", err ? err->message : "");
  return m;
}

/* cpu tags translations with mm's ASID there, taking a slot as a switch
 * to mm would when it has none (kernel_switch_asid). */
static inline void fixture_load_asid(Machine *m, Cpu *cpu, Mm *mm)
{
  int tag = kernel_cpu_pcid(m->k, &cpu->kc, mm);
  if (tag < 0) {
    gboolean flush;
    tag = (int)kernel_pcid_of(kernel_switch_asid(m->k, &cpu->kc, mm, &flush));
  }
  cpu->cur_asid = (unsigned)tag;
}

/* Thread 1 of process `pid` on CPU 0, made current there. */
static inline Thread *fixture_thread(Machine *m, uint32_t pid)
{
  Thread *t = machine_thread(m, pid, 1, 0);
  Cpu *cpu = m->cpus[0];
  cpu->kc.cur = t;
  fixture_load_asid(m, cpu, t->mm);
  cpu_forget_shortcuts(cpu);
  mm_cpumask_set(t->mm, 0);
  return t;
}

/* One load, store or fetch of 8 bytes at va by t, on t's CPU. */
static inline void fixture_access(Machine *m, Thread *t, AccessKind kind, uint64_t va)
{
  TraceRecord r = { .type = REC_ACCESS, .kind = kind, .addr = va, .size = 8 };
  cpu_access(m->cpus[t->cpu], t, &r);
}

/* The architecture's translation of va for t on CPU 0, from a cleared x. */
static inline XlatStatus fixture_xlat(Machine *m, Thread *t, uint64_t va, AccessKind kind, Xlat *x)
{
  memset(x, 0, sizeof *x);
  return m->arch->translate(m->cpus[0], t->mm, va, kind, x, NULL);
}

/* The page fault of va for t on CPU 0; its cost in *cycles if not NULL. */
static inline FaultResult fixture_fault(Machine *m, Thread *t, uint64_t va, AccessKind kind, uint64_t *cycles)
{
  uint64_t c;
  return fault_handle(m->k, &m->cpus[0]->kc, t->mm, va, kind, cycles ? cycles : &c);
}

/* The system call `type` of t on CPU 0 over [addr, addr + len): prot_or_arg
 * is the protection of an mmap or mprotect, the argument of the others. */
static inline void fixture_syscall(Machine *m, Thread *t, TraceRecordType type, uint64_t addr, uint64_t len,
                                   int prot_or_arg, uint8_t flags)
{
  TraceRecord r = { .type = (uint8_t)type, .addr = addr, .len = len, .pid = t->pid, .tid = t->tid, .flags = flags };
  if (type == REC_MMAP || type == REC_MPROTECT)
    r.prot = (uint8_t)prot_or_arg;
  else
    r.arg = prot_or_arg;
  kernel_syscall(m->k, &m->cpus[0]->kc, t->mm, &r);
}

/* Counter `id` of CPU 0 alone. */
static inline uint64_t fixture_cpu0_ctr(const Machine *m, CounterId id)
{
  return m->cpus[0]->ctr.c[id];
}

/* Counter `id` summed over the machine's CPUs. */
static inline uint64_t fixture_ctr(const Machine *m, CounterId id)
{
  Counters c;
  machine_counters(m, &c);
  return c.c[id];
}

/* Run the text trace `text` through m to its end (the whole run when
 * `whole`, else the region of interest), asserting that it runs; returns
 * whether it ended out of memory. */
static inline gboolean fixture_run_text(Machine *m, const char *text, gboolean whole)
{
  GError *err = NULL;
  g_autoptr(TraceSource) src = text_source_from_string("t.txt", text, &err);
  ck_assert_no_error(err);
  EngineOptions opt = { .whole = whole };
  EngineResult res;
  ck_assert_msg(engine_run(m, src, &opt, &res, &err), "%s", err ? err->message : "");
  gboolean oom = res.oom;
  engine_result_clear(&res);
  return oom;
}

#endif
