/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mm.c - unit tests of the VMA bookkeeping of an address space (kernel/mm.h).
 *
 * The fixture builds an empty Mm over a page-table allocator that counts
 * table pages.  Tests insert VMAs by hand and check the list; a failing check
 * draws the whole list before and after the step.  The last test drives a
 * random sequence of mmap, munmap, mprotect and madvise-like steps and
 * compares the list after each one with a per-page model kept in the test.
 */
#include "config.h"
#include "testutil.h"

#include "mm.h"
#include "record.h"

#include <string.h>

#define PG 0x1000ULL

/* ---- fixture ---------------------------------------------------------------- */

typedef struct {
  uint64_t next_pfn;
  unsigned live;    /* table pages handed out and not yet returned */
  gboolean refuse;  /* fail every allocation */
} CountAlloc;

static gboolean count_alloc(void *ctx, unsigned level, uint64_t *pfn)
{
  CountAlloc *ca = ctx;
  if (ca->refuse)
    return FALSE;
  *pfn = ca->next_pfn++;
  ca->live++;
  return TRUE;
}

static void count_release(void *ctx, unsigned level, uint64_t pfn)
{
  CountAlloc *ca = ctx;
  ck_assert_uint_gt(ca->live, 0);
  ca->live--;
}

static CountAlloc ca;
static PtGeometry geo;
static Mm *mm;

static PtAllocator ca_hooks(void)
{
  return (PtAllocator){ .alloc = count_alloc, .release = count_release, .ctx = &ca };
}

static void setup(void)
{
  memset(&ca, 0, sizeof ca);
  ca.next_pfn = 0x100;
  pgtable_geometry_x86_64(&geo, 4);
  PtAllocator a = ca_hooks();
  mm = mm_new(42, 7, &geo, &a);
  ck_assert_ptr_nonnull(mm);
}

static void teardown(void)
{
  mm_free(mm);
  mm = NULL;
  ck_assert_msg(ca.live == 0, "%u page-table pages not returned", ca.live);
}

/* ---- drawing and checks ---------------------------------------------------------- */

static void draw_vma(GString *s, const Vma *v)
{
  g_string_append_printf(s, "[%#" G_GINT64_MODIFIER "x-%#" G_GINT64_MODIFIER "x %c%c%c", v->start, v->end,
                         v->prot & PROT_R ? 'r' : '-', v->prot & PROT_W ? 'w' : '-', v->prot & PROT_X ? 'x' : '-');
  if (v->flags)
    g_string_append_printf(s, " f%u", v->flags);
  if (v->thp)
    g_string_append_printf(s, " thp%u", v->thp);
  if (v->policy || v->policy_nodes)
    g_string_append_printf(s, " pol%u/%#" G_GINT64_MODIFIER "x", v->policy, v->policy_nodes);
  g_string_append_c(s, ']');
}

/* "3 vmas: [0x10000-0x12000 rw-] [0x12000-0x15000 r--] ..." */
static char *draw_vmas(const Mm *m)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%u vmas:", mm_vma_count(m));
  for (guint i = 0; i < mm_vma_count(m); i++) {
    g_string_append_c(s, ' ');
    draw_vma(s, mm_vma(m, i));
  }
  return g_string_free(s, FALSE);
}

static Vma vma(uint64_t start, uint64_t end, uint8_t prot)
{
  return (Vma){ .start = start, .end = end, .prot = prot };
}

static void insert(uint64_t start, uint64_t end, uint8_t prot)
{
  Vma v = vma(start, end, prot);
  mm_insert_vma(mm, &v);
}

