/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * map.h - `mmusim run --map FILE.svg`: a picture of the address spaces of a
 * machine, as the kernel leaves them at the end of a run.
 *
 * One row (or several, wrapped) per process: its VMAs along the address
 * axis, gaps between them compressed to a fixed-width break that names the
 * gap's size.  Each VMA is a box labelled with its start, size and flags;
 * its upper band shows which parts are mapped by base pages, PMD leaves
 * (2M, or 16M on ppc64 with 64K pages) and PUD leaves (1G), and which are
 * unmapped; its lower band the NUMA node of the frames.  Columns of a
 * minimum width aggregate the pages under them (stacked by share), so a
 * 1 GiB mapping of 4K pages is a few hundred rectangles, not 262,144.
 *
 * The SVG also carries a plain-text description of every region (its
 * <desc> element), so the addresses in the picture can be searched for and
 * read by tools: cairo draws text as glyph outlines.
 */
#ifndef MMUSIM_MAP_H
#define MMUSIM_MAP_H

#include <glib.h>
#include "machine.h"

#define MMUSIM_MAP_ERROR (mmusim_map_error_quark())
GQuark mmusim_map_error_quark(void);
typedef enum {
  MAP_ERROR_WRITE, /* the picture cannot be drawn (writing it: base/outfile.h) */
} MapError;

/* Draw every address space of m to an SVG file at path.  `title` heads the
 * picture (e.g. "ptrchase:size=1G,... on skylake").  FALSE with error set
 * when the file cannot be written. */
gboolean map_write_svg(const Machine *m, const char *title, const char *path, GError **error);

#endif
