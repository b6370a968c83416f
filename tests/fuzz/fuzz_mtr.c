/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_mtr.c - libFuzzer target: the .mtr reader on arbitrary bytes, both
 * streaming (every block, the index, the footer) and through the index
 * (`trace info` and starting mid-file), the file given as a memfd.
 */
#include "config.h"
#include "fuzz_common.h"
#include "mtr.h"

#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *err = NULL;
  fuzz_drain(mtr_source_from_input(trace_input_from_memory("fuzz", data, size, FALSE), &err));
  g_clear_error(&err);

  int fd = memfd_create("fuzz.mtr", MFD_CLOEXEC);
  if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
    if (fd >= 0)
      close(fd);
    return 0;
  }
  g_autofree char *path = g_strdup_printf("/proc/self/fd/%d", fd);
  MtrInfo info;
  if (mtr_read_info(path, &info, &err) && info.summary.records > 1)
    fuzz_drain(mtr_source_open(path, info.summary.records / 2, NULL));
  g_clear_error(&err);
  mtr_info_clear(&info);
  close(fd);
  return 0;
}
