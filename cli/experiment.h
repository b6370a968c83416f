/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * experiment.h - experiment files: a base configuration and the axes to vary.
 *
 *   [experiment]
 *   name = thp-modes                 (default: the file name without .ini)
 *   machine = skylake                (preset or .ini, relative to this file)
 *   workload = ptrchase:size=256M,accesses=1M   (or trace = FILE [format = F])
 *   repeat = 3                       (runs per configuration, mean and stddev)
 *   seed = 7                         (optional, as run --seed; 0 is a seed too)
 *   warmup = 1000                    (optional, as run --warmup)
 *   whole = true                     (optional, as run --whole: count setup too)
 *   metric = ns_per_access           (counter the table compares)
 *   combine = product                (product of the axes, or zip: i-th values together)
 *   [settings]
 *   thp.defrag = madvise             (applied to every configuration, in order)
 *   [vary]
 *   thp.enabled = never, madvise, always
 *
 * An axis key is a setting name, or `machine` or `workload` to vary those.
 * Configurations come out in a fixed order: with `product` the last axis
 * varies fastest.  Each has an id derived from everything that decides its
 * result, so a result file names the configuration it belongs to whatever
 * the order or the host it ran on.
 */
#ifndef MMUSIM_EXPERIMENT_H
#define MMUSIM_EXPERIMENT_H

#include <glib.h>
#include "runner.h"

typedef struct {
  char *id;            /* 12 hex digits of a SHA-256 of the canonical configuration */
  char *label;         /* "thp.enabled=never, cpu.mshrs=10" (the varied values) */
  char **vary_keys;    /* the axes, NULL-terminated */
  char **vary_values;  /* this configuration's value on each axis */
  char *machine;
  char *workload;
  char **set;          /* KEY=VALUE pairs: [settings] then the varied settings */
  char **set_origin;   /* where each pair comes from ("sweep.ini [vary] tlb.stlb_entries") */
  RunSpec spec;        /* points into the fields above and the experiment */
} ExpConfig;

typedef struct {
  char *path;          /* the experiment file */
  char *name;
  char *trace, *format;
  unsigned trace_line; /* line of the trace key in the file, 0: unknown */
  unsigned repeat;
  uint64_t seed, warmup;
  gboolean seed_given; /* a seed line: its value, 0 too, replaces the workload's */
  gboolean whole;      /* count the whole input, as run --whole */
  char *metric;
  int metric_id;       /* CounterId */
  guint n_axes;
  GPtrArray *configs;  /* of ExpConfig* */
} Experiment;

/* The most configurations an experiment may give (the product of its axes,
 * or the values of one with combine = zip): each is a machine built and
 * checked before anything runs, and a result file. */
#define EXPERIMENT_MAX_CONFIGS 1000000u
/* The longest name, in bytes. */
#define EXPERIMENT_MAX_NAME 200

/* Whether name can name an experiment: it becomes the default output folder
 * NAME.sweep, in the current folder.  Not empty, at most
 * EXPERIMENT_MAX_NAME bytes, no '/' or '\\', no control character, not
 * starting with '.'; anything else (UTF-8, spaces) is allowed. */
gboolean experiment_name_valid(const char *name, GError **error);

/* Parse and check an experiment file: every configuration's settings are
 * resolved once here, so a bad key or value is reported (naming the file,
 * the section and the key) before anything runs. */
Experiment *experiment_load(const char *path, GError **error);
/* The same on the file's text (`path` names it in messages and places the
 * paths it gives), building the machines of the first `check_first`
 * configurations only (G_MAXUINT: all, as experiment_load does; fewer leaves
 * the rest unchecked and not to be run): the fuzz targets' entry point,
 * which bounds the work one input can ask for. */
Experiment *experiment_parse(const char *path, const char *data, gsize data_len, guint check_first, GError **error);
/* Open every configuration's input once (the trace, shared by all, or each
 * workload) and close it again: a missing trace or a bad workload spec is
 * reported, naming the file and the configuration, before anything runs or
 * any folder is made.  Apart from experiment_load, which reads the file
 * alone (a sweep that only compares results needs no trace). */
gboolean experiment_check_inputs(const Experiment *e, GError **error);
void experiment_free(Experiment *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Experiment, experiment_free)

/* Bad input in the file at `path`: *error says "PATH: message" (exit 2);
 * returns FALSE.  Experiment files and sweep result files use it. */
gboolean exp_error(GError **error, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

#endif
