/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of NUMA memory policies (kernel/mempolicy.c, mempolicy_syntax.c):
 * the policy syntax the setting and the trace reader share (each mode,
 * ranges, bad lists, the node limit, preferred's one node, writing it
 * back), the setting's messages, the weights, the settings checked at machine
 * creation, the node each policy chooses for base pages, THPs and hugetlb
 * pages, the fallback by SLIT distance on a ring of four nodes (0-1-2-3-0,
 * so node 2 is the farthest from node 0 and nearest-first is visible), bind
 * never leaving its nodes, interleave by the VMA's interleave index and by
 * round robin, weighted interleave, mbind's VMA splits and refusals, and the
 * numa_hit, numa_miss and numa_interleave counters.
 */
#include "config.h"
#include "fault.h"
#include "hugetlb.h"
#include "mempolicy.h"
#include "machine_fixture.h"

#define BASE 0x7f0000000000ULL
#define KB (UINT64_C(1) << 10)
#define MB (UINT64_C(1) << 20)

/* Four nodes in a ring: neighbours at 20, the opposite node at 30. */
#define RING "numa.distances=10,20,30,20;20,10,20,30;30,20,10,20;20,30,20,10"

/* ---- helpers ------------------------------------------------------------- */

static void sys_range(Machine *m, Thread *t, TraceRecordType type, uint64_t addr, uint64_t len, int arg, uint64_t arg2)
{
  TraceRecord r = { .type = (uint8_t)type, .addr = addr, .len = len, .pid = t->pid, .tid = t->tid, .arg = arg,
                    .arg2 = arg2 };
  if (type == REC_MMAP)
    r.prot = PROT_R | PROT_W;
  kernel_syscall(m->k, &m->cpus[0]->kc, t->mm, &r);
}

static void mmap_rw(Machine *m, Thread *t, uint64_t addr, uint64_t len)
{
  sys_range(m, t, REC_MMAP, addr, len, 0, 0);
}

static void mbind(Machine *m, Thread *t, uint64_t addr, uint64_t len, TracePolicy mode, uint64_t nodes)
{
  sys_range(m, t, REC_MEMPOLICY, addr, len, mode, nodes);
}

static void set_mempolicy(Machine *m, Thread *t, TracePolicy mode, uint64_t nodes)
{
  TraceRecord r = { .type = REC_MEMPOLICY, .flags = MPOL_F_PROCESS, .pid = t->pid, .tid = t->tid, .arg = mode,
                    .arg2 = nodes };
  kernel_syscall(m->k, &m->cpus[0]->kc, t->mm, &r);
}

/* Write-fault va; the node of the page now mapping it (-1: none). */
static int write_node(Machine *m, Thread *t, uint64_t va)
{
  uint64_t cycles;
  if (fault_handle(m->k, &m->cpus[0]->kc, t->mm, va, ACC_STORE, &cycles) != FAULT_MAPPED)
    return -1;
  unsigned level, idx;
  PtNode *n = pgtable_lookup(&t->mm->pt, va, &level, &idx);
  uint64_t e = n->e[idx];
  if (!(e & PTE_P))
    return -1;
  return physmem_node_of(m->k->pm, pte_pfn(e));
}

/* Allocate free 4K frames of `node` until `pages` are left (held until the
 * machine is freed with it). */
static void fill_node_leaving(Machine *m, int node, uint64_t pages)
{
  uint64_t pfn;
  while (physmem_free_pages(m->k->pm, node) > pages && physmem_alloc_on(m->k->pm, node, 0, MT_MOVABLE, &pfn))
    ;
  ck_assert_uint_eq(physmem_free_pages(m->k->pm, node), pages);
}

/* Allocate every free 4K frame of `node` (held until the machine is freed
 * with it). */
static void fill_node(Machine *m, int node)
{
  uint64_t pfn;
  while (physmem_alloc_on(m->k->pm, node, 0, MT_MOVABLE, &pfn))
    ;
  ck_assert_uint_le(physmem_free_pages(m->k->pm, node), 64);
}

static Machine *ring_machine(const char *extra1, const char *extra2)
{
  const char *sets[] = { "machine.nodes=4", "machine.cpus_per_node=1", RING, "thp.enabled=never",
                         extra1, extra2, NULL };
  return fixture_machine("skylake", sets);
}

/* ---- parsing --------------------------------------------------------------- */

/* The shared grammar (mempolicy_syntax.c) that the setting and the trace
 * reader both use: kinds of error and the offending node, no messages. */

static MempolicySyntaxError syntax(const char *text, unsigned limit, MemPolicy *p, unsigned *bad)
{
  *p = (MemPolicy){ .mode = 0xff, .nodes = 0xdead }; /* untouched on error */
  *bad = 0xffff;
  return mempolicy_syntax_parse(text, limit, p, bad);
}

/* `text` reads as mode and nodes below `limit`, and is written back as
 * `written`. */
static void check_reads(const char *text, unsigned limit, TracePolicy mode, uint64_t nodes, const char *written)
{
  MemPolicy p;
  unsigned bad;
  ck_assert_msg(syntax(text, limit, &p, &bad) == MEMPOLICY_SYNTAX_OK, "%s refused", text);
  ck_assert_msg(p.mode == mode, "%s: mode %u", text, p.mode);
  ck_assert_msg(p.nodes == nodes, "%s: nodes 0x%" G_GINT64_MODIFIER "x", text, p.nodes);
  g_autoptr(GString) out = g_string_new(NULL);
  mempolicy_syntax_format(out, p.mode, p.flags, p.nodes);
  ck_assert_str_eq(out->str, written);
}

START_TEST(test_syntax_each_mode)
{
  static const struct {
    const char *text, *name;
    TracePolicy mode;
    uint64_t nodes;
  } ok[] = {
    { "local", "local", MPOL_DEFAULT_LOCAL, 0 },
    { "bind:2", "bind", MPOL_BIND, 0x4 },
    { "preferred:3", "preferred", MPOL_PREFERRED, 0x8 },
    { "interleave:0,2", "interleave", MPOL_INTERLEAVE, 0x5 },
    { "weighted_interleave:1-2", "weighted_interleave", MPOL_WEIGHTED_INTERLEAVE, 0x6 },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(ok); i++) {
    check_reads(ok[i].text, 4, ok[i].mode, ok[i].nodes, ok[i].text);
    ck_assert_str_eq(mempolicy_syntax_mode_name(ok[i].mode), ok[i].name);
  }
  ck_assert_ptr_null(mempolicy_syntax_mode_name(MPOL_PREFERRED_MANY + 1));
  g_autoptr(GString) out = g_string_new(NULL);
  mempolicy_syntax_format(out, 99, 0, 0x3);
  ck_assert_str_eq(out->str, "?");
}
END_TEST