/* Check the list is exactly `want`, every field. */
static void assert_vmas(const char *before, const Vma *want, guint n)
{
  g_autofree char *after = draw_vmas(mm);
  GString *w = g_string_new(NULL);
  g_string_append_printf(w, "%u vmas:", n);
  for (guint i = 0; i < n; i++) {
    g_string_append_c(w, ' ');
    draw_vma(w, &want[i]);
  }
  gboolean ok = mm_vma_count(mm) == n;
  for (guint i = 0; ok && i < n; i++) {
    const Vma *v = mm_vma(mm, i);
    ok = v->start == want[i].start && v->end == want[i].end && v->prot == want[i].prot &&
         v->flags == want[i].flags && v->thp == want[i].thp && v->policy == want[i].policy &&
         v->policy_nodes == want[i].policy_nodes;
  }
  ck_assert_msg(ok, "\nbefore: %s\nafter:  %s\nwanted: %s", before, after, w->str);
  g_string_free(w, TRUE);
}

/* Sorted, non-empty, page aligned, non-overlapping. */
static void assert_well_formed(const char *step)
{
  for (guint i = 0; i < mm_vma_count(mm); i++) {
    const Vma *v = mm_vma(mm, i);
    gboolean ok = v->start < v->end && v->start % PG == 0 && v->end % PG == 0 &&
                  (i == 0 || mm_vma(mm, i - 1)->end <= v->start);
    if (!ok) {
      g_autofree char *all = draw_vmas(mm);
      ck_abort_msg("after %s: vma %u is out of order or empty\n%s", step, i, all);
    }
  }
}

/* ---- life cycle ---------------------------------------------------------------- */

START_TEST(test_new_free)
{
  ck_assert_uint_eq(mm->pid, 42);
  ck_assert_uint_eq(mm->asid, 7);
  ck_assert_uint_eq(mm_vma_count(mm), 0);
  ck_assert_ptr_nonnull(mm->pt.root);
  ck_assert_uint_eq(mm->pt.tables, 1);
  ck_assert_uint_eq(ca.live, 1);
  ck_assert_uint_eq(mm->pt.root->pfn, 0x100);
  ck_assert_uint_eq(mm->rss_pages, 0);
  ck_assert(!mm->thp_disable);
  ck_assert_ptr_null(mm_find_vma(mm, 0));
  /* Page tables built under the mm go back with it (checked in teardown). */
  ck_assert(pgtable_set(&mm->pt, 0x400000, 1, pte_make(0x9, PTE_P), NULL));
  ck_assert_uint_eq(ca.live, 4);
  insert(0x400000, 0x401000, PROT_R);
  mm_free(NULL);
}
END_TEST

START_TEST(test_new_fails_without_root)
{
  ca.refuse = TRUE;
  PtAllocator a = ca_hooks();
  Mm *m = mm_new(1, 1, &geo, &a);
  ck_assert_ptr_null(m);
  ca.refuse = FALSE;
}
END_TEST

/* ---- lookup ------------------------------------------------------------------ */

START_TEST(test_find_vma)
{
  /* Inserted out of order; kept sorted. */
  insert(0x5000, 0x8000, PROT_R | PROT_W);
  insert(0x1000, 0x3000, PROT_R);
  insert(0x9000, 0xa000, PROT_X);
  static const Vma want[] = { { 0x1000, 0x3000, PROT_R }, { 0x5000, 0x8000, PROT_R | PROT_W }, { 0x9000, 0xa000, PROT_X } };
  assert_vmas("(three inserts)", want, 3);

  static const struct {
    uint64_t va;
    int vma; /* index in want, -1 for none */
  } probes[] = {
    { 0x0, -1 },    { 0xfff, -1 },   { 0x1000, 0 },  { 0x2abc, 0 },  { 0x2fff, 0 },
    { 0x3000, -1 }, { 0x4fff, -1 },  { 0x5000, 1 },  { 0x7fff, 1 },  { 0x8000, -1 },
    { 0x8fff, -1 }, { 0x9000, 2 },   { 0x9fff, 2 },  { 0xa000, -1 }, { G_MAXUINT64, -1 },
  };
  g_autofree char *all = draw_vmas(mm);
  /* Twice, forwards then backwards, so the last-VMA cache starts from every
   * VMA in turn. */
  for (int pass = 0; pass < 2; pass++) {
    for (guint k = 0; k < G_N_ELEMENTS(probes); k++) {
      guint j = pass ? G_N_ELEMENTS(probes) - 1 - k : k;
      Vma *v = mm_find_vma(mm, probes[j].va);
      if (probes[j].vma < 0)
        ck_assert_msg(v == NULL, "va %#" G_GINT64_MODIFIER "x: found a vma in a gap\n%s", probes[j].va, all);
      else
        ck_assert_msg(v == mm_vma(mm, (guint)probes[j].vma), "va %#" G_GINT64_MODIFIER "x: wrong vma\n%s",
                      probes[j].va, all);
    }
  }
}
END_TEST

