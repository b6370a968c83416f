/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_detect.c - `mmusim host detect`: a machine file for the host.
 *
 * Read from the host (each value written with its source):
 *   CPUID (x86): vendor, family/model and brand (leaves 0, 1, 0x80000002-4);
 *     Intel TLBs from leaf 0x18 (deterministic address translation
 *     parameters), else from the TLB descriptors of leaf 2; Intel caches
 *     from leaf 4; base clock from leaf 0x16; AMD L1/L2 TLBs and caches from
 *     0x80000005/0x80000006, caches from 0x8000001D where present; address
 *     sizes (0x80000008), 1G pages (0x80000001 EDX[26]), PCID (1 ECX[17]),
 *     the hypervisor bit (1 ECX[31]) and its signature (0x40000000).
 *     Layouts: Intel SDM vol. 2A, CPUID; AMD APM vol. 3, appendix E.
 *   sysfs: caches (/sys/devices/system/cpu/cpu0/cache, where CPUID told
 *     none), NUMA nodes, their CPUs, memory and SLIT distances
 *     (/sys/devices/system/node), THP and khugepaged tunables
 *     (/sys/kernel/mm/transparent_hugepage), /sys/hypervisor/type; the base
 *     page size (sysconf, or KernelPageSize in ROOT/proc/self/smaps under
 *     a --root).
 *   the kernel log (/dev/kmsg): the hypervisor the kernel detected
 *     (arch/x86/kernel/cpu/hypervisor.c logs "Hypervisor detected: NAME"),
 *     which under PVM is not CPUID's: PVM shadows the guest's page tables
 *     (virt.shadow), and CPUID, which it does not trap, names the
 *     hypervisor below it.
 *   ppc64 (/proc/cpuinfo and the device tree, under the root too): the
 *     POWER generation (the preset), the MMU the kernel runs (hash or
 *     radix, which is not modelled) and whether it runs in a logical
 *     partition (virt.lpar: platform pSeries or PowerNV), the hypervisor.
 * Not told by any host (walk caches, latencies, DRAM, walk overheads, core
 * widths): the nearest preset's values, each line marked "from preset".
 * Left out: TLBs of level 0 and of Atom cores in leaf 2 (no setting takes
 * them), hybrid cores (the CPU detect runs on is described), per-node
 * differences (the model's nodes are alike: the smallest node is written).
 */
#include "config.h"
#include "host_detect.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "errors.h"
#include "outfile.h"
#include "preset.h"
#include "settings.h"

/* ---- facts ----------------------------------------------------------------- */

static void fact_free(gpointer p)
{
  HostFact *f = p;
  g_free(f->key);
  g_free(f->value);
  g_free(f->source);
  g_free(f);
}

HostInfo *host_info_new(void)
{
  HostInfo *h = g_new0(HostInfo, 1);
  h->facts = g_ptr_array_new_with_free_func(fact_free);
  h->notes = g_ptr_array_new_with_free_func(g_free);
  return h;
}

void host_info_free(HostInfo *h)
{
  if (!h)
    return;
  g_ptr_array_free(h->facts, TRUE);
  g_ptr_array_free(h->notes, TRUE);
  g_free(h->arch);
  g_free(h->vendor);
  g_free(h->brand);
  g_free(h->kernel_hypervisor);
  g_free(h->hypervisor);
  g_free(h->preset);
  g_free(h->preset_why);
  g_free(h);
}

const HostFact *host_fact_get(const HostInfo *h, const char *key)
{
  for (guint i = 0; i < h->facts->len; i++) {
    const HostFact *f = g_ptr_array_index(h->facts, i);
    if (strcmp(f->key, key) == 0)
      return f;
  }
  return NULL;
}

void host_fact(HostInfo *h, const char *key, const char *source, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *value = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  HostFact *f = (HostFact *)host_fact_get(h, key);
  if (!f) {
    f = g_new0(HostFact, 1);
    f->key = g_strdup(key);
    g_ptr_array_add(h->facts, f);
  }
  g_free(f->value);
  g_free(f->source);
  f->value = value;
  f->source = g_strdup(source);
}

static void note(HostInfo *h, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void note(HostInfo *h, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_ptr_array_add(h->notes, g_strdup_vprintf(fmt, ap));
  va_end(ap);
}

/* ---- CPUID ----------------------------------------------------------------- */

static unsigned bits(uint32_t v, unsigned hi, unsigned lo)
{
  return (v >> lo) & ((hi - lo == 31) ? 0xffffffffu : ((1u << (hi - lo + 1)) - 1));
}

static char *regs_text(const uint32_t *regs, int n)
{
  char s[49] = { 0 };
  memcpy(s, regs, (size_t)n * 4);
  s[n * 4] = '\0';
  for (int i = 0; i < n * 4; i++)
    if (s[i] && !g_ascii_isprint(s[i]))
      s[i] = '?';
  return g_strdup(g_strstrip(s));
}

/* A TLB array: entries and ways (ways == entries: fully associative). */
static void tlb_fact(HostInfo *h, const char *prefix, unsigned entries, unsigned ways, const char *source)
{
  g_autofree char *ek = g_strdup_printf("tlb.%s_entries", prefix);
  g_autofree char *wk = g_strdup_printf("tlb.%s_ways", prefix);
  host_fact(h, ek, source, "%u", entries);
  if (ways)
    host_fact(h, wk, source, "%u", ways);
}

/* Intel leaf 2 TLB descriptors (Intel SDM vol. 2A, CPUID, table "Encoding of
 * CPUID Leaf 2 Descriptors"; the same entries as Linux 6.12
 * arch/x86/kernel/cpu/intel.c intel_tlb_table).  Only those of the arrays
 * the model has: level-0, uTLB and Atom second-level DTLB descriptors are
 * left out.  ways 0: fully associative. */
typedef enum { L2_ITLB_4K, L2_ITLB_2M, L2_DTLB_4K, L2_DTLB_2M, L2_STLB_4K_2M, L2_STLB_4K } Leaf2Kind;
typedef struct {
  uint8_t desc;
  Leaf2Kind kind;
  uint16_t entries, ways;
  uint8_t entries_1g, ways_1g; /* a second array for 1G pages, 0 if none */
} Leaf2Tlb;

static const Leaf2Tlb leaf2_tlbs[] = {
  { 0x01, L2_ITLB_4K, 32, 4, 0, 0 },
  { 0x03, L2_DTLB_4K, 64, 4, 0, 0 },
  { 0x04, L2_DTLB_2M, 8, 4, 0, 0 },
  { 0x55, L2_ITLB_2M, 7, 0, 0, 0 },
  { 0x5a, L2_DTLB_2M, 32, 4, 0, 0 },
  { 0x61, L2_ITLB_4K, 48, 0, 0, 0 },
  { 0x63, L2_DTLB_2M, 32, 4, 4, 4 },
  { 0x76, L2_ITLB_2M, 8, 0, 0, 0 },
  { 0xa0, L2_DTLB_4K, 32, 0, 0, 0 },
  { 0xb0, L2_ITLB_4K, 128, 4, 0, 0 },
  { 0xb1, L2_ITLB_2M, 8, 4, 0, 0 },
  { 0xb2, L2_ITLB_4K, 64, 4, 0, 0 },
  { 0xb3, L2_DTLB_4K, 128, 4, 0, 0 },
  { 0xb5, L2_ITLB_4K, 64, 8, 0, 0 },
  { 0xb6, L2_ITLB_4K, 128, 8, 0, 0 },
  { 0xc1, L2_STLB_4K_2M, 1024, 8, 0, 0 },
  { 0xc3, L2_STLB_4K_2M, 1536, 6, 16, 4 },
  { 0xc4, L2_DTLB_2M, 32, 4, 0, 0 },
  { 0xca, L2_STLB_4K, 512, 4, 0, 0 },
};

/* Leaf 2: TRUE if any descriptor told a TLB. */
static gboolean intel_leaf2(HostInfo *h, const HostCpuid *c)
{
  uint32_t r[4];
  if (!host_cpuid_get(c, 2, 0, r))
    return FALSE;
  gboolean told = FALSE;
  for (int reg = 0; reg < 4; reg++) {
    if (r[reg] >> 31)
      continue; /* bit 31 set: the register holds no descriptors */
    for (int byte = reg == 0 ? 1 : 0; byte < 4; byte++) {
      uint8_t d = (uint8_t)(r[reg] >> (8 * byte));
      for (unsigned i = 0; i < G_N_ELEMENTS(leaf2_tlbs); i++) {
        const Leaf2Tlb *t = &leaf2_tlbs[i];
        if (t->desc != d)
          continue;
        g_autofree char *src = g_strdup_printf("CPUID 2 descriptor 0x%02x", d);
        unsigned ways = t->ways ? t->ways : t->entries;
        switch (t->kind) {
        case L2_ITLB_4K: tlb_fact(h, "l1i_4k", t->entries, ways, src); break;
        case L2_ITLB_2M: tlb_fact(h, "l1i_2m", t->entries, ways, src); break;
        case L2_DTLB_4K: tlb_fact(h, "l1d_4k", t->entries, ways, src); break;
        case L2_DTLB_2M: tlb_fact(h, "l1d_2m", t->entries, ways, src); break;
        case L2_STLB_4K_2M:
        case L2_STLB_4K:
          tlb_fact(h, "stlb", t->entries, ways, src);
          host_fact(h, "tlb.stlb_sizes", src, "%s", t->kind == L2_STLB_4K ? "4k" : "4k+2m");
          break;
        }
        if (t->entries_1g)
          tlb_fact(h, t->kind == L2_DTLB_2M ? "l1d_1g" : "stlb_1g", t->entries_1g, t->ways_1g, src);
        told = TRUE;
      }
    }
  }
  return told;
}

/* Leaf 0x18, one subleaf a TLB array: EDX[4:0] type (1 data, 2 instruction,
 * 3 unified, 4 load only, 5 store only), EDX[7:5] level, EDX[8] fully
 * associative; EBX[0..3] 4K, 2M, 4M, 1G pages; EBX[31:16] ways; ECX sets.
 * TRUE if any subleaf told a TLB. */
static gboolean intel_leaf18(HostInfo *h, const HostCpuid *c)
{
  uint32_t r[4];
  if (!host_cpuid_get(c, 0x18, 0, r))
    return FALSE;
  unsigned max = r[0];
  gboolean told = FALSE;
  for (unsigned sub = 0; sub <= max && sub < 32; sub++) {
    if (!host_cpuid_get(c, 0x18, sub, r))
      continue;
    unsigned type = bits(r[3], 4, 0), level = bits(r[3], 7, 5);
    gboolean full = bits(r[3], 8, 8);
    gboolean p4k = r[1] & 1, p2m = (r[1] >> 1) & 1, p1g = (r[1] >> 3) & 1;
    unsigned ways = bits(r[1], 31, 16), sets = r[2];
    unsigned entries = ways * sets;
    if (type == 0 || type == 5 || entries == 0)
      continue; /* null, or store-only (the model's L1 DTLB is the load side) */
    if (full)
      ways = entries;
    g_autofree char *src = g_strdup_printf("CPUID 0x18 subleaf %u", sub);
    told = TRUE;
    if (level == 1 && type == 2) {
      tlb_fact(h, p4k ? "l1i_4k" : "l1i_2m", entries, ways, src);
      if (p4k && p2m)
        host_fact(h, "tlb.l1i_2m_entries", src, "0"); /* 2M in the 4K array */
    } else if (level == 1) {
      if (p4k) {
        tlb_fact(h, "l1d_4k", entries, ways, src);
        if (p2m || p1g)
          host_fact(h, "tlb.l1_mixed", src, "true");
      } else if (p2m) {
        tlb_fact(h, "l1d_2m", entries, ways, src);
      } else if (p1g) {
        tlb_fact(h, "l1d_1g", entries, ways, src);
      }
    } else if (level == 2 && type == 2) {
      host_fact(h, "tlb.l2i_entries", src, "%u", entries);
      host_fact(h, "tlb.l2i_ways", src, "%u", ways);
    } else if (level == 2) {
      if (p4k) {
        tlb_fact(h, "stlb", entries, ways, src);
        host_fact(h, "tlb.stlb_sizes", src, "%s", p2m && p1g ? "4k+2m+1g" : p2m ? "4k+2m" : "4k");
      } else if (p1g) {
        tlb_fact(h, "stlb_1g", entries, ways, src);
      }
    }
  }
  return told;
}

/* A deterministic cache leaf (Intel leaf 4, AMD 0x8000001D: the same
 * layout): EAX[4:0] type (1 data, 2 instruction, 3 unified), EAX[7:5]
 * level; EBX[31:22] ways - 1, [21:12] partitions - 1, [11:0] line - 1;
 * ECX sets - 1.  TRUE if any subleaf told a cache. */
static gboolean cache_leaf(HostInfo *h, const HostCpuid *c, uint32_t leaf)
{
  uint32_t r[4];
  gboolean told = FALSE;
  unsigned top = 0;
  for (unsigned sub = 0; sub < 16 && host_cpuid_get(c, leaf, sub, r); sub++) {
    unsigned type = bits(r[0], 4, 0), level = bits(r[0], 7, 5);
    if (type == 0)
      break;
    unsigned ways = bits(r[1], 31, 22) + 1, parts = bits(r[1], 21, 12) + 1, line = bits(r[1], 11, 0) + 1;
    uint64_t size = (uint64_t)ways * parts * line * ((uint64_t)r[2] + 1);
    g_autofree char *src = g_strdup_printf("CPUID 0x%x subleaf %u", leaf, sub);
    const char *name = NULL;
    if (level == 1 && type == 1)
      name = "l1d";
    else if (level == 1 && type == 2)
      name = "l1i";
    else if (level == 2 && type == 3)
      name = "l2";
    else if (level >= 3 && type == 3 && level >= top) {
      name = "llc";
      top = level;
    }
    if (!name)
      continue;
    g_autofree char *sk = g_strdup_printf("cache.%s_size", name);
    g_autofree char *wk = g_strdup_printf("cache.%s_ways", name);
    g_autofree char *sz = settings_format_size(size);
    host_fact(h, sk, src, "%s", sz);
    host_fact(h, wk, src, "%u", ways);
    if (level == 1 && type == 1)
      host_fact(h, "cache.line_bytes", src, "%u", line);
    told = TRUE;
  }
  return told;
}

/* AMD associativity code of 0x80000006 (AMD APM vol. 3, CPUID Fn8000_0006):
 * ways for entries, 0 if the code gives none (0: disabled, 9: see
 * 0x8000001D, reserved codes). */
static unsigned amd_assoc(unsigned code, unsigned entries)
{
  static const unsigned ways[16] = { 0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0 };
  return code == 0xf ? entries : ways[code & 0xf];
}

static void amd_tlbs_and_caches(HostInfo *h, const HostCpuid *c)
{
  uint32_t r[4];
  if (host_cpuid_get(c, 0x80000005, 0, r)) {
    /* L1 TLBs, 4K pages in EBX: [31:24] DTLB ways (0xFF: fully), [23:16]
     * DTLB entries, [15:8] ITLB ways, [7:0] ITLB entries.  EAX: the same
     * for 2M pages. */
    const char *src = "CPUID 0x80000005 EBX";
    unsigned de = bits(r[1], 23, 16), dw = bits(r[1], 31, 24), ie = bits(r[1], 7, 0), iw = bits(r[1], 15, 8);
    if (de)
      tlb_fact(h, "l1d_4k", de, dw == 0xff ? de : dw, src);
    if (ie)
      tlb_fact(h, "l1i_4k", ie, iw == 0xff ? ie : iw, src);
    if (bits(r[0], 23, 16))
      note(h, "CPUID 0x80000005 EAX: L1 DTLB %u entries and L1 ITLB %u entries for 2M pages (whether they are the 4K "
              "arrays is the preset's tlb.l1_mixed)", bits(r[0], 23, 16), bits(r[0], 7, 0));
    /* L1 caches: ECX data, EDX instruction: [31:24] KB, [23:16] ways, [7:0] line bytes. */
    if (bits(r[2], 31, 24)) {
      g_autofree char *sz = settings_format_size((uint64_t)bits(r[2], 31, 24) << 10);
      host_fact(h, "cache.l1d_size", "CPUID 0x80000005 ECX", "%s", sz);
      host_fact(h, "cache.l1d_ways", "CPUID 0x80000005 ECX", "%u", bits(r[2], 23, 16));
      host_fact(h, "cache.line_bytes", "CPUID 0x80000005 ECX", "%u", bits(r[2], 7, 0));
    }
    if (bits(r[3], 31, 24)) {
      g_autofree char *sz = settings_format_size((uint64_t)bits(r[3], 31, 24) << 10);
      host_fact(h, "cache.l1i_size", "CPUID 0x80000005 EDX", "%s", sz);
      host_fact(h, "cache.l1i_ways", "CPUID 0x80000005 EDX", "%u", bits(r[3], 23, 16));
    }
  }
  if (host_cpuid_get(c, 0x80000006, 0, r)) {
    /* L2 TLBs, 4K pages in EBX: [31:28] DTLB ways code, [27:16] DTLB
     * entries, [15:12] ITLB ways code, [11:0] ITLB entries. */
    const char *src = "CPUID 0x80000006 EBX";
    unsigned de = bits(r[1], 27, 16), ie = bits(r[1], 11, 0);
    unsigned dw = amd_assoc(bits(r[1], 31, 28), de), iw = amd_assoc(bits(r[1], 15, 12), ie);
    if (de) {
      host_fact(h, "tlb.stlb_entries", src, "%u", de);
      if (dw)
        host_fact(h, "tlb.stlb_ways", src, "%u", dw);
    }
    if (ie) {
      host_fact(h, "tlb.l2i_entries", src, "%u", ie);
      if (iw)
        host_fact(h, "tlb.l2i_ways", src, "%u", iw);
    }
    /* L2 cache, ECX: [31:16] KB, [15:12] ways code, [7:0] line bytes;
     * L3, EDX: [31:18] size in 512 KB units, [15:12] ways code. */
    unsigned l2kb = bits(r[2], 31, 16), l2w = amd_assoc(bits(r[2], 15, 12), 0);
    if (l2kb && l2w) {
      g_autofree char *sz = settings_format_size((uint64_t)l2kb << 10);
      host_fact(h, "cache.l2_size", "CPUID 0x80000006 ECX", "%s", sz);
      host_fact(h, "cache.l2_ways", "CPUID 0x80000006 ECX", "%u", l2w);
    }
    unsigned l3 = bits(r[3], 31, 18), l3w = amd_assoc(bits(r[3], 15, 12), 0);
    if (l3 && l3w) {
      g_autofree char *l3sz = settings_format_size((uint64_t)l3 * 512 << 10);
      host_fact(h, "cache.llc_size", "CPUID 0x80000006 EDX", "%s", l3sz);
      host_fact(h, "cache.llc_ways", "CPUID 0x80000006 EDX", "%u", l3w);
    }
  }
  /* 0x8000001D, where present, gives every cache level exactly (ways the
   * codes of 0x80000006 cannot say): it wins. */
  cache_leaf(h, c, 0x8000001d);
  if (!host_fact_get(h, "cache.llc_size") && host_cpuid_get(c, 0x80000006, 0, r) && bits(r[3], 31, 18)) {
    g_autofree char *l3sz = settings_format_size((uint64_t)bits(r[3], 31, 18) * 512 << 10);
    note(h, "CPUID 0x80000006 EDX: an L3 of %s whose ways it does not give (code %u) and 0x8000001D is absent: "
            "the preset's LLC is kept%s", l3sz, bits(r[3], 15, 12),
         h->family >= 0x17 ? " (on family 17h and later this is the package's L3, every CCX's together, not the "
                             "one a core shares: Linux 6.12 cacheinfo_amd_init_llc_id takes that from 0x8000001D)" : "");
  }
}

void host_detect_cpuid(HostInfo *h, const HostCpuid *c)
{
  uint32_t r[4], v[4];
  if (!c || !host_cpuid_get(c, 0, 0, r))
    return;
  /* CPUID answers: an x86 host (32-bit-only processors are not modelled). */
  g_free(h->arch);
  h->arch = g_strdup("x86_64");
  uint32_t vend[3] = { r[1], r[3], r[2] };
  g_free(h->vendor);
  h->vendor = regs_text(vend, 3);
  if (host_cpuid_get(c, 1, 0, r)) {
    h->family = bits(r[0], 11, 8);
    h->model = bits(r[0], 7, 4);
    if (h->family == 0xf)
      h->family += bits(r[0], 27, 20);
    if (h->family == 6 || h->family >= 0xf)
      h->model |= bits(r[0], 19, 16) << 4;
    /* Linux uses PCIDs since 4.14 where CPUID.1:ECX[17] is set (arch/x86/mm/tlb.c). */
    host_fact(h, "tlb.pcid", "CPUID 1 ECX[17]", "%s", (r[2] >> 17) & 1 ? "true" : "false");
    if ((r[2] >> 31) & 1) {
      h->guest = TRUE;
      if (host_cpuid_get(c, 0x40000000, 0, v)) {
        uint32_t sig[3] = { v[1], v[2], v[3] };
        g_free(h->hypervisor);
        h->hypervisor = regs_text(sig, 3);
      }
      note(h, "CPUID 1 ECX[31]: a hypervisor is present%s%s%s; the CPUID figures below are what it reports, "
              "which may not be the hardware's", h->hypervisor ? " (CPUID 0x40000000: \"" : "",
           h->hypervisor ? h->hypervisor : "", h->hypervisor ? "\")" : "");
    }
  }
  if (host_cpuid_get(c, 0x80000002, 0, r) && host_cpuid_get(c, 0x80000003, 0, v)) {
    uint32_t b[12] = { r[0], r[1], r[2], r[3], v[0], v[1], v[2], v[3], 0, 0, 0, 0 };
    if (host_cpuid_get(c, 0x80000004, 0, r))
      memcpy(b + 8, r, sizeof r);
    g_free(h->brand);
    h->brand = regs_text(b, 12);
  }
  if (host_cpuid_get(c, 0x80000001, 0, r)) {
    if ((r[3] >> 29) & 1) {
      host_fact(h, "machine.arch", "CPUID 0x80000001 EDX[29] (long mode)", "x86_64");
    }
    note(h, "CPUID 0x80000001 EDX[26]: 1G pages %s", (r[3] >> 26) & 1 ? "supported" : "not supported");
  }
  if (host_cpuid_get(c, 0x80000008, 0, r))
    note(h, "CPUID 0x80000008 EAX: %u physical and %u linear address bits%s", bits(r[0], 7, 0), bits(r[0], 15, 8),
         bits(r[0], 15, 8) >= 57 ? " (LA57: 5-level paging possible; whether the kernel uses it is not told)" : "");
  gboolean amd = strcmp(h->vendor, "AuthenticAMD") == 0 || strcmp(h->vendor, "HygonGenuine") == 0;
  if (amd) {
    amd_tlbs_and_caches(h, c);
    return;
  }
  /* Intel and others: leaf 0x18 when it tells, else the descriptors of leaf 2. */
  if (!intel_leaf18(h, c) && !intel_leaf2(h, c))
    note(h, "CPUID leaves 2 and 0x18 tell no TLB: every tlb.* value is the preset's");
  cache_leaf(h, c, 4);
  /* Leaf 0x16 EAX[15:0]: the base clock in MHz (0: not told). */
  if (host_cpuid_get(c, 0x16, 0, r) && bits(r[0], 15, 0))
    host_fact(h, "cpu.freq_mhz", "CPUID 0x16 EAX", "%u", bits(r[0], 15, 0));
}

/* ---- sysfs ----------------------------------------------------------------- */

/* The numbers of a sysfs list ("0-3,8,10-11", cpulist and node/online
 * alike); NULL if malformed.  Each is at most 1 << 20. */
static GArray *parse_list(const char *list)
{
  g_autofree char *copy = g_strstrip(g_strdup(list));
  GArray *ids = g_array_new(FALSE, FALSE, sizeof(int));
  if (!*copy)
    return ids;
  g_auto(GStrv) parts = g_strsplit(copy, ",", -1);
  for (int i = 0; parts[i]; i++) {
    guint64 a, b;
    char *dash = strchr(parts[i], '-');
    if (dash)
      *dash = '\0';
    b = a = 0;
    if (!g_ascii_string_to_unsigned(g_strstrip(parts[i]), 10, 0, 1 << 20, &a, NULL) ||
        (dash && !g_ascii_string_to_unsigned(g_strstrip(dash + 1), 10, a, 1 << 20, &b, NULL))) {
      g_array_free(ids, TRUE);
      return NULL;
    }
    for (guint64 id = a; id <= (dash ? b : a); id++) {
      int v = (int)id;
      g_array_append_val(ids, v);
    }
  }
  return ids;
}

int host_cpulist_count(const char *list)
{
  GArray *ids = parse_list(list);
  int n = ids ? (int)ids->len : -1;
  if (ids)
    g_array_free(ids, TRUE);
  return n;
}

char *host_bracketed(const char *text)
{
  const char *open = strchr(text, '[');
  const char *close = open ? strchr(open, ']') : NULL;
  return close && close > open + 1 ? g_strndup(open + 1, (gsize)(close - open - 1)) : NULL;
}

/* The first line of root/rel, stripped; NULL if it cannot be read. */
static char *read_line(const char *root, const char *rel)
{
  g_autofree char *path = g_build_filename(root, rel, NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return NULL;
  char *nl = strchr(text, '\n');
  if (nl)
    *nl = '\0';
  return g_strdup(g_strstrip(text));
}

/* Hypervisors whose guests' page tables are always shadowed (the hardware
 * walks the hypervisor's copy, virt.shadow), by the name the guest kernel
 * logs: PVM (arch/x86/kernel/pvm.c of its patches: x86_hyper_pvm, "PVM"). */
static const char *const shadow_hypervisors[] = { "PVM" };

/* At most this much of the kernel log is read: the line sought is among the
 * first of a boot. */
#define KMSG_MAX_BYTES (4u << 20)

/* The kernel log's "Hypervisor detected: NAME" (root/dev/kmsg: the kernel's
 * records, read without waiting for new ones, or a file of such lines under
 * a --root).  Without permission (CAP_SYSLOG with dmesg_restrict), or once
 * the boot's lines have been overwritten, nothing is learnt, and the note
 * says so. */
static void kernel_log(HostInfo *h, const char *root)
{
  g_autofree char *path = g_build_filename(root, "dev/kmsg", NULL);
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    note(h, "/dev/kmsg: %s: the hypervisor the kernel detected is not known (a PVM guest needs virt.shadow = true by "
            "hand, doc/host.md)", g_strerror(errno));
    return;
  }
  GString *log = g_string_new(NULL);
  char buf[8192]; /* /dev/kmsg hands one record per read, and refuses a buffer too small for it */
  for (;;) {
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EPIPE)
      continue; /* a record was overwritten while reading: the next one follows */
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0 || log->len + (gsize)got > KMSG_MAX_BYTES)
      break;
    g_string_append_len(log, buf, got);
    if (buf[got - 1] != '\n')
      g_string_append_c(log, '\n');
  }
  close(fd);
  const char *key = "Hypervisor detected: ";
  const char *at = strstr(log->str, key);
  if (at) {
    at += strlen(key);
    h->kernel_hypervisor = g_strndup(at, strcspn(at, "\r\n"));
    g_strstrip(h->kernel_hypervisor);
    for (unsigned i = 0; i < G_N_ELEMENTS(shadow_hypervisors); i++)
      if (strcmp(h->kernel_hypervisor, shadow_hypervisors[i]) == 0)
        h->shadow = TRUE;
    h->guest = TRUE;
    note(h, "the kernel log: \"Hypervisor detected: %s\"%s", h->kernel_hypervisor,
         h->shadow ? ", a hypervisor that keeps shadow page tables of the guest's" : "");
  } else {
    note(h, "/dev/kmsg holds no \"Hypervisor detected\" line (bare metal, or the boot's lines are gone)");
  }
  g_string_free(log, TRUE);
}

