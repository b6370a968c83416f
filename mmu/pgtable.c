/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pgtable.c - the radix page table of one address space.
 *
 * Models: table pages allocated from simulated physical memory, entry values
 * in the generic layout of pgtable.h (x86-64's bits), leaves at any level, freeing of emptied tables (as
 * free_pgtables() does on munmap), unhooking a table whole for a collapse
 * (the mm keeps the deposited page, kernel/mm.c), and the range walker
 * every kernel scan of the table goes through (pgtable_walk, after
 * walk_page_range).  Leaves out: the split page-table locks, and 5-level
 * folding at run time (the level count is fixed per machine).
 * Sources: arch/x86/include/asm/pgtable_types.h, mm/memory.c, mm/pagewalk.c.
 */
#include "config.h"
#include "pgtable.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void pgtable_geometry_x86_64(PtGeometry *g, unsigned levels)
{
  memset(g, 0, sizeof *g);
  g->levels = levels;
  g->page_shift = 12;
  for (unsigned l = 1; l <= levels; l++) {
    g->bits[l] = 9;
    g->shift[l] = 12 + 9 * (l - 1);
    g->table_bytes[l] = 4096;
  }
}

/* ---- host memory of the tables (see PtHostPool) ---------------------------- */

#define PT_HOST_PAGE 4096u
/* The first block holds 16 arrays (a small address space stays small); each
 * next one doubles up to the huge-page size, and only blocks of that size are
 * offered to the host as huge pages. */
#define PT_HOST_FIRST_BLOCK (16u * PT_HOST_PAGE)
#define PT_HOST_HUGE_BLOCK (2u << 20)

struct PtHostBlock {
  PtHostBlock *next;
  void *mem;
};

/* `bytes` (a multiple of PT_HOST_PAGE) from the newest block, a new block
 * when it is used up. */
static void *pool_carve(PtHostPool *p, size_t bytes)
{
  if (p->next == NULL || (size_t)(p->end - p->next) < bytes) {
    size_t size = p->block_bytes ? p->block_bytes : PT_HOST_FIRST_BLOCK;
    PtHostBlock *b = g_new(PtHostBlock, 1);
    b->mem = aligned_alloc(size >= PT_HOST_HUGE_BLOCK ? PT_HOST_HUGE_BLOCK : PT_HOST_PAGE, size);
    if (b->mem == NULL)
      g_error("out of host memory for page tables (%zu bytes)", size);
#ifdef MADV_HUGEPAGE
    if (size >= PT_HOST_HUGE_BLOCK)
      (void)madvise(b->mem, size, MADV_HUGEPAGE); /* a hint: failure only costs speed */
#endif
    b->next = p->blocks;
    p->blocks = b;
    p->next = b->mem;
    p->end = p->next + size;
    p->block_bytes = MIN(size * 2, PT_HOST_HUGE_BLOCK);
  }
  void *m = p->next;
  p->next += bytes;
  return m;
}

/* A zeroed array of `n` entries of 8 bytes. */
static void *array_new(PageTable *pt, unsigned n)
{
  if ((size_t)n * 8 != PT_HOST_PAGE)
    return g_malloc0((size_t)n * 8);
  void *m = pt->host.free_pages;
  if (m != NULL)
    pt->host.free_pages = *(void **)m;
  else
    m = pool_carve(&pt->host, PT_HOST_PAGE);
  memset(m, 0, PT_HOST_PAGE);
  return m;
}

static void array_free(PageTable *pt, void *m, unsigned n)
{
  if (m == NULL)
    return;
  if ((size_t)n * 8 != PT_HOST_PAGE) {
    g_free(m);
    return;
  }
  *(void **)m = pt->host.free_pages;
  pt->host.free_pages = m;
}

/* Node structs come from pages of their own, cut up when the free list is
 * empty, so that the arrays stay page-aligned. */
static PtNode *node_struct_new(PageTable *pt)
{
  if (pt->host.free_nodes == NULL) {
    PtNode *page = array_new(pt, PT_HOST_PAGE / 8);
    for (size_t i = 0; i < PT_HOST_PAGE / sizeof *page; i++) {
      page[i].child = (PtNode **)pt->host.free_nodes;
      pt->host.free_nodes = &page[i];
    }
  }
  PtNode *n = pt->host.free_nodes;
  pt->host.free_nodes = (PtNode *)n->child;
  memset(n, 0, sizeof *n);
  return n;
}

