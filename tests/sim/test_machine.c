/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of machine presets and building: every preset loads and builds,
 * inheritance, errors that name the preset, group and key, impossible
 * machines rejected with the setting named; a ChampSim trace's register
 * dependences replayed as its text form's D records are.
 */
#include "config.h"
#include <glib/gstdio.h>
#include "champsim.h"
#include "engine.h"
#include "machine_fixture.h"
#include "text.h"

START_TEST(test_presets_build)
{
  g_auto(GStrv) names = preset_names();
  ck_assert_uint_ge(g_strv_length(names), 4);
  unsigned numa_presets = 0;
  for (int i = 0; names[i]; i++) {
    Machine *m = fixture_machine(names[i], NULL);
    unsigned nodes = (unsigned)settings_int(m->s, SET_MACHINE_NODES);
    ck_assert_uint_eq(m->n_cpus, nodes * (unsigned)settings_int(m->s, SET_MACHINE_CPUS_PER_NODE));
    /* Single-node presets are one CPU; the NUMA ones several CPUs a node. */
    if (nodes == 1)
      ck_assert_uint_eq(m->n_cpus, 1);
    else
      numa_presets++;
    machine_free(m);
  }
  ck_assert_uint_eq(numa_presets, 3);
  g_autoptr(Settings) s = settings_new();
  ck_assert(preset_load(s, "westmere", NULL));
  ck_assert_int_eq(settings_int(s, SET_TLB_STLB_ENTRIES), 512);
  ck_assert_str_eq(settings_str(s, SET_TLB_STLB_SIZES), "4k");
  ck_assert_int_eq(settings_int(s, SET_CPU_FREQ_MHZ), 2930);
  ck_assert(preset_load(s, "zen4", NULL));
  ck_assert(settings_bool(s, SET_TLB_L1_MIXED));
  ck_assert_int_eq(settings_int(s, SET_TLB_L1D_4K_ENTRIES), 72);
}
END_TEST

START_TEST(test_unknown_preset)
{
  g_autoptr(Settings) s = settings_new();
  g_autoptr(GError) err = NULL;
  ck_assert(!preset_load(s, "pentium", &err));
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
  ck_assert(preset_load(s, good, NULL));
  ck_assert_int_eq(settings_int(s, SET_TLB_STLB_ENTRIES), 3072);
  ck_assert_int_eq(settings_int(s, SET_CPU_FREQ_MHZ), 3400); /* from skylake */
  g_autoptr(GError) err = NULL;
  ck_assert(!preset_load(s, bad, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "bad.ini"));
  ck_assert_ptr_nonnull(strstr(err->message, "stlb_entires"));
  ck_assert_ptr_nonnull(strstr(err->message, "tlb.stlb_entries")); /* did you mean */
  g_unlink(good);
  g_unlink(bad);
  g_rmdir(dir);
}
END_TEST

