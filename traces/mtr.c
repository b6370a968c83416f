/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mtr.c - writer and reader of the native .mtr trace format, version 1.
 *
 * Layout (all integers little-endian; doc/trace-format.md has the tables):
 *
 *   header  magic[8] version:u32 meta_len:u32 crc:u32 meta[meta_len]
 *   block   "MTRB" payload_len:u32 raw_len:u32 records:u32 crc:u32 payload
 *   ...
 *   index   "MTRI" payload_len:u32 raw_len:u32 blocks:u32 crc:u32 payload
 *   footer  index_offset:u64 crc:u32 "MTRE"
 *
 * A block's payload is one zstd frame (RFC 8878) of raw_len bytes of
 * records; its crc is the CRC-32 (zlib's, ISO 3309) of the 12 bytes after
 * the block magic and of the payload, so a flipped bit in a length or in the
 * data is caught before anything is decoded.  The header crc covers version,
 * length and metadata; the footer crc its offset.
 *
 * Records in a block: one tag byte, then varints (varint.h):
 *   0x00-0x0f  access: bits 0-1 kind (R W D X), bit 2 a gap follows, bit 3
 *              a size follows (else the previous size of the same stream);
 *              then zigzag(addr - previous addr of the stream), [gap], [size].
 *              Instruction fetches and data accesses are two streams, each
 *              with its own previous address and size: lackey and ChampSim
 *              interleave them, and each is local on its own.
 *   0x80 compute N        0x81 mmap PAGE NPAGES prot flags
 *   0x82 munmap PAGE NPAGES  0x83 mprotect PAGE NPAGES prot
 *   0x84 madvise PAGE NPAGES advice   0x85 prctl option value
 *   0x86 mempolicy PAGE NPAGES policy nodemask (policy: a code of the table
 *        of kernel/mempolicy_mode.h, checked there with its nodemask)
 *   0x87 thread PID TID CPU+1 (sets the context)   0x88 roi begin  0x89 roi end
 *   0x8a mempolicy of the process: policy nodemask (no range)
 *   0x8b mmap of a file: as 0x81, its flags with MAP_F_FILE (a reader from
 *        before refuses the unknown tag rather than map it anonymous)
 *   0x8c mmap of a file with its offset and name: as 0x8b, then the offset
 *        in 4K pages and the name's length in bytes (0: unknown, 1..4095,
 *        TRACE_PATH_MAX) and its bytes, no NUL among them (a reader from
 *        before refuses the unknown tag rather than drop the name)
 *   0x8f context PID TID: the records after it belong to PID/TID (no record)
 * Every block starts with context (1, 1) and both previous addresses and
 * sizes 0.  Mapping events store 4K page numbers, so they are aligned by
 * construction; every other rule of the text format (addresses below 2^57,
 * sizes 1..4096, ids 1..2^32-1) is checked on reading, and a violation is
 * an error naming the block's byte offset and the record's number in it.
 *
 * Measured on the development machine (doc/performance.md, `make bench`):
 * 0.49 bytes an access for a lackey recording of `sort`, against 41 for
 * lackey's text and 0.73 for that text through zstd -3; decoding runs at
 * 3e7 to 1e8 records a second.
 * Left out: random access by time or by thread (the index is by record).
 */
#include "config.h"
#include "mtr.h"
#include "outfile.h"
#include "mempolicy_mode.h"
#include "mempolicy_syntax.h"
#include "reader.h"
#include "trace_format.h"
#include "varint.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define MTR_HEADER_BYTES 20         /* magic, version, meta_len, crc */
#define MTR_BLOCK_HEADER_BYTES 20   /* magic, payload_len, raw_len, records, crc */
#define MTR_FOOTER_BYTES 16
#define MTR_META_MAX_BYTES (1u << 20)
#define MTR_BLOCK_RAW_BYTES (1u << 20)      /* the writer closes a block past this */
#define MTR_BLOCK_MAX_BYTES (16u << 20)     /* readers refuse larger blocks (absurd sizes) */
#define MTR_RECORD_MAX_BYTES (64 + TRACE_PATH_MAX) /* longest encoded record: an mmap with a path */
#define MTR_ZSTD_LEVEL 3                    /* zstd's default: ~500 MB/s a core */
#define MTR_VA_LIMIT (1ULL << 57)           /* as the text format, rule 2 */
#define MTR_ACCESS_MAX_BYTES 4096           /* as the text format, rule 3 */
#define MTR_PAGE_SHIFT 12
/* mmap flags are record.h's MAP_F_* bits, stored as they are, so a flag the
 * text format adds needs no new version; the top bit stays reserved. */
#define MTR_MAP_FLAGS_MAX 0x7f

enum {
  TAG_ACCESS_GAP = 0x04,
  TAG_ACCESS_SIZE = 0x08,
  TAG_COMPUTE = 0x80,
  TAG_MMAP,
  TAG_MUNMAP,
  TAG_MPROTECT,
  TAG_MADVISE,
  TAG_PRCTL,
  TAG_MEMPOLICY,
  TAG_THREAD,
  TAG_ROI_BEGIN,
  TAG_ROI_END,
  TAG_MEMPOLICY_PROCESS, /* added in version 1: older readers refuse it as an unknown tag */
  TAG_MMAP_FILE,         /* an mmap with MAP_F_FILE: added in version 1 as 0x8a was */
  TAG_MMAP_NAMED,        /* an mmap of a file with offset and name: added in version 1 as 0x8b was */
  TAG_CONTEXT = 0x8f,
};

/* Added to a mempolicy record's policy number for the mode flag
 * MPOL_F_NUMA_BALANCING: a reader from before refuses it as a bad policy. */
#define MTR_POLICY_BALANCING 0x100u

