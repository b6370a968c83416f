/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace_format.c - format names and detection.
 *
 * Detection looks at the first TRACE_FORMAT_SNIFF_BYTES of the (decompressed)
 * stream without consuming them, so it works on a pipe:
 *  1. the .mtr magic number                                   -> mtr
 *     a first line that is the text header (TEXT_TRACE_HEADER) -> text
 *     (whatever follows: the text reader reports a NUL byte or a bad
 *     line with its line number, not as an address of ChampSim's)
 *  2. a NUL byte or another control character than tab, CR, LF, FF, VT,
 *     and every whole 64-byte record in the window names an instruction
 *     (champsim_plausible: ip neither 0 nor beyond 2^57)        -> champsim
 *     (ChampSim traces have no magic number; they are the binary format)
 *     otherwise binary bytes go to the text reader, which reports the
 *     first one with its line: /dev/zero is no trace of any format
 *  3. a line in lackey's shape (`==PID==`, `I  HEX,N`, ` L HEX,N`, ...)
 *     among the first lines                                   -> lackey
 *  4. anything else, an empty input included                  -> text
 * A file whose name ends in .mtr is read as .mtr without looking, so that a
 * damaged one is reported as such rather than read as ChampSim.
 */
#include "config.h"
#include "trace_format.h"
#include "champsim.h"
#include "lackey.h"
#include "mtr.h"
#include "text.h"

#include <string.h>

#define TRACE_FORMAT_SNIFF_BYTES 4096

/* ---- the registry of readers (base/registry.h) --------------------------- */

/* In TraceFormat order: row i is format i + 1.  A reader is one file,
 * NAME.c defining NAME_reader, and one row here: its extern and its place
 * at the end of the table. */
extern const TraceFormatRow text_reader;
extern const TraceFormatRow lackey_reader;
extern const TraceFormatRow mtr_reader;
extern const TraceFormatRow champsim_reader;
static const TraceFormatRow *const readers[] = { &text_reader, &lackey_reader, &mtr_reader, &champsim_reader };

const TraceFormatRow *const *trace_format_readers(unsigned *n)
{
  *n = G_N_ELEMENTS(readers);
  return readers;
}

char *trace_format_choices(void)
{
  g_autofree char *names = registry_names(REGISTRY_ROWS(readers), G_N_ELEMENTS(readers), ", ", ", ");
  return g_strconcat("auto (default), ", names, NULL);
}

gboolean trace_format_parse(const char *name, TraceFormat *out, GError **error)
{
  if (strcmp(name, "auto") == 0) {
    *out = TRACE_FORMAT_AUTO;
    return TRUE;
  }
  int i = registry_find(REGISTRY_ROWS(readers), G_N_ELEMENTS(readers), name);
  if (i < 0) {
    g_autofree char *names = registry_names(REGISTRY_ROWS(readers), G_N_ELEMENTS(readers), ", ", " or ");
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_FORMAT, "unknown trace format '%s'; expected auto, %s", name,
                names);
    return FALSE;
  }
  *out = (TraceFormat)(i + 1);
  return TRUE;
}

const char *trace_format_name(TraceFormat f)
{
  if (f == TRACE_FORMAT_AUTO)
    return "auto";
  return (unsigned)f - 1 < G_N_ELEMENTS(readers) ? readers[f - 1]->name : "?";
}

int trace_format_detect(TraceInput *in, GError **error)
{
  const uint8_t *b;
  gssize n = trace_input_peek(in, &b, TRACE_FORMAT_SNIFF_BYTES, error);
  if (n < 0)
    return -1;
  if (n >= MTR_MAGIC_BYTES && memcmp(b, MTR_MAGIC, MTR_MAGIC_BYTES) == 0)
    return TRACE_FORMAT_MTR;
  size_t header = strlen(TEXT_TRACE_HEADER);
  if ((size_t)n > header && memcmp(b, TEXT_TRACE_HEADER, header) == 0 &&
      (b[header] == '\n' || (b[header] == '\r' && (size_t)n > header + 1 && b[header + 1] == '\n')))
    return TRACE_FORMAT_TEXT;
  for (gssize i = 0; i < n; i++)
    if (b[i] < 0x20 && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' && b[i] != '\f' && b[i] != '\v')
      return champsim_plausible(b, (size_t)n) ? TRACE_FORMAT_CHAMPSIM : TRACE_FORMAT_TEXT;
  const char *s = (const char *)b, *end = s + n;
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    if (!nl) /* a line cut by the sniff window is not looked at */
      break;
    if (lackey_line_matches(s, (size_t)(nl - s)))
      return TRACE_FORMAT_LACKEY;
    s = nl + 1;
  }
  return TRACE_FORMAT_TEXT;
}

TraceSource *trace_format_open_input(TraceInput *in, TraceFormat format, TraceFormat *detected, GError **error)
{
  g_return_val_if_fail(in != NULL, NULL);
  if (format == TRACE_FORMAT_AUTO) {
    int f = trace_format_detect(in, error);
    if (f < 0) {
      trace_input_free(in);
      return NULL;
    }
    format = (TraceFormat)f;
  }
  if (detected)
    *detected = format;
  if ((unsigned)format - 1 >= G_N_ELEMENTS(readers)) {
    trace_input_free(in);
    g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_FORMAT, "no reader for format %d", format);
    return NULL;
  }
  return readers[format - 1]->open(in, error);
}

TraceSource *trace_format_open(const char *path, TraceFormat format, TraceFormat *detected, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  /* A damaged .mtr file would be taken for ChampSim's headerless binary;
   * its name says what it was meant to be. */
  if (format == TRACE_FORMAT_AUTO && g_str_has_suffix(path, ".mtr"))
    format = TRACE_FORMAT_MTR;
  TraceInput *in = trace_input_open(path, TRUE, error);
  return in ? trace_format_open_input(in, format, detected, error) : NULL;
}
