/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_tlb.c - unit tests of one set-associative TLB array (mmu/tlb.h).
 *
 * Each test builds a tiny TLB (one to twelve sets of a few ways), fills it by
 * hand and checks which entries survive.  The expected contents are worked
 * out in the comments; a failing check draws the array before and after the
 * step that went wrong.  Virtual page numbers are chosen so that they read as
 * names: 0xa is "A", 0xb is "B", and so on, and every entry maps pfn
 * 0x100 + vpn so a payload shows which entry it belongs to.
 */
#include "config.h"
#include "testutil.h"

#include "errors.h"
#include "tlb.h"
#include "tlb-private.h"

#include <string.h>

enum { A = 0xa, B = 0xb, C = 0xc, D = 0xd, E = 0xe, F = 0xf };

static uint64_t key0(uint64_t vpn)
{
  return tlb_key(0, 0, vpn);
}

static void put(Tlb *t, uint64_t vpn)
{
  tlb_insert(t, key0(vpn), 0x100 + vpn, 0, 0);
}

static gboolean has(const Tlb *t, uint64_t vpn)
{
  return tlb_peek(t, key0(vpn)) != NULL;
}

/* One line per set: "set 1: [a0 s0 vpn 0xd pfn 0x10d @4] [-] ...", where @
 * is the replacement stamp (last use for LRU, insertion for FIFO). */
static char *draw_tlb(const Tlb *t)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%s: %u sets x %u ways\n", t->name, t->sets, t->ways);
  for (unsigned set = 0; set < t->sets; set++) {
    g_string_append_printf(s, "  set %u:", set);
    for (unsigned w = 0; w < t->ways; w++) {
      unsigned i = set * t->ways + w;
      uint64_t k = t->tags[i];
      if (!(k & TLB_VALID)) {
        g_string_append(s, " [-]");
        continue;
      }
      g_string_append_printf(s, " [a%u s%u vpn %#" G_GINT64_MODIFIER "x pfn %#" G_GINT64_MODIFIER "x @%" G_GUINT64_FORMAT "]",
                             (unsigned)((k >> TLB_ASID_SHIFT) & TLB_ASID_MASK),
                             (unsigned)((k >> TLB_SIZE_SHIFT) & 7), (uint64_t)(k & TLB_VPN_MASK), t->pay[i].pfn,
                             t->stamp[i]);
    }
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}

/* Check that exactly the listed vpns (asid 0, size 0) are present. */
static void assert_holds(const Tlb *t, const char *before, const uint64_t *vpns, unsigned n)
{
  g_autofree char *after = draw_tlb(t);
  ck_assert_msg(tlb_valid_entries(t) == n, "expected %u valid entries, found %u\nbefore:\n%safter:\n%s", n,
                tlb_valid_entries(t), before, after);
  for (unsigned i = 0; i < n; i++)
    ck_assert_msg(has(t, vpns[i]), "vpn %#" G_GINT64_MODIFIER "x missing\nbefore:\n%safter:\n%s", vpns[i], before,
                  after);
}

/* Insert vpn and check that exactly `want` is left, drawing before and after. */
static void put_expect(Tlb *t, uint64_t vpn, const uint64_t *want, unsigned n)
{
  g_autofree char *before = draw_tlb(t);
  put(t, vpn);
  assert_holds(t, before, want, n);
}

static Tlb *make(unsigned entries, unsigned ways, const TlbReplPolicy *repl)
{
  GError *err = NULL;
  Tlb *t = tlb_new("test.tlb", entries, ways, repl, &err);
  ck_assert_no_error(err);
  ck_assert_ptr_nonnull(t);
  return t;
}

/* ---- keys and sets ---------------------------------------------------------- */

START_TEST(test_key_layout)
{
  /* valid 1<<63 = 0x8000000000000000
   * asid 0x1234 << 48 = 0x1234000000000000
   * size 2 << 45     = 0x0000400000000000
   * vpn              = 0x0000000001abcdef
   * sum              = 0x9234400001abcdef */
  ck_assert_uint_eq(tlb_key(0x1234, 2, 0x1abcdef), 0x9234400001abcdefULL);
  /* Even the all-zero key carries the valid bit, so an empty way (tag 0)
   * never matches a lookup. */
  ck_assert_uint_eq(tlb_key(0, 0, 0), TLB_VALID);
  /* The VPN keeps 45 bits: bit 45 of the VPN would land on the size code. */
  ck_assert_uint_eq(tlb_key(0, 0, (1ULL << 45) | 5), TLB_VALID | 5);
  /* The ASID keeps 15 bits: 0x8001 wraps to 1, as bit 63 is the valid bit. */
  ck_assert_uint_eq(tlb_key(0x8001, 0, 7), tlb_key(1, 0, 7));
  /* Each field decodes back out. */
  uint64_t k = tlb_key(0x7fff, 1, TLB_VPN_MASK);
  ck_assert_uint_eq(k & TLB_VPN_MASK, TLB_VPN_MASK);
  ck_assert_uint_eq((k >> TLB_SIZE_SHIFT) & 7, 1);
  ck_assert_uint_eq((k >> TLB_ASID_SHIFT) & TLB_ASID_MASK, 0x7fff);
  ck_assert(k & TLB_VALID);
  /* A 57-bit VA with 4K pages has a 45-bit VPN: the largest one fits. */
  uint64_t top_vpn = ((1ULL << 57) - 1) >> 12;
  ck_assert_uint_eq(tlb_key(0, 0, top_vpn) & TLB_VPN_MASK, top_vpn);
}
END_TEST

START_TEST(test_set_index_power_of_two)
{
  g_autoptr(Tlb) t = make(16, 4, &tlb_repl_lru); /* 4 sets */
  ck_assert_uint_eq(t->sets, 4);
  ck_assert_uint_eq(t->set_mask, 3);
  ck_assert(t->sets_pow2);
  ck_assert_uint_eq(tlb_entries(t), 16);
  ck_assert_uint_eq(tlb_set_of(t, key0(0x13)), 3); /* 0b10011 & 3 */
  ck_assert_uint_eq(tlb_set_of(t, key0(0x14)), 0);
  /* ASID and size code do not take part in the index. */
  ck_assert_uint_eq(tlb_set_of(t, tlb_key(0x55, 2, 0x13)), 3);
}
END_TEST

/* A probe for a page size never inserted since the last full flush misses
 * without a search; inserting that size makes it searchable again. */
START_TEST(test_size_mask_shortcut)
{
  g_autoptr(Tlb) t = make(16, 4, &tlb_repl_lru);
  ck_assert_uint_eq(t->size_mask, 0);
  tlb_insert(t, tlb_key(1, 0, 0x10), 0x99, TLBF_W, 0);
  ck_assert_uint_eq(t->size_mask, 1u << 0);
  ck_assert_ptr_nonnull(tlb_lookup(t, tlb_key(1, 0, 0x10)));
  ck_assert_ptr_null(tlb_lookup(t, tlb_key(1, 1, 0x10)));
  tlb_insert(t, tlb_key(1, 1, 0x10), 0x200, TLBF_W, 1);
  ck_assert_uint_eq(t->size_mask, 3u);
  ck_assert_uint_eq(tlb_lookup(t, tlb_key(1, 1, 0x10))->pfn, 0x200);
  /* Invalidation keeps the bit (a probe then searches and misses). */
  ck_assert(tlb_invalidate(t, tlb_key(1, 1, 0x10)));
  ck_assert_uint_eq(t->size_mask, 3u);
  ck_assert_ptr_null(tlb_lookup(t, tlb_key(1, 1, 0x10)));
  tlb_flush_all(t);
  ck_assert_uint_eq(t->size_mask, 0);
  ck_assert_ptr_null(tlb_lookup(t, tlb_key(1, 0, 0x10)));
}
END_TEST