static void put_u32(uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u64(uint8_t *p, uint64_t v)
{
  put_u32(p, (uint32_t)v);
  put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get_u64(const uint8_t *p)
{
  return get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static uint32_t crc_of(uint32_t crc, const uint8_t *p, size_t n)
{
  while (n) { /* zlib's crc32 takes a uInt length */
    uInt chunk = (uInt)MIN(n, 1u << 30);
    crc = (uint32_t)crc32(crc, p, chunk);
    p += chunk, n -= chunk;
  }
  return crc;
}

/* ---- the encoding state shared by writer and reader -------------------- */

typedef struct {
  uint64_t prev_addr[2]; /* 0: data, 1: instruction fetches */
  uint32_t prev_size[2];
  uint32_t pid, tid;
} CodecState;

static void codec_reset(CodecState *c)
{
  memset(c, 0, sizeof *c);
  c->pid = c->tid = 1;
}

/* ====================================================================== */
/* writing                                                                  */
/* ====================================================================== */

struct MtrWriter {
  OutFile *out;          /* a temporary name until mtr_writer_close() */
  char *name;
  GString *meta;
  gboolean header_done;
  uint64_t offset;       /* bytes written */
  CodecState st;
  uint8_t *raw;          /* the block being filled */
  size_t raw_len;
  uint32_t block_records;
  uint8_t *cbuf;
  size_t ccap;
  ZSTD_CCtx *cctx;
  GArray *index;         /* uint64_t offset, uint64_t records: pairs */
  uint64_t records;
  TraceSummary summary;
};

MtrWriter *mtr_writer_open(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  OutFile *f = out_file_open(path, error);
  if (!f)
    return NULL;
  MtrWriter *w = g_new0(MtrWriter, 1);
  w->out = f;
  w->name = g_strdup(out_file_name(f));
  w->meta = g_string_new(NULL);
  codec_reset(&w->st);
  w->raw = g_malloc(MTR_BLOCK_RAW_BYTES + MTR_RECORD_MAX_BYTES);
  w->ccap = ZSTD_compressBound(MTR_BLOCK_RAW_BYTES + MTR_RECORD_MAX_BYTES);
  w->cbuf = g_malloc(w->ccap);
  w->cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, MTR_ZSTD_LEVEL);
  ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0); /* the block crc covers it */
  w->index = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  trace_summary_init(&w->summary);
  return w;
}

void mtr_writer_set_meta(MtrWriter *w, const char *key, const char *value)
{
  g_return_if_fail(w != NULL && key != NULL && value != NULL && !w->header_done);
  g_string_append_printf(w->meta, "%s ", key);
  for (const char *s = value; *s; s++) /* one line: newlines become spaces */
    g_string_append_c(w->meta, *s == '\n' || *s == '\r' ? ' ' : *s);
  g_string_append_c(w->meta, '\n');
}

static gboolean out(MtrWriter *w, const void *p, size_t n, GError **error)
{
  if (!out_file_write(w->out, p, n, error))
    return FALSE;
  w->offset += n;
  return TRUE;
}

static gboolean write_header(MtrWriter *w, GError **error)
{
  uint8_t h[MTR_HEADER_BYTES];
  memcpy(h, MTR_MAGIC, MTR_MAGIC_BYTES);
  put_u32(h + 8, MTR_VERSION);
  put_u32(h + 12, (uint32_t)w->meta->len);
  uint32_t crc = crc_of(0, h + 8, 8);
  crc = crc_of(crc, (const uint8_t *)w->meta->str, w->meta->len);
  put_u32(h + 16, crc);
  w->header_done = TRUE;
  return out(w, h, sizeof h, error) && out(w, w->meta->str, w->meta->len, error);
}

/* Compress `raw` into a block (or the index) with the given magic. */
static gboolean write_block(MtrWriter *w, const char *magic, const uint8_t *raw, size_t raw_len, uint32_t count,
                            GError **error)
{
  size_t clen = ZSTD_compress2(w->cctx, w->cbuf, w->ccap, raw, raw_len);
  if (ZSTD_isError(clen)) {
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "%s: zstd: %s", w->name, ZSTD_getErrorName(clen));
    return FALSE;
  }
  uint8_t h[MTR_BLOCK_HEADER_BYTES];
  memcpy(h, magic, 4);
  put_u32(h + 4, (uint32_t)clen);
  put_u32(h + 8, (uint32_t)raw_len);
  put_u32(h + 12, count);
  put_u32(h + 16, crc_of(crc_of(0, h + 4, 12), w->cbuf, clen));
  return out(w, h, sizeof h, error) && out(w, w->cbuf, clen, error);
}

static gboolean flush_block(MtrWriter *w, GError **error)
{
  if (!w->block_records)
    return TRUE;
  uint64_t entry[2] = { w->offset, w->block_records };
  g_array_append_vals(w->index, entry, 2);
  gboolean ok = write_block(w, "MTRB", w->raw, w->raw_len, w->block_records, error);
  w->raw_len = 0;
  w->block_records = 0;
  codec_reset(&w->st);
  return ok;
}

static uint8_t *put_range(uint8_t *p, const TraceRecord *r)
{
  p = varint_put(p, r->addr >> MTR_PAGE_SHIFT);
  return varint_put(p, r->len >> MTR_PAGE_SHIFT);
}