/* Give a node's arrays and struct back to the pool. */
static void node_host_free(PageTable *pt, PtNode *n)
{
  unsigned entries = 1u << pt->g.bits[n->level];
  array_free(pt, (void *)n->e, entries);
  array_free(pt, (void *)n->child, entries);
  n->child = (PtNode **)pt->host.free_nodes;
  pt->host.free_nodes = n;
  pt->host.nodes_freed++;
}

/* ---- tables -------------------------------------------------------------------- */

/* The entries and children are const to every other file (pgtable.h): these
 * and pgtable_entry_set() are where they are written. */
static inline void entry_write(PtNode *n, unsigned i, uint64_t entry)
{
  ((uint64_t *)n->e)[i] = entry;
}

static inline void child_set(PtNode *n, unsigned i, PtNode *c)
{
  ((PtNode **)n->child)[i] = c;
}

static PtNode *node_new(PageTable *pt, unsigned level)
{
  uint64_t pfn;
  if (!pt->a.alloc(pt->a.ctx, level, &pfn))
    return NULL;
  PtNode *n = node_struct_new(pt);
  n->pfn = pfn;
  n->level = level;
  n->e = array_new(pt, 1u << pt->g.bits[level]);
  if (level > 1)
    n->child = array_new(pt, 1u << pt->g.bits[level]);
  pt->tables++;
  return n;
}

static void node_free(PageTable *pt, PtNode *n)
{
  pt->a.release(pt->a.ctx, n->level, n->pfn);
  pt->tables--;
  node_host_free(pt, n);
}

gboolean pgtable_init(PageTable *pt, const PtGeometry *g, const PtAllocator *a)
{
  memset(pt, 0, sizeof *pt);
  pt->g = *g;
  pt->a = *a;
  pt->root = node_new(pt, g->levels);
  return pt->root != NULL;
}

static void destroy_rec(PageTable *pt, PtNode *n)
{
  if (n->child)
    for (unsigned i = 0; i < (1u << pt->g.bits[n->level]); i++)
      if (n->child[i])
        destroy_rec(pt, n->child[i]);
  node_free(pt, n);
}

void pgtable_destroy(PageTable *pt)
{
  if (pt->root)
    destroy_rec(pt, pt->root);
  pt->root = NULL;
  for (PtHostBlock *b = pt->host.blocks, *next; b != NULL; b = next) {
    next = b->next;
    free(b->mem);
    g_free(b);
  }
  /* Every node is gone: a stamp of nodes_freed taken before (PtFound, the
   * engine's host prefetch) must not match again, so the count goes on. */
  uint64_t freed = pt->host.nodes_freed + 1;
  memset(&pt->host, 0, sizeof pt->host);
  pt->host.nodes_freed = freed;
}

void pgtable_find(const PageTable *pt, uint64_t va, PtFound *f)
{
  PtNode *n = pt->root;
  uint64_t up = 0;
  for (unsigned l = pt->g.levels;; l--) {
    unsigned i = pgtable_index(&pt->g, l, va);
    uint64_t e = n->e[i];
    if (l == 1 || !(e & PTE_P) || pte_leaf(e, l) || !n->child[i]) {
      *f = (PtFound){ .table = n, .level = l, .index = i, .up_entry = up, .nodes_freed = pt->host.nodes_freed };
      return;
    }
    up = e;
    n = n->child[i];
  }
}

PtNode *pgtable_lookup(const PageTable *pt, uint64_t va, unsigned *level, unsigned *index)
{
  PtFound f;
  pgtable_find(pt, va, &f);
  *level = f.level;
  *index = f.index;
  return f.table;
}

PtNode *pgtable_ensure(PageTable *pt, uint64_t va, unsigned level, unsigned *allocated)
{
  PtNode *n = pt->root;
  for (unsigned l = pt->g.levels; l > level; l--) {
    unsigned i = pgtable_index(&pt->g, l, va);
    uint64_t e = n->e[i];
    if (e & PTE_PS)
      return NULL; /* a huge leaf covers this range, present or not */
    if (!n->child[i]) {
      if (e)
        return NULL; /* a non-present entry that is not a table holds the slot */
      PtNode *c = node_new(pt, l - 1);
      if (!c)
        return NULL;
      if (allocated)
        (*allocated)++;
      child_set(n, i, c);
      /* Linux makes user table entries present, writable and user; the leaf
       * decides the real permission. */
      entry_write(n, i, pte_make(c->pfn, PTE_P | PTE_RW | PTE_US));
      n->used++;
    }
    n = n->child[i];
  }
  return n;
}

