/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plot.c - line and grouped-bar charts drawn with cairo (see plot.h).
 */
#include "config.h"
#include "plot.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <string.h>
#include "outfile.h"

G_DEFINE_QUARK(mmusim-plot-error-quark, mmusim_plot_error)

/* Layout, in points (SVG user units; PNG pixels). */
#define PLOT_WIDTH 820.0
#define PLOT_MARGIN 16.0
#define PLOT_HEAD 52.0       /* title and subtitle */
#define PLOT_PANEL_H 230.0   /* one panel: its frame and its tick labels */
#define PLOT_LEFT 86.0       /* y tick labels and the y axis name */
#define PLOT_RIGHT 190.0     /* the legend */
#define PLOT_BOTTOM 46.0     /* x tick labels and the x axis name, under the last panel */
#define PLOT_TICKS 5         /* y ticks aimed at */
#define PLOT_GROUP_W 0.8     /* a group of bars: this share of the space between two words */

/* Colours of the series, told apart also without colour vision: Okabe and
 * Ito's palette ("Color Universal Design", 2002). */
static const double palette[][3] = {
  { 0.000, 0.447, 0.698 }, { 0.835, 0.369, 0.000 }, { 0.000, 0.620, 0.451 }, { 0.800, 0.475, 0.655 },
  { 0.337, 0.706, 0.914 }, { 0.902, 0.624, 0.000 }, { 0.941, 0.894, 0.259 }, { 0.000, 0.000, 0.000 },
};

gboolean plot_path_ok(const char *path)
{
  return g_str_has_suffix(path, ".svg") || g_str_has_suffix(path, ".SVG") || g_str_has_suffix(path, ".png") ||
         g_str_has_suffix(path, ".PNG");
}

static gboolean is_png(const char *path)
{
  return g_str_has_suffix(path, ".png") || g_str_has_suffix(path, ".PNG");
}