/* The number after "key" in root/rel ("Node 0 MemTotal:   32768 kB"); FALSE if none. */
static gboolean read_field(const char *root, const char *rel, const char *key, guint64 *out)
{
  g_autofree char *path = g_build_filename(root, rel, NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return FALSE;
  const char *p = strstr(text, key);
  if (!p)
    return FALSE;
  p += strlen(key);
  while (*p == ' ' || *p == '\t')
    p++;
  char *end;
  guint64 v = g_ascii_strtoull(p, &end, 10);
  if (end == p)
    return FALSE;
  *out = v;
  return TRUE;
}

static void sysfs_caches(HostInfo *h, const char *root)
{
  if (host_fact_get(h, "cache.l1d_size")) {
    note(h, "caches: from CPUID (their source); of /sys/devices/system/cpu/cpu0/cache only the last level's "
            "shared_cpu_list is read");
    return;
  }
  int found = 0;
  unsigned top = 0;
  for (int i = 0; i < 16; i++) {
    g_autofree char *dir = g_strdup_printf("sys/devices/system/cpu/cpu0/cache/index%d", i);
    g_autofree char *lrel = g_strconcat(dir, "/level", NULL), *trel = g_strconcat(dir, "/type", NULL);
    g_autofree char *srel = g_strconcat(dir, "/size", NULL), *wrel = g_strconcat(dir, "/ways_of_associativity", NULL);
    g_autofree char *linerel = g_strconcat(dir, "/coherency_line_size", NULL);
    g_autofree char *level = read_line(root, lrel), *type = read_line(root, trel), *size = read_line(root, srel);
    g_autofree char *ways = read_line(root, wrel), *line = read_line(root, linerel);
    if (!level || !type || !size || !ways)
      continue;
    found++;
    unsigned lv = (unsigned)g_ascii_strtoull(level, NULL, 10);
    const char *name = NULL;
    if (lv == 1 && strcmp(type, "Data") == 0)
      name = "l1d";
    else if (lv == 1 && strcmp(type, "Instruction") == 0)
      name = "l1i";
    else if (lv == 2 && strcmp(type, "Unified") == 0)
      name = "l2";
    else if (lv >= 3 && lv >= top && strcmp(type, "Unified") == 0) {
      name = "llc";
      top = lv;
    }
    if (!name)
      continue;
    g_autofree char *src = g_strdup_printf("/%s", dir);
    g_autofree char *sk = g_strdup_printf("cache.%s_size", name), *wk = g_strdup_printf("cache.%s_ways", name);
    host_fact(h, sk, src, "%s", size);
    host_fact(h, wk, src, "%s", ways);
    if (line && strcmp(name, "l1d") == 0)
      host_fact(h, "cache.line_bytes", src, "%s", line);
  }
  if (!found)
    note(h, "/sys/devices/system/cpu/cpu0/cache: absent, and CPUID told no cache: every cache.* size is the preset's");
}

static void sysfs_nodes(HostInfo *h, const char *root)
{
  g_autofree char *online = read_line(root, "sys/devices/system/node/online");
  if (!online) {
    /* A kernel without NUMA: one node of every online CPU and all memory. */
    g_autofree char *cpus = read_line(root, "sys/devices/system/cpu/online");
    int n = cpus ? host_cpulist_count(cpus) : -1;
    guint64 kb;
    host_fact(h, "machine.nodes", "/sys/devices/system/node absent (no NUMA)", "1");
    if (n > 0)
      host_fact(h, "machine.cpus_per_node", "/sys/devices/system/cpu/online", "%d", n);
    if (read_field(root, "proc/meminfo", "MemTotal:", &kb))
      host_fact(h, "machine.mem_per_node", "/proc/meminfo MemTotal", "%" G_GUINT64_FORMAT "M", kb / 1024);
    return;
  }
  /* Online nodes: the list "0-1"; numbered from 0 with no gap in the model. */
  GArray *ids = parse_list(online);
  if (!ids) {
    note(h, "/sys/devices/system/node/online: '%s' is not a list of nodes: the preset's nodes are kept", online);
    return;
  }
  int nodes = (int)ids->len, min_cpus = 0;
  guint64 min_kb = 0;
  GString *cpus_seen = g_string_new(NULL), *dist = g_string_new(NULL);
  gboolean dist_ok = TRUE;
  for (int i = 0; i < nodes; i++) {
    int id = g_array_index(ids, int, i);
    g_autofree char *crel = g_strdup_printf("sys/devices/system/node/node%d/cpulist", id);
    g_autofree char *mrel = g_strdup_printf("sys/devices/system/node/node%d/meminfo", id);
    g_autofree char *drel = g_strdup_printf("sys/devices/system/node/node%d/distance", id);
    g_autofree char *cl = read_line(root, crel);
    int n = cl ? host_cpulist_count(cl) : 0;
    g_string_append_printf(cpus_seen, "%snode%d %d", i ? ", " : "", id, n);
    if (n > 0 && (min_cpus == 0 || n < min_cpus))
      min_cpus = n;
    g_autofree char *key = g_strdup_printf("Node %d MemTotal:", id);
    guint64 kb;
    if (read_field(root, mrel, key, &kb) && kb > 0 && (min_kb == 0 || kb < min_kb))
      min_kb = kb;
    g_autofree char *d = read_line(root, drel);
    g_auto(GStrv) row = d ? g_strsplit_set(d, " \t", -1) : NULL;
    int cols = 0;
    if (i)
      g_string_append_c(dist, ';');
    for (int k = 0; row && row[k]; k++)
      if (*row[k])
        g_string_append_printf(dist, "%s%s", cols++ ? "," : "", row[k]);
    if (cols != nodes)
      dist_ok = FALSE;
  }
  host_fact(h, "machine.nodes", "/sys/devices/system/node/online", "%d", nodes);
  if (min_cpus > 0)
    host_fact(h, "machine.cpus_per_node", "/sys/devices/system/node/node*/cpulist (the smallest node with CPUs)", "%d",
              min_cpus);
  note(h, "CPUs per node: %s", cpus_seen->str);
  if (min_kb > 0)
    host_fact(h, "machine.mem_per_node", "/sys/devices/system/node/node*/meminfo MemTotal (the smallest node)",
              "%" G_GUINT64_FORMAT "M", min_kb / 1024);
  if (nodes > 1 && dist_ok)
    host_fact(h, "numa.distances", "/sys/devices/system/node/node*/distance", "%s", dist->str);
  g_string_free(cpus_seen, TRUE);
  g_string_free(dist, TRUE);
  g_array_free(ids, TRUE);
}

/* The last-level cache against the model's, which is one per node shared
 * by the node's CPUs (cache.llc_size).  cpu0's LLC in sysfs lists the CPUs
 * that share it (shared_cpu_list, CPUs this kernel sees); its node lists
 * its own.  More CPUs on the L3 than on the node is sub-NUMA clustering,
 * inferred as Linux 6.12 arch/x86/kernel/cpu/resctrl/monitor.c
 * snc_get_config() infers it (2 to 4 nodes per L3): each node's memory is
 * cached in its own cluster's share of the L3, so a node's LLC is the L3
 * over that ratio, in whole sets.  Fewer (an AMD node of several CCXs) the
 * model cannot split: the file keeps one L3 and says so. */
static void llc_sharing(HostInfo *h, const char *root)
{
  char *shared = NULL;
  for (int i = 15; i >= 0 && !shared; i--) {
    g_autofree char *rel = g_strdup_printf("sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
    g_autofree char *lrel = g_strdup_printf("sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    g_autofree char *level = read_line(root, lrel);
    if (level && g_ascii_strtoull(level, NULL, 10) >= 3)
      shared = read_line(root, rel);
  }
  g_autofree char *llc_cpus = shared;
  if (!llc_cpus)
    return;
  int s = host_cpulist_count(llc_cpus), n = 0;
  g_autofree char *online = read_line(root, "sys/devices/system/node/online");
  GArray *ids = online ? parse_list(online) : NULL;
  for (guint i = 0; ids && i < ids->len && !n; i++) {
    g_autofree char *crel = g_strdup_printf("sys/devices/system/node/node%d/cpulist", g_array_index(ids, int, i));
    g_autofree char *cl = read_line(root, crel);
    GArray *cpus = cl ? parse_list(cl) : NULL;
    for (guint c = 0; cpus && c < cpus->len; c++)
      if (g_array_index(cpus, int, c) == 0)
        n = (int)cpus->len;
    if (cpus)
      g_array_free(cpus, TRUE);
  }
  if (ids)
    g_array_free(ids, TRUE);
  if (!online) {
    g_autofree char *all = read_line(root, "sys/devices/system/cpu/online");
    n = all ? host_cpulist_count(all) : 0;
  }
  if (s <= 0 || n <= 0 || s == n)
    return;
  if (s < n) {
    note(h, "cpu0's last-level cache is shared by %d CPUs (its shared_cpu_list) and its node has %d: the model has one "
            "LLC per node, shared by all of the node's CPUs, and the file gives it one such cache (right for a thread "
            "alone, %d times short of the node's caches together)", s, n, (n + s - 1) / s);
    return;
  }
  int ratio = s / n;
  const HostFact *size = host_fact_get(h, "cache.llc_size"), *ways = host_fact_get(h, "cache.llc_ways");
  const HostFact *line = host_fact_get(h, "cache.line_bytes");
  uint64_t bytes;
  guint64 w, l;
  if (ratio < 2 || ratio > 4 || !size || !ways || !line || !settings_parse_size(size->value, &bytes) ||
      !g_ascii_string_to_unsigned(ways->value, 10, 1, 1024, &w, NULL) ||
      !g_ascii_string_to_unsigned(line->value, 10, 1, 4096, &l, NULL)) {
    note(h, "cpu0's last-level cache is shared by %d CPUs and its node has %d: not 2 to 4 nodes per cache as "
            "sub-NUMA clustering makes, so the cache is given whole", s, n);
    return;
  }
  uint64_t set_bytes = w * l, share = bytes / set_bytes / (uint64_t)ratio * set_bytes;
  g_autofree char *sz = settings_format_size(share), *whole = settings_format_size(bytes);
  g_autofree char *src = g_strdup_printf("%s: %s shared by %d CPUs, the %d CPUs of cpu0's node cache in 1/%d of it "
                                         "(sub-NUMA clustering, as Linux's snc_get_config infers it)",
                                         size->source, whole, s, n, ratio);
  host_fact(h, "cache.llc_size", src, "%s", sz);
}

/* THP and khugepaged tunables: the setting, the file under
 * sys/kernel/mm/transparent_hugepage, whether it is a [bracketed] selector. */
static const struct {
  const char *key, *file;
  gboolean selector;
} thp_files[] = {
  { "thp.enabled", "enabled", TRUE },
  { "thp.defrag", "defrag", TRUE },
  { "khugepaged.pages_to_scan", "khugepaged/pages_to_scan", FALSE },
  { "khugepaged.scan_sleep_millisecs", "khugepaged/scan_sleep_millisecs", FALSE },
  { "khugepaged.alloc_sleep_millisecs", "khugepaged/alloc_sleep_millisecs", FALSE },
  { "khugepaged.max_ptes_none", "khugepaged/max_ptes_none", FALSE },
  { "khugepaged.max_ptes_swap", "khugepaged/max_ptes_swap", FALSE },
  { "khugepaged.max_ptes_shared", "khugepaged/max_ptes_shared", FALSE },
  { "khugepaged.defrag", "khugepaged/defrag", FALSE },
};

static void sysfs_thp(HostInfo *h, const char *root)
{
  for (unsigned i = 0; i < G_N_ELEMENTS(thp_files); i++) {
    g_autofree char *rel = g_strconcat("sys/kernel/mm/transparent_hugepage/", thp_files[i].file, NULL);
    g_autofree char *text = read_line(root, rel);
    if (!text)
      continue;
    g_autofree char *value = thp_files[i].selector ? host_bracketed(text) : g_strdup(text);
    g_autofree char *src = g_strconcat("/", rel, NULL);
    if (value && strcmp(thp_files[i].key, "khugepaged.defrag") == 0)
      host_fact(h, thp_files[i].key, src, "%s", strcmp(value, "0") ? "true" : "false");
    else if (value)
      host_fact(h, thp_files[i].key, src, "%s", value);
  }
}

/* ---- ppc64: platform, MMU, partition ---------------------------------------- */

/* The value of the first "key<tabs>: value" line of /proc/cpuinfo text
 * whose key is `key`; NULL if none. */
static char *cpuinfo_field(const char *text, const char *key)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    char *colon = strchr(lines[i], ':');
    if (!colon)
      continue;
    g_autofree char *k = g_strstrip(g_strndup(lines[i], (gsize)(colon - lines[i])));
    if (strcmp(k, key) == 0)
      return g_strstrip(g_strdup(colon + 1));
  }
  return NULL;
}

/* A property of the device tree's root node (`node` NULL) or of a node
 * under it: its text up to the first NUL ("" for an empty, boolean
 * property); NULL if absent.  /sys/firmware/devicetree/base first, then
 * /proc/device-tree (a link to it on current kernels, a directory of its
 * own on old ones). */
static char *dt_prop(const char *root, const char *node, const char *prop)
{
  static const char *const bases[] = { "sys/firmware/devicetree/base", "proc/device-tree" };
  for (unsigned i = 0; i < G_N_ELEMENTS(bases); i++) {
    g_autofree char *path = g_build_filename(root, bases[i], node ? node : "", prop, NULL);
    g_autofree char *text = NULL;
    if (g_file_get_contents(path, &text, NULL, NULL))
      return g_strstrip(g_strdup(text)); /* stops at the property's NUL */
  }
  return NULL;
}

/* The POWER generation of a /proc/cpuinfo "cpu" value ("POWER8
 * (architected), altivec supported": 8); 0 if it names none. */
static unsigned power_generation(const char *cpu)
{
  const char *p = cpu ? strstr(cpu, "POWER") : NULL;
  if (!p)
    return 0;
  guint64 gen = g_ascii_strtoull(p + 5, NULL, 10);
  return gen <= 100 ? (unsigned)gen : 0;
}

/* A ppc64 host: the processor (/proc/cpuinfo "cpu", its generation chooses
 * the preset), the MMU the kernel runs ("MMU : Hash" or "Radix", printed
 * by pSeries_show_cpuinfo and pnv_show_cpuinfo), and whether the kernel
 * runs in a logical partition: "platform : pSeries" (ppc_md.name, printed
 * by show_cpuinfo in arch/powerpc/kernel/setup-common.c) is the PAPR
 * platform, a partition of PowerVM or KVM whose hashed page table the
 * hypervisor owns (HPTE changes are hcalls, platforms/pseries/lpar.c);
 * "PowerNV" is bare metal under OPAL, the kernel owns its HPT
 * (platforms/powernv, hash_native.c).  The hypervisor is named from the
 * device tree as pseries_add_hw_description() (platforms/pseries/setup.c,
 * Linux 6.12) does: a /hypervisor node compatible "linux,kvm" is KVM, the
 * root's ibm,powervm-partition or ibm,fw-net-version PowerVM;
 * ibm,partition-name (the partition's name, lparcfg.c) is noted. */
static void ppc64_platform(HostInfo *h, const char *root, const char *cpuinfo)
{
  g_autofree char *cpu = cpuinfo_field(cpuinfo, "cpu");
  g_autofree char *platform = cpuinfo_field(cpuinfo, "platform");
  g_autofree char *model = cpuinfo_field(cpuinfo, "model");
  g_autofree char *mmu = cpuinfo_field(cpuinfo, "MMU");
  g_autofree char *clock = cpuinfo_field(cpuinfo, "clock");
  h->family = power_generation(cpu);
  /* "clock : 3425.000000MHz": the nominal clock the firmware gives
   * (show_cpuinfo, ppc_proc_freq). */
  guint64 mhz = clock ? g_ascii_strtoull(clock, NULL, 10) : 0;
  if (mhz)
    host_fact(h, "cpu.freq_mhz", "/proc/cpuinfo clock", "%" G_GUINT64_FORMAT, mhz);
  if (cpu) {
    char *comma = strchr(cpu, ',');
    if (comma)
      *comma = '\0'; /* "POWER9 (raw), altivec supported": the processor alone */
    g_free(h->brand);
    h->brand = model && *model ? g_strdup_printf("%s, %s", g_strstrip(cpu), model) : g_strdup(g_strstrip(cpu));
  }
  if (mmu && g_ascii_strcasecmp(mmu, "Radix") == 0) {
    h->radix = TRUE;
    note(h, "/proc/cpuinfo MMU: Radix: the kernel translates with the radix MMU, which mmusim does not model "
            "(doc/model.md, Not modelled): this file describes the machine on its hash MMU, as booted with "
            "disable_radix (the khugepaged figures below are the radix kernel's, whose PMD maps 2M with 64K pages, "
            "not hash's 16M)");
  } else if (mmu) {
    note(h, "/proc/cpuinfo MMU: %s", mmu);
  } else {
    note(h, "/proc/cpuinfo has no MMU line (kernels before 4.7 print none, and run the hash MMU)");
  }
  if (!platform) {
    note(h, "/proc/cpuinfo has no platform line: whether the kernel runs in a partition (virt.lpar) is the preset's");
    return;
  }
  g_autofree char *part = dt_prop(root, NULL, "ibm,partition-name");
  if (part && *part)
    note(h, "device tree ibm,partition-name: %s", part);
  if (strcmp(platform, "PowerNV") == 0) {
    host_fact(h, "virt.lpar", "/proc/cpuinfo platform: PowerNV (bare metal under OPAL: the kernel owns its hashed page table)",
              "false");
    return;
  }
  if (strcmp(platform, "pSeries") != 0) {
    note(h, "/proc/cpuinfo platform: %s, neither pSeries nor PowerNV: virt.lpar is the preset's", platform);
    return;
  }
  g_autofree char *hv = dt_prop(root, "hypervisor", "compatible");
  g_autofree char *powervm = dt_prop(root, NULL, "ibm,powervm-partition");
  g_autofree char *fwnet = powervm ? NULL : dt_prop(root, NULL, "ibm,fw-net-version");
  const char *name = hv && strcmp(hv, "linux,kvm") == 0 ? "KVM" : (powervm || fwnet) ? "PowerVM" : NULL;
  h->guest = TRUE;
  g_free(h->hypervisor);
  h->hypervisor = g_strdup(name ? name : hv && *hv ? hv : "a PAPR hypervisor");
  g_autofree char *src = g_strdup_printf(
    "/proc/cpuinfo platform: pSeries (a logical partition; hypervisor %s%s%s): HPTE changes are hypervisor calls",
    h->hypervisor, name ? ", from the device tree's " : "",
    !name ? "" : hv ? "/hypervisor node" : powervm ? "ibm,powervm-partition" : "ibm,fw-net-version");
  host_fact(h, "virt.lpar", src, "true");
}

gboolean host_detect_sysfs(HostInfo *h, const char *root, GError **error)
{
  g_autofree char *cpu = g_build_filename(root, "sys/devices/system/cpu", NULL);
  if (!g_file_test(cpu, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                "--root %s: no directory %s: give the root of a sysfs/procfs tree (with sys/devices/system/cpu)",
                root, cpu);
    return FALSE;
  }
  /* Without CPUID: /proc/cpuinfo's POWER processor or platform line makes
   * a ppc64 host (read under the root, so a recorded tree is one on any
   * machine), else uname says. */
  g_autofree char *cpuinfo_path = g_build_filename(root, "proc/cpuinfo", NULL);
  g_autofree char *cpuinfo = NULL;
  if (!g_file_get_contents(cpuinfo_path, &cpuinfo, NULL, NULL))
    cpuinfo = NULL;
  if (!h->arch && cpuinfo) {
    g_autofree char *proc = cpuinfo_field(cpuinfo, "cpu"), *platform = cpuinfo_field(cpuinfo, "platform");
    if (power_generation(proc) || (platform && (strcmp(platform, "pSeries") == 0 || strcmp(platform, "PowerNV") == 0))) {
      h->arch = g_strdup("ppc64");
      host_fact(h, "machine.arch", "/proc/cpuinfo cpu and platform", "ppc64");
    }
  }
  if (!h->arch) {
    struct utsname u;
    const char *m = uname(&u) == 0 ? u.machine : "unknown";
    h->arch = g_strdup(g_str_has_prefix(m, "ppc64") ? "ppc64" : m);
    if (strcmp(h->arch, "ppc64") == 0)
      host_fact(h, "machine.arch", "uname", "ppc64");
  }
  if (strcmp(h->arch, "ppc64") == 0) {
    if (cpuinfo)
      ppc64_platform(h, root, cpuinfo);
    else
      note(h, "/proc/cpuinfo unreadable: the processor, its MMU and whether it runs in a partition are the preset's");
  }
  sysfs_caches(h, root);
  sysfs_nodes(h, root);
  llc_sharing(h, root);
  sysfs_thp(h, root);
  g_autofree char *hv = read_line(root, "sys/hypervisor/type");
  if (hv && *hv) {
    h->guest = TRUE;
    note(h, "/sys/hypervisor/type: %s", hv);
    if (!h->hypervisor)
      h->hypervisor = g_strdup(hv);
  }
  if (h->arch && strcmp(h->arch, "x86_64") == 0)
    kernel_log(h, root);
  /* The base page size: the kernel's, as this process sees it. */
  if (strcmp(root, "/") == 0) {
    host_fact(h, "mm.base_page_size", "sysconf(_SC_PAGESIZE)", "%ld", sysconf(_SC_PAGESIZE));
  } else {
    guint64 kb;
    if (read_field(root, "proc/self/smaps", "KernelPageSize:", &kb))
      host_fact(h, "mm.base_page_size", "/proc/self/smaps KernelPageSize", "%" G_GUINT64_FORMAT "K", kb);
  }
  return TRUE;
}

/* ---- the nearest preset ---------------------------------------------------- */

void host_detect_choose_preset(HostInfo *h)
{
  const char *p = "skylake";
  char *why = NULL;
  gboolean amd = h->vendor && (strcmp(h->vendor, "AuthenticAMD") == 0 || strcmp(h->vendor, "HygonGenuine") == 0);
  gboolean intel = h->vendor && strcmp(h->vendor, "GenuineIntel") == 0;
  if (h->arch && strcmp(h->arch, "ppc64") == 0) {
    /* By the POWER generation of /proc/cpuinfo; POWER10 and later, and a
     * processor it does not name, take the newest preset.  The presets
     * are all the hash MMU's: a radix kernel gets its generation's too
     * (ppc64_platform notes it). */
    unsigned gen = h->family;
    p = gen && gen <= 7 ? "power7" : gen == 8 ? "power8" : "power9-hash";
    why = gen ? g_strdup_printf("POWER%u%s: %s", gen, h->radix ? " running the radix MMU" : "",
                                gen < 7 ? "older than any preset, the nearest is POWER7"
                                : gen <= 9 ? "its own generation's hash-MMU preset"
                                : "newer than any preset, the newest is POWER9's hash-MMU one")
              : g_strdup("a ppc64 host whose processor /proc/cpuinfo does not name: the POWER9 hash-MMU preset");
  } else if (amd) {
    /* Zen 4 models of family 19h as Linux 6.12 arch/x86/kernel/cpu/amd.c
     * bsp_init_amd() names them (0x10-0x1f, 0x60-0xaf; the rest Zen 3);
     * family 1Ah (Zen 5) is nearest to Zen 4, 17h (Zen 1/2) to Zen 3. */
    gboolean zen4 = h->family >= 0x1a ||
                    (h->family == 0x19 && ((h->model >= 0x10 && h->model <= 0x1f) || (h->model >= 0x60 && h->model <= 0xaf)));
    p = zen4 ? "zen4" : "zen3";
    why = g_strdup_printf("AMD family 0x%x model 0x%x: %s", h->family, h->model,
                          zen4 ? "Zen 4 or later" : h->family == 0x19 ? "Zen 3" : "the nearest Zen preset");
  } else if (intel) {
    /* Nehalem and Westmere family 6 models (Linux 6.12
     * arch/x86/include/asm/intel-family.h) and older: westmere; later: skylake. */
    static const unsigned older[] = { 0x1a, 0x1e, 0x1f, 0x2e, 0x25, 0x2c, 0x2f };
    gboolean old = h->family == 6 && h->model < 0x1a;
    for (unsigned i = 0; i < G_N_ELEMENTS(older); i++)
      old = old || (h->family == 6 && h->model == older[i]);
    old = old || h->family == 0xf;
    p = old ? "westmere" : "skylake";
    why = g_strdup_printf("Intel family 0x%x model 0x%x: %s", h->family, h->model,
                          old ? "Westmere or older" : "Skylake or later (the newest Intel preset)");
  } else if (h->vendor) {
    why = g_strdup_printf("x86 vendor \"%s\" has no preset of its own: the default skylake", h->vendor);
  } else if (h->arch && strcmp(h->arch, "x86_64") != 0) {
    why = g_strdup_printf("a %s host: mmusim models no MMU of this architecture, the file describes an x86-64 "
                          "machine with the host's memory and THP settings", h->arch);
  } else {
    why = g_strdup("no CPUID: the default skylake");
  }
  g_free(h->preset);
  g_free(h->preset_why);
  h->preset = g_strdup(p);
  h->preset_why = why;
}

/* ---- the file -------------------------------------------------------------- */

/* A section of the file: its lines, in order. */
typedef struct {
  char *name;
  GString *text;
} Section;

static void section_free(gpointer p)
{
  Section *s = p;
  g_free(s->name);
  g_string_free(s->text, TRUE);
  g_free(s);
}

static Section *section_get(GPtrArray *sections, const char *name)
{
  for (guint i = 0; i < sections->len; i++) {
    Section *s = g_ptr_array_index(sections, i);
    if (strcmp(s->name, name) == 0)
      return s;
  }
  Section *s = g_new0(Section, 1);
  s->name = g_strdup(name);
  s->text = g_string_new(NULL);
  g_ptr_array_add(sections, s);
  return s;
}

/* Check value against the registry; NULL if accepted, else the reason. */
static char *refused(Settings *scratch, const char *key, const char *value)
{
  g_autoptr(GError) err = NULL;
  if (settings_set(scratch, key, value, "host", &err))
    return NULL;
  return g_strdup(err->message);
}

/* The model's memory per node is a whole number of the largest buddy block
 * (base page << buddy.max_order, kernel/buddy.c): the host's, rounded down,
 * with the preset's page size and max_order unless the host told the page. */
static gboolean round_memory(HostInfo *h, GError **error)
{
  const HostFact *m = host_fact_get(h, "machine.mem_per_node");
  if (!m)
    return TRUE;
  g_autoptr(Settings) s = settings_new();
  if (!preset_load(s, h->preset, error))
    return FALSE;
  const HostFact *page = host_fact_get(h, "mm.base_page_size");
  if (page && !settings_set(s, page->key, page->value, page->source, NULL))
    page = NULL;
  uint64_t block = (uint64_t)settings_int(s, SET_MM_BASE_PAGE_SIZE) << settings_int(s, SET_BUDDY_MAX_ORDER), mem;
  if (!settings_parse_size(m->value, &mem) || mem % block == 0)
    return TRUE;
  g_autofree char *blk = settings_format_size(block);
  g_autofree char *src = g_strdup_printf("%s, rounded down to a multiple of the largest buddy block (%s)", m->source, blk);
  host_fact(h, "machine.mem_per_node", src, "%" G_GUINT64_FORMAT "M", (mem - mem % block) >> 20);
  return TRUE;
}

/* Preset `name` with what it inherits laid into kf: the ancestors' values
 * first, each preset's own over them, as preset_load applies them (a
 * power8 file is power7's with power8's lines on top; without its
 * ancestors' lines the file would lose, e.g., buddy.max_order). */
static gboolean preset_flat(GKeyFile *kf, const char *name, int depth, GError **error)
{
  g_autofree char *ptext = depth > 8 ? NULL : preset_text(name, error);
  if (!ptext) {
    if (depth > 8)
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "preset %s: 'inherit' chain is too deep", name);
    return FALSE;
  }
  g_autoptr(GKeyFile) own = g_key_file_new();
  g_autoptr(GError) err = NULL;
  if (!g_key_file_load_from_data(own, ptext, strlen(ptext), G_KEY_FILE_NONE, &err)) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "preset %s: %s", name, err->message);
    return FALSE;
  }
  g_autofree char *parent = g_key_file_get_string(own, "machine", "inherit", NULL);
  if (parent && !preset_flat(kf, g_strstrip(parent), depth + 1, error))
    return FALSE;
  g_auto(GStrv) groups = g_key_file_get_groups(own, NULL);
  for (int g = 0; groups[g]; g++) {
    g_auto(GStrv) keys = g_key_file_get_keys(own, groups[g], NULL, NULL);
    for (int k = 0; keys && keys[k]; k++) {
      g_autofree char *v = g_key_file_get_value(own, groups[g], keys[k], NULL);
      if (v)
        g_key_file_set_value(kf, groups[g], keys[k], v);
    }
  }
  return TRUE;
}

