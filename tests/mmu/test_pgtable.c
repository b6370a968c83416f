/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_pgtable.c - unit tests of the radix page table (mmu/pgtable.h).
 *
 * The fixture builds an empty 4-level x86-64 table over a test allocator
 * that hands out frame numbers from a counter (0x1000, 0x1001, ...) and
 * records every release, so each test can count table pages and the
 * teardown can check that none leaked.  A failing check draws the path of
 * the address in question: one line per level with the index and the entry.
 * The walker's tests compare a log of every callback (what, the clipped
 * range, level, index, kind of entry) with one written out by hand.
 */
#include "config.h"
#include "testutil.h"

#include "pgtable.h"

#include <string.h>

#define FIRST_PFN 0x1000
#define MB2 (1ULL << 21)
#define GB1 (1ULL << 30)
#define KB4 (1ULL << 12)

/* ---- the test allocator ------------------------------------------------------ */

typedef struct {
  uint64_t next_pfn;
  unsigned allocs[PT_MAX_LEVELS + 1];   /* per level */
  unsigned releases[PT_MAX_LEVELS + 1]; /* per level */
  unsigned budget;                      /* allocations left before it refuses; G_MAXUINT = no limit */
  GHashTable *live;                     /* pfn -> level of every table page handed out */
} TestAlloc;

static gboolean ta_alloc(void *ctx, unsigned level, uint64_t *pfn)
{
  TestAlloc *ta = ctx;
  ck_assert_uint_ge(level, 1);
  ck_assert_uint_le(level, PT_MAX_LEVELS);
  if (ta->budget == 0)
    return FALSE;
  if (ta->budget != G_MAXUINT)
    ta->budget--;
  *pfn = ta->next_pfn++;
  ta->allocs[level]++;
  g_hash_table_insert(ta->live, GSIZE_TO_POINTER(*pfn), GUINT_TO_POINTER(level));
  return TRUE;
}

static void ta_release(void *ctx, unsigned level, uint64_t pfn)
{
  TestAlloc *ta = ctx;
  gpointer got;
  ck_assert_msg(g_hash_table_lookup_extended(ta->live, GSIZE_TO_POINTER(pfn), NULL, &got),
                "release of pfn %#" G_GINT64_MODIFIER "x that is not a live table page", pfn);
  ck_assert_uint_eq(GPOINTER_TO_UINT(got), level);
  g_hash_table_remove(ta->live, GSIZE_TO_POINTER(pfn));
  ta->releases[level]++;
}

static unsigned ta_total(const unsigned *per_level)
{
  unsigned n = 0;
  for (unsigned l = 0; l <= PT_MAX_LEVELS; l++)
    n += per_level[l];
  return n;
}

/* ---- fixture ---------------------------------------------------------------- */

static TestAlloc ta;
static PageTable pt;
static PtGeometry geo;

static PtAllocator ta_hooks(void)
{
  return (PtAllocator){ .alloc = ta_alloc, .release = ta_release, .ctx = &ta };
}

static void ta_reset(void)
{
  if (ta.live)
    g_hash_table_destroy(ta.live);
  memset(&ta, 0, sizeof ta);
  ta.next_pfn = FIRST_PFN;
  ta.budget = G_MAXUINT;
  ta.live = g_hash_table_new(g_direct_hash, g_direct_equal);
}

static void init_levels(unsigned levels)
{
  ta_reset();
  pgtable_geometry_x86_64(&geo, levels);
  PtAllocator a = ta_hooks();
  ck_assert(pgtable_init(&pt, &geo, &a));
}

static void setup(void)
{
  init_levels(4);
}

static void teardown(void);

/* Replace the fixture's table with an empty one of `levels` levels. */
static void reinit(unsigned levels)
{
  teardown();
  init_levels(levels);
}

/* Destroying the table hands every table page back. */
static void teardown(void)
{
  pgtable_destroy(&pt);
  ck_assert_ptr_null(pt.root);
  ck_assert_uint_eq(pt.tables, 0);
  ck_assert_msg(g_hash_table_size(ta.live) == 0, "%u table pages leaked", g_hash_table_size(ta.live));
  ck_assert_uint_eq(ta_total(ta.allocs), ta_total(ta.releases));
  g_hash_table_destroy(ta.live);
  ta.live = NULL;
}

/* ---- drawing ----------------------------------------------------------------- */

static void draw_entry(GString *s, uint64_t e)
{
  if (!e) {
    g_string_append(s, "empty");
    return;
  }
  g_string_append_printf(s, "pfn %#" G_GINT64_MODIFIER "x", pte_pfn(e));
  static const struct { uint64_t bit; const char *name; } bits[] = {
    { PTE_P, "P" }, { PTE_RW, "RW" }, { PTE_US, "US" }, { PTE_A, "A" }, { PTE_D, "D" },
    { PTE_PS, "PS" }, { PTE_SW_ZERO, "ZERO" }, { PTE_SW_NUMA, "NUMA" }, { PTE_NX, "NX" },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(bits); i++)
    if (e & bits[i].bit)
      g_string_append_printf(s, " %s", bits[i].name);
}

/* The path of va from the root: "L4 @0x1000 [254] pfn 0x1001 P RW US  (used 1)". */
static char *draw_path(const PageTable *p, uint64_t va)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "path of %#" G_GINT64_MODIFIER "x (%" G_GUINT64_FORMAT " tables):\n", va, p->tables);
  const PtNode *n = p->root;
  for (unsigned l = p->g.levels; n && l >= 1; l--) {
    unsigned i = pgtable_index(&p->g, l, va);
    g_string_append_printf(s, "  L%u @%#" G_GINT64_MODIFIER "x [%3u] ", l, n->pfn, i);
    draw_entry(s, n->e[i]);
    g_string_append_printf(s, "  (used %u)\n", n->used);
    n = n->child ? n->child[i] : NULL;
  }
  return g_string_free(s, FALSE);
}

/* Like ck_assert_msg, and the message ends with the path of va. */
#define ck_assert_path(cond, va, fmt, ...)                 \
  do {                                                     \
    if (!(cond)) {                                         \
      g_autofree char *path_ = draw_path(&pt, (va));       \
      ck_abort_msg(fmt "\n%s", __VA_ARGS__, path_);        \
    }                                                      \
  } while (0)

/* The leaf entry that maps va, or 0. */
static uint64_t leaf_of(uint64_t va, unsigned *level)
{
  unsigned l, i;
  PtNode *n = pgtable_lookup(&pt, va, &l, &i);
  if (level)
    *level = l;
  return n->e[i];
}

static uint64_t pte4k(uint64_t pfn)
{
  return pte_make(pfn, PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D);
}

static uint64_t huge(uint64_t pfn)
{
  return pte_make(pfn, PTE_P | PTE_RW | PTE_US | PTE_A | PTE_PS);
}

static void map4k(uint64_t va, uint64_t pfn)
{
  ck_assert(pgtable_set(&pt, va, 1, pte4k(pfn), NULL));
}

/* ---- geometry ---------------------------------------------------------------- */

START_TEST(test_geometry_x86_64)
{
  static const unsigned shift[] = { 0, 12, 21, 30, 39, 48 };
  PtGeometry g;
  for (unsigned levels = 4; levels <= 5; levels++) {
    pgtable_geometry_x86_64(&g, levels);
    ck_assert_uint_eq(g.levels, levels);
    ck_assert_uint_eq(g.page_shift, 12);
    for (unsigned l = 1; l <= levels; l++) {
      ck_assert_uint_eq(g.bits[l], 9);
      ck_assert_uint_eq(g.shift[l], shift[l]);
      ck_assert_uint_eq(g.table_bytes[l], 4096);
    }
    /* 9 bits of index, 8-byte entries: a table is exactly a 4K page. */
    ck_assert_uint_eq((1ULL << g.bits[1]) * 8, g.table_bytes[1]);
  }
  pgtable_geometry_x86_64(&g, 4);
  ck_assert_uint_eq(g.bits[5], 0); /* no fifth level */
  ck_assert_uint_eq(pgtable_entry_span(&g, 1), 4096);
  ck_assert_uint_eq(pgtable_entry_span(&g, 2), 2 * 1024 * 1024);
  ck_assert_uint_eq(pgtable_entry_span(&g, 3), 1024ULL * 1024 * 1024);
  ck_assert_uint_eq(pgtable_entry_span(&g, 4), 512ULL * 1024 * 1024 * 1024);
}
END_TEST