START_TEST(test_syntax_ranges)
{
  check_reads("bind:0-3,5", MEMPOLICY_MAX_NODES, MPOL_BIND, 0x2f, "bind:0-3,5");
  check_reads("bind:5,0-3", MEMPOLICY_MAX_NODES, MPOL_BIND, 0x2f, "bind:0-3,5"); /* any order */
  check_reads("bind:1,1,1-2", MEMPOLICY_MAX_NODES, MPOL_BIND, 0x6, "bind:1-2");  /* overlaps are one node */
  check_reads("bind:3-3", MEMPOLICY_MAX_NODES, MPOL_BIND, 0x8, "bind:3");        /* a run of one */
  check_reads("bind:007", MEMPOLICY_MAX_NODES, MPOL_BIND, 0x80, "bind:7");       /* leading zeros */
  check_reads("interleave:0-63", MEMPOLICY_MAX_NODES, MPOL_INTERLEAVE, UINT64_MAX, "interleave:0-63");
  check_reads("interleave:0,2,4,6", MEMPOLICY_MAX_NODES, MPOL_INTERLEAVE, 0x55, "interleave:0,2,4,6");
  check_reads("interleave:62-63,0", MEMPOLICY_MAX_NODES, MPOL_INTERLEAVE, UINT64_C(0xc000000000000001),
              "interleave:0,62-63");
}
END_TEST

/* `text` is refused with error e and changes nothing; for
 * MEMPOLICY_SYNTAX_NODE_LIMIT, `node` is the node named. */
static void check_refused(const char *text, unsigned limit, MempolicySyntaxError e, unsigned node)
{
  MemPolicy p;
  unsigned bad;
  MempolicySyntaxError got = syntax(text, limit, &p, &bad);
  ck_assert_msg(got == e, "'%s': error %d, not %d", text, got, e);
  ck_assert_uint_eq(p.mode, 0xff);
  ck_assert_uint_eq(p.nodes, 0xdead);
  if (e == MEMPOLICY_SYNTAX_NODE_LIMIT)
    ck_assert_msg(bad == node, "'%s': node %u, not %u", text, bad, node);
}

START_TEST(test_syntax_bad)
{
  static const struct {
    const char *text;
    MempolicySyntaxError e;
  } bad[] = {
    { "", MEMPOLICY_SYNTAX_UNKNOWN_MODE },
    { "spread", MEMPOLICY_SYNTAX_UNKNOWN_MODE },
    { "local:0", MEMPOLICY_SYNTAX_UNKNOWN_MODE },
    { "Local", MEMPOLICY_SYNTAX_UNKNOWN_MODE },
    { "bin:0", MEMPOLICY_SYNTAX_UNKNOWN_MODE },    /* no prefixes */
    { "binding:0", MEMPOLICY_SYNTAX_UNKNOWN_MODE },
    { ":0", MEMPOLICY_SYNTAX_UNKNOWN_MODE },
    { "bind", MEMPOLICY_SYNTAX_NO_NODES },
    { "bind:", MEMPOLICY_SYNTAX_NO_NODES },
    { "preferred", MEMPOLICY_SYNTAX_NO_NODES },
    { "weighted_interleave:", MEMPOLICY_SYNTAX_NO_NODES },
    { "bind:3-1", MEMPOLICY_SYNTAX_BAD_LIST },     /* low end first */
    { "bind:1,", MEMPOLICY_SYNTAX_BAD_LIST },
    { "bind:,1", MEMPOLICY_SYNTAX_BAD_LIST },
    { "bind:1,,2", MEMPOLICY_SYNTAX_BAD_LIST },
    { "bind:1-", MEMPOLICY_SYNTAX_BAD_LIST },
    { "bind:-1", MEMPOLICY_SYNTAX_BAD_LIST },
    { "bind:1-2-3", MEMPOLICY_SYNTAX_BAD_LIST },
    { "bind:0x1", MEMPOLICY_SYNTAX_BAD_LIST },     /* decimal only */
    { "bind:1 ", MEMPOLICY_SYNTAX_BAD_LIST },
    { "bind: 1", MEMPOLICY_SYNTAX_BAD_LIST },
    { "interleave:a", MEMPOLICY_SYNTAX_BAD_LIST },
    { "bind:0-7:2", MEMPOLICY_SYNTAX_BAD_LIST },   /* no strides */
    { "bind:1000000", MEMPOLICY_SYNTAX_BAD_LIST }, /* not read as a node */
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++)
    check_refused(bad[i].text, MEMPOLICY_MAX_NODES, bad[i].e, 0);
}
END_TEST

START_TEST(test_syntax_node_limit)
{
  /* The machine's limit (a setting): node 4 of four is over. */
  check_reads("bind:0-3", 4, MPOL_BIND, 0xf, "bind:0-3");
  check_refused("bind:4", 4, MEMPOLICY_SYNTAX_NODE_LIMIT, 4);
  /* A run that goes over names its upper end. */
  check_refused("interleave:0,2-9", 4, MEMPOLICY_SYNTAX_NODE_LIMIT, 9);
  check_refused("preferred:5", 4, MEMPOLICY_SYNTAX_NODE_LIMIT, 5);
  /* Runs are taken in order: a run over the limit before a bad one, and a
   * bad one before a run over the limit. */
  check_refused("bind:7,x", 4, MEMPOLICY_SYNTAX_NODE_LIMIT, 7);
  check_refused("bind:x,7", 4, MEMPOLICY_SYNTAX_BAD_LIST, 0);
  /* A trace's limit: 64 nodes, whatever the machine. */
  check_reads("bind:63", MEMPOLICY_MAX_NODES, MPOL_BIND, UINT64_C(1) << 63, "bind:63");
  check_refused("bind:0-64", MEMPOLICY_MAX_NODES, MEMPOLICY_SYNTAX_NODE_LIMIT, 64);
  check_refused("bind:999999", MEMPOLICY_MAX_NODES, MEMPOLICY_SYNTAX_NODE_LIMIT, 999999);
  /* A limit above 64 is cut to 64: a mask has no bit for node 64. */
  check_refused("bind:64", 1000, MEMPOLICY_SYNTAX_NODE_LIMIT, 64);
  /* bad_node may be NULL. */
  MemPolicy p;
  ck_assert(mempolicy_syntax_parse("bind:4", 4, &p, NULL) == MEMPOLICY_SYNTAX_NODE_LIMIT);
}
END_TEST

START_TEST(test_syntax_preferred_one_node)
{
  check_reads("preferred:0", 8, MPOL_PREFERRED, 0x1, "preferred:0");
  /* A list that names one node is one node. */
  check_reads("preferred:2-2", 8, MPOL_PREFERRED, 0x4, "preferred:2");
  check_reads("preferred:3,3", 8, MPOL_PREFERRED, 0x8, "preferred:3");
  check_refused("preferred:0-1", 8, MEMPOLICY_SYNTAX_NOT_ONE_NODE, 0);
  check_refused("preferred:1,3", 8, MEMPOLICY_SYNTAX_NOT_ONE_NODE, 0);
  /* The list is checked before the count of its nodes. */
  check_refused("preferred:1,x", 8, MEMPOLICY_SYNTAX_BAD_LIST, 0);
  check_refused("preferred:1,9", 8, MEMPOLICY_SYNTAX_NODE_LIMIT, 9);
  /* Only preferred is held to one node. */
  check_reads("bind:0-1", 8, MPOL_BIND, 0x3, "bind:0-1");
}
END_TEST

/* MPOL_F_NUMA_BALANCING, written =balancing: bind only (the mode table's
 * numa_balancing column, sanitize_mpol_flags), kept when written back. */
