/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_settings.c - libFuzzer target: the settings parser, each line of the
 * input a KEY=VALUE pair as `-s` takes it, and the size, count and boolean
 * parsers on the whole input.  Every value that is accepted must read back.
 */
#include "config.h"
#include "fuzz_common.h"
#include "settings.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup((const char *)data, size);
  uint64_t v;
  gboolean b;
  settings_parse_size(text, &v);
  settings_parse_count(text, &v);
  settings_parse_bool(text, &b);
  g_autoptr(Settings) s = settings_new();
  g_auto(GStrv) lines = g_strsplit(text, "\n", 64);
  for (char **l = lines; *l; l++) {
    GError *err = NULL;
    if (settings_set_pair(s, *l, "fuzz", &err)) {
      const char *eq = strchr(*l, '=');
      g_autofree char *name = g_strndup(*l, (gsize)(eq - *l));
      const SettingDef *d = settings_lookup(g_strstrip(name));
      g_assert(d != NULL);
    } else {
      g_assert(err != NULL && err->message[0]);
      g_error_free(err);
    }
  }
  return 0;
}
