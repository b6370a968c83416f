/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ppc64.h - the ppc64 Book3S hash MMU after an ERAT miss: SLB, TLB, the
 * hashed page table and Linux's hash fault handler (ppc64.c), with the
 * segment side in slb.[ch] and the table in hpt.[ch].
 *
 * The core's L1 arrays (sim/cpu.c, tlb.l1_mixed) are the D-ERAT and I-ERAT;
 * everything after an ERAT miss is here.
 */
#ifndef MMUSIM_PPC64_H
#define MMUSIM_PPC64_H

#include "arch.h"
#include "hpt.h"
#include "slb.h"
#include "tlb.h"

/* Page-size codes (ArchOps.page_shift: 12, 16, 24). */
enum { PPC64_4K = 0, PPC64_64K = 1, PPC64_16M = 2, PPC64_N_SIZES = 3 };

/* Linux's page-table geometry on hash for a base page of 2^base_shift:
 * 4K: PTE 9, PMD 7, PUD 9, PGD 9 index bits (hash-4k.h), 46-bit EAs;
 * 64K: PTE 8, PMD 10, PUD 10, PGD 8 (hash-64k.h), 52-bit EAs. */
void ppc64_geometry(PtGeometry *g, unsigned base_shift);
/* TASK_SIZE_USER64 / the default map window: 64T with 4K pages, 128T with 64K. */
uint64_t ppc64_user_limit(unsigned base_shift);
/* MIN_USER_CONTEXT: the first context number of a user mm. */
unsigned ppc64_min_user_context(unsigned base_shift);

/* The LP encoding (penc) of an actual page size in a segment of a base page
 * size, -1 when unsupported (POWER7/8/9 ibm,segment-page-sizes). */
int ppc64_penc(unsigned base_shift, unsigned actual_shift);
/* hpte_page_shift(): the actual page size an HPTE maps in a segment of
 * base_shift, from its L bit and LP field; 0 for a bad encoding. */
unsigned ppc64_hpte_page_shift(unsigned base_shift, uint64_t v, uint64_t r);
/* hpte_encode_r() without the flags: RPN and LP of the page at pa. */
uint64_t ppc64_hpte_rpn(uint64_t pa, unsigned base_shift, unsigned actual_shift);

/* For tests and explain: the machine's HPT, a CPU's SLB and TLB, and the
 * context number of an address space. */
Ppc64Hpt *ppc64_cpu_hpt(const Cpu *cpu);
Ppc64Slb *ppc64_cpu_slb(const Cpu *cpu);
Tlb *ppc64_cpu_tlb(const Cpu *cpu);
uint64_t ppc64_context(const Cpu *cpu, unsigned asid);

#endif
