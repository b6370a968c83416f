/* SPDX-License-Identifier: GPL-2.0-or-later */
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
/* Apply the text of a machine file (`origin` names it in messages) to `s`,
 * as preset_load does with a file's contents: the entry point of the fuzz
 * targets, which parse from memory. */
gboolean preset_load_data(Settings *s, const char *origin, const char *data, gsize len, GError **error);
/* Built-in preset names, NULL-terminated. */
char **preset_names(void);
/* "name  description" lines for `mmusim list machines`. */
void preset_list(GString *out);
/* The machine file of built-in preset `name`, as shipped (its comments name
 * the sources); NULL with an error naming the presets when there is none. */
char *preset_text(const char *name, GError **error);

#endif