/* Text as cairo and XML take it: valid UTF-8, no control characters. */
static char *safe_text(const char *text)
{
  char *s = g_utf8_make_valid(text ? text : "", -1);
  for (char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
  return s;
}

static void text_at(cairo_t *cr, double x, double y, const char *s, double align)
{
  g_autofree char *t = safe_text(s);
  cairo_text_extents_t te;
  cairo_text_extents(cr, t, &te);
  cairo_move_to(cr, x - align * te.x_advance, y);
  cairo_show_text(cr, t);
}

/* The font size, at most `size`, at which s fits in `width` (a long
 * workload spec in a title); not below 6. */
static void fit_font(cairo_t *cr, const char *s, double size, double width)
{
  g_autofree char *t = safe_text(s);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t te;
  cairo_text_extents(cr, t, &te);
  if (te.x_advance > width)
    cairo_set_font_size(cr, MAX(6, size * width / te.x_advance));
}

/* A size in bytes as 4K, 2M, 1G. */
static void fmt_size(char *buf, gsize n, double v)
{
  static const char *units[] = { "", "K", "M", "G", "T", "P" };
  unsigned u = 0;
  while (v >= 1024 && u + 1 < G_N_ELEMENTS(units)) {
    v /= 1024;
    u++;
  }
  g_snprintf(buf, n, "%g%s", v, units[u]);
}

/* A tick value: plain up to 6 digits, else with a k/M/G suffix. */
static void fmt_tick(char *buf, gsize n, double v)
{
  double a = fabs(v);
  if (a >= 1e9)
    g_snprintf(buf, n, "%gG", v / 1e9);
  else if (a >= 1e6)
    g_snprintf(buf, n, "%gM", v / 1e6);
  else if (a >= 1e4)
    g_snprintf(buf, n, "%gk", v / 1e3);
  else
    g_snprintf(buf, n, "%g", v);
}

/* A step of 1, 2 or 5 times a power of ten giving about `want` ticks. */
static double nice_step(double span, int want)
{
  if (!(span > 0))
    return 1;
  double raw = span / want, p = pow(10, floor(log10(raw)));
  double f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

typedef struct {
  double lo, hi; /* in axis units (log2 of x for a log2 axis) */
} Range;

static double xmap(const Plot *p, double x)
{
  return p->xlog2 ? log2(MAX(x, 1)) : x;
}

static Range x_range(const Plot *p)
{
  Range r = { INFINITY, -INFINITY };
  for (unsigned k = 0; k < p->n_panels; k++)
    for (unsigned s = 0; s < p->panels[k].n_series; s++) {
      const PlotSeries *se = &p->panels[k].series[s];
      for (unsigned i = 0; i < se->n; i++) {
        r.lo = MIN(r.lo, xmap(p, se->x[i]));
        r.hi = MAX(r.hi, xmap(p, se->x[i]));
      }
    }
  if (!isfinite(r.lo))
    r = (Range){ 0, 1 };
  if (p->xcats)
    return (Range){ -0.5, p->n_xcats - 0.5 };
  if (p->xlog2) {
    r.lo = floor(r.lo);
    r.hi = ceil(r.hi);
  }
  if (r.hi <= r.lo)
    r.hi = r.lo + 1;
  return r;
}

/* 0 to the largest value (error bars included), or to the smallest when
 * every value is negative. */
static Range y_range(const PlotPanel *pn)
{
  Range r = { 0, 0 };
  for (unsigned s = 0; s < pn->n_series; s++) {
    const PlotSeries *se = &pn->series[s];
    for (unsigned i = 0; i < se->n; i++) {
      double hi = se->hi ? se->hi[i] : se->y[i], lo = se->lo ? se->lo[i] : se->y[i];
      if (isfinite(hi))
        r.hi = MAX(r.hi, hi);
      if (isfinite(lo))
        r.lo = MIN(r.lo, lo);
    }
  }
  double step = nice_step(r.hi - r.lo, PLOT_TICKS);
  r.hi = ceil(r.hi / step) * step;
  r.lo = floor(r.lo / step) * step;
  if (r.hi <= r.lo)
    r.hi = r.lo + 1;
  return r;
}

typedef struct {
  double x0, y0, w, h; /* the frame */
} Frame;

static double px(const Frame *f, Range xr, double v)
{
  return f->x0 + (v - xr.lo) / (xr.hi - xr.lo) * f->w;
}

static double py(const Frame *f, Range yr, double v)
{
  return f->y0 + f->h - (v - yr.lo) / (yr.hi - yr.lo) * f->h;
}

static void draw_x_ticks(cairo_t *cr, const Plot *p, const Frame *f, Range xr, gboolean labels)
{
  for (unsigned i = 0; p->xcats && i < p->n_xcats; i++) {
    double x = px(f, xr, i);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, x, f->y0);
    cairo_line_to(cr, x, f->y0 + f->h);
    cairo_stroke(cr);
    if (labels) {
      cairo_set_source_rgb(cr, 0, 0, 0);
      text_at(cr, x, f->y0 + f->h + 14, p->xcats[i], 0.5);
    }
  }
  if (p->xcats)
    return;
  double step = p->xlog2 ? MAX(1, ceil((xr.hi - xr.lo) / 10)) : nice_step(xr.hi - xr.lo, 8);
  for (double v = ceil(xr.lo / step) * step; v <= xr.hi + step * 1e-9; v += step) {
    double x = px(f, xr, v);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, x, f->y0);
    cairo_line_to(cr, x, f->y0 + f->h);
    cairo_stroke(cr);
    if (!labels)
      continue;
    char b[32];
    if (p->xlog2)
      fmt_size(b, sizeof b, exp2(v));
    else
      fmt_tick(b, sizeof b, fabs(v) < step * 1e-9 ? 0 : v);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, x, f->y0 + f->h + 14, b, 0.5);
  }
}

/* The left edge and the width, in axis units, of series s's bar in the
 * group of word x: the group spans PLOT_GROUP_W around x, its n bars side
 * by side in the series' order. */
