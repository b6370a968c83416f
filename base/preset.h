/*
 * preset.h - machine presets: named sets of settings (the .ini files of sim/machines/,
 * compiled in) or a machine file given by its path.
 */
#ifndef MMUSIM_PRESET_H
#define MMUSIM_PRESET_H

#include <glib.h>
#include "settings.h"

/* Apply a preset (built-in name or .ini path) to `s`. */
gboolean preset_load(Settings *s, const char *name_or_path, GError **error);
/* Built-in preset names, NULL-terminated. */
char **preset_names(void);
/* "name  description" lines for `mmusim list machines`. */
void preset_list(GString *out);

#endif
