/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_cpuid.h - the CPUID leaves of the host `mmusim host detect` runs on,
 * read from the processor itself (x86 only) or from a text dump, so that the
 * detection can be tested on any host.
 *
 * A dump has one leaf a line: "leaf subleaf eax ebx ecx edx", six numbers in
 * hexadecimal (with or without 0x); '#' starts a comment.  A leaf that takes
 * no subleaf is written with subleaf 0.  A leaf not in the table reads as
 * absent, as on a processor that does not implement it.
 */
#ifndef MMUSIM_HOST_CPUID_H
#define MMUSIM_HOST_CPUID_H

#include <glib.h>
#include <stdint.h>

typedef struct HostCpuid HostCpuid;

/* Parse a dump (text of len bytes); origin names it in messages
 * ("FILE:LINE: ..."). */
HostCpuid *host_cpuid_parse(const char *origin, const char *text, gsize len, GError **error);
/* Read the dump in path. */
HostCpuid *host_cpuid_load(const char *path, GError **error);
/* The processor's own leaves: every basic, hypervisor and extended leaf up
 * to the maximum each range reports, with the subleaves of leaves 4, 7,
 * 0x18 and 0x8000001D.  NULL on a host that is not x86. */
HostCpuid *host_cpuid_native(void);
void host_cpuid_free(HostCpuid *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HostCpuid, host_cpuid_free)

/* Fill r[0..3] (eax, ebx, ecx, edx) with leaf/subleaf; FALSE if absent. */
gboolean host_cpuid_get(const HostCpuid *c, uint32_t leaf, uint32_t subleaf, uint32_t r[4]);
/* The table as a dump (what host_cpuid_parse reads back). */
char *host_cpuid_dump(const HostCpuid *c);

#endif
