/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * input.c - bytes of a trace from a file, a pipe or memory, decompressed.
 *
 * The stream is recognised by its first bytes: gzip (1f 8b, RFC 1952), xz
 * (fd 37 7a 58 5a 00, the .xz file format 1.0.4), zstd (28 b5 2f fd, RFC
 * 8878); anything else is read as it is.  Concatenated members or frames
 * (`cat a.gz b.gz`, pigz, pzstd) are read one after the other, as the
 * command-line tools do.  Decompressed bytes go to one buffer that also
 * serves peeking, so detection never consumes input.
 *
 * Left out: seeking (readers that seek open the path again, and only when it
 * is a regular file: a FIFO opened twice blocks, a pipe read twice has lost
 * what the first read took), bzip2 and lz4.
 */
#include "config.h"
#include "input.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define INPUT_OBUF_BYTES (256u * 1024) /* decompressed bytes; at least 2x TRACE_INPUT_PEEK_MAX */
#define INPUT_CBUF_BYTES (128u * 1024) /* compressed bytes */
#define INPUT_MAGIC_BYTES 6            /* the longest magic number (xz) */
#define INPUT_GATHER_BYTES (64u * 1024) /* a read shorter than this: wait before the next */
/* The largest zstd window the reader accepts: 2^27 = 128 MiB, zstd's own
 * default (ZSTD_WINDOWLOG_LIMIT_DEFAULT in lib/zstd.h), which `zstd -d`
 * also accepts without --long or --memory; a frame made with --long=28 or
 * more is refused with a message saying how to read it. */
#define INPUT_ZSTD_WINDOW_LOG 27
#define INPUT_GATHER_WAIT_US 2000      /* 2 ms: ~25 KB of lackey output at valgrind's pace */

struct TraceInput {
  char *name, *path;
  int fd;                   /* -1 when reading memory */
  gboolean close_fd;
  uint8_t *mem;             /* a copy of the memory buffer */
  size_t mem_len, mem_pos;
  gboolean decompress;
  gboolean started;         /* the magic number was looked at */
  InputCompression comp;
  gboolean raw_eof;         /* nothing more to read from fd or memory */
  gboolean dec_end;         /* the decoder finished a member and had no more input */
  uint8_t *cbuf;            /* compressed bytes cbuf[cpos, clen) */
  size_t cpos, clen;
  uint64_t coffset;         /* compressed bytes consumed, for messages */
  z_stream z;
  lzma_stream x;
  ZSTD_DStream *zs;
  uint8_t *obuf;            /* decompressed bytes obuf[opos, olen) */
  size_t opos, olen;
  uint64_t offset;          /* decompressed bytes consumed */
  gboolean eof;             /* no more decompressed bytes */
  GError *failure;          /* a read error, repeated to later calls */
  FILE *tee;                /* a copy of the raw bytes, or NULL */
  gboolean gather;          /* let a pipe fill before reading it again */
  size_t last_read;         /* bytes the last read(2) gave */
  TraceInputReadFn read_fn; /* instead of read(2), or NULL */
  void *read_data;
};

static const char *const COMPRESSION_NAMES[] = { "plain", "gzip", "xz", "zstd" };

static TraceInput *input_new(const char *name, gboolean decompress)
{
  TraceInput *in = g_new0(TraceInput, 1);
  in->name = g_strdup(name);
  in->fd = -1;
  in->decompress = decompress;
  in->obuf = g_malloc(INPUT_OBUF_BYTES);
  return in;
}

TraceInput *trace_input_open(const char *path, gboolean decompress, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  if (strcmp(path, "-") == 0)
    return trace_input_from_fd(STDIN_FILENO, "<stdin>", decompress);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "cannot open trace '%s': %s", path, g_strerror(e));
    return NULL;
  }
  TraceInput *in = input_new(path, decompress);
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    in->path = g_strdup(path);
  in->fd = fd;
  in->close_fd = TRUE;
  return in;
}

