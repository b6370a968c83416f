/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * settings.c - parse, check and hold the values of the knobs in settings.def.
 *
 * A value is checked once, when it is set: its type, its range and, for enums,
 * its choices.  The error names the knob, the origin of the text and what is
 * allowed, so a user can fix a preset or a `-s` at once.  Reading a value is an
 * array index; the hot path reads settings only at machine build time.
 */
#include "config.h"
#include "settings.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SETTINGS_INI_SHOWN_CHARS 60 /* an .ini line is cut to this in messages */

G_DEFINE_QUARK(mmusim-settings-error-quark, mmusim_settings_error)

static const SettingDef defs[N_SETTINGS] = {
#define X(id, nm, type, def, unit, min, max, choices, help, source) \
  { SET_##id, nm, SETTING_##type, def, unit, min, max, choices, help, source },
#include "settings.def"
#undef X
};

typedef struct {
  int64_t i;   /* INT, SIZE, BOOL, ENUM index */
  double d;    /* every numeric type */
  char *text;  /* normalised text of the value */
  char *origin;  /* where the value came from ("-s", "m.ini [cache] l2_size"); NULL: the default */
  uint64_t seq;  /* order of setting, from 1: the value set last has the highest; 0: never set */
} SettingValue;

struct Settings {
  SettingValue v[N_SETTINGS];
  /* Values set so far: of the settings behind a bad combination, the one
   * given last is named first. */
  uint64_t last_seq;
};

const SettingDef *settings_def(SettingId id)
{
  g_return_val_if_fail(id < N_SETTINGS, NULL);
  return &defs[id];
}

const SettingDef *settings_lookup(const char *name)
{
  for (int i = 0; i < N_SETTINGS; i++)
    if (strcmp(defs[i].name, name) == 0)
      return &defs[i];
  return NULL;
}

static unsigned edit_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  g_autofree unsigned *row = g_new(unsigned, lb + 1);
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    unsigned diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      unsigned up = row[j];
      unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
      unsigned best = MIN(row[j] + 1, row[j - 1] + 1);
      row[j] = MIN(best, diag + cost);
      diag = up;
    }
  }
  return row[lb];
}

const char *settings_suggest(const char *name)
{
  const char *best = NULL;
  unsigned best_d = G_MAXUINT;
  for (int i = 0; i < N_SETTINGS; i++) {
    unsigned d = edit_distance(name, defs[i].name);
    if (d < best_d) {
      best_d = d;
      best = defs[i].name;
    }
  }
  /* Only suggest when the name is plausibly a typo. */
  return best_d <= MAX(3u, (unsigned)strlen(name) / 3) ? best : NULL;
}

const char *settings_type_name(SettingType type)
{
  switch (type) {
  case SETTING_INT: return "int";
  case SETTING_SIZE: return "size";
  case SETTING_DOUBLE: return "float";
  case SETTING_BOOL: return "bool";
  case SETTING_ENUM: return "enum";
  case SETTING_STRING: return "string";
  }
  return "?";
}

/* ---- text parsing -------------------------------------------------------- */

static gboolean parse_scaled(const char *text, uint64_t unit, uint64_t *out)
{
  if (!text || !*text)
    return FALSE;
  const char *p = text;
  while (g_ascii_isspace(*p))
    p++;
  if (*p == '-' || *p == '+')
    return FALSE;
  /* strtoull itself would take blanks and a sign after "0x" ("0x-5" wraps
   * to 2^64 - 5), so the first digit is checked here. */
  gboolean hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  if (hex ? !g_ascii_isxdigit(p[2]) : !g_ascii_isdigit(p[0]))
    return FALSE;
  errno = 0;
  char *end;
  uint64_t v = hex ? g_ascii_strtoull(p + 2, &end, 16) : g_ascii_strtoull(p, &end, 10);
  if (errno)
    return FALSE;
  uint64_t mul = 1;
  switch (g_ascii_toupper(*end)) {
  case 'K': mul = unit; end++; break;
  case 'M': mul = unit * unit; end++; break;
  case 'G': mul = unit * unit * unit; end++; break;
  case 'T': mul = unit * unit * unit * unit; end++; break;
  default: break;
  }
  /* Accept "KB", "MB" ... after a suffix, as people write them, and "KiB",
   * "MiB" ... for sizes only: a binary prefix on a count of 1000s would lie. */
  if (mul > 1 && unit == 1024 && (*end == 'i' || *end == 'I'))
    end++;
  if (mul > 1 && (*end == 'b' || *end == 'B'))
    end++;
  while (g_ascii_isspace(*end))
    end++;
  if (*end)
    return FALSE;
  if (v && mul > UINT64_MAX / v)
    return FALSE;
  *out = v * mul;
  return TRUE;
}

