/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_host_detect.c - the parsers of `mmusim host detect`: CPUID dumps,
 * Intel leaves 2, 4 and 0x18, AMD 0x80000005/6, family/model and the
 * preset chosen from them, the hypervisor, sysfs lists and selectors, a
 * sysfs tree (nodes, distances, THP), ppc64's platform, MMU and partition,
 * and the file: host values with their source, a guest's virt lines,
 * refused values left to the preset, an inherited preset's lines.
 */
#include "config.h"
#include <glib/gstdio.h>
#include <string.h>
#include "host_detect.h"
#include "testutil.h"

/* A HostInfo from the CPUID dump text. */
static HostInfo *info_of(const char *dump)
{
  GError *err = NULL;
  HostCpuid *c = host_cpuid_parse("test", dump, strlen(dump), &err);
  ck_assert_msg(c, "%s", err ? err->message : "");
  HostInfo *h = host_info_new();
  host_detect_cpuid(h, c);
  host_cpuid_free(c);
  return h;
}

static void assert_fact(const HostInfo *h, const char *key, const char *value, const char *source)
{
  const HostFact *f = host_fact_get(h, key);
  ck_assert_msg(f, "no fact %s", key);
  ck_assert_str_eq(f->value, value);
  if (source)
    ck_assert_str_eq(f->source, source);
}

#define INTEL0 "0 0 16 756e6547 6c65746e 49656e69\n"
#define AMD0 "0 0 10 68747541 444d4163 69746e65\n"

START_TEST(test_cpulist_and_selector)
{
  ck_assert_int_eq(host_cpulist_count("0-3,8,10-11"), 7);
  ck_assert_int_eq(host_cpulist_count("5"), 1);
  ck_assert_int_eq(host_cpulist_count(" \n"), 0);
  ck_assert_int_eq(host_cpulist_count("3-1"), -1);
  ck_assert_int_eq(host_cpulist_count("a"), -1);
  g_autofree char *a = host_bracketed("always [madvise] never");
  ck_assert_str_eq(a, "madvise");
  g_autofree char *b = host_bracketed("always defer [defer+madvise] madvise never");
  ck_assert_str_eq(b, "defer+madvise");
  ck_assert_ptr_null(host_bracketed("always madvise never"));
}
END_TEST

START_TEST(test_dump_parse)
{
  const char *text = "# comment\n0x1 0 000906ea 1 2 3   # trailing\n\n4 2 a b c d\n";
  g_autoptr(GError) err = NULL;
  g_autoptr(HostCpuid) c = host_cpuid_parse("t", text, strlen(text), &err);
  ck_assert_ptr_nonnull(c);
  uint32_t r[4];
  ck_assert(host_cpuid_get(c, 1, 0, r));
  ck_assert_uint_eq(r[0], 0x906ea);
  ck_assert(host_cpuid_get(c, 4, 2, r));
  ck_assert_uint_eq(r[3], 0xd);
  ck_assert(!host_cpuid_get(c, 4, 1, r));
  /* The dump of a table reads back as the same table. */
  g_autofree char *dump = host_cpuid_dump(c);
  g_autoptr(HostCpuid) again = host_cpuid_parse("t", dump, strlen(dump), NULL);
  ck_assert(host_cpuid_get(again, 4, 2, r));
  ck_assert_uint_eq(r[1], 0xb);
  /* A bad line: the origin and line number. */
  const char *bad = "1 0 1 2 3 4\n1 0 zz 2 3 4\n";
  ck_assert_ptr_null(host_cpuid_parse("dump.txt", bad, strlen(bad), &err));
  ck_assert_ptr_nonnull(strstr(err->message, "dump.txt:2:"));
}
END_TEST

/* Skylake client leaf 2: 0x63 0x03 0x76 | 0xff 0xb5 0xf0 | 0xc3 (Intel SDM
 * vol. 2A, table of leaf 2 descriptors). */
