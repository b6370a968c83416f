/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compress_out.h - writing a trace file compressed by its name.
 *
 * The counterpart of input.h's transparent decompression: `trace convert`
 * writes OUT.gz, OUT.xz or OUT.zst compressed as gzip, xz or zstd would,
 * so a converted trace (ChampSim's are shipped as .champsimtrace.xz) need
 * not pass through a pipe.  The bytes go through an OutFile (base/outfile.h):
 * a conversion that fails half way leaves no file cut short under OUT.
 *
 * Levels are the command-line tools' defaults (gzip -6, xz -6, zstd -3),
 * so a file is what `gzip OUT` would have made, byte for byte where the
 * library is the tool's.
 */
#ifndef MMUSIM_COMPRESS_OUT_H
#define MMUSIM_COMPRESS_OUT_H

#include <glib.h>

#include "input.h"

typedef struct CompressOut CompressOut;

/* The compression OUT's name asks for (INPUT_PLAIN for none), and in
 * *inner_len the length of the name without its compression suffix (the
 * name that says the format inside).  A ".bz2" name, which cannot be
 * written, is INPUT_PLAIN with *bz2 set. */
InputCompression compress_out_kind(const char *path, size_t *inner_len, gboolean *bz2);

/* Start writing `path` compressed as `kind` (INPUT_PLAIN: as is). NULL
 * with the OutFile's error when it cannot be created. */
CompressOut *compress_out_open(const char *path, InputCompression kind, GError **error);
/* Compress and write n bytes; FALSE with a SIM_ERROR_WRITE error when the
 * file could not be written. */
gboolean compress_out_write(CompressOut *c, const void *p, size_t n, GError **error);
/* End the compressed stream, write its tail and commit the file (renamed
 * to its name).  Frees c either way. */
gboolean compress_out_commit(CompressOut *c, GError **error);
/* Give up: no file is left.  Accepts NULL. */
void compress_out_abort(CompressOut *c);

#endif