/* A malformed .ini line is named by file and line, whatever GKeyFile says. */
START_TEST(test_ini_file_syntax_errors)
{
  g_autofree char *dir = g_dir_make_tmp("mmusim-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "m.ini", NULL);
  static const struct {
    const char *text, *want;
  } cases[] = {
    { "[machine]\ninherit = skylake\n\n[cache\nl2_ways = 8\n", "m.ini:4: group header '[cache' has no closing" },
    { "# c\n[cache] l2_ways = 8\n", "m.ini:2: '[cache] l2_ways = 8' has text after" },
    { "[cache]\nl2_ways\n", "m.ini:2: 'l2_ways' is neither KEY = VALUE" },
    { "l2_ways = 8\n[cache]\n", "m.ini:1: 'l2_ways = 8' comes before any [group]" },
    { "[machine]\ninherit = nosuch\n", "m.ini [machine] inherit: unknown machine 'nosuch'" },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    ck_assert(g_file_set_contents(path, cases[i].text, -1, NULL));
    g_autoptr(Settings) s = settings_new();
    g_autoptr(GError) err = NULL;
    ck_assert(!preset_load(s, path, &err));
    ck_assert_msg(strstr(err->message, cases[i].want), "case %u: %s", i, err->message);
  }
  g_unlink(path);
  g_autofree char *missing = g_build_filename(dir, "missing.ini", NULL);
  g_autoptr(Settings) s = settings_new();
  g_autoptr(GError) err = NULL;
  ck_assert(!preset_load(s, missing, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "missing.ini' does not exist"));
  g_rmdir(dir);
}
END_TEST

/* A geometry error names every setting behind it and where each came from,
 * and asks for a fix of the one set last. */
START_TEST(test_geometry_errors_name_settings)
{
  g_autoptr(Settings) s = settings_new();
  ck_assert(preset_load(s, "skylake", NULL));
  ck_assert(settings_set(s, "cache.l2_size", "1000000", "-s", NULL));
  g_autoptr(GError) err = NULL;
  ck_assert_ptr_null(machine_new("skylake", s, NULL, &err));
  ck_assert_str_eq(err->message,
                   "L2: cache.l2_size = 1000000 (from -s) is not a multiple of cache.l2_ways = 4 "
                   "(from preset skylake [cache] l2_ways) x cache.line_bytes = 64 (from preset skylake [cache] "
                   "line_bytes) = 256 bytes: give cache.l2_size a multiple of 256 bytes");
  g_clear_error(&err);
  ck_assert(settings_set(s, "cache.l2_size", "256K", "-s", NULL));
  ck_assert(settings_set(s, "tlb.l1d_4k_ways", "3", "-s", NULL));
  ck_assert_ptr_null(machine_new("skylake", s, NULL, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "tlb.l1d_4k_entries = 64 (from preset skylake [tlb] l1d_4k_entries)"));
  ck_assert_ptr_nonnull(strstr(err->message, "give tlb.l1d_4k_ways a number that divides 64"));
  g_clear_error(&err);
  ck_assert(settings_set(s, "tlb.l1d_4k_entries", "65", "-s", NULL));
  ck_assert_ptr_null(machine_new("skylake", s, NULL, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "give tlb.l1d_4k_entries a multiple of 3"));
}
END_TEST

/* A hashed page table that does not fit names its size's setting and the
 * memory per node, with their origins. */
START_TEST(test_hpt_error_names_settings)
{
  g_autoptr(Settings) s = settings_new();
  ck_assert(preset_load(s, "power7", NULL));
  ck_assert(settings_set(s, "ppc64.hpt_size", "64G", "-s", NULL));
  g_autoptr(GError) err = NULL;
  ck_assert_ptr_null(machine_new("power7", s, NULL, &err));
  ck_assert_str_eq(err->message,
                   "ppc64.hpt_size = 64G (from -s), machine.mem_per_node = 32G (from preset power7 [machine] "
                   "mem_per_node): the hashed page table (64G) does not fit, aligned, in the free memory of "
                   "node 0: lower ppc64.hpt_size or raise machine.mem_per_node");
}
END_TEST

/* The background pages of mem.fragmentation come after every boot
 * allocation: ppc64's hashed page table, which needs a large aligned block,
 * still fits on a fully fragmented machine. */
START_TEST(test_fragmentation_after_boot)
{
  g_autoptr(Settings) s = settings_new();
  ck_assert(preset_load(s, "power7", NULL));
  ck_assert(settings_set(s, "mem.fragmentation", "1", "test", NULL));
  g_autoptr(GError) err = NULL;
  Machine *m = machine_new("power7", s, NULL, &err);
  ck_assert_no_error(err);
  ck_assert_ptr_nonnull(m);
  machine_free(m);
}
END_TEST

START_TEST(test_impossible_machines)
{
  g_autoptr(Settings) s = settings_new();
  ck_assert(preset_load(s, "skylake", NULL));
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

/* Process and thread ids are 1..2^32-1 (doc/trace-format.md):
 * the thread table's key holds both whole, with no signed shift. */
START_TEST(test_thread_keys_use_all_32_bits)
{
  Machine *m = fixture_machine("skylake", NULL);
  Thread *low = machine_thread(m, 1, 1, -1);
  Thread *high = machine_thread(m, 0x80000000u, 1, -1);
  Thread *top = machine_thread(m, UINT32_MAX, UINT32_MAX, -1);
  ck_assert_ptr_nonnull(high);
  ck_assert_ptr_nonnull(top);
  ck_assert_ptr_ne(low, high);
  ck_assert_ptr_ne(high, top);
  ck_assert_uint_eq(high->pid, 0x80000000u);
  ck_assert_uint_eq(top->tid, UINT32_MAX);
  ck_assert_ptr_eq(machine_thread(m, 0x80000000u, 1, -1), high);
  ck_assert_ptr_eq(machine_thread(m, UINT32_MAX, UINT32_MAX, -1), top);
  machine_free(m);
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
  mm_cpumask_set(a->mm, 0);
  mm_cpumask_set(a->mm, 1);
  for (unsigned i = 0; i < 2; i++) {
    Cpu *c = m->cpus[i];
    gboolean flush;
    c->cur_asid = kernel_pcid_of(kernel_switch_asid(m->k, &c->kc, a->mm, &flush)); /* its PCID there */
    tlb_insert(c->l1d[0], tlb_key(c->cur_asid, 0, 0x7f0000000ULL), 0x42, TLBF_W | TLBF_D, 0);
  }
  uint64_t before = m->cpus[0]->clock;
  machine_flush_range(m, m->cpus[0], a->mm, 0x7f0000000000ULL, 0x7f0000001000ULL);
  for (unsigned i = 0; i < 2; i++)
    ck_assert_ptr_null(tlb_peek(m->cpus[i]->l1d[0], tlb_key(m->cpus[i]->cur_asid, 0, 0x7f0000000ULL)));
  /* CPU 1 may hold the mm: an IPI round trip for one target. */
  ck_assert_uint_eq(m->cpus[0]->clock - before,
                    m->k->invlpg_cycles + m->shootdown_cycles + m->shootdown_per_cpu_cycles);
  ck_assert_uint_eq(m->cpus[1]->ctr.c[CTR_TLB_FLUSH_PAGES], 1);
  machine_free(m);
}
END_TEST

START_TEST(test_numa_presets)
{
  static const struct {
    const char *name;
    unsigned nodes, per, far;
  } p[] = { { "skylake-2s", 2, 8, 21 }, { "westmere-4n", 4, 4, 20 }, { "uv-16n", 16, 8, 32 } };
  for (unsigned i = 0; i < G_N_ELEMENTS(p); i++) {
    Machine *m = fixture_machine(p[i].name, NULL);
    const Topology *t = physmem_topology(m->k->pm);
    ck_assert_uint_eq(t->nodes, p[i].nodes);
    ck_assert_uint_eq(m->n_cpus, p[i].nodes * p[i].per);
    ck_assert_uint_eq(topology_distance(t, 0, p[i].nodes - 1), p[i].far);
    ck_assert_int_eq(m->cpus[m->n_cpus - 1]->node, (int)p[i].nodes - 1);
    /* Remote memory is slower than local, and farther is slower still. */
    uint32_t local = dram_idle_cycles(m->dram, 0, 0);
    ck_assert_uint_gt(dram_idle_cycles(m->dram, 0, 1), local);
    ck_assert_uint_ge(dram_idle_cycles(m->dram, 0, p[i].nodes - 1), dram_idle_cycles(m->dram, 0, 1));
    machine_free(m);
  }
  /* uv-16n: the blade's other socket is nearer than another blade. */
  Machine *m = fixture_machine("uv-16n", NULL);
  ck_assert_uint_eq(topology_distance(physmem_topology(m->k->pm), 2, 3), 16);
  ck_assert_uint_lt(dram_idle_cycles(m->dram, 2, 3), dram_idle_cycles(m->dram, 2, 4));
  machine_free(m);
}
END_TEST

START_TEST(test_numa_memory)
{
  Machine *m = fixture_machine("skylake-2s", NULL);
  uint64_t node1_pa = physmem_pages_per_node(m->k->pm) << 12;
  uint32_t llc = memsys_level_cycles(m->cpus[0]->mem, MEM_LLC);
  /* Every CPU's hierarchy reaches DRAM through the machine's Dram. */
  ck_assert_uint_eq(memsys_level_cycles(m->cpus[0]->mem, MEM_DRAM), llc + dram_idle_cycles(m->dram, 0, 0));
  Cpu *c8 = machine_cpu_ready(m, m->cpus[8]); /* built, as when it first runs */
  ck_assert_int_eq(c8->node, 1);
  ck_assert_uint_eq(memsys_access(c8->mem, 0x1000, MREQ_LOAD, NULL), llc + dram_idle_cycles(m->dram, 1, 0));
  ck_assert_uint_eq(memsys_access(c8->mem, node1_pa + 0x1000, MREQ_LOAD, NULL), llc + dram_idle_cycles(m->dram, 1, 1));
  ck_assert_uint_eq(c8->ctr.c[CTR_REMOTE_ACCESSES], 1);
  ck_assert_uint_eq(c8->ctr.c[CTR_LOCAL_ACCESSES], 1);
  /* 90 ns local, 139.5 at distance 21 (at 2.4 GHz) */
  ck_assert_uint_eq(dram_idle_cycles(m->dram, 1, 1), 216);
  ck_assert_uint_eq(dram_idle_cycles(m->dram, 1, 0), 335);

  /* The kernel's clearing: free on an idle machine, it waits behind a
   * loaded controller and loads it in turn. */
  Cpu *c0 = m->cpus[0];
  ck_assert_uint_eq(machine_dram_bulk(m, c0, 0x100, 2 << 20, 100000), 0);
  c0->clock = 10000000;
  for (unsigned i = 0; i < 4000; i++) /* 4000 lines in 1 us: far past 95 GB/s */
    dram_access(m->dram, 0, node1_pa + i * 64, c0->clock, &c0->ctr);
  c0->clock += kernel_ns_to_cycles(m->k, 1000);
  uint64_t before = c0->ctr.c[CTR_DRAM_QUEUE_CYCLES];
  uint64_t extra = machine_dram_bulk(m, c0, node1_pa >> 12, 4096, 200);
  ck_assert_uint_gt(extra, 0);
  ck_assert_uint_eq(c0->ctr.c[CTR_DRAM_QUEUE_CYCLES] - before, extra);
  /* Node 0's controller is idle: a clear there is free. */
  ck_assert_uint_eq(machine_dram_bulk(m, c0, 0x200, 4096, 200), 0);
  machine_free(m);
}
END_TEST

/* The CPUs of the first n threads the scheduler places. */
static void placed(const char *placement, const char *const *extra, unsigned n, int *cpu)
{
  const char *sets[8] = { placement, NULL };
  for (unsigned i = 0; extra && extra[i]; i++)
    sets[i + 1] = extra[i];
  Machine *m = fixture_machine("skylake", sets);
  for (unsigned i = 0; i < n; i++)
    cpu[i] = machine_thread(m, 1, i + 1, -1)->cpu;
  machine_free(m);
}

START_TEST(test_placement)
{
  static const char *const two_by_three[] = { "machine.nodes=2", "machine.cpus_per_node=3", NULL };
  int cpu[8];
  /* spread: node after node, round robin inside each node. */
  placed("sched.placement=spread", two_by_three, 8, cpu);
  static const int spread[] = { 0, 3, 1, 4, 2, 5, 0, 3 };
  for (unsigned i = 0; i < 8; i++)
    ck_assert_int_eq(cpu[i], spread[i]);
  /* fill: CPU after CPU. */
  placed("sched.placement=fill", two_by_three, 8, cpu);
  static const int fill[] = { 0, 1, 2, 3, 4, 5, 0, 1 };
  for (unsigned i = 0; i < 8; i++)
    ck_assert_int_eq(cpu[i], fill[i]);
  /* One node: both are the same. */
  static const char *const one_by_three[] = { "machine.cpus_per_node=3", NULL };
  int a[5], b[5];
  placed("sched.placement=spread", one_by_three, 5, a);
  placed("sched.placement=fill", one_by_three, 5, b);
  for (unsigned i = 0; i < 5; i++) {
    ck_assert_int_eq(a[i], b[i]);
    ck_assert_int_eq(a[i], (int)(i % 3));
  }
  /* A pinned thread keeps its CPU and does not move the cursor. */
  static const char *const two_nodes[] = { "machine.nodes=2", "machine.cpus_per_node=2", NULL };
  const char *sets[] = { "sched.placement=spread", two_nodes[0], two_nodes[1], NULL };
  Machine *m = fixture_machine("skylake", sets);
  ck_assert_int_eq(machine_thread(m, 1, 1, 3)->cpu, 3);
  ck_assert_int_eq(machine_thread(m, 1, 2, -1)->cpu, 0);
  ck_assert_int_eq(machine_thread(m, 1, 3, -1)->cpu, 2);
  machine_free(m);
}
END_TEST

/* A 4K flush of mm from CPU `from`; returns the initiator's cycles. */
static uint64_t flush_from(Machine *m, unsigned from, Mm *mm)
{
  uint64_t before = m->cpus[from]->clock;
  machine_flush_range(m, m->cpus[from], mm, 0x7f0000000000ULL, 0x7f0000001000ULL);
  return m->cpus[from]->clock - before;
}

/* kernel.pid_max counts every thread of every process; a thread already
 * made is never refused. */
START_TEST(test_pid_max)
{
  const char *sets[] = { "kernel.pid_max=2", NULL };
  Machine *m = fixture_machine("skylake", sets);
  GError *err = NULL;
  ck_assert(machine_thread_check(m, 1, 1, &err));
  ck_assert_ptr_nonnull(machine_thread(m, 1, 1, -1));
  ck_assert(machine_thread_check(m, 7, 1, &err));
  ck_assert_ptr_nonnull(machine_thread(m, 7, 1, -1));
  ck_assert(machine_thread_check(m, 7, 1, &err));
  ck_assert(!machine_thread_check(m, 1, 2, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "thread 2 of process 1 is one more than the 2 threads"));
  ck_assert_ptr_nonnull(strstr(err->message, "kernel.pid_max = 2 (from test)"));
  g_clear_error(&err);
  ck_assert(!machine_thread_check(m, 8, 1, &err));
  g_clear_error(&err);
  machine_free(m);
}
END_TEST

/* A CPU's TLBs and caches are built when it first runs: a 1024-CPU
 * machine whose two threads run on CPUs 0 and 1 builds two, and its
 * per-CPU breakdown still has a row for every other CPU, with no
 * instruction. */
START_TEST(test_cpus_built_lazily)
{
  const char *sets[] = { "machine.cpus_per_node=1024", NULL };
  Machine *m = fixture_machine("skylake", sets);
  ck_assert_uint_eq(m->n_cpus, 1024);
  ck_assert_uint_eq(m->n_built, 1); /* CPU 0, which checks the settings */
  GError *err = NULL;
  g_autoptr(TraceSource) src = text_source_from_string(
    "t.txt", "mmap 0x10000000 64K rw\nW 0x10000000 8\nthread 2\nW 0x10001000 8\nR 0x10000000 8\n", &err);
  ck_assert_no_error(err);
  EngineOptions opt = { .whole = TRUE, .per_cpu = TRUE };
  EngineResult res;
  ck_assert_msg(engine_run(m, src, &opt, &res, &err), "%s", err ? err->message : "");
  ck_assert_uint_eq(m->n_built, 2);
  ck_assert(m->cpus[1]->built && !m->cpus[2]->built && !m->cpus[1023]->built);
  ck_assert_uint_eq(res.n_cpus, 1024);
  ck_assert_uint_gt(res.per_cpu[1].c[CTR_INSTRUCTIONS], 0);
  for (unsigned i = 2; i < 1024; i++)
    ck_assert_uint_eq(res.per_cpu[i].c[CTR_INSTRUCTIONS] + res.per_cpu[i].c[CTR_ACCESSES], 0);
  engine_result_clear(&res);
  machine_free(m);
}
END_TEST

/* A shootdown to a CPU that never ran (in the mask, no tag for the mm)
 * is counted as before and builds nothing. */
START_TEST(test_shootdown_to_unbuilt_cpu)
{
  const char *sets[] = { "machine.cpus_per_node=1024", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Mm *mm = machine_thread(m, 1, 1, 0)->mm;
  mm_cpumask_set(mm, 0);
  mm_cpumask_set(mm, 700);
  ck_assert_uint_eq(flush_from(m, 0, mm), m->k->invlpg_cycles + m->shootdown_cycles + m->shootdown_per_cpu_cycles);
  ck_assert_uint_eq(m->cpus[700]->ctr.c[CTR_NR_TLB_REMOTE_FLUSH_RECEIVED], 1);
  ck_assert_uint_eq(m->cpus[700]->clock, m->ipi_handler_cycles);
  ck_assert(!m->cpus[700]->built);
  ck_assert_uint_eq(m->n_built, 1);
  machine_tables_freed(m, mm);
  ck_assert_uint_eq(m->n_built, 1);
  machine_free(m);
}
END_TEST

START_TEST(test_shootdown_targets_and_costs)
{
  /* 2 nodes x 64 CPUs: the mask spans two words and targets past CPU 64. */
  const char *sets[] = { "machine.nodes=2", "machine.cpus_per_node=64", "tlb.shootdown_ns=1000",
                         "tlb.shootdown_per_cpu_ns=50", "tlb.ipi_handler_ns=700", NULL };
  Machine *m = fixture_machine("skylake", sets);
  ck_assert_uint_eq(m->n_cpus, 128);
  Mm *mm = machine_thread(m, 1, 1, 0)->mm;
  uint64_t c_sd = m->shootdown_cycles, c_per = m->shootdown_per_cpu_cycles, c_ipi = m->ipi_handler_cycles;
  ck_assert_uint_eq(c_sd, kernel_ns_to_cycles(m->k, 1000));
  ck_assert_uint_eq(c_per, kernel_ns_to_cycles(m->k, 50));
  ck_assert_uint_eq(c_ipi, kernel_ns_to_cycles(m->k, 700));

  /* Only the initiator ran the mm: a local flush, no IPI. */
  mm_cpumask_set(mm, 0);
  ck_assert_uint_eq(flush_from(m, 0, mm), m->k->invlpg_cycles);
  Counters sum;
  machine_counters(m, &sum);
  ck_assert_uint_eq(sum.c[CTR_NR_TLB_REMOTE_FLUSH], 0);
  ck_assert_uint_eq(sum.c[CTR_SHOOTDOWN_CYCLES], 0);

  /* CPUs 0, 5, 64 and 127 ran it: three targets from CPU 0. */
  mm_cpumask_set(mm, 5);
  mm_cpumask_set(mm, 64);
  mm_cpumask_set(mm, 127);
  ck_assert(mm_cpumask_test(mm, 127));
  ck_assert(!mm_cpumask_test(mm, 126));
  ck_assert(!mm_cpumask_test(mm, 100000)); /* past the bitmap */
  for (unsigned i = 0; i < m->n_cpus; i++) {
    gboolean flush; /* every CPU has a PCID for mm: ran it once */
    machine_cpu_ready(m, m->cpus[i]);
    m->cpus[i]->cur_asid = kernel_pcid_of(kernel_switch_asid(m->k, &m->cpus[i]->kc, mm, &flush));
    tlb_insert(m->cpus[i]->l1d[0], tlb_key(m->cpus[i]->cur_asid, 0, 0x7f0000000ULL), 0x42, TLBF_W | TLBF_D, 0);
  }
  uint64_t before[128];
  for (unsigned i = 0; i < m->n_cpus; i++)
    before[i] = m->cpus[i]->clock;
  ck_assert_uint_eq(flush_from(m, 0, mm), m->k->invlpg_cycles + c_sd + 3 * c_per);
  for (unsigned i = 1; i < m->n_cpus; i++) {
    gboolean target = i == 5 || i == 64 || i == 127;
    ck_assert_uint_eq(m->cpus[i]->clock - before[i], target ? c_ipi : 0);
    ck_assert_uint_eq(m->cpus[i]->ctr.c[CTR_NR_TLB_REMOTE_FLUSH_RECEIVED], target ? 1 : 0);
    ck_assert_uint_eq(m->cpus[i]->ctr.c[CTR_SHOOTDOWN_CYCLES], target ? c_ipi : 0);
    /* Targets lost the entry; CPUs that never ran the mm kept theirs. */
    gboolean held = tlb_peek(m->cpus[i]->l1d[0], tlb_key(m->cpus[i]->cur_asid, 0, 0x7f0000000ULL)) != NULL;
    ck_assert_int_eq(held, !target);
  }
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_NR_TLB_REMOTE_FLUSH], 1);
  ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_SHOOTDOWN_CYCLES], c_sd + 3 * c_per);

  /* From CPU 64 the targets are 0, 5 and 127; a CPU outside the mask
   * initiating (khugepaged elsewhere) reaches all four. */
  ck_assert_uint_eq(flush_from(m, 64, mm), m->k->invlpg_cycles + c_sd + 3 * c_per);
  ck_assert_uint_eq(flush_from(m, 9, mm), m->k->invlpg_cycles + c_sd + 4 * c_per);
  ck_assert_uint_eq(m->cpus[127]->ctr.c[CTR_NR_TLB_REMOTE_FLUSH_RECEIVED], 3);
  ck_assert_uint_eq(m->cpus[64]->ctr.c[CTR_NR_TLB_REMOTE_FLUSH_RECEIVED], 2);
  machine_free(m);
}
END_TEST