/* The last-VMA cache never answers for a VMA that moved or went away. */
START_TEST(test_find_cache_after_changes)
{
  insert(0x10000, 0x20000, PROT_R);
  insert(0x30000, 0x40000, PROT_R | PROT_W);
  Vma *v = mm_find_vma(mm, 0x38000); /* caches index 1 */
  ck_assert_uint_eq(v->start, 0x30000);

  /* Remove the cached VMA: its range is a gap now. */
  mm_remove_range(mm, 0x30000, 0x40000);
  ck_assert_ptr_null(mm_find_vma(mm, 0x38000));
  ck_assert_uint_eq(mm_find_vma(mm, 0x18000)->start, 0x10000); /* caches index 0 */

  /* Insert before the cached VMA: indices shift under the cache. */
  insert(0x1000, 0x2000, PROT_X);
  ck_assert_uint_eq(mm_find_vma(mm, 0x1800)->start, 0x1000);
  ck_assert_uint_eq(mm_find_vma(mm, 0x18000)->start, 0x10000);
  ck_assert_ptr_null(mm_find_vma(mm, 0x8000));

  /* Punch a hole in the cached VMA. */
  ck_assert_uint_eq(mm_find_vma(mm, 0x14000)->start, 0x10000);
  mm_remove_range(mm, 0x12000, 0x16000);
  ck_assert_ptr_null(mm_find_vma(mm, 0x14000));
  ck_assert_uint_eq(mm_find_vma(mm, 0x11000)->end, 0x12000);
  ck_assert_uint_eq(mm_find_vma(mm, 0x17000)->start, 0x16000);

  /* Split and merge back around the cached VMA. */
  guint n;
  mm_split_range(mm, 0x17000, 0x18000, &n);
  ck_assert_uint_eq(mm_find_vma(mm, 0x17800)->start, 0x17000);
  ck_assert_uint_eq(mm_find_vma(mm, 0x17800)->end, 0x18000);
  mm_merge_vmas(mm);
  Vma *m = mm_find_vma(mm, 0x17800);
  ck_assert_uint_eq(m->start, 0x16000);
  ck_assert_uint_eq(m->end, 0x20000);
  mm_remove_range(mm, 0, 0x100000);
  ck_assert_ptr_null(mm_find_vma(mm, 0x17800));
  ck_assert_ptr_null(mm_find_vma(mm, 0x1000));
}
END_TEST

/* ---- splitting and removing ------------------------------------------------------- */

/* mm_split_range(start, end) returns first and n, and leaves `count` VMAs. */
static void expect_split(uint64_t start, uint64_t end, guint first, guint n, guint count)
{
  g_autofree char *before = draw_vmas(mm);
  guint got_n;
  guint got_first = mm_split_range(mm, start, end, &got_n);
  g_autofree char *after = draw_vmas(mm);
  ck_assert_msg(got_first == first && got_n == n && mm_vma_count(mm) == count,
                "split [%#" G_GINT64_MODIFIER "x, %#" G_GINT64_MODIFIER "x): first %u n %u count %u, want %u %u %u\n"
                "before: %s\nafter:  %s",
                start, end, got_first, got_n, mm_vma_count(mm), first, n, count, before, after);
}

