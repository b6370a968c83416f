/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sweep.h - the `mmusim sweep` command (doc/experiments.md).
 */
#ifndef MMUSIM_SWEEP_H
#define MMUSIM_SWEEP_H

/* argv[0] is "sweep"; `self` is how this program was invoked, for the
 * commands --emit-jobs prints.  Returns the exit status. */
int sweep_main(int argc, char **argv, const char *self);

#endif