static double bar_left(double x, unsigned s, unsigned n, double *width)
{
  *width = PLOT_GROUP_W / MAX(n, 1u);
  return x - PLOT_GROUP_W / 2 + s * *width;
}

/* Series s of pn as one bar per word, from 0 (or the axis's foot) to its
 * value, filled in its colour, with its error bar in black. */
static void draw_bars(cairo_t *cr, const PlotPanel *pn, unsigned s, const Frame *f, Range xr, Range yr)
{
  const PlotSeries *se = &pn->series[s];
  const double *c = palette[s % G_N_ELEMENTS(palette)];
  double base = py(f, yr, MAX(yr.lo, 0));
  for (unsigned i = 0; i < se->n; i++) {
    double w, left = bar_left(se->x[i], s, pn->n_series, &w);
    double x0 = px(f, xr, left), x1 = px(f, xr, left + w), y = py(f, yr, se->y[i]);
    cairo_set_source_rgb(cr, c[0], c[1], c[2]);
    cairo_rectangle(cr, x0, MIN(y, base), x1 - x0, fabs(base - y));
    cairo_fill(cr);
    if (se->lo && se->hi) {
      double xm = (x0 + x1) / 2, y0 = py(f, yr, se->lo[i]), y1 = py(f, yr, se->hi[i]);
      double cap = MIN(3, (x1 - x0) / 3);
      cairo_set_source_rgb(cr, 0, 0, 0);
      cairo_set_line_width(cr, 1);
      cairo_move_to(cr, xm, y0);
      cairo_line_to(cr, xm, y1);
      cairo_move_to(cr, xm - cap, y0);
      cairo_line_to(cr, xm + cap, y0);
      cairo_move_to(cr, xm - cap, y1);
      cairo_line_to(cr, xm + cap, y1);
      cairo_stroke(cr);
    }
  }
}

static void draw_panel(cairo_t *cr, const Plot *p, const PlotPanel *pn, const Frame *f, Range xr, gboolean last)
{
  Range yr = y_range(pn);
  cairo_set_line_width(cr, 1);
  cairo_set_font_size(cr, 10);
  /* y grid and ticks */
  double step = nice_step(yr.hi - yr.lo, PLOT_TICKS);
  for (double v = yr.lo; v <= yr.hi + step * 1e-9; v += step) {
    double y = py(f, yr, v);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, f->x0, y);
    cairo_line_to(cr, f->x0 + f->w, y);
    cairo_stroke(cr);
    char b[32];
    fmt_tick(b, sizeof b, fabs(v) < step * 1e-9 ? 0 : v);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, f->x0 - 5, y + 3.5, b, 1);
  }
  draw_x_ticks(cr, p, f, xr, last);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_rectangle(cr, f->x0, f->y0, f->w, f->h);
  cairo_stroke(cr);
  /* the y axis name, turned */
  cairo_save(cr);
  cairo_set_font_size(cr, 11);
  cairo_translate(cr, f->x0 - PLOT_LEFT + 14, f->y0 + f->h / 2);
  cairo_rotate(cr, -G_PI / 2);
  text_at(cr, 0, 0, pn->ylabel, 0.5);
  cairo_restore(cr);
  /* the series */
  cairo_save(cr);
  cairo_rectangle(cr, f->x0, f->y0 - 1, f->w, f->h + 2);
  cairo_clip(cr);
  for (unsigned s = 0; p->bars && s < pn->n_series; s++)
    draw_bars(cr, pn, s, f, xr, yr);
  for (unsigned s = 0; !p->bars && s < pn->n_series; s++) {
    const PlotSeries *se = &pn->series[s];
    const double *c = palette[s % G_N_ELEMENTS(palette)];
    cairo_set_source_rgb(cr, c[0], c[1], c[2]);
    cairo_set_line_width(cr, 1.8);
    for (unsigned i = 0; i < se->n; i++) {
      double x = px(f, xr, xmap(p, se->x[i])), y = py(f, yr, se->y[i]);
      if (i == 0)
        cairo_move_to(cr, x, y);
      else
        cairo_line_to(cr, x, y);
    }
    cairo_stroke(cr);
    cairo_set_line_width(cr, 1);
    for (unsigned i = 0; i < se->n; i++) {
      double x = px(f, xr, xmap(p, se->x[i])), y = py(f, yr, se->y[i]);
      if (se->lo && se->hi) { /* error bar with caps */
        double y0 = py(f, yr, se->lo[i]), y1 = py(f, yr, se->hi[i]);
        cairo_move_to(cr, x, y0);
        cairo_line_to(cr, x, y1);
        cairo_move_to(cr, x - 3, y0);
        cairo_line_to(cr, x + 3, y0);
        cairo_move_to(cr, x - 3, y1);
        cairo_line_to(cr, x + 3, y1);
        cairo_stroke(cr);
      }
      if (se->n <= 64) {
        cairo_arc(cr, x, y, 2.5, 0, 2 * G_PI);
        cairo_fill(cr);
      }
    }
  }
  cairo_restore(cr);
  /* the legend, right of the frame */
  cairo_set_font_size(cr, 10);
  for (unsigned s = 0; s < pn->n_series; s++) {
    const double *c = palette[s % G_N_ELEMENTS(palette)];
    double y = f->y0 + 8 + 16.0 * s;
    cairo_set_source_rgb(cr, c[0], c[1], c[2]);
    if (p->bars) { /* a swatch of the bar's colour */
      cairo_rectangle(cr, f->x0 + f->w + 14, y - 5, 12, 10);
      cairo_fill(cr);
    } else {
      cairo_set_line_width(cr, 2);
      cairo_move_to(cr, f->x0 + f->w + 10, y);
      cairo_line_to(cr, f->x0 + f->w + 30, y);
      cairo_stroke(cr);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, f->x0 + f->w + 35, y + 3.5, pn->series[s].name, 0);
  }
}

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int length)
{
  g_string_append_len(closure, (const char *)data, length);
  return CAIRO_STATUS_SUCCESS;
}

