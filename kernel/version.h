/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * version.h - which Linux the kernel model is: the setting kernel.version
 * and the rules that change with it (kernel/version.def).
 *
 * The model is one kernel, 6.12 by default.  A rule whose behaviour
 * differs between the releases offered is one row of version.def, naming
 * the kernel function and the release that brought today's behaviour; the
 * model asks kernel_version_has() (kernel_has() on a Kernel) at the one
 * place the rule is applied.  Nothing else in the model compares versions.
 */
#ifndef MMUSIM_KERNEL_VERSION_H
#define MMUSIM_KERNEL_VERSION_H

#include <glib.h>
#include <stdint.h>
#include "settings.h"

/* A release as one number that orders releases: KV(6, 12). */
#define KV(major, minor) ((uint32_t)(major) << 16 | (uint32_t)(minor))

typedef enum {
#define X(id, name, fn, maj, min, before, since) KR_##id,
#include "version.def"
#undef X
  N_KERNEL_RULES
} KernelRule;

typedef struct {
  KernelRule id;
  const char *name;     /* a few words: what the rule is about */
  const char *function; /* the kernel source it follows */
  uint32_t since;       /* KV() of the release of `since_text` */
  const char *since_name; /* that release, "6.1" */
  const char *before_text;
  const char *since_text;
} KernelRuleDef;

/* A release kernel.version can name. */
typedef struct {
  const char *name;  /* as the setting spells it: "6.12" */
  uint32_t kv;
  const char *why;   /* why the model offers it */
} KernelVersionDef;

const KernelRuleDef *kernel_rule_def(KernelRule r);
/* The i-th release offered (from 0, oldest first), NULL past the end. */
const KernelVersionDef *kernel_version_nth(unsigned i);
/* The release named by kernel.version in s. */
uint32_t kernel_version_of(const Settings *s);
/* The oldest release offered that follows rule r's newer behaviour: what
 * a message asks the user to set. */
const char *kernel_version_first_with(KernelRule r);
/* "6.12" for KV(6, 12), into buf of at least 16 bytes. */
const char *kernel_version_name(uint32_t kv, char buf[16]);

/* Whether a kernel of release kv behaves as rule r's since_text says. */
static inline gboolean kernel_version_has(uint32_t kv, KernelRule r)
{
  return kv >= kernel_rule_def(r)->since;
}

#endif
