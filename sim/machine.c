/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * machine.c - building a machine, threads and their placement, TLB
 * shootdown, and the kernel's hooks (kernel/hooks.h).
 *
 * Shootdowns follow flush_tlb_mm_range (arch/x86/mm/tlb.c): the initiator
 * invalidates locally and, when mm_cpumask holds other CPUs, sends them
 * IPIs and waits for them (smp_call_function_many); each target runs
 * flush_tlb_func in its interrupt handler.
 *
 * Leaves out: SMT siblings sharing TLBs; lazy TLB mode and the tlb_gen
 * check that lets a CPU which switched away skip the IPI (here every CPU
 * that ran the mm is a target); the load balancer moving threads after
 * their first placement.
 */
#include "config.h"
#include "machine.h"
#include "oom_kill.h"

#include <string.h>
#include "events.h"

static gboolean machine_build_cpu(Machine *m, Cpu *c, GError **error);

/* A (pid << 32 | tid) key's hash from both halves: GLib before 2.76 hashes
 * a 64-bit key by its low 32 bits (the tid), and the threads of different
 * processes that share tid 1 all collided, each new one comparing with every
 * other (8,000 processes took 22 s). */
static guint thread_key_hash(gconstpointer p)
{
  uint64_t k = *(const uint64_t *)p;
  return (guint)((k ^ (k >> 32)) * UINT64_C(0x9E3779B97F4A7C15) >> 32);
}

static void thread_free(gpointer p)
{
  g_free(p);
}

Machine *machine_new(const char *name, const Settings *s, EventLog *ev, GError **error)
{
  const char *arch_name = settings_str(s, SET_MACHINE_ARCH);
  const ArchOps *arch = arch_lookup(arch_name);
  if (!arch) {
    g_autofree char *names = arch_names();
    g_autofree char *at = settings_prefix(s, SET_MACHINE_ARCH);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%ssetting 'machine.arch' cannot be '%s': it takes one of %s",
                at, arch_name, names);
    return NULL;
  }
  /* Nested paging (EPT/NPT) and shadow paging are x86-64's radix walk
   * (arch/x86_64); no other architecture models them. */
  static const struct { SettingId id; const char *what, *off; } x86_only[] = {
    { SET_VIRT_NESTED, "nested paging (EPT/NPT)", "virt.nested=false" },
    { SET_VIRT_SHADOW, "shadow paging", "virt.shadow=false" },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(x86_only); i++) {
    if (settings_bool(s, x86_only[i].id) && strcmp(arch->name, "x86_64") != 0) {
      g_autofree char *where = settings_blame(s, x86_only[i].id);
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                  "%s, but machine.arch is %s: %s is modelled for x86_64 only; "
                  "set %s (a ppc64 guest partition is virt.lpar's)", where, arch->name, x86_only[i].what, x86_only[i].off);
      return NULL;
    }
  }
  if (arch->check && !arch->check(s, error))
    return NULL;
  Machine *m = g_new0(Machine, 1);
  m->name = g_strdup(name);
  m->s = settings_copy(s);
  m->arch = arch;
  m->ev = ev;
  m->walk_sample_left = (uint64_t)settings_int(s, SET_EVENTS_WALK_SAMPLE);
  m->fill_scratch = memsys_fill_scratch_new();
  m->fills = g_array_new(FALSE, FALSE, sizeof(MemFill));
  m->threads = g_hash_table_new_full(thread_key_hash, g_int64_equal, g_free, thread_free);
  unsigned nodes = (unsigned)settings_int(s, SET_MACHINE_NODES);
  unsigned per = (unsigned)settings_int(s, SET_MACHINE_CPUS_PER_NODE);
  KernelArch ka = { .name = arch->name, .user_va_limit = arch->user_va_limit(m->s) };
  arch->pgtable_geometry(m->s, &ka.geo);
  m->k = kernel_new(m->s, &ka, &machine_hooks, m, error);
  if (!m->k)
    goto fail;
  m->k->ev = ev;
  m->llc = g_new0(Cache *, nodes);
  for (unsigned n = 0; n < nodes; n++) {
    if (settings_int(s, SET_CACHE_LLC_SIZE)) {
      m->llc[n] = memsys_llc_new(m->s, error);
      if (!m->llc[n])
        goto fail;
    }
  }
  m->dram = dram_new(m->s, physmem_topology(m->k->pm), physmem_pages_per_node(m->k->pm),
                     (unsigned)settings_int(s, SET_CACHE_LINE_BYTES), m->k->cycles_per_ns, error);
  if (!m->dram)
    goto fail;
  m->spread = strcmp(settings_str(s, SET_SCHED_PLACEMENT), "spread") == 0;
  m->next_on_node = g_new0(unsigned, nodes);
  m->shootdown_cycles = kernel_ns_to_cycles(m->k, settings_double(s, SET_TLB_SHOOTDOWN_NS));
  m->shootdown_per_cpu_cycles = kernel_ns_to_cycles(m->k, settings_double(s, SET_TLB_SHOOTDOWN_PER_CPU_NS));
  m->ipi_handler_cycles = kernel_ns_to_cycles(m->k, settings_double(s, SET_TLB_IPI_HANDLER_NS));
  m->n_cpus = nodes * per;
  m->cpus = g_new0(Cpu *, m->n_cpus);
  m->kcpus = g_new0(KCpu *, m->n_cpus);
  for (unsigned i = 0; i < m->n_cpus; i++) {
    m->cpus[i] = cpu_new(m, (int)i, (int)(i / per), m->llc[i / per]);
    m->kcpus[i] = &m->cpus[i]->kc;
  }
  /* CPU 0 is built now: every CPU has the same settings, so a setting its
   * TLBs, caches or architecture refuse is refused here, and ppc64's
   * hashed page table (which CPU 0 makes) comes before the machine's
   * history below, as in a machine that builds every CPU.  The others are
   * built when first used (machine_cpu_ready). */
  if (!machine_build_cpu(m, m->cpus[0], error))
    goto fail;
  kernel_attach_cpus(m->k, m->kcpus, m->n_cpus);
  /* Then the machine's history: the background pages of a long uptime,
   * after every allocation of the boot (the zero page, the hugetlbfs pools,
   * and ppc64's hashed page table, which Linux takes from memblock before
   * the buddy allocator exists: htab_initialize). */
  physmem_fragment(m->k->pm, m->s);
  return m;
