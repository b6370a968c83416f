/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compress_out.c - writing a trace file compressed by its name: gzip (zlib's
 * deflate with the gzip wrapper), xz (liblzma's easy encoder, CRC64 as xz
 * writes) or zstd (one frame, its streaming API).
 */
#include "config.h"
#include "compress_out.h"

#include <lzma.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "errors.h"
#include "outfile.h"

/* The command-line tools' default levels: gzip(1) -6, xz(1) -6, zstd(1) -3. */
#define COMPRESS_OUT_GZIP_LEVEL 6
#define COMPRESS_OUT_XZ_PRESET 6
#define COMPRESS_OUT_ZSTD_LEVEL 3
#define COMPRESS_OUT_CHUNK (256u * 1024u)

struct CompressOut {
  OutFile *file;
  InputCompression kind;
  z_stream z;
  lzma_stream x;
  ZSTD_CStream *zs;
  unsigned char *buf; /* compressed bytes before they are written */
};

InputCompression compress_out_kind(const char *path, size_t *inner_len, gboolean *bz2)
{
  static const struct { const char *suffix; InputCompression kind; } kinds[] = {
    { ".gz", INPUT_GZIP }, { ".xz", INPUT_XZ }, { ".zst", INPUT_ZSTD },
  };
  size_t len = strlen(path);
  *inner_len = len;
  *bz2 = g_str_has_suffix(path, ".bz2");
  for (unsigned i = 0; i < G_N_ELEMENTS(kinds); i++)
    if (g_str_has_suffix(path, kinds[i].suffix)) {
      *inner_len = len - strlen(kinds[i].suffix);
      return kinds[i].kind;
    }
  return INPUT_PLAIN;
}

static gboolean codec_error(CompressOut *c, const char *what, GError **error)
{
  g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE, "%s: %s", out_file_name(c->file), what);
  return FALSE;
}

CompressOut *compress_out_open(const char *path, InputCompression kind, GError **error)
{
  OutFile *f = out_file_open(path, error);
  if (!f)
    return NULL;
  CompressOut *c = g_new0(CompressOut, 1);
  c->file = f;
  c->kind = kind;
  c->buf = g_malloc(COMPRESS_OUT_CHUNK);
  gboolean ok = TRUE;
  switch (kind) {
  case INPUT_PLAIN: break;
  case INPUT_GZIP:
    /* 15-bit window + 16: the gzip wrapper; memory level 8 as gzip(1). */
    ok = deflateInit2(&c->z, COMPRESS_OUT_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    break;
  case INPUT_XZ:
    c->x = (lzma_stream)LZMA_STREAM_INIT;
    ok = lzma_easy_encoder(&c->x, COMPRESS_OUT_XZ_PRESET, LZMA_CHECK_CRC64) == LZMA_OK;
    break;
  case INPUT_ZSTD:
    c->zs = ZSTD_createCStream();
    ok = c->zs && !ZSTD_isError(ZSTD_initCStream(c->zs, COMPRESS_OUT_ZSTD_LEVEL));
    break;
  }
  if (!ok) {
    /* The encoders fail to start only when the host has no memory for them. */
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_WRITE, "%s: cannot start the compressor: out of host memory", path);
    compress_out_abort(c); /* each end function accepts a stream whose start failed */
    return NULL;
  }
  return c;
}

/* Feed n bytes (finish: and end the stream) through the encoder, writing
 * each full buffer of output. */
static gboolean pump(CompressOut *c, const void *p, size_t n, gboolean finish, GError **error)
{
  switch (c->kind) {
  case INPUT_PLAIN:
    return n == 0 || out_file_write(c->file, p, n, error);
  case INPUT_GZIP:
    c->z.next_in = (Bytef *)p;
    c->z.avail_in = (uInt)n;
    for (;;) {
      c->z.next_out = c->buf;
      c->z.avail_out = COMPRESS_OUT_CHUNK;
      int rc = deflate(&c->z, finish ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_ERROR)
        return codec_error(c, "gzip compression failed", error);
      size_t out = COMPRESS_OUT_CHUNK - c->z.avail_out;
      if (out && !out_file_write(c->file, c->buf, out, error))
        return FALSE;
      if (finish ? rc == Z_STREAM_END : c->z.avail_in == 0 && c->z.avail_out != 0)
        return TRUE;
    }
  case INPUT_XZ:
    c->x.next_in = p;
    c->x.avail_in = n;
    for (;;) {
      c->x.next_out = c->buf;
      c->x.avail_out = COMPRESS_OUT_CHUNK;
      lzma_ret rc = lzma_code(&c->x, finish ? LZMA_FINISH : LZMA_RUN);
      if (rc != LZMA_OK && rc != LZMA_STREAM_END)
        return codec_error(c, rc == LZMA_MEM_ERROR ? "xz compression: out of host memory" : "xz compression failed",
                           error);
      size_t out = COMPRESS_OUT_CHUNK - c->x.avail_out;
      if (out && !out_file_write(c->file, c->buf, out, error))
        return FALSE;
      if (finish ? rc == LZMA_STREAM_END : c->x.avail_in == 0 && c->x.avail_out != 0)
        return TRUE;
    }
  case INPUT_ZSTD: {
    ZSTD_inBuffer in = { p, n, 0 };
    for (;;) {
      ZSTD_outBuffer out = { c->buf, COMPRESS_OUT_CHUNK, 0 };
      size_t rc = ZSTD_compressStream2(c->zs, &out, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(rc))
        return codec_error(c, ZSTD_getErrorName(rc), error);
      if (out.pos && !out_file_write(c->file, c->buf, out.pos, error))
        return FALSE;
      if (finish ? rc == 0 : in.pos == in.size && out.pos < out.size)
        return TRUE;
    }
  }
  }
  return TRUE;
}

gboolean compress_out_write(CompressOut *c, const void *p, size_t n, GError **error)
{
  if (n == 0)
    return TRUE; /* liblzma takes a second call without progress for an error */
  return pump(c, p, n, FALSE, error);
}

static void end_codec(CompressOut *c)
{
  switch (c->kind) {
  case INPUT_PLAIN: break;
  case INPUT_GZIP: deflateEnd(&c->z); break;
  case INPUT_XZ: lzma_end(&c->x); break;
  case INPUT_ZSTD: ZSTD_freeCStream(c->zs); break;
  }
  g_free(c->buf);
}

gboolean compress_out_commit(CompressOut *c, GError **error)
{
  if (!pump(c, NULL, 0, TRUE, error)) {
    compress_out_abort(c);
    return FALSE;
  }
  end_codec(c);
  gboolean ok = out_file_commit(c->file, error);
  g_free(c);
  return ok;
}

void compress_out_abort(CompressOut *c)
{
  if (!c)
    return;
  end_codec(c);
  out_file_abort(c->file);
  g_free(c);
}