START_TEST(test_syntax_balancing_flag)
{
  MemPolicy p;
  unsigned bad;
  ck_assert(syntax("bind=balancing:0-1,3", 8, &p, &bad) == MEMPOLICY_SYNTAX_OK);
  ck_assert_uint_eq(p.mode, MPOL_BIND);
  ck_assert_uint_eq(p.flags, MEMPOLICY_F_BALANCING);
  ck_assert_uint_eq(p.nodes, 0xb);
  g_autoptr(GString) out = g_string_new(NULL);
  mempolicy_syntax_format(out, p.mode, p.flags, p.nodes);
  ck_assert_str_eq(out->str, "bind=balancing:0-1,3");
  ck_assert(syntax("bind:1", 8, &p, &bad) == MEMPOLICY_SYNTAX_OK);
  ck_assert_uint_eq(p.flags, 0);
  ck_assert(syntax("preferred_many=balancing:0,2", 8, &p, &bad) == MEMPOLICY_SYNTAX_OK);
  ck_assert_uint_eq(p.mode, MPOL_PREFERRED_MANY);
  ck_assert_uint_eq(p.flags, MEMPOLICY_F_BALANCING);
  static const char *const refused[] = {
    "preferred=balancing:1", "interleave=balancing:0-1", "weighted_interleave=balancing:0", "bind=balance:0",
    "bind=:0", "bind=balancing=balancing:0", "bind=balancingx:0",
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(refused); i++)
    check_refused(refused[i], 8, MEMPOLICY_SYNTAX_BAD_FLAG, 0);
  check_refused("local=balancing", 8, MEMPOLICY_SYNTAX_BAD_FLAG, 0);
  check_refused("local=balancing:0", 8, MEMPOLICY_SYNTAX_BAD_FLAG, 0);
  check_refused("bind+balancing:0", 8, MEMPOLICY_SYNTAX_UNKNOWN_MODE, 0); /* the kernel's notation is '=' */
  check_refused("bind=balancing", 8, MEMPOLICY_SYNTAX_NO_NODES, 0);
  check_refused("spread=balancing:0", 8, MEMPOLICY_SYNTAX_UNKNOWN_MODE, 0);
  ck_assert_str_eq(mempolicy_syntax_flag_expected(), "bind=balancing:NODES or preferred_many=balancing:NODES");
  /* The setting: its message names the flag and the form that takes it. */
  GError *err = NULL;
  ck_assert(!mempolicy_parse("interleave=balancing:0-1", 4, "setting 'numa.mempolicy'", &p, &err));
  ck_assert_msg(strstr(err->message, "MPOL_F_NUMA_BALANCING") && strstr(err->message, "bind=balancing:NODES"), "%s",
                err->message);
  g_clear_error(&err);
  /* Without nodes: the forms with the flag are what is expected. */
  ck_assert(!mempolicy_parse("bind=balancing", 4, "setting 'numa.mempolicy'", &p, &err));
  ck_assert_msg(strstr(err->message, "needs nodes; expected bind=balancing:NODES or"), "%s", err->message);
  g_clear_error(&err);
  ck_assert(mempolicy_parse("bind=balancing:2", 4, "setting 'numa.mempolicy'", &p, &err));
  ck_assert_uint_eq(p.flags, MEMPOLICY_F_BALANCING);
}
END_TEST

START_TEST(test_parse_policies)
{
  static const struct {
    const char *text;
    TracePolicy mode;
    uint64_t nodes;
  } ok[] = {
    { "local", MPOL_DEFAULT_LOCAL, 0 },
    { "bind:0-3,5", MPOL_BIND, 0x2f },
    { "preferred:7", MPOL_PREFERRED, 0x80 },
    { "interleave:1,3", MPOL_INTERLEAVE, 0xa },
    { "weighted_interleave:0-1", MPOL_WEIGHTED_INTERLEAVE, 0x3 },
    { "bind:2-2", MPOL_BIND, 0x4 },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(ok); i++) {
    MemPolicy p;
    GError *err = NULL;
    ck_assert_msg(mempolicy_parse(ok[i].text, 8, "test", &p, &err), "%s: %s", ok[i].text, err ? err->message : "");
    ck_assert_uint_eq(p.mode, ok[i].mode);
    ck_assert_uint_eq(p.nodes, ok[i].nodes);
  }
  static const struct {
    const char *text, *says;
  } bad[] = {
    { "bind:8", "node 8 does not exist" },  { "interleave:0-9", "node 9 does not exist" },
    { "preferred:0-1", "one node" },        { "bind", "needs nodes" },
    { "bind:", "needs nodes" },             { "bind:3-1", "bad node list" },
    { "bind:1,", "bad node list" },         { "interleave:a", "bad node list" },
    { "first-touch", "unknown memory policy" }, { "local:0", "unknown memory policy" },
    { "", "unknown memory policy" },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
    MemPolicy p;
    GError *err = NULL;
    ck_assert_msg(!mempolicy_parse(bad[i].text, 8, "setting 'numa.mempolicy'", &p, &err), "%s parsed", bad[i].text);
    ck_assert_msg(strstr(err->message, bad[i].says) && strstr(err->message, "numa.mempolicy"), "%s: %s",
                  bad[i].text, err->message);
    g_error_free(err);
  }
  GError *err = NULL;
  MemPolicy p;
  ck_assert(!mempolicy_parse("bind:4", 4, "setting 'numa.mempolicy'", &p, &err));
  ck_assert_msg(strstr(err->message, "machine.nodes"), "%s", err->message); /* says how to fix it */
  g_error_free(err);
}
END_TEST

START_TEST(test_parse_weights)
{
  uint8_t w[4];
  GError *err = NULL;
  ck_assert(mempolicy_parse_weights("", 4, "w", w, &err));
  for (unsigned i = 0; i < 4; i++)
    ck_assert_uint_eq(w[i], 1);
  ck_assert(mempolicy_parse_weights("3,1,255, 7", 4, "w", w, &err));
  ck_assert_uint_eq(w[0], 3);
  ck_assert_uint_eq(w[1], 1);
  ck_assert_uint_eq(w[2], 255);
  ck_assert_uint_eq(w[3], 7);
  static const char *const bad[] = { "3,1", "1,1,1,1,1", "0,1,1,1", "256,1,1,1", "1,x,1,1", "1,,1,1", "-1,1,1,1" };
  for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
    ck_assert_msg(!mempolicy_parse_weights(bad[i], 4, "setting 'numa.interleave_weights'", w, &err), "%s", bad[i]);
    ck_assert_msg(strstr(err->message, "numa.interleave_weights"), "%s", err->message);
    g_clear_error(&err);
  }
}
END_TEST