START_TEST(test_leaf2)
{
  g_autoptr(HostInfo) h = info_of(INTEL0 "1 0 000506e3 0 7ff8fbff bfebfbff\n2 0 76036301 00f0b5ff 00000000 00c30000\n");
  assert_fact(h, "tlb.l1d_4k_entries", "64", "CPUID 2 descriptor 0x03");
  assert_fact(h, "tlb.l1d_4k_ways", "4", NULL);
  assert_fact(h, "tlb.l1d_2m_entries", "32", "CPUID 2 descriptor 0x63");
  assert_fact(h, "tlb.l1d_1g_entries", "4", "CPUID 2 descriptor 0x63");
  assert_fact(h, "tlb.l1i_2m_entries", "8", NULL);
  assert_fact(h, "tlb.l1i_2m_ways", "8", NULL); /* fully associative: ways = entries */
  assert_fact(h, "tlb.l1i_4k_entries", "64", "CPUID 2 descriptor 0xb5");
  assert_fact(h, "tlb.stlb_entries", "1536", "CPUID 2 descriptor 0xc3");
  assert_fact(h, "tlb.stlb_ways", "6", NULL);
  assert_fact(h, "tlb.stlb_sizes", "4k+2m", NULL);
  assert_fact(h, "tlb.stlb_1g_entries", "16", NULL);
  assert_fact(h, "tlb.pcid", "false", "CPUID 1 ECX[17]");
  ck_assert_uint_eq(h->family, 6);
  ck_assert_uint_eq(h->model, 0x5e);
  ck_assert(!h->guest);
}
END_TEST

/* Leaf 2 with only 0xFF and no leaf 0x18: no TLB told, and the file's
 * header says so. */
START_TEST(test_no_tlb_data)
{
  g_autoptr(HostInfo) h = info_of(INTEL0 "1 0 000906ea 0 80020000 0\n2 0 0000ff01 0 0 0\n");
  for (guint i = 0; i < h->facts->len; i++) {
    const HostFact *f = g_ptr_array_index(h->facts, i);
    ck_assert_msg(!g_str_has_prefix(f->key, "tlb.") || strcmp(f->key, "tlb.pcid") == 0, "%s told", f->key);
  }
  gboolean said = FALSE;
  for (guint i = 0; i < h->notes->len; i++)
    said = said || strstr(g_ptr_array_index(h->notes, i), "tell no TLB");
  ck_assert(said);
  assert_fact(h, "tlb.pcid", "true", NULL);
}
END_TEST

/* Leaf 0x18 of a core whose L1 DTLB holds 4K, 2M and 1G in one array and
 * whose STLB holds all three; a store-only array is ignored. */
START_TEST(test_leaf18_mixed)
{
  g_autoptr(HostInfo) h = info_of(INTEL0 "1 0 000806c1 0 0 0\n"
                                  "18 0 3 000c000b 00000008 00000121\n"    /* L1 data 4K+2M+1G, 12-way x 8... */
                                  "18 1 0 00100001 00000080 00000043\n"    /* L2 unified 4K only: 16 x 128 */
                                  "18 2 0 00040008 00000008 00000043\n"    /* L2 1G: 4 x 8 */
                                  "18 3 0 00100001 00000001 00000125\n");  /* L1 store-only: ignored */
  assert_fact(h, "tlb.l1d_4k_entries", "96", "CPUID 0x18 subleaf 0");
  assert_fact(h, "tlb.l1d_4k_ways", "96", NULL); /* EDX[8]: fully associative */
  assert_fact(h, "tlb.l1_mixed", "true", NULL);
  assert_fact(h, "tlb.stlb_entries", "2048", "CPUID 0x18 subleaf 1");
  assert_fact(h, "tlb.stlb_ways", "16", NULL);
  assert_fact(h, "tlb.stlb_sizes", "4k", NULL);
  assert_fact(h, "tlb.stlb_1g_entries", "32", "CPUID 0x18 subleaf 2");
}
END_TEST

