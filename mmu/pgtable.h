/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pgtable.h - Linux's software page table: a radix tree of table pages.
 *
 * The kernel keeps one per address space.  On x86-64 the hardware walks this
 * very tree; on ppc64 hash it sits behind the hashed page table and the hash
 * fault handler reads it.  The geometry (levels, index bits per level, base
 * page shift) comes from the architecture.
 *
 * Every table page is a real page of simulated physical memory, allocated
 * from the buddy allocator through the PtAllocator hooks, so every entry has a
 * physical address (table pfn << 12 | index * 8) that a walk sends through
 * the caches.
 *
 * Levels are numbered from the leaf: 1 = PTE, 2 = PMD, 3 = PUD, 4 = P4D/PML4,
 * 5 = PGD of LA57.  A PS entry at level 2 or 3 is a huge leaf.
 *
 * The one door.  Only this file and pgtable.c write entries: PtNode.e is
 * const to everyone else, and tests/pgtable-door.sh (make check) refuses a
 * cast that takes the const away.  A single entry is written with
 * pgtable_entry_set() (any change, the table's count of used entries kept)
 * or pgtable_entry_set_flags() (the hardware's accessed and dirty bits, for
 * the walkers of arch/); a range is visited with pgtable_walk(), which calls
 * PtWalkOps back per entry (Linux's walk_page_range and mm_walk_ops) and lets
 * the callback rewrite the entry it was given with pgtable_walk_set().
 * pgtable_set(), pgtable_clear_range(), pgtable_change_range() and
 * pgtable_take_table() remain for mapping, unmapping, mprotect and collapse
 * (tables allocated, freed or unhooked).  Reading an entry stays direct
 * (n->e[i]): the translation hardware of arch/ reads it on its hot path, and
 * the pte_*() tests below say what a value means.
 *
 * The entry format.  Entries hold the generic software view below for every
 * architecture: the bit positions of x86-64 (Intel SDM vol. 3A table 4-19)
 * for P, RW, US, A, D, PS and NX, the pfn in bits 12..51, and the kernel's
 * own state in software bits (9, 10 and 11 here, 52..58 for NUMA balancing's
 * last node, kernel/numa_balance.h).  Code outside arch/ uses only these
 * names and the pte_*() tests, never a bit of a particular machine.  How an
 * architecture maps the view onto its hardware:
 *   x86-64  the MMU reads the entries as they are (identity); the walk
 *           (arch/x86_64/x86_64.c) sets A and D in place, as the hardware
 *           does, and treats PTE_SW_NUMA as not present (a protnone entry).
 *   ppc64   the hash MMU never reads this table: the hash fault handler
 *           (arch/ppc64/ppc64.c, pte_to_rflags) turns a generic leaf into
 *           the HPTE's PP, N and C bits.  Linux's own ppc64 PTE has another
 *           layout (_PAGE_PRESENT, _PAGE_READ/WRITE/EXEC, _PAGE_ACCESSED,
 *           _PAGE_DIRTY, _PAGE_PTE of asm/book3s/64/pgtable.h); the model
 *           keeps the generic one, which changes no count or cost, because
 *           the software walk reads whole 8-byte entries either way.
 * A new architecture whose hardware walks this table in another layout
 * converts in its own walk (as ppc64 converts for the HPT), or, when the
 * layout must be stored, gives PtGeometry a format and the pte_*() tests
 * read it; nothing outside mmu/ and arch/ changes.
 */
#ifndef MMUSIM_PGTABLE_H
#define MMUSIM_PGTABLE_H

#include <glib.h>
#include <stdint.h>

#define PTE_P (1ULL << 0)
#define PTE_RW (1ULL << 1)
#define PTE_US (1ULL << 2)
#define PTE_A (1ULL << 5)
#define PTE_D (1ULL << 6)
#define PTE_PS (1ULL << 7)
#define PTE_SW_ZERO (1ULL << 9)    /* maps the shared zero page (software bit) */
#define PTE_SW_NUMA (1ULL << 10)   /* PROT_NONE for NUMA hinting: present to the kernel, not to the MMU (kernel/numa_balance.h) */
#define PTE_SW_FILE (1ULL << 11)   /* maps a page-cache page, not the mm's own (kernel/filemap.h): unmapping keeps it */
#define PTE_NX (1ULL << 63)
#define PTE_PFN_MASK 0x000ffffffffff000ULL

#define PT_MAX_LEVELS 5

static inline uint64_t pte_pfn(uint64_t e) { return (e & PTE_PFN_MASK) >> 12; }
static inline uint64_t pte_make(uint64_t pfn, uint64_t flags) { return ((pfn << 12) & PTE_PFN_MASK) | flags; }

/* ---- what an entry value means (mm/pgtable-generic.c, asm/pgtable.h) ---- */

/* Empty: no page, no table, no software state (pte_none). */
static inline gboolean pte_none(uint64_t e) { return e == 0; }
/* Present to the kernel (pte_present): a NUMA hinting entry is. */
static inline gboolean pte_present(uint64_t e) { return (e & PTE_P) != 0; }
/* Present to the kernel but not to the MMU: PROT_NONE for NUMA hinting
 * (pte_protnone). */
static inline gboolean pte_protnone(uint64_t e) { return (e & (PTE_P | PTE_SW_NUMA)) == (PTE_P | PTE_SW_NUMA); }
/* Whether the entry at `level` maps memory itself rather than a table: every
 * PTE, and a PS entry above (present or not: a huge leaf holds its slot). */
static inline gboolean pte_leaf(uint64_t e, unsigned level) { return level == 1 || (e & PTE_PS) != 0; }
/* A huge leaf: a PS entry above level 1. */
static inline gboolean pte_huge(uint64_t e, unsigned level) { return level > 1 && (e & PTE_PS) != 0; }
/* Maps the shared zero page or the huge zero page. */
static inline gboolean pte_zero_page(uint64_t e) { return (e & PTE_SW_ZERO) != 0; }
/* Maps a page of the page cache (a file mapping's page, not copied on write). */
static inline gboolean pte_file(uint64_t e) { return (e & PTE_SW_FILE) != 0; }
static inline gboolean pte_write(uint64_t e) { return (e & PTE_RW) != 0; }
static inline gboolean pte_young(uint64_t e) { return (e & PTE_A) != 0; }
static inline gboolean pte_dirty(uint64_t e) { return (e & PTE_D) != 0; }

typedef struct PtNode PtNode;
struct PtNode {
  uint64_t pfn;      /* the simulated page that holds this table */
  const uint64_t *e; /* 1 << bits entries; written only through pgtable.h */
  PtNode *const *child; /* next-level tables; NULL in last-level tables; hooked only by pgtable.c */
  uint32_t used;     /* entries that are not zero */
  uint8_t level;
};

/* Store `entry` in slot idx of table n, keeping n->used.  A slot a lower
 * table hangs from must keep pointing to it (the same pfn, no PTE_PS, not
 * empty): flags may change there (a NUMA mark on a table PMD), the table may
 * not be lost; FALSE, and nothing changed, otherwise (pgtable_clear_range()
 * and pgtable_take_table() unhook tables). */
static inline gboolean pgtable_entry_set(PtNode *n, unsigned idx, uint64_t entry)
{
  uint64_t *e = (uint64_t *)n->e; /* the door: the one place the const goes */
  if (n->child && n->child[idx] && (entry == 0 || (entry & PTE_PS) || pte_pfn(entry) != n->child[idx]->pfn))
    return FALSE;
  if (e[idx] == 0 && entry != 0)
    n->used++;
  else if (e[idx] != 0 && entry == 0)
    n->used--;
  e[idx] = entry;
  return TRUE;
}

/* OR `flags` into slot idx of table n: what the MMU does to an entry it
 * walks (PTE_A, PTE_D).  Flags only: no pfn bit and not PTE_PS, so a table
 * below stays pointed to; for the hot walks of arch/, no check but the
 * used count. */
static inline void pgtable_entry_set_flags(PtNode *n, unsigned idx, uint64_t flags)
{
  uint64_t *e = (uint64_t *)n->e;
  if (G_UNLIKELY(e[idx] == 0) && flags != 0)
    n->used++;
  e[idx] |= flags;
}

typedef struct {
  unsigned levels;             /* 4 or 5 on x86-64 */
  unsigned page_shift;         /* base page: 12 */
  unsigned bits[PT_MAX_LEVELS + 1];  /* index bits of level L (1..levels) */
  unsigned shift[PT_MAX_LEVELS + 1]; /* VA shift of level L's index */
  uint64_t table_bytes[PT_MAX_LEVELS + 1]; /* bytes of a table page at level L */
} PtGeometry;

/* Where table pages come from: the kernel's buddy allocator in a run, a
 * simple counter in tests.  alloc returns FALSE when memory is exhausted. */
typedef struct {
  gboolean (*alloc)(void *ctx, unsigned level, uint64_t *pfn);
  void (*release)(void *ctx, unsigned level, uint64_t pfn);
  void *ctx;
} PtAllocator;

/* Host memory of the tables (pgtable.c), no part of the model: 4 KiB entry
 * and child arrays and the node structs come from blocks of growing size,
 * so that the arrays are page-aligned (a malloc'd 4 KiB array spans two host
 * pages) and, once the table is large, sit in 2 MiB blocks the host may back
 * with huge pages (a random walk over a large table then misses the host's
 * TLB far less); the node structs are dense, not one per heap line. */
typedef struct PtHostBlock PtHostBlock;
typedef struct {
  PtHostBlock *blocks;  /* every block, for pgtable_destroy */
  uint8_t *next, *end;  /* the unused part of the newest block */
  size_t block_bytes;   /* size of the next block */
  void *free_pages;     /* freed 4 KiB arrays, linked through their first word */
  PtNode *free_nodes;   /* freed node structs, linked through child */
  uint64_t nodes_freed; /* nodes given back so far: a host pointer to a node
                         * kept while this is unchanged still points to it */
} PtHostPool;

typedef struct {
  PtGeometry g;
  PtAllocator a;
  PtNode *root;
  uint64_t tables;   /* table pages in use, root included */
  PtHostPool host;
} PageTable;

/* The x86-64 geometry: 9 bits per level, 4K pages, 4 or 5 levels. */
void pgtable_geometry_x86_64(PtGeometry *g, unsigned levels);

/* FALSE if the root table cannot be allocated. */
gboolean pgtable_init(PageTable *pt, const PtGeometry *g, const PtAllocator *a);
/* Free every table (not the pages they map). */
void pgtable_destroy(PageTable *pt);

static inline unsigned pgtable_index(const PtGeometry *g, unsigned level, uint64_t va)
{
  return (unsigned)((va >> g->shift[level]) & ((1ULL << g->bits[level]) - 1));
}

/* Bytes mapped by one entry at `level` (4K at 1, 2M at 2, 1G at 3 on x86). */
static inline uint64_t pgtable_entry_span(const PtGeometry *g, unsigned level)
{
  return 1ULL << g->shift[level];
}

/* The software lookup of the kernel: descend towards `va` and stop at the
 * first leaf, empty entry, or the PTE.  Returns the table holding that entry
 * (never NULL) and its level; *index gets the entry's index. */
PtNode *pgtable_lookup(const PageTable *pt, uint64_t va, unsigned *level, unsigned *index);

/* What pgtable_find() found for one va: pgtable_lookup()'s table, level
 * and index, and the entry above that led to the table (0 at the root).
 * nodes_freed stamps it: the table stays in the tree while
 * PtHostPool.nodes_freed is unchanged (any table unhooked is freed). */
typedef struct {
  PtNode *table;
  unsigned level, index;
  uint64_t up_entry;
  uint64_t nodes_freed;
} PtFound;

/* pgtable_lookup() of va into *f. */
void pgtable_find(const PageTable *pt, uint64_t va, PtFound *f);

/* Make sure the table at `level` covering `va` exists, allocating tables
 * above it.  Returns it, or NULL when allocation failed or a leaf is in the
 * way (a huge leaf, present or not, or any other non-table entry).
 * *allocated counts new table pages; tables allocated before a failure stay
 * in the tree, empty. */
PtNode *pgtable_ensure(PageTable *pt, uint64_t va, unsigned level, unsigned *allocated);

/* Set the entry for `va` at `level` (1 = PTE) to `entry`.  FALSE when
 * pgtable_ensure fails or, above level 1, a lower table still hangs under the
 * entry (clear the range first, as a collapse does); the entry is unchanged. */
gboolean pgtable_set(PageTable *pt, uint64_t va, unsigned level, uint64_t entry, unsigned *allocated);

/* pgtable_set(pt, va, 1, entry, allocated) for the va pgtable_find() found
 * f for: a fault's one descent.  When f found the PTE and no table was freed
 * since, the entry is stored in f's table without a second descent; the
 * result is the same either way. */
gboolean pgtable_set_found(PageTable *pt, const PtFound *f, uint64_t va, uint64_t entry, unsigned *allocated);

/* Called for each present leaf in an unmapped range; the callee frees the
 * page it maps.  `level` tells its size. */
typedef void (*PtLeafFn)(void *ctx, uint64_t va, unsigned level, uint64_t entry);

/* Clear every leaf in [start, end), call `fn` for each present one, and free
 * tables left empty.  Huge leaves must lie wholly inside the range (split them
 * first).  Returns the number of table pages freed. */
unsigned pgtable_clear_range(PageTable *pt, uint64_t start, uint64_t end, PtLeafFn fn, void *ctx);

/* ---- walking a range (mm/pagewalk.c walk_page_range, mm_walk_ops) ---------- */

typedef struct PtWalk PtWalk;

/* What pgtable_walk() calls, each optional.  `e` is the entry's value,
 * [addr, next) the part of its span inside the walk's range (so the first
 * and the last may be cut); the entry itself is w->table->e[w->index], at
 * w->level.  A callback returns 0 to go on; any other value stops the walk,
 * and pgtable_walk() returns it.
 *   pud_entry  each non-empty entry at level 3: a 1G leaf, or a table entry.
 *   pmd_entry  each non-empty entry at level 2: a huge leaf (PTE_PS, present
 *              or not), a table entry (w->below is its PTE table), or
 *              another non-present entry (w->below NULL).
 *   pte_entry  each entry at level 1 in the range, empty ones included (as
 *              Linux's walk_pte_range); tables are entered only for it.
 *   pte_hole   each empty entry above level 1 (no table under it): level
 *              is that entry's level (Linux's depth).
 * Entries above level 3 that are not empty are descended, never reported.
 * Order: by address, an entry's callback before the entries of its table.
 * A callback of a table entry sets w->action = PT_WALK_SKIP to leave that
 * table out (Linux's ACTION_CONTINUE).  A callback may rewrite the entry it
 * was given (pgtable_walk_set()) and any entry pgtable_entry_set() allows,
 * but may not allocate or free tables (pgtable_set(), pgtable_clear_range()
 * and pgtable_take_table() are not for callbacks). */
typedef struct {
  int (*pud_entry)(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next);
  int (*pmd_entry)(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next);
  int (*pte_entry)(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next);
  int (*pte_hole)(PtWalk *w, uint64_t addr, uint64_t next, unsigned level);
} PtWalkOps;

typedef enum {
  PT_WALK_DESCEND, /* enter the table under the entry (the default, ACTION_SUBTREE) */
  PT_WALK_SKIP,    /* leave it out (ACTION_CONTINUE) */
} PtWalkAction;

/* The walk's state, as each callback sees it (Linux's struct mm_walk). */
struct PtWalk {
  const PageTable *pt;
  const PtWalkOps *ops;
  void *ctx;          /* the caller's */
  PtNode *table;      /* the table holding the entry being visited */
  unsigned index;     /* its index there */
  unsigned level;     /* its level */
  const PtNode *below; /* the table under it, NULL when none */
  PtWalkAction action; /* reset to PT_WALK_DESCEND before each table entry's callback */
};

/* Visit [start, end) of pt with `ops`, in address order; start and end
 * need no alignment.  Returns 0 when the range was walked to its end, else
 * the first non-zero value a callback returned. */
int pgtable_walk(const PageTable *pt, uint64_t start, uint64_t end, const PtWalkOps *ops, void *ctx);

/* From a callback: store `entry` in the entry being visited
 * (pgtable_entry_set()). */
static inline gboolean pgtable_walk_set(PtWalk *w, uint64_t entry)
{
  return pgtable_entry_set(w->table, w->index, entry);
}

/* Apply `set`/`clear` flag masks to every present leaf in [start, end). */
void pgtable_change_range(PageTable *pt, uint64_t start, uint64_t end, uint64_t set, uint64_t clear);

/* Unhook the table of `level` entries covering `va` (1: the PTE table under a
 * PMD) from its parent without freeing its page, as a collapse does before it
 * deposits that page (pmdp_collapse_flush + pgtable_trans_huge_deposit): the
 * parent entry becomes empty, *pfn gets the table's page, and the table's
 * entries are dropped (the caller has dealt with the pages they map).  The
 * page no longer counts in pt->tables; it is the caller's to keep or free.
 * FALSE, with nothing changed, when no such table hangs there or tables
 * still hang below it. */
gboolean pgtable_take_table(PageTable *pt, uint64_t va, unsigned level, uint64_t *pfn);

#endif
