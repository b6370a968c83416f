/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tlb-private.h - between mmu/tlb.c and its unit test (tests/mmu/test_tlb.c).
 *
 * The whole replacement registry, row by row.  The simulator itself needs
 * only a row by name (tlb_repl_lookup(), tlb_repl_from_settings() in
 * tlb.h); the test walks every row to check that the registry and the
 * choices of tlb.replacement (settings.def) name the same policies in the
 * same order.  Nothing else should include this header: the registry's
 * layout is tlb.c's business.
 */
#ifndef MMUSIM_TLB_PRIVATE_H
#define MMUSIM_TLB_PRIVATE_H

#include "tlb.h"

/* The rows, in the order of tlb.replacement's choices; *n gets their count. */
const TlbReplPolicy *const *tlb_repl_policies(unsigned *n);

#endif