/* What the picture says, as text. */
static char *plot_desc(const Plot *p)
{
  GString *d = g_string_new(NULL);
  g_string_append_printf(d, "%s\n%s\nx axis: %s%s%s\n", p->title, p->subtitle ? p->subtitle : "", p->xlabel,
                         p->xlog2 ? " (log2 scale)" : "", p->bars ? " (a group of bars per value)" : "");
  for (unsigned k = 0; k < p->n_panels; k++) {
    if (p->panels[k].title)
      g_string_append_printf(d, "panel: %s\n", p->panels[k].title);
    g_string_append_printf(d, "y axis: %s\n", p->panels[k].ylabel);
    for (unsigned s = 0; s < p->panels[k].n_series; s++)
      g_string_append_printf(d, "legend: %s\n", p->panels[k].series[s].name);
    for (unsigned s = 0; p->bars && s < p->panels[k].n_series; s++) {
      const PlotSeries *se = &p->panels[k].series[s];
      for (unsigned i = 0; i < se->n; i++) {
        unsigned cat = (unsigned)se->x[i];
        g_string_append_printf(d, "bar: %s, %s: %g", cat < p->n_xcats ? p->xcats[cat] : "?", se->name, se->y[i]);
        if (se->lo && se->hi)
          g_string_append_printf(d, " (%g to %g)", se->lo[i], se->hi[i]);
        g_string_append_c(d, '\n');
      }
    }
  }
  char *raw = g_string_free(d, FALSE);
  char *safe = g_utf8_make_valid(raw, -1);
  g_free(raw);
  return safe;
}