/* One set: the index is always 0, by mask. */
START_TEST(test_set_index_one_set)
{
  g_autoptr(Tlb) t = make(4, 4, &tlb_repl_lru);
  ck_assert_uint_eq(t->sets, 1);
  ck_assert(t->sets_pow2);
  ck_assert_uint_eq(tlb_set_of(t, key0(0x12345)), 0);
}
END_TEST

START_TEST(test_set_index_twelve_sets)
{
  g_autoptr(Tlb) t = make(48, 4, &tlb_repl_lru); /* 12 sets, like a 48-entry 4-way array */
  ck_assert_uint_eq(t->sets, 12);
  ck_assert(!t->sets_pow2);
  ck_assert_uint_eq(tlb_set_of(t, key0(25)), 1);     /* 25 = 2 * 12 + 1 */
  ck_assert_uint_eq(tlb_set_of(t, key0(4096)), 4);   /* 4096 = 341 * 12 + 4 */
  ck_assert_uint_eq(tlb_set_of(t, key0(11)), 11);
  ck_assert_uint_eq(tlb_set_of(t, key0(12)), 0);

  /* vpn 1, 13, 25, 37, 49 all fall into set 1: the fifth evicts within it and
   * leaves the entries of set 2 (vpn 2) and set 0 (vpn 12) alone. */
  put(t, 2);
  put(t, 12);
  g_autofree char *before = draw_tlb(t);
  for (uint64_t v = 1; v <= 49; v += 12)
    put(t, v);
  static const uint64_t want[] = { 2, 12, 13, 25, 37, 49 };
  assert_holds(t, before, want, G_N_ELEMENTS(want));
  ck_assert(!has(t, 1)); /* the LRU of set 1 */
  for (unsigned w = 0; w < 4; w++)
    ck_assert_uint_eq((t->tags[1 * 4 + w] & TLB_VPN_MASK) % 12, 1);
}
END_TEST

START_TEST(test_set_index_is_vpn_mod_sets)
{
  /* Set counts that are powers of two use the mask, the others a modulo;
   * both must agree with vpn % sets. */
  static const unsigned sets[] = { 1, 2, 3, 4, 6, 12, 16, 64, 96 };
  for (unsigned s = 0; s < G_N_ELEMENTS(sets); s++) {
    g_autoptr(Tlb) t = make(sets[s] * 2, 2, &tlb_repl_lru);
    ck_assert_uint_eq(t->sets, sets[s]);
    uint64_t vpn = 0x123456789ULL;
    for (unsigned i = 0; i < 500; i++) {
      vpn = vpn * 6364136223846793005ULL + 1442695040888963407ULL;
      uint64_t v = vpn >> 19;
      ck_assert_msg(tlb_set_of(t, key0(v)) == (v & TLB_VPN_MASK) % sets[s], "sets %u vpn %#" G_GINT64_MODIFIER "x",
                    sets[s], v);
    }
  }
}
END_TEST

/* ---- lookup and replacement ---------------------------------------------------- */

START_TEST(test_hit_and_miss)
{
  g_autoptr(Tlb) t = make(8, 2, &tlb_repl_lru);
  ck_assert_ptr_null(tlb_lookup(t, key0(A)));
  ck_assert_uint_eq(tlb_valid_entries(t), 0);
  tlb_insert(t, key0(A), 0x4242, TLBF_W | TLBF_D, 1);
  TlbPayload *p = tlb_lookup(t, key0(A));
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(p->pfn, 0x4242);
  ck_assert_uint_eq(p->flags, TLBF_W | TLBF_D);
  ck_assert_uint_eq(p->size, 1);
  /* A neighbour in the same set and the same vpn at another size miss. */
  ck_assert_ptr_null(tlb_lookup(t, key0(A + 4)));
  ck_assert_ptr_null(tlb_lookup(t, tlb_key(0, 1, A)));
  ck_assert_uint_eq(tlb_valid_entries(t), 1);
}
END_TEST

/* Run the sequence "insert A B C D, lookup A, insert E, lookup C, insert F"
 * on one set of four ways and check the set after each insertion. */
static void run_abcdef(const TlbReplPolicy *repl, const uint64_t after_e[4], uint64_t gone_e, const uint64_t after_f[4],
                       uint64_t gone_f)
{
  g_autoptr(Tlb) t = make(4, 4, repl);
  put(t, A), put(t, B), put(t, C), put(t, D);
  ck_assert_ptr_nonnull(tlb_lookup(t, key0(A)));
  put_expect(t, E, after_e, 4);
  ck_assert(!has(t, gone_e));
  ck_assert_ptr_nonnull(tlb_lookup(t, key0(C)));
  put_expect(t, F, after_f, 4);
  ck_assert(!has(t, gone_f));
}

/* LRU:
 *
 *   step        ways (last use)               evicted
 *   insert ABCD A1 B2 C3 D4
 *   lookup A    A5 B2 C3 D4
 *   insert E    A5 E6 C3 D4                   B (oldest use 2)
 *   lookup C    A5 E6 C7 D4
 *   insert F    A5 E6 C7 F8                   D (oldest use 4)
 */
START_TEST(test_lru_order)
{
  static const uint64_t after_e[] = { A, C, D, E }, after_f[] = { A, C, E, F };
  run_abcdef(&tlb_repl_lru, after_e, B, after_f, D);
}
END_TEST

/* The same sequence under FIFO: lookups do not count, the oldest insertion
 * goes first.
 *
 *   insert ABCD A1 B2 C3 D4
 *   lookup A    (no change)
 *   insert E    E5 B2 C3 D4                   A (inserted first)
 *   lookup C    (no change)
 *   insert F    E5 F6 C3 D4                   B
 */
START_TEST(test_fifo_differs_from_lru)
{
  static const uint64_t after_e[] = { B, C, D, E }, after_f[] = { C, D, E, F };
  run_abcdef(&tlb_repl_fifo, after_e, A, after_f, B);
}
END_TEST

/* Random replacement: two arrays fed the same sequence end up identical, and
 * every eviction stays inside the set of the new entry. */
START_TEST(test_random_deterministic_and_in_set)
{
  g_autoptr(Tlb) t1 = make(8, 2, &tlb_repl_random); /* 4 sets */
  g_autoptr(Tlb) t2 = make(8, 2, &tlb_repl_random);
  /* Fill sets 0, 1 and 3 with vpns that stay put. */
  static const uint64_t fixed[] = { 0x0, 0x4, 0x1, 0x5, 0x3, 0x7 };
  for (unsigned i = 0; i < G_N_ELEMENTS(fixed); i++)
    put(t1, fixed[i]), put(t2, fixed[i]);
  g_autofree char *before = draw_tlb(t1);
  gboolean evicted_way[2] = { FALSE, FALSE };
  for (uint64_t v = 2; v < 2 + 4 * 200; v += 4) { /* all in set 2 */
    uint64_t old0 = t1->tags[2 * 2 + 0], old1 = t1->tags[2 * 2 + 1];
    put(t1, v);
    put(t2, v);
    if ((old0 & TLB_VALID) && (old1 & TLB_VALID)) {
      evicted_way[0] |= t1->tags[4] != old0;
      evicted_way[1] |= t1->tags[5] != old1;
    }
    ck_assert(has(t1, v));
  }
  g_autofree char *after = draw_tlb(t1);
  for (unsigned i = 0; i < G_N_ELEMENTS(fixed); i++)
    ck_assert_msg(has(t1, fixed[i]), "vpn %#" G_GINT64_MODIFIER "x of another set was evicted\nbefore:\n%safter:\n%s",
                  fixed[i], before, after);
  ck_assert_uint_eq(tlb_valid_entries(t1), 8);
  ck_assert_msg(memcmp(t1->tags, t2->tags, 8 * sizeof(uint64_t)) == 0,
                "same sequence, different contents\n%s", after);
  /* 200 draws between two ways pick each at least once. */
  ck_assert(evicted_way[0] && evicted_way[1]);
}
END_TEST