/* Run a text trace on m, counting all of it. */
/* The two processes of tests/golden/cases/oom-twoproc.txt, process 1 on
 * CPU 1 and process 2 on CPU 0: process 2's faults run out of memory on a
 * 64M machine (48M kept by the kernel).  Under fail the run stops; under
 * kill process 1 is killed from CPU 0, its thread leaves CPU 1, and its
 * four records after process 2's barrier are dropped, not run. */
static char *oom_trace(void)
{
  GString *t = g_string_new("thread 1 cpu 1\nmmap 0x7f0000000000 16M rw\n");
  for (unsigned i = 0; i < 8; i++)
    g_string_append_printf(t, "W %#" G_GINT64_MODIFIER "x 8\n", UINT64_C(0x7f0000000000) + i * (UINT64_C(2) << 20));
  g_string_append(t, "process 2\nthread 1 cpu 0\nprctl thp_disable 1\nmmap 0x10000000000 64T rw\n");
  for (unsigned i = 0; i < 128; i++)
    g_string_append_printf(t, "W %#" G_GINT64_MODIFIER "x 8\n", UINT64_C(0x10000000000) + i * (UINT64_C(512) << 30));
  g_string_append(t, "munmap 0x10000000000 512G\n"
                     "process 1\nR 0x7f0000000000 8\nW 0x7f0000200000 8\ncompute 100\nmunmap 0x7f0000000000 2M\n"
                     "process 2\nR 0x18000000000 8\n");
  return g_string_free(t, FALSE);
}

