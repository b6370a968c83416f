/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_targets.c - the entry points of fuzz_targets.h for the trace readers,
 * the settings parser and machine files: what each libFuzzer target and
 * the mutation driver run on one input.
 */
#include "config.h"
#include "fuzz_targets.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "champsim.h"
#include "input.h"
#include "lackey.h"
#include "mtr.h"
#include "preset.h"
#include "settings.h"
#include "source.h"
#include "text.h"
#include "trace_format.h"

void fuzz_error(GError *err)
{
  g_assert(err != NULL && err->message && err->message[0]);
  if (g_getenv("MMUSIM_FUZZ_VERBOSE"))
    fprintf(stderr, "fuzz: %s\n", err->message);
  g_error_free(err);
}

/* Read a source to its end or its first error, which must have a message. */
static void drain(TraceSource *src)
{
  static TraceBatch batch; /* 160 KiB: not on the stack */
  if (!src)
    return;
  GError *err = NULL;
  for (;;) {
    if (!trace_source_next(src, &batch, &err)) {
      fuzz_error(err);
      break;
    }
    if (batch.n == 0)
      break;
    for (unsigned i = 0; i < batch.n; i++) /* every record is in range */
      g_assert(batch.rec[i].type < N_REC_TYPES && batch.rec[i].addr < (1ULL << 57));
  }
  trace_source_free(src);
}

/* An open that failed says why. */
static void drain_or_error(TraceSource *src, GError *err)
{
  if (!src)
    fuzz_error(err);
  else
    g_clear_error(&err);
  drain(src);
}

void fuzz_text(const uint8_t *data, size_t size)
{
  drain(text_source_from_input(trace_input_from_memory("fuzz", data, size, TRUE)));
}

void fuzz_lackey(const uint8_t *data, size_t size)
{
  drain(lackey_source_from_input(trace_input_from_memory("fuzz", data, size, TRUE)));
}

void fuzz_champsim(const uint8_t *data, size_t size)
{
  drain(champsim_source_from_input(trace_input_from_memory("fuzz", data, size, TRUE)));
}

void fuzz_detect(const uint8_t *data, size_t size)
{
  GError *err = NULL;
  TraceSource *src = trace_format_open_input(trace_input_from_memory("fuzz", data, size, TRUE), TRACE_FORMAT_AUTO,
                                             NULL, &err);
  drain_or_error(src, err);
}

/* Streaming (every block, the index, the footer), then through the index
 * (`trace info` and starting mid-file), the file given as a memfd. */
void fuzz_mtr(const uint8_t *data, size_t size)
{
  GError *err = NULL;
  TraceSource *src = mtr_source_from_input(trace_input_from_memory("fuzz", data, size, FALSE), &err);
  drain_or_error(src, err);

  int fd = memfd_create("fuzz.mtr", MFD_CLOEXEC);
  if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
    if (fd >= 0)
      close(fd);
    return;
  }
  g_autofree char *path = g_strdup_printf("/proc/self/fd/%d", fd);
  MtrInfo info;
  err = NULL;
  if (mtr_read_info(path, &info, &err)) {
    if (info.summary.records > 1) {
      src = mtr_source_open(path, info.summary.records / 2, &err);
      drain_or_error(src, err);
      err = NULL;
    }
  } else {
    fuzz_error(err);
    err = NULL;
  }
  g_clear_error(&err);
  mtr_info_clear(&info);
  close(fd);
}

/* Every value that is accepted must read back. */
void fuzz_settings(const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup((const char *)data, size);
  uint64_t v;
  gboolean b;
  settings_parse_size(text, &v);
  settings_parse_count(text, &v);
  settings_parse_bool(text, &b);
  g_autoptr(Settings) s = settings_new();
  g_auto(GStrv) lines = g_strsplit(text, "\n", 64);
  for (char **l = lines; *l; l++) {
    GError *err = NULL;
    if (settings_set_pair(s, *l, "fuzz", &err)) {
      const char *eq = strchr(*l, '=');
      g_autofree char *name = g_strndup(*l, (gsize)(eq - *l));
      const SettingDef *d = settings_lookup(g_strstrip(name));
      g_assert(d != NULL);
    } else
      fuzz_error(err);
  }
}

void fuzz_machine(const uint8_t *data, size_t size)
{
  g_autoptr(Settings) s = settings_new();
  GError *err = NULL;
  if (!preset_load_data(s, "fuzz.ini", (const char *)data, size, &err))
    fuzz_error(err);
}