gboolean trace_path_regular(const char *path)
{
  struct stat st;
  return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

TraceInput *trace_input_from_fd(int fd, const char *name, gboolean decompress)
{
  g_return_val_if_fail(fd >= 0 && name != NULL, NULL);
  TraceInput *in = input_new(name, decompress);
  in->fd = fd;
  return in;
}

void trace_input_set_tee(TraceInput *in, FILE *tee)
{
  g_return_if_fail(in != NULL);
  in->tee = tee;
}

void trace_input_gather(TraceInput *in)
{
  g_return_if_fail(in != NULL && in->fd >= 0);
  in->gather = TRUE;
}

void trace_input_own_fd(TraceInput *in)
{
  g_return_if_fail(in != NULL && in->fd >= 0);
  in->close_fd = TRUE;
}

void trace_input_set_read(TraceInput *in, TraceInputReadFn fn, void *data)
{
  g_return_if_fail(in != NULL && in->fd >= 0);
  in->read_fn = fn;
  in->read_data = data;
}

TraceInput *trace_input_from_memory(const char *name, const void *data, size_t len, gboolean decompress)
{
  g_return_val_if_fail(name != NULL && (data != NULL || len == 0), NULL);
  TraceInput *in = input_new(name, decompress);
  in->mem = g_memdup2(data, len ? len : 1);
  in->mem_len = len;
  return in;
}

void trace_input_free(TraceInput *in)
{
  if (!in)
    return;
  switch (in->comp) {
  case INPUT_GZIP: inflateEnd(&in->z); break;
  case INPUT_XZ: lzma_end(&in->x); break;
  case INPUT_ZSTD: ZSTD_freeDStream(in->zs); break;
  case INPUT_PLAIN: break;
  }
  if (in->close_fd)
    close(in->fd);
  g_clear_error(&in->failure);
  g_free(in->mem);
  g_free(in->cbuf);
  g_free(in->obuf);
  g_free(in->name);
  g_free(in->path);
  g_free(in);
}

/* ---- the raw bytes ---------------------------------------------------- */

/* Read up to n raw bytes; 0 at the end, -1 on error. */
static gssize raw_read(TraceInput *in, uint8_t *buf, size_t n, GError **error)
{
  if (in->raw_eof || n == 0)
    return 0;
  if (!in->mem) {
    /* A writer that writes a line at a time wakes a waiting reader for
     * each line; letting the pipe fill first spares most wakeups. */
    if (in->gather && in->last_read < INPUT_GATHER_BYTES)
      g_usleep(INPUT_GATHER_WAIT_US);
    for (;;) {
      ssize_t got = in->read_fn ? in->read_fn(in->fd, buf, n, in->read_data) : read(in->fd, buf, n);
      in->last_read = got > 0 ? (size_t)got : 0;
      if (got >= 0) {
        if (got == 0)
          in->raw_eof = TRUE;
        if (in->tee && got && fwrite(buf, 1, (size_t)got, in->tee) != (size_t)got) {
          int e = errno;
          g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "%s: cannot write the copy: %s", in->name, g_strerror(e));
          return -1;
        }
        return got;
      }
      if (errno != EINTR) {
        int e = errno;
        g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "%s: read error: %s", in->name, g_strerror(e));
        return -1;
      }
    }
  }
  size_t got = MIN(n, in->mem_len - in->mem_pos);
  memcpy(buf, in->mem + in->mem_pos, got);
  in->mem_pos += got;
  if (got == 0)
    in->raw_eof = TRUE;
  return (gssize)got;
}

/* Refill cbuf when it is empty; returns FALSE on error. */
static gboolean refill_compressed(TraceInput *in, GError **error)
{
  if (in->cpos < in->clen || in->raw_eof)
    return TRUE;
  in->coffset += in->clen;
  in->cpos = in->clen = 0;
  gssize got = raw_read(in, in->cbuf, INPUT_CBUF_BYTES, error);
  if (got < 0)
    return FALSE;
  in->clen = (size_t)got;
  return TRUE;
}

/* Not corrupt: a limit of the decoder was hit.  Says which and how to
 * read the file all the same. */
static gboolean too_large(TraceInput *in, GError **error)
{
  if (in->comp == INPUT_ZSTD)
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN,
                "%s: this zstd frame needs a window larger than the %u MiB the reader allows (zstd's default "
                "limit; the file was compressed with zstd --long=%u or more): decompress it first, e.g. "
                "zstd -d --long=31 -c FILE | mmusim run -t -", in->name, (1u << INPUT_ZSTD_WINDOW_LOG) >> 20,
                INPUT_ZSTD_WINDOW_LOG + 1);
  else
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN,
                "%s: out of host memory: liblzma cannot allocate the %" G_GUINT64_FORMAT " MiB this xz stream "
                "needs (its dictionary); give the program more memory (ulimit -v), or recompress the file with "
                "a smaller dictionary (xz -6 needs 9 MiB to decompress)", in->name,
                (guint64)(lzma_memusage(&in->x) >> 20));
  return FALSE;
}

static gboolean corrupt(TraceInput *in, GError **error, const char *what)
{
  g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE,
              "%s: corrupt %s data at compressed byte offset %" G_GUINT64_FORMAT " (%s); expected a complete %s stream",
              in->name, COMPRESSION_NAMES[in->comp], in->coffset + in->cpos, what, COMPRESSION_NAMES[in->comp]);
  return FALSE;
}

