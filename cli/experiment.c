/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * experiment.c - experiment files (see experiment.h).
 */
#include "config.h"
#include "experiment.h"

#include <string.h>
#include "cache.h"
#include "machine.h"
#include "stats.h"

#define EXP_GROUP "experiment"
#define EXP_ID_DIGITS 12

gboolean exp_error(GError **error, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, "%s: %s", path, msg);
  return FALSE;
}

static void config_free(gpointer p)
{
  ExpConfig *c = p;
  g_free(c->id);
  g_free(c->label);
  g_strfreev(c->vary_keys);
  g_strfreev(c->vary_values);
  g_free(c->machine);
  g_free(c->workload);
  g_strfreev(c->set);
  g_strfreev(c->set_origin);
  g_free(c);
}

void experiment_free(Experiment *e)
{
  if (!e)
    return;
  g_free(e->path);
  g_free(e->name);
  g_free(e->trace);
  g_free(e->format);
  g_free(e->metric);
  if (e->configs)
    g_ptr_array_free(e->configs, TRUE);
  g_free(e);
}

gboolean experiment_name_valid(const char *name, GError **error)
{
  const char *why = NULL;
  if (!*name)
    why = "it is empty";
  else if (strlen(name) > EXPERIMENT_MAX_NAME)
    why = "it is longer than " G_STRINGIFY(EXPERIMENT_MAX_NAME) " bytes";
  else if (*name == '.')
    why = "it starts with '.'";
  else if (strpbrk(name, "/\\"))
    why = "it holds a '/' or '\\'";
  for (const char *p = name; !why && *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      why = "it holds a control character";
  if (!why)
    return TRUE;
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
              "%s; the name makes the output folder NAME.sweep in the current folder, so give one of letters, digits, "
              "spaces and punctuation other than '/' and '\\', not starting with '.'",
              why);
  return FALSE;
}

/* A machine .ini or trace named relative to the experiment file. */
static char *relative_to(const char *exp_path, const char *value)
{
  if (g_path_is_absolute(value) || strcmp(value, "-") == 0)
    return g_strdup(value);
  g_autofree char *dir = g_path_get_dirname(exp_path);
  return g_build_filename(dir, value, NULL);
}

static char *resolve_machine(const char *exp_path, const char *value)
{
  return g_str_has_suffix(value, ".ini") ? relative_to(exp_path, value) : g_strdup(value);
}

/* The value of key in [group], stripped, in *out; NULL when the key is
 * absent.  FALSE, naming the file, group and key, when GKeyFile cannot give
 * it (a value that is not UTF-8: settings_ini_check refuses those first). */
static gboolean get_string(GKeyFile *kf, const char *path, const char *group, const char *key, char **out,
                           GError **error)
{
  GError *err = NULL;
  *out = NULL;
  if (!g_key_file_has_key(kf, group, key, NULL))
    return TRUE;
  *out = g_key_file_get_string(kf, group, key, &err);
  if (!*out) {
    exp_error(error, path, "[%s] %s: %s; write the value in UTF-8", group, key, err ? err->message : "no value");
    g_clear_error(&err);
    return FALSE;
  }
  g_strstrip(*out);
  return TRUE;
}

/* An optional unsigned integer key of [experiment]. */
static gboolean get_uint(GKeyFile *kf, const char *path, const char *key, uint64_t def, uint64_t *out, GError **error)
{
  g_autofree char *text = NULL;
  if (!get_string(kf, path, EXP_GROUP, key, &text, error))
    return FALSE;
  if (!text) {
    *out = def;
    return TRUE;
  }
  if (!settings_parse_count(text, out))
    return exp_error(error, path, "[experiment] %s = '%s': give a whole number", key, text);
  return TRUE;
}

/* The line number of `key` in [group] of an .ini file's text, 0 if absent
 * (GKeyFile keeps no line numbers). */