char *host_detect_render(HostInfo *h, GError **error)
{
  if (!h->preset)
    host_detect_choose_preset(h);
  if (!round_memory(h, error))
    return NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new();
  if (!preset_flat(kf, h->preset, 0, error))
    return NULL;
  g_autoptr(Settings) scratch = settings_new();
  g_autoptr(GPtrArray) sections = g_ptr_array_new_with_free_func(section_free);
  g_autoptr(GHashTable) used = g_hash_table_new(g_str_hash, g_str_equal);
  GString *from_preset = g_string_new(NULL);
  g_autofree char *mark = g_strdup_printf("# from preset %s: the host does not tell\n", h->preset);
  section_get(sections, "machine");

  /* Every setting of the preset: the host's value where it told one. */
  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  for (int g = 0; groups[g]; g++) {
    g_auto(GStrv) keys = g_key_file_get_keys(kf, groups[g], NULL, NULL);
    Section *sec = section_get(sections, groups[g]);
    for (int k = 0; keys && keys[k]; k++) {
      if (strcmp(groups[g], "machine") == 0 &&
          (strcmp(keys[k], "name") == 0 || strcmp(keys[k], "description") == 0 || strcmp(keys[k], "inherit") == 0))
        continue;
      g_autofree char *key = g_strconcat(groups[g], ".", keys[k], NULL);
      g_autofree char *pvalue = g_key_file_get_value(kf, groups[g], keys[k], NULL);
      const HostFact *f = host_fact_get(h, key);
      g_autofree char *why_not = f ? refused(scratch, key, f->value) : NULL;
      if (f && !why_not) {
        g_string_append_printf(sec->text, "# %s\n%s = %s\n", f->source, keys[k], f->value);
      } else {
        if (why_not)
          g_string_append_printf(sec->text, "# the host's %s = %s is refused (%s)\n", key, f->value, why_not);
        g_string_append_printf(sec->text, "%s%s = %s\n", mark, keys[k], pvalue ? g_strstrip(pvalue) : "");
        g_string_append_printf(from_preset, "%s%s", from_preset->len ? ", " : "", key);
      }
      if (f)
        g_hash_table_add(used, f->key);
    }
  }
  /* What the host told that the preset does not set. */
  for (guint i = 0; i < h->facts->len; i++) {
    const HostFact *f = g_ptr_array_index(h->facts, i);
    if (g_hash_table_contains(used, f->key))
      continue;
    const char *dot = strchr(f->key, '.');
    g_autofree char *group = g_strndup(f->key, (gsize)(dot - f->key));
    Section *sec = section_get(sections, group);
    g_autofree char *why_not = refused(scratch, f->key, f->value);
    if (why_not)
      g_string_append_printf(sec->text, "# the host's %s = %s is refused (%s): the default stays\n", f->key, f->value,
                             why_not);
    else
      g_string_append_printf(sec->text, "# %s\n%s = %s\n", f->source, dot + 1, f->value);
  }
  /* A guest sees the size of the host's cache, not its share of it. */
  if (h->guest)
    note(h, "a guest: cache.llc_size is the size of a cache the host's other guests and the host itself share with "
            "this one (or the preset's); how much of it this guest holds, nothing a guest reads tells (doc/host.md)");
  /* A guest's memory is translated by the host's EPT/NPT tables; under a
   * shadowing hypervisor the hardware walks its shadow table instead of
   * the guest's, and CPUID's hypervisor, when there is one, is the one
   * below it (PVM does not trap CPUID), whose EPT/NPT translate that. */
  gboolean x86 = h->arch && strcmp(h->arch, "x86_64") == 0;
  if (x86 && h->shadow) {
    Section *sec = section_get(sections, "virt");
    g_string_append_printf(sec->text,
                           "# the kernel log: \"Hypervisor detected: %s\": the hardware walks that hypervisor's shadow "
                           "page tables\nshadow = true\n"
                           "# virt.shadow_page_size is left out: a guest is not told how its hypervisor backs its memory\n",
                           h->kernel_hypervisor);
  }
  gboolean below = h->shadow ? h->hypervisor && (!h->kernel_hypervisor || strcmp(h->hypervisor, h->kernel_hypervisor) != 0)
                             : h->guest;
  if (x86 && below) {
    Section *sec = section_get(sections, "virt");
    g_string_append_printf(sec->text,
                           "# a guest (%s%s): its %s is translated by the host's EPT/NPT tables\n"
                           "nested = true\n"
                           "# virt.host_page_size is left out: a guest is not told how the host backs its memory\n",
                           h->hypervisor ? "hypervisor " : "CPUID 1 ECX[31]", h->hypervisor ? h->hypervisor : "",
                           h->shadow ? "hypervisor's memory, the shadow tables with it," : "guest-physical memory");
  }

  GString *out = g_string_new(NULL);
  g_string_append(out, "# SPDX-License-Identifier: GPL-2.0-or-later\n"
                       "# Written by `mmusim host detect`: the host it ran on, as a machine file\n"
                       "# (run it with `mmusim run -m FILE.ini`).  Each value names where it was read;\n"
                       "# the host does not tell the others, which are the nearest preset's (see\n"
                       "# sim/machines/ and doc/host.md).\n");
  g_string_append_printf(out, "# Nearest preset: %s (%s).\n", h->preset, h->preset_why);
  if (from_preset->len)
    g_string_append_printf(out, "# From preset %s: %s.\n", h->preset, from_preset->str);
  for (guint i = 0; i < h->notes->len; i++)
    g_string_append_printf(out, "# Seen: %s.\n", (const char *)g_ptr_array_index(h->notes, i));
  g_string_free(from_preset, TRUE);
  for (guint i = 0; i < sections->len; i++) {
    const Section *s = g_ptr_array_index(sections, i);
    g_string_append_printf(out, "\n[%s]\n", s->name);
    if (strcmp(s->name, "machine") == 0) {
      /* CPUID's name (the kernel's otherwise), or under a shadowing one both: it in a guest of CPUID's. */
      const char *hv = h->shadow || !h->hypervisor ? h->kernel_hypervisor : h->hypervisor;
      gboolean two = h->shadow && h->hypervisor && strcmp(h->kernel_hypervisor, h->hypervisor) != 0;
      g_autofree char *desc = g_strdup_printf("%s%s%s%s%s", h->brand && *h->brand ? h->brand : "this host",
                                              h->guest ? ", a guest of " : "", h->guest ? (hv ? hv : "a hypervisor") : "",
                                              two ? " in a guest of " : "", two ? h->hypervisor : "");
      /* GKeyFile values are one line: no newline can reach here (regs_text and read_line stop at one). */
      g_string_append_printf(out, "name = host\ndescription = %s (detected; nearest preset %s)\n", desc, h->preset);
    }
    g_string_append(out, s->text->str);
  }
  return g_string_free(out, FALSE);
}