/* ---- ChampSim register dependences, end to end ---------------------------- */

#define CHASE_BASE UINT64_C(0x7f0000000000)
#define CHASE_LINES (1u << 20) /* 64M of 64-byte nodes: far beyond the LLC */
#define CHASE_HOPS 4000u
enum { CHASE_RAX = 56, CHASE_RCX = 58, CHASE_FLAGS = 25, CHASE_IP = 26 };

/* Node i of a chase through every line of the region in a scattered order
 * (a full-period LCG modulo 2^20: a * i + c with a % 4 == 1, c odd). */
static uint64_t chase_next(uint64_t i)
{
  return (i * 1103515245u + 12345u) % CHASE_LINES;
}

/* The pointer chase `while (p) p = *p;` as a ChampSim trace, three
 * instructions a hop: mov rax, [rax]; test rax, rax; jne.  With `chained`
 * FALSE the load's address register is one no load writes (rcx): the same
 * addresses, each load independent. */
static GByteArray *chase_champsim(gboolean chained)
{
  GByteArray *b = g_byte_array_new();
  uint64_t node = 0;
  uint8_t addr_reg = chained ? CHASE_RAX : CHASE_RCX;
  for (unsigned h = 0; h < CHASE_HOPS; h++) {
    ChampsimInstr hop[3] = {
      { .ip = 0x400000, .src_regs = { addr_reg }, .dst_regs = { CHASE_RAX }, .src_mem = { CHASE_BASE + 64 * node } },
      { .ip = 0x400003, .src_regs = { CHASE_RAX }, .dst_regs = { CHASE_FLAGS } },
      { .ip = 0x400006, .is_branch = 1, .branch_taken = 1, .src_regs = { CHASE_IP, CHASE_FLAGS }, .dst_regs = { CHASE_IP } },
    };
    for (int k = 0; k < 3; k++) {
      uint8_t rec[CHAMPSIM_RECORD_BYTES];
      champsim_encode(&hop[k], rec);
      g_byte_array_append(b, rec, sizeof rec);
    }
    node = chase_next(node);
  }
  return b;
}

