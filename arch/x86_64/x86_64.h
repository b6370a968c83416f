/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86_64.h - x86-64 radix translation: second-level TLB, paging-structure
 * caches and the 4- or 5-level page walk.
 */
#ifndef MMUSIM_X86_64_H
#define MMUSIM_X86_64_H

#include "arch.h"

enum { X86_4K = 0, X86_2M = 1, X86_1G = 2, X86_N_SIZES = 3 };

/* Canonical lower-half limit for the level count: 2^47 or 2^56. */
uint64_t x86_64_user_limit(unsigned levels);

/* Statistics of the walk caches of one CPU, for tests and `explain`. */
typedef struct {
  unsigned entries[6];   /* by level of the cached entry (2..5) */
  unsigned valid[6];
} X86PwcInfo;
void x86_64_pwc_info(const Cpu *cpu, X86PwcInfo *info);

#endif