/* A bad setting stops machine creation with an error naming it. */
START_TEST(test_bad_settings_refused)
{
  static const struct {
    const char *set, *name;
  } cases[] = {
    { "numa.mempolicy=bind:4", "numa.mempolicy" },
    { "numa.mempolicy=interleave", "numa.mempolicy" },
    { "numa.interleave_weights=3,1", "numa.interleave_weights" },
    { "numa.interleave_weights=1,1,1,300", "numa.interleave_weights" },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(Settings) s = settings_new();
    GError *err = NULL;
    ck_assert(preset_load(s, "skylake", &err));
    ck_assert(settings_set(s, "machine.mem_per_node", "1G", "test", &err));
    ck_assert(settings_set_pair(s, "machine.nodes=4", "test", &err));
    ck_assert(settings_set_pair(s, cases[i].set, "test", &err));
    Machine *m = machine_new("skylake", s, NULL, &err);
    ck_assert_msg(m == NULL, "%s accepted", cases[i].set);
    ck_assert_msg(strstr(err->message, cases[i].name), "%s: %s", cases[i].set, err->message);
    g_error_free(err);
  }
}
END_TEST

/* ---- node choice and fallback ------------------------------------------- */

/* The order each policy tries the nodes in, on the ring, from CPU 0. */
START_TEST(test_fallback_order)
{
  Machine *m = ring_machine(NULL, NULL);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  fixture_vma(t, BASE, 1 * MB, PROT_R | PROT_W);
  Vma *v = mm_find_vma(t->mm, BASE);
  static const struct {
    TracePolicy mode;
    uint64_t nodes;
    int order[4];
    unsigned n;
  } cases[] = {
    { MPOL_DEFAULT_LOCAL, 0, { 0, 1, 3, 2 }, 4 },  /* local: nearest first, the opposite node last */
    { MPOL_PREFERRED, 0x4, { 2, 1, 3, 0 }, 4 },     /* from node 2's point of view */
    { MPOL_BIND, 0xe, { 1, 3, 2 }, 3 },             /* CPU 0's zonelist, filtered: 3 before 2 */
    { MPOL_BIND, 0xc, { 3, 2 }, 2 },                /* the nearest allowed node first */
    { MPOL_PREFERRED, 0x1, { 0, 1, 3, 2 }, 4 },
  };
  for (unsigned c = 0; c < G_N_ELEMENTS(cases); c++) {
    v->policy = (uint8_t)cases[c].mode;
    v->policy_nodes = cases[c].nodes;
    MemPlacement p;
    mempolicy_place(k, t->mm, v, BASE, 0, 0, &p);
    int nodes[64];
    unsigned n = mempolicy_nodes(k, &p, nodes);
    ck_assert_msg(n == cases[c].n, "case %u: %u nodes", c, n);
    for (unsigned i = 0; i < n; i++)
      ck_assert_msg(nodes[i] == cases[c].order[i], "case %u: node %u is %d, want %d", c, i, nodes[i],
                    cases[c].order[i]);
  }
  machine_free(m);
}
END_TEST

/* Local: the CPU's node, then the nearest (numa_miss), the opposite last. */
START_TEST(test_local_falls_back_nearest_first)
{
  Machine *m = ring_machine("mem.kernel_reserved=0", "machine.mem_per_node=64M");
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 64 * MB);
  ck_assert_int_eq(write_node(m, t, BASE), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_HIT), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_MISS), 0);
  fill_node(m, 0);
  ck_assert_int_eq(write_node(m, t, BASE + 4 * KB), 1);
  fill_node(m, 1);
  ck_assert_int_eq(write_node(m, t, BASE + 8 * KB), 3); /* 3 is at 20, 2 at 30 */
  fill_node(m, 3);
  ck_assert_int_eq(write_node(m, t, BASE + 12 * KB), 2);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_HIT), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_MISS), 3);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 0);
  machine_free(m);
}
END_TEST

/* Preferred: its node, then by distance from it. */
START_TEST(test_preferred)
{
  Machine *m = ring_machine("mem.kernel_reserved=0", "machine.mem_per_node=64M");
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 64 * MB);
  set_mempolicy(m, t, MPOL_PREFERRED, 0x4);
  ck_assert_int_eq(write_node(m, t, BASE), 2);
  fill_node(m, 2);
  ck_assert_int_eq(write_node(m, t, BASE + 4 * KB), 1); /* 1 and 3 are both at 20: the lower first */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_HIT), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_MISS), 1);
  machine_free(m);
}
END_TEST

/* Bind: only its nodes, the nearest to the CPU first, then OOM while other
 * nodes are still free.  Nodes 2 and 3 are filled beforehand but for 3000
 * pages each (64M, the smallest node, is 16384 pages): running them dry
 * takes a few thousand faults instead of 32768, whose page clears would
 * all queue at the DRAM at the same instant, for the same outcome. */
START_TEST(test_bind_stays_and_ooms)
{
  Machine *m = ring_machine("mem.kernel_reserved=0", "machine.mem_per_node=64M");
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  mmap_rw(m, t, BASE, 256 * MB);
  mbind(m, t, BASE, 256 * MB, MPOL_BIND, 0xc); /* nodes 2 and 3 */
  fill_node_leaving(m, 2, 3000);
  fill_node_leaving(m, 3, 3000);
  uint64_t free1 = physmem_free_pages(k->pm, 1);
  unsigned on[4] = { 0 };
  uint64_t va = BASE;
  int first = -1, node;
  for (;; va += 4 * KB) {
    node = write_node(m, t, va);
    if (node < 0)
      break;
    if (first < 0)
      first = node;
    ck_assert_msg(node == 2 || node == 3, "page at %#" G_GINT64_MODIFIER "x on node %d", va, node);
    on[node]++;
  }
  ck_assert_int_eq(first, 3); /* CPU 0 is next to 3, opposite 2 */
  ck_assert(k->oom);
  ck_assert_uint_gt(on[2], 1000);
  ck_assert_uint_gt(on[3], 1000);
  ck_assert_uint_eq(physmem_free_pages(k->pm, 1), free1); /* never touched */
  ck_assert_uint_gt(physmem_free_pages(k->pm, 0), 1000);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_HIT), on[3]);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_MISS), on[2]);
  machine_free(m);
}
END_TEST

/* ---- interleave --------------------------------------------------------------- */

/* A VMA policy places each page by its index, whatever the order of the
 * faults; every page counts numa_interleave. */
START_TEST(test_interleave_vma_by_index)
{
  Machine *m = ring_machine(NULL, NULL);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 1 * MB);
  mbind(m, t, BASE, 1 * MB, MPOL_INTERLEAVE, 0xd); /* nodes 0, 2, 3 */
  static const int nodes[3] = { 0, 2, 3 };
  uint64_t base_ilx = BASE >> 12;
  for (int i = 63; i >= 0; i -= 2) /* backwards, every other page */
    ck_assert_int_eq(write_node(m, t, BASE + (uint64_t)i * 4 * KB), nodes[(base_ilx + (uint64_t)i) % 3]);
  for (int i = 0; i < 64; i += 2)
    ck_assert_int_eq(write_node(m, t, BASE + (uint64_t)i * 4 * KB), nodes[(base_ilx + (uint64_t)i) % 3]);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 64);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_HIT), 64);
  machine_free(m);
}
END_TEST

/* THPs interleave at their order: ilx = (vm_start >> 21) + ((addr - vm_start)
 * >> 21), which is not addr >> 21 when the VMA starts off a 2M boundary. */