/* The same chase in the text format: a D record a hop, the test and the
 * branch its two other instructions (the first hop's fetch stands for its
 * load's instruction: the last hop's two come at the end). */
static char *chase_text(void)
{
  GString *t = g_string_new("mmap 0x400000 2M rx\nmmap 0x7f0000000000 64M rw\nX 0x400000 4\n");
  uint64_t node = 0;
  for (unsigned h = 0; h < CHASE_HOPS; h++) {
    g_string_append_printf(t, "D %#" G_GINT64_MODIFIER "x 8 +%d\n", CHASE_BASE + 64 * node, h == 0 ? 0 : 2);
    node = chase_next(node);
  }
  g_string_append(t, "compute 1\n");
  return g_string_free(t, FALSE);
}

/* Run src (taken) on a fresh skylake machine: the whole run's counters and
 * cycles.  The kernel's clears leave nothing in the caches: every hop is
 * then a miss to DRAM, whatever the faults before it cleared. */
static uint64_t chase_run(TraceSource *src, Counters *ctr)
{
  static const char *const uncached[] = { "mem.clear_cached=false", NULL };
  Machine *m = fixture_machine("skylake", uncached);
  GError *err = NULL;
  EngineOptions opt = { .whole = TRUE };
  EngineResult res;
  ck_assert_msg(engine_run(m, src, &opt, &res, &err), "%s", err ? err->message : "");
  trace_source_free(src);
  *ctr = res.counted;
  uint64_t cycles = res.elapsed_cycles;
  engine_result_clear(&res);
  machine_free(m);
  return cycles;
}

static uint64_t chase_run_champsim(gboolean chained, Counters *ctr)
{
  g_autoptr(GByteArray) b = chase_champsim(chained);
  return chase_run(champsim_source_from_input(trace_input_from_memory("chase.champsim", b->data, b->len, TRUE)), ctr);
}

