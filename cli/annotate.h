/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * annotate.h - `mmusim run --annotate FILE`: the report of an annotation
 * (sim/annotation.h), top N instructions and mappings by a metric, as text
 * (cg_annotate's and `perf report`'s shape) or JSON.
 */
#ifndef MMUSIM_CLI_ANNOTATE_H
#define MMUSIM_CLI_ANNOTATE_H

#include <glib.h>
#include <stdio.h>
#include "annotation.h"
#include "stats.h"

#define ANNOTATE_DEFAULT_TOP 20

/* How the instruction table groups its rows, as perf report --sort: one
 * row an instruction (ip), a function of an object (symbol; an address
 * that names none stays a row of its own), or an object (dso). */
typedef enum { ANNOTATE_BY_IP, ANNOTATE_BY_SYMBOL, ANNOTATE_BY_DSO } AnnotateBy;

typedef struct {
  const char *machine, *workload;
  const Annotation *ann;
  const CounterValues *counted; /* the annotated run's counted region (the first repeat) */
  unsigned top;                 /* rows of each table; 0: all */
  AnnMetric sort;
  AnnotateBy by;
  const char *symfs;            /* --symfs DIR: binaries looked up under DIR first; NULL: none */
  gboolean no_demangle;         /* --no-demangle: functions named as the binaries spell them */
} AnnotateReport;

/* "ip", "symbol" or "dso"; FALSE when none. */
gboolean annotate_by_parse(const char *name, AnnotateBy *out);

/* The metric named `name` (annotation_metric_name), FALSE when none. */
gboolean annotate_metric_parse(const char *name, AnnMetric *out);
/* The metric names, comma-separated, for messages; newly allocated. */
char *annotate_metric_choices(void);

void annotate_text(const AnnotateReport *r, FILE *out);
void annotate_json(const AnnotateReport *r, FILE *out);
/* The report to path: JSON when it ends in ".json", else text; "-":
 * standard output, JSON when json_stdout (run --json).  FALSE with error
 * set when it cannot be written. */
gboolean annotate_write(const AnnotateReport *r, const char *path, gboolean json_stdout, GError **error);

#endif
