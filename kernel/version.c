/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * version.c - the releases kernel.version offers and the table of the
 * rules that change with it (version.def).
 */
#include <stdio.h>
#include <string.h>
#include "version.h"

static const KernelRuleDef RULES[N_KERNEL_RULES] = {
#define X(id, nm, fn, maj, min, before, since) \
  [KR_##id] = { KR_##id, nm, fn, KV(maj, min), #maj "." #min, before, since },
#include "version.def"
#undef X
};

/* Oldest first; the names are the choices of kernel.version in
 * base/settings.def (tests/kernel/test_version checks they agree). */
static const KernelVersionDef VERSIONS[] = {
  { "3.8", KV(3, 8),
    "the first kernel with automatic NUMA balancing (2013): the scheme of seeds 003 and 004, "
    "PMD-granular hinting faults and the last_nid migrate filter" },
  { "6.12", KV(6, 12),
    "the default: the long-term kernel of November 2024 (Debian 13's), the newest long-term "
    "release when the model was checked against the source, with multi-size THP (6.8), "
    "MADV_COLLAPSE (6.1) and weighted interleave (6.9)" },
};

const KernelRuleDef *kernel_rule_def(KernelRule r)
{
  g_return_val_if_fail((unsigned)r < N_KERNEL_RULES, &RULES[0]);
  return &RULES[r];
}

const KernelVersionDef *kernel_version_nth(unsigned i)
{
  return i < G_N_ELEMENTS(VERSIONS) ? &VERSIONS[i] : NULL;
}

uint32_t kernel_version_of(const Settings *s)
{
  /* An ENUM setting holds the index of its choice, and the choices are
   * VERSIONS' names in order. */
  int64_t i = settings_int(s, SET_KERNEL_VERSION);
  g_return_val_if_fail(i >= 0 && (size_t)i < G_N_ELEMENTS(VERSIONS), VERSIONS[G_N_ELEMENTS(VERSIONS) - 1].kv);
  return VERSIONS[i].kv;
}

const char *kernel_version_first_with(KernelRule r)
{
  for (unsigned i = 0; i < G_N_ELEMENTS(VERSIONS); i++)
    if (kernel_version_has(VERSIONS[i].kv, r))
      return VERSIONS[i].name;
  return VERSIONS[G_N_ELEMENTS(VERSIONS) - 1].name;
}

const char *kernel_version_name(uint32_t kv, char buf[16])
{
  snprintf(buf, 16, "%u.%u", kv >> 16, kv & 0xffff);
  return buf;
}