gboolean mtr_writer_write(MtrWriter *w, const TraceRecord *r, GError **error)
{
  g_return_val_if_fail(w != NULL && r != NULL, FALSE);
  if (!w->header_done && !write_header(w, error))
    return FALSE;
  if (r->type >= N_REC_TYPES || r->kind > ACC_IFETCH) {
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE, "%s: record %" G_GUINT64_FORMAT " has no .mtr encoding",
                w->name, w->records);
    return FALSE;
  }
  if (w->raw_len >= MTR_BLOCK_RAW_BYTES && !flush_block(w, error))
    return FALSE;
  CodecState *st = &w->st;
  uint8_t *p = w->raw + w->raw_len;
  if (r->type != REC_THREAD && (r->pid != st->pid || r->tid != st->tid)) {
    *p++ = TAG_CONTEXT;
    p = varint_put(p, r->pid);
    p = varint_put(p, r->tid);
    st->pid = r->pid, st->tid = r->tid;
  }
  switch ((TraceRecordType)r->type) {
  case REC_ACCESS: {
    unsigned s = r->kind == ACC_IFETCH;
    uint8_t *tag = p++;
    *tag = r->kind;
    p = varint_put(p, zigzag_encode((int64_t)(r->addr - st->prev_addr[s])));
    st->prev_addr[s] = r->addr;
    if (r->gap) {
      *tag |= TAG_ACCESS_GAP;
      p = varint_put(p, r->gap);
    }
    if (r->size != st->prev_size[s]) {
      *tag |= TAG_ACCESS_SIZE;
      p = varint_put(p, r->size);
      st->prev_size[s] = r->size;
    }
    break;
  }
  case REC_COMPUTE:
    *p++ = TAG_COMPUTE;
    p = varint_put(p, r->len);
    break;
  case REC_MMAP:
  {
    gboolean named = (r->flags & MAP_F_FILE) && (r->arg2 || r->path);
    size_t plen = named && r->path ? strlen(r->path) : 0;
    if (plen > TRACE_PATH_MAX || (r->arg2 & ((1u << MTR_PAGE_SHIFT) - 1))) {
      g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE,
                  "%s: record %" G_GUINT64_FORMAT ": %s", w->name, w->records,
                  plen > TRACE_PATH_MAX ? "path longer than 4095 bytes (PATH_MAX)" : "file offset not 4K-aligned");
      return FALSE;
    }
    *p++ = named ? TAG_MMAP_NAMED : r->flags & MAP_F_FILE ? TAG_MMAP_FILE : TAG_MMAP;
    p = put_range(p, r);
    *p++ = r->prot;
    *p++ = r->flags;
    if (named) {
      p = varint_put(p, r->arg2 >> MTR_PAGE_SHIFT);
      p = varint_put(p, plen);
      memcpy(p, r->path ? r->path : "", plen);
      p += plen;
    }
    break;
  }
  case REC_MUNMAP:
    *p++ = TAG_MUNMAP;
    p = put_range(p, r);
    break;
  case REC_MPROTECT:
    *p++ = TAG_MPROTECT;
    p = put_range(p, r);
    *p++ = r->prot;
    break;
  case REC_MADVISE:
    *p++ = TAG_MADVISE;
    p = put_range(p, r);
    p = varint_put(p, (uint64_t)(uint32_t)r->arg);
    break;
  case REC_PRCTL:
    *p++ = TAG_PRCTL;
    p = varint_put(p, (uint64_t)(uint32_t)r->arg);
    p = varint_put(p, r->arg2);
    break;
  case REC_MEMPOLICY:
    if (r->flags & MPOL_F_PROCESS) {
      *p++ = TAG_MEMPOLICY_PROCESS;
    } else {
      *p++ = TAG_MEMPOLICY;
      p = put_range(p, r);
    }
    p = varint_put(p, (uint64_t)(uint32_t)r->arg | ((r->flags & MPOL_F_BALANCING) ? MTR_POLICY_BALANCING : 0));
    p = varint_put(p, r->arg2);
    break;
  case REC_THREAD:
    *p++ = TAG_THREAD;
    p = varint_put(p, r->pid);
    p = varint_put(p, r->tid);
    p = varint_put(p, (uint64_t)((int64_t)r->arg + 1));
    st->pid = r->pid, st->tid = r->tid;
    break;
  case REC_ROI_BEGIN:
    *p++ = TAG_ROI_BEGIN;
    break;
  case REC_ROI_END:
    *p++ = TAG_ROI_END;
    break;
  case N_REC_TYPES:
    break;
  }
  w->raw_len = (size_t)(p - w->raw);
  w->block_records++;
  w->records++;
  trace_summary_add(&w->summary, r);
  return TRUE;
}

uint64_t mtr_writer_records(const MtrWriter *w)
{
  return w->records;
}

uint64_t mtr_writer_bytes(const MtrWriter *w)
{
  return w->offset;
}

static void writer_free(MtrWriter *w)
{
  g_free(w->name);
  g_string_free(w->meta, TRUE);
  g_free(w->raw);
  g_free(w->cbuf);
  ZSTD_freeCCtx(w->cctx);
  g_array_free(w->index, TRUE);
  trace_summary_clear(&w->summary);
  g_free(w);
}

gboolean mtr_writer_close(MtrWriter *w, GError **error)
{
  g_return_val_if_fail(w != NULL, FALSE);
  gboolean ok = (w->header_done || write_header(w, error)) && flush_block(w, error);
  if (ok) {
    /* The index: block offsets (deltas) and record counts, then the summary. */
    trace_summary_finish(&w->summary);
    GByteArray *ix = g_byte_array_new();
    uint8_t tmp[VARINT_MAX_BYTES];
    guint blocks = w->index->len / 2;
    g_byte_array_append(ix, tmp, (guint)(varint_put(tmp, blocks) - tmp));
    uint64_t prev = 0;
    for (guint i = 0; i < blocks; i++) {
      uint64_t off = g_array_index(w->index, uint64_t, 2 * i), n = g_array_index(w->index, uint64_t, 2 * i + 1);
      g_byte_array_append(ix, tmp, (guint)(varint_put(tmp, off - prev) - tmp));
      g_byte_array_append(ix, tmp, (guint)(varint_put(tmp, n) - tmp));
      prev = off;
    }
    trace_summary_encode(&w->summary, ix);
    uint64_t index_offset = w->offset;
    if (ix->len > w->ccap) {
      w->ccap = ZSTD_compressBound(ix->len);
      w->cbuf = g_realloc(w->cbuf, w->ccap);
    }
    ok = write_block(w, "MTRI", ix->data, ix->len, blocks, error);
    g_byte_array_free(ix, TRUE);
    uint8_t f[MTR_FOOTER_BYTES];
    put_u64(f, index_offset);
    put_u32(f + 8, crc_of(0, f, 8));
    memcpy(f + 12, "MTRE", 4);
    ok = ok && out(w, f, sizeof f, error);
  }
  if (ok)
    ok = out_file_commit(g_steal_pointer(&w->out), error); /* renamed to its name only now */
  out_file_abort(w->out);
  writer_free(w);
  return ok;
}

