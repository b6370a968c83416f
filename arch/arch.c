/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arch.c - the registry of architectures (base/registry.h): one row per
 * architecture, named by machine.arch.  Adding an architecture is its
 * folder and one row here.
 */
#include "config.h"
#include "arch.h"

static const ArchOps *const arches[] = {
  &x86_64_ops,
  &ppc64_ops,
};

const ArchOps *const *arch_all(unsigned *n)
{
  *n = G_N_ELEMENTS(arches);
  return arches;
}

const ArchOps *arch_lookup(const char *name)
{
  int i = registry_find(REGISTRY_ROWS(arches), G_N_ELEMENTS(arches), name);
  return i < 0 ? NULL : arches[i];
}

char *arch_names(void)
{
  return registry_names(REGISTRY_ROWS(arches), G_N_ELEMENTS(arches), ", ", ", ");
}