static unsigned ini_key_line(const char *data, gsize len, const char *group, const char *key)
{
  g_autofree char *copy = g_strndup(data, len);
  g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
  gboolean in_group = FALSE;
  for (unsigned i = 0; lines[i]; i++) {
    char *line = g_strstrip(lines[i]);
    char *eq = strchr(line, '=');
    if (*line == '[') {
      char *close = strchr(line, ']');
      in_group = close && (size_t)(close - line - 1) == strlen(group) && strncmp(line + 1, group, strlen(group)) == 0;
    } else if (in_group && eq) {
      *eq = '\0';
      if (strcmp(g_strstrip(line), key) == 0)
        return i + 1;
    }
  }
  return 0;
}

/* Split "a, b, c" into trimmed values; with a semicolon anywhere, split on
 * semicolons instead, as workload specs hold commas. */
static char **split_values(const char *text)
{
  /* By hand, one pass: an axis may be a line of a million values. */
  char sep = strchr(text, ';') ? ';' : ',';
  GPtrArray *v = g_ptr_array_new();
  for (const char *p = text;; p++) {
    const char *end = p;
    while (*end && *end != sep)
      end++;
    g_ptr_array_add(v, g_strstrip(g_strndup(p, (gsize)(end - p))));
    if (!*end)
      break;
    p = end;
  }
  g_ptr_array_add(v, NULL);
  return (char **)g_ptr_array_free(v, FALSE);
}

/* The identity of a configuration: everything that decides its result, as
 * written in the experiment (paths as given, so the id is the same on every
 * host). */
/* Two values of one axis that are one value written two ways ("1, 01",
 * "10, 0xa", "2M, 2097152", "yes, true") would run one configuration
 * twice: each is read with the setting's own parser and a repeat refused,
 * naming both spellings.  A value the parser refuses is left for the
 * configuration's own check (finish_config), with its message; machine and
 * workload values are compared as written.  Not with combine = zip, where
 * one axis repeats a value to pair it with others (a repeated pair is the
 * repeated configuration id below). */
static gboolean axis_repeats(const char *path, unsigned line, const char *axis, char *const *values, GError **error)
{
  const SettingDef *d = settings_lookup(axis);
  g_autoptr(Settings) scratch = settings_new();
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; values[i]; i++) {
    char *key;
    if (!d)
      key = g_strdup(values[i]);
    else if (!settings_set(scratch, axis, values[i], "[vary]", NULL))
      continue;
    else if (d->type == SETTING_DOUBLE)
      key = g_strdup_printf("%.17g", settings_double(scratch, d->id));
    else if (d->type == SETTING_STRING)
      key = g_strdup(settings_str(scratch, d->id));
    else /* INT, SIZE, BOOL, ENUM (its index) */
      key = g_strdup_printf("%" G_GINT64_FORMAT, settings_int(scratch, d->id));
    gpointer first;
    if (g_hash_table_lookup_extended(seen, key, NULL, &first)) {
      const char *a = values[GPOINTER_TO_UINT(first)];
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                  "%s:%u: [vary] %s gives one value twice: '%s' and '%s'%s, which would run one configuration "
                  "twice; keep one", path, line, axis, a, values[i], strcmp(a, values[i]) ? " are the same" : "");
      g_free(key);
      return FALSE;
    }
    g_hash_table_insert(seen, key, GUINT_TO_POINTER(i));
  }
  return TRUE;
}

static char *config_id(const Experiment *e, const char *machine, const char *workload, char **set)
{
  GString *canon = g_string_new(NULL);
  g_string_append_printf(canon, "machine=%s\nworkload=%s\ntrace=%s\nformat=%s\nrepeat=%u\nseed=%" G_GUINT64_FORMAT
                                "\nwarmup=%" G_GUINT64_FORMAT "\n",
                         machine, workload ? workload : "", e->trace ? e->trace : "", e->format ? e->format : "",
                         e->repeat, e->seed, e->warmup);
  if (e->whole)
    g_string_append(canon, "whole=1\n"); /* only when set: older ids stay */
  /* `seed = 0` once meant no seed; the same id for the seed 0 it now
   * gives would take results of the workload's own seed for it. */
  if (e->seed_given && e->seed == 0)
    g_string_append(canon, "seed_given=1\n");
  for (char **p = set; p && *p; p++)
    g_string_append_printf(canon, "set=%s\n", *p);
  char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canon->str, (gssize)canon->len);
  g_string_free(canon, TRUE);
  sum[EXP_ID_DIGITS] = '\0';
  return sum;
}