gboolean settings_parse_size(const char *text, uint64_t *out)
{
  return parse_scaled(text, 1024, out);
}

gboolean settings_parse_count(const char *text, uint64_t *out)
{
  return parse_scaled(text, 1000, out);
}

gboolean settings_parse_bool(const char *text, gboolean *out)
{
  static const char *yes[] = { "true", "yes", "on", "1", NULL };
  static const char *no[] = { "false", "no", "off", "0", NULL };
  for (int i = 0; yes[i]; i++)
    if (g_ascii_strcasecmp(text, yes[i]) == 0)
      return *out = TRUE, TRUE;
  for (int i = 0; no[i]; i++)
    if (g_ascii_strcasecmp(text, no[i]) == 0)
      return *out = FALSE, TRUE;
  return FALSE;
}

char *settings_format_size(uint64_t bytes)
{
  static const char sfx[] = "KMGTP";
  if (bytes == 0 || bytes % 1024)
    return g_strdup_printf("%" G_GUINT64_FORMAT, bytes);
  int i = -1;
  while (bytes % 1024 == 0 && i < 4) {
    bytes /= 1024;
    i++;
  }
  return g_strdup_printf("%" G_GUINT64_FORMAT "%c", bytes, sfx[i]);
}

static int enum_index(const char *choices, const char *text)
{
  g_auto(GStrv) parts = g_strsplit(choices, "|", -1);
  for (int i = 0; parts[i]; i++)
    if (g_ascii_strcasecmp(parts[i], text) == 0)
      return i;
  return -1;
}

static char *enum_choice(const char *choices, int idx)
{
  g_auto(GStrv) parts = g_strsplit(choices, "|", -1);
  return g_strdup(parts[idx]);
}

/* The shortest text that reads back as the same double, with '.' whatever
 * the locale ("%g" would print 1234567.25 as 1.23457e+06). */
static char *format_double(double x)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int prec = 15; prec < 17; prec++) {
    char format[8];
    g_snprintf(format, sizeof format, "%%.%dg", prec);
    g_ascii_formatd(buf, sizeof buf, format, x);
    if (g_ascii_strtod(buf, NULL) == x)
      return g_strdup(buf);
  }
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.17g", x));
}

static char *format_range(const SettingDef *d)
{
  if (d->type == SETTING_SIZE) {
    g_autofree char *lo = settings_format_size((uint64_t)d->min);
    g_autofree char *hi = settings_format_size((uint64_t)d->max);
    return g_strdup_printf("a size from %s to %s (suffixes K, M, G, T)", lo, hi);
  }
  if (d->type == SETTING_INT)
    return g_strdup_printf("a whole number from %.0f to %.0f", d->min, d->max);
  g_autofree char *lo = format_double(d->min);
  g_autofree char *hi = format_double(d->max);
  return g_strdup_printf("a number from %s to %s", lo, hi);
}

static gboolean bad_value(const SettingDef *d, const char *value, const char *origin, const char *allowed, GError **error)
{
  g_set_error(error, MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE,
              "%s: setting '%s' cannot be '%s': it takes %s", origin, d->name, value, allowed);
  return FALSE;
}

