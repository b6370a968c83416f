/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * map.c - the address-space picture of `mmusim run --map` (see map.h).
 *
 * It reads the kernel's own state: the VMAs of each Mm and the leaves of its
 * software page table (pgtable_walk() over each VMA, reading only), and
 * physmem_node_of() on each leaf's frame.  It leaves out what
 * the page table does not say: the ppc64 hashed page table's contents, TLB
 * contents, page-cache pages.  A leaf counts as mapped when it is present or
 * is a NUMA hinting entry (present to the kernel, kernel/numa_balance.h).
 *
 * Aggregation: each VMA box is cut into columns of MAP_COLUMN_PX; a column
 * shows the share of its bytes under each page size (and under each node) as
 * a stacked bar, and neighbouring columns with the same shares (to 1/1000)
 * merge into one rectangle.  The file size is thus bounded by the picture's
 * width times the number of page sizes and nodes present, not by the pages.
 */
#include "config.h"
#include "map.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <string.h>
#include "outfile.h"
#include "physmem.h"

G_DEFINE_QUARK(mmusim-map-error-quark, mmusim_map_error)

/* LeakSanitizer (configure --enable-sanitizers) reads these hooks: cairo's toy
 * font API leaves fontconfig patterns and configuration allocated for the
 * life of the process (valgrind: tests/valgrind.supp), not leaks of ours.
 * It is only a function returning a string in any other build. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
  return "leak:libfontconfig.so\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
  return "print_suppressions=0";
}

/* Page geometry of the picture, in SVG user units (pixels). */
#define MAP_WIDTH 1200.0       /* the whole picture */
#define MAP_MARGIN 20.0
#define MAP_BOX_MIN_W 118.0    /* a VMA box, wide enough for its labels */
#define MAP_GAP_W 36.0         /* the compressed gap between two VMAs */
/* A process with more regions than this is drawn compact: narrow boxes,
 * only the first of each row labelled (with its start), narrow gaps; its
 * <desc> still lists every region, and the picture stays readable. */
#define MAP_LABEL_MAX 200
#define MAP_COMPACT_BOX_MIN_W 20.0
#define MAP_COMPACT_GAP_W 8.0
#define MAP_COLUMN_PX 2.0      /* narrowest aggregated column */
#define MAP_SIZE_BAND_H 24.0   /* page-size band */
#define MAP_NODE_BAND_H 9.0    /* NUMA-node band */
#define MAP_LABEL_LINE_H 11.0
#define MAP_ROW_H (MAP_SIZE_BAND_H + 2 + MAP_NODE_BAND_H + 4 + 3 * MAP_LABEL_LINE_H + 12)
#define MAP_PROC_HEAD_H 22.0
#define MAP_LEGEND_SWATCH 11.0
#define MAP_QUANT 1000         /* shares compared to 1/1000 when merging columns */

/* Page-size classes: unmapped, then the leaf level (1 = base page). */
#define MAP_CLASSES (PT_MAX_LEVELS + 1)

typedef struct {
  const Machine *m;
  int nodes;
  /* the VMA being aggregated */
  uint64_t start, size;
  unsigned ncol;
  uint64_t *cls;   /* ncol x MAP_CLASSES mapped bytes (class 0 unused) */
  uint64_t *node;  /* ncol x nodes bytes */
  uint64_t tot_cls[MAP_CLASSES];
  uint64_t *tot_node; /* nodes */
} Agg;

/* A box placed on the page. */
typedef struct {
  const Mm *mm;
  Vma v;             /* the region: adjacent VMAs alike in all but their range, merged */
  guint nvmas;       /* VMAs in it */
  double x, y, w;
  uint64_t gap_bytes; /* gap before it (0: adjacent or first) */
  gboolean gap_mark;  /* draw the gap marker left of x */
  gboolean compact;   /* no gap size; labelled only when `label` */
  gboolean label;
} Placed;

typedef struct {
  const Mm *mm;
  double y;          /* the process heading */
} ProcHead;

static void fmt_size(uint64_t b, char *buf, size_t len)
{
  static const char unit[] = "KMGTPE";
  if (b < 1024) {
    g_snprintf(buf, len, "%" G_GUINT64_FORMAT, b);
    return;
  }
  double v = (double)b;
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    u++;
  }
  if (v == floor(v))
    g_snprintf(buf, len, "%.0f%c", v, unit[u]);
  else
    g_snprintf(buf, len, "%.1f%c", v, unit[u]);
}