static gboolean is_special_axis(const char *key)
{
  return strcmp(key, "machine") == 0 || strcmp(key, "workload") == 0;
}

/* Build configuration number `pick` given the index into each axis. */
static ExpConfig *make_config(Experiment *e, char **fixed, char **fixed_values, char **axes, char ***values,
                              const guint *index, const char *base_machine, const char *base_workload)
{
  ExpConfig *c = g_new0(ExpConfig, 1);
  GPtrArray *set = g_ptr_array_new();
  GPtrArray *set_origin = g_ptr_array_new();
  GString *label = g_string_new(NULL);
  guint n_axes = g_strv_length(axes);
  c->vary_keys = g_new0(char *, n_axes + 1);
  c->vary_values = g_new0(char *, n_axes + 1);
  c->machine = g_strdup(base_machine);
  c->workload = g_strdup(base_workload);

  for (guint k = 0; fixed[k]; k++) {
    g_ptr_array_add(set, g_strdup_printf("%s=%s", fixed[k], fixed_values[k]));
    g_ptr_array_add(set_origin, g_strdup_printf("%s [settings] %s", e->path, fixed[k]));
  }
  for (guint a = 0; a < n_axes; a++) {
    const char *v = values[a][index[a]];
    c->vary_keys[a] = g_strdup(axes[a]);
    c->vary_values[a] = g_strdup(v);
    g_string_append_printf(label, "%s%s=%s", a ? ", " : "", axes[a], v);
    if (strcmp(axes[a], "machine") == 0) {
      g_free(c->machine);
      c->machine = g_strdup(v);
    } else if (strcmp(axes[a], "workload") == 0) {
      g_free(c->workload);
      c->workload = g_strdup(v);
    } else {
      g_ptr_array_add(set, g_strdup_printf("%s=%s", axes[a], v));
      g_ptr_array_add(set_origin, g_strdup_printf("%s [vary] %s", e->path, axes[a]));
    }
  }
  g_ptr_array_add(set, NULL);
  c->set = (char **)g_ptr_array_free(set, FALSE);
  g_ptr_array_add(set_origin, NULL);
  c->set_origin = (char **)g_ptr_array_free(set_origin, FALSE);
  c->label = g_string_free(label, FALSE);
  if (!*c->label) {
    g_free(c->label);
    c->label = g_strdup("base");
  }
  c->id = config_id(e, c->machine, c->workload, c->set);
  return c;
}

/* Resolve the paths of c and fill its RunSpec. */
static void finish_config(Experiment *e, ExpConfig *c)
{
  char *machine = resolve_machine(e->path, c->machine);
  g_free(c->machine);
  c->machine = machine;
  c->spec = (RunSpec){
    .machine = c->machine,
    .set = (const char *const *)c->set,
    .set_origin = (const char *const *)c->set_origin,
    .workload = c->workload,
    .trace = e->trace,
    .format = e->format,
    .repeat = e->repeat,
    .seed_given = e->seed_given,
    .seed = e->seed,
    .warmup = e->warmup,
    .whole = e->whole,
  };
}

/* Check c's settings and machine. */
static gboolean check_config(Experiment *e, ExpConfig *c, GError **error)
{
  GError *err = NULL;
  g_autoptr(Settings) s = runner_settings(&c->spec, &err);
  /* Build the machine once too: an impossible one is bad input, found
   * before any configuration runs. */
  Machine *m = s ? machine_new(c->machine, s, NULL, &err) : NULL;
  machine_free(m);
  if (!m) {
    exp_error(error, e->path, "configuration %s: %s", c->label, err->message);
    g_error_free(err);
    return FALSE;
  }
  return TRUE;
}

Experiment *experiment_load(const char *path, GError **error)
{
  g_autofree char *data = NULL;
  gsize data_len = 0;
  if (!settings_read_file(path, "experiment file", MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, &data, &data_len, error))
    return NULL;
  return experiment_parse(path, data, data_len, G_MAXUINT, error);
}