static gboolean store(SettingValue *v, const SettingDef *d, const char *value, const char *origin, GError **error)
{
  g_autofree char *text = g_strstrip(g_strdup(value));
  switch (d->type) {
  case SETTING_INT:
  case SETTING_SIZE: {
    uint64_t x = 0;
    /* A minus sign only where the range allows negative values. */
    gboolean neg = d->type == SETTING_INT && d->min < 0 && text[0] == '-';
    gboolean ok = d->type == SETTING_SIZE ? settings_parse_size(text, &x) : settings_parse_count(text + neg, &x);
    double val = neg ? -(double)x : (double)x;
    if (!ok || (neg && x > (uint64_t)G_MAXINT64) || val < d->min || val > d->max) {
      g_autofree char *range = format_range(d);
      return bad_value(d, text, origin, range, error);
    }
    v->i = neg ? -(int64_t)x : (int64_t)x;
    v->d = val;
    g_free(v->text);
    v->text = d->type == SETTING_SIZE ? settings_format_size(x) : g_strdup_printf("%" G_GINT64_FORMAT, v->i);
    break;
  }
  case SETTING_DOUBLE: {
    char *end;
    errno = 0;
    double x = g_ascii_strtod(text, &end);
    if (end == text || *end || errno || !isfinite(x) || x < d->min || x > d->max) {
      g_autofree char *range = format_range(d);
      return bad_value(d, text, origin, range, error);
    }
    v->d = x;
    v->i = (int64_t)x;
    g_free(v->text);
    v->text = format_double(x);
    break;
  }
  case SETTING_BOOL: {
    gboolean b;
    if (!settings_parse_bool(text, &b))
      return bad_value(d, text, origin, "true or false", error);
    v->i = b;
    v->d = b;
    g_free(v->text);
    v->text = g_strdup(b ? "true" : "false");
    break;
  }
  case SETTING_ENUM: {
    int idx = enum_index(d->choices, text);
    if (idx < 0) {
      g_autofree char *allowed = g_strdup_printf("one of %s", d->choices);
      return bad_value(d, text, origin, allowed, error);
    }
    v->i = idx;
    v->d = idx;
    g_free(v->text);
    v->text = enum_choice(d->choices, idx);
    break;
  }
  case SETTING_STRING:
    g_free(v->text);
    v->text = g_strdup(text);
    v->i = 0;
    v->d = 0;
    break;
  }
  return TRUE;
}

Settings *settings_new(void)
{
  Settings *s = g_new0(Settings, 1);
  for (int i = 0; i < N_SETTINGS; i++) {
    g_autoptr(GError) err = NULL;
    if (!store(&s->v[i], &defs[i], defs[i].def, "settings.def", &err))
      g_error("%s", err->message); /* a broken default is a build bug */
  }
  return s;
}

Settings *settings_copy(const Settings *src)
{
  Settings *s = g_new0(Settings, 1);
  for (int i = 0; i < N_SETTINGS; i++) {
    s->v[i] = src->v[i];
    s->v[i].text = g_strdup(src->v[i].text);
    s->v[i].origin = g_strdup(src->v[i].origin);
  }
  s->last_seq = src->last_seq;
  return s;
}

void settings_free(Settings *s)
{
  if (!s)
    return;
  for (int i = 0; i < N_SETTINGS; i++) {
    g_free(s->v[i].text);
    g_free(s->v[i].origin);
  }
  g_free(s);
}

