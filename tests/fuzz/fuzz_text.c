/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_text.c - libFuzzer target: the text reader on arbitrary bytes, through
 * the decompressing input (so gzip, xz and zstd framing is fuzzed too).
 */
#include "config.h"
#include "fuzz_common.h"
#include "text.h"
#include "input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_drain(text_source_from_input(trace_input_from_memory("fuzz", data, size, TRUE)));
  return 0;
}