START_TEST(test_interleave_thp_index)
{
  const char *sets[] = { "machine.nodes=4", "machine.cpus_per_node=1", "thp.enabled=always", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 8 * MB);
  mbind(m, t, BASE, 8 * MB, MPOL_INTERLEAVE, 0xf);
  uint64_t ilx0 = BASE >> 21;
  for (unsigned j = 0; j < 4; j++)
    ck_assert_int_eq(write_node(m, t, BASE + j * 2 * MB + 4 * KB), (int)((ilx0 + j) % 4));
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 4);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 4);
  /* A VMA one page past a 2M boundary: its first THP is at the next
   * boundary, index (start >> 21) + 0. */
  uint64_t start = BASE + 64 * MB + 4 * KB;
  mmap_rw(m, t, start, 8 * MB);
  mbind(m, t, start, 8 * MB, MPOL_INTERLEAVE, 0xf);
  uint64_t haddr = BASE + 66 * MB;
  ck_assert_int_eq(write_node(m, t, haddr), (int)((start >> 21) % 4));
  ck_assert_int_ne(write_node(m, t, haddr), (int)((haddr >> 21) % 4));
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 5);
  machine_free(m);
}
END_TEST

/* A process policy interleaves a VMA's pages by their index, as a VMA
 * policy does (get_vma_policy); outside any VMA it takes the nodes in turn. */
START_TEST(test_interleave_process_policy)
{
  Machine *m = ring_machine(NULL, NULL);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 1 * MB);
  set_mempolicy(m, t, MPOL_INTERLEAVE, 0xe); /* nodes 1, 2, 3 */
  uint64_t ilx0 = BASE >> 12;
  for (int i = 29; i >= 0; i--)
    ck_assert_int_eq(write_node(m, t, BASE + (uint64_t)i * 4 * KB), 1 + (int)((ilx0 + (uint64_t)i) % 3));
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 30);
  /* Outside a VMA: round robin from the policy's first node. */
  MemPlacement p;
  for (int i = 0; i < 6; i++) {
    mempolicy_place(m->k, t->mm, NULL, 0, 0, 0, &p);
    ck_assert_int_eq(p.node, 1 + i % 3);
  }
  /* A new policy starts again from its first node. */
  set_mempolicy(m, t, MPOL_INTERLEAVE, 0xc);
  mempolicy_place(m->k, t->mm, NULL, 0, 0, 0, &p);
  ck_assert_int_eq(p.node, 2);
  uint64_t va = BASE + 256 * KB;
  ck_assert_int_eq(write_node(m, t, va), 2 + (int)((va >> 12) % 2));
  /* A VMA policy wins over the process's. */
  mbind(m, t, BASE + 128 * KB, 64 * KB, MPOL_PREFERRED, 0x1);
  ck_assert_int_eq(write_node(m, t, BASE + 128 * KB), 0);
  /* `local` on a VMA is mbind(MPOL_DEFAULT): the process's policy again. */
  mbind(m, t, BASE + 128 * KB, 64 * KB, MPOL_DEFAULT_LOCAL, 0);
  va = BASE + 132 * KB;
  ck_assert_int_eq(write_node(m, t, va), 2 + (int)((va >> 12) % 2));
  machine_free(m);
}
END_TEST

/* numa.mempolicy is every process's policy. */
START_TEST(test_setting_is_process_default)
{
  Machine *m = ring_machine("numa.mempolicy=preferred:3", NULL);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 1 * MB);
  ck_assert_int_eq(write_node(m, t, BASE), 3);
  set_mempolicy(m, t, MPOL_DEFAULT_LOCAL, 0);
  ck_assert_int_eq(write_node(m, t, BASE + 4 * KB), 0);
  machine_free(m);
}
END_TEST

/* numa.mempolicy=bind=balancing:... gives every process the flag, as
 * `numactl --balancing --membind`; a mempolicy record replaces it. */
START_TEST(test_setting_balancing_flag)
{
  Machine *m = ring_machine("numa.mempolicy=bind=balancing:2-3", NULL);
  Thread *t = fixture_thread(m, 1);
  ck_assert_uint_eq(t->mm->policy, MPOL_BIND);
  ck_assert_uint_eq(t->mm->policy_flags, MEMPOLICY_F_BALANCING);
  ck_assert_uint_eq(t->mm->policy_nodes, 0xc);
  set_mempolicy(m, t, MPOL_BIND, 0xc);
  ck_assert_uint_eq(t->mm->policy_flags, 0);
  machine_free(m);
}
END_TEST

/* Weights 3,1: three pages on node 0 for each on node 1, by index for a VMA
 * policy and by the il_weight countdown for the process's. */
START_TEST(test_weighted_interleave)
{
  const char *sets[] = { "machine.nodes=2", "thp.enabled=never", "numa.interleave_weights=3,1", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 4 * MB);
  mbind(m, t, BASE, 2 * MB, MPOL_WEIGHTED_INTERLEAVE, 0x3);
  unsigned on[2] = { 0 };
  uint64_t ilx0 = BASE >> 12;
  for (int i = 399; i >= 0; i--) {
    int node = write_node(m, t, BASE + (uint64_t)i * 4 * KB);
    ck_assert_int_eq(node, (ilx0 + (uint64_t)i) % 4 < 3 ? 0 : 1);
    on[node]++;
  }
  ck_assert_uint_eq(on[0], 300);
  ck_assert_uint_eq(on[1], 100);
  /* The process's policy: by index in a VMA, by the il_weight countdown
   * outside one. */
  set_mempolicy(m, t, MPOL_WEIGHTED_INTERLEAVE, 0x3);
  for (unsigned i = 0; i < 9; i++) {
    uint64_t va = BASE + 2 * MB + (uint64_t)(100 - i) * 4 * KB;
    ck_assert_int_eq(write_node(m, t, va), (va >> 12) % 4 < 3 ? 0 : 1);
  }
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 400 + 9);
  static const int want[] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
  MemPlacement p;
  for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
    mempolicy_place(m->k, t->mm, NULL, 0, 0, 0, &p);
    ck_assert_int_eq(p.node, want[i]);
  }
  machine_free(m);
}
END_TEST

/* An interleave page that found its node full is a miss, not an interleave
 * hit. */
START_TEST(test_interleave_miss)
{
  Machine *m = ring_machine("mem.kernel_reserved=0", "machine.mem_per_node=64M");
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 1 * MB);
  mbind(m, t, BASE, 1 * MB, MPOL_INTERLEAVE, 0x6); /* nodes 1, 2 */
  fill_node(m, 2);
  uint64_t ilx0 = BASE >> 12;
  uint64_t va2 = BASE + ((ilx0 % 2) == 0 ? 4 * KB : 0); /* the page whose index picks node 2 */
  ck_assert_int_eq(write_node(m, t, va2), 1);   /* nearest to 2 with room: 1 (at 20) before 3 */
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_MISS), 1);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 0);
  machine_free(m);
}
END_TEST

/* ---- THP and hugetlb ------------------------------------------------------- */

/* A THP under bind to nodes without the CPU's goes to the nearest allowed
 * node; under preferred it goes to that node. */