START_TEST(test_index_4level)
{
  PtGeometry g;
  pgtable_geometry_x86_64(&g, 4);
  /* 0x00007f1234567abc in binary, 48 bits, split 9/9/9/9/12:
   *   011111110 001001000 110100010 101100111 101010111100
   *   = 254      72        418       359       0xabc
   * (254 = 0xfe, 72 = 0x48, 418 = 0x1a2, 359 = 0x167). */
  uint64_t va = 0x00007f1234567abcULL;
  ck_assert_uint_eq(pgtable_index(&g, 4, va), 254);
  ck_assert_uint_eq(pgtable_index(&g, 3, va), 72);
  ck_assert_uint_eq(pgtable_index(&g, 2, va), 418);
  ck_assert_uint_eq(pgtable_index(&g, 1, va), 359);
  /* The top of the lower half, 0x00007fffffffffff: 0 111111111 x3 -> 255, 511, 511, 511. */
  uint64_t top = 0x00007fffffffffffULL;
  ck_assert_uint_eq(pgtable_index(&g, 4, top), 255);
  ck_assert_uint_eq(pgtable_index(&g, 3, top), 511);
  ck_assert_uint_eq(pgtable_index(&g, 2, top), 511);
  ck_assert_uint_eq(pgtable_index(&g, 1, top), 511);
  /* 2M + 4K + 5: PD index 1, PT index 1. */
  ck_assert_uint_eq(pgtable_index(&g, 2, MB2 + KB4 + 5), 1);
  ck_assert_uint_eq(pgtable_index(&g, 1, MB2 + KB4 + 5), 1);
  ck_assert_uint_eq(pgtable_index(&g, 3, MB2 + KB4 + 5), 0);
}
END_TEST

START_TEST(test_index_5level)
{
  PtGeometry g;
  pgtable_geometry_x86_64(&g, 5);
  /* Indices 3, 5, 7, 11, 13 placed at shifts 48, 39, 30, 21, 12. */
  uint64_t va = (3ULL << 48) | (5ULL << 39) | (7ULL << 30) | (11ULL << 21) | (13ULL << 12) | 0x123;
  ck_assert_uint_eq(pgtable_index(&g, 5, va), 3);
  ck_assert_uint_eq(pgtable_index(&g, 4, va), 5);
  ck_assert_uint_eq(pgtable_index(&g, 3, va), 7);
  ck_assert_uint_eq(pgtable_index(&g, 2, va), 11);
  ck_assert_uint_eq(pgtable_index(&g, 1, va), 13);
  /* 0x00ff123456789000 = 011111111 000100100 011010001 010110011 110001001 0x000
   *                    = 255       36        209       179       393 */
  uint64_t va2 = 0x00ff123456789000ULL;
  ck_assert_uint_eq(pgtable_index(&g, 5, va2), 255);
  ck_assert_uint_eq(pgtable_index(&g, 4, va2), 36);
  ck_assert_uint_eq(pgtable_index(&g, 3, va2), 209);
  ck_assert_uint_eq(pgtable_index(&g, 2, va2), 179);
  ck_assert_uint_eq(pgtable_index(&g, 1, va2), 393);
}
END_TEST

/* ---- building the tree ----------------------------------------------------------- */

START_TEST(test_init_allocates_root)
{
  ck_assert_ptr_nonnull(pt.root);
  ck_assert_uint_eq(pt.tables, 1);
  ck_assert_uint_eq(pt.root->level, 4);
  ck_assert_uint_eq(pt.root->pfn, FIRST_PFN);
  ck_assert_uint_eq(pt.root->used, 0);
  ck_assert_uint_eq(ta.allocs[4], 1);
  ck_assert_uint_eq(ta_total(ta.allocs), 1);
}
END_TEST

START_TEST(test_set_4k_allocates_path)
{
  uint64_t va = 0x00007f1234567000ULL; /* 254 / 72 / 418 / 359 */
  unsigned allocated = 0;
  ck_assert(pgtable_set(&pt, va, 1, pte4k(0x777), &allocated));
  ck_assert_path(allocated == 3, va, "first leaf needs PDPT, PD and PT, got %u", allocated);
  ck_assert_uint_eq(pt.tables, 4);
  ck_assert_uint_eq(ta.allocs[3], 1);
  ck_assert_uint_eq(ta.allocs[2], 1);
  ck_assert_uint_eq(ta.allocs[1], 1);

  /* The tables went out in order: root 0x1000, PDPT 0x1001, PD 0x1002, PT
   * 0x1003; each entry above the leaf is P|RW|US pointing at its child. */
  PtNode *pdpt = pt.root->child[254];
  ck_assert_ptr_nonnull(pdpt);
  PtNode *pd = pdpt->child[72];
  ck_assert_ptr_nonnull(pd);
  PtNode *ptab = pd->child[418];
  ck_assert_ptr_nonnull(ptab);
  ck_assert_uint_eq(pt.root->e[254], pte_make(FIRST_PFN + 1, PTE_P | PTE_RW | PTE_US));
  ck_assert_uint_eq(pdpt->e[72], pte_make(FIRST_PFN + 2, PTE_P | PTE_RW | PTE_US));
  ck_assert_uint_eq(pd->e[418], pte_make(FIRST_PFN + 3, PTE_P | PTE_RW | PTE_US));
  ck_assert_uint_eq(pdpt->pfn, FIRST_PFN + 1);
  ck_assert_uint_eq(pdpt->level, 3);
  ck_assert_uint_eq(pd->level, 2);
  ck_assert_uint_eq(ptab->level, 1);
  ck_assert_ptr_null(ptab->child); /* last-level tables have no children */
  ck_assert_uint_eq(ptab->e[359], pte4k(0x777));
  ck_assert_uint_eq(pt.root->used, 1);
  ck_assert_uint_eq(ptab->used, 1);

  /* The next page shares every table. */
  allocated = 0;
  ck_assert(pgtable_set(&pt, va + KB4, 1, pte4k(0x778), &allocated));
  ck_assert_path(allocated == 0, va + KB4, "neighbour allocated %u tables", allocated);
  ck_assert_uint_eq(ptab->used, 2);
  /* 2M further: same PD, new PT. */
  allocated = 0;
  ck_assert(pgtable_set(&pt, va + MB2, 1, pte4k(0x779), &allocated));
  ck_assert_path(allocated == 1, va + MB2, "next 2M allocated %u tables", allocated);
  ck_assert_uint_eq(pd->used, 2);
  /* 1G further: same PDPT, new PD and PT. */
  allocated = 0;
  ck_assert(pgtable_set(&pt, va + GB1, 1, pte4k(0x77a), &allocated));
  ck_assert_path(allocated == 2, va + GB1, "next 1G allocated %u tables", allocated);
  ck_assert_uint_eq(pt.tables, 7);
  ck_assert_uint_eq(pdpt->used, 2);
  ck_assert_uint_eq(pt.root->used, 1);

  /* allocated accumulates rather than resets. */
  allocated = 10;
  ck_assert(pgtable_set(&pt, 0, 1, pte4k(1), &allocated));
  ck_assert_uint_eq(allocated, 13);
}
END_TEST

START_TEST(test_set_overwrite_and_zero_keep_used)
{
  uint64_t va = 0x400000;
  map4k(va, 5);
  unsigned l, i;
  PtNode *n = pgtable_lookup(&pt, va, &l, &i);
  ck_assert_uint_eq(n->used, 1);
  map4k(va, 6); /* replacing a present entry is not a new one */
  ck_assert_uint_eq(n->used, 1);
  ck_assert_uint_eq(pte_pfn(n->e[i]), 6);
  ck_assert(pgtable_set(&pt, va, 1, 0, NULL));
  ck_assert_uint_eq(n->used, 0);
  ck_assert(pgtable_set(&pt, va, 1, 0, NULL)); /* clearing twice does not underflow */
  ck_assert_uint_eq(n->used, 0);
  ck_assert_uint_eq(pt.tables, 4); /* emptied by set, freed only by clear_range */
}
END_TEST