START_TEST(test_leaf4_and_freq)
{
  g_autoptr(HostInfo) h = info_of(INTEL0 "1 0 00050654 0 0 0\n"
                                  "4 0 7c004121 01c0003f 0000003f 0\n"
                                  "4 1 7c004143 03c0003f 000003ff 0\n"   /* level 2 here: 16-way, 1024 sets */
                                  "4 2 7c0fc163 0280003f 00009fff 0\n"   /* 11-way, 40960 sets: 27.5M */
                                  "4 3 0 0 0 0\n"
                                  "16 0 00000960 0 0 0\n");
  assert_fact(h, "cache.l1d_size", "32K", "CPUID 0x4 subleaf 0");
  assert_fact(h, "cache.line_bytes", "64", NULL);
  assert_fact(h, "cache.l2_size", "1M", NULL);
  assert_fact(h, "cache.l2_ways", "16", NULL);
  assert_fact(h, "cache.llc_size", "28160K", NULL);
  assert_fact(h, "cache.llc_ways", "11", NULL);
  assert_fact(h, "cpu.freq_mhz", "2400", "CPUID 0x16 EAX");
}
END_TEST

/* AMD: 0x80000005/6 as an EPYC 7763 reports them; ways code 9 ("see
 * 0x8000001D") gives no ways. */
START_TEST(test_amd)
{
  g_autoptr(HostInfo) h = info_of(AMD0 "1 0 00a00f11 0 80000000 0\n"
                                  "40000000 0 40000001 4b4d564b 564b4d56 0000004d\n"
                                  "80000001 0 0 0 0 2c000000\n"
                                  "80000005 0 ff40ff40 ff40ff40 20080140 20080140\n"
                                  "80000006 0 48002200 68004200 02006140 01009140\n");
  ck_assert_uint_eq(h->family, 0x19);
  ck_assert_uint_eq(h->model, 0x01);
  ck_assert(h->guest);
  ck_assert_str_eq(h->hypervisor, "KVMKVMKVM");
  assert_fact(h, "machine.arch", "x86_64", NULL);
  assert_fact(h, "tlb.l1d_4k_entries", "64", "CPUID 0x80000005 EBX");
  assert_fact(h, "tlb.l1d_4k_ways", "64", NULL);
  assert_fact(h, "tlb.stlb_entries", "2048", "CPUID 0x80000006 EBX");
  assert_fact(h, "tlb.stlb_ways", "8", NULL);
  assert_fact(h, "tlb.l2i_entries", "512", NULL);
  assert_fact(h, "tlb.l2i_ways", "4", NULL);
  assert_fact(h, "cache.l1d_size", "32K", NULL);
  assert_fact(h, "cache.l2_size", "512K", "CPUID 0x80000006 ECX");
  ck_assert_ptr_null(host_fact_get(h, "cache.llc_size"));
  ck_assert_ptr_null(host_fact_get(h, "tlb.l1d_2m_entries"));
  host_detect_choose_preset(h);
  ck_assert_str_eq(h->preset, "zen3");
}
END_TEST

START_TEST(test_presets)
{
  static const struct {
    const char *dump, *preset;
  } cases[] = {
    { AMD0 "1 0 00a10f11 0 0 0\n", "zen4" },     /* family 19h model 0x11 (Genoa) */
    { AMD0 "1 0 00a60f12 0 0 0\n", "zen4" },     /* model 0x61 */
    { AMD0 "1 0 00a20f12 0 0 0\n", "zen3" },     /* model 0x21 */
    { AMD0 "1 0 00b00f21 0 0 0\n", "zen4" },     /* family 1Ah */
    { AMD0 "1 0 00830f10 0 0 0\n", "zen3" },     /* family 17h */
    { INTEL0 "1 0 000206c2 0 0 0\n", "westmere" }, /* model 0x2c */
    { INTEL0 "1 0 00050654 0 0 0\n", "skylake" },  /* model 0x55 */
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(HostInfo) h = info_of(cases[i].dump);
    host_detect_choose_preset(h);
    ck_assert_msg(strcmp(h->preset, cases[i].preset) == 0, "case %u: %s, not %s", i, h->preset, cases[i].preset);
  }
  g_autoptr(HostInfo) ppc = host_info_new();
  ppc->arch = g_strdup("ppc64");
  host_detect_choose_preset(ppc);
  ck_assert_str_eq(ppc->preset, "power9-hash");
}
END_TEST

