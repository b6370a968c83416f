/*
 * trace_format.c - format names and detection.
 *
 * Detection looks at the first TRACE_FORMAT_SNIFF_BYTES of the (decompressed)
 * stream without consuming them, so it works on a pipe:
 *  1. the .mtr magic number                                   -> mtr
 *     a first line that is the text header (TEXT_TRACE_HEADER) -> text
 *     (whatever follows: the text reader reports a NUL byte or a bad
 *     line with its line number, not as an address of ChampSim's)
 *  2. a NUL byte or another control character than tab, CR, LF, FF, VT
 *                                                              -> champsim
 *     (ChampSim traces have no magic number; they are the binary format)
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

static const char *const FORMAT_NAMES[] = {
  [TRACE_FORMAT_AUTO] = "auto", [TRACE_FORMAT_TEXT] = "text", [TRACE_FORMAT_LACKEY] = "lackey",
  [TRACE_FORMAT_MTR] = "mtr", [TRACE_FORMAT_CHAMPSIM] = "champsim",
};

gboolean trace_format_parse(const char *name, TraceFormat *out, GError **error)
{
  for (unsigned k = 0; k < G_N_ELEMENTS(FORMAT_NAMES); k++)
    if (strcmp(name, FORMAT_NAMES[k]) == 0) {
      *out = (TraceFormat)k;
      return TRUE;
    }
  g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_FORMAT,
              "unknown trace format '%s'; expected auto, text, lackey, mtr or champsim", name);
  return FALSE;
}

const char *trace_format_name(TraceFormat f)
{
  return (unsigned)f < G_N_ELEMENTS(FORMAT_NAMES) ? FORMAT_NAMES[f] : "?";
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
      return TRACE_FORMAT_CHAMPSIM;
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
  switch (format) {
  case TRACE_FORMAT_TEXT: return text_source_from_input(in);
  case TRACE_FORMAT_LACKEY: return lackey_source_from_input(in);
  case TRACE_FORMAT_CHAMPSIM: return champsim_source_from_input(in);
  case TRACE_FORMAT_MTR: return mtr_source_from_input(in, error);
  case TRACE_FORMAT_AUTO: break;
  }
  trace_input_free(in);
  g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_FORMAT, "no reader for format %d", format);
  return NULL;
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