/* Inserting a key already present updates it in place: one entry, new
 * payload, and under LRU it counts as a use. */
START_TEST(test_insert_refreshes)
{
  g_autoptr(Tlb) t = make(4, 4, &tlb_repl_lru);
  put(t, A), put(t, B), put(t, C), put(t, D);
  tlb_insert(t, key0(A), 0x999, TLBF_W | TLBF_D, 0);
  ck_assert_uint_eq(tlb_valid_entries(t), 4);
  const TlbPayload *p = tlb_peek(t, key0(A));
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(p->pfn, 0x999);
  ck_assert_uint_eq(p->flags, TLBF_W | TLBF_D);
  unsigned copies = 0;
  for (unsigned w = 0; w < 4; w++)
    copies += t->tags[w] == key0(A);
  ck_assert_uint_eq(copies, 1);
  /* A was refreshed after D, so B is now the least recently used. */
  static const uint64_t want[] = { A, C, D, E };
  put_expect(t, E, want, 4);
}
END_TEST

/* ---- address spaces and invalidation --------------------------------------------- */

START_TEST(test_pcid_isolation)
{
  g_autoptr(Tlb) t = make(16, 4, &tlb_repl_lru);
  tlb_insert(t, tlb_key(1, 0, 0x40), 0x111, 0, 0);
  tlb_insert(t, tlb_key(2, 0, 0x40), 0x222, 0, 0);
  tlb_insert(t, tlb_key(2, 0, 0x41), 0x223, 0, 0);
  tlb_insert(t, tlb_key(1, 1, 0x40), 0x400, 0, 1); /* same vpn number, 2M size code */
  ck_assert_uint_eq(tlb_valid_entries(t), 4);
  ck_assert_uint_eq(tlb_lookup(t, tlb_key(1, 0, 0x40))->pfn, 0x111);
  ck_assert_uint_eq(tlb_lookup(t, tlb_key(2, 0, 0x40))->pfn, 0x222);
  ck_assert_uint_eq(tlb_lookup(t, tlb_key(1, 1, 0x40))->pfn, 0x400);
  ck_assert_ptr_null(tlb_lookup(t, tlb_key(3, 0, 0x40)));

  g_autofree char *before = draw_tlb(t);
  tlb_flush_asid(t, 1);
  g_autofree char *after = draw_tlb(t);
  ck_assert_msg(tlb_valid_entries(t) == 2, "flush of asid 1\nbefore:\n%safter:\n%s", before, after);
  ck_assert_ptr_null(tlb_peek(t, tlb_key(1, 0, 0x40)));
  ck_assert_ptr_null(tlb_peek(t, tlb_key(1, 1, 0x40)));
  ck_assert_uint_eq(tlb_peek(t, tlb_key(2, 0, 0x40))->pfn, 0x222);
  ck_assert_uint_eq(tlb_peek(t, tlb_key(2, 0, 0x41))->pfn, 0x223);
  /* Flushing an ASID with no entries changes nothing. */
  tlb_flush_asid(t, 7);
  ck_assert_uint_eq(tlb_valid_entries(t), 2);
  /* ASID 0 is an ordinary ASID. */
  tlb_insert(t, tlb_key(0, 0, 0x40), 0x5, 0, 0);
  tlb_flush_asid(t, 0);
  ck_assert_uint_eq(tlb_valid_entries(t), 2);
  ck_assert_ptr_null(tlb_peek(t, tlb_key(0, 0, 0x40)));
}
END_TEST

START_TEST(test_invalidate)
{
  g_autoptr(Tlb) t = make(4, 4, &tlb_repl_lru);
  put(t, A), put(t, B), put(t, C), put(t, D);
  ck_assert(tlb_invalidate(t, key0(C)));
  ck_assert(!tlb_invalidate(t, key0(C)));
  ck_assert(!tlb_invalidate(t, key0(F)));
  ck_assert(!tlb_invalidate(t, tlb_key(1, 0, A))); /* A of another ASID */
  /* The freed way takes the next entry: nothing valid is evicted, although
   * A is the least recently used. */
  static const uint64_t want[] = { A, B, D, E };
  put_expect(t, E, want, 4);
}
END_TEST

START_TEST(test_flush_all)
{
  g_autoptr(Tlb) t = make(48, 4, &tlb_repl_fifo);
  for (uint64_t v = 0; v < 48; v++)
    tlb_insert(t, tlb_key((unsigned)v % 3, 0, v), v, 0, 0);
  ck_assert_uint_eq(tlb_valid_entries(t), 48);
  tlb_flush_all(t);
  ck_assert_uint_eq(tlb_valid_entries(t), 0);
  ck_assert_uint_eq(tlb_entries(t), 48);
  for (uint64_t v = 0; v < 48; v++)
    ck_assert_ptr_null(tlb_lookup(t, tlb_key((unsigned)v % 3, 0, v)));
  /* Still usable afterwards. */
  put(t, A);
  ck_assert(has(t, A));
}
END_TEST

/* A peek is not a use: after peeking at A, A is still the LRU entry. */
START_TEST(test_peek_keeps_lru)
{
  g_autoptr(Tlb) t = make(4, 4, &tlb_repl_lru);
  put(t, A), put(t, B), put(t, C), put(t, D);
  uint64_t stamp_a = t->stamp[0], tick = t->tick;
  const TlbPayload *p = tlb_peek(t, key0(A));
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(p->pfn, 0x100 + A);
  ck_assert_ptr_null(tlb_peek(t, key0(E)));
  ck_assert_uint_eq(t->stamp[0], stamp_a);
  ck_assert_uint_eq(t->tick, tick);
  static const uint64_t want[] = { B, C, D, E };
  put_expect(t, E, want, 4);
}
END_TEST

/* ---- configuration ------------------------------------------------------------ */

static void assert_bad_geometry(unsigned entries, unsigned ways)
{
  GError *err = NULL;
  Tlb *t = tlb_new("tlb.stlb", entries, ways, &tlb_repl_lru, &err);
  ck_assert_ptr_null(t);
  ck_assert_ptr_nonnull(err);
  ck_assert(g_error_matches(err, MMUSIM_SIM_ERROR, SIM_ERROR_MACHINE));
  ck_assert_msg(strstr(err->message, "tlb.stlb") != NULL, "message does not name the TLB: %s", err->message);
  g_autofree char *num = g_strdup_printf("%u entries", entries);
  ck_assert_msg(strstr(err->message, num) != NULL, "message does not give the size: %s", err->message);
  g_error_free(err);
  /* Callers that pass no GError get NULL all the same. */
  ck_assert_ptr_null(tlb_new("tlb.stlb", entries, ways, &tlb_repl_lru, NULL));
}