/* Entry i of n becomes `entry`, n->used kept (no table hangs there). */
static inline void entry_store(PtNode *n, unsigned i, uint64_t entry)
{
  if (n->e[i] == 0 && entry != 0)
    n->used++;
  else if (n->e[i] != 0 && entry == 0)
    n->used--;
  entry_write(n, i, entry);
}

gboolean pgtable_set(PageTable *pt, uint64_t va, unsigned level, uint64_t entry, unsigned *allocated)
{
  PtNode *n = pgtable_ensure(pt, va, level, allocated);
  if (!n)
    return FALSE;
  unsigned i = pgtable_index(&pt->g, level, va);
  if (n->child && n->child[i])
    return FALSE; /* a lower table still hangs here: its pages would be lost */
  entry_store(n, i, entry);
  return TRUE;
}

gboolean pgtable_set_found(PageTable *pt, const PtFound *f, uint64_t va, uint64_t entry, unsigned *allocated)
{
  /* A PTE table still in the tree is where pgtable_ensure() would descend
   * to: every upper entry on the way is a table (a table under a huge or
   * foreign entry is never kept), and level 1 has no child to protect. */
  if (f->level == 1 && f->nodes_freed == pt->host.nodes_freed) {
    entry_store(f->table, f->index, entry);
    return TRUE;
  }
  return pgtable_set(pt, va, 1, entry, allocated);
}

/* Clear [start, end) below table n (covering base va `base` at its level).
 * Returns TRUE if n became empty. */
static gboolean clear_rec(PageTable *pt, PtNode *n, uint64_t base, uint64_t start, uint64_t end,
                          PtLeafFn fn, void *ctx, unsigned *freed)
{
  unsigned l = n->level;
  uint64_t span = pgtable_entry_span(&pt->g, l);
  unsigned nent = 1u << pt->g.bits[l];
  unsigned first = start > base ? (unsigned)((start - base) / span) : 0;
  for (unsigned i = first; i < nent; i++) {
    uint64_t lo = base + (uint64_t)i * span, hi = lo + span;
    if (lo >= end)
      break;
    uint64_t e = n->e[i];
    if (!e)
      continue;
    if (pte_leaf(e, l)) {
      if (lo < start || hi > end)
        g_warning("pgtable_clear_range: huge leaf at %#" G_GINT64_MODIFIER "x only partly in range", lo);
      if ((e & PTE_P) && fn)
        fn(ctx, lo, l, e);
      entry_write(n, i, 0);
      n->used--;
      continue;
    }
    PtNode *c = n->child[i];
    if (c && clear_rec(pt, c, lo, MAX(start, lo), MIN(end, hi), fn, ctx, freed)) {
      node_free(pt, c);
      (*freed)++;
      child_set(n, i, NULL);
      entry_write(n, i, 0);
      n->used--;
    }
  }
  return n->used == 0;
}

unsigned pgtable_clear_range(PageTable *pt, uint64_t start, uint64_t end, PtLeafFn fn, void *ctx)
{
  unsigned freed = 0;
  if (start < end)
    clear_rec(pt, pt->root, 0, start, end, fn, ctx, &freed);
  return freed; /* the root stays, as the pgd stays for the mm's life */
}

static void change_rec(PageTable *pt, PtNode *n, uint64_t base, uint64_t start, uint64_t end, uint64_t set, uint64_t clear)
{
  unsigned l = n->level;
  uint64_t span = pgtable_entry_span(&pt->g, l);
  unsigned nent = 1u << pt->g.bits[l];
  unsigned first = start > base ? (unsigned)((start - base) / span) : 0;
  for (unsigned i = first; i < nent; i++) {
    uint64_t lo = base + (uint64_t)i * span;
    if (lo >= end)
      break;
    uint64_t e = n->e[i];
    if (!(e & PTE_P))
      continue;
    if (pte_leaf(e, l))
      entry_write(n, i, (e & ~clear) | set);
    else if (n->child[i])
      change_rec(pt, n->child[i], lo, MAX(start, lo), MIN(end, lo + span), set, clear);
  }
}

