/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * preset.c - machine presets: GKeyFile .ini files of settings, compiled
 * into the binary (sim/machines/, a GResource) or read from a path.
 * Groups are the first component of a setting's name: [tlb] stlb_entries =
 * 1536 sets tlb.stlb_entries.  [machine] name, description and inherit
 * (another preset to start from) describe the preset itself.
 */
#include "config.h"
#include "preset.h"

#include <gio/gio.h>
#include <string.h>
#include "errors.h"

#define PRESET_PREFIX "/org/mmusim/machines/"

GResource *mmusim_presets_get_resource(void);

static gint sort_names(gconstpointer a, gconstpointer b)
{
  return g_strcmp0(*(char *const *)a, *(char *const *)b);
}

char **preset_names(void)
{
  char **names = g_resource_enumerate_children(mmusim_presets_get_resource(), PRESET_PREFIX, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  GPtrArray *out = g_ptr_array_new();
  for (int i = 0; names && names[i]; i++)
    if (g_str_has_suffix(names[i], ".ini"))
      g_ptr_array_add(out, g_strndup(names[i], strlen(names[i]) - 4));
  g_strfreev(names);
  g_ptr_array_sort(out, sort_names);
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}

static gboolean looks_like_path(const char *name)
{
  return strchr(name, '/') || g_str_has_suffix(name, ".ini");
}

/* A machine file's text, checked (UTF-8, NUL bytes, lines: settings_ini_check)
 * and parsed; origin names it in messages. */
static GKeyFile *keyfile_from_data(const char *origin, const char *data, gsize len, GError **error)
{
  if (!settings_ini_check(origin, data, len, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "[cache] for cache.* settings", error))
    return NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) err = NULL;
  if (!g_key_file_load_from_data(kf, data, len, G_KEY_FILE_NONE, &err)) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s: %s", origin, err->message);
    return NULL;
  }
  return g_steal_pointer(&kf);
}

static GKeyFile *load_keyfile(const char *name_or_path, char **origin, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autofree char *rpath = g_strconcat(PRESET_PREFIX, name_or_path, ".ini", NULL);
  g_autoptr(GBytes) bytes = g_resource_lookup_data(mmusim_presets_get_resource(), rpath, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  g_autoptr(GError) err = NULL;
  if (bytes) {
    gsize len;
    const char *data = g_bytes_get_data(bytes, &len);
    if (!g_key_file_load_from_data(kf, data, len, G_KEY_FILE_NONE, &err)) {
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "built-in preset %s: %s", name_or_path, err->message);
      return NULL;
    }
    *origin = g_strdup_printf("preset %s", name_or_path);
  } else if (g_file_test(name_or_path, G_FILE_TEST_EXISTS)) {
    g_autofree char *data = NULL;
    gsize len = 0;
    if (!settings_read_file(name_or_path, "machine file", MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, &data, &len, error))
      return NULL;
    *origin = g_strdup(name_or_path);
    return keyfile_from_data(name_or_path, data, len, error);
  } else {
    g_auto(GStrv) names = preset_names();
    g_autofree char *list = g_strjoinv(", ", names);
    if (looks_like_path(name_or_path))
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                  "machine file '%s' does not exist: give the path of an existing .ini file, or a preset (%s)",
                  name_or_path, list);
    else
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE,
                  "unknown machine '%s': give a preset (%s) or the path of an .ini file", name_or_path, list);
    return NULL;
  }
  return g_steal_pointer(&kf);
}

static gboolean apply_keyfile(Settings *s, GKeyFile *kf, const char *origin, int depth, GError **error)
{
  if (depth > 8) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s: 'inherit' chain is too deep (a loop?)", origin);
    return FALSE;
  }
  g_autofree char *parent = NULL;
  if (g_key_file_has_key(kf, "machine", "inherit", NULL)) {
    /* NULL with an error for a value that is not UTF-8 (settings_ini_check
     * refuses those in files first): never a preset dropped in silence. */
    g_autoptr(GError) err = NULL;
    parent = g_key_file_get_string(kf, "machine", "inherit", &err);
    if (!parent) {
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "%s [machine] inherit: %s; write a preset name or path",
                  origin, err ? err->message : "no value");
      return FALSE;
    }
  }
  if (parent) {
    g_autofree char *porigin = NULL;
    g_autoptr(GKeyFile) pkf = load_keyfile(g_strstrip(parent), &porigin, error);
    if (!pkf) {
      g_prefix_error(error, "%s [machine] inherit: ", origin);
      return FALSE;
    }
    if (!apply_keyfile(s, pkf, porigin, depth + 1, error))
      return FALSE;
  }
  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  for (int g = 0; groups[g]; g++) {
    g_auto(GStrv) keys = g_key_file_get_keys(kf, groups[g], NULL, NULL);
    for (int i = 0; keys && keys[i]; i++) {
      if (strcmp(groups[g], "machine") == 0 &&
          (strcmp(keys[i], "name") == 0 || strcmp(keys[i], "description") == 0 || strcmp(keys[i], "inherit") == 0))
        continue;
      g_autofree char *name = g_strconcat(groups[g], ".", keys[i], NULL);
      g_autofree char *value = g_key_file_get_value(kf, groups[g], keys[i], NULL);
      g_autofree char *where = g_strdup_printf("%s [%s] %s", origin, groups[g], keys[i]);
      if (!settings_set(s, name, value, where, error))
        return FALSE;
    }
  }
  return TRUE;
}

gboolean preset_load(Settings *s, const char *name_or_path, GError **error)
{
  g_autofree char *origin = NULL;
  g_autoptr(GKeyFile) kf = load_keyfile(name_or_path, &origin, error);
  return kf && apply_keyfile(s, kf, origin, 0, error);
}

gboolean preset_load_data(Settings *s, const char *origin, const char *data, gsize len, GError **error)
{
  g_autoptr(GKeyFile) kf = keyfile_from_data(origin, data, len, error);
  return kf && apply_keyfile(s, kf, origin, 0, error);
}

char *preset_text(const char *name, GError **error)
{
  g_autofree char *rpath = g_strconcat(PRESET_PREFIX, name, ".ini", NULL);
  g_autoptr(GBytes) bytes = g_resource_lookup_data(mmusim_presets_get_resource(), rpath, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  if (!bytes) {
    g_auto(GStrv) names = preset_names();
    g_autofree char *list = g_strjoinv(", ", names);
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE, "no built-in machine '%s': the presets are %s", name, list);
    return NULL;
  }
  gsize len;
  const char *data = g_bytes_get_data(bytes, &len);
  return g_strndup(data, len);
}

void preset_list(GString *out)
{
  g_auto(GStrv) names = preset_names();
  for (int i = 0; names[i]; i++) {
    g_autofree char *origin = NULL;
    g_autoptr(GKeyFile) kf = load_keyfile(names[i], &origin, NULL);
    g_autofree char *desc = kf ? g_key_file_get_string(kf, "machine", "description", NULL) : NULL;
    g_string_append_printf(out, "%-12s %s\n", names[i], desc ? desc : "");
  }
}