static void fmt_flags(const Vma *v, char *buf, size_t len)
{
  g_snprintf(buf, len, "%c%c%c%c%s%s%s%s", v->prot & PROT_R ? 'r' : '-', v->prot & PROT_W ? 'w' : '-',
             v->prot & PROT_X ? 'x' : '-', v->flags & MAP_F_SHARED ? 's' : 'p',
             v->flags & MAP_F_STACK ? " stack" : "",
             v->flags & MAP_F_HUGETLB ? (v->flags & MAP_F_HUGETLB_1G ? " hugetlb-1G" : " hugetlb") : "",
             v->thp == VMA_THP_HUGEPAGE ? " hugepage" : v->thp == VMA_THP_NOHUGEPAGE ? " nohugepage" : "",
             v->flags & MAP_F_ONDEMAND ? " demand" : "");
}

/* The name of the leaf size at `level`: the architecture's ("4K", "16M"). */
static void level_name(const Machine *m, const PtGeometry *g, unsigned level, char *buf, size_t len)
{
  for (unsigned k = 0; k < ARCH_MAX_SIZES; k++)
    if (m->arch->size_name[k] && m->arch->page_shift[k] == g->shift[level]) {
      g_strlcpy(buf, m->arch->size_name[k], len);
      return;
    }
  fmt_size(pgtable_entry_span(g, level), buf, len);
}

/* Add the leaf [a, b) of `level` on `node` (-1: none) to the columns. */
static void agg_add(Agg *ag, uint64_t a, uint64_t b, unsigned level, int node)
{
  uint64_t lo = a - ag->start, hi = b - ag->start;
  unsigned c = (unsigned)(lo * ag->ncol / ag->size);
  while (lo < hi && c < ag->ncol) {
    uint64_t cend = ag->size * (c + 1) / ag->ncol;
    uint64_t part = MIN(hi, cend) - lo;
    ag->cls[c * MAP_CLASSES + level] += part;
    if (node >= 0)
      ag->node[(size_t)c * ag->nodes + node] += part;
    lo += part;
    if (lo >= cend)
      c++;
  }
  ag->tot_cls[level] += b - a;
  if (node >= 0)
    ag->tot_node[node] += b - a;
}

/* One entry of the walk over a VMA: a leaf mapped (present, or a NUMA
 * hinting entry) adds its part inside the VMA, [addr, next). */
static int agg_entry(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  Agg *ag = w->ctx;
  unsigned l = w->level;
  if (pte_none(e) || !pte_leaf(e, l) || !(e & (PTE_P | PTE_SW_NUMA)))
    return 0;
  int node = physmem_node_of(ag->m->k->pm, pte_pfn(e));
  if (node < 0 || node >= ag->nodes)
    node = -1;
  agg_add(ag, addr, next, l, node);
  return 0;
}

static const PtWalkOps agg_ops = { .pud_entry = agg_entry, .pmd_entry = agg_entry, .pte_entry = agg_entry };

static void agg_vma(Agg *ag, const Mm *mm, const Vma *v, unsigned ncol)
{
  ag->start = v->start;
  ag->size = v->end - v->start;
  ag->ncol = MAX(1u, MIN(ncol, (unsigned)MIN(ag->size, (uint64_t)G_MAXUINT)));
  g_free(ag->cls);
  g_free(ag->node);
  ag->cls = g_new0(uint64_t, (size_t)ag->ncol * MAP_CLASSES);
  ag->node = g_new0(uint64_t, (size_t)ag->ncol * ag->nodes);
  memset(ag->tot_cls, 0, sizeof ag->tot_cls);
  memset(ag->tot_node, 0, sizeof(uint64_t) * (size_t)ag->nodes);
  pgtable_walk(&mm->pt, v->start, v->end, &agg_ops, ag);
}

/* Colours: page sizes from small to large in blue, orange, red, purple;
 * nodes in a family of their own (greens, yellows, browns, pinks, teals),
 * so that no node reads as a page size.  Past the eight hues, each round
 * of eight is a shade lighter or darker, so neighbours differ for any
 * count. */
