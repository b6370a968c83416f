/*
 * arch.c - the table of architectures.  One row per architecture.
 */
#include "config.h"
#include "arch.h"

#include <string.h>

static const ArchOps *const arches[] = {
  &x86_64_ops,
  &ppc64_ops,
};

const ArchOps *arch_lookup(const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS(arches); i++)
    if (strcmp(arches[i]->name, name) == 0)
      return arches[i];
  return NULL;
}

char *arch_names(void)
{
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < G_N_ELEMENTS(arches); i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", arches[i]->name);
  return g_string_free(s, FALSE);
}
