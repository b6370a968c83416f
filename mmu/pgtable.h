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
 * the caches.  Entries use the x86-64 bit layout (Intel SDM vol. 3A table 4-19)
 * for every architecture; software bits 9..11 carry the kernel's own state.
 *
 * Levels are numbered from the leaf: 1 = PTE, 2 = PMD, 3 = PUD, 4 = P4D/PML4,
 * 5 = PGD of LA57.  A PS entry at level 2 or 3 is a huge leaf.
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
#define PTE_NX (1ULL << 63)
#define PTE_PFN_MASK 0x000ffffffffff000ULL

#define PT_MAX_LEVELS 5

static inline uint64_t pte_pfn(uint64_t e) { return (e & PTE_PFN_MASK) >> 12; }
static inline uint64_t pte_make(uint64_t pfn, uint64_t flags) { return ((pfn << 12) & PTE_PFN_MASK) | flags; }

typedef struct PtNode PtNode;
struct PtNode {
  uint64_t pfn;      /* the simulated page that holds this table */
  uint64_t *e;       /* 1 << bits entries */
  PtNode **child;    /* next-level tables; NULL in last-level tables */
  uint32_t used;     /* entries that are not zero */
  uint8_t level;
};

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