START_TEST(test_set_5level)
{
  reinit(5);
  uint64_t va = (3ULL << 48) | (5ULL << 39) | (7ULL << 30) | (11ULL << 21) | (13ULL << 12);
  unsigned allocated = 0;
  ck_assert(pgtable_set(&pt, va, 1, pte4k(0x42), &allocated));
  ck_assert_uint_eq(allocated, 4);
  ck_assert_uint_eq(pt.tables, 5);
  ck_assert_uint_eq(pt.root->level, 5);
  ck_assert_uint_eq(ta.allocs[5], 1);
  ck_assert_uint_eq(ta.allocs[4], 1);
  const PtNode *n = pt.root->child[3]->child[5]->child[7]->child[11];
  ck_assert_uint_eq(n->level, 1);
  ck_assert_uint_eq(n->e[13], pte4k(0x42));
  unsigned l;
  ck_assert_uint_eq(leaf_of(va, &l), pte4k(0x42));
  ck_assert_uint_eq(l, 1);
}
END_TEST

START_TEST(test_huge_leaves)
{
  /* A 2M leaf at 0x40000000 + 2M: root[0] -> PDPT[1] -> PD[1], PS. */
  uint64_t va2m = GB1 + MB2;
  unsigned allocated = 0;
  ck_assert(pgtable_set(&pt, va2m, 2, huge(0x200), &allocated));
  ck_assert_path(allocated == 2, va2m, "a 2M leaf needs PDPT and PD, got %u", allocated);
  PtNode *pd = pt.root->child[0]->child[1];
  ck_assert_uint_eq(pd->level, 2);
  ck_assert_uint_eq(pd->e[1], huge(0x200));
  ck_assert_ptr_null(pd->child[1]);

  /* A 1G leaf at 3G: PDPT[3], PS; no new table. */
  uint64_t va1g = 3 * GB1;
  allocated = 0;
  ck_assert(pgtable_set(&pt, va1g, 3, huge(0x40000), &allocated));
  ck_assert_uint_eq(allocated, 0);
  ck_assert_uint_eq(pt.root->child[0]->e[3], huge(0x40000));
  ck_assert_uint_eq(pt.tables, 3);

  /* Lookups anywhere inside stop at the huge leaf. */
  unsigned l, i;
  PtNode *n = pgtable_lookup(&pt, va2m + MB2 - 1, &l, &i);
  ck_assert_ptr_eq(n, pd);
  ck_assert_uint_eq(l, 2);
  ck_assert_uint_eq(i, 1);
  n = pgtable_lookup(&pt, va1g + 12345 * KB4, &l, &i);
  ck_assert_ptr_eq(n, pt.root->child[0]);
  ck_assert_uint_eq(l, 3);
  ck_assert_uint_eq(i, 3);
}
END_TEST

START_TEST(test_lookup_stops)
{
  uint64_t va = 0x00007f1234567abcULL;
  unsigned l, i;
  /* Empty tree: stops at the root entry. */
  PtNode *n = pgtable_lookup(&pt, va, &l, &i);
  ck_assert_ptr_eq(n, pt.root);
  ck_assert_uint_eq(l, 4);
  ck_assert_uint_eq(i, 254);
  ck_assert_uint_eq(n->e[i], 0);

  map4k(va & ~0xfffULL, 0x55);
  /* The PTE itself. */
  n = pgtable_lookup(&pt, va, &l, &i);
  ck_assert_uint_eq(l, 1);
  ck_assert_uint_eq(i, 359);
  ck_assert_uint_eq(n->pfn, FIRST_PFN + 3);
  ck_assert_uint_eq(n->e[i], pte4k(0x55));
  /* An empty PTE in the same table: still level 1. */
  n = pgtable_lookup(&pt, va + KB4, &l, &i);
  ck_assert_uint_eq(l, 1);
  ck_assert_uint_eq(i, 360);
  ck_assert_uint_eq(n->e[i], 0);
  /* An empty PD entry next door: level 2, index 419. */
  n = pgtable_lookup(&pt, va + MB2, &l, &i);
  ck_assert_uint_eq(l, 2);
  ck_assert_uint_eq(i, 419);
  ck_assert_uint_eq(n->pfn, FIRST_PFN + 2);
  /* An empty PDPT entry: level 3, index 73. */
  n = pgtable_lookup(&pt, va + GB1, &l, &i);
  ck_assert_uint_eq(l, 3);
  ck_assert_uint_eq(i, 73);
  /* A non-present leaf that is not zero (a software entry) ends the walk too. */
  ck_assert(pgtable_set(&pt, va + MB2, 2, PTE_SW_NUMA | PTE_PS, NULL));
  n = pgtable_lookup(&pt, va + MB2 + 5 * KB4, &l, &i);
  ck_assert_uint_eq(l, 2);
  ck_assert_uint_eq(n->e[i], PTE_SW_NUMA | PTE_PS);
}
END_TEST

START_TEST(test_ensure_refuses_below_huge)
{
  ck_assert(pgtable_set(&pt, MB2, 2, huge(0x200), NULL));
  ck_assert(pgtable_set(&pt, 2 * GB1, 3, huge(0x80000), NULL));
  uint64_t tables = pt.tables;
  g_autofree char *before = draw_path(&pt, MB2 + KB4);
  unsigned allocated = 0;
  ck_assert_ptr_null(pgtable_ensure(&pt, MB2 + KB4, 1, &allocated));
  ck_assert_ptr_null(pgtable_ensure(&pt, 2 * GB1 + MB2, 2, &allocated));
  ck_assert_ptr_null(pgtable_ensure(&pt, 2 * GB1 + MB2, 1, &allocated));
  ck_assert(!pgtable_set(&pt, MB2 + KB4, 1, pte4k(1), &allocated));
  ck_assert(!pgtable_set(&pt, 2 * GB1, 1, pte4k(1), &allocated));
  g_autofree char *after = draw_path(&pt, MB2 + KB4);
  ck_assert_msg(allocated == 0 && pt.tables == tables, "before:\n%safter:\n%s", before, after);
  ck_assert_uint_eq(leaf_of(MB2 + KB4, NULL), huge(0x200));
  ck_assert_uint_eq(leaf_of(2 * GB1 + MB2, NULL), huge(0x80000));
  /* The table at the huge leaf's own level is fine to reach. */
  PtNode *pd = pgtable_ensure(&pt, MB2, 2, NULL);
  ck_assert_ptr_nonnull(pd);
  ck_assert_uint_eq(pd->level, 2);
}
END_TEST

/* A non-present huge entry (PS without P, as a NUMA-hinting or PROT_NONE
 * PMD would be) is still a leaf: no table may be slipped under it. */
START_TEST(test_ensure_refuses_below_nonpresent_huge)
{
  uint64_t hint = pte_make(0x200, PTE_PS | PTE_SW_NUMA);
  ck_assert(pgtable_set(&pt, MB2, 2, hint, NULL));
  PtNode *pd = pt.root->child[0]->child[0];
  uint32_t used = pd->used;
  uint64_t tables = pt.tables;
  g_autofree char *before = draw_path(&pt, MB2 + KB4);
  unsigned allocated = 0;
  gboolean ok = pgtable_set(&pt, MB2 + KB4, 1, pte4k(7), &allocated);
  g_autofree char *after = draw_path(&pt, MB2 + KB4);
  ck_assert_msg(!ok && allocated == 0 && pt.tables == tables, "set under a non-present huge leaf\nbefore:\n%safter:\n%s",
                before, after);
  ck_assert_uint_eq(pd->e[1], hint);
  ck_assert_uint_eq(pd->used, used);
  ck_assert_ptr_null(pd->child[1]);

  /* Nor under any other non-present entry that is not a table (a PMD
   * migration entry has neither P nor PS). */
  uint64_t migration = pte_make(0x400, PTE_SW_NUMA);
  ck_assert(pgtable_set(&pt, 2 * MB2, 2, migration, NULL));
  ck_assert(!pgtable_set(&pt, 2 * MB2, 1, pte4k(8), &allocated));
  ck_assert_ptr_null(pgtable_ensure(&pt, 2 * MB2 + KB4, 1, &allocated));
  ck_assert_uint_eq(allocated, 0);
  ck_assert_uint_eq(pd->e[2], migration);
  ck_assert_uint_eq(pd->used, used + 1);
  ck_assert_ptr_null(pd->child[2]);
}
END_TEST

/* A huge leaf cannot replace a table that still maps pages: the table's
 * pages would never reach the leaf callback and the table would be lost.
 * Clearing the range first (as a collapse does) makes room. */