gboolean settings_set(Settings *s, const char *name, const char *value, const char *origin, GError **error)
{
  g_autofree char *key = g_strstrip(g_strdup(name));
  const SettingDef *d = settings_lookup(key);
  if (!d) {
    const char *near = settings_suggest(key);
    g_set_error(error, MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_UNKNOWN_KEY,
                "%s: unknown setting '%s'%s%s%s (`mmusim list settings` lists them all)", origin, key,
                near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    return FALSE;
  }
  if (!store(&s->v[d->id], d, value, origin, error))
    return FALSE;
  g_free(s->v[d->id].origin);
  s->v[d->id].origin = g_strdup(origin);
  s->v[d->id].seq = ++s->last_seq;
  return TRUE;
}

gboolean settings_set_pair(Settings *s, const char *pair, const char *origin, GError **error)
{
  const char *eq = strchr(pair, '=');
  if (!eq) {
    g_set_error(error, MMUSIM_SETTINGS_ERROR, SETTINGS_ERROR_BAD_VALUE,
                "%s: '%s' is not KEY=VALUE (for example -s thp.enabled=never)", origin, pair);
    return FALSE;
  }
  g_autofree char *key = g_strndup(pair, eq - pair);
  return settings_set(s, key, eq + 1, origin, error);
}

int64_t settings_int(const Settings *s, SettingId id)
{
  return s->v[id].i;
}

double settings_double(const Settings *s, SettingId id)
{
  return s->v[id].d;
}

gboolean settings_bool(const Settings *s, SettingId id)
{
  return s->v[id].i != 0;
}

const char *settings_str(const Settings *s, SettingId id)
{
  return s->v[id].text;
}

gboolean settings_is_set(const Settings *s, SettingId id)
{
  return s->v[id].seq != 0;
}

const char *settings_origin(const Settings *s, SettingId id)
{
  return s->v[id].origin;
}

char *settings_blame(const Settings *s, SettingId id)
{
  const char *origin = s->v[id].origin;
  if (!origin)
    return g_strdup_printf("%s = %s (default)", defs[id].name, s->v[id].text);
  return g_strdup_printf("%s = %s (from %s)", defs[id].name, s->v[id].text, origin);
}

char *settings_prefix(const Settings *s, SettingId id)
{
  const char *origin = s->v[id].origin;
  return origin ? g_strdup_printf("%s: ", origin) : g_strdup("");
}

SettingId settings_latest(const Settings *s, const SettingId *ids, unsigned n)
{
  SettingId best = ids[0];
  for (unsigned i = 1; i < n; i++)
    if (s->v[ids[i]].seq > s->v[best].seq)
      best = ids[i];
  return best;
}

void settings_append_shown(GString *out, const char *text, gsize max_chars)
{
  gsize shown = 0;
  for (const char *s = text; *s; s++) {
    gsize width = g_ascii_isprint(*s) ? 1 : strlen("\\xNN");
    if (shown + width > max_chars) {
      g_string_append(out, "...");
      return;
    }
    shown += width;
    if (g_ascii_isprint(*s))
      g_string_append_c(out, *s);
    else
      g_string_append_printf(out, "\\x%02x", (unsigned char)*s);
  }
}

/* A line of an .ini file as its messages quote it. */
static char *ini_shown(const char *line)
{
  GString *out = g_string_new(NULL);
  settings_append_shown(out, line, SETTINGS_INI_SHOWN_CHARS);
  return g_string_free(out, FALSE);
}

/* GKeyFile gives no string of a value that is not UTF-8 (and a header or a
 * key is matched byte for byte): such a line is refused here, with its
 * number and the offset of its first bad byte.  Comments may hold anything. */
static gboolean ini_utf8(const char *origin, int line_no, const char *line, GQuark domain, int code, GError **error)
{
  const char *bad;
  if (g_utf8_validate(line, -1, &bad))
    return TRUE;
  g_autofree char *shown = ini_shown(line);
  g_set_error(error, domain, code,
              "%s:%d: '%s' is not valid UTF-8 (byte 0x%02x): save the file as UTF-8 (or ASCII)", origin, line_no,
              shown, (unsigned char)*bad);
  return FALSE;
}

/* `what` ("group" or "group\nkey") seen for the first time at line_no;
 * else an error naming both lines. */
static gboolean ini_once(GHashTable *seen, const char *what, const char *origin, int line_no, GQuark domain,
                         int code, GError **error)
{
  gpointer first;
  if (!g_hash_table_lookup_extended(seen, what, NULL, &first)) {
    g_hash_table_insert(seen, g_strdup(what), GINT_TO_POINTER(line_no));
    return TRUE;
  }
  const char *nl = strchr(what, '\n');
  g_autofree char *group = g_strndup(what, nl ? (gsize)(nl - what) : strlen(what));
  g_autoptr(GString) shown = g_string_new(NULL);
  settings_append_shown(shown, nl ? nl + 1 : what, SETTINGS_INI_SHOWN_CHARS);
  if (nl)
    g_set_error(error, domain, code,
                "%s:%d: %s is given twice in [%s] (first at line %d): only one would count; keep one", origin,
                line_no, shown->str, group, GPOINTER_TO_INT(first));
  else
    g_set_error(error, domain, code,
                "%s:%d: [%s] is given twice (first at line %d): write each group once, its keys together", origin,
                line_no, shown->str, GPOINTER_TO_INT(first));
  return FALSE;
}

/* Check the lines of an .ini file the way GKeyFile reads them, so that a
 * malformed one is reported with its file and line number (GKeyFile's
 * messages have neither).  Lines are quoted short and escaped: the file
 * may be a binary one given by mistake. */
gboolean settings_read_file(const char *path, const char *what, GQuark domain, int code, char **data, gsize *len,
                            GError **error)
{
  *data = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, domain, code, "cannot open %s '%s': %s", what, path, g_strerror(e));
    return FALSE;
  }
  /* One byte past the limit tells a file at the limit from a longer one;
   * an endless stream stops there. */
  gsize cap = SETTINGS_FILE_MAX_BYTES + 1, got = 0, size = 4096;
  char *buf = g_malloc(size + 1);
  gboolean failed = FALSE;
  for (;;) {
    if (got == size) {
      size = MIN(size * 2, cap);
      buf = g_realloc(buf, size + 1);
    }
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      g_set_error(error, domain, code, "cannot read %s '%s': %s", what, path, g_strerror(e));
      failed = TRUE;
      break;
    }
    got += (gsize)n;
    if (n == 0 || got == cap)
      break;
  }
  close(fd);
  if (failed) {
    g_free(buf);
    return FALSE;
  }
  if (got > SETTINGS_FILE_MAX_BYTES) {
    g_free(buf);
    g_set_error(error, domain, code,
                "%s '%s' is larger than %u MiB, the limit of such files (or an endless stream): give the .ini file itself",
                what, path, SETTINGS_FILE_MAX_BYTES / (1024 * 1024));
    return FALSE;
  }
  buf[got] = '\0';
  *data = buf;
  *len = got;
  return TRUE;
}