START_TEST(test_split_inside_one)
{
  Vma v = { .start = 0x10000, .end = 0x20000, .prot = PROT_R | PROT_W, .flags = MAP_F_STACK,
            .thp = VMA_THP_HUGEPAGE, .policy = MPOL_BIND, .policy_nodes = 0x3 };
  mm_insert_vma(mm, &v);
  g_autofree char *before = draw_vmas(mm);
  guint n = 99;
  guint first = mm_split_range(mm, 0x12000, 0x15000, &n);
  /* Every piece keeps all the attributes of the original. */
  Vma want[3] = { v, v, v };
  want[0].end = want[1].start = 0x12000;
  want[1].end = want[2].start = 0x15000;
  assert_vmas(before, want, 3);
  ck_assert_uint_eq(first, 1);
  ck_assert_uint_eq(n, 1);
  /* Splitting again on the same edges changes nothing. */
  expect_split(0x12000, 0x15000, 1, 1, 3);
}
END_TEST

/*   A [0x10000-0x20000)   B [0x30000-0x40000)   C [0x50000-0x60000)
 * split_range(0x18000, 0x38000) cuts A and B:
 *   A1 [0x10000-0x18000) A2 [0x18000-0x20000) B1 [0x30000-0x38000) B2 [..-0x40000) C
 * and returns first 1, n 2 (A2 and B1). */
START_TEST(test_split_across)
{
  insert(0x10000, 0x20000, PROT_R);
  insert(0x30000, 0x40000, PROT_W);
  insert(0x50000, 0x60000, PROT_X);
  g_autofree char *before = draw_vmas(mm);
  guint n;
  guint first = mm_split_range(mm, 0x18000, 0x38000, &n);
  static const Vma want[] = { { 0x10000, 0x18000, PROT_R }, { 0x18000, 0x20000, PROT_R },
                              { 0x30000, 0x38000, PROT_W }, { 0x38000, 0x40000, PROT_W },
                              { 0x50000, 0x60000, PROT_X } };
  assert_vmas(before, want, 5);
  ck_assert_uint_eq(first, 1);
  ck_assert_uint_eq(n, 2);

  /* Edges that already are boundaries: no new VMA. */
  expect_split(0x30000, 0x60000, 2, 3, 5);
  /* A range inside a gap: nothing, and first is where a VMA would go. */
  expect_split(0x21000, 0x2f000, 2, 0, 5);
  /* Ranges before and after everything. */
  expect_split(0x1000, 0x10000, 0, 0, 5);
  expect_split(0x60000, 0x70000, 5, 0, 5);
  /* An empty range cuts nothing. */
  expect_split(0x54000, 0x54000, 4, 0, 5);
  /* A range from a gap into a VMA splits only that VMA. */
  expect_split(0x48000, 0x51000, 4, 1, 6);
  ck_assert_uint_eq(mm_vma(mm, 4)->end, 0x51000);
  assert_well_formed("split_range");
}
END_TEST

START_TEST(test_remove_middle)
{
  Vma v = { .start = 0x10000, .end = 0x20000, .prot = PROT_R, .thp = VMA_THP_NOHUGEPAGE };
  mm_insert_vma(mm, &v);
  g_autofree char *before = draw_vmas(mm);
  mm_remove_range(mm, 0x14000, 0x16000);
  Vma want[2] = { v, v };
  want[0].end = 0x14000;
  want[1].start = 0x16000;
  assert_vmas(before, want, 2);
  ck_assert_ptr_null(mm_find_vma(mm, 0x14000));
  ck_assert_ptr_null(mm_find_vma(mm, 0x15fff));
}
END_TEST