fail:
  machine_free(m);
  return NULL;
}

void machine_free(Machine *m)
{
  if (!m)
    return;
  if (m->threads)
    g_hash_table_destroy(m->threads);
  for (unsigned i = 0; m->cpus && i < m->n_cpus; i++)
    cpu_free(m->cpus[i]);
  g_free(m->cpus);
  g_free(m->kcpus);
  dram_free(m->dram);
  g_free(m->next_on_node);
  kernel_free(m->k);
  unsigned nodes = (unsigned)settings_int(m->s, SET_MACHINE_NODES);
  for (unsigned n = 0; m->llc && n < nodes; n++)
    cache_free(m->llc[n]);
  g_free(m->llc);
  memsys_fill_scratch_free(m->fill_scratch);
  if (m->fills)
    g_array_free(m->fills, TRUE);
  settings_free(m->s);
  g_free(m->name);
  g_free(m);
}

static gboolean machine_build_cpu(Machine *m, Cpu *c, GError **error)
{
  if (c->built)
    return TRUE;
  if (!cpu_build(c, error))
    return FALSE;
  memsys_attach_dram(c->mem, m->dram, (unsigned)c->node, &c->clock);
  m->n_built++;
  return TRUE;
}

Cpu *machine_cpu_ready(Machine *m, Cpu *c)
{
  if (G_LIKELY(c->built))
    return c;
  /* CPU 0 was built from the same settings, so only the host's memory can
   * fail here, and GLib aborts on that before cpu_build returns. */
  g_autoptr(GError) err = NULL;
  if (!machine_build_cpu(m, c, &err))
    g_error("CPU %d cannot be built: %s", c->id, err->message);
  return c;
}

/* The CPU of a thread the trace does not pin (sched.placement). */
static int place_thread(Machine *m)
{
  unsigned i = m->next_cpu++;
  if (!m->spread)
    return (int)(i % m->n_cpus);
  unsigned nodes = (unsigned)settings_int(m->s, SET_MACHINE_NODES);
  unsigned per = m->n_cpus / nodes;
  unsigned node = i % nodes;
  return (int)(node * per + m->next_on_node[node]++ % per);
}

gboolean machine_thread_check(const Machine *m, uint32_t pid, uint32_t tid, GError **error)
{
  uint64_t key = (uint64_t)pid << 32 | tid;
  if (g_hash_table_contains(m->threads, &key))
    return TRUE;
  unsigned max = (unsigned)settings_int(m->s, SET_KERNEL_PID_MAX);
  if (g_hash_table_size(m->threads) >= max) {
    g_autofree char *where = settings_blame(m->s, SET_KERNEL_PID_MAX);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                "thread %u of process %u is one more than the %u threads a run may have in all (%s; every task "
                "takes a pid): raise kernel.pid_max (at most 4194304, Linux's PID_MAX_LIMIT) or split the trace",
                tid, pid, max, where);
    return FALSE;
  }
  return TRUE;
}