START_TEST(test_bad_geometry)
{
  assert_bad_geometry(10, 4); /* not a multiple of the ways */
  assert_bad_geometry(0, 4);
  assert_bad_geometry(16, 0); /* no division by zero */
  assert_bad_geometry(0, 0);
  assert_bad_geometry(4, 8);  /* fewer entries than ways */
}
END_TEST

START_TEST(test_fully_associative)
{
  /* One set: every vpn shares it, whatever its low bits. */
  g_autoptr(Tlb) t = make(8, 8, &tlb_repl_lru);
  ck_assert_uint_eq(t->sets, 1);
  for (uint64_t v = 0; v < 8; v++)
    put(t, v * 1000 + 3);
  ck_assert_uint_eq(tlb_valid_entries(t), 8);
  for (uint64_t v = 0; v < 8; v++)
    ck_assert(has(t, v * 1000 + 3));
}
END_TEST

START_TEST(test_repl_lookup)
{
  ck_assert_ptr_eq(tlb_repl_lookup("lru"), &tlb_repl_lru);
  ck_assert_ptr_eq(tlb_repl_lookup("fifo"), &tlb_repl_fifo);
  ck_assert_ptr_eq(tlb_repl_lookup("random"), &tlb_repl_random);
  ck_assert_ptr_eq(tlb_repl_lookup("plru"), &tlb_repl_plru);
  /* Exact names, as every registry: tlb.replacement takes any case and
   * hands on the canonical name (test_repl_from_settings). */
  ck_assert_ptr_null(tlb_repl_lookup("LRU"));
  ck_assert_ptr_null(tlb_repl_lookup("Random"));
  ck_assert_ptr_null(tlb_repl_lookup("lru "));
  ck_assert_ptr_null(tlb_repl_lookup(""));
  ck_assert_ptr_null(tlb_repl_lookup("mru"));
  ck_assert_ptr_null(tlb_repl_lookup("tree-plru"));
}
END_TEST

/* The registry and tlb.replacement's choices name the same policies in the
 * same order; every row has a help line and a source, the built-ins no
 * hooks and the others the three they cannot do without. */
START_TEST(test_repl_registry_matches_setting)
{
  unsigned n;
  const TlbReplPolicy *const *rows = tlb_repl_policies(&n);
  g_auto(GStrv) choices = g_strsplit(settings_def(SET_TLB_REPLACEMENT)->choices, "|", -1);
  ck_assert_uint_eq(g_strv_length(choices), n);
  for (unsigned i = 0; i < n; i++) {
    ck_assert_str_eq(rows[i]->name, choices[i]);
    ck_assert_ptr_eq(tlb_repl_lookup(choices[i]), rows[i]);
    ck_assert(rows[i]->help && *rows[i]->help && rows[i]->source && *rows[i]->source);
    if (rows[i]->builtin != TLB_BUILTIN_NONE)
      ck_assert(!rows[i]->hit && !rows[i]->fill && !rows[i]->victim && !rows[i]->state_new);
    else
      ck_assert(rows[i]->hit && rows[i]->fill && rows[i]->victim);
  }
  ck_assert_str_eq(settings_def(SET_TLB_REPLACEMENT)->def, "lru");
}
END_TEST

/* tlb_repl_from_settings: the setting's value, whatever its case. */
START_TEST(test_repl_from_settings)
{
  g_autoptr(Settings) s = settings_new();
  g_autoptr(GError) err = NULL;
  ck_assert_ptr_eq(tlb_repl_from_settings(s, &err), &tlb_repl_lru);
  ck_assert(settings_set(s, "tlb.replacement", "PLRU", "-s", &err));
  ck_assert_ptr_eq(tlb_repl_from_settings(s, &err), &tlb_repl_plru);
  ck_assert_no_error(err);
}
END_TEST

/* A policy of hooks without its hit, fill or victim hook is an error naming
 * the array and the policy, not a crash at the first refill. */
static unsigned no_victim_stub(Tlb *t, unsigned set)
{
  (void)t;
  (void)set;
  return 0;
}

START_TEST(test_repl_missing_hook)
{
  const TlbReplPolicy half = { .name = "half", .builtin = TLB_BUILTIN_NONE, .victim = no_victim_stub };
  g_autoptr(GError) err = NULL;
  ck_assert_ptr_null(tlb_new("tlb.stlb", 64, 4, &half, &err));
  ck_assert_ptr_nonnull(err);
  ck_assert_str_eq(err->message, "tlb.stlb: TLB replacement policy 'half' lacks a hook: a policy of hooks needs "
                                 "hit, fill and victim (mmu/tlb.h, struct TlbReplPolicy)");
}
END_TEST

START_TEST(test_free_null)
{
  tlb_free(NULL);
}
END_TEST

/* tlb_probe's refill shortcut against the plain refill: two arrays get the
 * same stream of probes, refills, invalidations and flushes, one through
 * tlb_lookup (tlb_insert then searches the set itself), the other through
 * tlb_probe (tlb_insert takes the way the probe found while it holds; a
 * key of size code 0 goes through tlb_insert_base, which must leave the
 * same entries, stamps, tick and size mask).
 * Between a probe and its refill the stream sometimes probes or refills
 * another key, or invalidates, so stale hints must be refused.  After every
 * step both arrays hold the same entries in the same ways with the same
 * stamps, for each policy and a set count that is not a power of two. */
static void check_probe_refill(const TlbReplPolicy *repl, unsigned entries, unsigned ways)
{
  g_autoptr(Tlb) plain = tlb_new("plain", entries, ways, repl, NULL);
  g_autoptr(Tlb) hinted = tlb_new("hinted", entries, ways, repl, NULL);
  uint64_t seed = 12345;
  for (int step = 0; step < 5000; step++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    unsigned r = (unsigned)(seed >> 33);
    uint64_t key = tlb_key(r & 1, (r >> 1) & 1, (r >> 2) % 48);
    uint64_t other = tlb_key(0, 0, (r >> 9) % 48);
    unsigned what = (r >> 16) % 100;
    if (what < 80) {
      gboolean hit1 = tlb_lookup(plain, key) != NULL;
      gboolean hit2 = tlb_probe(hinted, key) != NULL;
      loop_assert_int_eq(hit1, hit2);
      if (!hit1) {
        if (what < 10) { /* something in between */
          tlb_lookup(plain, other);
          tlb_probe(hinted, other);
        } else if (what < 15) {
          tlb_insert(plain, other, 0x200, 0, 0);
          tlb_insert(hinted, other, 0x200, 0, 0);
        } else if (what < 18) {
          tlb_invalidate(plain, other);
          tlb_invalidate(hinted, other);
        }
        tlb_insert(plain, key, 0x100 + step, 0, (uint8_t)((r >> 1) & 1));
        if ((r >> 1) & 1)
          tlb_insert(hinted, key, 0x100 + step, 0, 1);
        else /* the base size's refill, which knows its size code */
          tlb_insert_base(hinted, key, 0x100 + step, 0);
      }
    } else if (what < 90) {
      tlb_insert(plain, key, 0x300, 0, 0); /* a refill that was not probed */
      if ((r >> 1) & 1)
        tlb_insert(hinted, key, 0x300, 0, 0);
      else
        tlb_insert_base(hinted, key, 0x300, 0);
    } else if (what < 97) {
      tlb_invalidate(plain, key);
      tlb_invalidate(hinted, key);
    } else if (what < 99) {
      tlb_flush_asid(plain, r & 1);
      tlb_flush_asid(hinted, r & 1);
    } else {
      tlb_flush_all(plain);
      tlb_flush_all(hinted);
    }
    unsigned n = entries;
    if (memcmp(plain->tags, hinted->tags, n * sizeof *plain->tags) ||
        memcmp(plain->stamp, hinted->stamp, n * sizeof *plain->stamp) || plain->rng != hinted->rng ||
        plain->size_mask != hinted->size_mask || plain->tick != hinted->tick) {
      g_autofree char *a = draw_tlb(plain);
      g_autofree char *b = draw_tlb(hinted);
      ck_abort_msg("policy %s, step %d: the arrays differ\nplain refill:\n%sprobe's refill:\n%s", repl->name, step, a,
                   b);
    }
    for (unsigned i = 0; i < n; i++)
      if (plain->tags[i] & TLB_VALID) {
        loop_assert_uint_eq(plain->pay[i].pfn, hinted->pay[i].pfn);
        loop_assert_uint_eq(plain->pay[i].size, hinted->pay[i].size);
      }
  }
}