/* ---- the command ----------------------------------------------------------- */

char *host_detect_this_host(GError **error)
{
  g_autoptr(HostCpuid) c = host_cpuid_native();
  g_autoptr(HostInfo) h = host_info_new();
  host_detect_cpuid(h, c);
  if (!host_detect_sysfs(h, "/", error))
    return NULL;
  host_detect_choose_preset(h);
  return host_detect_render(h, error);
}

int host_detect_main(int argc, char **argv)
{
  char *output = NULL, *root = NULL, *cpuid = NULL;
  gboolean dump = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "write the machine file to FILE (default: standard output)", "FILE.ini" },
    { "root", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &root, "read sysfs and procfs under DIR instead of /", "DIR" },
    { "cpuid", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &cpuid, "read CPUID leaves from a dump (\"none\": no CPUID)", "FILE" },
    { "dump-cpuid", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &dump, "print the CPUID leaves as a dump, nothing more", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- write a machine file for this host");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx,
    "Reads CPUID (x86), /sys/devices/system/cpu/*/cache, /sys/devices/system/node, the base page size,\n"
    "/sys/kernel/mm/transparent_hugepage and /sys/hypervisor; what the host does not tell (walk caches,\n"
    "latencies) comes from the nearest preset and is marked so.  Run the file with -m FILE.ini.");
  GError *err = NULL;
  int rc = 0;
  HostCpuid *c = NULL;
  HostInfo *h = NULL;
  char *text = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "mmusim: host detect: %s\n", err->message);
    g_error_free(err);
    rc = 2;
    goto out;
  }
  if (argc > 1) {
    fprintf(stderr, "mmusim: host detect: unexpected argument '%s': the only output is -o FILE.ini\n", argv[1]);
    rc = 2;
    goto out;
  }
  if (cpuid && strcmp(cpuid, "none") == 0)
    c = NULL;
  else if (cpuid && !(c = host_cpuid_load(cpuid, &err)))
    goto fail;
  else if (!cpuid)
    c = host_cpuid_native();
  if (dump) {
    g_autofree char *d = host_cpuid_dump(c);
    out_file_put_stdout(d, strlen(d));
    goto out;
  }
  h = host_info_new();
  host_detect_cpuid(h, c);
  if (!host_detect_sysfs(h, root ? root : "/", &err))
    goto fail;
  host_detect_choose_preset(h);
  if (!(text = host_detect_render(h, &err)))
    goto fail;
  if (output && !out_file_set_contents(output, text, strlen(text), &err))
    goto fail;
  if (!output)
    out_file_put_stdout(text, strlen(text));
  goto out;
fail:
  rc = out_file_exit_status(err);
  fprintf(stderr, "mmusim: host detect: %s\n", err->message);
  g_error_free(err);
out:
  g_free(text);
  host_info_free(h);
  host_cpuid_free(c);
  g_free(output);
  g_free(root);
  g_free(cpuid);
  return rc;
}