START_TEST(test_set_huge_over_table_refused)
{
  map4k(0x400000, 0x11);
  map4k(0x401000, 0x12);
  uint64_t tables = pt.tables;
  g_autofree char *before = draw_path(&pt, 0x400000);
  gboolean ok = pgtable_set(&pt, 0x400000, 2, huge(0x400), NULL);
  g_autofree char *after = draw_path(&pt, 0x400000);
  ck_assert_msg(!ok, "a 2M leaf replaced a PTE table\nbefore:\n%safter:\n%s", before, after);
  ck_assert_uint_eq(pt.tables, tables);
  unsigned l;
  ck_assert_uint_eq(leaf_of(0x401000, &l), pte4k(0x12));
  ck_assert_uint_eq(l, 1);
  /* The same for a 1G leaf over the PD. */
  ck_assert(!pgtable_set(&pt, 0, 3, huge(0x40000), NULL));
  ck_assert_uint_eq(leaf_of(0x400000, NULL), pte4k(0x11));

  /* The PT was all the PD and PDPT held: all three go, and the 2M leaf
   * brings a PDPT and a PD back. */
  ck_assert_uint_eq(pgtable_clear_range(&pt, 0x400000, 0x400000 + MB2, NULL, NULL), 3);
  unsigned allocated = 0;
  ck_assert(pgtable_set(&pt, 0x400000, 2, huge(0x400), &allocated));
  ck_assert_uint_eq(allocated, 2);
  ck_assert_uint_eq(leaf_of(0x401000, &l), huge(0x400));
  ck_assert_uint_eq(l, 2);
}
END_TEST

/* ---- clearing ----------------------------------------------------------------- */

typedef struct {
  uint64_t va;
  unsigned level;
  uint64_t entry;
} LeafCall;

static void record_leaf(void *ctx, uint64_t va, unsigned level, uint64_t entry)
{
  g_array_append_val((GArray *)ctx, ((LeafCall){ va, level, entry }));
}

static void assert_calls(GArray *calls, const LeafCall *want, unsigned n)
{
  GString *got = g_string_new(NULL);
  for (guint i = 0; i < calls->len; i++) {
    const LeafCall *c = &g_array_index(calls, LeafCall, i);
    g_string_append_printf(got, "  va %#" G_GINT64_MODIFIER "x level %u pfn %#" G_GINT64_MODIFIER "x\n", c->va,
                           c->level, pte_pfn(c->entry));
  }
  ck_assert_msg(calls->len == n, "expected %u leaf calls, got %u:\n%s", n, calls->len, got->str);
  for (unsigned i = 0; i < n; i++) {
    const LeafCall *c = &g_array_index(calls, LeafCall, i);
    ck_assert_msg(c->va == want[i].va && c->level == want[i].level && c->entry == want[i].entry,
                  "call %u differs (want va %#" G_GINT64_MODIFIER "x level %u pfn %#" G_GINT64_MODIFIER "x):\n%s", i,
                  want[i].va, want[i].level, pte_pfn(want[i].entry), got->str);
  }
  g_string_free(got, TRUE);
}

#define FAR_VA 0x00007f1234567000ULL

/*   PT X   0x400000..0x407000  8 pages      (PD[2])
 *   PT Y   0x600000, 0x601000  2 pages      (PD[3])
 *   2M     0x800000                          (PD[4])
 *   1G     0x40000000                        (PDPT[1])
 *   far    0x7f1234567000      1 page        (its own PDPT, PD, PT)
 * Tables: root, PDPT0, PD0, X, Y, and three for the far page = 8. */
static void map_clear_scene(void)
{
  for (unsigned p = 0; p < 8; p++)
    map4k(0x400000 + p * KB4, 0x100 + p);
  map4k(0x600000, 0x200);
  map4k(0x601000, 0x201);
  ck_assert(pgtable_set(&pt, 0x800000, 2, huge(0x800), NULL));
  ck_assert(pgtable_set(&pt, GB1, 3, huge(0x40000), NULL));
  map4k(FAR_VA, 0x999);
  ck_assert_uint_eq(pt.tables, 8);
}

START_TEST(test_clear_range_frees_empty_tables)
{
  map_clear_scene();
  g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(LeafCall));
  unsigned released = ta_total(ta.releases);
  uint64_t nodes_freed = pt.host.nodes_freed; /* host pointers to nodes go stale with each */

  /* [0x400000, 0xa00000): X, Y and the 2M leaf.  X, Y and PD0 empty; PDPT0
   * keeps the 1G leaf. */
  unsigned freed = pgtable_clear_range(&pt, 0x400000, 0xa00000, record_leaf, calls);
  ck_assert_uint_eq(pt.host.nodes_freed - nodes_freed, 3);
  LeafCall want[11];
  for (unsigned p = 0; p < 8; p++)
    want[p] = (LeafCall){ 0x400000 + p * KB4, 1, pte4k(0x100 + p) };
  want[8] = (LeafCall){ 0x600000, 1, pte4k(0x200) };
  want[9] = (LeafCall){ 0x601000, 1, pte4k(0x201) };
  want[10] = (LeafCall){ 0x800000, 2, huge(0x800) };
  assert_calls(calls, want, 11);
  ck_assert_path(freed == 3, 0x400000, "freed %u tables, want X, Y and PD0", freed);
  ck_assert_uint_eq(ta_total(ta.releases) - released, 3);
  ck_assert_uint_eq(ta.releases[1], 2);
  ck_assert_uint_eq(ta.releases[2], 1);
  ck_assert_uint_eq(pt.tables, 5);
  PtNode *pdpt0 = pt.root->child[0];
  ck_assert_ptr_nonnull(pdpt0);
  ck_assert_ptr_null(pdpt0->child[0]);
  ck_assert_uint_eq(pdpt0->e[0], 0);
  ck_assert_uint_eq(pdpt0->used, 1);
  ck_assert_uint_eq(leaf_of(GB1 + 5, NULL), huge(0x40000));
  ck_assert_uint_eq(leaf_of(FAR_VA, NULL), pte4k(0x999));

  /* The 1G leaf: PDPT0 empties too. */
  g_array_set_size(calls, 0);
  freed = pgtable_clear_range(&pt, GB1, 2 * GB1, record_leaf, calls);
  LeafCall want1g[] = { { GB1, 3, huge(0x40000) } };
  assert_calls(calls, want1g, 1);
  ck_assert_uint_eq(freed, 1);
  ck_assert_uint_eq(pt.host.nodes_freed - nodes_freed, 4);
  ck_assert_ptr_null(pt.root->child[0]);
  ck_assert_uint_eq(pt.root->e[0], 0);

  /* Everything: the far page and its three tables; the root stays. */
  g_array_set_size(calls, 0);
  freed = pgtable_clear_range(&pt, 0, 1ULL << 47, record_leaf, calls);
  LeafCall want_far[] = { { FAR_VA, 1, pte4k(0x999) } };
  assert_calls(calls, want_far, 1);
  ck_assert_uint_eq(freed, 3);
  ck_assert_uint_eq(pt.tables, 1);
  ck_assert_ptr_nonnull(pt.root);
  ck_assert_uint_eq(pt.root->used, 0);
  ck_assert_uint_eq(g_hash_table_size(ta.live), 1);
  ck_assert(g_hash_table_contains(ta.live, GSIZE_TO_POINTER(pt.root->pfn)));

  /* Nothing left: a second clear calls nothing and frees nothing. */
  g_array_set_size(calls, 0);
  ck_assert_uint_eq(pgtable_clear_range(&pt, 0, 1ULL << 47, record_leaf, calls), 0);
  ck_assert_uint_eq(calls->len, 0);
  ck_assert_uint_eq(pt.host.nodes_freed - nodes_freed, 7);
}
END_TEST

