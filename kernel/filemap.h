/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filemap.h - the page cache behind file mappings (mm/filemap.c, Linux 6.12).
 *
 * A file page is found in the page cache or read from storage.  A page
 * of a named file (a VMA whose mmap carried path= and offset=, Vma.file)
 * is named by the file and its index in it, as filemap_get_folio finds a
 * folio by its address_space and index: every mapping of the file, in
 * one process or several, finds the same page and frame.  A file mapping
 * the trace does not name is its own file: its pages are named by its
 * process and the base page they were faulted through.  Whether a page is
 * in the cache before the run is file.cache_hit's fixed hash of that
 * name; a page read by a major fault stays in.  Each page in the cache
 * holds a frame of the buddy allocator (movable, placed by the process's
 * memory policy as filemap_alloc_folio places it): page-cache pages count
 * in a node's used memory, not in mem_used_bytes, which counts the
 * workload's own pages.  The frames stay until the run ends: no reclaim,
 * no writeback (a write to a shared file mapping only dirties its PTE).
 * The cache's reference is what keeps a frame: the PTEs that map it take
 * no reference or mapcount that could free it, so one process unmapping
 * a shared page leaves it to the others.
 * The fault paths that use it are in kernel/fault.c.
 */
#ifndef MMUSIM_FILEMAP_H
#define MMUSIM_FILEMAP_H

#include "kernel.h"

typedef struct Filemap Filemap;

Filemap *filemap_new(const Kernel *k);
void filemap_free(Filemap *f);

/* fault_around_pages (mm/memory.c): base pages of vm.fault_around_bytes,
 * rounded down to a power of two, at most a PTE table's; 1: no
 * fault-around (should_fault_around). */
unsigned filemap_around_pages(const Filemap *f);
/* Cycles of one page mapped by fault-around (fault.around_page_ns). */
uint64_t filemap_around_page_cycles(const Filemap *f);

/* The frame of the page at page_va of mm's file VMA v when the page cache
 * holds it (filemap_map_pages' next_uptodate_folio): a page never seen
 * before is held when file.cache_hit's hash says so, and gets its frame
 * now.  FALSE: not cached; *oom also when no frame was left for it. */
gboolean filemap_cached(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t page_va, uint64_t *pfn, gboolean *oom);

/* filemap_fault: the frame of the page at page_va, read from storage with
 * its read-around window (do_sync_mmap_readahead) when the cache does not
 * hold it (*major; major-faults and file_pages_read counted, file.read_ns
 * added to *cycles).  FALSE: no frame left for it (out of memory). */
gboolean filemap_get(Kernel *k, KCpu *cpu, Mm *mm, const Vma *v, uint64_t page_va, uint64_t *pfn, gboolean *major,
                     uint64_t *cycles);

/* The one copy of a file's name that VMAs keep (Vma.file): equal names
 * give the same pointer, valid until the kernel is freed. */
const char *filemap_intern(Filemap *f, const char *path);

/* Page-cache pages held, for tests. */
guint filemap_pages(const Filemap *f);

#endif