void mtr_writer_abort(MtrWriter *w)
{
  if (w) {
    out_file_abort(w->out); /* the temporary file goes: no file cut short */
    writer_free(w);
  }
}

/* ====================================================================== */
/* reading                                                                  */
/* ====================================================================== */

typedef struct {
  TraceReader rd;
  GPtrArray *meta;
  uint64_t file_offset;  /* of the next byte `in` gives */
  uint64_t block_offset; /* of the current block, for messages */
  uint8_t *cbuf, *raw;
  size_t cap;            /* of both */
  const uint8_t *p, *end; /* undecoded records of the current block */
  uint32_t left;         /* records of the block not yet decoded */
  uint32_t block_records;
  uint64_t skip;         /* records still to skip (a start mid-file) */
  CodecState st;
  ZSTD_DCtx *dctx;
  gboolean done;
} MtrSource;

static gboolean bad(MtrSource *m, GError **error, uint64_t offset, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean bad(MtrSource *m, GError **error, uint64_t offset, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE, "%s: offset %" G_GUINT64_FORMAT ": %s", m->rd.name, offset, what);
  return FALSE;
}

/* Read exactly n bytes at the current position; a short read is a
 * truncation named with its offset. */
static gboolean take(MtrSource *m, void *buf, size_t n, const char *what, GError **error)
{
  gssize got = trace_input_read_full(m->rd.in, buf, n, error);
  if (got < 0)
    return FALSE;
  if ((size_t)got < n)
    return bad(m, error, m->file_offset + (uint64_t)got, "file ends inside %s (truncated?); expected %zu more bytes", what,
               n - (size_t)got);
  m->file_offset += n;
  return TRUE;
}

/* Parse and check the metadata lines. */
static gboolean parse_meta(MtrSource *m, const char *text, size_t len, GError **error)
{
  const char *s = text, *end = text + len;
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    if (!nl)
      return bad(m, error, MTR_HEADER_BYTES + (uint64_t)(s - text), "metadata line without newline; expected 'key value' lines");
    for (const char *c = s; c < nl; c++)
      if (*c == '\0')
        return bad(m, error, MTR_HEADER_BYTES + (uint64_t)(c - text), "NUL byte in the metadata; expected text");
    g_ptr_array_add(m->meta, g_strndup(s, (gsize)(nl - s)));
    s = nl + 1;
  }
  return TRUE;
}

static gboolean read_header(MtrSource *m, GError **error)
{
  uint8_t h[MTR_HEADER_BYTES];
  gssize got = trace_input_read_full(m->rd.in, h, sizeof h, error);
  if (got < 0)
    return FALSE;
  if (got < MTR_MAGIC_BYTES || memcmp(h, MTR_MAGIC, MTR_MAGIC_BYTES) != 0)
    return bad(m, error, 0, "wrong magic number; expected an .mtr file (89 4d 54 52 0d 0a 1a 0a)");
  if ((size_t)got < sizeof h)
    return bad(m, error, (uint64_t)got, "file ends inside the header (truncated?)");
  m->file_offset = sizeof h;
  uint32_t version = get_u32(h + 8), len = get_u32(h + 12);
  if (version != MTR_VERSION)
    return bad(m, error, 8, "unsupported .mtr version %u; expected %u", version, MTR_VERSION);
  if (len > MTR_META_MAX_BYTES)
    return bad(m, error, 12, "absurd metadata length %u; expected at most %u bytes", len, MTR_META_MAX_BYTES);
  g_autofree char *meta = g_malloc(len + 1);
  if (!take(m, meta, len, "the header metadata", error))
    return FALSE;
  uint32_t crc = crc_of(crc_of(0, h + 8, 8), (const uint8_t *)meta, len);
  if (crc != get_u32(h + 16))
    return bad(m, error, 0, "header checksum mismatch (corrupt header)");
  return parse_meta(m, meta, len, error);
}

const char *mtr_source_meta(TraceSource *src, const char *key)
{
  g_return_val_if_fail(src != NULL && key != NULL, NULL);
  MtrSource *m = (MtrSource *)src;
  size_t klen = strlen(key);
  for (guint i = 0; i < m->meta->len; i++) {
    const char *line = g_ptr_array_index(m->meta, i);
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
      return line + klen + 1;
  }
  return NULL;
}

/* Read a block header and payload at the current position into cbuf; sets
 * *magic.  Checks sizes and the crc. */
