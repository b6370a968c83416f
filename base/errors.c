/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * errors.c - the machine's error domain (errors.h).
 */
#include "config.h"
#include "errors.h"

G_DEFINE_QUARK(mmusim-sim-error-quark, mmusim_sim_error)
