/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * settings.h - the one registry of knobs.
 *
 * Every knob is declared once in settings.def; this header turns the rows into
 * the SettingId enum.  A Settings object holds one resolved value per knob:
 * the default, then a machine preset, then each `-s KEY=VALUE` in order.  Values
 * are checked when they are set (the edge), never when they are read.
 */
#ifndef MMUSIM_SETTINGS_H
#define MMUSIM_SETTINGS_H

#include <glib.h>
#include <stdint.h>

typedef enum {
  SETTING_INT,    /* whole number; counts take K/M/G as powers of 1000 */
  SETTING_SIZE,   /* bytes; K/M/G/T are powers of 1024 */
  SETTING_DOUBLE,
  SETTING_BOOL,   /* true/false, yes/no, on/off, 1/0 */
  SETTING_ENUM,   /* one of the '|'-separated choices */
  SETTING_STRING,
} SettingType;

typedef enum {
#define X(id, name, type, def, unit, min, max, choices, help, source) SET_##id,
#include "settings.def"
#undef X
  N_SETTINGS
} SettingId;

typedef struct {
  SettingId id;
  const char *name;
  SettingType type;
  const char *def;
  const char *unit;
  double min, max;
  const char *choices;
  const char *help;
  const char *source;
} SettingDef;

typedef struct Settings Settings;

#define MMUSIM_SETTINGS_ERROR (mmusim_settings_error_quark())
GQuark mmusim_settings_error_quark(void);
typedef enum { SETTINGS_ERROR_UNKNOWN_KEY, SETTINGS_ERROR_BAD_VALUE } SettingsError;

const SettingDef *settings_def(SettingId id);
/* NULL when no knob has that name. */
const SettingDef *settings_lookup(const char *name);
/* The known name closest to `name` (for "did you mean"), or NULL. */
const char *settings_suggest(const char *name);
const char *settings_type_name(SettingType type);

Settings *settings_new(void);
Settings *settings_copy(const Settings *s);
void settings_free(Settings *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Settings, settings_free)

/* Set a knob from text.  `origin` names where the text came from ("-s",
 * "skylake.ini:12") and is put in the error message. */
gboolean settings_set(Settings *s, const char *name, const char *value, const char *origin, GError **error);
/* "KEY=VALUE" as given to -s. */
gboolean settings_set_pair(Settings *s, const char *pair, const char *origin, GError **error);

int64_t settings_int(const Settings *s, SettingId id);    /* INT, SIZE, BOOL, ENUM (index) */
double settings_double(const Settings *s, SettingId id);  /* any numeric */
gboolean settings_bool(const Settings *s, SettingId id);
const char *settings_str(const Settings *s, SettingId id); /* the value as text, any type */
/* TRUE once the knob was set by a preset or by the user. */
gboolean settings_is_set(const Settings *s, SettingId id);

/* Check the lines of an .ini file (a machine description, an experiment)
 * the way GKeyFile reads them, so that a malformed one is reported with its
 * file (`origin`) and line number, which GKeyFile's messages lack: error
 * `domain` / `code`; `group_hint` completes "put it under one,
 * such as ..." for a line before any group. */
/* The most bytes a machine file, an experiment file or a stored result may
 * have (16 MiB; doc/performance.md, Limits): room for a zip axis of the
 * 1,000,000 configurations a sweep may have (EXPERIMENT_MAX_CONFIGS) at up
 * to 15 characters a value, while the shipped files are a few KB; a path
 * such as /dev/zero or a pipe that never ends must not be read for ever. */
#define SETTINGS_FILE_MAX_BYTES (16u * 1024 * 1024)

/* Read the whole of `path`, at most SETTINGS_FILE_MAX_BYTES, into *data
 * (NUL-terminated, g_free) and *len.  `what` names the file in messages
 * ("machine file"); a longer input is refused with error `domain` / `code`
 * naming the limit, without reading past it. */
gboolean settings_read_file(const char *path, const char *what, GQuark domain, int code, char **data, gsize *len,
                            GError **error);

gboolean settings_ini_check(const char *origin, const char *data, gsize len, GQuark domain, int code,
                            const char *group_hint, GError **error);

/* Append `text` to `out` for an error message: a byte that is not printable
 * ASCII as \xNN, and at most `max_chars` characters so written (then "..."),
 * so a binary file quoted by mistake shows as a short line. */
void settings_append_shown(GString *out, const char *text, gsize max_chars);

/* Where the value of a knob came from, as given to settings_set() ("-s",
 * "m.ini [cache] l2_size"); NULL for the default. */
const char *settings_origin(const Settings *s, SettingId id);
/* "cache.l2_ways = 4 (from preset skylake [cache] l2_ways)", or "...
 * (default)": a knob, its value and its origin, for messages about settings
 * that are wrong together. */
char *settings_blame(const Settings *s, SettingId id);
/* "ORIGIN: " to put before a message about one knob, "" for a default. */
char *settings_prefix(const Settings *s, SettingId id);
/* Of the n knobs in ids, the one set last (the first when none was set):
 * the one a message about their combination names first. */
SettingId settings_latest(const Settings *s, const SettingId *ids, unsigned n);

/* Parsing helpers shared with the workload and trace parsers. */
gboolean settings_parse_size(const char *text, uint64_t *out);
gboolean settings_parse_count(const char *text, uint64_t *out);
gboolean settings_parse_bool(const char *text, gboolean *out);
/* Human-readable size (4K, 2M, 1G, 1536K) for messages and reports. */
char *settings_format_size(uint64_t bytes);

#endif