static void class_rgb(unsigned level, double rgb[3])
{
  static const double c[MAP_CLASSES][3] = {
    { 0.90, 0.90, 0.90 }, /* unmapped */
    { 0.27, 0.51, 0.71 }, /* base page */
    { 0.95, 0.55, 0.13 }, /* PMD leaf */
    { 0.80, 0.15, 0.20 }, /* PUD leaf */
    { 0.50, 0.20, 0.60 },
    { 0.30, 0.30, 0.30 },
  };
  memcpy(rgb, c[MIN(level, (unsigned)MAP_CLASSES - 1)], sizeof c[0]);
}

static void node_rgb(int node, double rgb[3])
{
  static const double hue[8][3] = {
    { 0.40, 0.65, 0.12 }, /* green */
    { 0.93, 0.79, 0.18 }, /* yellow */
    { 0.55, 0.34, 0.16 }, /* brown */
    { 0.91, 0.54, 0.76 }, /* pink */
    { 0.26, 0.70, 0.66 }, /* teal */
    { 0.60, 0.60, 0.22 }, /* olive */
    { 0.70, 0.86, 0.52 }, /* light green */
    { 0.40, 0.40, 0.40 }, /* grey */
  };
  static const double shade[4] = { 0, 0.35, -0.30, 0.60 }; /* to white (>0) or black (<0) */
  unsigned n = (unsigned)node;
  double s = shade[(n / 8) % 4];
  for (int c = 0; c < 3; c++)
    rgb[c] = s >= 0 ? hue[n % 8][c] + (1 - hue[n % 8][c]) * s : hue[n % 8][c] * (1 + s);
}

static void set_rgb(cairo_t *cr, const double rgb[3])
{
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
}

/* Quantised shares of one column: per class (or node), of the column's bytes. */
static void column_shares(const uint64_t *bytes, unsigned n, uint64_t col_bytes, int *q)
{
  for (unsigned k = 0; k < n; k++)
    q[k] = col_bytes ? (int)((bytes[k] * MAP_QUANT + col_bytes / 2) / col_bytes) : 0;
}

/* Draw one band: columns of stacked shares over `n` categories, colour of
 * category k from rgb_of(k); what is left of a column is unmapped grey. */
static void draw_band(cairo_t *cr, const Agg *ag, const uint64_t *bytes, unsigned n, const unsigned *order,
                      void (*rgb_of)(int, double[3]), double x, double y, double w, double h)
{
  int *q = g_new(int, n), *prev = g_new(int, n);
  double colw = w / ag->ncol, grey[3];
  class_rgb(0, grey); /* what no category covers: unmapped */
  set_rgb(cr, grey);
  cairo_rectangle(cr, x, y, w, h);
  cairo_fill(cr);
  unsigned run_start = 0;
  for (unsigned c = 0; c <= ag->ncol; c++) {
    gboolean same = FALSE;
    if (c < ag->ncol) {
      uint64_t col_bytes = ag->size * (c + 1) / ag->ncol - ag->size * c / ag->ncol;
      column_shares(bytes + (size_t)c * n, n, col_bytes, q);
      same = c > 0 && memcmp(q, prev, sizeof(int) * n) == 0;
    }
    if (c > 0 && !same) {
      /* draw the run [run_start, c) with the shares in prev */
      double rx = x + run_start * colw, rw = (c - run_start) * colw, top = y;
      for (unsigned j = 0; j < n; j++) {
        unsigned k = order ? order[j] : j;
        if (!prev[k])
          continue;
        double rgb[3], hh = h * prev[k] / MAP_QUANT;
        rgb_of((int)k, rgb);
        set_rgb(cr, rgb);
        cairo_rectangle(cr, rx, top, rw, hh);
        cairo_fill(cr);
        top += hh;
      }
      run_start = c;
    }
    int *t = prev;
    prev = q;
    q = t;
  }
  g_free(q);
  g_free(prev);
}

static void class_rgb_int(int k, double rgb[3]) { class_rgb((unsigned)k, rgb); }