Thread *machine_thread(Machine *m, uint32_t pid, uint32_t tid, int cpu)
{
  uint64_t key = (uint64_t)pid << 32 | tid; /* pids and tids use all 32 bits */
  Thread *t = g_hash_table_lookup(m->threads, &key);
  if (t) {
    if (cpu >= 0) {
      t->cpu = cpu % (int)m->n_cpus;
      machine_cpu_ready(m, m->cpus[t->cpu]);
    }
    return t;
  }
  int on = cpu >= 0 ? cpu % (int)m->n_cpus : place_thread(m);
  machine_cpu_ready(m, m->cpus[on]);
  Mm *mm = kernel_mm(m->k, pid);
  /* No page for a new process's first table: with mem.oom_policy=kill the
   * OOM killer runs on the CPU it was to run on, and the allocation again. */
  while (!mm && m->k->oom_kill_policy && oom_kill(m->k, &m->cpus[on]->kc, pid, OOM_TRIGGER_CREATION))
    mm = kernel_mm(m->k, pid);
  if (!mm)
    return NULL;
  t = g_new0(Thread, 1);
  t->pid = pid;
  t->tid = tid;
  t->mm = mm;
  t->cpu = on;
  mm->users++;
  uint64_t *k = g_memdup2(&key, sizeof key);
  g_hash_table_insert(m->threads, k, t);
  return t;
}

void machine_flush_range(Machine *m, Cpu *initiator, Mm *mm, uint64_t start, uint64_t end)
{
  machine_flush_range_stride(m, initiator, mm, start, end, 12);
}

/* Invalidate [start, end) of mm in one CPU's TLBs, under the tag mm has
 * there (kernel_cpu_pcid: nothing of mm is cached where it has none), and
 * mark that CPU's ASID of mm current (flush_tlb_func).  Returns the cycles
 * of the architecture's batched work for the range (ArchOps.flush_done). */
static uint64_t flush_on(Machine *m, Cpu *c, Mm *mm, uint64_t start, uint64_t end, gboolean full, uint64_t entries)
{
  int tag = kernel_cpu_pcid(m->k, &c->kc, mm);
  /* A CPU never built never ran mm (its tag is -1): nothing to invalidate,
   * no batch of the architecture's to send. */
  gboolean held = c->built || tag >= 0;
  if (held)
    machine_cpu_ready(m, c);
  if (full) {
    if (tag >= 0)
      cpu_flush_asid(c, (unsigned)tag);
    c->ctr.c[CTR_TLB_FLUSH_FULL]++;
  } else {
    for (uint64_t va = start; tag >= 0 && va < end; va += 4096)
      cpu_flush_page(c, (unsigned)tag, va);
    c->ctr.c[CTR_TLB_FLUSH_PAGES] += entries;
  }
  kernel_asid_flushed(m->k, &c->kc, mm);
  return held && c->arch->flush_done ? c->arch->flush_done(c) : 0;
}

void machine_flush_range_stride(Machine *m, Cpu *initiator, Mm *mm, uint64_t start, uint64_t end,
                                unsigned stride_shift)
{
  if (end <= start)
    return;
  Kernel *k = m->k;
  /* flush_tlb_mm_range: one invalidation per entry of the stride, a full
   * flush of the context past the ceiling.  Every 4K granule is dropped
   * from the model's arrays either way (fragments of huge pages included). */
  unsigned shift = MAX(stride_shift, 12u);
  uint64_t entries = ((end - 1) >> shift) - (start >> shift) + 1;
  gboolean full = entries > k->flush_ceiling_pages;
  mm->tlb_gen++; /* CPUs out of the mask now drop the mm's entries when they come back */
  uint64_t arch_cost = flush_on(m, initiator, mm, start, end, full, entries);
  /* The targets: every other CPU in mm_cpumask, found a word at a time. */
  unsigned targets = 0;
  for (unsigned w = 0; w < mm->cpumask_words; w++) {
    for (uint64_t bits = mm->cpumask[w]; bits; bits &= bits - 1) {
      unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
      if (i >= m->n_cpus)
        break;
      Cpu *c = m->cpus[i];
      if (c == initiator)
        continue;
      uint64_t theirs = flush_on(m, c, mm, start, end, full, entries);
      cpu_stall(c, m->ipi_handler_cycles + theirs);
      c->ctr.c[CTR_NR_TLB_REMOTE_FLUSH_RECEIVED]++;
      c->ctr.c[CTR_SHOOTDOWN_CYCLES] += m->ipi_handler_cycles;
      targets++;
    }
  }
  uint64_t cost = (full ? k->full_flush_cycles : entries * k->invlpg_cycles) + arch_cost;
  if (targets) {
    uint64_t wait = m->shootdown_cycles + targets * m->shootdown_per_cpu_cycles;
    initiator->ctr.c[CTR_NR_TLB_REMOTE_FLUSH]++;
    initiator->ctr.c[CTR_SHOOTDOWN_CYCLES] += wait;
    cost += wait;
  }
  cpu_stall(initiator, cost);
}

