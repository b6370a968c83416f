/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * input.h - the byte stream under every trace reader.
 *
 * A TraceInput reads a file, standard input, a pipe or a memory buffer, and
 * undoes gzip, xz or zstd compression it recognises by magic number, so each
 * reader parses plain bytes and every format can come compressed.  The first
 * bytes can be looked at before they are consumed (format detection works on
 * a pipe).  Memory is constant: one buffer of decompressed bytes and one of
 * compressed bytes, whatever the length of the stream.
 */
#ifndef MMUSIM_INPUT_H
#define MMUSIM_INPUT_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef enum { INPUT_PLAIN, INPUT_GZIP, INPUT_XZ, INPUT_ZSTD } InputCompression;

typedef struct TraceInput TraceInput;

/* Open `path` ("-" is standard input).  With `decompress`, a gzip, xz or zstd
 * stream is decompressed transparently. */
TraceInput *trace_input_open(const char *path, gboolean decompress, GError **error);
/* TRUE when `path` names a regular file (not "-", a pipe, a FIFO, a device
 * or /dev/stdin): only such a path may be opened a second time, to seek or
 * to read an index, without blocking or finding the stream consumed.  It
 * does not open the path, so it does not block on a FIFO. */
gboolean trace_path_regular(const char *path);
/* Read from a file descriptor the caller owns (it is not closed). */
TraceInput *trace_input_from_fd(int fd, const char *name, gboolean decompress);
/* Copy every byte read from the underlying file or pipe (before any
 * decompression) to `tee` as well; the caller keeps `tee` open. */
void trace_input_set_tee(TraceInput *in, FILE *tee);
/* Reading a pipe whose writer writes in small pieces (valgrind): after a
 * short read, wait a little so the pipe fills, sparing the writer a wakeup
 * of the reader for every piece. */
void trace_input_gather(TraceInput *in);
/* Make the input close its descriptor when freed. */
void trace_input_own_fd(TraceInput *in);
/* Take the raw bytes from `fn` instead of read(2): it returns as read(2)
 * does (0 at the end, -1 with errno), and may leave out bytes it judges
 * not part of the stream (the recorder: what another process wrote). */
typedef ssize_t (*TraceInputReadFn)(int fd, void *buf, size_t n, void *data);
void trace_input_set_read(TraceInput *in, TraceInputReadFn fn, void *data);
/* Read a copy of `len` bytes (tests, fuzz targets). */
TraceInput *trace_input_from_memory(const char *name, const void *data, size_t len, gboolean decompress);
void trace_input_free(TraceInput *in);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceInput, trace_input_free)

/* Make up to `want` bytes available without consuming them (want at most
 * TRACE_INPUT_PEEK_MAX); *data points at them.  Returns how many are there
 * (fewer only at the end of the stream), -1 on a read or decompression error. */
#define TRACE_INPUT_PEEK_MAX 65536
gssize trace_input_peek(TraceInput *in, const uint8_t **data, size_t want, GError **error);
/* Read up to `n` bytes.  Returns the count, 0 at the end, -1 on error. */
gssize trace_input_read(TraceInput *in, void *buf, size_t n, GError **error);
/* Read exactly `n` bytes; returns the count read (less than n only at the end
 * of the stream), -1 on error. */
gssize trace_input_read_full(TraceInput *in, void *buf, size_t n, GError **error);

/* Bytes consumed so far, of the decompressed stream. */
uint64_t trace_input_offset(const TraceInput *in);
const char *trace_input_name(const TraceInput *in);
InputCompression trace_input_compression(const TraceInput *in);
/* The path given to trace_input_open when it is a regular file (NULL for
 * stdin, pipes, FIFOs, devices, fds and memory): a reader of a plain regular
 * file may open it again to seek (the .mtr index). */
const char *trace_input_path(const TraceInput *in);

#endif