START_TEST(test_probe_refill_matches_plain_refill)
{
  check_probe_refill(&tlb_repl_lru, 16, 4);
  check_probe_refill(&tlb_repl_fifo, 16, 4);
  check_probe_refill(&tlb_repl_random, 16, 4);
  check_probe_refill(&tlb_repl_lru, 12, 4); /* 3 sets: index by modulo */
  check_probe_refill(&tlb_repl_lru, 12, 12);
  check_probe_refill(&tlb_repl_lru, 40, 20); /* the host index */
  check_probe_refill(&tlb_repl_fifo, 40, 20);
  check_probe_refill(&tlb_repl_random, 40, 20);
  check_probe_refill(&tlb_repl_plru, 16, 4); /* no hints: both take the search */
  check_probe_refill(&tlb_repl_plru, 36, 12);
  check_probe_refill(&tlb_repl_plru, 40, 20);
}
END_TEST

/* ---- tree pseudo-LRU (mmu/tlb_plru.c) --------------------------------------- */

/* Fill a one-set array of `ways` ways with the vpns 0x10 + w (way w, as a
 * set fills its invalid ways lowest first), hit the ways listed in `hits`,
 * then insert new vpns 0x100, 0x101, ... and check that the n-th takes way
 * want[n] (that way's entry is evicted and the others stay). */
static void plru_run(unsigned ways, const unsigned *hits, unsigned n_hits, const unsigned *want, unsigned n_want)
{
  g_autoptr(Tlb) t = make(ways, ways, &tlb_repl_plru);
  for (unsigned w = 0; w < ways; w++)
    put(t, 0x10 + w);
  for (unsigned w = 0; w < ways; w++)
    ck_assert_uint_eq(t->tags[w], key0(0x10 + w));
  for (unsigned i = 0; i < n_hits; i++)
    ck_assert_ptr_nonnull(tlb_probe(t, key0(0x10 + hits[i])));
  for (unsigned i = 0; i < n_want; i++) {
    g_autofree char *before = draw_tlb(t);
    uint64_t old[128];
    memcpy(old, t->tags, ways * sizeof *old);
    put(t, 0x100 + i);
    g_autofree char *after = draw_tlb(t);
    for (unsigned w = 0; w < ways; w++) {
      uint64_t expect = w == want[i] ? key0(0x100 + i) : old[w];
      ck_assert_msg(t->tags[w] == expect, "insert %u of %u ways: way %u should hold %#" G_GINT64_MODIFIER
                    "x\nbefore:\n%safter:\n%s", i, ways, w, expect, before, after);
    }
  }
}

/* 4 ways: bits 1 (root: ways 0-1 | 2-3), 2 (0 | 1), 3 (2 | 3); 1 points to
 * the higher half.  Filling ways 0..3 in turn leaves every bit 0 (each
 * node's last touch came from its higher half).
 *
 *   hit 0            1=1 2=1 3=0
 *   hit 1            1=1 2=0 3=0
 *   insert: victim   root 1 -> node 3: 0 -> way 2; fill 2: 3=1 1=0
 *   insert: victim   root 0 -> node 2: 0 -> way 0; fill 0: 2=1 1=1
 *   insert: victim   root 1 -> node 3: 1 -> way 3; fill 3: 3=0 1=0
 *   insert: victim   root 0 -> node 2: 1 -> way 1
 *
 * True LRU would evict ways 2, 3, 0, 1. */
START_TEST(test_plru_4way)
{
  static const unsigned hits[] = { 0, 1 }, want[] = { 2, 0, 3, 1 };
  plru_run(4, hits, G_N_ELEMENTS(hits), want, G_N_ELEMENTS(want));
}
END_TEST

/* 8 ways: nodes 1 (0-3 | 4-7), 2 (0-1 | 2-3), 3 (4-5 | 6-7), 4..7 the
 * pairs (0|1) (2|3) (4|5) (6|7).  After the fills every bit is 0.
 *
 *   hit 0            4=1 2=1 1=1
 *   hit 3            5=0 2=0 1=1
 *   hit 5            6=0 3=1 1=0      now 1=0 2=0 3=1 4=1 5=0 6=0 7=0
 *   insert: 1=0 -> 2: 0 -> 4: 1 -> way 1; fill 1: 4=0 2=1 1=1
 *   insert: 1=1 -> 3: 1 -> 7: 0 -> way 6; fill 6: 7=1 3=0 1=0
 *   insert: 1=0 -> 2: 1 -> 5: 0 -> way 2; fill 2: 5=1 2=0 1=1
 *   insert: 1=1 -> 3: 0 -> 6: 0 -> way 4; fill 4: 6=1 3=1 1=0
 *   insert: 1=0 -> 2: 0 -> 4: 0 -> way 0
 *
 * True LRU would evict 1, 2, 4, 6, 7: the tree evicts way 0, hit three
 * uses ago, before way 7, never hit. */
START_TEST(test_plru_8way)
{
  static const unsigned hits[] = { 0, 3, 5 }, want[] = { 1, 6, 2, 4, 0 };
  plru_run(8, hits, G_N_ELEMENTS(hits), want, G_N_ELEMENTS(want));
}
END_TEST

/* 3 ways: the tree of 4 with leaf 3 missing, so node 3 (2 | 3) always
 * yields way 2.  The fills leave 1=0 2=0 3=1 (way 2's fill pointed node 3
 * at the missing leaf).
 *
 *   hit 0            2=1 1=1
 *   insert: 1=1 -> 3: 1, but leaf 3 is missing -> way 2; fill 2: 3=1 1=0
 *   insert: 1=0 -> 2: 1 -> way 1; fill 1: 2=0 1=1
 *   insert: 1=1 -> 3 -> way 2; fill 2: 1=0
 *   insert: 1=0 -> 2: 0 -> way 0
 *
 * Way 2, alone in its half, is every other victim. */
START_TEST(test_plru_3way)
{
  static const unsigned hits[] = { 0 }, want[] = { 2, 1, 2, 0 };
  plru_run(3, hits, G_N_ELEMENTS(hits), want, G_N_ELEMENTS(want));
}
END_TEST

