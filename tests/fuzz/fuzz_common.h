/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_common.h - shared by the libFuzzer targets: read a source to its end
 * or its first error.  A target must never crash, hang or leak on any input;
 * errors are the expected outcome of most inputs.
 */
#ifndef MMUSIM_FUZZ_COMMON_H
#define MMUSIM_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include "source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_drain(TraceSource *src)
{
  static TraceBatch batch; /* 160 KiB: not on the stack */
  if (!src)
    return;
  GError *err = NULL;
  for (;;) {
    if (!trace_source_next(src, &batch, &err)) {
      g_assert(err != NULL && err->message[0]);
      g_error_free(err);
      break;
    }
    if (batch.n == 0)
      break;
    for (unsigned i = 0; i < batch.n; i++) /* every record is in range */
      g_assert(batch.rec[i].type < N_REC_TYPES && batch.rec[i].addr < (1ULL << 57));
  }
  trace_source_free(src);
}

#endif