START_TEST(test_clear_partial_range)
{
  map_clear_scene();
  g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(LeafCall));
  /* Pages 2..5 of X: four calls, X keeps pages 0, 1, 6, 7. */
  unsigned freed = pgtable_clear_range(&pt, 0x402000, 0x406000, record_leaf, calls);
  LeafCall want[4];
  for (unsigned p = 0; p < 4; p++)
    want[p] = (LeafCall){ 0x402000 + p * KB4, 1, pte4k(0x102 + p) };
  assert_calls(calls, want, 4);
  ck_assert_uint_eq(freed, 0);
  ck_assert_uint_eq(pt.tables, 8);
  unsigned l, i;
  PtNode *x = pgtable_lookup(&pt, 0x400000, &l, &i);
  ck_assert_path(x->used == 4, 0x400000, "PT X should keep 4 entries, has %u", x->used);
  for (unsigned p = 0; p < 8; p++) {
    uint64_t e = leaf_of(0x400000 + p * KB4, &l);
    ck_assert_uint_eq(l, 1);
    if (p >= 2 && p < 6)
      ck_assert_uint_eq(e, 0);
    else
      ck_assert_uint_eq(e, pte4k(0x100 + p));
  }
  /* An empty range and a range with nothing mapped do nothing. */
  g_array_set_size(calls, 0);
  ck_assert_uint_eq(pgtable_clear_range(&pt, 0x400000, 0x400000, record_leaf, calls), 0);
  ck_assert_uint_eq(pgtable_clear_range(&pt, 0x402000, 0x406000, record_leaf, calls), 0);
  ck_assert_uint_eq(calls->len, 0);
  ck_assert_uint_eq(leaf_of(0x400000, NULL), pte4k(0x100));
}
END_TEST

/* A range that crosses a PD boundary mid-way frees both PTE tables it empties
 * and stops at its end. */
START_TEST(test_clear_across_tables)
{
  map4k(0x3fe000, 1); /* PD[1], PT[510] */
  map4k(0x3ff000, 2); /* PD[1], PT[511] */
  map4k(0x400000, 3); /* PD[2], PT[0] */
  map4k(0x401000, 4); /* PD[2], PT[1] */
  g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(LeafCall));
  unsigned freed = pgtable_clear_range(&pt, 0x3ff000, 0x401000, record_leaf, calls);
  LeafCall want[] = { { 0x3ff000, 1, pte4k(2) }, { 0x400000, 1, pte4k(3) } };
  assert_calls(calls, want, 2);
  ck_assert_uint_eq(freed, 0);
  freed = pgtable_clear_range(&pt, 0x3fe000, 0x402000, NULL, NULL); /* no callback */
  ck_assert_uint_eq(freed, 4); /* both PTs, the PD, the PDPT */
  ck_assert_uint_eq(pt.tables, 1);
}
END_TEST

START_TEST(test_clear_nonpresent_leaf)
{
  /* A non-zero entry without P (a software entry) is cleared but maps no
   * page, so the callback does not see it. */
  ck_assert(pgtable_set(&pt, 0x400000, 1, PTE_SW_NUMA, NULL));
  map4k(0x401000, 9);
  g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(LeafCall));
  unsigned freed = pgtable_clear_range(&pt, 0x400000, 0x402000, record_leaf, calls);
  LeafCall want[] = { { 0x401000, 1, pte4k(9) } };
  assert_calls(calls, want, 1);
  ck_assert_uint_eq(freed, 3);
  ck_assert_uint_eq(leaf_of(0x400000, NULL), 0);
}
END_TEST

/* ---- changing flags --------------------------------------------------------------- */

START_TEST(test_change_range)
{
  for (unsigned p = 0; p < 4; p++)
    map4k(0x400000 + p * KB4, 0x10 + p);
  ck_assert(pgtable_set(&pt, 0x404000, 1, PTE_SW_NUMA | PTE_RW, NULL)); /* not present */
  ck_assert(pgtable_set(&pt, 0x600000, 2, huge(0x600), NULL));
  map4k(0x800000, 0x80);
  uint64_t pd_entry = pt.root->child[0]->child[0]->e[2];

  /* [0x401000, 0x800000): make read-only and no-execute. */
  g_autofree char *before = draw_path(&pt, 0x401000);
  pgtable_change_range(&pt, 0x401000, 0x800000, PTE_NX, PTE_RW);
  g_autofree char *after = draw_path(&pt, 0x401000);
  ck_assert_msg(leaf_of(0x401000, NULL) == ((pte4k(0x11) & ~PTE_RW) | PTE_NX), "before:\n%safter:\n%s", before,
                after);
  ck_assert_uint_eq(leaf_of(0x400000, NULL), pte4k(0x10));
  for (unsigned p = 1; p < 4; p++)
    ck_assert_uint_eq(leaf_of(0x400000 + p * KB4, NULL), (pte4k(0x10 + p) & ~PTE_RW) | PTE_NX);
  ck_assert_uint_eq(leaf_of(0x404000, NULL), PTE_SW_NUMA | PTE_RW);
  ck_assert_uint_eq(leaf_of(0x600000, NULL), (huge(0x600) & ~PTE_RW) | PTE_NX);
  ck_assert_uint_eq(leaf_of(0x800000, NULL), pte4k(0x80));
  /* Table entries keep P|RW|US: the leaf carries the permission. */
  ck_assert_uint_eq(pt.root->child[0]->child[0]->e[2], pd_entry);
  ck_assert_uint_eq(pd_entry, pte_make(pte_pfn(pd_entry), PTE_P | PTE_RW | PTE_US));

  /* An empty range changes nothing; the inverse change restores. */
  pgtable_change_range(&pt, 0x400000, 0x400000, PTE_NX, PTE_RW);
  ck_assert_uint_eq(leaf_of(0x400000, NULL), pte4k(0x10));
  pgtable_change_range(&pt, 0x401000, 0x800000, PTE_RW, PTE_NX);
  for (unsigned p = 0; p < 4; p++)
    ck_assert_uint_eq(leaf_of(0x400000 + p * KB4, NULL), pte4k(0x10 + p));
  ck_assert_uint_eq(leaf_of(0x600000, NULL), huge(0x600));
}
END_TEST

/* ---- teardown and failures --------------------------------------------------------- */

START_TEST(test_destroy_returns_all)
{
  reinit(5);
  uint64_t x = 0x2545f4914f6cdd1dULL;
  for (unsigned k = 0; k < 300; k++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint64_t va = (x & ((1ULL << 57) - 1)) & ~0xfffULL;
    unsigned level = (x >> 60) == 0 ? 2 : 1; /* one in sixteen a 2M leaf */
    if (level == 2)
      va &= ~(MB2 - 1);
    pgtable_set(&pt, va, level, level == 2 ? huge(k) : pte4k(k), NULL); /* may meet a huge leaf */
  }
  ck_assert_uint_gt(pt.tables, 300);
  ck_assert_uint_eq(g_hash_table_size(ta.live), pt.tables);
  unsigned allocs = ta_total(ta.allocs);
  pgtable_destroy(&pt);
  ck_assert_uint_eq(ta_total(ta.releases), allocs);
  ck_assert_uint_eq(g_hash_table_size(ta.live), 0);
  ck_assert_uint_eq(pt.tables, 0);
  pgtable_destroy(&pt); /* a destroyed table may be destroyed again */
}
END_TEST

START_TEST(test_alloc_failure)
{
  uint64_t va = 0x400000;
  ta.budget = 1; /* the PDPT, not the PD */
  unsigned allocated = 0;
  g_autofree char *before = draw_path(&pt, va);
  gboolean ok = pgtable_set(&pt, va, 1, pte4k(1), &allocated);
  g_autofree char *after = draw_path(&pt, va);
  ck_assert_msg(!ok && allocated == 1, "ok %d allocated %u\nbefore:\n%safter:\n%s", ok, allocated, before, after);
  ck_assert_uint_eq(pt.tables, 2);
  unsigned l;
  ck_assert_uint_eq(leaf_of(va, &l), 0);
  ck_assert_uint_eq(l, 3); /* the walk ends in the new, empty PDPT */

  /* With memory back the same set reuses the PDPT. */
  ta.budget = G_MAXUINT;
  allocated = 0;
  ck_assert(pgtable_set(&pt, va, 1, pte4k(1), &allocated));
  ck_assert_uint_eq(allocated, 2);
  ck_assert_uint_eq(leaf_of(va, NULL), pte4k(1));

  /* No memory at all: nothing changes. */
  ta.budget = 0;
  allocated = 0;
  ck_assert(!pgtable_set(&pt, FAR_VA, 1, pte4k(2), &allocated));
  ck_assert_uint_eq(allocated, 0);
  ck_assert_uint_eq(pt.tables, 4);
  ck_assert_ptr_null(pgtable_ensure(&pt, FAR_VA, 1, NULL));
  /* A set that needs no table still works. */
  ck_assert(pgtable_set(&pt, va + KB4, 1, pte4k(3), NULL));

  /* A table left empty by a failed set is an ordinary empty table:
   * clearing its range frees it. */
  ta.budget = 1;
  ck_assert(!pgtable_set(&pt, 5 * GB1, 1, pte4k(4), NULL));
  ck_assert_uint_eq(pt.tables, 5);
  ck_assert_uint_eq(pgtable_clear_range(&pt, 5 * GB1, 6 * GB1, NULL, NULL), 1);
  ck_assert_uint_eq(pt.tables, 4);
}
END_TEST