gboolean plot_write(const Plot *p, const char *path, GError **error)
{
  if (!plot_path_ok(path)) {
    g_set_error(error, MMUSIM_PLOT_ERROR, PLOT_ERROR_FORMAT, "%s: a plot is drawn as SVG or PNG: name it FILE.svg or FILE.png",
                path);
    return FALSE;
  }
  double height = PLOT_MARGIN + PLOT_HEAD + PLOT_PANEL_H * MAX(p->n_panels, 1u) + PLOT_BOTTOM + PLOT_MARGIN;
  gboolean png = is_png(path);
  GString *buf = g_string_new(NULL);
  cairo_surface_t *surf = png ? cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)PLOT_WIDTH, (int)height)
                              : cairo_svg_surface_create_for_stream(sink_write, buf, PLOT_WIDTH, height);
  cairo_t *cr = cairo_create(surf);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  fit_font(cr, p->title, 14, PLOT_WIDTH - 2 * PLOT_MARGIN);
  text_at(cr, PLOT_MARGIN, PLOT_MARGIN + 12, p->title, 0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  if (p->subtitle)
    fit_font(cr, p->subtitle, 11, PLOT_WIDTH - 2 * PLOT_MARGIN);
  if (p->subtitle)
    text_at(cr, PLOT_MARGIN, PLOT_MARGIN + 30, p->subtitle, 0);
  Range xr = x_range(p);
  for (unsigned k = 0; k < p->n_panels; k++) {
    Frame f = { PLOT_MARGIN + PLOT_LEFT, PLOT_MARGIN + PLOT_HEAD + PLOT_PANEL_H * k + 20,
                PLOT_WIDTH - 2 * PLOT_MARGIN - PLOT_LEFT - PLOT_RIGHT, PLOT_PANEL_H - 44 };
    if (p->panels[k].title) {
      cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
      cairo_set_font_size(cr, 12);
      cairo_set_source_rgb(cr, 0, 0, 0);
      text_at(cr, f.x0, f.y0 - 6, p->panels[k].title, 0);
      cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    }
    draw_panel(cr, p, &p->panels[k], &f, xr, k + 1 == p->n_panels);
  }
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_font_size(cr, 11);
  double plot_w = PLOT_WIDTH - 2 * PLOT_MARGIN - PLOT_LEFT - PLOT_RIGHT;
  text_at(cr, PLOT_MARGIN + PLOT_LEFT + plot_w / 2, height - PLOT_MARGIN - 12, p->xlabel, 0.5);
  cairo_destroy(cr);
  gboolean ok = TRUE;
  if (png) {
    cairo_surface_flush(surf);
    cairo_status_t st = cairo_surface_write_to_png_stream(surf, sink_write, buf);
    if (st != CAIRO_STATUS_SUCCESS) {
      g_set_error(error, MMUSIM_PLOT_ERROR, PLOT_ERROR_DRAW, "%s: cannot draw the plot: %s", path, cairo_status_to_string(st));
      ok = FALSE;
    }
  } else {
    cairo_surface_finish(surf);
  }
  cairo_status_t st = cairo_surface_status(surf);
  cairo_surface_destroy(surf);
  if (ok && st != CAIRO_STATUS_SUCCESS) {
    g_set_error(error, MMUSIM_PLOT_ERROR, PLOT_ERROR_DRAW, "%s: cannot draw the plot: %s", path, cairo_status_to_string(st));
    ok = FALSE;
  }
  if (ok && !png) { /* title and description right after the opening <svg ...> tag */
    const char *open = strstr(buf->str, "<svg");
    const char *gt = open ? strchr(open, '>') : NULL;
    if (gt) {
      g_autofree char *desc = plot_desc(p);
      g_autofree char *title = safe_text(p->title);
      g_autofree char *desc_esc = g_markup_escape_text(desc, -1);
      g_autofree char *title_esc = g_markup_escape_text(title, -1);
      g_autofree char *ins = g_strdup_printf("\n<title>%s</title>\n<desc>\n%s</desc>", title_esc, desc_esc);
      g_string_insert(buf, (gssize)(gt + 1 - buf->str), ins);
    }
  }
  if (ok)
    ok = out_file_set_contents(path, buf->str, buf->len, error);
  g_string_free(buf, TRUE);
  return ok;
}
