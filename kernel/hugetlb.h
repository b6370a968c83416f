/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hugetlb.h - the hugetlbfs pools: PMD-sized and PUD-sized pages (2M and 1G
 * on x86-64, 16M on ppc64 hash with 64K pages) set aside at start for
 * MAP_HUGETLB mappings (mm/hugetlb.c, Documentation/admin-guide/mm/
 * hugetlbpage.rst).
 *
 * hugetlb.nr_hugepages pages of the PMD size and hugetlb.nr_hugepages_1g of
 * the PUD size are taken from the buddy allocator when the kernel starts, node by node in
 * turn (for_each_node_mask_to_alloc: each page tries the next node first,
 * then the others), and stay out of it for the whole run: a fault in a
 * hugetlb VMA takes a page from the pool, munmap gives it back.  A pool that
 * cannot be filled makes the machine impossible (an error naming the
 * setting), where Linux would settle for fewer pages with a warning.
 *
 * The sizes come from the page table: one PMD entry and one PUD entry, 2M
 * and 1G on x86-64; on ppc64 hash with 64K base pages the PMD maps 16M
 * (hash-64k.h), the default hstate there (HPAGE_SHIFT 24), so
 * hugetlb.nr_hugepages counts 16M pages.  HPAGE_2M and HPAGE_1G name the
 * PMD-sized and PUD-sized pools after their x86-64 sizes.
 */
#ifndef MMUSIM_HUGETLB_H
#define MMUSIM_HUGETLB_H

#include <glib.h>
#include <stdint.h>
#include "pgtable.h"
#include "physmem.h"
#include "settings.h"

/* The pool sizes (hstates), smallest first. */
typedef enum { HPAGE_2M, HPAGE_1G, N_HPAGE_SIZES } HugetlbSize;

typedef struct Hugetlb Hugetlb;

/* Fill the pools from pm, their page sizes those of a PMD and a PUD entry
 * of geometry g; NULL with an error naming the setting when a pool cannot
 * be filled. */
Hugetlb *hugetlb_new(const Settings *s, PhysMem *pm, const PtGeometry *g, GError **error);
/* Frees the bookkeeping and gives the pool pages back to pm. */
void hugetlb_free(Hugetlb *h, PhysMem *pm);

/* log2 of the 4K frames of one page of `size` (9 or 18 on x86-64, 12 for
 * the 16M pages of ppc64 with 64K base pages). */
unsigned hugetlb_order(const Hugetlb *h, HugetlbSize size);

/* dequeue_hugetlb_folio_nodemask: a free page of `size` from the first of
 * `nodes` (the memory policy's order, mempolicy_nodes) whose free list has
 * one.  FALSE when none has. */
gboolean hugetlb_alloc(Hugetlb *h, HugetlbSize size, const int *nodes, unsigned n_nodes, uint64_t *pfn);
/* free_huge_folio: back to the free list of its node. */
void hugetlb_put(Hugetlb *h, uint64_t pfn);

/* TRUE when pfn is the first page of a pool page; *size gets its size. */
gboolean hugetlb_owns(const Hugetlb *h, uint64_t pfn, HugetlbSize *size);

/* Pages of `size` in the pool, and of those not in use (HugePages_Total,
 * HugePages_Free of /proc/meminfo). */
uint64_t hugetlb_total(const Hugetlb *h, HugetlbSize size);
uint64_t hugetlb_free_count(const Hugetlb *h, HugetlbSize size);
/* Free pages of `size` on `node` (/sys/devices/system/node/nodeN/hugepages). */
uint64_t hugetlb_free_on(const Hugetlb *h, HugetlbSize size, int node);

#endif