START_TEST(test_init_failure)
{
  TestAlloc saved = ta;
  ta.budget = 0;
  PageTable p2;
  PtAllocator a = ta_hooks();
  ck_assert(!pgtable_init(&p2, &geo, &a));
  ck_assert_ptr_null(p2.root);
  ck_assert_uint_eq(p2.tables, 0);
  pgtable_destroy(&p2);
  ck_assert_uint_eq(ta_total(ta.allocs), ta_total(saved.allocs));
  ta.budget = G_MAXUINT;
}
END_TEST

/* Two tables are equal: same table pages, entries and counts. */
static gboolean same_tree(const PageTable *a, const PtNode *x, const PtNode *y)
{
  if (x->pfn != y->pfn || x->level != y->level || x->used != y->used)
    return FALSE;
  unsigned n = 1u << a->g.bits[x->level];
  if (memcmp(x->e, y->e, n * sizeof *x->e) != 0)
    return FALSE;
  for (unsigned i = 0; x->child && i < n; i++)
    if ((x->child[i] == NULL) != (y->child[i] == NULL) ||
        (x->child[i] && !same_tree(a, x->child[i], y->child[i])))
      return FALSE;
  return TRUE;
}

/* pgtable_find() answers as pgtable_lookup(), and pgtable_set_found() does
 * what pgtable_set() at level 1 does: twin tables, one set each way, stay
 * equal under random stores and clears, with huge leaves in the way and
 * tables freed between the lookup and the store (the stored table would be
 * gone: the store must descend again). */
START_TEST(test_set_found_twin)
{
  TestAlloc tb = { .next_pfn = FIRST_PFN, .budget = G_MAXUINT, .live = g_hash_table_new(g_direct_hash, g_direct_equal) };
  PtAllocator hb = { .alloc = ta_alloc, .release = ta_release, .ctx = &tb };
  PageTable twin;
  ck_assert(pgtable_init(&twin, &geo, &hb));
  GRand *r = g_rand_new_with_seed(7);
  unsigned direct = 0, again = 0;
  for (unsigned step = 0; step < 20000; step++) {
    /* Four 2M ranges of eight pages each, two 1G apart. */
    uint64_t va = (uint64_t)g_rand_int_range(r, 0, 2) * GB1 + (uint64_t)g_rand_int_range(r, 0, 2) * MB2 +
                  (uint64_t)g_rand_int_range(r, 0, 8) * KB4 + (uint64_t)g_rand_int_range(r, 0, 4096);
    unsigned what = (unsigned)g_rand_int_range(r, 0, 100);
    if (what < 5) {
      /* A huge leaf, refused where a table hangs. */
      uint64_t e = huge((uint64_t)g_rand_int_range(r, 1, 100) << 9);
      ck_assert_int_eq(pgtable_set(&pt, va, 2, e, NULL), pgtable_set(&twin, va, 2, e, NULL));
      continue;
    }
    PtFound f;
    pgtable_find(&pt, va, &f);
    unsigned l, i;
    PtNode *n = pgtable_lookup(&pt, va, &l, &i);
    ck_assert_ptr_eq(f.table, n);
    ck_assert_uint_eq(f.level, l);
    ck_assert_uint_eq(f.index, i);
    if (what < 25) {
      /* Empty a range in between: tables may go. */
      uint64_t lo = va & ~(MB2 - 1), hi = lo + (uint64_t)g_rand_int_range(r, 1, 3) * MB2;
      ck_assert_uint_eq(pgtable_clear_range(&pt, lo, hi, NULL, NULL), pgtable_clear_range(&twin, lo, hi, NULL, NULL));
    }
    uint64_t e = g_rand_int_range(r, 0, 4) == 0 ? 0 : pte4k((uint64_t)g_rand_int_range(r, 1, 1000));
    if (f.level == 1 && f.nodes_freed == pt.host.nodes_freed)
      direct++;
    else if (f.level == 1)
      again++;
    unsigned alloc_a = 0, alloc_b = 0;
    ck_assert_int_eq(pgtable_set_found(&pt, &f, va, e, &alloc_a), pgtable_set(&twin, va, 1, e, &alloc_b));
    ck_assert_uint_eq(alloc_a, alloc_b);
    ck_assert_uint_eq(pt.tables, twin.tables);
    ck_assert_path(same_tree(&pt, pt.root, twin.root), va, "step %u: the twins differ", step);
  }
  ck_assert_uint_gt(direct, 1000);
  ck_assert_uint_gt(again, 100);
  g_rand_free(r);
  pgtable_destroy(&twin);
  ck_assert_uint_eq(g_hash_table_size(tb.live), 0);
  g_hash_table_destroy(tb.live);
}
END_TEST

/* ---- the entry accessors and setters ------------------------------------------- */

START_TEST(test_pte_accessors)
{
  uint64_t table = pte_make(0x1234, PTE_P | PTE_RW | PTE_US);
  uint64_t hint = pte4k(0x55) | PTE_SW_NUMA;
  ck_assert(pte_none(0));
  ck_assert(!pte_none(PTE_SW_NUMA)); /* software state is not empty */
  ck_assert(pte_present(pte4k(1)));
  ck_assert(pte_present(hint)); /* present to the kernel ... */
  ck_assert(pte_protnone(hint)); /* ... not to the MMU */
  ck_assert(!pte_protnone(pte4k(1)));
  ck_assert(!pte_protnone(PTE_SW_NUMA)); /* not present at all */
  ck_assert(!pte_present(PTE_SW_NUMA | PTE_PS));
  /* Every PTE is a leaf; above, only PS entries, present or not. */
  ck_assert(pte_leaf(0, 1));
  ck_assert(pte_leaf(table, 1));
  ck_assert(!pte_leaf(table, 2));
  ck_assert(pte_leaf(huge(0x200), 2));
  ck_assert(pte_leaf(PTE_SW_NUMA | PTE_PS, 3));
  ck_assert(pte_huge(huge(0x200), 2));
  ck_assert(!pte_huge(huge(0x200), 1)); /* bit 7 of a PTE is PAT, not a size */
  ck_assert(!pte_huge(table, 2));
  ck_assert(pte_zero_page(pte_make(7, PTE_P | PTE_SW_ZERO)));
  ck_assert(!pte_zero_page(pte4k(7)));
  ck_assert(pte_write(pte4k(1)) && pte_young(pte4k(1)) && pte_dirty(pte4k(1)));
  ck_assert(!pte_dirty(huge(1)));
}
END_TEST

START_TEST(test_entry_set_keeps_used)
{
  map4k(0x400000, 0x10);
  unsigned l, i;
  PtNode *t = pgtable_lookup(&pt, 0x400000, &l, &i);
  ck_assert_uint_eq(l, 1);
  ck_assert_uint_eq(t->used, 1);
  /* Slot 1 (0x401000) was empty: one more used. */
  ck_assert(pgtable_entry_set(t, 1, pte4k(0x11)));
  ck_assert_uint_eq(t->used, 2);
  ck_assert_uint_eq(leaf_of(0x401000, NULL), pte4k(0x11));
  /* Overwriting is not a new entry; a software-only entry counts. */
  ck_assert(pgtable_entry_set(t, 1, PTE_SW_NUMA));
  ck_assert_uint_eq(t->used, 2);
  ck_assert(pgtable_entry_set(t, 1, 0));
  ck_assert_uint_eq(t->used, 1);
  ck_assert(pgtable_entry_set(t, 1, 0)); /* clearing twice does not underflow */
  ck_assert_uint_eq(t->used, 1);

  /* The PMD entry above the table: flags may change, the table stays. */
  PtNode *pd = pt.root->child[0]->child[0];
  uint64_t up = pd->e[2];
  ck_assert_uint_eq(up, pte_make(FIRST_PFN + 3, PTE_P | PTE_RW | PTE_US));
  ck_assert(pgtable_entry_set(pd, 2, up | PTE_SW_NUMA));
  ck_assert_uint_eq(pd->e[2], up | PTE_SW_NUMA);
  ck_assert_uint_eq(pd->used, 1);
  g_autofree char *before = draw_path(&pt, 0x400000);
  ck_assert(!pgtable_entry_set(pd, 2, 0));                  /* would lose the table */
  ck_assert(!pgtable_entry_set(pd, 2, huge(0x400)));        /* a leaf over it */
  ck_assert(!pgtable_entry_set(pd, 2, pte_make(0x999, PTE_P | PTE_RW | PTE_US))); /* another table */
  g_autofree char *after = draw_path(&pt, 0x400000);
  ck_assert_msg(pd->e[2] == (up | PTE_SW_NUMA) && pd->used == 1 && pd->child[2] == t,
                "a refused set changed the PMD\nbefore:\n%safter:\n%s", before, after);
  ck_assert(pgtable_entry_set(pd, 2, up));
  /* A PMD slot with no table under it takes anything. */
  ck_assert(pgtable_entry_set(pd, 5, huge(0xa00)));
  ck_assert_uint_eq(pd->used, 2);
  ck_assert_uint_eq(leaf_of(5 * MB2 + KB4, &l), huge(0xa00));
  ck_assert_uint_eq(l, 2);
}
END_TEST

