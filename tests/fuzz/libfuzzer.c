/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libfuzzer.c - a libFuzzer target around one entry point of fuzz_targets.h,
 * named by -DFUZZ_ENTRY=fuzz_NAME when tests/fuzz/fuzz_NAME is built.
 */
#include "config.h"
#include "fuzz_targets.h"

#include <glib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  FUZZ_ENTRY(data, size);
  return 0;
}