static gboolean read_block(MtrSource *m, char magic[4], uint32_t *payload_len, uint32_t *raw_len, uint32_t *count,
                           GError **error)
{
  uint8_t h[MTR_BLOCK_HEADER_BYTES];
  m->block_offset = m->file_offset;
  if (!take(m, h, sizeof h, "a block header", error))
    return FALSE;
  memcpy(magic, h, 4);
  if (memcmp(h, "MTRB", 4) && memcmp(h, "MTRI", 4))
    return bad(m, error, m->block_offset, "wrong block magic %02x %02x %02x %02x; expected 'MTRB' (a block) or 'MTRI' (the index)",
               h[0], h[1], h[2], h[3]);
  *payload_len = get_u32(h + 4);
  *raw_len = get_u32(h + 8);
  *count = get_u32(h + 12);
  if (*payload_len > MTR_BLOCK_MAX_BYTES || *raw_len > MTR_BLOCK_MAX_BYTES)
    return bad(m, error, m->block_offset + 4, "absurd block size (%u compressed, %u raw bytes); expected at most %u",
               *payload_len, *raw_len, MTR_BLOCK_MAX_BYTES);
  if (!memcmp(h, "MTRB", 4) && (uint64_t)*count > *raw_len)
    return bad(m, error, m->block_offset + 12, "absurd record count %u for %u bytes of records", *count, *raw_len);
  if (*payload_len > m->cap || *raw_len > m->cap) {
    m->cap = MAX(*payload_len, *raw_len);
    m->cbuf = g_realloc(m->cbuf, m->cap);
    m->raw = g_realloc(m->raw, m->cap);
  }
  if (!take(m, m->cbuf, *payload_len, "a block", error))
    return FALSE;
  if (crc_of(crc_of(0, h + 4, 12), m->cbuf, *payload_len) != get_u32(h + 16))
    return bad(m, error, m->block_offset, "block checksum mismatch (corrupt block)");
  return TRUE;
}

static gboolean decompress(MtrSource *m, uint32_t payload_len, uint32_t raw_len, GError **error)
{
  size_t got = ZSTD_decompressDCtx(m->dctx, m->raw, raw_len, m->cbuf, payload_len);
  if (ZSTD_isError(got))
    return bad(m, error, m->block_offset, "block does not decompress (%s)", ZSTD_getErrorName(got));
  if (got != raw_len)
    return bad(m, error, m->block_offset, "block decompresses to %zu bytes; its header says %u", got, raw_len);
  return TRUE;
}

/* After the index: the footer, then the end of the file. */
static gboolean read_footer(MtrSource *m, uint64_t index_offset, GError **error)
{
  uint8_t f[MTR_FOOTER_BYTES], extra;
  uint64_t at = m->file_offset;
  if (!take(m, f, sizeof f, "the footer", error))
    return FALSE;
  if (memcmp(f + 12, "MTRE", 4) || crc_of(0, f, 8) != get_u32(f + 8) || get_u64(f) != index_offset)
    return bad(m, error, at, "bad footer; expected the index offset, its checksum and 'MTRE'");
  gssize got = trace_input_read(m->rd.in, &extra, 1, error);
  if (got < 0)
    return FALSE;
  if (got > 0)
    return bad(m, error, m->file_offset, "data after the footer; expected the end of the file");
  return TRUE;
}

/* Load the next block; sets m->done after the index. */
static gboolean next_block(MtrSource *m, GError **error)
{
  char magic[4];
  uint32_t payload_len = 0, raw_len = 0, count = 0;
  if (!read_block(m, magic, &payload_len, &raw_len, &count, error))
    return FALSE;
  if (memcmp(magic, "MTRI", 4) == 0) {
    m->done = TRUE;
    return read_footer(m, m->block_offset, error);
  }
  if (!decompress(m, payload_len, raw_len, error))
    return FALSE;
  m->p = m->raw;
  m->end = m->raw + raw_len;
  m->left = m->block_records = count;
  codec_reset(&m->st);
  return TRUE;
}

/* ---- decoding records ---- */

static gboolean rec_bad(MtrSource *m, GError **error, const char *what, const char *expected)
{
  return bad(m, error, m->block_offset, "record %u of the block: %s; expected %s", m->block_records - m->left, what,
             expected);
}

#define GET(v)                                                                  \
  do {                                                                          \
    if (!varint_get(&m->p, m->end, &(v)))                                       \
      return rec_bad(m, error, "truncated or overlong number", "a varint");     \
  } while (0)

static gboolean get_range(MtrSource *m, TraceRecord *r, GError **error)
{
  uint64_t page, pages;
  GET(page);
  GET(pages);
  if (page >= MTR_VA_LIMIT >> MTR_PAGE_SHIFT || pages == 0 || pages > (MTR_VA_LIMIT >> MTR_PAGE_SHIFT) - page)
    return rec_bad(m, error, "range beyond the 57-bit virtual address space or empty",
                   "a nonempty range of 4K pages below 2^57");
  r->addr = page << MTR_PAGE_SHIFT;
  r->len = pages << MTR_PAGE_SHIFT;
  return TRUE;
}

static gboolean get_byte(MtrSource *m, uint8_t *out, uint8_t max, const char *what, GError **error)
{
  if (m->p == m->end)
    return rec_bad(m, error, "record truncated", what);
  if (*m->p > max)
    return rec_bad(m, error, "value out of range", what);
  *out = *m->p++;
  return TRUE;
}

static gboolean get_id(MtrSource *m, uint32_t *out, GError **error)
{
  uint64_t v;
  GET(v);
  if (v < 1 || v > UINT32_MAX)
    return rec_bad(m, error, "bad process or thread id", "an id 1..4294967295");
  *out = (uint32_t)v;
  return TRUE;
}