START_TEST(test_champsim_chase_costs_what_d_records_cost)
{
  Counters cs, txt, indep;
  uint64_t c_cs = chase_run_champsim(TRUE, &cs);
  g_autofree char *text = chase_text();
  GError *err = NULL;
  TraceSource *src = text_source_from_string("chase.txt", text, &err);
  ck_assert_no_error(err);
  uint64_t c_txt = chase_run(src, &txt);
  uint64_t c_indep = chase_run_champsim(FALSE, &indep);
  ck_assert_uint_eq(cs.c[CTR_LOADS], CHASE_HOPS);
  ck_assert_uint_eq(txt.c[CTR_LOADS], CHASE_HOPS);
  ck_assert_uint_eq(cs.c[CTR_INSTRUCTIONS], 3 * CHASE_HOPS);
  ck_assert_uint_eq(txt.c[CTR_INSTRUCTIONS], 3 * CHASE_HOPS);
  /* Within 10% of each other: the mappings differ (the reader's 2M
   * on-demand regions, the text's one mapping), the chase does not. */
  double ratio = (double)c_cs / (double)c_txt;
  ck_assert_msg(ratio > 0.9 && ratio < 1.1, "ChampSim chase %" G_GUINT64_FORMAT " cycles, D records %" G_GUINT64_FORMAT,
                c_cs, c_txt);
  /* Every hop pays a miss to DRAM at least ... */
  Machine *m = fixture_machine("skylake", NULL);
  uint64_t dram = memsys_level_cycles(m->cpus[0]->mem, MEM_DRAM);
  machine_free(m);
  ck_assert_uint_ge(c_cs, (uint64_t)CHASE_HOPS * dram);
  /* ... where the same loads, independent, overlap. */
  ck_assert_uint_lt(c_indep * 2, c_cs);
}
END_TEST

/* A ChampSim trace whose loads depend on no load replays exactly as with
 * its registers left out (all 0), as it did before the reader followed
 * registers. */
START_TEST(test_champsim_independent_loads_unchanged)
{
  g_autoptr(GByteArray) b = chase_champsim(FALSE);
  g_autoptr(GByteArray) bare = g_byte_array_new();
  for (guint off = 0; off < b->len; off += CHAMPSIM_RECORD_BYTES) {
    uint8_t rec[CHAMPSIM_RECORD_BYTES];
    memcpy(rec, b->data + off, sizeof rec);
    memset(rec + 10, 0, 6); /* destination and source registers */
    g_byte_array_append(bare, rec, sizeof rec);
  }
  Counters with, without;
  uint64_t c_with = chase_run_champsim(FALSE, &with);
  uint64_t c_without =
    chase_run(champsim_source_from_input(trace_input_from_memory("bare.champsim", bare->data, bare->len, TRUE)), &without);
  ck_assert_uint_eq(c_with, c_without);
  ck_assert_mem_eq(with.c, without.c, sizeof with.c);
}
END_TEST

START_TEST(test_oom_kill_drops_the_victims_records)
{
  for (int kill = 0; kill < 2; kill++) {
    const char *sets[] = { "machine.cpus_per_node=2", "machine.mem_per_node=64M", "mem.kernel_reserved=48M",
                           kill ? "mem.oom_policy=kill" : "mem.oom_policy=fail", NULL };
    Machine *m = fixture_machine("skylake", sets);
    g_autofree char *text = oom_trace();
    GError *err = NULL;
    TraceSource *src = text_source_from_string("t.txt", text, &err);
    ck_assert_no_error(err);
    EngineResult res;
    ck_assert(engine_run(m, src, NULL, &res, &err));
    trace_source_free(src);
    if (!kill) {
      ck_assert(res.oom);
      ck_assert_uint_eq(res.n_oom_kills, 0);
      ck_assert_ptr_null(res.oom_kills);
    } else {
      ck_assert(!res.oom);
      ck_assert_uint_eq(res.n_oom_kills, 1);
      ck_assert_uint_eq(res.oom_kills[0].pid, 1);
      ck_assert_uint_eq(res.oom_kills[0].by_pid, 2);
      ck_assert_int_eq(res.oom_kills[0].trigger, OOM_TRIGGER_FAULT);
      ck_assert_int_eq(res.oom_kills[0].cpu, 0);
      ck_assert_uint_eq(res.oom_kills[0].badness, 7 * 512 + 1 + 10);
      ck_assert_uint_eq(res.oom_kills[0].dropped_records, 4);
      /* every access ran but process 1's two after the kill */
      ck_assert_uint_eq(res.counted.c[CTR_ACCESSES], 8 + 128 + 1);
      ck_assert_uint_eq(res.counted.c[CTR_OOM_KILL], 1);
      ck_assert_ptr_null(m->cpus[1]->kc.cur);
      ck_assert(m->cpus[1]->kc.cur_exited); /* its next thread will switch from the dead one */
      ck_assert_uint_eq(m->cpus[0]->kc.cur->pid, 2);
    }
    engine_result_clear(&res);
    machine_free(m);
  }
}
END_TEST

/* The oom trace with process 3 starting on CPU 1 after the kill: the
 * killed thread's exit is a context switch there like any other (one,
 * charged sched.switch_ns), where a CPU's first thread costs none. */
START_TEST(test_oom_kill_next_thread_switches)
{
  static const double switch_ns[] = { 0, 1500 };
  uint64_t busy[G_N_ELEMENTS(switch_ns)], switch_cycles = 0;
  for (unsigned i = 0; i < G_N_ELEMENTS(switch_ns); i++) {
    g_autofree char *ns = g_strdup_printf("sched.switch_ns=%g", switch_ns[i]);
    const char *sets[] = { "machine.cpus_per_node=2", "machine.mem_per_node=64M", "mem.kernel_reserved=48M",
                           "mem.oom_policy=kill", ns, NULL };
    Machine *m = fixture_machine("skylake", sets);
    g_autofree char *trace = oom_trace();
    g_autofree char *text = g_strconcat(trace, "process 3\nthread 1 cpu 1\ncompute 100\n", NULL);
    fixture_run_text(m, text, TRUE);
    Cpu *c1 = m->cpus[1];
    ck_assert_uint_eq(m->k->oom_kill_count, 1);
    ck_assert_uint_eq(c1->kc.cur->pid, 3);
    ck_assert(!c1->kc.cur_exited);
    ck_assert_uint_eq(c1->ctr.c[CTR_CONTEXT_SWITCHES], 1);
    ck_assert_uint_eq(m->cpus[0]->ctr.c[CTR_CONTEXT_SWITCHES], 0);
    busy[i] = c1->clock - c1->idle_cycles;
    switch_cycles = (uint64_t)(switch_ns[i] * m->k->cycles_per_ns);
    machine_free(m);
  }
  ck_assert_uint_gt(switch_cycles, 0);
  ck_assert_uint_eq(busy[1] - busy[0], switch_cycles);
}
END_TEST

/* A thread that appears after its creator ran for a while starts then: its
 * CPU idles up to the creator's clock, and idle time is not cycles. */
