/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plot.h - line and bar charts drawn with cairo, as SVG or PNG: run's
 * interval plot (-I with --interval-plot) and sweep's plots (sweep --plot).
 *
 * A figure is a title, a subtitle and one or more panels stacked on a
 * shared x axis; a panel has its own y axis and one line per series, with
 * a legend naming them and, where a series has them, error bars.  An x
 * axis of words (categories) may instead be drawn as grouped bars: a group
 * per word, in it a bar per series, in the series' order and colour.  An x
 * axis of sizes is drawn in powers of two (log2), labelled 4K, 2M, 1G.
 * Names are drawn as given: an underscore is an underscore.  The SVG also
 * carries the title, the axis names and the legend as text (<title> and
 * <desc>), and with bars a line per bar drawn ("bar: WORD, SERIES: value"),
 * for readers and search that do not read glyph outlines.
 */
#ifndef MMUSIM_PLOT_H
#define MMUSIM_PLOT_H

#include <glib.h>

typedef struct {
  const char *name; /* legend entry */
  unsigned n;
  const double *x, *y;
  const double *lo, *hi; /* error bars from lo[i] to hi[i], or NULL */
} PlotSeries;

typedef struct {
  const char *title;  /* over the panel, or NULL */
  const char *ylabel; /* the quantity and its unit */
  unsigned n_series;
  const PlotSeries *series;
} PlotPanel;

typedef struct {
  const char *title, *subtitle;
  const char *xlabel;
  gboolean xlog2;        /* x values are sizes in bytes: a log2 axis labelled 4K, 2M, ... */
  /* Or categories: x values 0 .. n_xcats - 1, labelled xcats[i]. */
  const char *const *xcats;
  unsigned n_xcats;
  gboolean bars; /* with xcats: grouped bars (each series' bar in each group) instead of lines */
  unsigned n_panels;
  const PlotPanel *panels;
} Plot;

#define MMUSIM_PLOT_ERROR (mmusim_plot_error_quark())
GQuark mmusim_plot_error_quark(void);
enum { PLOT_ERROR_FORMAT, PLOT_ERROR_DRAW };

/* TRUE if path ends in .svg or .png (any case). */
gboolean plot_path_ok(const char *path);
/* Draw p to path, SVG or PNG by its extension. */
gboolean plot_write(const Plot *p, const char *path, GError **error);

#endif
