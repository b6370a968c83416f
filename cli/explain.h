/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain.h - `mmusim explain`: one translation told step by step.
 */
#ifndef MMUSIM_EXPLAIN_H
#define MMUSIM_EXPLAIN_H

#include <glib.h>
#include "machine.h"

/* Parse "0x7f0000001000", "w:0x...", "x:0x..." (load, store, fetch). */
gboolean explain_parse_address(const char *text, uint64_t *va, AccessKind *kind, GError **error);
/* Translate va on the thread's CPU as an access of `kind` and describe every
 * step: the address split into indices, TLB and walk-cache probes, each
 * entry read with where it was found, faults taken, and the cycles. */
void explain_address(Machine *m, Thread *t, uint64_t va, AccessKind kind, GString *out);

#endif