START_TEST(test_new_thread_starts_at_creation)
{
  static const char *sets[] = { "machine.cpus_per_node=2", "sched.placement=fill", NULL };
  Machine *m = fixture_machine("skylake", sets);
  const char *text = "thread 1 cpu 0\ncompute 1000000\nthread 2 cpu 1\ncompute 10\n";
  fixture_run_text(m, text, TRUE);
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

/* mm_cpumask follows the CPUs that run an mm now: a CPU that switches to
 * another process leaves it and gets no IPI for its flushes, and when it
 * comes back after one it missed, it drops the mm's entries itself (with
 * PCIDs, where its TLB kept them). */
START_TEST(test_cpumask_trimmed_on_switch)
{
  static const char *sets[] = { "machine.cpus_per_node=2", "tlb.pcid=true", NULL };
  Machine *m = fixture_machine("skylake", sets);
  const char *text = "process 1\nthread 1 cpu 0\nmmap 0x7f0000000000 8K rw\nW 0x7f0000000000 8\n"
                     "W 0x7f0000001000 8\n"
                     "thread 2 cpu 1\nR 0x7f0000000000 8\n"   /* CPU 1 joins process 1 */
                     "process 2\nthread 1 cpu 1\nmmap 0x7f0000000000 4K rw\nW 0x7f0000000000 8\n"
                     "process 1\nthread 1 cpu 0\nmprotect 0x7f0000000000 4K r\n" /* CPU 1 is not a target */
                     "thread 2 cpu 1\nR 0x7f0000000000 8\n";  /* back on CPU 1: its stale entries go */
  fixture_run_text(m, text, TRUE);
  Cpu *c0 = m->cpus[0], *c1 = m->cpus[1];
  ck_assert_uint_eq(c0->ctr.c[CTR_NR_TLB_REMOTE_FLUSH], 0);
  ck_assert_uint_eq(c1->ctr.c[CTR_NR_TLB_REMOTE_FLUSH_RECEIVED], 0);
  /* Two on CPU 1: process 2's new ASID slot, then process 1's slot, which
   * missed the mprotect's flush (choose_new_asid's need_flush both). */
  ck_assert_uint_eq(c1->ctr.c[CTR_TLB_FLUSH_FULL], 2);
  Mm *p1 = kernel_mm(m->k, 1), *p2 = kernel_mm(m->k, 2);
  ck_assert(mm_cpumask_test(p1, 0) && mm_cpumask_test(p1, 1));
  ck_assert(!mm_cpumask_test(p2, 1));
  /* Without a flush in between, coming back costs nothing. */
  ck_assert(!mm_cpumask_enter(p2, 1));
  mm_cpumask_leave(p2, 1);
  ck_assert(!mm_cpumask_test(p2, 1));
  ck_assert(!mm_cpumask_enter(p2, 1));
  machine_free(m);
}
END_TEST

/* One CPU, seven processes in turn: Linux 6.12 keeps 6 ASIDs per CPU
 * (choose_new_asid), so the seventh takes slot 0 back, flushing it, and a
 * process that lost its slot takes the next one, flushing it too. */
START_TEST(test_asids_reused_round_robin)
{
  static const char *sets[] = { "tlb.pcid=true", NULL };
  GString *text = g_string_new(NULL);
  for (unsigned p = 1; p <= 7; p++)
    g_string_append_printf(text, "process %u\nthread 1 cpu 0\nmmap 0x7f0000000000 4K rw\nW 0x7f0000000000 8\n", p);
  /* Processes 2 to 7 took new slots, each flushed; 7 took slot 0 back. */
  Machine *m = fixture_machine("skylake", sets);
  fixture_run_text(m, text->str, TRUE);
  Cpu *c0 = m->cpus[0];
  ck_assert_uint_eq(c0->ctr.c[CTR_TLB_FLUSH_FULL], 6);
  ck_assert_int_eq(kernel_cpu_pcid(m->k, &c0->kc, kernel_mm(m->k, 7)), 1);
  ck_assert_int_eq(kernel_cpu_pcid(m->k, &c0->kc, kernel_mm(m->k, 1)), -1);
  ck_assert_int_eq(kernel_cpu_pcid(m->k, &c0->kc, kernel_mm(m->k, 2)), 2);
  machine_free(m);
  /* 3 still has slot 2 (PCID 3); 1 lost slot 0 to 7 and takes slot 1
   * (2's); 2 then takes slot 2. */
  g_string_append(text, "process 3\nthread 1 cpu 0\nR 0x7f0000000000 8\n"
                        "process 1\nthread 1 cpu 0\nR 0x7f0000000000 8\n"
                        "process 2\nthread 1 cpu 0\nR 0x7f0000000000 8\n");
  m = fixture_machine("skylake", sets);
  fixture_run_text(m, text->str, TRUE);
  c0 = m->cpus[0];
  ck_assert_int_eq(kernel_cpu_pcid(m->k, &c0->kc, kernel_mm(m->k, 7)), 1);
  ck_assert_int_eq(kernel_cpu_pcid(m->k, &c0->kc, kernel_mm(m->k, 1)), 2);
  ck_assert_int_eq(kernel_cpu_pcid(m->k, &c0->kc, kernel_mm(m->k, 2)), 3);
  g_string_free(text, TRUE);
  machine_free(m);
}
END_TEST

/* The engine finds a thread named again without a CPU in a small cache of
 * recent threads: more threads than its slots (so some share one), the same
 * tids in three processes, interleaved, each thread on a CPU of its own, so a
 * record given to the wrong thread shows in the wrong CPU's instructions.
 * After the first round the threads move to the next CPU (a thread named
 * with a CPU is re-pinned, never taken from the cache).  A second run on
 * the same machine must not find the first run's queues (freed with its
 * engine). */
#define CACHE_PROCS 3u
#define CACHE_TIDS 100u
#define CACHE_THREADS (CACHE_PROCS * CACHE_TIDS)
/* pids 4096 apart: with the same tid they fall in one slot of a cache
 * indexed by tid + pid * an odd number, modulo a power of two up to 4096 */
#define CACHE_PID(j) (1 + (j) / CACHE_TIDS * 4096)
#define CACHE_TID(j) (1 + (j) % CACHE_TIDS)
static void thread_cache_pin(GString *t, unsigned shift)
{
  for (unsigned j = 0; j < CACHE_THREADS; j++)
    g_string_append_printf(t, "process %u\nthread %u cpu %u\n", CACHE_PID(j), CACHE_TID(j),
                           (j + shift) % CACHE_THREADS);
}

static void thread_cache_round(GString *t, unsigned round)
{
  for (unsigned i = 0; i < CACHE_THREADS; i++) {
    unsigned j = (i * 37 + round) % CACHE_THREADS; /* 37 is prime to 300: every thread once */
    g_string_append_printf(t, "process %u\nthread %u\ncompute %u\n", CACHE_PID(j), CACHE_TID(j),
                           1000 * (j + 1));
  }
}

START_TEST(test_thread_cache_never_mixes_threads)
{
  static const char *sets[] = { "machine.cpus_per_node=300", "sched.placement=fill", NULL };
  Machine *m = fixture_machine("skylake", sets);
  uint64_t want[CACHE_THREADS] = { 0 };
  for (unsigned run = 0; run < 2; run++) {
    g_autoptr(GString) t = g_string_new(NULL);
    if (run == 0)
      thread_cache_pin(t, 0); /* the second run starts where the first ended, without naming CPUs */
    thread_cache_round(t, 0);
    g_string_append(t, "process 1\nmmap 0x7f0000000000 4K rw\n"); /* an event: what is queued runs first */
    thread_cache_pin(t, run + 1);
    thread_cache_round(t, 1);
    thread_cache_round(t, 2);
    fixture_run_text(m, t->str, TRUE);
    for (unsigned j = 0; j < CACHE_THREADS; j++) {
      want[(j + run) % CACHE_THREADS] += 1000 * (uint64_t)(j + 1);
      want[(j + run + 1) % CACHE_THREADS] += 2000 * (uint64_t)(j + 1);
    }
    for (unsigned j = 0; j < CACHE_THREADS; j++) {
      ck_assert_uint_eq(m->cpus[j]->ctr.c[CTR_INSTRUCTIONS], want[j]);
      Thread *th = machine_thread(m, CACHE_PID(j), CACHE_TID(j), -1);
      ck_assert_int_eq(th->cpu, (int)((j + run + 1) % CACHE_THREADS));
      ck_assert_ptr_eq(m->cpus[th->cpu]->kc.cur, th);
    }
  }
  machine_free(m);
}
END_TEST

/* The engine's solo loop for a batch that stays on a page tests one clock
 * bound a record, khugepaged's wake and the NUMA tick folded into it: they
 * must come due at the same record as in the queued path, which tests each
 * of them at every record.  The same accesses to one page and long
 * computations run twice, solo and with a thread record (naming the same
 * thread, which changes nothing) before each access, which queues them. */
static void run_stays(gboolean queued, Counters *sum)
{
  static const char *sets[] = { "machine.nodes=2", "numa.balancing=pte", "numa.scan_delay_ms=0.3",
                                "numa.scan_period_min_ms=0.3", "numa.scan_period_max_ms=0.3",
                                "thp.enabled=always", "khugepaged.scan_sleep_millisecs=1", NULL };
  Machine *m = fixture_machine("skylake", sets);
  g_autoptr(GString) t = g_string_new("mmap 0x7f0000000000 4M rw\nW 0x7f0000000000 8\n");
  for (unsigned i = 0; i < 300; i++) {
    /* Mostly accesses, so that batch_jumps() takes the batches for ones
     * that stay on a page. */
    g_string_append_printf(t, "compute %u\n%s", 300000 + i * 1000, queued ? "thread 1\n" : "");
    for (unsigned k = 0; k < 40; k++)
      g_string_append_printf(t, "%c 0x7f0000000%03x 8\n", k % 3 ? 'R' : 'W', 8 * ((i + k) % 512));
  }
  fixture_run_text(m, t->str, TRUE);
  machine_counters(m, sum);
  machine_free(m);
}

START_TEST(test_solo_stays_ticks_as_queued)
{
  Counters solo, queued;
  run_stays(FALSE, &solo);
  run_stays(TRUE, &queued);
  ck_assert_uint_ge(solo.c[CTR_FULL_SCANS], 10);  /* the run spans many of both */
  ck_assert_uint_gt(solo.c[CTR_NUMA_PTE_UPDATES], 0);
  for (unsigned k = 0; k < N_COUNTERS; k++)
    ck_assert_msg(solo.c[k] == queued.c[k], "%s: %" G_GUINT64_FORMAT " solo, %" G_GUINT64_FORMAT " queued",
                  counter_def((CounterId)k)->name, solo.c[k], queued.c[k]);
}
END_TEST

static Suite *machine_suite(void)
{
  Suite *s = suite_create("machine");
  TCase *tc = tcase_create("presets");
  tcase_add_test(tc, test_presets_build);
  tcase_add_test(tc, test_thread_keys_use_all_32_bits);
  tcase_add_test(tc, test_unknown_preset);
  tcase_add_test(tc, test_ini_file_inherit_and_errors);
  tcase_add_test(tc, test_ini_file_syntax_errors);
  tcase_add_test(tc, test_geometry_errors_name_settings);
  tcase_add_test(tc, test_hpt_error_names_settings);
  tcase_add_test(tc, test_fragmentation_after_boot);
  tcase_add_test(tc, test_impossible_machines);
  tcase_add_test(tc, test_threads_and_shootdown);
  tcase_add_test(tc, test_numa_presets);
  tcase_add_test(tc, test_numa_memory);
  tcase_add_test(tc, test_placement);
  tcase_add_test(tc, test_shootdown_targets_and_costs);
  tcase_add_test(tc, test_new_thread_starts_at_creation);
  tcase_add_test(tc, test_cpumask_trimmed_on_switch);
  tcase_add_test(tc, test_asids_reused_round_robin);
  tcase_add_test(tc, test_thread_cache_never_mixes_threads);
  tcase_add_test(tc, test_solo_stays_ticks_as_queued);
  tcase_add_test(tc, test_oom_kill_drops_the_victims_records);
  tcase_add_test(tc, test_champsim_chase_costs_what_d_records_cost);
  tcase_add_test(tc, test_champsim_independent_loads_unchanged);
  tcase_add_test(tc, test_oom_kill_next_thread_switches);
  tcase_add_test(tc, test_cpus_built_lazily);
  tcase_add_test(tc, test_pid_max);
  tcase_add_test(tc, test_shootdown_to_unbuilt_cpu);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(machine_suite)