Experiment *experiment_parse(const char *path, const char *data, gsize data_len, guint check_first, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  GError *err = NULL;
  if (!settings_ini_check(path, data, data_len, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, "[experiment], [settings] or [vary]", error))
    return NULL;
  if (!g_key_file_load_from_data(kf, data, data_len, G_KEY_FILE_NONE, &err)) {
    exp_error(error, path, "%s", err->message);
    g_error_free(err);
    return NULL;
  }
  g_autoptr(Experiment) e = g_new0(Experiment, 1);
  e->path = g_strdup(path);
  if (!g_key_file_has_group(kf, EXP_GROUP)) {
    exp_error(error, path, "no [experiment] group: it names the machine, the workload and the metric");
    return NULL;
  }
  static const char *const known[] = { "name", "machine", "workload", "trace", "format", "repeat",
                                       "seed", "warmup", "whole", "metric", "combine", NULL };
  g_auto(GStrv) keys = g_key_file_get_keys(kf, EXP_GROUP, NULL, NULL);
  for (char **k = keys; k && *k; k++)
    if (!g_strv_contains(known, *k)) {
      g_autofree char *list = g_strjoinv(", ", (char **)known);
      exp_error(error, path, "[experiment] has no key '%s' (keys: %s)", *k, list);
      return NULL;
    }
  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  for (char **g = groups; *g; g++)
    if (strcmp(*g, EXP_GROUP) && strcmp(*g, "settings") && strcmp(*g, "vary")) {
      exp_error(error, path, "unknown group [%s] (groups: [experiment], [settings], [vary])", *g);
      return NULL;
    }

  g_autofree char *base = g_path_get_basename(path);
  if (g_str_has_suffix(base, ".ini"))
    base[strlen(base) - 4] = '\0';
  g_autofree char *machine = NULL, *workload = NULL, *trace = NULL, *combine = NULL;
  if (!get_string(kf, path, EXP_GROUP, "name", &e->name, error) ||
      !get_string(kf, path, EXP_GROUP, "machine", &machine, error) ||
      !get_string(kf, path, EXP_GROUP, "workload", &workload, error) ||
      !get_string(kf, path, EXP_GROUP, "trace", &trace, error) ||
      !get_string(kf, path, EXP_GROUP, "format", &e->format, error) ||
      !get_string(kf, path, EXP_GROUP, "metric", &e->metric, error) ||
      !get_string(kf, path, EXP_GROUP, "combine", &combine, error))
    return NULL;
  if (!e->name)
    e->name = g_strdup(base);
  if (!experiment_name_valid(e->name, error)) {
    g_autoptr(GString) shown = g_string_new(NULL);
    settings_append_shown(shown, e->name, 60);
    if (g_key_file_has_key(kf, EXP_GROUP, "name", NULL))
      g_prefix_error(error, "%s:%u: [experiment] name = '%s': ", path, ini_key_line(data, data_len, EXP_GROUP, "name"),
                     shown->str);
    else
      g_prefix_error(error, "%s: the name '%s' taken from the file's name: ", path, shown->str);
    return NULL;
  }
  if (trace) {
    e->trace_line = ini_key_line(data, data_len, EXP_GROUP, "trace");
    e->trace = relative_to(path, trace);
    if (strcmp(e->trace, "-") == 0) {
      exp_error(error, path, "[experiment] trace = -: a sweep reads its trace once per configuration; give a file");
      return NULL;
    }
  }
  uint64_t repeat;
  if (!get_uint(kf, path, "repeat", 1, &repeat, error) || !get_uint(kf, path, "seed", 0, &e->seed, error) ||
      !get_uint(kf, path, "warmup", 0, &e->warmup, error))
    return NULL;
  e->seed_given = g_key_file_has_key(kf, EXP_GROUP, "seed", NULL);
  if (g_key_file_has_key(kf, EXP_GROUP, "whole", NULL)) {
    GError *bad = NULL;
    e->whole = g_key_file_get_boolean(kf, EXP_GROUP, "whole", &bad);
    if (bad) {
      g_clear_error(&bad);
      g_autofree char *text = g_key_file_get_value(kf, EXP_GROUP, "whole", NULL);
      exp_error(error, path, "[experiment] whole = '%s': give true or false", text ? text : "");
      return NULL;
    }
  }
  if (repeat < 1 || repeat > 10000) {
    exp_error(error, path, "[experiment] repeat = %" G_GUINT64_FORMAT ": give 1 to 10000", repeat);
    return NULL;
  }
  e->repeat = (unsigned)repeat;
  if (!e->metric)
    e->metric = g_strdup("ns_per_access");
  e->metric_id = -1;
  for (int i = 0; i < N_COUNTERS; i++)
    if (strcmp(counter_def((CounterId)i)->name, e->metric) == 0)
      e->metric_id = i;
  if (e->metric_id < 0) {
    exp_error(error, path, "[experiment] metric = %s: not a counter (see `mmusim list counters`)", e->metric);
    return NULL;
  }
  gboolean zip = FALSE;
  if (combine) {
    if (strcmp(combine, "zip") == 0)
      zip = TRUE;
    else if (strcmp(combine, "product") != 0) {
      exp_error(error, path, "[experiment] combine = %s: give product or zip", combine);
      return NULL;
    }
  }

  /* The fixed settings, the same in every configuration. */
  g_auto(GStrv) fixed = g_key_file_get_keys(kf, "settings", NULL, NULL);
  if (!fixed)
    fixed = g_new0(char *, 1);
  g_auto(GStrv) fixed_values = g_new0(char *, g_strv_length(fixed) + 1);
  for (guint k = 0; fixed[k]; k++)
    if (!get_string(kf, path, "settings", fixed[k], &fixed_values[k], error))
      return NULL;

  /* The axes. */
  g_auto(GStrv) axes = g_key_file_get_keys(kf, "vary", NULL, NULL);
  if (!axes)
    axes = g_new0(char *, 1);
  guint n = g_strv_length(axes);
  e->n_axes = n;
  char ***values = g_new0(char **, n + 1);
  guint *len = g_new0(guint, n + 1);
  gboolean ok = TRUE;
  for (guint a = 0; a < n && ok; a++) {
    g_autofree char *text = NULL;
    if (!get_string(kf, path, "vary", axes[a], &text, error)) {
      ok = FALSE;
      break;
    }
    values[a] = split_values(text);
    len[a] = g_strv_length(values[a]);
    if (len[a] == 0 || (len[a] == 1 && !*values[a][0]))
      ok = exp_error(error, path, "[vary] %s has no values", axes[a]);
    else if (!is_special_axis(axes[a]) && !settings_lookup(axes[a])) {
      /* The registry's own message, with its suggestion. */
      g_autoptr(Settings) scratch = settings_new();
      GError *why = NULL;
      g_autofree char *pair = g_strdup_printf("%s=%s", axes[a], values[a][0]);
      settings_set_pair(scratch, pair, "[vary]", &why);
      ok = exp_error(error, path, "%s; an axis is a setting, machine or workload", why ? why->message : axes[a]);
      g_clear_error(&why);
    }
    else if (!zip && !axis_repeats(path, ini_key_line(data, data_len, "vary", axes[a]), axes[a], values[a], error))
      ok = FALSE;
    else if (zip && a > 0 && len[a] != len[0])
      ok = exp_error(error, path, "[vary] combine = zip needs as many values on every axis (%s has %u, %s has %u)",
                     axes[0], len[0], axes[a], len[a]);
  }
  if (ok && !machine && !g_strv_contains((const char *const *)axes, "machine"))
    machine = g_strdup(RUNNER_DEFAULT_MACHINE);
  if (ok && !workload && !e->trace && !g_strv_contains((const char *const *)axes, "workload"))
    ok = exp_error(error, path, "[experiment] gives neither workload nor trace");
  if (ok && (workload || g_strv_contains((const char *const *)axes, "workload")) && e->trace)
    ok = exp_error(error, path, "[experiment] gives both a workload and a trace; keep one");

  /* How many configurations: refused above EXPERIMENT_MAX_CONFIGS, before
   * the product can wrap or anything is built. */
  guint total = 1;
  if (ok && n && zip)
    total = len[0];
  else if (ok) {
    uint64_t product = 1;
    for (guint a = 0; a < n && ok; a++) {
      if (product > EXPERIMENT_MAX_CONFIGS / len[a]) {
        GString *sizes = g_string_new(NULL);
        for (guint b = 0; b < n; b++)
          g_string_append_printf(sizes, "%s%s %u", b ? " x " : "", axes[b], len[b]);
        ok = exp_error(error, path,
                       "[vary] gives more than %u configurations (%s); a sweep runs at most %u: split it into "
                       "several experiments, or pair the values with combine = zip",
                       EXPERIMENT_MAX_CONFIGS, sizes->str, EXPERIMENT_MAX_CONFIGS);
        g_string_free(sizes, TRUE);
      }
      product *= len[a];
    }
    total = (guint)product;
  }
  if (ok && total > EXPERIMENT_MAX_CONFIGS)
    ok = exp_error(error, path, "[vary] gives %u configurations; a sweep runs at most %u: split it into several "
                   "experiments", total, EXPERIMENT_MAX_CONFIGS);

  e->configs = g_ptr_array_new_with_free_func(config_free);
  /* id -> its first configuration: a repeat is found in one lookup, not
   * by comparing with every configuration before it. */
  g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
  if (ok) {
    guint *index = g_new0(guint, n + 1);
    for (guint c = 0; c < total && ok; c++) {
      if (zip) {
        for (guint a = 0; a < n; a++)
          index[a] = c;
      } else {
        guint rest = c;
        for (guint a = n; a-- > 0;) {
          index[a] = rest % len[a];
          rest /= len[a];
        }
      }
      ExpConfig *cfg = make_config(e, fixed, fixed_values, axes, values, index,
                                   machine ? machine : RUNNER_DEFAULT_MACHINE, workload);
      g_ptr_array_add(e->configs, cfg);
      finish_config(e, cfg);
      const ExpConfig *same = g_hash_table_lookup(ids, cfg->id);
      if (same)
        ok = exp_error(error, path, "configurations %s and %s are the same run; remove the repeated value",
                       same->label, cfg->label);
      else
        g_hash_table_insert(ids, cfg->id, cfg);
    }
    g_free(index);
    /* Then each configuration's machine, built and freed: after every
     * configuration is made, so that what a configuration keeps is not
     * placed between the pieces of a freed machine, which the next one
     * would not fit (the host's heap then grew by some 40 KiB a
     * configuration: 1.8 GB for 10,000). */
    for (guint c = 0; c < e->configs->len && c < check_first && ok; c++)
      ok = check_config(e, g_ptr_array_index(e->configs, c), error);
  }
  for (guint a = 0; a < n; a++)
    g_strfreev(values[a]);
  g_free(values);
  g_free(len);
  if (!ok)
    return NULL;
  return g_steal_pointer(&e);
}

gboolean experiment_check_inputs(const Experiment *e, GError **error)
{
  for (guint i = 0; i < e->configs->len; i++) {
    const ExpConfig *c = g_ptr_array_index(e->configs, i);
    if (!c->workload && i > 0)
      break; /* one trace for all: opened once */
    GError *err = NULL;
    TraceSource *src = runner_open_input(&c->spec, NULL, &err);
    if (src) {
      trace_source_free(src);
      continue;
    }
    if (c->workload) {
      exp_error(error, e->path, "configuration %s: %s", c->label, err->message);
    } else {
      g_autofree char *where = e->trace_line ? g_strdup_printf("%s:%u", e->path, e->trace_line) : g_strdup(e->path);
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                  "%s: [experiment] trace, configuration %s%s: %s; give a trace file, named relative to the "
                  "experiment file", where, c->label, e->configs->len > 1 ? " (every configuration reads it)" : "",
                  err->message);
    }
    g_error_free(err);
    return FALSE;
  }
  return TRUE;
}