START_TEST(test_remove_across)
{
  insert(0x10000, 0x20000, PROT_R);
  insert(0x20000, 0x30000, PROT_W); /* touching A */
  insert(0x40000, 0x50000, PROT_X);
  insert(0x60000, 0x70000, PROT_R);
  g_autofree char *before = draw_vmas(mm);
  /* From inside the first through the whole second and third into the fourth. */
  mm_remove_range(mm, 0x18000, 0x68000);
  static const Vma want[] = { { 0x10000, 0x18000, PROT_R }, { 0x68000, 0x70000, PROT_R } };
  assert_vmas(before, want, 2);

  /* Removing a gap changes nothing; removing exactly a VMA leaves none of it. */
  mm_remove_range(mm, 0x20000, 0x60000);
  ck_assert_uint_eq(mm_vma_count(mm), 2);
  mm_remove_range(mm, 0x10000, 0x18000);
  static const Vma want2[] = { { 0x68000, 0x70000, PROT_R } };
  assert_vmas(before, want2, 1);
  /* An empty range removes nothing. */
  mm_remove_range(mm, 0x6a000, 0x6a000);
  ck_assert_uint_eq(mm_vma_count(mm), 1);
  mm_remove_range(mm, 0, G_MAXUINT64 & ~(PG - 1));
  ck_assert_uint_eq(mm_vma_count(mm), 0);
}
END_TEST

/* ---- merging ------------------------------------------------------------------ */

/* Thirteen touching one-page VMAs: the first three identical, then each
 * other one differs from the plain VMAs around it in exactly one attribute.
 *
 *   page  0  1  2  3     4  5    6  7      8  9       10 11      12
 *         =  =  =  prot  =  thp  =  flags  =  policy  =  nodes   =
 *
 * Merging joins pages 0..2 and nothing else: 11 VMAs. */
START_TEST(test_merge_identical_only)
{
  const Vma base = { .prot = PROT_R | PROT_W };
  Vma v[13];
  for (unsigned i = 0; i < 13; i++) {
    v[i] = base;
    v[i].start = 0x10000 + i * PG;
    v[i].end = v[i].start + PG;
  }
  v[3].prot = PROT_R;
  v[5].thp = VMA_THP_HUGEPAGE;
  v[7].flags = MAP_F_STACK;
  v[9].policy = MPOL_INTERLEAVE;
  v[11].policy_nodes = 0x2;
  for (unsigned i = 0; i < 13; i++)
    mm_insert_vma(mm, &v[i]);
  /* And a plain one that does not touch: the gap keeps it apart. */
  Vma far = base;
  far.start = 0x20000;
  far.end = 0x21000;
  mm_insert_vma(mm, &far);

  g_autofree char *before = draw_vmas(mm);
  mm_merge_vmas(mm);
  Vma want[12];
  want[0] = vma(0x10000, 0x13000, PROT_R | PROT_W);
  for (unsigned i = 3; i < 13; i++)
    want[i - 2] = v[i];
  want[11] = far;
  assert_vmas(before, want, 12);

  /* Making page 3 plain again lets pages 0..4 merge, as mprotect does:
   * split, change, merge. */
  guint n;
  guint first = mm_split_range(mm, 0x13000, 0x14000, &n);
  ck_assert_uint_eq(first, 1);
  ck_assert_uint_eq(n, 1);
  ((Vma *)mm_vma(mm, first))->prot = PROT_R | PROT_W;
  g_autofree char *before2 = draw_vmas(mm);
  mm_merge_vmas(mm);
  Vma want2[10];
  want2[0] = vma(0x10000, 0x15000, PROT_R | PROT_W);
  memcpy(want2 + 1, want + 3, 9 * sizeof(Vma));
  assert_vmas(before2, want2, 10);
  /* Merging a merged list is a no-op. */
  mm_merge_vmas(mm);
  assert_vmas(before2, want2, 10);
}
END_TEST

/* ---- random sequence against a per-page model ---------------------------------------- */