START_TEST(test_entry_set_flags)
{
  uint64_t plain = pte_make(0x10, PTE_P | PTE_RW | PTE_US);
  ck_assert(pgtable_set(&pt, 0x400000, 1, plain, NULL));
  unsigned l, i;
  PtNode *t = pgtable_lookup(&pt, 0x400000, &l, &i);
  pgtable_entry_set_flags(t, i, PTE_A);
  ck_assert_uint_eq(t->e[i], plain | PTE_A);
  pgtable_entry_set_flags(t, i, PTE_A | PTE_D);
  ck_assert_uint_eq(t->e[i], plain | PTE_A | PTE_D);
  ck_assert_uint_eq(t->used, 1);
  /* On a table entry (the walk sets A at every level) the table stays. */
  PtNode *pd = pt.root->child[0]->child[0];
  uint64_t up = pd->e[2];
  pgtable_entry_set_flags(pd, 2, PTE_A);
  ck_assert_uint_eq(pd->e[2], up | PTE_A);
  ck_assert_ptr_eq(pd->child[2], t);
  /* An empty slot given flags is no longer empty: counted. */
  pgtable_entry_set_flags(t, 7, PTE_SW_NUMA);
  ck_assert_uint_eq(t->used, 2);
  pgtable_entry_set_flags(t, 7, 0);
  ck_assert_uint_eq(t->used, 2);
}
END_TEST

/* ---- the walker ---------------------------------------------------------------- */

/* What the callbacks saw, one line each (empty PTEs only counted), and
 * what they were told to do. */
typedef struct {
  GString *log;
  unsigned empty_ptes;
  unsigned calls;
  unsigned stop_at;     /* return 7 from this call (1-based); 0: never */
  uint64_t skip_table;  /* pmd_entry: skip the table starting here */
  gboolean mark;        /* pte_entry: set PTE_SW_NUMA on present PTEs */
} WalkLog;

static int log_stop(WalkLog *wl)
{
  return ++wl->calls == wl->stop_at ? 7 : 0;
}

static void log_entry(PtWalk *w, const char *what, uint64_t e, uint64_t addr, uint64_t next)
{
  WalkLog *wl = w->ctx;
  g_string_append_printf(wl->log, "%s %#" G_GINT64_MODIFIER "x-%#" G_GINT64_MODIFIER "x L%u [%u] %s pfn %#" G_GINT64_MODIFIER "x\n",
                         what, addr, next, w->level, w->index,
                         pte_leaf(e, w->level) ? (pte_present(e) ? "leaf" : "leaf-np") : w->below ? "table" : "other",
                         pte_pfn(e));
}

static int log_pud(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  ck_assert_uint_eq(w->level, 3);
  ck_assert_uint_eq(w->table->e[w->index], e);
  log_entry(w, "pud", e, addr, next);
  return log_stop(w->ctx);
}

static int log_pmd(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  WalkLog *wl = w->ctx;
  ck_assert_uint_eq(w->level, 2);
  ck_assert_uint_eq(w->table->e[w->index], e);
  ck_assert_uint_eq(w->action, PT_WALK_DESCEND);
  log_entry(w, "pmd", e, addr, next);
  if (wl->skip_table && addr == wl->skip_table)
    w->action = PT_WALK_SKIP;
  return log_stop(wl);
}

static int log_pte(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  WalkLog *wl = w->ctx;
  ck_assert_uint_eq(w->level, 1);
  ck_assert_uint_eq(w->table->e[w->index], e);
  ck_assert_ptr_null(w->below);
  if (pte_none(e)) {
    wl->empty_ptes++;
    return 0;
  }
  log_entry(w, "pte", e, addr, next);
  if (wl->mark && pte_present(e))
    ck_assert(pgtable_walk_set(w, e | PTE_SW_NUMA));
  return log_stop(wl);
}

static int log_hole(PtWalk *w, uint64_t addr, uint64_t next, unsigned level)
{
  WalkLog *wl = w->ctx;
  ck_assert_uint_eq(w->level, level);
  ck_assert_uint_eq(w->table->e[w->index], 0);
  g_string_append_printf(wl->log, "hole %#" G_GINT64_MODIFIER "x-%#" G_GINT64_MODIFIER "x L%u [%u]\n", addr, next,
                         level, w->index);
  return log_stop(wl);
}

static const PtWalkOps log_all = { .pud_entry = log_pud, .pmd_entry = log_pmd, .pte_entry = log_pte, .pte_hole = log_hole };
static const PtWalkOps log_upper = { .pud_entry = log_pud, .pmd_entry = log_pmd, .pte_hole = log_hole };

/* Walk [start, end) with ops; the log must read `want`. */
#define ck_walk(wl, start, end, ops, want, ret)                                                    \
  do {                                                                                              \
    g_string_truncate((wl)->log, 0);                                                                \
    (wl)->empty_ptes = (wl)->calls = 0;                                                             \
    int r_ = pgtable_walk(&pt, (start), (end), (ops), (wl));                                        \
    ck_assert_msg(strcmp((wl)->log->str, (want)) == 0, "walk [%#" G_GINT64_MODIFIER "x, %#"         \
                  G_GINT64_MODIFIER "x):\ngot:\n%swant:\n%s", (uint64_t)(start), (uint64_t)(end),   \
                  (wl)->log->str, (want));                                                          \
    ck_assert_int_eq(r_, (ret));                                                                    \
  } while (0)

/*   PD0[2]  PT X: 0x400000 (pfn 0x100), 0x402000 (pfn 0x102)
 *   PD0[3]  2M leaf 0x600000 (pfn 0x600)
 *   PD0[4]  PT Y: 0x800000 (pfn 0x800)
 *   PDPT0[1] 1G leaf 0x40000000 (pfn 0x40000)
 * Tables: root 0x1000, PDPT0 0x1001, PD0 0x1002, X 0x1003, Y 0x1004. */
static void walk_scene(void)
{
  map4k(0x400000, 0x100);
  map4k(0x402000, 0x102);
  ck_assert(pgtable_set(&pt, 0x600000, 2, huge(0x600), NULL));
  map4k(0x800000, 0x800);
  ck_assert(pgtable_set(&pt, GB1, 3, huge(0x40000), NULL));
  ck_assert_uint_eq(pt.tables, 5);
}

/* Order, clipping and huge leaves at the PMD: a range that starts inside
 * X, past its first page, and ends 16K into the 2M leaf. */
START_TEST(test_walk_order_and_clipping)
{
  walk_scene();
  WalkLog wl = { .log = g_string_new(NULL) };
  ck_walk(&wl, 0x401000, 0x604000, &log_all,
          "pud 0x401000-0x604000 L3 [0] table pfn 0x1002\n"
          "pmd 0x401000-0x600000 L2 [2] table pfn 0x1003\n"
          "pte 0x402000-0x403000 L1 [2] leaf pfn 0x102\n"
          "pmd 0x600000-0x604000 L2 [3] leaf pfn 0x600\n", 0);
  /* X's slots 1..511 were visited, all but one of them empty. */
  ck_assert_uint_eq(wl.empty_ptes, 510);

  /* Not aligned to pages either: half of page 1 and half of page 2. */
  ck_walk(&wl, 0x401800, 0x402800, &log_all,
          "pud 0x401800-0x402800 L3 [0] table pfn 0x1002\n"
          "pmd 0x401800-0x402800 L2 [2] table pfn 0x1003\n"
          "pte 0x402000-0x402800 L1 [2] leaf pfn 0x102\n", 0);
  ck_assert_uint_eq(wl.empty_ptes, 1); /* slot 1, cut to 0x401800-0x402000 */

  /* An empty range, a range past the 48-bit space, and no callbacks. */
  ck_walk(&wl, 0x400000, 0x400000, &log_all, "", 0);
  ck_walk(&wl, 0x402000, 0x401000, &log_all, "", 0);
  ck_walk(&wl, 1ULL << 48, UINT64_MAX, &log_all, "", 0);
  PtWalkOps none = { 0 };
  ck_assert_int_eq(pgtable_walk(&pt, 0, UINT64_MAX, &none, NULL), 0);
  g_string_free(wl.log, TRUE);
}
END_TEST

