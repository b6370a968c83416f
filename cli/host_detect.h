/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_detect.h - `mmusim host detect`: a machine file (the format of the
 * presets in sim/machines) for the host mmusim runs on.  What the host tells
 * (CPUID, sysfs) is written with its source; the rest comes from the
 * nearest preset and is marked so.  doc/host.md says what is read where.
 */
#ifndef MMUSIM_HOST_DETECT_H
#define MMUSIM_HOST_DETECT_H

#include <glib.h>
#include "host_cpuid.h"

/* One value the host told: the setting it sets, as text, and where it was read. */
typedef struct {
  char *key;    /* "tlb.stlb_entries" */
  char *value;  /* "1536" */
  char *source; /* "CPUID 0x18 subleaf 3", "/sys/devices/system/node/node0/distance" */
} HostFact;

typedef struct {
  GPtrArray *facts;      /* HostFact, in the order found; a later fact of a key replaces the earlier */
  GPtrArray *notes;      /* char *: what was read that no setting takes, for the file's header */
  char *arch;            /* machine.arch the host has: "x86_64", "ppc64", else uname's machine */
  char *vendor;          /* CPUID vendor ("AuthenticAMD"); NULL without CPUID */
  char *brand;           /* CPUID 0x80000002..4 brand string; NULL if none */
  unsigned family, model; /* x86: CPUID's; ppc64: family is the POWER generation (8 for POWER8), 0 if unnamed */
  gboolean guest;        /* a hypervisor is present */
  gboolean radix;        /* ppc64: the kernel runs the radix MMU (/proc/cpuinfo MMU: Radix) */
  char *hypervisor;      /* its name: the CPUID 0x40000000 signature or /sys/hypervisor/type */
  char *kernel_hypervisor; /* the kernel log's "Hypervisor detected: NAME", NULL if not read */
  gboolean shadow;       /* the kernel runs under a hypervisor that shadows its page tables (PVM) */
  char *preset;          /* the nearest preset (host_detect_choose_preset) */
  char *preset_why;
} HostInfo;

HostInfo *host_info_new(void);
void host_info_free(HostInfo *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HostInfo, host_info_free)

/* Record key = value (printf format) read from source. */
void host_fact(HostInfo *h, const char *key, const char *source, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
/* The fact of key; NULL if the host did not tell it. */
const HostFact *host_fact_get(const HostInfo *h, const char *key);

/* What the CPUID leaves tell: vendor, family/model, TLBs, caches, address
 * sizes, 1G pages, PCID, the hypervisor. */
void host_detect_cpuid(HostInfo *h, const HostCpuid *c);
/* What sysfs and procfs under root tell ("/" for the host's own): caches
 * (where CPUID told none), NUMA nodes, THP and khugepaged, /sys/hypervisor,
 * the base page size; on ppc64 (uname, or a POWER /proc/cpuinfo under the
 * root) the POWER generation, hash or radix MMU and virt.lpar from
 * /proc/cpuinfo and the device tree.  FALSE with an error for a root that is not one. */
gboolean host_detect_sysfs(HostInfo *h, const char *root, GError **error);
/* Choose the nearest preset by arch, vendor and family/model. */
void host_detect_choose_preset(HostInfo *h);
/* The machine file; NULL with an error if the preset cannot be read. */
char *host_detect_render(HostInfo *h, GError **error);

/* Parsers, exposed for the tests. */
/* CPUs in a sysfs list ("0-3,8,10-11"); -1 if malformed. */
int host_cpulist_count(const char *list);
/* The choice in brackets of a sysfs selector ("always [madvise] never"); NULL if none. */
char *host_bracketed(const char *text);

/* The machine file of the host this runs on (CPUID and "/"), as `mmusim
 * host detect` prints it; NULL with an error. */
char *host_detect_this_host(GError **error);

/* `mmusim host detect [-o FILE.ini]` (argv[0] is "detect"); the exit status. */
int host_detect_main(int argc, char **argv);

#endif