void pgtable_change_range(PageTable *pt, uint64_t start, uint64_t end, uint64_t set, uint64_t clear)
{
  if (start < end)
    change_rec(pt, pt->root, 0, start, end, set, clear);
}

/* ---- the range walker ----------------------------------------------------------- */

/* Whether ops has a callback for an entry at `level` or below: a table at
 * that level is worth entering. */
static gboolean walk_wants(const PtWalkOps *ops, unsigned level)
{
  if (ops->pte_entry)
    return TRUE;
  if (level >= 2 && (ops->pmd_entry || ops->pte_hole))
    return TRUE;
  return level >= 3 && ops->pud_entry;
}

/* [start, end) below table n, which covers from `base`: start >= base, and
 * end within n's span. */
static int walk_rec(PtWalk *w, PtNode *n, uint64_t base, uint64_t start, uint64_t end)
{
  const PtWalkOps *ops = w->ops;
  unsigned l = n->level;
  uint64_t span = pgtable_entry_span(&w->pt->g, l);
  unsigned nent = 1u << w->pt->g.bits[l];
  for (unsigned i = (unsigned)((start - base) / span); i < nent; i++) {
    uint64_t lo = base + (uint64_t)i * span;
    if (lo >= end)
      break;
    uint64_t addr = MAX(lo, start), next = MIN(lo + span, end);
    uint64_t e = n->e[i];
    PtNode *c = n->child ? n->child[i] : NULL;
    w->table = n;
    w->index = i;
    w->level = l;
    w->below = c;
    int r = 0;
    if (l == 1) {
      r = ops->pte_entry(w, e, addr, next); /* a PTE table is entered only for it */
    } else if (e == 0 && c == NULL) {
      if (ops->pte_hole)
        r = ops->pte_hole(w, addr, next, l);
    } else {
      w->action = PT_WALK_DESCEND;
      if (l == 2 && ops->pmd_entry)
        r = ops->pmd_entry(w, e, addr, next);
      else if (l == 3 && ops->pud_entry)
        r = ops->pud_entry(w, e, addr, next);
      /* The callback cannot have unhooked c: pgtable_entry_set() keeps a
       * table's entry pointing to it. */
      if (r == 0 && c != NULL && w->action == PT_WALK_DESCEND && walk_wants(ops, l - 1))
        r = walk_rec(w, c, lo, addr, next);
    }
    if (r != 0)
      return r;
  }
  return 0;
}

int pgtable_walk(const PageTable *pt, uint64_t start, uint64_t end, const PtWalkOps *ops, void *ctx)
{
  g_return_val_if_fail(pt != NULL && ops != NULL, 0);
  if (start >= end || pt->root == NULL)
    return 0;
  PtWalk w = { .pt = pt, .ops = ops, .ctx = ctx, .action = PT_WALK_DESCEND };
  /* The root covers the whole space of its levels; beyond it nothing maps. */
  unsigned top = pt->g.levels;
  uint64_t limit = pt->g.shift[top] + pt->g.bits[top] >= 64 ? UINT64_MAX
                                                             : UINT64_C(1) << (pt->g.shift[top] + pt->g.bits[top]);
  if (start >= limit)
    return 0;
  if (!walk_wants(ops, top))
    return 0;
  return walk_rec(&w, pt->root, 0, start, MIN(end, limit));
}

gboolean pgtable_take_table(PageTable *pt, uint64_t va, unsigned level, uint64_t *pfn)
{
  g_return_val_if_fail(pt != NULL && pfn != NULL && level >= 1 && level < pt->g.levels, FALSE);
  PtNode *n = pt->root;
  for (unsigned l = pt->g.levels; l > level + 1; l--) {
    PtNode *c = n->child[pgtable_index(&pt->g, l, va)];
    if (!c)
      return FALSE;
    n = c;
  }
  unsigned i = pgtable_index(&pt->g, level + 1, va);
  PtNode *t = n->child[i];
  if (!t)
    return FALSE;
  if (t->child)
    for (unsigned j = 0; j < (1u << pt->g.bits[level]); j++)
      if (t->child[j])
        return FALSE;
  *pfn = t->pfn;
  child_set(n, i, NULL);
  entry_write(n, i, 0);
  n->used--;
  pt->tables--;
  node_host_free(pt, t);
  return TRUE;
}