static void put_file(const char *root, const char *rel, const char *text)
{
  g_autofree char *path = g_build_filename(root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname(path);
  ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
}

/* cpu0's cache indexN in sysfs under root: level, type, size and ways. */
static void put_cache(const char *root, int index, const char *level, const char *type, const char *size,
                      const char *ways)
{
  const char *files[][2] = { { "level", level }, { "type", type }, { "size", size }, { "ways_of_associativity", ways } };
  for (unsigned i = 0; i < G_N_ELEMENTS(files); i++) {
    g_autofree char *rel = g_strdup_printf("sys/devices/system/cpu/cpu0/cache/index%d/%s", index, files[i][0]);
    g_autofree char *text = g_strconcat(files[i][1], "\n", NULL);
    put_file(root, rel, text);
  }
}

static void rm_tree(const char *path)
{
  GDir *d = g_dir_open(path, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      g_autofree char *child = g_build_filename(path, name, NULL);
      rm_tree(child);
    }
    g_dir_close(d);
  }
  g_remove(path);
}

START_TEST(test_sysfs_tree)
{
  g_autofree char *root = g_dir_make_tmp("mmusim-host-XXXXXX", NULL);
  ck_assert_ptr_nonnull(root);
  put_file(root, "sys/devices/system/cpu/online", "0-5\n");
  put_file(root, "sys/devices/system/node/online", "0-2\n");
  put_file(root, "sys/devices/system/node/node0/cpulist", "0-3\n");
  put_file(root, "sys/devices/system/node/node1/cpulist", "4-5\n");
  put_file(root, "sys/devices/system/node/node2/cpulist", "\n"); /* memory only */
  put_file(root, "sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:  8388608 kB\n");
  put_file(root, "sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:  4194304 kB\n");
  put_file(root, "sys/devices/system/node/node2/meminfo", "Node 2 MemTotal:  8388608 kB\n");
  put_file(root, "sys/devices/system/node/node0/distance", "10 20 30\n");
  put_file(root, "sys/devices/system/node/node1/distance", "20 10 30\n");
  put_file(root, "sys/devices/system/node/node2/distance", "30 30 10\n");
  put_cache(root, 0, "1", "Data", "48K", "12");
  put_file(root, "sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size", "64\n");
  put_file(root, "sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
  put_file(root, "sys/kernel/mm/transparent_hugepage/khugepaged/defrag", "0\n");
  put_file(root, "sys/hypervisor/type", "xen\n");
  g_autoptr(HostInfo) h = host_info_new();
  g_autoptr(GError) err = NULL;
  ck_assert(host_detect_sysfs(h, root, &err));
  assert_fact(h, "machine.nodes", "3", NULL);
  assert_fact(h, "machine.cpus_per_node", "2", NULL); /* the smallest node with CPUs */
  assert_fact(h, "machine.mem_per_node", "4096M", NULL);
  assert_fact(h, "numa.distances", "10,20,30;20,10,30;30,30,10", NULL);
  assert_fact(h, "cache.l1d_size", "48K", "/sys/devices/system/cpu/cpu0/cache/index0");
  assert_fact(h, "cache.l1d_ways", "12", NULL);
  assert_fact(h, "thp.enabled", "never", "/sys/kernel/mm/transparent_hugepage/enabled");
  assert_fact(h, "khugepaged.defrag", "false", NULL);
  ck_assert(h->guest);
  ck_assert_str_eq(h->hypervisor, "xen");
  /* cpu0's L3 shared by fewer CPUs than its node has (a node of several
   * CCXs): one cache is kept, and the file says the model shares it node-wide. */
  put_cache(root, 3, "3", "Unified", "32768K", "16");
  put_file(root, "sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list", "0-1\n");
  g_autoptr(HostInfo) ccx = host_info_new();
  ck_assert(host_detect_sysfs(ccx, root, &err));
  assert_fact(ccx, "cache.llc_size", "32768K", "/sys/devices/system/cpu/cpu0/cache/index3");
  gboolean said = FALSE;
  for (guint i = 0; i < ccx->notes->len; i++)
    said = said || strstr(g_ptr_array_index(ccx->notes, i), "shared by 2 CPUs (its shared_cpu_list) and its node has 4") != NULL;
  ck_assert(said);
  /* Shared by twice the node's CPUs (sub-NUMA clustering): half of it, in whole sets. */
  put_file(root, "sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list", "0-7\n");
  g_autoptr(HostInfo) snc = host_info_new();
  ck_assert(host_detect_sysfs(snc, root, &err));
  const HostFact *llc = host_fact_get(snc, "cache.llc_size");
  ck_assert_str_eq(llc->value, "16M");
  ck_assert_ptr_nonnull(strstr(llc->source, "cache in 1/2 of it"));
  rm_tree(root);
  /* A root that is not one. */
  g_autoptr(HostInfo) h2 = host_info_new();
  ck_assert(!host_detect_sysfs(h2, "/nonexistent-root", &err));
}
END_TEST

/* ppc64 from /proc/cpuinfo and the device tree under a root: a KVM
 * partition (the /hypervisor node, read through /proc/device-tree), a
 * kernel without a platform line, the preset of each POWER generation, and
 * a power8 file that keeps what power8 inherits from power7. */
START_TEST(test_ppc64)
{
  g_autofree char *root = g_dir_make_tmp("mmusim-host-XXXXXX", NULL);
  ck_assert_ptr_nonnull(root);
  put_file(root, "sys/devices/system/cpu/online", "0-3\n");
  put_file(root, "proc/cpuinfo", "processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\n"
                                 "clock\t\t: 2200.000000MHz\n\ntimebase\t: 512000000\nplatform\t: pSeries\n"
                                 "model\t\t: IBM pSeries (emulated by qemu)\nMMU\t\t: Hash\n");
  g_autofree char *hv = g_build_filename(root, "proc/device-tree/hypervisor/compatible", NULL);
  g_autofree char *hvdir = g_path_get_dirname(hv);
  ck_assert_int_eq(g_mkdir_with_parents(hvdir, 0755), 0);
  ck_assert(g_file_set_contents(hv, "linux,kvm\0", 10, NULL)); /* a property: NUL-terminated */
  g_autoptr(HostInfo) h = host_info_new();
  g_autoptr(GError) err = NULL;
  ck_assert(host_detect_sysfs(h, root, &err));
  ck_assert_str_eq(h->arch, "ppc64");
  ck_assert_uint_eq(h->family, 9);
  ck_assert(!h->radix);
  ck_assert(h->guest);
  ck_assert_str_eq(h->hypervisor, "KVM");
  assert_fact(h, "machine.arch", "ppc64", "/proc/cpuinfo cpu and platform");
  assert_fact(h, "cpu.freq_mhz", "2200", "/proc/cpuinfo clock");
  const HostFact *lpar = host_fact_get(h, "virt.lpar");
  ck_assert_ptr_nonnull(lpar);
  ck_assert_str_eq(lpar->value, "true");
  ck_assert_ptr_nonnull(strstr(lpar->source, "hypervisor KVM, from the device tree's /hypervisor node"));
  host_detect_choose_preset(h);
  ck_assert_str_eq(h->preset, "power9-hash");
  g_autofree char *text = host_detect_render(h, &err);
  ck_assert_msg(text, "%s", err ? err->message : "");
  ck_assert_ptr_nonnull(strstr(text, "\n[virt]\n# /proc/cpuinfo platform: pSeries"));
  ck_assert_ptr_null(strstr(text, "nested"));
  /* An old kernel: no platform and no MMU line; virt.lpar stays the preset's. */
  put_file(root, "proc/cpuinfo", "processor\t: 0\ncpu\t\t: POWER7 (raw), altivec supported\n");
  g_autoptr(HostInfo) old = host_info_new();
  ck_assert(host_detect_sysfs(old, root, &err));
  ck_assert_str_eq(old->arch, "ppc64");
  ck_assert_ptr_null(host_fact_get(old, "virt.lpar"));
  ck_assert(!old->guest);
  host_detect_choose_preset(old);
  ck_assert_str_eq(old->preset, "power7");
  rm_tree(root);
  /* The preset of each generation; power8's file has power7's buddy.max_order. */
  static const struct {
    unsigned gen;
    const char *preset;
  } gens[] = { { 6, "power7" }, { 7, "power7" }, { 8, "power8" }, { 9, "power9-hash" }, { 10, "power9-hash" } };
  for (unsigned i = 0; i < G_N_ELEMENTS(gens); i++) {
    g_autoptr(HostInfo) p = host_info_new();
    p->arch = g_strdup("ppc64");
    p->family = gens[i].gen;
    host_detect_choose_preset(p);
    ck_assert_msg(strcmp(p->preset, gens[i].preset) == 0, "POWER%u: %s", gens[i].gen, p->preset);
    if (gens[i].gen == 8) {
      g_autofree char *p8 = host_detect_render(p, &err);
      ck_assert_ptr_nonnull(p8);
      ck_assert_ptr_nonnull(strstr(p8, "[buddy]\n# from preset power8: the host does not tell\nmax_order = 12\n"));
      ck_assert_ptr_null(strstr(p8, "inherit"));
    }
  }
}
END_TEST

START_TEST(test_render)
{
  GError *err = NULL;
  /* Bare metal: no virt lines; host values with their source; a value the
   * registry refuses is said so and the preset's stays. */
  g_autoptr(HostInfo) h = info_of(INTEL0 "1 0 00050654 0 00020000 0\n");
  host_fact(h, "machine.nodes", "test source", "100");
  host_fact(h, "tlb.stlb_entries", "CPUID test", "2048");
  g_autofree char *text = host_detect_render(h, &err);
  ck_assert_msg(text, "%s", err ? err->message : "");
  ck_assert_ptr_null(strstr(text, "[virt]"));
  ck_assert_ptr_nonnull(strstr(text, "# CPUID test\nstlb_entries = 2048\n"));
  ck_assert_ptr_nonnull(strstr(text, "the host's machine.nodes = 100 is refused"));
  ck_assert_ptr_nonnull(strstr(text, "# from preset skylake: the host does not tell\nnodes = 1\n"));
  ck_assert_ptr_nonnull(strstr(text, "# from preset skylake: the host does not tell\npde_entries = 32\n"));
  /* A guest: virt.nested, and the host page size left out. */
  g_autoptr(HostInfo) g = info_of(INTEL0 "1 0 00050654 0 80000000 0\n");
  g_autofree char *gtext = host_detect_render(g, &err);
  ck_assert_ptr_nonnull(gtext);
  ck_assert_ptr_nonnull(strstr(gtext, "[virt]\n"));
  ck_assert_ptr_nonnull(strstr(gtext, "\nnested = true\n"));
  ck_assert_ptr_nonnull(strstr(gtext, "virt.host_page_size is left out"));
  ck_assert_ptr_null(strstr(gtext, "\nhost_page_size ="));
}
END_TEST

/* Memory is rounded down to whole buddy blocks (4M with 4K pages and max_order 10). */
START_TEST(test_memory_rounded)
{
  g_autoptr(HostInfo) h = info_of(INTEL0 "1 0 00050654 0 0 0\n");
  host_fact(h, "machine.mem_per_node", "meminfo", "7513M");
  g_autofree char *text = host_detect_render(h, NULL);
  ck_assert_ptr_nonnull(strstr(text, "mem_per_node = 7512M\n"));
}
END_TEST

static Suite *host_detect_suite(void)
{
  Suite *s = suite_create("host_detect");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, test_cpulist_and_selector);
  tcase_add_test(tc, test_dump_parse);
  tcase_add_test(tc, test_leaf2);
  tcase_add_test(tc, test_no_tlb_data);
  tcase_add_test(tc, test_leaf18_mixed);
  tcase_add_test(tc, test_leaf4_and_freq);
  tcase_add_test(tc, test_amd);
  tcase_add_test(tc, test_presets);
  tcase_add_test(tc, test_sysfs_tree);
  tcase_add_test(tc, test_ppc64);
  tcase_add_test(tc, test_render);
  tcase_add_test(tc, test_memory_rounded);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(host_detect_suite)
