/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * recorder.h - `mmusim record`: run a program under valgrind lackey and
 * write its memory trace as .mtr while it runs.
 */
#ifndef MMUSIM_RECORDER_H
#define MMUSIM_RECORDER_H

#include <glib.h>
#include <stdint.h>

typedef struct {
  const char *output;   /* the .mtr file */
  char **argv;          /* the command, NULL-terminated */
  uint64_t start_after; /* memory accesses dropped at the start */
  gboolean progress;    /* progress line and summary on stderr */
  const char *valgrind; /* the valgrind binary (NULL: "valgrind" on PATH) */
  const char *lackey_copy; /* also keep lackey's text output in this file */
} RecorderOptions;

/* Returns the exit status for mmusim: 0 recorded (whatever the program's
 * own status, which is reported); 2 with *error set when the output cannot
 * be created, valgrind or the command cannot be found or started (nothing
 * recorded: no file written, an older one kept) or lackey's output cannot
 * be read; 1 with *error set when the trace could not be written (a full
 * disk).  Both outputs are written under temporary names and renamed when
 * complete. */
int recorder_run(const RecorderOptions *o, GError **error);

#endif