/* The offset and name of a file mapping (tag 0x8c), the name interned. */
static gboolean get_file_name(MtrSource *m, TraceRecord *r, GError **error)
{
  uint64_t pages, len;
  GET(pages);
  if (pages > (UINT64_MAX >> MTR_PAGE_SHIFT))
    return rec_bad(m, error, "file offset too large", "an offset below 2^64 bytes");
  r->arg2 = pages << MTR_PAGE_SHIFT;
  GET(len);
  if (len > TRACE_PATH_MAX)
    return rec_bad(m, error, "path longer than 4095 bytes (PATH_MAX)", "a path of at most 4095 bytes");
  if (len > (uint64_t)(m->end - m->p))
    return rec_bad(m, error, "record truncated", "the bytes of the path");
  if (memchr(m->p, '\0', len))
    return rec_bad(m, error, "a NUL byte in a path", "a path without NUL bytes");
  if (len)
    r->path = trace_path_intern(&m->rd.paths, (const char *)m->p, len);
  m->p += len;
  return TRUE;
}

/* Decode one record (or a context change, *got = FALSE). */
static gboolean decode_one(MtrSource *m, TraceRecord *r, gboolean *got, GError **error)
{
  CodecState *st = &m->st;
  uint8_t tag = *m->p++;
  uint64_t v, w;
  memset(r, 0, sizeof *r);
  *got = TRUE;
  if (tag < 0x10) {
    unsigned s = (tag & 3) == ACC_IFETCH;
    r->type = REC_ACCESS;
    r->kind = tag & 3;
    GET(v);
    r->addr = st->prev_addr[s] + (uint64_t)zigzag_decode(v);
    st->prev_addr[s] = r->addr;
    if (tag & TAG_ACCESS_GAP) {
      GET(v);
      if (v > UINT32_MAX)
        return rec_bad(m, error, "gap too large", "at most 4294967295 instructions");
      r->gap = (uint32_t)v;
    }
    if (tag & TAG_ACCESS_SIZE) {
      GET(v);
      if (v < 1 || v > MTR_ACCESS_MAX_BYTES)
        return rec_bad(m, error, "bad access size", "1..4096 bytes");
      st->prev_size[s] = (uint32_t)v;
    }
    r->size = st->prev_size[s];
    if (r->size == 0)
      return rec_bad(m, error, "access without a size", "a size on the first access of a stream");
    if (r->addr >= MTR_VA_LIMIT || r->size > MTR_VA_LIMIT - r->addr)
      return rec_bad(m, error, "address beyond the 57-bit virtual address space", "an access below 2^57");
    r->pid = st->pid, r->tid = st->tid;
    return TRUE;
  }
  r->pid = st->pid, r->tid = st->tid;
  switch (tag) {
  case TAG_COMPUTE:
    r->type = REC_COMPUTE;
    GET(r->len);
    return TRUE;
  case TAG_MMAP:
  case TAG_MMAP_FILE:
  case TAG_MMAP_NAMED: {
    r->type = REC_MMAP;
    gboolean file = tag != TAG_MMAP;
    if (!(get_range(m, r, error) && get_byte(m, &r->prot, PROT_R | PROT_W | PROT_X, "protection bits 0..7", error) &&
          get_byte(m, &r->flags, MTR_MAP_FLAGS_MAX, "mmap flags 0..127", error)))
      return FALSE;
    if (!(r->flags & MAP_F_FILE) != !file || (file && (r->flags & (MAP_F_HUGETLB | MAP_F_ONDEMAND))))
      return rec_bad(m, error, file ? "file mmap (tag 0x8b) without the file flag, or with hugetlb or ondemand"
                                    : "anonymous mmap (tag 0x81) with the file flag",
                     file ? "the file flag (32) alone among hugetlb and ondemand" : "no file flag (32)");
    return tag != TAG_MMAP_NAMED || get_file_name(m, r, error);
  }
  case TAG_MUNMAP:
    r->type = REC_MUNMAP;
    return get_range(m, r, error);
  case TAG_MPROTECT:
    r->type = REC_MPROTECT;
    return get_range(m, r, error) && get_byte(m, &r->prot, PROT_R | PROT_W | PROT_X, "protection bits 0..7", error);
  case TAG_MADVISE:
    r->type = REC_MADVISE;
    if (!get_range(m, r, error))
      return FALSE;
    GET(v);
    if (v > ADV_COLLAPSE)
      return rec_bad(m, error, "unknown advice", "0..3 (hugepage, nohugepage, dontneed, collapse)");
    r->arg = (int32_t)v;
    return TRUE;
  case TAG_PRCTL:
    r->type = REC_PRCTL;
    GET(v);
    GET(w);
    if (v != PRCTL_THP_DISABLE || w > 1)
      return rec_bad(m, error, "unknown prctl", "thp_disable 0 or 1");
    r->arg = (int32_t)v, r->arg2 = w;
    return TRUE;
  case TAG_MEMPOLICY:
  case TAG_MEMPOLICY_PROCESS:
    r->type = REC_MEMPOLICY;
    if (tag == TAG_MEMPOLICY_PROCESS)
      r->flags = MPOL_F_PROCESS;
    else if (!get_range(m, r, error))
      return FALSE;
    GET(v);
    GET(w);
    gboolean balancing = (v & ~(uint64_t)(MTR_POLICY_BALANCING - 1)) == MTR_POLICY_BALANCING;
    if (balancing)
      v -= MTR_POLICY_BALANCING;
    const MempolicyMode *mode = mempolicy_mode_by_code(v);
    if (!mode || !mempolicy_mode_nodes_ok(mode, w) || (balancing && !mode->numa_balancing)) {
      unsigned last = 0;
      for (unsigned i = 0; mempolicy_mode_nth(i); i++)
        last = MAX(last, (unsigned)mempolicy_mode_nth(i)->code);
      g_autofree char *want =
        g_strdup_printf("local, or a policy 1..%u with a node mask (one node for preferred), plus %u with "
                        "MPOL_F_NUMA_BALANCING for %s",
                        last, MTR_POLICY_BALANCING, mempolicy_syntax_flag_expected());
      return rec_bad(m, error, "bad memory policy", want);
    }
    r->arg = (int32_t)v, r->arg2 = w;
    if (balancing)
      r->flags |= MPOL_F_BALANCING;
    return TRUE;
  case TAG_THREAD:
    r->type = REC_THREAD;
    if (!get_id(m, &r->pid, error) || !get_id(m, &r->tid, error))
      return FALSE;
    GET(v);
    if (v > (uint64_t)INT32_MAX + 1)
      return rec_bad(m, error, "bad cpu", "a cpu 0..2147483647 or none");
    r->arg = (int32_t)((int64_t)v - 1);
    st->pid = r->pid, st->tid = r->tid;
    return TRUE;
  case TAG_ROI_BEGIN:
    r->type = REC_ROI_BEGIN;
    return TRUE;
  case TAG_ROI_END:
    r->type = REC_ROI_END;
    return TRUE;
  case TAG_CONTEXT:
    *got = FALSE;
    return get_id(m, &st->pid, error) && get_id(m, &st->tid, error);
  default: {
    g_autofree char *what = g_strdup_printf("unknown record tag 0x%02x", tag);
    return rec_bad(m, error, what, "0x00-0x0f (accesses) or 0x80-0x89, 0x8f");
  }
  }
}
#undef GET