uint64_t machine_dram_bulk(Machine *m, Cpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t span_cycles)
{
  return machine_dram_bulk_after(m, cpu, pfn, bytes, 0, span_cycles);
}

uint64_t machine_dram_bulk_after(Machine *m, Cpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t after,
                                 uint64_t span_cycles)
{
  if (!m || !m->dram)
    return 0;
  unsigned home = dram_node_of(m->dram, pfn << 12);
  return dram_bulk_span(m->dram, (unsigned)cpu->node, home, bytes, cpu->clock + after, span_cycles, &cpu->ctr);
}

void machine_fill_lines(Machine *m, Cpu *cpu, const KernelFill *fills, unsigned n)
{
  g_array_set_size(m->fills, n);
  MemFill *f = (MemFill *)(void *)m->fills->data;
  for (unsigned i = 0; i < n; i++) {
    f[i].pa = fills[i].pfn << 12;
    f[i].src_pa = fills[i].src_pfn == KERNEL_FILL_CLEAR ? MEMSYS_FILL_CLEAR : fills[i].src_pfn << 12;
    f[i].bytes = fills[i].bytes;
  }
  memsys_fill(cpu->mem, f, n, m->fill_scratch);
}

void machine_tables_freed(Machine *m, Mm *mm)
{
  for (unsigned i = 0; i < m->n_cpus; i++) {
    if (!m->cpus[i]->built)
      continue; /* no walk cache to drop */
    int tag = kernel_cpu_pcid(m->k, &m->cpus[i]->kc, mm);
    if (tag >= 0)
      m->arch->tables_freed(m->cpus[i], (unsigned)tag);
  }
}

/* ---- the kernel's hooks (kernel/hooks.h) -------------------------------- */

static void hook_flush_tlb_range(void *hw, KCpu *initiator, Mm *mm, uint64_t start, uint64_t end,
                                 unsigned stride_shift, gboolean freed_tables)
{
  Machine *m = hw;
  machine_flush_range_stride(m, machine_cpu_ready(m, cpu_of(initiator)), mm, start, end, stride_shift);
  if (freed_tables)
    machine_tables_freed(m, mm);
}

static uint64_t hook_dram_bulk(void *hw, KCpu *cpu, uint64_t pfn, uint64_t bytes, uint64_t after,
                               uint64_t span_cycles)
{
  return machine_dram_bulk_after(hw, cpu_of(cpu), pfn, bytes, after, span_cycles);
}

static void hook_fill_lines(void *hw, KCpu *cpu, const KernelFill *fills, unsigned n)
{
  machine_fill_lines(hw, machine_cpu_ready(hw, cpu_of(cpu)), fills, n);
}

static void hook_drain(void *hw, KCpu *cpu)
{
  (void)hw;
  cpu_drain(cpu_of(cpu));
}

static void hook_stall(void *hw, KCpu *cpu, uint64_t cycles)
{
  (void)hw;
  cpu_stall(cpu_of(cpu), cycles);
}

static void hook_forget_shortcuts(void *hw, KCpu *cpu)
{
  (void)hw;
  cpu_forget_shortcuts(cpu_of(cpu));
}

const KernelHooks machine_hooks = {
  .flush_tlb_range = hook_flush_tlb_range,
  .dram_bulk = hook_dram_bulk,
  .fill_lines = hook_fill_lines,
  .drain = hook_drain,
  .stall = hook_stall,
  .forget_shortcuts = hook_forget_shortcuts,
};

void machine_counters(const Machine *m, Counters *out)
{
  memset(out, 0, sizeof *out);
  for (unsigned i = 0; i < m->n_cpus; i++) {
    counters_add(out, &m->cpus[i]->ctr);
    out->c[CTR_CYCLES] += m->cpus[i]->clock - m->cpus[i]->idle_cycles;
  }
}

uint64_t machine_max_clock(const Machine *m)
{
  uint64_t t = 0;
  for (unsigned i = 0; i < m->n_cpus; i++)
    t = MAX(t, m->cpus[i]->clock);
  return t;
}
