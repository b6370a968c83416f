/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * errors.h - the error domain of the machine: impossible machine
 * descriptions, bad command lines, output that cannot be written, ELF
 * files that cannot be read (elfload.h).  Every layer may report these;
 * the trace readers have their own domain (MMUSIM_TRACE_ERROR,
 * traces/source.h) and settings theirs.
 */
#ifndef MMUSIM_ERRORS_H
#define MMUSIM_ERRORS_H

#include <glib.h>

#define MMUSIM_SIM_ERROR (mmusim_sim_error_quark())
GQuark mmusim_sim_error_quark(void);
typedef enum {
  SIM_ERROR_MACHINE,  /* impossible machine description */
  SIM_ERROR_USAGE,    /* bad command line */
  SIM_ERROR_IO,       /* cannot create an output file (the name is at fault) */
  SIM_ERROR_WRITE,    /* output written in part: a write, flush, close or rename failed */
  SIM_ERROR_ELF,      /* an ELF file elfload.c refuses: not ELF, truncated, malformed */
} SimError;

#endif
