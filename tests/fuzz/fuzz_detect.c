/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_detect.c - libFuzzer target: format detection, then whichever reader
 * it picks, as `mmusim run -t FILE` does with -f auto.
 */
#include "config.h"
#include "fuzz_common.h"
#include "trace_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *err = NULL;
  fuzz_drain(trace_format_open_input(trace_input_from_memory("fuzz", data, size, TRUE), TRACE_FORMAT_AUTO, NULL, &err));
  g_clear_error(&err);
  return 0;
}