#define MODEL_BASE 0x100000ULL
#define MODEL_PAGES 96

/* A page's attributes packed in one byte: 0 = unmapped, else 0x80 | prot |
 * thp << 3 | stack << 5. */
static uint8_t model[MODEL_PAGES];

static uint8_t attr_of(const Vma *v)
{
  return (uint8_t)(0x80 | v->prot | v->thp << 3 | (v->flags & MAP_F_STACK ? 1 : 0) << 5);
}

static uint64_t page_va(unsigned p)
{
  return MODEL_BASE + p * PG;
}

static void check_against_model(const char *step, gboolean merged)
{
  assert_well_formed(step);
  g_autofree char *all = draw_vmas(mm);
  for (unsigned p = 0; p < MODEL_PAGES; p++) {
    const Vma *v = mm_find_vma(mm, page_va(p) + (p * 0x123) % PG);
    uint8_t got = v ? attr_of(v) : 0;
    ck_assert_msg(got == model[p], "after %s: page %u (%#" G_GINT64_MODIFIER "x) is %#x, model says %#x\n%s", step, p,
                  page_va(p), got, model[p], all);
  }
  ck_assert_ptr_null(mm_find_vma(mm, MODEL_BASE - 1));
  ck_assert_ptr_null(mm_find_vma(mm, page_va(MODEL_PAGES)));
  if (merged) {
    /* After a merge the VMAs are exactly the runs of equal mapped pages. */
    guint runs = 0;
    for (unsigned p = 0; p < MODEL_PAGES; p++)
      runs += model[p] && (p == 0 || model[p - 1] != model[p]);
    ck_assert_msg(mm_vma_count(mm) == runs, "after %s: %u vmas for %u runs\n%s", step, mm_vma_count(mm), runs, all);
  }
}

START_TEST(test_random_against_model)
{
  memset(model, 0, sizeof model);
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (unsigned step = 0; step < 1500; step++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    unsigned a = (unsigned)(x % MODEL_PAGES), len = 1 + (unsigned)((x >> 8) % 16);
    unsigned b = MIN(a + len, MODEL_PAGES);
    uint8_t prot = (uint8_t)(1 + (x >> 16) % 7), thp = (uint8_t)((x >> 20) % 3);
    gboolean stack = (x >> 24) % 4 == 0;
    const char *what;
    switch ((x >> 28) % 5) {
    case 0:
    case 1: { /* mmap MAP_FIXED */
      Vma v = { .start = page_va(a), .end = page_va(b), .prot = prot, .thp = thp, .flags = stack ? MAP_F_STACK : 0 };
      mm_remove_range(mm, v.start, v.end);
      mm_insert_vma(mm, &v);
      memset(model + a, attr_of(&v), b - a);
      what = "mmap";
      break;
    }
    case 2: /* munmap */
      mm_remove_range(mm, page_va(a), page_va(b));
      memset(model + a, 0, b - a);
      what = "munmap";
      break;
    case 3: { /* mprotect */
      guint n;
      guint first = mm_split_range(mm, page_va(a), page_va(b), &n);
      for (guint i = first; i < first + n; i++) {
        Vma *v = (Vma *)mm_vma(mm, i);
        ck_assert_uint_ge(v->start, page_va(a));
        ck_assert_uint_le(v->end, page_va(b));
        v->prot = prot;
      }
      for (unsigned p = a; p < b; p++)
        if (model[p])
          model[p] = (uint8_t)((model[p] & ~7u) | prot);
      what = "mprotect";
      break;
    }
    default: { /* madvise(MADV_HUGEPAGE / NOHUGEPAGE / back to default) */
      guint n;
      guint first = mm_split_range(mm, page_va(a), page_va(b), &n);
      guint mapped = 0;
      for (guint i = first; i < first + n; i++) {
        Vma *v = (Vma *)mm_vma(mm, i);
        v->thp = thp;
        mapped += (guint)((v->end - v->start) / PG);
      }
      guint want = 0;
      for (unsigned p = a; p < b; p++) {
        if (model[p]) {
          model[p] = (uint8_t)((model[p] & ~(3u << 3)) | thp << 3);
          want++;
        }
      }
      ck_assert_uint_eq(mapped, want);
      what = "madvise";
      break;
    }
    }
    gboolean merge = (x >> 32) % 3 != 0;
    if (merge)
      mm_merge_vmas(mm);
    g_autofree char *label = g_strdup_printf("step %u %s [%u, %u)%s", step, what, a, b, merge ? " + merge" : "");
    check_against_model(label, merge);
  }
}
END_TEST