START_TEST(test_thp_follows_policy)
{
  const char *sets[] = { "machine.nodes=4", "machine.cpus_per_node=1", RING, "thp.enabled=always", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 8 * MB);
  mbind(m, t, BASE, 2 * MB, MPOL_BIND, 0x6);
  mbind(m, t, BASE + 2 * MB, 2 * MB, MPOL_PREFERRED, 0x8);
  ck_assert_int_eq(write_node(m, t, BASE), 1);
  ck_assert_int_eq(write_node(m, t, BASE + 2 * MB), 3);
  ck_assert_int_eq(write_node(m, t, BASE + 4 * MB), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 3);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_HIT), 3);
  machine_free(m);
}
END_TEST

/* hugetlb pages come from the pool of the policy's node: interleaved by the
 * page's index in the VMA (offset 0), or only from the bind nodes, a
 * SIGBUS when their pools are empty. */
START_TEST(test_hugetlb_follows_policy)
{
  const char *sets[] = { "machine.nodes=4", "machine.cpus_per_node=1", RING, "hugetlb.nr_hugepages=8", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  Kernel *k = m->k;
  /* At a 2M boundary whose index (HB >> 21) is 1 mod 4: the pool page's
   * index counts from the mapping's start (vm_pgoff 0), not from 0. */
  const uint64_t HB = BASE + 2 * MB;
  TraceRecord r = { .type = REC_MMAP, .addr = HB, .len = 16 * MB, .prot = PROT_R | PROT_W,
                    .flags = MAP_F_HUGETLB, .pid = 1, .tid = 1 };
  kernel_syscall(k, &m->cpus[0]->kc, t->mm, &r);
  mbind(m, t, HB, 8 * MB, MPOL_INTERLEAVE, 0xf);
  for (unsigned j = 0; j < 4; j++) {
    uint64_t cycles;
    ck_assert_int_eq(fault_handle(k, &m->cpus[0]->kc, t->mm, HB + (3 - j) * 2 * MB, ACC_STORE, &cycles), FAULT_MAPPED);
  }
  for (int n = 0; n < 4; n++)
    ck_assert_uint_eq(hugetlb_free_on(k->hugetlb, HPAGE_2M, n), 1); /* one page from each node */
  unsigned level, idx;
  PtNode *pn = pgtable_lookup(&t->mm->pt, HB + 2 * MB, &level, &idx);
  ck_assert_int_eq(physmem_node_of(k->pm, pte_pfn(pn->e[idx])), 1);
  mbind(m, t, HB + 8 * MB, 8 * MB, MPOL_BIND, 0x4);
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(k, &m->cpus[0]->kc, t->mm, HB + 8 * MB, ACC_STORE, &cycles), FAULT_MAPPED);
  ck_assert_uint_eq(hugetlb_free_on(k->hugetlb, HPAGE_2M, 2), 0);
  ck_assert_int_eq(fault_handle(k, &m->cpus[0]->kc, t->mm, HB + 10 * MB, ACC_STORE, &cycles), FAULT_SEGV);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_HUGETLB_ALLOC_FAIL), 1);
  ck_assert_uint_eq(hugetlb_free_count(k->hugetlb, HPAGE_2M), 3);
  machine_free(m);
}
END_TEST

/* ---- mbind and set_mempolicy records ------------------------------------ */

START_TEST(test_mbind_splits_and_refuses)
{
  Machine *m = ring_machine(NULL, NULL);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 1 * MB);
  mbind(m, t, BASE + 256 * KB, 256 * KB, MPOL_BIND, 0x2);
  ck_assert_uint_eq(mm_vma_count(t->mm), 3); /* split at both edges */
  const Vma *v = mm_find_vma(t->mm, BASE + 256 * KB);
  ck_assert_uint_eq(v->start, BASE + 256 * KB);
  ck_assert_uint_eq(v->end, BASE + 512 * KB);
  ck_assert_uint_eq(v->policy, MPOL_BIND);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE)->policy, MPOL_DEFAULT_LOCAL);
  /* The same policy again on the neighbours merges them back. */
  mbind(m, t, BASE + 256 * KB, 256 * KB, MPOL_DEFAULT_LOCAL, 0);
  ck_assert_uint_eq(mm_vma_count(t->mm), 1);
  /* A hole in the range: EFAULT, nothing changes. */
  uint64_t segv = fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED);
  mbind(m, t, BASE + 512 * KB, 1 * MB, MPOL_BIND, 0x2);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), segv + 1);
  ck_assert_uint_eq(mm_vma_count(t->mm), 1);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE + 512 * KB)->policy, MPOL_DEFAULT_LOCAL);
  /* Nodes the machine lacks are dropped; none left is EINVAL. */
  mbind(m, t, BASE, 1 * MB, MPOL_BIND, 0x30);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), segv + 2);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE)->policy, MPOL_DEFAULT_LOCAL);
  mbind(m, t, BASE, 1 * MB, MPOL_BIND, 0x28);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE)->policy_nodes, 0x8);
  set_mempolicy(m, t, MPOL_PREFERRED, 0x10);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_SYSCALLS_FAILED), segv + 3);
  ck_assert_uint_eq(t->mm->policy, MPOL_DEFAULT_LOCAL);
  set_mempolicy(m, t, MPOL_INTERLEAVE, 0x1f);
  ck_assert_uint_eq(t->mm->policy, MPOL_INTERLEAVE);
  ck_assert_uint_eq(t->mm->policy_nodes, 0xf);
  machine_free(m);
}
END_TEST

/* One node: every policy lands on node 0, as first touch did. */
START_TEST(test_single_node)
{
  const char *sets[] = { "thp.enabled=never", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 1 * MB);
  mbind(m, t, BASE, 512 * KB, MPOL_INTERLEAVE, 0x1);
  for (unsigned i = 0; i < 200; i++)
    ck_assert_int_eq(write_node(m, t, BASE + i * 4 * KB), 0);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_HIT), 200);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 128);
  machine_free(m);
}
END_TEST

/* ---- the table of modes and preferred_many ---------------------------------- */

/* Every row is found by its code and its name, the codes are the
 * TracePolicy values in order, and the lists and messages come from it. */
START_TEST(test_mode_table)
{
  static const char *const names[] = { "local", "bind", "preferred", "interleave", "weighted_interleave",
                                        "preferred_many" };
  unsigned n = 0;
  for (const MempolicyMode *m; (m = mempolicy_mode_nth(n)); n++) {
    ck_assert_uint_eq(m->code, n);
    ck_assert_str_eq(m->name, names[n]);
    ck_assert_ptr_eq(mempolicy_mode_by_code(m->code), m);
    ck_assert_ptr_eq(mempolicy_mode_by_name(m->name, strlen(m->name)), m);
    ck_assert_ptr_nonnull(m->place);
  }
  ck_assert_uint_eq(n, G_N_ELEMENTS(names));
  ck_assert_ptr_null(mempolicy_mode_by_code(n));
  ck_assert_ptr_null(mempolicy_mode_by_code(UINT64_C(1) << 32));
  ck_assert_ptr_null(mempolicy_mode_by_name("preferred_many", 13)); /* "preferred_man" */
  ck_assert_ptr_eq(mempolicy_mode_by_name("preferred_many:1", 14), &mempolicy_mode_preferred_many);
  /* The node lists each mode takes: the .mtr check. */
  ck_assert(mempolicy_mode_nodes_ok(&mempolicy_mode_local, 0));
  ck_assert(!mempolicy_mode_nodes_ok(&mempolicy_mode_local, 0x1));
  ck_assert(mempolicy_mode_nodes_ok(&mempolicy_mode_preferred, 0x4));
  ck_assert(!mempolicy_mode_nodes_ok(&mempolicy_mode_preferred, 0x6));
  ck_assert(!mempolicy_mode_nodes_ok(&mempolicy_mode_preferred, 0));
  ck_assert(mempolicy_mode_nodes_ok(&mempolicy_mode_preferred_many, 0x6));
  ck_assert(mempolicy_mode_nodes_ok(&mempolicy_mode_preferred_many, UINT64_MAX));
  ck_assert(!mempolicy_mode_nodes_ok(&mempolicy_mode_preferred_many, 0));
  ck_assert_str_eq(mempolicy_syntax_expected(), "local, bind:NODES, preferred:N, interleave:NODES, "
                                                "weighted_interleave:NODES or preferred_many:NODES");
}
END_TEST