/* 12 ways (Skylake's STLB): the tree of 16; the root splits the ways 8
 * (node 2) and 4 (node 3, whose higher half, node 7 over 12-15, holds no
 * way).  After the fills: 3=1 (way 11's fill pointed it at 12-15), every
 * other bit 0.
 *
 *   insert: 1=0 -> 2: 0 -> 4: 0 -> 8: 0 -> way 0;  fill: 8=1 4=1 2=1 1=1
 *   insert: 1=1 -> 3: 1, no way there -> 6: 0 -> 12: 0 -> way 8;
 *           fill: 12=1 6=1 3=1 1=0
 *   insert: 1=0 -> 2: 1 -> 5: 0 -> 10: 0 -> way 4;  fill: 10=1 5=1 2=0 1=1
 *   insert: 1=1 -> 3 -> 6: 1 -> 13: 0 -> way 10;    fill: 13=1 6=0 3=1 1=0
 *   insert: 1=0 -> 2: 0 -> 4: 1 -> 9: 0 -> way 2;   fill: 9=1 4=0 2=1 1=1
 *   insert: 1=1 -> 3 -> 6: 0 -> 12: 1 -> way 9
 *
 * Ways 8-11 take every other eviction. */
START_TEST(test_plru_12way)
{
  static const unsigned want[] = { 0, 8, 4, 10, 2, 9 };
  plru_run(12, NULL, 0, want, G_N_ELEMENTS(want));
}
END_TEST

/* Invalidation leaves the bits; the invalid way is refilled first all the
 * same.  4 ways filled, hits 0 and 1: the tree points at way 2 (see
 * test_plru_4way).  Invalidate way 0's entry: the next insert takes way 0
 * (1=1 2=1 after), the one after it way 2, as the tree said before. */
START_TEST(test_plru_invalidate_then_refill)
{
  g_autoptr(Tlb) t = make(4, 4, &tlb_repl_plru);
  put(t, A), put(t, B), put(t, C), put(t, D);
  ck_assert_ptr_nonnull(tlb_probe(t, key0(A)));
  ck_assert_ptr_nonnull(tlb_probe(t, key0(B)));
  ck_assert(tlb_invalidate(t, key0(A)));
  ck_assert(!tlb_invalidate(t, key0(A)));
  put(t, E);
  ck_assert_uint_eq(t->tags[0], key0(E));
  static const uint64_t after_f[] = { E, B, F, D };
  put_expect(t, F, after_f, 4);
  ck_assert_uint_eq(t->tags[2], key0(F));

  /* Now E B F D, bits 1=0 2=1 3=1.  A key of ASID 1 takes the tree's
   * victim: root 0 -> node 2: 1 -> way 1 (B); fill 1: 2=0 1=1.  Flushing
   * ASID 1 empties way 1, which the next insert takes though the tree
   * points at way 3. */
  tlb_insert(t, tlb_key(1, 0, 0x40), 0x140, 0, 0);
  ck_assert_uint_eq(t->tags[1], tlb_key(1, 0, 0x40));
  tlb_flush_asid(t, 1);
  ck_assert_uint_eq(tlb_valid_entries(t), 3);
  put(t, 0x50);
  ck_assert_uint_eq(t->tags[1], key0(0x50));
  put(t, 0x51); /* fill 1 left 1=1 -> node 3: 1 -> way 3 */
  ck_assert_uint_eq(t->tags[3], key0(0x51));

  /* A full flush: the array is as new, so the sequence of test_plru_4way
   * evicts the same ways. */
  tlb_flush_all(t);
  ck_assert_uint_eq(tlb_valid_entries(t), 0);
  put(t, A), put(t, B), put(t, C), put(t, D);
  ck_assert_ptr_nonnull(tlb_probe(t, key0(A)));
  ck_assert_ptr_nonnull(tlb_probe(t, key0(B)));
  put(t, E);
  ck_assert_uint_eq(t->tags[2], key0(E));
  put(t, F);
  ck_assert_uint_eq(t->tags[0], key0(F));
}
END_TEST

/* plru on the geometries of the presets: 64 and 72 ways with the host
 * index, 24 and 7 ways without; every victim a real way, and every way a
 * victim in turn under a stream of new keys (the tree visits them all). */
START_TEST(test_plru_every_way_reached)
{
  static const unsigned ways[] = { 7, 12, 24, 64, 72 };
  for (unsigned i = 0; i < G_N_ELEMENTS(ways); i++) {
    unsigned n = ways[i];
    g_autoptr(Tlb) t = make(n, n, &tlb_repl_plru);
    ck_assert(n <= TLB_INDEX_MIN_WAYS || t->ix.head);
    for (unsigned w = 0; w < n; w++)
      put(t, 0x1000 + w);
    gboolean seen[128] = { FALSE };
    for (unsigned k = 0; k < 4 * n; k++) {
      uint64_t old[128];
      memcpy(old, t->tags, n * sizeof *old);
      put(t, 0x2000 + k);
      unsigned changed = 0;
      for (unsigned w = 0; w < n; w++)
        if (t->tags[w] != old[w])
          seen[w] = TRUE, changed++;
      ck_assert_uint_eq(changed, 1);
      ck_assert_uint_eq(tlb_valid_entries(t), n);
    }
    for (unsigned w = 0; w < n; w++)
      ck_assert_msg(seen[w], "%u ways: way %u never evicted", n, w);
  }
}
END_TEST

/* ---- the unrolled passes and the packed stamps against a plain model -------- */

/* The replacement rules written out the plain way, as a reference: one
 * tick per use (LRU) or insertion, 0 for an invalid way; a refill takes the
 * key's own way, else the first invalid way, else (random) a draw of the
 * same xorshift64, else (plru) the way the tree points to, else the first
 * way with the lowest tick. */
typedef struct {
  unsigned sets, ways;
  const TlbReplPolicy *repl;
  uint64_t tag[64 * 24], tick[64 * 24], pfn[64 * 24];
  uint64_t now, rng;
  /* plru: the tree of each set, one byte per node; the node at depth d
   * (the root 0) above way w is (1 << d) + (w >> (depth - d)), and its
   * byte is 1 when the victim lies on the side of the higher ways. */
  unsigned depth; /* the tree's levels: ways <= 1 << depth */
  uint8_t node[16][128];
} RefTlb;

/* Every policy the model knows, for the tests that run each. */
static const TlbReplPolicy *const all_policies[] = { &tlb_repl_lru, &tlb_repl_fifo, &tlb_repl_random,
                                                      &tlb_repl_plru };

static void ref_plru_touch(RefTlb *r, unsigned set, unsigned way)
{
  for (unsigned d = 0; d < r->depth; d++) {
    unsigned side = (way >> (r->depth - 1 - d)) & 1; /* 1: the way is in the higher half */
    r->node[set][(1u << d) + (way >> (r->depth - d))] = (uint8_t)!side;
  }
}

static unsigned ref_plru_victim(const RefTlb *r, unsigned set)
{
  unsigned v = 0; /* the path so far, as the high bits of the way */
  for (unsigned d = 0; d < r->depth; d++) {
    unsigned side = r->node[set][(1u << d) + v];
    if ((((v << 1) | side) << (r->depth - 1 - d)) >= r->ways)
      side = 0; /* that half holds no way */
    v = (v << 1) | side;
  }
  return v;
}

static void ref_init(RefTlb *r, unsigned entries, unsigned ways, const TlbReplPolicy *repl)
{
  memset(r, 0, sizeof *r);
  r->sets = entries / ways;
  r->ways = ways;
  r->repl = repl;
  r->rng = 0x9e3779b97f4a7c15ULL;
  while ((1u << r->depth) < ways)
    r->depth++;
  ck_assert_uint_le(r->sets, G_N_ELEMENTS(r->node));
  ck_assert_uint_le(1u << r->depth, G_N_ELEMENTS(r->node[0]));
}

