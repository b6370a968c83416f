/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel_fixture.h - the kernel alone, for its unit tests: no machine.
 *
 * The kernel reaches the hardware only through the hooks of kernel/hooks.h;
 * here they are a stub that charges nothing but the stalls it is asked for
 * (each advances the CPU's clock) and records what was asked: TLB flushes
 * with their range, stride and freed tables, bulk DRAM transfers, drains.
 * The CPUs are bare KCpu handles with a clock and counters of their own.
 * The page-table geometry is x86-64's (4 or 5 levels, x86.paging_levels),
 * which is what every preset the tests use asks for.
 */
#ifndef MMUSIM_KERNEL_FIXTURE_H
#define MMUSIM_KERNEL_FIXTURE_H

#include "kernel.h"
#include "preset.h"
#include "testutil.h"

#include <string.h>

/* One CPU of the fixture: the kernel's handle, and the clock and counters
 * it points to (in a machine, the Cpu's). */
typedef struct {
  KCpu kc;
  uint64_t clock;
  Counters ctr;
} KfCpu;

/* One call of flush_tlb_range, as the stub saw it. */
typedef struct {
  unsigned cpu;
  uint32_t pid;
  uint64_t start, end;
  unsigned stride_shift;
  gboolean freed_tables;
} KfFlush;

typedef struct {
  Settings *s;
  Kernel *k;
  unsigned n_cpus;
  KfCpu **cpus;
  KCpu **kcpus;
  GPtrArray *threads;   /* of Thread, owned */
  GArray *flushes;      /* of KfFlush, every flush_tlb_range in order */
  unsigned dram_bulks, drains, forgets;
  uint64_t dram_bulk_bytes;
  unsigned fill_calls;  /* fill_lines: calls, and bytes written */
  uint64_t fill_bytes;
} KernelFixture;

G_GNUC_UNUSED static void kfix_flush(void *hw, KCpu *initiator, Mm *mm, uint64_t start, uint64_t end, unsigned stride_shift,
                       gboolean freed_tables)
{
  KernelFixture *f = hw;
  KfFlush fl = { initiator->id, mm->pid, start, end, stride_shift, freed_tables };
  g_array_append_val(f->flushes, fl);
}

G_GNUC_UNUSED static uint64_t kfix_dram_bulk(void *hw, KCpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t after,
                               uint64_t span_cycles)
{
  KernelFixture *f = hw;
  (void)cpu, (void)pfn, (void)after, (void)span_cycles;
  f->dram_bulks++;
  f->dram_bulk_bytes += bytes;
  return 0; /* an idle DRAM: no queueing */
}

G_GNUC_UNUSED static void kfix_fill_lines(void *hw, KCpu *cpu, const KernelFill *fills, unsigned n)
{
  KernelFixture *f = hw;
  (void)cpu;
  f->fill_calls++;
  for (unsigned i = 0; i < n; i++)
    f->fill_bytes += fills[i].bytes;
}

G_GNUC_UNUSED static void kfix_drain(void *hw, KCpu *cpu)
{
  (void)cpu;
  ((KernelFixture *)hw)->drains++;
}

G_GNUC_UNUSED static void kfix_stall(void *hw, KCpu *cpu, uint64_t cycles)
{
  (void)hw;
  ((KfCpu *)cpu)->clock += cycles; /* kc is KfCpu's first member */
}

G_GNUC_UNUSED static void kfix_forget(void *hw, KCpu *cpu)
{
  (void)cpu;
  ((KernelFixture *)hw)->forgets++;
}

G_GNUC_UNUSED static const KernelHooks kfix_hooks = {
  .flush_tlb_range = kfix_flush,
  .dram_bulk = kfix_dram_bulk,
  .fill_lines = kfix_fill_lines,
  .drain = kfix_drain,
  .stall = kfix_stall,
  .forget_shortcuts = kfix_forget,
};

/* The kernel of `preset` with 1G of memory per node and the given
 * KEY=VALUE pairs (NULL-terminated), on machine.nodes x
 * machine.cpus_per_node stub CPUs. */
static inline KernelFixture *kfix_new(const char *preset, const char *const *sets)
{
  KernelFixture *f = g_new0(KernelFixture, 1);
  GError *err = NULL;
  f->s = settings_new();
  ck_assert_msg(preset_load(f->s, preset, &err), "%s", err ? err->message : "");
  ck_assert(settings_set(f->s, "machine.mem_per_node", "1G", "test", &err));
  for (int i = 0; sets && sets[i]; i++)
    ck_assert_msg(settings_set_pair(f->s, sets[i], "test", &err), "%s", err ? err->message : "");
  ck_assert_msg(strcmp(settings_str(f->s, SET_MACHINE_ARCH), "x86_64") == 0, "kernel_fixture.h is x86-64 only");
  unsigned levels = (unsigned)settings_int(f->s, SET_X86_PAGING_LEVELS);
  KernelArch arch = { .name = "x86_64", .user_va_limit = levels == 5 ? UINT64_C(1) << 56 : UINT64_C(1) << 47 };
  pgtable_geometry_x86_64(&arch.geo, levels);
  f->flushes = g_array_new(FALSE, FALSE, sizeof(KfFlush));
  f->threads = g_ptr_array_new_with_free_func(g_free);
  f->k = kernel_new(f->s, &arch, &kfix_hooks, f, &err);
  ck_assert_msg(f->k != NULL, "%s", err ? err->message : "");
  unsigned per = (unsigned)settings_int(f->s, SET_MACHINE_CPUS_PER_NODE);
  f->n_cpus = (unsigned)settings_int(f->s, SET_MACHINE_NODES) * per;
  f->cpus = g_new0(KfCpu *, f->n_cpus);
  f->kcpus = g_new0(KCpu *, f->n_cpus);
  for (unsigned i = 0; i < f->n_cpus; i++) {
    KfCpu *c = g_new0(KfCpu, 1);
    c->kc = (KCpu){ .id = i, .node = (int)(i / per), .clock = &c->clock, .ctr = &c->ctr };
    f->cpus[i] = c;
    f->kcpus[i] = &c->kc;
  }
  kernel_attach_cpus(f->k, f->kcpus, f->n_cpus);
  physmem_fragment(f->k->pm, f->s);
  return f;
}

static inline void kfix_free(KernelFixture *f)
{
  kernel_free(f->k);
  for (unsigned i = 0; i < f->n_cpus; i++)
    g_free(f->cpus[i]);
  g_free(f->cpus);
  g_free(f->kcpus);
  g_ptr_array_free(f->threads, TRUE);
  g_array_free(f->flushes, TRUE);
  settings_free(f->s);
  g_free(f);
}

/* Thread 1 of process `pid` on CPU `cpu`, running there. */
static inline Thread *kfix_thread_on(KernelFixture *f, uint32_t pid, unsigned cpu)
{
  Thread *t = g_new0(Thread, 1);
  t->pid = pid;
  t->tid = 1;
  t->cpu = (int)cpu;
  t->mm = kernel_mm(f->k, pid);
  ck_assert(t->mm != NULL);
  t->mm->users++;
  g_ptr_array_add(f->threads, t);
  f->cpus[cpu]->kc.cur = t;
  f->cpus[cpu]->kc.cur_since = f->cpus[cpu]->clock;
  mm_cpumask_set(t->mm, cpu);
  return t;
}

static inline Thread *kfix_thread(KernelFixture *f, uint32_t pid)
{
  return kfix_thread_on(f, pid, 0);
}

/* The system call `type` of t on CPU 0 over [addr, addr + len), with the
 * protection and MAP_F_* flags of an mmap or mprotect (0 for the others),
 * handed to kernel_syscall as the engine hands it a mapping record. */
static inline void kfix_syscall(KernelFixture *f, Thread *t, TraceRecordType type, uint64_t addr, uint64_t len,
                                uint8_t prot, uint8_t flags)
{
  TraceRecord r = { .type = (uint8_t)type, .pid = t->pid, .tid = t->tid, .addr = addr, .len = len, .prot = prot,
                    .flags = flags };
  kernel_syscall(f->k, &f->cpus[0]->kc, t->mm, &r);
}

/* Process `pid`'s thread on CPU 0 (kfix_thread) with one mapping
 * [start, start + len) made by the mmap system call: anonymous and private
 * with flags 0, a file's with MAP_F_FILE (and MAP_F_SHARED).  The set-up of
 * the fault tests that go through do_mmap rather than fixture_vma. */
static inline Thread *kfix_mapped_thread(KernelFixture *f, uint32_t pid, uint64_t start, uint64_t len, uint8_t prot,
                                         uint8_t flags)
{
  Thread *t = kfix_thread(f, pid);
  kfix_syscall(f, t, REC_MMAP, start, len, prot, flags);
  return t;
}

/* ---- shared with machine_fixture.h ------------------------------------ */

/* An anonymous VMA [start, start + len) with prot. */
static inline void fixture_vma(Thread *t, uint64_t start, uint64_t len, uint8_t prot)
{
  Vma v = { .start = start, .end = start + len, .prot = prot };
  mm_insert_vma(t->mm, &v);
}

/* The 4K entry that maps va in t's page table, 0 when there is none (no
 * table down to level 1, or a huge page maps va). */
static inline uint64_t fixture_pte(Thread *t, uint64_t va)
{
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, va, &level, &idx);
  return level == 1 ? n->e[idx] : 0;
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