/* Look at the magic number and set up the decoder.  The bytes read for it
 * stay in cbuf: the decoder or the plain path consumes them. */
static gboolean start(TraceInput *in, GError **error)
{
  in->started = TRUE;
  in->cbuf = g_malloc(INPUT_CBUF_BYTES);
  while (in->clen < INPUT_MAGIC_BYTES && !in->raw_eof) {
    gssize got = raw_read(in, in->cbuf + in->clen, INPUT_CBUF_BYTES - in->clen, error);
    if (got < 0)
      return FALSE;
    in->clen += (size_t)got;
  }
  const uint8_t *b = in->cbuf;
  in->comp = INPUT_PLAIN;
  if (!in->decompress)
    return TRUE;
  if (in->clen >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    in->comp = INPUT_GZIP;
    if (inflateInit2(&in->z, 15 + 16) != Z_OK) /* 15-bit window, gzip wrapper */
      return corrupt(in, error, "cannot start zlib");
  } else if (in->clen >= 6 && memcmp(b, "\xfd" "7zXZ\0", 6) == 0) {
    in->comp = INPUT_XZ;
    in->x = (lzma_stream)LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&in->x, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
      return corrupt(in, error, "cannot start liblzma");
  } else if (in->clen >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
    in->comp = INPUT_ZSTD;
    in->zs = ZSTD_createDStream();
    ZSTD_initDStream(in->zs);
    ZSTD_DCtx_setParameter(in->zs, ZSTD_d_windowLogMax, INPUT_ZSTD_WINDOW_LOG);
  }
  return TRUE;
}

/* Decompress into obuf[olen, cap); returns bytes made, 0 at the end, -1 on error. */
static gssize decode(TraceInput *in, size_t cap, GError **error)
{
  for (;;) {
    if (!refill_compressed(in, error))
      return -1;
    size_t avail = in->clen - in->cpos;
    uint8_t *out = in->obuf + in->olen;
    size_t room = cap - in->olen;
    size_t made = 0, used = 0;
    switch (in->comp) {
    case INPUT_GZIP: {
      if (in->dec_end) { /* after a member: another one, or the end */
        if (avail == 0)
          return 0;
        if (inflateReset(&in->z) != Z_OK)
          return corrupt(in, error, "zlib reset"), -1;
        in->dec_end = FALSE;
      }
      in->z.next_in = in->cbuf + in->cpos;
      in->z.avail_in = (uInt)avail;
      in->z.next_out = out;
      in->z.avail_out = (uInt)room;
      int rc = inflate(&in->z, Z_NO_FLUSH);
      used = avail - in->z.avail_in;
      made = room - in->z.avail_out;
      if (rc == Z_STREAM_END)
        in->dec_end = TRUE;
      else if (rc != Z_OK && !(rc == Z_BUF_ERROR && avail == 0))
        return in->cpos += used, corrupt(in, error, in->z.msg ? in->z.msg : "inflate failed"), -1;
      if (rc != Z_STREAM_END && avail == 0 && made == 0 && in->raw_eof)
        return corrupt(in, error, "stream ends inside a member"), -1;
      break;
    }
    case INPUT_XZ: {
      in->x.next_in = in->cbuf + in->cpos;
      in->x.avail_in = avail;
      in->x.next_out = out;
      in->x.avail_out = room;
      lzma_ret rc = lzma_code(&in->x, in->raw_eof && avail == 0 ? LZMA_FINISH : LZMA_RUN);
      used = avail - in->x.avail_in;
      made = room - in->x.avail_out;
      if (rc == LZMA_STREAM_END) {
        in->cpos += used;
        if (made)
          return (gssize)made;
        return 0;
      }
      if (rc == LZMA_MEM_ERROR || rc == LZMA_MEMLIMIT_ERROR) /* no limit is set: memory the host refused */
        return in->cpos += used, too_large(in, error), -1;
      if (rc != LZMA_OK)
        return in->cpos += used, corrupt(in, error, rc == LZMA_FORMAT_ERROR ? "not xz" : rc == LZMA_DATA_ERROR ? "data error" : rc == LZMA_BUF_ERROR ? "truncated" : "liblzma error"), -1;
      break;
    }
    case INPUT_ZSTD: {
      if (avail == 0 && in->raw_eof) {
        if (!in->dec_end)
          return corrupt(in, error, "stream ends inside a frame"), -1;
        return 0;
      }
      ZSTD_inBuffer ib = { in->cbuf + in->cpos, avail, 0 };
      ZSTD_outBuffer ob = { out, room, 0 };
      size_t rc = ZSTD_decompressStream(in->zs, &ob, &ib);
      used = ib.pos;
      made = ob.pos;
      if (ZSTD_isError(rc) && ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge)
        return in->cpos += used, too_large(in, error), -1;
      if (ZSTD_isError(rc))
        return in->cpos += used, corrupt(in, error, ZSTD_getErrorName(rc)), -1;
      in->dec_end = rc == 0; /* a frame is complete */
      break;
    }
    case INPUT_PLAIN:
      g_assert_not_reached();
    }
    in->cpos += used;
    if (made)
      return (gssize)made;
    if (in->comp == INPUT_GZIP && in->dec_end && in->cpos == in->clen && in->raw_eof)
      return 0;
  }
}