static unsigned ref_base(const RefTlb *r, uint64_t key)
{
  return (unsigned)((key & TLB_VPN_MASK) % r->sets) * r->ways;
}

static gboolean ref_holds(const RefTlb *r, uint64_t key)
{
  unsigned b = ref_base(r, key);
  for (unsigned w = 0; w < r->ways; w++)
    if (r->tag[b + w] == key)
      return TRUE;
  return FALSE;
}

static int ref_probe(RefTlb *r, uint64_t key)
{
  unsigned b = ref_base(r, key);
  for (unsigned w = 0; w < r->ways; w++)
    if (r->tag[b + w] == key) {
      if (r->repl == &tlb_repl_lru)
        r->tick[b + w] = ++r->now;
      if (r->repl == &tlb_repl_plru)
        ref_plru_touch(r, b / r->ways, w);
      return (int)(b + w);
    }
  return -1;
}

static void ref_insert(RefTlb *r, uint64_t key, uint64_t pfn)
{
  unsigned b = ref_base(r, key), way = r->ways;
  for (unsigned w = 0; w < r->ways && way == r->ways; w++)
    if (r->tag[b + w] == key)
      way = w;
  for (unsigned w = 0; w < r->ways && way == r->ways; w++)
    if (!r->tag[b + w])
      way = w;
  if (way == r->ways && r->repl == &tlb_repl_random) {
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    way = (unsigned)(r->rng % r->ways);
  } else if (way == r->ways && r->repl == &tlb_repl_plru) {
    way = ref_plru_victim(r, b / r->ways);
  } else if (way == r->ways) {
    way = 0;
    for (unsigned w = 1; w < r->ways; w++)
      if (r->tick[b + w] < r->tick[b + way])
        way = w;
  }
  r->tag[b + way] = key;
  r->tick[b + way] = ++r->now;
  r->pfn[b + way] = pfn;
  if (r->repl == &tlb_repl_plru)
    ref_plru_touch(r, b / r->ways, way);
}

static void ref_invalidate(RefTlb *r, uint64_t key)
{
  unsigned b = ref_base(r, key);
  for (unsigned w = 0; w < r->ways; w++)
    if (r->tag[b + w] == key)
      r->tag[b + w] = r->tick[b + w] = 0;
}

static void ref_flush_asid(RefTlb *r, unsigned asid)
{
  for (unsigned i = 0; i < r->sets * r->ways; i++)
    if (r->tag[i] && ((r->tag[i] >> TLB_ASID_SHIFT) & TLB_ASID_MASK) == asid)
      r->tag[i] = r->tick[i] = 0;
}

/* Same entries in the same ways, and the same order of ticks within each
 * set (with `exact`, the same ticks: no renumbering happened).  NULL if so,
 * else what differs.  Plain tests, one check per step: the checks of Check
 * cost a system call each. */
static char *ref_differs(const RefTlb *r, const Tlb *t, gboolean exact)
{
  for (unsigned i = 0; i < r->sets * r->ways; i++) {
    unsigned b = i - i % r->ways;
    uint64_t tick = t->stamp[i] >> t->way_bits;
    if (t->tags[i] != r->tag[i])
      return g_strdup_printf("slot %u holds %#" G_GINT64_MODIFIER "x, the model %#" G_GINT64_MODIFIER "x", i,
                             t->tags[i], r->tag[i]);
    if ((t->stamp[i] & t->way_mask) != i % r->ways)
      return g_strdup_printf("the stamp of slot %u names way %u", i, (unsigned)(t->stamp[i] & t->way_mask));
    if (!r->tag[i]) {
      if (tick)
        return g_strdup_printf("invalid slot %u has tick %" G_GUINT64_FORMAT, i, tick);
      continue;
    }
    if (t->pay[i].pfn != r->pfn[i])
      return g_strdup_printf("slot %u maps pfn %#" G_GINT64_MODIFIER "x, the model %#" G_GINT64_MODIFIER "x", i,
                             t->pay[i].pfn, r->pfn[i]);
    if (exact && tick != r->tick[i])
      return g_strdup_printf("slot %u has tick %" G_GUINT64_FORMAT ", the model %" G_GUINT64_FORMAT, i, tick,
                             r->tick[i]);
    for (unsigned j = b; j < b + r->ways; j++)
      if (r->tag[j] && (tick < (t->stamp[j] >> t->way_bits)) != (r->tick[i] < r->tick[j]))
        return g_strdup_printf("slots %u and %u are in another order than the model's", i, j);
  }
  if (t->rng != r->rng)
    return g_strdup("the random state differs");
  return NULL;
}

/* A random stream of probes (tlb_probe, tlb_lookup), refills right after a
 * miss or later, invalidations and flushes, through one array and the model.
 * `tick_room`: if nonzero, the array's tick runs out after that many ticks
 * past its entries, so that tlb_renumber runs again and again. */
/* The host index of an array of many ways (struct TlbIndex) against the
 * array itself: every valid entry on the chain of its key's bucket and
 * nothing else on the chains, each set's order list its valid ways in
 * ascending stamps.  NULL when it agrees, else what differs. */
static char *index_differs(const Tlb *t)
{
  const struct TlbIndex *x = &t->ix;
  unsigned entries = t->sets * t->ways, chained = 0, valid = 0;
  for (uint64_t b = 0; b < (1ULL << (64 - x->shift)); b++)
    for (uint32_t s = x->head[b]; s; s = x->next[s - 1], chained++) {
      if (s > entries || !(t->tags[s - 1] & TLB_VALID))
        return g_strdup_printf("bucket %" G_GUINT64_FORMAT " chains slot %u, not a valid entry", b, s - 1);
      if ((t->tags[s - 1] * 0x9e3779b97f4a7c15ULL) >> x->shift != b)
        return g_strdup_printf("slot %u is on the chain of bucket %" G_GUINT64_FORMAT ", not its key's", s - 1, b);
      if (chained > entries)
        return g_strdup("a chain loops");
    }
  for (unsigned set = 0; set < t->sets; set++) {
    unsigned base = set * t->ways, n = 0;
    for (unsigned w = 0; w < t->ways; w++)
      n += (t->tags[base + w] & TLB_VALID) != 0;
    valid += n;
    if (x->n_valid[set] != n)
      return g_strdup_printf("set %u: %u valid ways counted, %u held", set, x->n_valid[set], n);
    uint64_t prev = 0;
    unsigned w = x->oldest[set];
    for (unsigned k = 0; k < n; k++, w = x->newer[base + w]) {
      if (!(t->tags[base + w] & TLB_VALID) || t->stamp[base + w] <= prev)
        return g_strdup_printf("set %u: order position %u is way %u, invalid or not after the one before", set, k, w);
      prev = t->stamp[base + w];
      if (k + 1 == n && x->newest[set] != w)
        return g_strdup_printf("set %u: the order ends at way %u, newest says %u", set, w, x->newest[set]);
    }
  }
  if (chained != valid)
    return g_strdup_printf("%u entries on the chains, %u valid", chained, valid);
  return NULL;
}