static gboolean mtr_fill(TraceReader *rd, TraceBatch *batch, GError **error)
{
  MtrSource *m = (MtrSource *)rd;
  while (batch->n < TRACE_BATCH_MAX && !m->done) {
    if (m->p == m->end) {
      if (m->left) {
        rec_bad(m, error, "block ends early", "as many records as the block header says");
        break;
      }
      if (!next_block(m, error))
        break;
      continue;
    }
    if (m->left == 0) {
      rec_bad(m, error, "bytes after the last record", "the end of the block");
      break;
    }
    gboolean got;
    TraceRecord *r = &batch->rec[batch->n];
    if (!decode_one(m, r, &got, error))
      break;
    if (!got)
      continue;
    m->left--;
    if (m->skip) {
      m->skip--;
      continue;
    }
    batch->n++;
  }
  return *error == NULL;
}

static void mtr_clear(TraceReader *rd)
{
  MtrSource *m = (MtrSource *)rd;
  g_ptr_array_free(m->meta, TRUE);
  g_free(m->cbuf);
  g_free(m->raw);
  ZSTD_freeDCtx(m->dctx);
}

/* Read ahead: decompressing and decoding a record costs more than handing
 * it to the model's core (traces/readahead.h). */
static const TraceReaderOps mtr_ops = TRACE_READER_OPS("mtr", TRUE, mtr_fill, mtr_clear);

static MtrSource *mtr_new(TraceInput *in)
{
  MtrSource *m = g_new0(MtrSource, 1);
  trace_reader_init(&m->rd, &mtr_ops, UNMAPPED_SEGV, in, trace_input_name(in));
  m->meta = g_ptr_array_new_with_free_func(g_free);
  m->dctx = ZSTD_createDCtx();
  return m;
}

TraceSource *mtr_source_from_input(TraceInput *in, GError **error)
{
  g_return_val_if_fail(in != NULL, NULL);
  MtrSource *m = mtr_new(in);
  if (!read_header(m, error)) {
    trace_source_free(&m->rd.base);
    return NULL;
  }
  const char *rule = mtr_source_meta(&m->rd.base, "unmapped");
  if (rule && strcmp(rule, "ondemand") == 0)
    m->rd.base.unmapped = UNMAPPED_ONDEMAND;
  return &m->rd.base;
}

/* ---- the index ---- */

typedef struct {
  GArray *blocks; /* uint64_t offset, records pairs */
  TraceSummary summary;
  uint64_t file_bytes;
} MtrIndex;

/* The index is at the end: only a regular file may be opened again for it. */
static gboolean not_seekable(const char *path, GError **error)
{
  g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN,
              "'%s' is not a regular file: its index cannot be read without seeking; give a file, or read the "
              "trace from its start in one pass", path);
  return FALSE;
}

/* Read header, footer and index of a file through `m` (positioned after the
 * header), with pread on its own descriptor. */