/* Append more decompressed bytes to obuf (compacting it first if needed).
 * Returns bytes added, 0 at the end, -1 on error. */
static gssize fill(TraceInput *in, GError **error)
{
  GError *err = NULL;
  if (trace_failure_repeat(in->failure, error))
    return -1;
  if (in->eof)
    return 0;
  if (!in->started && !start(in, &err))
    goto fail;
  if (in->olen == INPUT_OBUF_BYTES || in->opos > INPUT_OBUF_BYTES / 2) {
    memmove(in->obuf, in->obuf + in->opos, in->olen - in->opos);
    in->olen -= in->opos;
    in->opos = 0;
  }
  gssize got;
  if (in->comp == INPUT_PLAIN) {
    if (in->cpos < in->clen) { /* the bytes read for the magic number */
      size_t n = MIN(in->clen - in->cpos, INPUT_OBUF_BYTES - in->olen);
      memcpy(in->obuf + in->olen, in->cbuf + in->cpos, n);
      in->cpos += n;
      got = (gssize)n;
    } else {
      got = raw_read(in, in->obuf + in->olen, INPUT_OBUF_BYTES - in->olen, &err);
    }
  } else {
    got = decode(in, INPUT_OBUF_BYTES, &err);
  }
  if (got < 0)
    goto fail;
  if (got == 0)
    in->eof = TRUE;
  in->olen += (size_t)got;
  return got;
fail:
  if (!err) /* every failing path sets one; keep the input stopped regardless */
    g_set_error(&err, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "%s: read error", in->name);
  trace_failure_keep(&in->failure, err, error);
  return -1;
}

gssize trace_input_peek(TraceInput *in, const uint8_t **data, size_t want, GError **error)
{
  g_return_val_if_fail(in != NULL && data != NULL && want <= TRACE_INPUT_PEEK_MAX, -1);
  while (in->olen - in->opos < want) {
    gssize got = fill(in, error);
    if (got < 0)
      return -1;
    if (got == 0)
      break;
  }
  *data = in->obuf + in->opos;
  return (gssize)MIN(want, in->olen - in->opos);
}

gssize trace_input_read(TraceInput *in, void *buf, size_t n, GError **error)
{
  g_return_val_if_fail(in != NULL && (buf != NULL || n == 0), -1);
  if (n == 0)
    return 0;
  if (in->opos == in->olen) {
    /* Large reads of a plain stream go straight to the caller's buffer. */
    if (in->started && in->comp == INPUT_PLAIN && in->cpos == in->clen && n >= INPUT_OBUF_BYTES / 2 && !in->failure) {
      in->opos = in->olen = 0;
      GError *err = NULL;
      gssize got = raw_read(in, buf, n, &err);
      if (got < 0) {
        trace_failure_keep(&in->failure, err, error);
        return -1;
      }
      if (got == 0)
        in->eof = TRUE;
      in->offset += (uint64_t)got;
      return got;
    }
    gssize got = fill(in, error);
    if (got <= 0)
      return got;
  }
  size_t take = MIN(n, in->olen - in->opos);
  memcpy(buf, in->obuf + in->opos, take);
  in->opos += take;
  in->offset += take;
  return (gssize)take;
}

gssize trace_input_read_full(TraceInput *in, void *buf, size_t n, GError **error)
{
  size_t done = 0;
  while (done < n) {
    gssize got = trace_input_read(in, (uint8_t *)buf + done, n - done, error);
    if (got < 0)
      return -1;
    if (got == 0)
      break;
    done += (size_t)got;
  }
  return (gssize)done;
}

uint64_t trace_input_offset(const TraceInput *in)
{
  return in->offset;
}

const char *trace_input_name(const TraceInput *in)
{
  return in->name;
}

InputCompression trace_input_compression(const TraceInput *in)
{
  return in->comp;
}

const char *trace_input_path(const TraceInput *in)
{
  return in->comp == INPUT_PLAIN ? in->path : NULL;
}
