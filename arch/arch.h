/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arch.h - ArchOps: everything architecture-specific behind one const table.
 *
 * The generic core (sim/cpu.c) owns the L1 TLBs and the timing; the kernel
 * (mmu/) owns VMAs, faults and Linux's page table.  An architecture supplies
 * the page sizes, the geometry of Linux's page table, the translation hardware
 * after an L1 TLB miss (second-level TLB, walk caches, the walk or the hash
 * lookup), how to invalidate it, and the step-by-step explanation.
 * Adding an architecture is one folder and one row in arch.c.
 */
#ifndef MMUSIM_ARCH_H
#define MMUSIM_ARCH_H

#include <glib.h>
#include <stdint.h>
#include "pgtable.h"
#include "record.h"
#include "registry.h"
#include "settings.h"
#include "stats.h"

#define ARCH_MAX_SIZES 4

typedef struct Cpu Cpu;
typedef struct Mm Mm;
typedef struct Thread Thread;

typedef enum {
  XLAT_OK,            /* translation found; out filled */
  XLAT_NOT_PRESENT,   /* no valid translation: the kernel must fault it in */
  XLAT_PROTECTION,    /* present but the access is not allowed (write to read-only, ...) */
  XLAT_NONCANONICAL,  /* address the hardware cannot translate at all */
} XlatStatus;

typedef struct {
  uint64_t pfn;        /* first 4K frame of the page */
  uint8_t flags;       /* TLBF_* */
  uint8_t size;        /* page-size code (index into ArchOps.page_shift) */
  uint32_t cycles;     /* cycles from the L1 TLB miss to the translation */
  uint32_t walk_cycles; /* of which in a page walk (0 when the second level hit) */
  unsigned walks;      /* page walks (HPT searches) made: 0 when the second level hit */
} Xlat;

/* An architecture: one row of the registry in arch.c (base/registry.h). */
typedef struct {
  REGISTRY_ROW; /* name: the value of machine.arch */
  unsigned n_sizes;
  unsigned page_shift[ARCH_MAX_SIZES];   /* e.g. 12, 21, 30 */
  const char *size_name[ARCH_MAX_SIZES]; /* "4K", "2M", "1G" */
  /* Names explain speaks: the L1 TLBs of fetches and of data ("ITLB",
   * "DTLB"; "I-ERAT", "D-ERAT"), the levels of Linux's page table from 1
   * (the table of leaves) up as the architecture's manuals or Linux name
   * them, and the tag that keeps address spaces apart in the TLB ("PCID";
   * NULL when explain shows its own, as ppc64's segment lookup does). */
  const char *l1_itlb_name, *l1_dtlb_name;
  const char *level_name[7];
  const char *asid_name;
  /* Check arch-specific settings once, when the machine is built. */
  gboolean (*check)(const Settings *s, GError **error);
  void (*pgtable_geometry)(const Settings *s, PtGeometry *g);
  /* Largest user address + 1 (the end of the canonical lower half). */
  uint64_t (*user_va_limit)(const Settings *s);
  /* Level of Linux's page table whose leaf maps the given size code. */
  unsigned (*size_level)(unsigned size_code);
  /* Per-CPU translation state after the L1 TLBs. */
  void *(*cpu_new)(const Settings *s, Cpu *cpu, GError **error);
  void (*cpu_free)(void *state);
  /* After an L1 TLB miss.  `ex`, when not NULL, receives the explanation
   * of every step (mmusim explain); the hot path passes NULL. */
  XlatStatus (*translate)(Cpu *cpu, Mm *mm, uint64_t va, AccessKind kind, Xlat *out, GString *ex);
  /* Optional: the core's whole path after a miss of its last-translation
   * shortcut (L1 TLB, translate, walker, refill, faults), sim/cpu-
   * translate.h's cpu_translate_miss instantiated with this architecture's
   * translate inlined, a host shortcut; NULL: the core calls translate. */
  gboolean (*l1_miss)(Cpu *cpu, Thread *th, uint64_t va, AccessKind kind, uint64_t *t, uint64_t *pfn, uint8_t *flags);
  /* Invalidate what the arch caches for one page / one context / all. */
  void (*flush_page)(Cpu *cpu, unsigned asid, uint64_t va);
  void (*flush_asid)(Cpu *cpu, unsigned asid);
  void (*flush_all)(Cpu *cpu);
  /* A table page of Linux's page table was freed: drop walk caches. */
  void (*tables_freed)(Cpu *cpu, unsigned asid);
  /* Optional: the end of one range flush on this CPU (after its flush_page
   * or flush_asid calls); returns the cycles of work the architecture
   * batches over the range's pages (ppc64 under a hypervisor: the
   * H_REMOVE / H_BULK_REMOVE calls).  NULL: none. */
  uint64_t (*flush_done)(Cpu *cpu);
} ArchOps;

/* The row named `name`, NULL when there is none. */
const ArchOps *arch_lookup(const char *name);
/* "x86_64, ppc64" for messages. */
char *arch_names(void);
/* The registry's rows (*n of them), for `mmusim list` and tests. */
const ArchOps *const *arch_all(unsigned *n);

extern const ArchOps x86_64_ops;
extern const ArchOps ppc64_ops;

#endif