/* Holes at each level, a 1G leaf, and no PTE table entered without a
 * pte_entry. */
START_TEST(test_walk_holes)
{
  walk_scene();
  WalkLog wl = { .log = g_string_new(NULL) };
  /* PD0[0] and [1] are empty; X, the 2M leaf and Y are reported, their
   * PTEs not. */
  ck_walk(&wl, 0, 0xa00000, &log_upper,
          "pud 0-0xa00000 L3 [0] table pfn 0x1002\n"
          "hole 0-0x200000 L2 [0]\n"
          "hole 0x200000-0x400000 L2 [1]\n"
          "pmd 0x400000-0x600000 L2 [2] table pfn 0x1003\n"
          "pmd 0x600000-0x800000 L2 [3] leaf pfn 0x600\n"
          "pmd 0x800000-0xa00000 L2 [4] table pfn 0x1004\n", 0);
  ck_assert_uint_eq(wl.calls, 6);
  /* The last PMD of PD0, the 1G leaf, an empty PUD cut at the end. */
  ck_walk(&wl, GB1 - MB2, 2 * GB1 + KB4, &log_all,
          "pud 0x3fe00000-0x40000000 L3 [0] table pfn 0x1002\n"
          "hole 0x3fe00000-0x40000000 L2 [511]\n"
          "pud 0x40000000-0x80000000 L3 [1] leaf pfn 0x40000\n"
          "hole 0x80000000-0x80001000 L3 [2]\n", 0);
  /* Across the first 512G: the last PUD of PDPT0, then an empty PML4 slot. */
  ck_walk(&wl, (1ULL << 39) - KB4, (1ULL << 39) + 2 * KB4, &log_all,
          "hole 0x7ffffff000-0x8000000000 L3 [511]\n"
          "hole 0x8000000000-0x8000002000 L4 [1]\n", 0);
  g_string_free(wl.log, TRUE);
}
END_TEST

/* A callback's non-zero value ends the walk at once and is returned; a
 * skipped table is not entered; pgtable_walk_set() writes the entry. */
START_TEST(test_walk_stop_skip_set)
{
  walk_scene();
  WalkLog wl = { .log = g_string_new(NULL), .stop_at = 3 };
  /* Calls: pud, pmd X, pte 0x400000 (the third: stop). */
  ck_walk(&wl, 0x400000, 4 * GB1, &log_all,
          "pud 0x400000-0x40000000 L3 [0] table pfn 0x1002\n"
          "pmd 0x400000-0x600000 L2 [2] table pfn 0x1003\n"
          "pte 0x400000-0x401000 L1 [0] leaf pfn 0x100\n", 7);
  ck_assert_uint_eq(wl.calls, 3);
  ck_assert_uint_eq(wl.empty_ptes, 0); /* nothing after the stop */

  /* Skip X: Y's one page is the only PTE seen. */
  wl.stop_at = 0;
  wl.skip_table = 0x400000;
  ck_walk(&wl, 0x400000, 0xa00000, &log_all,
          "pud 0x400000-0xa00000 L3 [0] table pfn 0x1002\n"
          "pmd 0x400000-0x600000 L2 [2] table pfn 0x1003\n"
          "pmd 0x600000-0x800000 L2 [3] leaf pfn 0x600\n"
          "pmd 0x800000-0xa00000 L2 [4] table pfn 0x1004\n"
          "pte 0x800000-0x801000 L1 [0] leaf pfn 0x800\n", 0);
  ck_assert_uint_eq(wl.empty_ptes, 511);

  /* Marking through the walk: X's two pages, nothing else, counts kept. */
  wl.skip_table = 0;
  wl.mark = TRUE;
  unsigned l, i;
  PtNode *x = pgtable_lookup(&pt, 0x400000, &l, &i);
  ck_walk(&wl, 0x400000, 0x600000, &log_all,
          "pud 0x400000-0x600000 L3 [0] table pfn 0x1002\n"
          "pmd 0x400000-0x600000 L2 [2] table pfn 0x1003\n"
          "pte 0x400000-0x401000 L1 [0] leaf pfn 0x100\n"
          "pte 0x402000-0x403000 L1 [2] leaf pfn 0x102\n", 0);
  ck_assert_uint_eq(leaf_of(0x400000, NULL), pte4k(0x100) | PTE_SW_NUMA);
  ck_assert_uint_eq(leaf_of(0x402000, NULL), pte4k(0x102) | PTE_SW_NUMA);
  ck_assert_uint_eq(leaf_of(0x800000, NULL), pte4k(0x800));
  ck_assert_uint_eq(leaf_of(0x600000, NULL), huge(0x600));
  ck_assert_uint_eq(x->used, 2);
  g_string_free(wl.log, TRUE);
}
END_TEST

/* A non-present huge PMD and a non-present entry that is no table reach
 * pmd_entry (Linux's pmd_none is the only hole). */
START_TEST(test_walk_nonpresent_pmds)
{
  ck_assert(pgtable_set(&pt, MB2, 2, pte_make(0x200, PTE_PS | PTE_SW_NUMA), NULL));
  ck_assert(pgtable_set(&pt, 2 * MB2, 2, pte_make(0x400, PTE_SW_NUMA), NULL));
  WalkLog wl = { .log = g_string_new(NULL) };
  ck_walk(&wl, MB2, 3 * MB2, &log_all,
          "pud 0x200000-0x600000 L3 [0] table pfn 0x1002\n"
          "pmd 0x200000-0x400000 L2 [1] leaf-np pfn 0x200\n"
          "pmd 0x400000-0x600000 L2 [2] other pfn 0x400\n", 0);
  g_string_free(wl.log, TRUE);
}
END_TEST

static Suite *pgtable_suite(void)
{
  Suite *s = suite_create("pgtable");
  TCase *tc = tcase_create("geometry");
  tcase_add_test(tc, test_geometry_x86_64);
  tcase_add_test(tc, test_index_4level);
  tcase_add_test(tc, test_index_5level);
  suite_add_tcase(s, tc);

  tc = tcase_create("build");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_init_allocates_root);
  tcase_add_test(tc, test_set_4k_allocates_path);
  tcase_add_test(tc, test_set_overwrite_and_zero_keep_used);
  tcase_add_test(tc, test_set_5level);
  tcase_add_test(tc, test_huge_leaves);
  tcase_add_test(tc, test_lookup_stops);
  tcase_add_test(tc, test_ensure_refuses_below_huge);
  tcase_add_test(tc, test_ensure_refuses_below_nonpresent_huge);
  tcase_add_test(tc, test_set_huge_over_table_refused);
  tcase_add_test(tc, test_set_found_twin);
  suite_add_tcase(s, tc);

  tc = tcase_create("clear");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_clear_range_frees_empty_tables);
  tcase_add_test(tc, test_clear_partial_range);
  tcase_add_test(tc, test_clear_across_tables);
  tcase_add_test(tc, test_clear_nonpresent_leaf);
  tcase_add_test(tc, test_change_range);
  suite_add_tcase(s, tc);

  tc = tcase_create("door");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_pte_accessors);
  tcase_add_test(tc, test_entry_set_keeps_used);
  tcase_add_test(tc, test_entry_set_flags);
  tcase_add_test(tc, test_walk_order_and_clipping);
  tcase_add_test(tc, test_walk_holes);
  tcase_add_test(tc, test_walk_stop_skip_set);
  tcase_add_test(tc, test_walk_nonpresent_pmds);
  suite_add_tcase(s, tc);

  tc = tcase_create("lifetime");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_destroy_returns_all);
  tcase_add_test(tc, test_alloc_failure);
  tcase_add_test(tc, test_init_failure);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(pgtable_suite)