START_TEST(test_syntax_preferred_many)
{
  check_reads("preferred_many:0,2", 4, MPOL_PREFERRED_MANY, 0x5, "preferred_many:0,2");
  check_reads("preferred_many:3,1-2", 4, MPOL_PREFERRED_MANY, 0xe, "preferred_many:1-3");
  check_reads("preferred_many:2-2", 4, MPOL_PREFERRED_MANY, 0x4, "preferred_many:2");
  check_refused("preferred_many", 4, MEMPOLICY_SYNTAX_NO_NODES, 0);
  check_refused("preferred_many:", 4, MEMPOLICY_SYNTAX_NO_NODES, 0);
  check_refused("preferred_many:0,4", 4, MEMPOLICY_SYNTAX_NODE_LIMIT, 4);
  check_refused("preferred-many:0", 4, MEMPOLICY_SYNTAX_UNKNOWN_MODE, 0);
  /* The setting: the same grammar, the machine's nodes. */
  MemPolicy p;
  GError *err = NULL;
  ck_assert(mempolicy_parse("preferred_many:0,2", 4, "setting 'numa.mempolicy'", &p, &err));
  ck_assert_uint_eq(p.mode, MPOL_PREFERRED_MANY);
  ck_assert_uint_eq(p.nodes, 0x5);
  ck_assert(!mempolicy_parse("preferred_many", 4, "setting 'numa.mempolicy'", &p, &err));
  ck_assert_str_eq(err->message, "setting 'numa.mempolicy' 'preferred_many': preferred_many needs nodes; expected "
                                 "local, bind:NODES, preferred:N, interleave:NODES, weighted_interleave:NODES or "
                                 "preferred_many:NODES (NODES like 0-3,5)");
  g_clear_error(&err);
}
END_TEST

/* On the ring from CPU 0 (node 0's zonelist: 0, 1 and 3 at 20, 2 at 30),
 * as the process's policy outside any VMA: the mask's nodes nearest to
 * node 0 first, then the others in the same order, counted against the
 * mask's nearest node, or node 0 once outside the mask. */
START_TEST(test_preferred_many_order)
{
  Machine *m = ring_machine(NULL, NULL);
  Thread *t = fixture_thread(m, 1);
  static const struct {
    uint64_t nodes;
    int list[4];
  } cases[] = {
    { 0xc, { 3, 2, 0, 1 } }, /* 3 at 20 before 2 at 30, though 2 is lower */
    { 0x6, { 1, 2, 0, 3 } }, /* the mask's far node 2 before the CPU's own */
    { 0x5, { 0, 2, 1, 3 } }, /* the CPU's node in the mask: 2 before 1 */
    { 0xf, { 0, 1, 3, 2 } }, /* every node: local's order */
  };
  MemPlacement p;
  for (unsigned c = 0; c < G_N_ELEMENTS(cases); c++) {
    set_mempolicy(m, t, MPOL_PREFERRED_MANY, cases[c].nodes);
    mempolicy_place(m->k, t->mm, NULL, BASE, 0, 0, &p);
    ck_assert(p.node == cases[c].list[0] && p.from == 0 && p.allowed == cases[c].nodes);
    ck_assert(p.then_any && !p.interleaved);
    int got[64];
    ck_assert_uint_eq(mempolicy_nodes(m->k, &p, got), 4);
    ck_assert_msg(memcmp(got, cases[c].list, sizeof cases[c].list) == 0, "case %u: %d %d %d %d", c, got[0], got[1],
                  got[2], got[3]);
  }
  /* The counting of each node for preferred_many:2-3 from node 0. */
  set_mempolicy(m, t, MPOL_PREFERRED_MANY, 0xc);
  mempolicy_place(m->k, t->mm, NULL, BASE, 0, 0, &p);
  static const int hit_nodes[] = { 3, 0 }, miss_nodes[] = { 2, 1 };
  for (unsigned i = 0; i < 2; i++) {
    mempolicy_count(&m->cpus[0]->kc, &p, hit_nodes[i]);
    mempolicy_count(&m->cpus[0]->kc, &p, miss_nodes[i]);
    ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_HIT), i + 1);
    ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_MISS), i + 1);
  }
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 0);
  machine_free(m);
}
END_TEST

/* One write after another: before step i node fill (-1: none) is filled,
 * then the write at BASE + i * stride lands on `node` and leaves numa_hit
 * and numa_miss at hit and miss. */
typedef struct {
  int fill, node;
  uint64_t hit, miss;
} PlaceStep;

static void check_steps(Machine *m, Thread *t, uint64_t stride, const PlaceStep *st, unsigned n)
{
  for (unsigned i = 0; i < n; i++) {
    if (st[i].fill >= 0)
      fill_node(m, st[i].fill);
    int got = write_node(m, t, BASE + i * stride);
    ck_assert_msg(got == st[i].node, "step %u: node %d, want %d", i, got, st[i].node);
    ck_assert_msg(fixture_cpu0_ctr(m, CTR_NUMA_HIT) == st[i].hit && fixture_cpu0_ctr(m, CTR_NUMA_MISS) == st[i].miss,
                  "step %u: hit %" G_GUINT64_FORMAT " miss %" G_GUINT64_FORMAT ", want %" G_GUINT64_FORMAT
                  " and %" G_GUINT64_FORMAT,
                  i, fixture_cpu0_ctr(m, CTR_NUMA_HIT), fixture_cpu0_ctr(m, CTR_NUMA_MISS), st[i].hit, st[i].miss);
  }
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_NUMA_INTERLEAVE), 0);
}

/* Base pages from CPU 0, each case on a machine of its own:
 * - the process's preferred_many:2-3: node 3 (numa_hit), node 2 when 3 is
 *   full (first try, against 3: numa_miss), node 0 when both are (second
 *   try, from the CPU's node: numa_hit), node 1 when 0 is full too
 *   (numa_miss);
 * - the CPU's node in the mask (preferred_many:0,2 by mbind): when node 0
 *   is full the page goes to node 2, at 30, before node 1 at 20
 *   (numa_miss), and only when 2 is full too to node 1 (second try,
 *   against node 0: numa_miss). */
