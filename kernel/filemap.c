/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filemap.c - the page cache behind file mappings, as Linux 6.12's
 * mm/filemap.c filemap_fault, filemap_map_pages and do_sync_mmap_readahead
 * find and read its pages (kernel/filemap.h says what a page is named by
 * and where its frame lives).
 *
 * A major fault reads the faulting page with its read-around window:
 * do_sync_mmap_readahead's ra->start = pgoff - ra_pages / 2, ra->size =
 * ra_pages (file.read_ahead_kb), here cut to the VMA: the trace gives no
 * file size, and a file it does not name is the VMA itself (offset 0 at
 * its start).  A page is named by its file and index where the trace names
 * the file (filemap_get_folio's mapping and index), else by its process
 * and address (kernel/filemap.h).  The one request costs
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
  GHashTable *files;   /* the files' names, each kept once (filemap_intern) */
  double cache_hit;    /* file.cache_hit */
  uint64_t read_cycles;
  uint64_t around_page_cycles;
  unsigned around_pages; /* fault_around_pages */
  unsigned ra_pages;     /* read-around window in base pages */
};

/* A page-cache page's name.  Of a named file: the file and the page's
 * index in it (the folio's mapping and index, filemap_get_folio), pid 0,
 * so every mapping of the file, in any process, finds the same page.  Of
 * a file mapping the trace does not name: its process and virtual page. */
typedef struct {
  const char *file; /* interned: compared as a pointer; NULL: not named */
  uint64_t page;    /* file: index in the file; else va >> base_shift */
  uint32_t pid;
} PageKey;

static guint key_hash(gconstpointer p)
{
  const PageKey *k = p;
  return g_int64_hash(&k->page) ^ (k->pid * 2654435761u) ^ g_direct_hash(k->file);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
  const PageKey *x = a, *y = b;
  return x->page == y->page && x->pid == y->pid && x->file == y->file;
}

/* The name of the page at va of mm's file VMA v: filemap_fault's
 * vmf->pgoff, linear_page_index (vm_pgoff + (va - vm_start) >>
 * PAGE_SHIFT) in v's file. */
static PageKey page_key(const Kernel *k, const Mm *mm, const Vma *v, uint64_t va)
{
  if (v->file)
    return (PageKey){ .file = v->file, .page = (v->file_off + (va - v->start)) >> k->base_shift };
  return (PageKey){ .page = va >> k->base_shift, .pid = mm->pid };
}

Filemap *filemap_new(const Kernel *k)
{
  Filemap *f = g_new0(Filemap, 1);
  f->pages = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
  f->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
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
  g_hash_table_destroy(f->files);
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

const char *filemap_intern(Filemap *f, const char *path)
{
  char *kept = g_hash_table_lookup(f->files, path);
  if (!kept) {
    kept = g_strdup(path);
    g_hash_table_add(f->files, kept);
  }
  return kept;
}

/* In the page cache before the run: file.cache_hit of the pages, chosen by
 * a fixed hash of the page's name (splitmix64's finaliser), so every run
 * and every configuration finds the same ones; a named file's page is
 * hashed by the file's name (g_str_hash, not its address), so every
 * process and every run agree on it. */
static gboolean cached_at_start(const Filemap *f, const PageKey *key)
{
  if (f->cache_hit >= 1)
    return TRUE;
  uint64_t h = key->file ? key->page * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)g_str_hash(key->file) << 31)
                         : key->page * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)key->pid << 32);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return (double)(h >> 11) * 0x1.0p-53 < f->cache_hit;
}

/* A frame for a page entering the cache, faulted at va of mm:
 * filemap_alloc_folio (6.12) takes it with the task's memory policy (not
 * the VMA's), movable.  The cache holds the frame from now on: the PTEs
 * that map it, in one process or several, hold no reference of their own
 * that could free it (kernel/filemap.h). */
static gboolean add_page(Kernel *k, KCpu *cpu, Mm *mm, const PageKey *key, uint64_t va, uint64_t *pfn)
{
  MemPlacement place;
  mempolicy_place(k, mm, NULL, va, k->base_order, cpu->node, &place);
  if (!mempolicy_alloc(k, cpu, &place, k->base_order, MT_MOVABLE, pfn))
    return FALSE;
  g_hash_table_insert(k->filemap->pages, g_memdup2(key, sizeof *key), GSIZE_TO_POINTER(*pfn));
  return TRUE;
}

gboolean filemap_cached(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t page_va, uint64_t *pfn, gboolean *oom)
{
  Filemap *f = k->filemap;
  PageKey key = page_key(k, mm, v, page_va);
  gpointer value;
  *oom = FALSE;
  if (g_hash_table_lookup_extended(f->pages, &key, NULL, &value)) {
    *pfn = GPOINTER_TO_SIZE(value);
    return TRUE;
  }
  if (!cached_at_start(f, &key))
    return FALSE;
  *oom = !add_page(k, cpu, mm, &key, page_va, pfn);
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
  PageKey key = page_key(k, mm, v, page_va);
  if (!add_page(k, cpu, mm, &key, page_va, pfn))
    return FALSE;
  uint64_t read = 1;
  if (f->ra_pages > 1) {
    uint64_t half = (uint64_t)(f->ra_pages / 2) << k->base_shift;
    uint64_t lo = page_va - MIN(half, page_va - v->start);
    uint64_t hi = MIN(lo + ((uint64_t)f->ra_pages << k->base_shift), v->end);
    for (uint64_t va = lo; va < hi; va += k->base_bytes) {
      uint64_t other;
      PageKey ok = page_key(k, mm, v, va);
      if (va == page_va || g_hash_table_contains(f->pages, &ok) || cached_at_start(f, &ok))
        continue; /* page_cache_ra_unbounded skips what the cache holds */
      if (!add_page(k, cpu, mm, &ok, va, &other))
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