gboolean settings_ini_check(const char *origin, const char *data, gsize len, GQuark domain, int code,
                            const char *group_hint, GError **error)
{
  const char *nul = memchr(data, '\0', len);
  if (nul) {
    unsigned line_no = 1;
    for (const char *c = data; c < nul; c++)
      line_no += *c == '\n';
    g_set_error(error, domain, code,
                "%s:%u: a NUL byte (byte offset %" G_GSIZE_FORMAT "): is this a binary file? give a text .ini file",
                origin, line_no, (gsize)(nul - data));
    return FALSE;
  }
  g_autofree char *copy = g_strndup(data, len);
  g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
  gboolean in_group = FALSE;
  /* GKeyFile merges a group written twice and keeps the last of a key
   * written twice in a group, in silence: both are refused, with the lines.
   * Keys: "group\nkey" -> its line; groups: "group" -> its line. */
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *group = NULL;
  for (int i = 0; lines[i]; i++) {
    char *line = g_strstrip(lines[i]);
    if (!*line || *line == '#')
      continue;
    if (*line == '[') {
      char *close = strchr(line, ']');
      if (!close) {
        g_autofree char *shown = ini_shown(line);
        g_set_error(error, domain, code,
                    "%s:%d: group header '%s' has no closing ']': write it as [name]", origin, i + 1, shown);
        return FALSE;
      }
      if (close[1]) {
        g_autofree char *shown = ini_shown(line);
        g_set_error(error, domain, code,
                    "%s:%d: '%s' has text after its group header: put each KEY = VALUE on a line of its own", origin,
                    i + 1, shown);
        return FALSE;
      }
      in_group = TRUE;
      if (!ini_utf8(origin, i + 1, line, domain, code, error))
        return FALSE;
      g_free(group);
      group = g_strndup(line + 1, (gsize)(close - line - 1));
      if (!ini_once(seen, group, origin, i + 1, domain, code, error))
        return FALSE;
      continue;
    }
    if (!strchr(line, '=')) {
      g_autofree char *shown = ini_shown(line);
      g_set_error(error, domain, code,
                  "%s:%d: '%s' is neither KEY = VALUE, a [group] header nor a # comment", origin, i + 1, shown);
      return FALSE;
    }
    if (!in_group) {
      g_autofree char *shown = ini_shown(line);
      g_set_error(error, domain, code,
                  "%s:%d: '%s' comes before any [group] header: put it under one, such as %s", origin, i + 1,
                  shown, group_hint);
      return FALSE;
    }
    if (!ini_utf8(origin, i + 1, line, domain, code, error))
      return FALSE;
    g_autofree char *key = g_strndup(line, (gsize)(strchr(line, '=') - line));
    g_autofree char *where = g_strdup_printf("%s\n%s", group, g_strstrip(key));
    if (!ini_once(seen, where, origin, i + 1, domain, code, error))
      return FALSE;
  }
  return TRUE;
}