static void check_against_model(const TlbReplPolicy *repl, unsigned entries, unsigned ways, unsigned tick_room, gboolean at_top,
                                int steps)
{
  g_autofree char *what = g_strdup_printf("policy %s, %u entries, %u ways%s", repl->name, entries, ways,
                                          !tick_room ? "" : at_top ? ", renumbering at the top" : ", renumbering");
  g_autoptr(Tlb) t = tlb_new("t", entries, ways, repl, NULL);
  g_autofree RefTlb *r = g_new(RefTlb, 1);
  ck_assert_uint_le(entries, G_N_ELEMENTS(r->tag));
  ref_init(r, entries, ways, repl);
  if (tick_room && at_top) /* the true limit, tick_room ticks away */
    t->tick = t->tick_last - ((uint64_t)tick_room << t->way_bits);
  else if (tick_room)
    t->tick_last = (uint64_t)(entries + tick_room) << t->way_bits;
  uint64_t seed = 777 + entries * 31 + ways;
  unsigned span = entries * 2 + 3; /* vpns: about half of them fit */
  for (int step = 0; step < steps; step++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    unsigned x = (unsigned)(seed >> 33);
    uint64_t key = tlb_key(x & 1, (x >> 1) & 1, (x >> 2) % span);
    unsigned what_op = (x >> 20) % 100;
    gboolean same = TRUE; /* the probes' answers */
    if (what_op < 70) {
      int want = ref_probe(r, key);
      TlbPayload *p = what_op < 60 ? tlb_probe(t, key) : tlb_lookup(t, key);
      same = p ? want >= 0 && p == &t->pay[want] : want < 0;
      if (!p && what_op < 55) {
        if (what_op < 5) { /* a probe of another key in between: the hint is stale */
          uint64_t other = tlb_key(0, 0, (x >> 9) % span);
          same = (tlb_probe(t, other) != NULL) == (ref_probe(r, other) >= 0);
        }
        tlb_insert(t, key, 0x1000 + step, 0, 0);
        ref_insert(r, key, 0x1000 + step);
      }
    } else if (what_op < 85) {
      tlb_insert(t, key, 0x2000 + step, 0, 0);
      ref_insert(r, key, 0x2000 + step);
    } else if (what_op < 97) {
      same = tlb_invalidate(t, key) == ref_holds(r, key);
      ref_invalidate(r, key);
    } else if (what_op < 99) {
      tlb_flush_asid(t, x & 1);
      ref_flush_asid(r, x & 1);
    } else {
      tlb_flush_all(t);
      ref_flush_asid(r, 0);
      ref_flush_asid(r, 1);
      memset(r->node, 0, sizeof r->node); /* plru: a flushed array is as new */
    }
    g_autofree char *diff = same ? ref_differs(r, t, tick_room == 0) : g_strdup("a probe's answer differs");
    if (!diff && t->ix.head)
      diff = index_differs(t);
    if (diff) {
      g_autofree char *drawn = draw_tlb(t);
      ck_abort_msg("%s, step %d: %s\n%s", what, step, diff, drawn);
    }
  }
}

START_TEST(test_unrolled_ways_match_model)
{
  /* 4, 8, 12, 16: the unrolled copies; the others: the loop. */
  static const unsigned ways[] = { 1, 2, 3, 4, 5, 7, 8, 12, 16, 24 };
  static const unsigned sets[] = { 1, 3, 4 };
  for (unsigned p = 0; p < G_N_ELEMENTS(all_policies); p++)
    for (unsigned w = 0; w < G_N_ELEMENTS(ways); w++)
      for (unsigned s = 0; s < G_N_ELEMENTS(sets); s++)
        check_against_model(all_policies[p], ways[w] * sets[s], ways[w], 0, FALSE, 1500);
}
END_TEST

START_TEST(test_indexed_ways_match_model)
{
  /* More than TLB_INDEX_MIN_WAYS ways: the host index, checked against the
   * array at every step as well (Zen 4's 72-way L1 and 24-way STLB, the
   * 64-way L1s, a set count that is not a power of two). */
  static const unsigned ways[] = { 17, 20, 24, 64, 72 };
  static const unsigned sets[] = { 1, 3, 4 };
  for (unsigned p = 0; p < G_N_ELEMENTS(all_policies); p++)
    for (unsigned w = 0; w < G_N_ELEMENTS(ways); w++)
      for (unsigned s = 0; s < G_N_ELEMENTS(sets); s++) {
        const TlbReplPolicy *repl = all_policies[p];
        g_autoptr(Tlb) t = tlb_new("t", ways[w] * sets[s], ways[w], repl, NULL);
        ck_assert_ptr_nonnull(t->ix.head);
        check_against_model(repl, ways[w] * sets[s], ways[w], 0, FALSE, 1500);
        check_against_model(repl, ways[w] * sets[s], ways[w], 5, FALSE, 1500);
      }
}
END_TEST

START_TEST(test_renumbering_keeps_order)
{
  for (unsigned p = 0; p < G_N_ELEMENTS(all_policies); p++) {
    const TlbReplPolicy *repl = all_policies[p];
    check_against_model(repl, 16, 4, 3, FALSE, 3000);
    check_against_model(repl, 48, 12, 1, FALSE, 3000);
    check_against_model(repl, 15, 5, 7, FALSE, 3000);
    /* The tick's true end: the inline refill must not step past it. */
    check_against_model(repl, 16, 4, 20, TRUE, 3000);
    check_against_model(repl, 48, 12, 40, TRUE, 3000);
    check_against_model(repl, 15, 5, 9, TRUE, 3000);
  }
}
END_TEST

static Suite *tlb_suite(void)
{
  Suite *s = suite_create("tlb");
  TCase *tc = tcase_create("keys");
  tcase_add_test(tc, test_key_layout);
  tcase_add_test(tc, test_set_index_power_of_two);
  tcase_add_test(tc, test_set_index_twelve_sets);
  tcase_add_test(tc, test_size_mask_shortcut);
  tcase_add_test(tc, test_set_index_one_set);
  tcase_add_test(tc, test_set_index_is_vpn_mod_sets);
  suite_add_tcase(s, tc);

  tc = tcase_create("replacement");
  tcase_add_test(tc, test_hit_and_miss);
  tcase_add_test(tc, test_lru_order);
  tcase_add_test(tc, test_fifo_differs_from_lru);
  tcase_add_test(tc, test_random_deterministic_and_in_set);
  tcase_add_test(tc, test_insert_refreshes);
  tcase_add_test(tc, test_peek_keeps_lru);
  tcase_add_test(tc, test_fully_associative);
  tcase_add_test(tc, test_probe_refill_matches_plain_refill);
  tcase_add_test(tc, test_unrolled_ways_match_model);
  tcase_add_test(tc, test_indexed_ways_match_model);
  tcase_add_test(tc, test_renumbering_keeps_order);
  suite_add_tcase(s, tc);

  tc = tcase_create("plru");
  tcase_add_test(tc, test_plru_4way);
  tcase_add_test(tc, test_plru_8way);
  tcase_add_test(tc, test_plru_3way);
  tcase_add_test(tc, test_plru_12way);
  tcase_add_test(tc, test_plru_invalidate_then_refill);
  tcase_add_test(tc, test_plru_every_way_reached);
  suite_add_tcase(s, tc);

  tc = tcase_create("invalidation");
  tcase_add_test(tc, test_pcid_isolation);
  tcase_add_test(tc, test_invalidate);
  tcase_add_test(tc, test_flush_all);
  suite_add_tcase(s, tc);

  tc = tcase_create("config");
  tcase_add_test(tc, test_bad_geometry);
  tcase_add_test(tc, test_repl_lookup);
  tcase_add_test(tc, test_repl_registry_matches_setting);
  tcase_add_test(tc, test_repl_from_settings);
  tcase_add_test(tc, test_free_null);
  tcase_add_test(tc, test_repl_missing_hook);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(tlb_suite)