static int compare_mm(gconstpointer a, gconstpointer b)
{
  const Mm *x = *(const Mm *const *)a, *y = *(const Mm *const *)b;
  return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Text from the user (a workload spec, a file name) as the picture shows
 * it: valid UTF-8 (cairo refuses other text, XML too) without control
 * characters but newline and tab (XML 1.0 has no way to write them);
 * g_markup_escape_text then quotes the rest. */
static char *map_text_safe(const char *text)
{
  char *s = g_utf8_make_valid(text, -1);
  for (char *p = s; *p; p++)
    if (((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
      *p = ' ';
  return s;
}

/* Text is written as SVG <text> elements, not drawn: cairo's SVG surface
 * draws every glyph as an outline, which a reader can neither select nor
 * search, a screen reader cannot read, and which was the bulk of the file.
 * The cairo context still measures the text (cairo_text_extents, for the
 * layout) and holds the font, size and colour of the next text_at(); the
 * elements collect in a GString attached to it and go in after cairo's
 * drawing, so they lie on top of the boxes. */
static const cairo_user_data_key_t map_text_key;

static void text_at(cairo_t *cr, double x, double y, const char *s)
{
  GString *out = cairo_get_user_data(cr, &map_text_key);
  g_autofree char *safe = map_text_safe(s); /* a cut label too may end mid-character */
  g_autofree char *esc = g_markup_escape_text(safe, -1);
  cairo_font_face_t *face = cairo_get_font_face(cr);
  gboolean toy = cairo_font_face_get_type(face) == CAIRO_FONT_TYPE_TOY; /* map.c selects only toy faces */
  const char *family = toy ? cairo_toy_font_face_get_family(face) : "sans-serif";
  gboolean bold = toy && cairo_toy_font_face_get_weight(face) == CAIRO_FONT_WEIGHT_BOLD;
  cairo_matrix_t fm;
  cairo_get_font_matrix(cr, &fm);
  double r = 0, g = 0, b = 0, a = 1;
  cairo_pattern_get_rgba(cairo_get_source(cr), &r, &g, &b, &a);
  char xs[G_ASCII_DTOSTR_BUF_SIZE], ys[G_ASCII_DTOSTR_BUF_SIZE], fs[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf(out, "<text x=\"%s\" y=\"%s\" font-family=\"%s\" font-size=\"%s\"%s fill=\"#%02x%02x%02x\""
                              " xml:space=\"preserve\">%s</text>\n",
                         g_ascii_formatd(xs, sizeof xs, "%.2f", x), g_ascii_formatd(ys, sizeof ys, "%.2f", y), family,
                         g_ascii_formatd(fs, sizeof fs, "%.4g", fm.xx), bold ? " font-weight=\"bold\"" : "",
                         (unsigned)lround(r * 255), (unsigned)lround(g * 255), (unsigned)lround(b * 255), esc);
}

/* The first VMA after i that does not continue it (adjacent, same
 * protection, flags, advice and policy): lackey and ChampSim traces map
 * memory on demand 2M at a time, one VMA each. */
static guint region_end(const Mm *mm, guint i, guint n)
{
  const Vma *a = mm_vma(mm, i);
  guint j = i + 1;
  for (; j < n; j++) {
    const Vma *b = mm_vma(mm, j), *p = mm_vma(mm, j - 1);
    if (b->start != p->end || b->prot != a->prot || b->flags != a->flags || b->thp != a->thp ||
        b->policy != a->policy || b->policy_flags != a->policy_flags || b->policy_nodes != a->policy_nodes)
      break;
  }
  return j;
}

/* Lay the boxes out: per process a heading, then the VMAs in address order,
 * wrapped into rows.  Returns the height of the picture. */
static double layout(GPtrArray *mms, double top, GArray *placed, GArray *heads)
{
  double y = top, right = MAP_WIDTH - MAP_MARGIN, avail = right - MAP_MARGIN;
  for (guint p = 0; p < mms->len; p++) {
    const Mm *mm = g_ptr_array_index(mms, p);
    ProcHead h = { mm, y };
    g_array_append_val(heads, h);
    y += MAP_PROC_HEAD_H;
    guint n = mm_vma_count(mm);
    uint64_t total = 0;
    for (guint i = 0; i < n; i++)
      total += mm_vma(mm, i)->end - mm_vma(mm, i)->start;
    guint regions = 0;
    for (guint i = 0; i < n; i = region_end(mm, i, n))
      regions++;
    gboolean compact = regions > MAP_LABEL_MAX;
    double min_w = compact ? MAP_COMPACT_BOX_MIN_W : MAP_BOX_MIN_W, gap_w = compact ? MAP_COMPACT_GAP_W : MAP_GAP_W;
    double x = MAP_MARGIN;
    uint64_t prev_end = 0;
    for (guint i = 0, next; i < n; i = next) {
      next = region_end(mm, i, n);
      Placed pl = { .mm = mm, .v = *mm_vma(mm, i), .nvmas = next - i };
      pl.v.end = mm_vma(mm, next - 1)->end;
      const Vma *v = &pl.v;
      double w = MAX(min_w, avail * (double)(v->end - v->start) / (double)MAX(total, 1));
      if (i > 0)
        pl.gap_bytes = v->start - prev_end;
      prev_end = v->end;
      pl.compact = compact;
      pl.label = !compact || i == 0;
      double lead = i == 0 ? 0 : pl.gap_bytes ? gap_w : 2;
      if (i > 0 && x + lead + w > right + 0.5) {
        x = MAP_MARGIN;
        y += MAP_ROW_H;
        lead = pl.gap_bytes ? gap_w : 0;
        pl.label = TRUE;
      }
      w = MIN(w, right - x - lead);
      pl.gap_mark = pl.gap_bytes != 0;
      pl.x = x + lead;
      pl.y = y;
      pl.w = w;
      g_array_append_val(placed, pl);
      x = pl.x + w;
    }
    y += n ? MAP_ROW_H : 0;
    y += 6;
  }
  return y + MAP_MARGIN;
}

typedef struct {
  GString *buf;
} SvgSink;

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int length)
{
  SvgSink *s = closure;
  g_string_append_len(s->buf, (const char *)data, length);
  return CAIRO_STATUS_SUCCESS;
}

/* The legend: page sizes, then nodes.  Returns its height. */
static double draw_legend(cairo_t *cr, const Machine *m, const PtGeometry *g, int nodes, double y, gboolean draw)
{
  double x = MAP_MARGIN, h = MAP_LEGEND_SWATCH + 6;
  if (draw) {
    cairo_set_font_size(cr, 10);
    for (unsigned l = 0; l <= g->levels && l <= 3; l++) {
      double rgb[3];
      char name[32], label[48];
      class_rgb(l, rgb);
      if (l == 0) {
        g_strlcpy(label, "unmapped", sizeof label);
      } else {
        level_name(m, g, l, name, sizeof name);
        g_snprintf(label, sizeof label, "%s pages", name);
      }
      set_rgb(cr, rgb);
      cairo_rectangle(cr, x, y, MAP_LEGEND_SWATCH, MAP_LEGEND_SWATCH);
      cairo_fill(cr);
      cairo_set_source_rgb(cr, 0, 0, 0);
      text_at(cr, x + MAP_LEGEND_SWATCH + 4, y + 9, label);
      cairo_text_extents_t te;
      cairo_text_extents(cr, label, &te);
      x += MAP_LEGEND_SWATCH + 4 + te.x_advance + 16;
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, x, y + 9, "NUMA node (lower band):");
    cairo_text_extents_t te;
    cairo_text_extents(cr, "NUMA node (lower band):", &te);
    x += te.x_advance + 8;
  } else {
    x += 560; /* the page-size entries and the node heading */
  }
  for (int n = 0; n < nodes; n++) {
    double step = MAP_LEGEND_SWATCH + 30;
    if (x + step > MAP_WIDTH - MAP_MARGIN) {
      x = MAP_MARGIN + 40;
      y += h;
      h += MAP_LEGEND_SWATCH + 6;
    }
    if (draw) {
      double rgb[3];
      char label[16];
      node_rgb(n, rgb);
      set_rgb(cr, rgb);
      cairo_rectangle(cr, x, y, MAP_LEGEND_SWATCH, MAP_LEGEND_SWATCH);
      cairo_fill(cr);
      cairo_set_source_rgb(cr, 0, 0, 0);
      g_snprintf(label, sizeof label, "%d", n);
      text_at(cr, x + MAP_LEGEND_SWATCH + 3, y + 9, label);
    }
    x += step;
  }
  return h;
}

static void desc_line(GString *d, const Machine *m, const PtGeometry *g, const Agg *ag, const Mm *mm, const Vma *v,
                      guint nvmas)
{
  char sz[32], fl[64], part[32], name[32];
  fmt_size(v->end - v->start, sz, sizeof sz);
  fmt_flags(v, fl, sizeof fl);
  g_string_append_printf(d, "pid %u 0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER "x %s %s:", mm->pid, v->start,
                         v->end, sz, fl);
  uint64_t mapped = 0;
  for (unsigned l = 1; l < MAP_CLASSES; l++) {
    if (!ag->tot_cls[l])
      continue;
    mapped += ag->tot_cls[l];
    level_name(m, g, l, name, sizeof name);
    fmt_size(ag->tot_cls[l], part, sizeof part);
    g_string_append_printf(d, " %s pages %s,", name, part);
  }
  fmt_size(v->end - v->start - mapped, part, sizeof part);
  g_string_append_printf(d, " unmapped %s", part);
  if (nvmas > 1)
    g_string_append_printf(d, ", %u VMAs", nvmas);
  for (int n = 0; n < ag->nodes; n++)
    if (ag->tot_node[n]) {
      fmt_size(ag->tot_node[n], part, sizeof part);
      g_string_append_printf(d, ", node %d %s", n, part);
    }
  g_string_append_c(d, '\n');
}

gboolean map_write_svg(const Machine *m, const char *raw_title, const char *path, GError **error)
{
  g_autofree char *title = map_text_safe(raw_title);
  const Kernel *k = m->k;
  const PtGeometry *g = &k->geo;
  int nodes = MAX(1, physmem_nodes(k->pm));
  GPtrArray *mms = g_ptr_array_new();
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init(&it, k->mms);
  while (g_hash_table_iter_next(&it, &key, &val))
    if (!((const Mm *)val)->oom_killed) /* the OOM killer took its address space */
      g_ptr_array_add(mms, val);
  g_ptr_array_sort(mms, compare_mm);

  /* Layout first: the SVG surface needs its size. */
  double title_h = 44;
  double legend_h = draw_legend(NULL, m, g, nodes, 0, FALSE);
  GArray *placed = g_array_new(FALSE, FALSE, sizeof(Placed));
  GArray *heads = g_array_new(FALSE, FALSE, sizeof(ProcHead));
  double top = MAP_MARGIN + title_h + legend_h + 10;
  double height = layout(mms, top, placed, heads);
  if (mms->len == 0)
    height += 20;

  SvgSink sink = { g_string_new(NULL) };
  cairo_surface_t *surf = cairo_svg_surface_create_for_stream(sink_write, &sink, MAP_WIDTH, height);
  cairo_t *cr = cairo_create(surf);
  GString *texts = g_string_new(NULL);
  cairo_set_user_data(cr, &map_text_key, texts, NULL);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_font_size(cr, 15);
  text_at(cr, MAP_MARGIN, MAP_MARGIN + 12, title);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 11);
  char sub[256];
  g_snprintf(sub, sizeof sub, "address spaces at the end of the run: machine %s (%s, %d NUMA node%s); gaps between regions compressed",
             m->name, m->arch->name, nodes, nodes == 1 ? "" : "s");
  text_at(cr, MAP_MARGIN, MAP_MARGIN + 30, sub);
  draw_legend(cr, m, g, nodes, MAP_MARGIN + title_h, TRUE);
  if (mms->len == 0)
    text_at(cr, MAP_MARGIN, top + 12, "(no process ran)");

  GString *desc = g_string_new(NULL);
  g_string_append_printf(desc, "%s\n%s\n", title, sub);
  for (guint h = 0; h < heads->len; h++) {
    const ProcHead *ph = &g_array_index(heads, ProcHead, h);
    char line[160], rss[32];
    fmt_size(ph->mm->rss_pages * k->base_bytes, rss, sizeof rss);
    g_snprintf(line, sizeof line, "process %u: %u VMA%s, %s resident", ph->mm->pid, mm_vma_count(ph->mm),
               mm_vma_count(ph->mm) == 1 ? "" : "s", rss);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 12);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, MAP_MARGIN, ph->y + 14, line);
    g_string_append_printf(desc, "%s\n", line);
  }

  Agg ag = { .m = m, .nodes = nodes, .tot_node = g_new0(uint64_t, nodes) };
  unsigned *class_order = g_new(unsigned, MAP_CLASSES);
  for (unsigned j = 0; j < MAP_CLASSES; j++) /* largest pages on top */
    class_order[j] = MAP_CLASSES - 1 - j;
  for (guint b = 0; b < placed->len; b++) {
    const Placed *pl = &g_array_index(placed, Placed, b);
    const Vma *v = &pl->v;
    agg_vma(&ag, pl->mm, v, (unsigned)(pl->w / MAP_COLUMN_PX));
    draw_band(cr, &ag, ag.cls, MAP_CLASSES, class_order, class_rgb_int, pl->x, pl->y, pl->w, MAP_SIZE_BAND_H);
    draw_band(cr, &ag, ag.node, (unsigned)nodes, NULL, node_rgb, pl->x, pl->y + MAP_SIZE_BAND_H + 2, pl->w,
              MAP_NODE_BAND_H);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 0.8);
    cairo_rectangle(cr, pl->x, pl->y, pl->w, MAP_SIZE_BAND_H + 2 + MAP_NODE_BAND_H);
    cairo_stroke(cr);
    char start[32], sz[32], fl[64], gap[40];
    g_snprintf(start, sizeof start, "0x%" G_GINT64_MODIFIER "x", v->start);
    fmt_size(v->end - v->start, sz, sizeof sz);
    fmt_flags(v, fl, sizeof fl);
    double ly = pl->y + MAP_SIZE_BAND_H + 2 + MAP_NODE_BAND_H + 4;
    cairo_select_font_face(cr, "monospace", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 9.5);
    cairo_set_source_rgb(cr, 0, 0, 0);
    if (pl->label)
      text_at(cr, pl->x + 1, ly + MAP_LABEL_LINE_H - 2, start);
    if (pl->label && !pl->compact) {
      text_at(cr, pl->x + 1, ly + 2 * MAP_LABEL_LINE_H - 2, sz);
      text_at(cr, pl->x + 1, ly + 3 * MAP_LABEL_LINE_H - 2, fl);
    }
    if (pl->gap_mark && pl->compact) {
      double gx = pl->x - MAP_COMPACT_GAP_W / 2;
      cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
      cairo_set_line_width(cr, 1);
      cairo_move_to(cr, gx, pl->y + 4);
      cairo_line_to(cr, gx, pl->y + MAP_SIZE_BAND_H);
      cairo_stroke(cr);
    } else if (pl->gap_mark) {
      /* a zigzag break, the gap's size below it */
      double gx = pl->x - MAP_GAP_W / 2, gy = pl->y;
      cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
      cairo_set_line_width(cr, 1);
      cairo_move_to(cr, gx - 3, gy + 4);
      for (int z = 1; z <= 6; z++)
        cairo_line_to(cr, gx + (z % 2 ? 3 : -3), gy + 4 + z * 5);
      cairo_stroke(cr);
      fmt_size(pl->gap_bytes, gap, sizeof gap);
      cairo_set_font_size(cr, 8);
      cairo_text_extents_t te;
      cairo_text_extents(cr, gap, &te);
      text_at(cr, gx - te.x_advance / 2, gy + MAP_SIZE_BAND_H + 2 + MAP_NODE_BAND_H + 2 + 8, gap);
    }
    desc_line(desc, m, g, &ag, pl->mm, v, pl->nvmas);
  }
  g_free(class_order);
  g_free(ag.cls);
  g_free(ag.node);
  g_free(ag.tot_node);

  cairo_destroy(cr);
  cairo_surface_finish(surf);
  cairo_status_t st = cairo_surface_status(surf);
  cairo_surface_destroy(surf);
  gboolean ok = st == CAIRO_STATUS_SUCCESS;
  if (!ok) {
    g_set_error(error, MMUSIM_MAP_ERROR, MAP_ERROR_WRITE, "--map %s: cannot draw the picture: %s", path,
                cairo_status_to_string(st));
  } else {
    /* The description goes in right after the opening <svg ...> tag. */
    g_autofree char *safe_desc = map_text_safe(desc->str);
    g_autofree char *esc = g_markup_escape_text(safe_desc, -1);
    const char *open = strstr(sink.buf->str, "<svg");
    const char *gt = open ? strchr(open, '>') : NULL;
    if (gt) {
      gsize at = (gsize)(gt + 1 - sink.buf->str);
      g_autofree char *title_esc = g_markup_escape_text(title, -1);
      g_autofree char *ins = g_strdup_printf("\n<title>%s</title>\n<desc>\n%s</desc>", title_esc, esc);
      g_string_insert(sink.buf, (gssize)at, ins);
    }
    /* The text elements before the closing tag: on top of the drawing. */
    const char *close = g_strrstr(sink.buf->str, "</svg>");
    if (close)
      g_string_insert(sink.buf, close - sink.buf->str, texts->str);
    ok = out_file_set_contents(path, sink.buf->str, sink.buf->len, error);
    if (!ok)
      g_prefix_error(error, "--map: ");
  }
  g_string_free(sink.buf, TRUE);
  g_string_free(texts, TRUE);
  g_string_free(desc, TRUE);
  g_array_free(placed, TRUE);
  g_array_free(heads, TRUE);
  g_ptr_array_free(mms, TRUE);
  return ok;
}
