/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_ini.c - the experiment-file entry point of fuzz_targets.h: parse and
 * check, never run.  Only the first FUZZ_INI_CHECKED configurations build
 * their machine, so an input of a million configurations costs their ids,
 * not a million machines.
 */
#include "config.h"
#include "fuzz_targets.h"

#include "experiment.h"

void fuzz_ini(const uint8_t *data, size_t size)
{
  GError *err = NULL;
  Experiment *e = experiment_parse("fuzz.ini", (const char *)data, size, FUZZ_INI_CHECKED, &err);
  if (e)
    experiment_free(e);
  else
    fuzz_error(err);
}
