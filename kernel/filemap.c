/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filemap.c - the page cache behind file mappings, as Linux 6.12's
 * mm/filemap.c filemap_fault, filemap_map_pages and do_sync_mmap_readahead
 * find and read its pages (kernel/filemap.h says what a page is named by
 * and where its frame lives).
 *
 * A major fault reads the faulting page with its read-around window:
 * do_sync_mmap_readahead's ra->start = pgoff - ra_pages / 2, ra->size =
 * ra_pages (file.read_ahead_kb), here cut to the VMA, which stands for the
 * file (offset 0 at its start, its end the file's).  The one request costs
 * file.read_ns.  Left out: mmap_miss (read-around stops after 100 misses in
 * a row), the asynchronous readahead that a PG_readahead page starts,
 * MADV_RANDOM and MADV_SEQUENTIAL, large folios, and the I/O's transfer
 * time beyond its latency.
 */
#include "config.h"
#include "filemap.h"

#include "mempolicy.h"

struct Filemap {
  GHashTable *pages;   /* PageKey -> frame (pfn) */
  double cache_hit;    /* file.cache_hit */
  uint64_t read_cycles;
  uint64_t around_page_cycles;
  unsigned around_pages; /* fault_around_pages */
  unsigned ra_pages;     /* read-around window in base pages */
};

typedef struct {
  uint64_t page; /* va >> base_shift */
  uint32_t pid;
} PageKey;

static guint key_hash(gconstpointer p)
{
  const PageKey *k = p;
  return g_int64_hash(&k->page) ^ (k->pid * 2654435761u);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
  const PageKey *x = a, *y = b;
  return x->page == y->page && x->pid == y->pid;
}

Filemap *filemap_new(const Kernel *k)
{
  Filemap *f = g_new0(Filemap, 1);
  f->pages = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
  f->cache_hit = settings_double(k->s, SET_FILE_CACHE_HIT);
  f->read_cycles = kernel_ns_to_cycles(k, settings_double(k->s, SET_FILE_READ_NS));
  f->around_page_cycles = kernel_ns_to_cycles(k, settings_double(k->s, SET_FAULT_AROUND_PAGE_NS));
  /* fault_around_bytes_set: rounddown_pow_of_two(max(val / PAGE_SIZE, 1)),
   * at most PTRS_PER_PTE (the kernel refuses more; the setting is cut). */
  uint64_t pages = (uint64_t)settings_int(k->s, SET_VM_FAULT_AROUND_BYTES) / k->base_bytes;
  uint64_t ptrs = UINT64_C(1) << k->geo.bits[1];
  pages = MIN(MAX(pages, 1), ptrs);
  f->around_pages = 1u << (63 - __builtin_clzll(pages));
  f->ra_pages = (unsigned)(((uint64_t)settings_int(k->s, SET_FILE_READ_AHEAD_KB) << 10) / k->base_bytes);
  return f;
}

void filemap_free(Filemap *f)
{
  if (!f)
    return;
  g_hash_table_destroy(f->pages);
  g_free(f);
}

unsigned filemap_around_pages(const Filemap *f)
{
  return f->around_pages;
}

uint64_t filemap_around_page_cycles(const Filemap *f)
{
  return f->around_page_cycles;
}

guint filemap_pages(const Filemap *f)
{
  return g_hash_table_size(f->pages);
}

/* In the page cache before the run: file.cache_hit of the pages, chosen by
 * a fixed hash of the page's name (splitmix64's finaliser), so every run
 * and every configuration finds the same ones. */
static gboolean cached_at_start(const Filemap *f, const PageKey *key)
{
  if (f->cache_hit >= 1)
    return TRUE;
  uint64_t h = key->page * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)key->pid << 32);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return (double)(h >> 11) * 0x1.0p-53 < f->cache_hit;
}

/* A frame for a page entering the cache: filemap_alloc_folio (6.12) takes
 * it with the task's memory policy (not the VMA's), movable. */
static gboolean add_page(Kernel *k, KCpu *cpu, Mm *mm, const PageKey *key, uint64_t *pfn)
{
  MemPlacement place;
  mempolicy_place(k, mm, NULL, key->page << k->base_shift, k->base_order, cpu->node, &place);
  if (!mempolicy_alloc(k, cpu, &place, k->base_order, MT_MOVABLE, pfn))
    return FALSE;
  g_hash_table_insert(k->filemap->pages, g_memdup2(key, sizeof *key), GSIZE_TO_POINTER(*pfn));
  return TRUE;
}

gboolean filemap_cached(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t page_va, uint64_t *pfn, gboolean *oom)
{
  Filemap *f = k->filemap;
  PageKey key = { .page = page_va >> k->base_shift, .pid = mm->pid };
  gpointer value;
  (void)v;
  *oom = FALSE;
  if (g_hash_table_lookup_extended(f->pages, &key, NULL, &value)) {
    *pfn = GPOINTER_TO_SIZE(value);
    return TRUE;
  }
  if (!cached_at_start(f, &key))
    return FALSE;
  *oom = !add_page(k, cpu, mm, &key, pfn);
  return !*oom;
}

gboolean filemap_get(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t page_va, uint64_t *pfn, gboolean *major,
                     uint64_t *cycles)
{
  Filemap *f = k->filemap;
  gboolean oom;
  *major = FALSE;
  if (filemap_cached(k, cpu, mm, v, page_va, pfn, &oom))
    return TRUE;
  if (oom)
    return FALSE;
  /* do_sync_mmap_readahead's read-around, cut to the VMA; the faulting
   * page first, so that it has its frame whatever the others find. */
  PageKey key = { .page = page_va >> k->base_shift, .pid = mm->pid };
  if (!add_page(k, cpu, mm, &key, pfn))
    return FALSE;
  uint64_t read = 1;
  if (f->ra_pages > 1) {
    uint64_t half = (uint64_t)(f->ra_pages / 2) << k->base_shift;
    uint64_t lo = page_va - MIN(half, page_va - v->start);
    uint64_t hi = MIN(lo + ((uint64_t)f->ra_pages << k->base_shift), v->end);
    for (uint64_t va = lo; va < hi; va += k->base_bytes) {
      uint64_t other;
      PageKey ok = { .page = va >> k->base_shift, .pid = mm->pid };
      if (va == page_va || g_hash_table_contains(f->pages, &ok) || cached_at_start(f, &ok))
        continue; /* page_cache_ra_unbounded skips what the cache holds */
      if (!add_page(k, cpu, mm, &ok, &other))
        break; /* readahead gives up quietly when memory runs out */
      read++;
    }
  }
  *major = TRUE;
  cpu->ctr->c[CTR_MAJOR_FAULTS]++;
  cpu->ctr->c[CTR_FILE_PAGES_READ] += read;
  *cycles += f->read_cycles;
  return TRUE;
}