static gboolean load_index(MtrSource *m, const char *path, MtrIndex *ix, GError **error)
{
  /* A pipe or FIFO cannot be opened again: it would block, or start where
   * the first reader stopped. */
  if (!trace_path_regular(path)) {
    return not_seekable(path, error);
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "cannot open trace '%s': %s", path, g_strerror(e));
    return FALSE;
  }
  gboolean ok = FALSE;
  off_t size = lseek(fd, 0, SEEK_END);
  uint8_t f[MTR_FOOTER_BYTES], h[MTR_BLOCK_HEADER_BYTES];
  uint8_t *payload = NULL, *raw = NULL;
  if (size < 0 || (uint64_t)size < m->file_offset + MTR_BLOCK_HEADER_BYTES + MTR_FOOTER_BYTES ||
      pread(fd, f, sizeof f, size - MTR_FOOTER_BYTES) != (ssize_t)sizeof f || memcmp(f + 12, "MTRE", 4) ||
      crc_of(0, f, 8) != get_u32(f + 8)) {
    bad(m, error, size > MTR_FOOTER_BYTES ? (uint64_t)size - MTR_FOOTER_BYTES : 0,
        "no footer (truncated or unfinished file?); expected the index offset and 'MTRE' in the last 16 bytes");
    goto out;
  }
  uint64_t at = get_u64(f);
  if (at < m->file_offset || at > (uint64_t)size - MTR_FOOTER_BYTES - MTR_BLOCK_HEADER_BYTES ||
      pread(fd, h, sizeof h, (off_t)at) != (ssize_t)sizeof h || memcmp(h, "MTRI", 4)) {
    bad(m, error, (uint64_t)size - MTR_FOOTER_BYTES, "footer points to %" G_GUINT64_FORMAT ", where no index starts", at);
    goto out;
  }
  uint32_t plen = get_u32(h + 4), rlen = get_u32(h + 8), blocks = get_u32(h + 12);
  if (plen > MTR_BLOCK_MAX_BYTES || rlen > MTR_BLOCK_MAX_BYTES || at + MTR_BLOCK_HEADER_BYTES + plen != (uint64_t)size - MTR_FOOTER_BYTES) {
    bad(m, error, at + 4, "absurd index size (%u compressed, %u raw bytes)", plen, rlen);
    goto out;
  }
  payload = g_malloc(plen + 1);
  raw = g_malloc(rlen + 1);
  if (pread(fd, payload, plen, (off_t)(at + MTR_BLOCK_HEADER_BYTES)) != (ssize_t)plen ||
      crc_of(crc_of(0, h + 4, 12), payload, plen) != get_u32(h + 16)) {
    bad(m, error, at, "index checksum mismatch (corrupt index)");
    goto out;
  }
  size_t got = ZSTD_decompressDCtx(m->dctx, raw, rlen, payload, plen);
  if (ZSTD_isError(got) || got != rlen) {
    bad(m, error, at, "index does not decompress");
    goto out;
  }
  const uint8_t *p = raw, *end = raw + rlen;
  uint64_t n, prev = 0;
  if (!varint_get(&p, end, &n) || n != blocks || n > rlen) {
    bad(m, error, at, "malformed index (block count)");
    goto out;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t e[2];
    if (!varint_get(&p, end, &e[0]) || !varint_get(&p, end, &e[1]) || e[0] > at - prev || (i && !e[0])) {
      bad(m, error, at, "malformed index (entry %" G_GUINT64_FORMAT ")", i);
      goto out;
    }
    e[0] += prev;
    prev = e[0];
    g_array_append_vals(ix->blocks, e, 2);
  }
  if (!trace_summary_decode(&ix->summary, p, end)) {
    bad(m, error, at, "malformed index (summary)");
    goto out;
  }
  ix->file_bytes = (uint64_t)size;
  ok = TRUE;
out:
  g_free(payload);
  g_free(raw);
  close(fd);
  return ok;
}

TraceSource *mtr_source_open(const char *path, uint64_t first, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  TraceInput *in = trace_input_open(path, FALSE, error);
  if (!in)
    return NULL;
  TraceSource *src = mtr_source_from_input(in, error);
  if (!src || first == 0)
    return src;
  MtrSource *m = (MtrSource *)src;
  MtrIndex ix = { g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
  trace_summary_init(&ix.summary);
  gboolean ok = load_index(m, path, &ix, error);
  if (ok) {
    /* The block holding record `first`, then skip inside it. */
    uint64_t before = 0, offset = 0;
    for (guint i = 0; i < ix.blocks->len / 2; i++) {
      uint64_t n = g_array_index(ix.blocks, uint64_t, 2 * i + 1);
      if (before + n > first) {
        offset = g_array_index(ix.blocks, uint64_t, 2 * i);
        break;
      }
      before += n;
    }
    if (!offset) { /* past the end: nothing to read */
      m->done = TRUE;
    } else {
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0 || lseek(fd, (off_t)offset, SEEK_SET) < 0) {
        int e = errno;
        g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_OPEN, "cannot seek in '%s': %s", path, g_strerror(e));
        if (fd >= 0)
          close(fd);
        ok = FALSE;
      } else {
        trace_input_free(m->rd.in);
        m->rd.in = trace_input_from_fd(fd, path, FALSE);
        trace_input_own_fd(m->rd.in);
        m->file_offset = offset;
        m->skip = first - before;
      }
    }
  }
  g_array_free(ix.blocks, TRUE);
  trace_summary_clear(&ix.summary);
  if (!ok) {
    trace_source_free(src);
    return NULL;
  }
  return src;
}

gboolean mtr_read_info(const char *path, MtrInfo *info, GError **error)
{
  g_return_val_if_fail(path != NULL && info != NULL, FALSE);
  memset(info, 0, sizeof *info);
  trace_summary_init(&info->summary);
  info->meta = g_ptr_array_new_with_free_func(g_free);
  if (!trace_path_regular(path)) { /* before opening: a FIFO would block */
    return not_seekable(path, error);
  }
  TraceInput *in = trace_input_open(path, FALSE, error);
  if (!in)
    return FALSE;
  MtrSource *m = mtr_new(in);
  MtrIndex ix = { g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
  ix.summary = info->summary;
  gboolean ok = read_header(m, error) && load_index(m, path, &ix, error);
  info->summary = ix.summary;
  info->version = MTR_VERSION;
  info->blocks = ix.blocks->len / 2;
  info->file_bytes = ix.file_bytes;
  for (guint i = 0; i < m->meta->len; i++)
    g_ptr_array_add(info->meta, g_strdup(g_ptr_array_index(m->meta, i)));
  g_array_free(ix.blocks, TRUE);
  trace_source_free(&m->rd.base);
  return ok;
}

void mtr_info_clear(MtrInfo *info)
{
  if (info->meta)
    g_ptr_array_free(info->meta, TRUE);
  trace_summary_clear(&info->summary);
  memset(info, 0, sizeof *info);
}

/* The row of the registry of readers (trace_format.c): -f mtr. */
const TraceFormatRow mtr_reader = {
  .name = "mtr",
  .help = "mmusim's native binary format: checksummed blocks of delta-coded records, an index",
  .source = "doc/trace-format.md, The .mtr format (version 1)",
  .open = mtr_source_from_input,
};
