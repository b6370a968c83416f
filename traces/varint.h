/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * varint.h - LEB128 variable-length integers and zigzag signed deltas, the
 * integer encoding of .mtr blocks and index (doc/trace-format.md).
 *
 * An unsigned value is written 7 bits a byte, least significant first, the
 * top bit set on every byte but the last (as in DWARF and protobuf); a
 * signed delta d is first mapped to (d << 1) ^ (d >> 63) so small negative
 * deltas stay short.  Decoding is bounds-checked and refuses more than ten
 * bytes or a tenth byte above 1: corrupt input never reads past the buffer.
 */
#ifndef MMUSIM_VARINT_H
#define MMUSIM_VARINT_H

#include <glib.h>
#include <stdint.h>

#define VARINT_MAX_BYTES 10

/* Append v to p (room for VARINT_MAX_BYTES); returns the end. */
static inline uint8_t *varint_put(uint8_t *p, uint64_t v)
{
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

/* Decode from *p, not past end; FALSE on a truncated or overlong value. */
static inline gboolean varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
  const uint8_t *s = *p;
  if (G_LIKELY(s < end && *s < 0x80)) { /* the common one-byte case */
    *out = *s;
    *p = s + 1;
    return TRUE;
  }
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (s == end)
      return FALSE;
    uint8_t b = *s++;
    if (shift == 63 && b > 1)
      return FALSE;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      *p = s;
      return TRUE;
    }
  }
  return FALSE;
}

static inline uint64_t zigzag_encode(int64_t d)
{
  return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static inline int64_t zigzag_decode(uint64_t u)
{
  return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

#endif