START_TEST(test_preferred_many_falls_back)
{
  static const struct {
    gboolean vma;
    uint64_t nodes;
    PlaceStep st[4];
    unsigned n;
  } cases[] = {
    { FALSE, 0xc, { { -1, 3, 1, 0 }, { 3, 2, 1, 1 }, { 2, 0, 2, 1 }, { 0, 1, 2, 2 } }, 4 },
    { TRUE, 0x5, { { -1, 0, 1, 0 }, { 0, 2, 1, 1 }, { 2, 1, 1, 2 } }, 3 },
  };
  for (unsigned c = 0; c < G_N_ELEMENTS(cases); c++) {
    Machine *m = ring_machine("mem.kernel_reserved=0", "machine.mem_per_node=64M");
    Thread *t = fixture_thread(m, 1);
    mmap_rw(m, t, BASE, 64 * MB);
    if (cases[c].vma)
      mbind(m, t, BASE, 64 * MB, MPOL_PREFERRED_MANY, cases[c].nodes);
    else
      set_mempolicy(m, t, MPOL_PREFERRED_MANY, cases[c].nodes);
    check_steps(m, t, 4 * KB, cases[c].st, cases[c].n);
    machine_free(m);
  }
}
END_TEST

/* THPs: the mask's nearest node without the __GFP_THISNODE try of the CPU's
 * node; a full mask sends the THP to the CPU's node, counted a hit. */
START_TEST(test_preferred_many_thp)
{
  const char *sets[] = { "machine.nodes=4", "machine.cpus_per_node=1", RING, "thp.enabled=always",
                         "mem.kernel_reserved=0", "machine.mem_per_node=64M", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  mmap_rw(m, t, BASE, 8 * MB);
  mbind(m, t, BASE, 8 * MB, MPOL_PREFERRED_MANY, 0xc);
  static const PlaceStep st[] = { { -1, 3, 1, 0 }, { 3, 2, 1, 1 }, { 2, 0, 2, 1 } };
  check_steps(m, t, 2 * MB, st, G_N_ELEMENTS(st));
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_ALLOC), 3);
  ck_assert_uint_eq(fixture_cpu0_ctr(m, CTR_THP_FAULT_FALLBACK), 0);
  machine_free(m);
}
END_TEST

/* hugetlb (two pages per node): the pools of the mask's nodes nearest to
 * CPU 0 first, then the other pools from node 0's point of view. */
START_TEST(test_preferred_many_hugetlb)
{
  const char *sets[] = { "machine.nodes=4", "machine.cpus_per_node=1", RING, "hugetlb.nr_hugepages=8", NULL };
  Machine *m = fixture_machine("skylake", sets);
  Thread *t = fixture_thread(m, 1);
  TraceRecord map = { .type = REC_MMAP, .addr = BASE, .len = 16 * MB, .prot = PROT_R | PROT_W,
                      .flags = MAP_F_HUGETLB, .pid = 1, .tid = 1 };
  kernel_syscall(m->k, &m->cpus[0]->kc, t->mm, &map);
  mbind(m, t, BASE, 16 * MB, MPOL_PREFERRED_MANY, 0x6);
  static const int want[8] = { 1, 1, 2, 2, 0, 0, 3, 3 };
  for (unsigned i = 0; i < 8; i++)
    ck_assert_msg(write_node(m, t, BASE + i * 2 * MB) == want[i], "page %u", i);
  ck_assert_uint_eq(hugetlb_free_count(m->k->hugetlb, HPAGE_2M), 0);
  machine_free(m);
}
END_TEST

/* The setting gives every process preferred_many; a record's mask is cut
 * to the machine, and left empty it is refused (mpol_new_nodemask). */
START_TEST(test_preferred_many_setting_and_record)
{
  Machine *m = ring_machine("numa.mempolicy=preferred_many:2-3", NULL);
  Thread *t = fixture_thread(m, 1);
  ck_assert_uint_eq(t->mm->policy, MPOL_PREFERRED_MANY);
  ck_assert_uint_eq(t->mm->policy_nodes, 0xc);
  mmap_rw(m, t, BASE, 1 * MB);
  ck_assert_int_eq(write_node(m, t, BASE), 3);
  MemPolicy p;
  TraceRecord r = { .type = REC_MEMPOLICY, .arg = MPOL_PREFERRED_MANY, .arg2 = 0x30 | 0x2 };
  ck_assert(mempolicy_from_record(m->k, &r, &p));
  ck_assert_uint_eq(p.mode, MPOL_PREFERRED_MANY);
  ck_assert_uint_eq(p.nodes, 0x2);
  r.arg2 = 0x30;
  ck_assert(!mempolicy_from_record(m->k, &r, &p));
  r.arg = MPOL_PREFERRED_MANY + 1;
  r.arg2 = 0x1;
  ck_assert(!mempolicy_from_record(m->k, &r, &p));
  machine_free(m);
}
END_TEST

static Suite *mempolicy_suite(void)
{
  Suite *s = suite_create("mempolicy");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, test_syntax_each_mode);
  tcase_add_test(tc, test_syntax_ranges);
  tcase_add_test(tc, test_syntax_bad);
  tcase_add_test(tc, test_syntax_node_limit);
  tcase_add_test(tc, test_syntax_preferred_one_node);
  tcase_add_test(tc, test_syntax_balancing_flag);
  tcase_add_test(tc, test_parse_policies);
  tcase_add_test(tc, test_parse_weights);
  tcase_add_test(tc, test_bad_settings_refused);
  suite_add_tcase(s, tc);
  tc = tcase_create("place");
  tcase_add_test(tc, test_fallback_order);
  tcase_add_test(tc, test_local_falls_back_nearest_first);
  tcase_add_test(tc, test_preferred);
  tcase_add_test(tc, test_bind_stays_and_ooms);
  tcase_add_test(tc, test_setting_is_process_default);
  tcase_add_test(tc, test_setting_balancing_flag);
  tcase_add_test(tc, test_single_node);
  suite_add_tcase(s, tc);
  tc = tcase_create("interleave");
  tcase_add_test(tc, test_interleave_vma_by_index);
  tcase_add_test(tc, test_interleave_thp_index);
  tcase_add_test(tc, test_interleave_process_policy);
  tcase_add_test(tc, test_weighted_interleave);
  tcase_add_test(tc, test_interleave_miss);
  suite_add_tcase(s, tc);
  tc = tcase_create("huge");
  tcase_add_test(tc, test_thp_follows_policy);
  tcase_add_test(tc, test_hugetlb_follows_policy);
  suite_add_tcase(s, tc);
  tc = tcase_create("preferred_many");
  tcase_add_test(tc, test_mode_table);
  tcase_add_test(tc, test_syntax_preferred_many);
  tcase_add_test(tc, test_preferred_many_order);
  tcase_add_test(tc, test_preferred_many_falls_back);
  tcase_add_test(tc, test_preferred_many_thp);
  tcase_add_test(tc, test_preferred_many_hugetlb);
  tcase_add_test(tc, test_preferred_many_setting_and_record);
  suite_add_tcase(s, tc);
  tc = tcase_create("records");
  tcase_add_test(tc, test_mbind_splits_and_refuses);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(mempolicy_suite)