/* Many mappings cost O(log n) each: 200,000 mmaps of alternating
 * protection, each merged at once as sys_mmap does, make 200,000 VMAs, and
 * the merges look at a bounded number of VMAs per event (their neighbours),
 * not at every VMA (the sorted array's scan looked at n^2 / 2). */
START_TEST(test_merge_looks_at_neighbours_only)
{
  const guint n = 200000;
  for (guint i = 0; i < n; i++) {
    Vma v = { .start = 0x10000000 + i * PG, .end = 0x10000000 + (i + 1) * PG, .prot = i % 2 ? PROT_R : PROT_R | PROT_W };
    mm_insert_vma(mm, &v);
    mm_merge_vmas(mm);
  }
  ck_assert_uint_eq(mm_vma_count(mm), n);
  ck_assert_msg(mm->vma_steps <= 3 * (uint64_t)n, "%" G_GUINT64_FORMAT " VMAs looked at for %u mmaps",
                mm->vma_steps, n);
  /* An mprotect in the middle that makes three VMAs one merges them only. */
  uint64_t before = mm->vma_steps;
  guint k;
  guint first = mm_split_range(mm, 0x10000000 + 1001 * PG, 0x10000000 + 1002 * PG, &k);
  ck_assert_uint_eq(k, 1);
  mm_vma_mut(mm, first)->prot = PROT_R | PROT_W;
  mm_merge_vmas(mm);
  ck_assert_uint_eq(mm_vma_count(mm), n - 2);
  ck_assert_uint_le(mm->vma_steps - before, 4);
  const Vma *v = mm_find_vma(mm, 0x10000000 + 1001 * PG);
  ck_assert_uint_eq(v->start, 0x10000000 + 1000 * PG);
  ck_assert_uint_eq(v->end, 0x10000000 + 1003 * PG);
  ck_assert_uint_eq(mm_vma_index_from(mm, v->start), 1000);
  ck_assert_ptr_eq(mm_vma(mm, 1000), v);
  /* Removing it leaves its neighbours as they were. */
  mm_remove_range(mm, v->start, v->end);
  mm_merge_vmas(mm);
  ck_assert_uint_eq(mm_vma_count(mm), n - 3);
  ck_assert_ptr_null(mm_find_vma(mm, 0x10000000 + 1001 * PG));
  ck_assert_uint_eq(mm_vma(mm, 1000)->start, 0x10000000 + 1003 * PG);
}
END_TEST

static Suite *mm_suite(void)
{
  Suite *s = suite_create("mm");
  TCase *tc = tcase_create("lifecycle");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_new_free);
  tcase_add_test(tc, test_new_fails_without_root);
  suite_add_tcase(s, tc);

  tc = tcase_create("vmas");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_find_vma);
  tcase_add_test(tc, test_find_cache_after_changes);
  tcase_add_test(tc, test_split_inside_one);
  tcase_add_test(tc, test_split_across);
  tcase_add_test(tc, test_remove_middle);
  tcase_add_test(tc, test_remove_across);
  tcase_add_test(tc, test_merge_identical_only);
  tcase_add_test(tc, test_random_against_model);
  tcase_add_test(tc, test_merge_looks_at_neighbours_only);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(mm_suite)
