/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of faults on file mappings (kernel/fault.c file_fault,
 * kernel/filemap.c): a minor fault with fault-around (do_read_fault,
 * do_fault_around, filemap_map_pages), a major fault with its read-around
 * (filemap_fault, do_sync_mmap_readahead), vm.fault_around_bytes, copy on
 * write of a private file page (do_cow_fault, wp_page_copy), a write to a
 * shared one (do_shared_fault), mprotect leaving page-cache pages
 * read-only, and munmap leaving them in the page cache; the counts and the
 * cycles of each.  A named file's pages (path= and offset= on the mmap)
 * are shared by every mapping of it, in one process or several
 * (filemap_get_folio by mapping and index).  The kernel alone (tests/kernel_fixture.h).
 */
#include "config.h"
#include "fault.h"
#include "filemap.h"
#include "kernel_fixture.h"

#define BASE UINT64_C(0x7f0000000000)
#define PG UINT64_C(0x1000)

static uint64_t fault(KernelFixture *f, Thread *t, uint64_t va, AccessKind kind)
{
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(f->k, &f->cpus[0]->kc, t->mm, va, kind, &cycles), FAULT_MAPPED);
  return cycles;
}

/* mmap of the file `path` at byte offset `off` (a recording's mmap with
 * path= and offset=). */
static void map_file(KernelFixture *f, Thread *t, uint64_t addr, uint64_t len, uint8_t prot, uint8_t flags,
                     const char *path, uint64_t off)
{
  TraceRecord r = { .type = REC_MMAP, .pid = t->pid, .addr = addr, .len = len, .prot = prot,
                    .flags = MAP_F_FILE | flags, .arg2 = off, .path = path };
  kernel_syscall(f->k, &f->cpus[0]->kc, t->mm, &r);
}

static uint64_t fault_on(KernelFixture *f, unsigned cpu, Thread *t, uint64_t va, AccessKind kind)
{
  uint64_t cycles;
  ck_assert_int_eq(fault_handle(f->k, &f->cpus[cpu]->kc, t->mm, va, kind, &cycles), FAULT_MAPPED);
  return cycles;
}

/* The cost of the page-table pages a first fault in an empty mm makes:
 * PDPT, PD and PT. */
static uint64_t three_tables(const Kernel *k)
{
  return 3 * (k->ptpage_cycles + k->clear_4k_cycles);
}

/* A read in a warm cache: a minor fault that maps the aligned 64K window
 * (16 pages) read-only from the page cache, nothing cleared, nothing of
 * the workload's memory used; the other 15 pages then need no fault. */
START_TEST(test_minor_fault_around)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_mapped_thread(f, 1, BASE, 1 << 20, PROT_R, MAP_F_FILE);
  Kernel *k = f->k;
  Counters *c = &f->cpus[0]->ctr;
  uint64_t free_before = fixture_free_pages(k);
  uint64_t cycles = fault(f, t, BASE + 5 * PG + 8, ACC_LOAD);
  ck_assert_uint_eq(cycles, k->file_cycles + 15 * filemap_around_page_cycles(k->filemap) + three_tables(k));
  ck_assert_uint_eq(c->c[CTR_FAULTS_FILE], 1);
  ck_assert_uint_eq(c->c[CTR_FAULT_AROUND_PAGES], 15);
  ck_assert_uint_eq(c->c[CTR_MAJOR_FAULTS], 0);
  ck_assert_uint_eq(c->c[CTR_FAULTS_ZERO_PAGE], 0);
  ck_assert_uint_eq(c->c[CTR_ZEROING_CYCLES], 0);
  ck_assert_uint_eq(c->c[CTR_MEM_USED_BYTES], 0);
  ck_assert_uint_eq(t->mm->rss_pages, 0);
  ck_assert_uint_eq(filemap_pages(k->filemap), 16);
  ck_assert_uint_eq(free_before - fixture_free_pages(k), 16 + 3); /* the page cache's frames count as used */
  for (uint64_t i = 0; i < 16; i++) {
    uint64_t e = fixture_pte(t, BASE + i * PG);
    ck_assert((e & (PTE_P | PTE_SW_FILE)) == (PTE_P | PTE_SW_FILE));
    ck_assert(!(e & (PTE_RW | PTE_SW_ZERO)));
  }
  ck_assert_uint_eq(fixture_pte(t, BASE + 16 * PG), 0);
  kfix_free(f);
}
END_TEST

/* The window is cut to the VMA (do_fault_around's from_pte and to_pte);
 * vm.fault_around_bytes=4K (one page) turns fault-around off. */
START_TEST(test_fault_around_window)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_mapped_thread(f, 1, BASE + 3 * PG, 8 * PG, PROT_R, MAP_F_FILE); /* pages 3..10 */
  fault(f, t, BASE + 4 * PG, ACC_LOAD);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_FAULT_AROUND_PAGES], 7);
  kfix_free(f);

  const char *const none[] = { "vm.fault_around_bytes=4K", NULL };
  f = kfix_new("skylake", none);
  t = kfix_mapped_thread(f, 1, BASE, 1 << 20, PROT_R, MAP_F_FILE);
  ck_assert_uint_eq(filemap_around_pages(f->k->filemap), 1);
  uint64_t cycles = fault(f, t, BASE, ACC_LOAD);
  ck_assert_uint_eq(cycles, f->k->file_cycles + three_tables(f->k));
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_FAULT_AROUND_PAGES], 0);
  ck_assert_uint_eq(fixture_pte(t, BASE + PG), 0);
  kfix_free(f);

  /* 100K rounds down to 64K; 4M is more than a PTE table's 2M. */
  const char *const odd[] = { "vm.fault_around_bytes=100K", NULL };
  f = kfix_new("skylake", odd);
  ck_assert_uint_eq(filemap_around_pages(f->k->filemap), 16);
  kfix_free(f);
  const char *const big[] = { "vm.fault_around_bytes=4M", NULL };
  f = kfix_new("skylake", big);
  ck_assert_uint_eq(filemap_around_pages(f->k->filemap), 512);
  kfix_free(f);
}
END_TEST

/* A cold cache: the first read is a major fault that reads the 128K
 * read-around window centred on the page (32 pages) and maps the page
 * alone; a read of another page of the window is minor and maps its
 * fault-around window; a page past the window is major again. */
START_TEST(test_major_read_around)
{
  const char *const cold[] = { "file.cache_hit=0", NULL };
  KernelFixture *f = kfix_new("skylake", cold);
  Thread *t = kfix_mapped_thread(f, 1, BASE, 1 << 20, PROT_R, MAP_F_FILE);
  Kernel *k = f->k;
  Counters *c = &f->cpus[0]->ctr;
  uint64_t read = kernel_ns_to_cycles(k, 92000);
  uint64_t cycles = fault(f, t, BASE + 64 * PG, ACC_LOAD);
  ck_assert_uint_eq(cycles, k->file_cycles + read + three_tables(k));
  ck_assert_uint_eq(c->c[CTR_MAJOR_FAULTS], 1);
  ck_assert_uint_eq(c->c[CTR_FILE_PAGES_READ], 32);
  ck_assert_uint_eq(c->c[CTR_FAULT_AROUND_PAGES], 0);
  ck_assert_uint_eq(filemap_pages(k->filemap), 32); /* pages 48..79 */
  ck_assert_uint_eq(fixture_pte(t, BASE + 65 * PG), 0);
  cycles = fault(f, t, BASE + 50 * PG, ACC_LOAD);
  ck_assert_uint_eq(cycles, k->file_cycles + 15 * filemap_around_page_cycles(k->filemap));
  ck_assert_uint_eq(c->c[CTR_MAJOR_FAULTS], 1);
  fault(f, t, BASE + 80 * PG, ACC_LOAD);
  ck_assert_uint_eq(c->c[CTR_MAJOR_FAULTS], 2);
  /* Its window, pages 64..95, reads only those the cache lacks. */
  ck_assert_uint_eq(c->c[CTR_FILE_PAGES_READ], 32 + 16);
  ck_assert_uint_eq(c->c[CTR_FAULTS_FILE], 3);
  /* At the VMA's start the window begins there: pages 0..31. */
  fault(f, t, BASE, ACC_LOAD);
  ck_assert_uint_eq(c->c[CTR_FILE_PAGES_READ], 48 + 32);
  kfix_free(f);
}
END_TEST

/* A private writable file mapping: a write to an empty PTE copies the
 * page-cache page into a new anonymous page (do_cow_fault); a write to a
 * page-cache page a read mapped copies it too (wp_page_copy), shooting the
 * old translation down; the page cache keeps its pages. */
START_TEST(test_private_cow)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_mapped_thread(f, 1, BASE, 1 << 20, PROT_R | PROT_W, MAP_F_FILE);
  Kernel *k = f->k;
  Counters *c = &f->cpus[0]->ctr;
  uint64_t copy = kernel_copy_cycles(k, 4096);
  uint64_t cycles = fault(f, t, BASE, ACC_STORE);
  ck_assert_uint_eq(cycles, k->anon_cycles + copy + three_tables(k));
  uint64_t e = fixture_pte(t, BASE), cached;
  gboolean oom;
  ck_assert((e & (PTE_P | PTE_RW | PTE_D)) == (PTE_P | PTE_RW | PTE_D));
  ck_assert(!(e & PTE_SW_FILE));
  ck_assert(filemap_cached(k, &f->cpus[0]->kc, t->mm, mm_find_vma(t->mm, BASE), BASE, &cached, &oom));
  ck_assert_uint_ne(pte_pfn(e), cached);
  ck_assert_uint_eq(c->c[CTR_FAULTS_COW], 1);
  ck_assert_uint_eq(c->c[CTR_FAULTS_FILE], 1);
  ck_assert_uint_eq(c->c[CTR_MEM_USED_BYTES], 4096);
  ck_assert_uint_eq(c->c[CTR_ZEROING_CYCLES], 0);
  ck_assert_uint_eq(t->mm->rss_pages, 1);
  /* Read then write the next page. */
  fault(f, t, BASE + PG, ACC_LOAD);
  e = fixture_pte(t, BASE + PG);
  ck_assert(e & PTE_SW_FILE);
  ck_assert(!(e & PTE_RW));
  guint flushes = f->flushes->len;
  cycles = fault(f, t, BASE + PG, ACC_STORE);
  ck_assert_uint_eq(cycles, k->anon_cycles + copy);
  uint64_t e2 = fixture_pte(t, BASE + PG);
  ck_assert((e2 & (PTE_RW | PTE_D | PTE_SW_FILE)) == (PTE_RW | PTE_D));
  ck_assert_uint_ne(pte_pfn(e2), pte_pfn(e));
  ck_assert_uint_eq(f->flushes->len, flushes + 1);
  ck_assert_uint_eq(c->c[CTR_FAULTS_COW], 2);
  ck_assert_uint_eq(t->mm->rss_pages, 2);
  kfix_free(f);
}
END_TEST

/* A shared file mapping: a write maps the page-cache page itself,
 * writable and dirty (do_shared_fault); a read maps it read-only and the
 * write after it makes it writable in place (wp_page_shared). */
START_TEST(test_shared_write)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_mapped_thread(f, 1, BASE, 1 << 20, PROT_R | PROT_W, MAP_F_FILE | MAP_F_SHARED);
  Kernel *k = f->k;
  uint64_t cycles = fault(f, t, BASE, ACC_STORE);
  ck_assert_uint_eq(cycles, k->file_cycles + three_tables(k));
  uint64_t e = fixture_pte(t, BASE), cached;
  gboolean oom;
  ck_assert((e & (PTE_RW | PTE_D | PTE_SW_FILE)) == (PTE_RW | PTE_D | PTE_SW_FILE));
  ck_assert(filemap_cached(k, &f->cpus[0]->kc, t->mm, mm_find_vma(t->mm, BASE), BASE, &cached, &oom));
  ck_assert_uint_eq(pte_pfn(e), cached);
  fault(f, t, BASE + PG, ACC_LOAD);
  ck_assert(!(fixture_pte(t, BASE + PG) & PTE_RW));
  fault(f, t, BASE + PG, ACC_STORE);
  ck_assert((fixture_pte(t, BASE + PG) & (PTE_RW | PTE_D | PTE_SW_FILE)) == (PTE_RW | PTE_D | PTE_SW_FILE));
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_FAULTS_COW], 0);
  ck_assert_uint_eq(t->mm->rss_pages, 0);
  kfix_free(f);
}
END_TEST

/* mprotect r then rw: an anonymous copy is made writable again at once
 * (6.12), a private page-cache page is not (it is not anonymous); a shared
 * one is only when dirty (writenotify). */
START_TEST(test_mprotect_keeps_page_cache_read_only)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_mapped_thread(f, 1, BASE, 64 * PG, PROT_R | PROT_W, MAP_F_FILE);
  fault(f, t, BASE + PG, ACC_LOAD);  /* maps pages 0..15 read-only */
  fault(f, t, BASE, ACC_STORE);      /* page 0: an anonymous copy */
  kfix_syscall(f, t, REC_MMAP, BASE + 64 * PG, 64 * PG, PROT_R | PROT_W, MAP_F_FILE | MAP_F_SHARED);
  fault(f, t, BASE + 65 * PG, ACC_LOAD); /* pages 64..79 read-only */
  fault(f, t, BASE + 64 * PG, ACC_STORE); /* page 64 dirty */
  for (uint64_t at = 0; at < 128; at += 64) {
    kfix_syscall(f, t, REC_MPROTECT, BASE + at * PG, 64 * PG, PROT_R, 0);
    kfix_syscall(f, t, REC_MPROTECT, BASE + at * PG, 64 * PG, PROT_R | PROT_W, 0);
  }
  ck_assert(fixture_pte(t, BASE) & PTE_RW);
  ck_assert(!(fixture_pte(t, BASE + PG) & PTE_RW));
  ck_assert(fixture_pte(t, BASE + 64 * PG) & PTE_RW);
  ck_assert(!(fixture_pte(t, BASE + 65 * PG) & PTE_RW));
  kfix_free(f);
}
END_TEST

/* One mprotect over a private and a shared file mapping: each VMA takes
 * the new protection by its own flags (do_mprotect_pkey calls
 * mprotect_fixup per VMA, 6.12).  The private page-cache page stays
 * read-only until its COW, whichever VMA comes first in the range; the
 * dirty shared page is writable again (writenotify lets a dirty page skip
 * the write fault). */
START_TEST(test_mprotect_per_vma)
{
  for (unsigned shared_first = 0; shared_first < 2; shared_first++) {
    KernelFixture *f = kfix_new("skylake", NULL);
    Thread *t = kfix_thread(f, 1);
    uint64_t priv = shared_first ? BASE + 16 * PG : BASE, shared = shared_first ? BASE : BASE + 16 * PG;
    kfix_syscall(f, t, REC_MMAP, priv, 16 * PG, PROT_R, MAP_F_FILE);
    kfix_syscall(f, t, REC_MMAP, shared, 16 * PG, PROT_R | PROT_W, MAP_F_FILE | MAP_F_SHARED);
    fault(f, t, priv, ACC_LOAD);      /* a page-cache page, read-only */
    fault(f, t, shared, ACC_STORE);   /* a page-cache page, writable and dirty */
    kfix_syscall(f, t, REC_MPROTECT, BASE, 32 * PG, PROT_R, 0);
    ck_assert(!(fixture_pte(t, shared) & PTE_RW));
    ck_assert(fixture_pte(t, shared) & PTE_D);
    kfix_syscall(f, t, REC_MPROTECT, BASE, 32 * PG, PROT_R | PROT_W, 0);
    ck_assert_uint_eq(mm_vma_count(t->mm), 2);
    uint64_t ep = fixture_pte(t, priv), es = fixture_pte(t, shared);
    ck_assert_msg(!(ep & PTE_RW), "private file page writable before its COW (%s first)",
                  shared_first ? "shared" : "private");
    ck_assert_msg(es & PTE_RW, "dirty shared file page left read-only (%s first)",
                  shared_first ? "shared" : "private");
    kfix_free(f);
  }
}
END_TEST

/* mprotect over a hole (do_mprotect_pkey, 6.12): the VMAs before it take
 * the new protection, -ENOMEM stops the loop there, and the ones after it
 * keep theirs; a range that starts in a hole changes nothing.  Both count
 * as failed system calls. */
START_TEST(test_mprotect_stops_at_hole)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_thread(f, 1);
  Counters *c = &f->cpus[0]->ctr;
  kfix_syscall(f, t, REC_MMAP, BASE, 16 * PG, PROT_R | PROT_W, 0);
  kfix_syscall(f, t, REC_MMAP, BASE + 32 * PG, 16 * PG, PROT_R | PROT_W, 0);
  fault(f, t, BASE, ACC_STORE);
  fault(f, t, BASE + 32 * PG, ACC_STORE);
  kfix_syscall(f, t, REC_MPROTECT, BASE, 48 * PG, PROT_R, 0);
  ck_assert_uint_eq(c->c[CTR_SYSCALLS_FAILED], 1);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE)->prot, PROT_R);
  ck_assert(!(fixture_pte(t, BASE) & PTE_RW));
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE + 32 * PG)->prot, PROT_R | PROT_W);
  ck_assert(fixture_pte(t, BASE + 32 * PG) & PTE_RW);
  kfix_syscall(f, t, REC_MPROTECT, BASE + 16 * PG, 32 * PG, PROT_R, 0);
  ck_assert_uint_eq(c->c[CTR_SYSCALLS_FAILED], 2);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE + 32 * PG)->prot, PROT_R | PROT_W);
  ck_assert(fixture_pte(t, BASE + 32 * PG) & PTE_RW);
  kfix_syscall(f, t, REC_MPROTECT, BASE + 32 * PG, 16 * PG, PROT_R, 0); /* no hole: done */
  ck_assert_uint_eq(c->c[CTR_SYSCALLS_FAILED], 2);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE + 32 * PG)->prot, PROT_R);
  ck_assert_uint_eq(mm_vma_count(t->mm), 2);
  kfix_free(f);
}
END_TEST

/* The loop stops at the hole before it reaches a VMA the range ends in:
 * that VMA's THP is not split at the range's end. */
START_TEST(test_mprotect_hole_spares_later_thp)
{
  const char *sets[] = { "thp.enabled=always", NULL };
  KernelFixture *f = kfix_new("skylake", sets);
  Thread *t = kfix_thread(f, 1);
  Counters *c = &f->cpus[0]->ctr;
  uint64_t huge = BASE + (4ULL << 20); /* 2M-aligned, after a hole */
  kfix_syscall(f, t, REC_MMAP, BASE, 16 * PG, PROT_R | PROT_W, 0);
  kfix_syscall(f, t, REC_MMAP, huge, 4ULL << 20, PROT_R | PROT_W, 0);
  fault(f, t, huge, ACC_STORE);
  ck_assert_uint_eq(c->c[CTR_THP_FAULT_ALLOC], 1);
  kfix_syscall(f, t, REC_MPROTECT, BASE, huge + (1ULL << 20) - BASE, PROT_R, 0);
  ck_assert_uint_eq(c->c[CTR_SYSCALLS_FAILED], 1);
  ck_assert_uint_eq(c->c[CTR_THP_SPLIT_PMD], 0);
  ck_assert_uint_eq(mm_find_vma(t->mm, BASE)->prot, PROT_R);
  ck_assert_uint_eq(mm_find_vma(t->mm, huge)->prot, PROT_R | PROT_W);
  ck_assert_uint_eq(mm_vma_count(t->mm), 2);
  kfix_free(f);
}
END_TEST

/* A file offset that is not a multiple of the base page, or a file range
 * that wraps, is refused (sys_mmap's offset_in_page, do_mmap's
 * -EOVERFLOW): nothing is mapped, the call counts as failed. */
START_TEST(test_mmap_bad_offset)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_thread(f, 1);
  Counters *c = &f->cpus[0]->ctr;
  map_file(f, t, BASE, 16 * PG, PROT_R, 0, "/data/f", 100);
  ck_assert_uint_eq(c->c[CTR_SYSCALLS_FAILED], 1);
  ck_assert_uint_eq(mm_vma_count(t->mm), 0);
  map_file(f, t, BASE, 16 * PG, PROT_R, 0, "/data/f", UINT64_MAX - PG + 1);
  ck_assert_uint_eq(c->c[CTR_SYSCALLS_FAILED], 2);
  ck_assert_uint_eq(mm_vma_count(t->mm), 0);
  map_file(f, t, BASE, 16 * PG, PROT_R, 0, "/data/f", 2 * PG);
  ck_assert_uint_eq(c->c[CTR_SYSCALLS_FAILED], 2);
  ck_assert_uint_eq(mm_vma_count(t->mm), 1);
  kfix_free(f);
}
END_TEST

/* munmap gives back the anonymous copies and the tables, not the
 * page-cache pages: mapped again, the file faults minor on the same
 * frames. */
START_TEST(test_munmap_keeps_page_cache)
{
  const char *const cold[] = { "file.cache_hit=0", NULL };
  KernelFixture *f = kfix_new("skylake", cold);
  Thread *t = kfix_mapped_thread(f, 1, BASE, 64 * PG, PROT_R | PROT_W, MAP_F_FILE);
  Kernel *k = f->k;
  fault(f, t, BASE, ACC_LOAD);
  fault(f, t, BASE + PG, ACC_STORE);
  uint64_t pfn = pte_pfn(fixture_pte(t, BASE));
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_MAJOR_FAULTS], 1);
  uint64_t free_before = fixture_free_pages(k);
  kfix_syscall(f, t, REC_MUNMAP, BASE, 64 * PG, 0, 0);
  ck_assert_uint_eq(fixture_free_pages(k) - free_before, 1 + 3); /* the copy and the three tables */
  ck_assert_uint_eq(filemap_pages(k->filemap), 32);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_MEM_USED_BYTES], 0);
  kfix_syscall(f, t, REC_MMAP, BASE, 64 * PG, PROT_R, MAP_F_FILE);
  fault(f, t, BASE, ACC_LOAD);
  ck_assert_uint_eq(pte_pfn(fixture_pte(t, BASE)), pfn);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_MAJOR_FAULTS], 1);
  kfix_free(f);
}
END_TEST

/* Two processes map the same named file at different addresses: the
 * page the first read from storage is in the file's page cache for the
 * second (filemap_get_folio by mapping and index), a minor fault that maps
 * the same frame; the first one's munmap leaves the frame to the second,
 * which still reads it and finds the rest of the read-around window
 * cached. */
START_TEST(test_named_file_shared_between_processes)
{
  const char *const cold[] = { "file.cache_hit=0", "machine.cpus_per_node=2", NULL };
  KernelFixture *f = kfix_new("skylake", cold);
  Thread *a = kfix_thread_on(f, 1, 0), *b = kfix_thread_on(f, 2, 1);
  Kernel *k = f->k;
  uint64_t other = BASE + (UINT64_C(1) << 30);
  map_file(f, a, BASE, 64 * PG, PROT_R, 0, "/lib/libx.so", 0);
  map_file(f, b, other, 64 * PG, PROT_R, 0, "/lib/libx.so", 0);
  fault_on(f, 0, a, BASE + 40 * PG, ACC_LOAD);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_MAJOR_FAULTS], 1);
  guint cached = filemap_pages(k->filemap);
  ck_assert_uint_eq(cached, 32); /* pages 24..55 */
  uint64_t cycles = fault_on(f, 1, b, other + 40 * PG, ACC_LOAD);
  ck_assert_uint_eq(f->cpus[1]->ctr.c[CTR_MAJOR_FAULTS], 0);
  ck_assert_uint_eq(cycles, k->file_cycles + 15 * filemap_around_page_cycles(k->filemap) + three_tables(k));
  ck_assert_uint_eq(filemap_pages(k->filemap), cached);
  uint64_t pfn = pte_pfn(fixture_pte(a, BASE + 40 * PG));
  ck_assert_uint_eq(pte_pfn(fixture_pte(b, other + 40 * PG)), pfn);
  uint64_t free_before = fixture_free_pages(k);
  kfix_syscall(f, a, REC_MUNMAP, BASE, 64 * PG, 0, 0);
  ck_assert_uint_eq(fixture_free_pages(k) - free_before, 3); /* a's tables, no page-cache frame */
  ck_assert_uint_eq(filemap_pages(k->filemap), cached);
  ck_assert_uint_eq(pte_pfn(fixture_pte(b, other + 40 * PG)), pfn);
  fault_on(f, 1, b, other + 24 * PG, ACC_LOAD); /* read by a's major fault */
  ck_assert_uint_eq(f->cpus[1]->ctr.c[CTR_MAJOR_FAULTS], 0);
  fault_on(f, 1, b, other + 60 * PG, ACC_LOAD); /* past the window: never read */
  ck_assert_uint_eq(f->cpus[1]->ctr.c[CTR_MAJOR_FAULTS], 1);
  kfix_free(f);
}
END_TEST

/* One process maps a file twice, the second mapping from offset 32K: its
 * first page is the first mapping's ninth (the index counts from the
 * file's start, vm_pgoff), the same frame, a minor fault.  Two files of
 * different names, and file mappings the trace does not name, keep pages
 * of their own. */
START_TEST(test_named_file_offset_and_names)
{
  const char *const cold[] = { "file.cache_hit=0", "vm.fault_around_bytes=4K", "file.read_ahead_kb=0", NULL };
  KernelFixture *f = kfix_new("skylake", cold);
  Thread *t = kfix_thread(f, 1);
  Counters *c = &f->cpus[0]->ctr;
  map_file(f, t, BASE, 16 * PG, PROT_R, 0, "/data/f", 0);
  map_file(f, t, BASE + 64 * PG, 16 * PG, PROT_R, MAP_F_SHARED, "/data/f", 8 * PG);
  map_file(f, t, BASE + 128 * PG, 16 * PG, PROT_R, 0, "/data/g", 0);
  kfix_syscall(f, t, REC_MMAP, BASE + 192 * PG, 16 * PG, PROT_R, MAP_F_FILE);
  kfix_syscall(f, t, REC_MMAP, BASE + 256 * PG, 16 * PG, PROT_R, MAP_F_FILE);
  fault(f, t, BASE + 8 * PG, ACC_LOAD);
  ck_assert_uint_eq(c->c[CTR_MAJOR_FAULTS], 1);
  fault(f, t, BASE + 64 * PG, ACC_LOAD);
  ck_assert_uint_eq(c->c[CTR_MAJOR_FAULTS], 1);
  ck_assert_uint_eq(pte_pfn(fixture_pte(t, BASE + 64 * PG)), pte_pfn(fixture_pte(t, BASE + 8 * PG)));
  fault(f, t, BASE + 136 * PG, ACC_LOAD); /* /data/g's page 8 */
  ck_assert_uint_eq(c->c[CTR_MAJOR_FAULTS], 2);
  fault(f, t, BASE + 200 * PG, ACC_LOAD); /* unnamed: its own page 8 */
  fault(f, t, BASE + 264 * PG, ACC_LOAD);
  ck_assert_uint_eq(c->c[CTR_MAJOR_FAULTS], 4);
  ck_assert_uint_eq(filemap_pages(f->k->filemap), 4);
  kfix_free(f);
}
END_TEST

/* Private COW still copies: a write to a process's private mapping of a
 * shared file page gives that process an anonymous copy and leaves the
 * page-cache frame to the other process, which still maps it; a write
 * through a shared mapping goes to the page-cache frame both see. */
START_TEST(test_named_file_private_cow_copies)
{
  const char *const two[] = { "machine.cpus_per_node=2", NULL };
  KernelFixture *f = kfix_new("skylake", two);
  Thread *a = kfix_thread_on(f, 1, 0), *b = kfix_thread_on(f, 2, 1);
  map_file(f, a, BASE, 16 * PG, PROT_R | PROT_W, 0, "/data/f", 0);
  map_file(f, b, BASE, 16 * PG, PROT_R | PROT_W, 0, "/data/f", 0);
  map_file(f, b, BASE + 64 * PG, 16 * PG, PROT_R | PROT_W, MAP_F_SHARED, "/data/f", 0);
  fault_on(f, 0, a, BASE, ACC_LOAD);
  fault_on(f, 1, b, BASE, ACC_LOAD);
  uint64_t pfn = pte_pfn(fixture_pte(a, BASE));
  ck_assert_uint_eq(pte_pfn(fixture_pte(b, BASE)), pfn);
  fault_on(f, 0, a, BASE, ACC_STORE); /* wp_page_copy */
  uint64_t ea = fixture_pte(a, BASE);
  ck_assert((ea & (PTE_RW | PTE_SW_FILE)) == PTE_RW);
  ck_assert_uint_ne(pte_pfn(ea), pfn);
  ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_FAULTS_COW], 1);
  ck_assert_uint_eq(pte_pfn(fixture_pte(b, BASE)), pfn);
  fault_on(f, 1, b, BASE + 64 * PG, ACC_STORE); /* do_shared_fault */
  uint64_t es = fixture_pte(b, BASE + 64 * PG);
  ck_assert((es & (PTE_RW | PTE_SW_FILE)) == (PTE_RW | PTE_SW_FILE));
  ck_assert_uint_eq(pte_pfn(es), pfn);
  ck_assert_uint_eq(f->cpus[1]->ctr.c[CTR_FAULTS_COW], 0);
  kfix_free(f);
}
END_TEST

/* A split keeps each part's place in the file (__split_vma), and two
 * mappings of a file merge only when the second continues the first in
 * it (can_vma_merge_after): mapped at its offset, the page an upper part
 * faults is the file's page, the same frame. */
START_TEST(test_named_file_split_and_merge)
{
  KernelFixture *f = kfix_new("skylake", NULL);
  Thread *t = kfix_thread(f, 1);
  map_file(f, t, BASE, 16 * PG, PROT_R, 0, "/data/f", 0);
  map_file(f, t, BASE + 16 * PG, 16 * PG, PROT_R, 0, "/data/f", 16 * PG);
  ck_assert_uint_eq(mm_vma_count(t->mm), 1);
  map_file(f, t, BASE + 32 * PG, 16 * PG, PROT_R, 0, "/data/f", 0);
  map_file(f, t, BASE + 48 * PG, 16 * PG, PROT_R, 0, "/data/g", 16 * PG);
  ck_assert_uint_eq(mm_vma_count(t->mm), 3);
  kfix_syscall(f, t, REC_MPROTECT, BASE + 4 * PG, 4 * PG, PROT_R | PROT_W, 0);
  ck_assert_uint_eq(mm_vma_count(t->mm), 5);
  ck_assert_uint_eq(mm_vma(t->mm, 1)->file_off, 4 * PG);
  ck_assert_uint_eq(mm_vma(t->mm, 2)->file_off, 8 * PG);
  ck_assert_ptr_eq(mm_vma(t->mm, 2)->file, mm_vma(t->mm, 3)->file);
  ck_assert_ptr_ne(mm_vma(t->mm, 3)->file, mm_vma(t->mm, 4)->file);
  fault(f, t, BASE + 9 * PG, ACC_LOAD);
  fault(f, t, BASE + 41 * PG, ACC_LOAD); /* the third mapping's page 9: the file's page 9 */
  ck_assert_uint_eq(pte_pfn(fixture_pte(t, BASE + 41 * PG)), pte_pfn(fixture_pte(t, BASE + 9 * PG)));
  kfix_syscall(f, t, REC_MPROTECT, BASE + 4 * PG, 4 * PG, PROT_R, 0);
  ck_assert_uint_eq(mm_vma_count(t->mm), 3);
  kfix_free(f);
}
END_TEST

/* file.cache_hit between 0 and 1: a fixed share of the pages, the same in
 * every run. */
START_TEST(test_cache_hit_fraction)
{
  const char *const half[] = { "file.cache_hit=0.5", "vm.fault_around_bytes=0", "file.read_ahead_kb=0", NULL };
  uint64_t major[2];
  for (unsigned run = 0; run < 2; run++) {
    KernelFixture *f = kfix_new("skylake", half);
    Thread *t = kfix_mapped_thread(f, 1, BASE, 1024 * PG, PROT_R, MAP_F_FILE);
    for (uint64_t i = 0; i < 1024; i++)
      fault(f, t, BASE + i * PG, ACC_LOAD);
    major[run] = f->cpus[0]->ctr.c[CTR_MAJOR_FAULTS];
    ck_assert_uint_eq(f->cpus[0]->ctr.c[CTR_FILE_PAGES_READ], major[run]);
    kfix_free(f);
  }
  ck_assert_uint_eq(major[0], major[1]);
  ck_assert_uint_gt(major[0], 512 - 64);
  ck_assert_uint_lt(major[0], 512 + 64);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("filemap");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_minor_fault_around);
  tcase_add_test(tc, test_fault_around_window);
  tcase_add_test(tc, test_major_read_around);
  tcase_add_test(tc, test_private_cow);
  tcase_add_test(tc, test_shared_write);
  tcase_add_test(tc, test_mprotect_keeps_page_cache_read_only);
  tcase_add_test(tc, test_mprotect_per_vma);
  tcase_add_test(tc, test_mprotect_stops_at_hole);
  tcase_add_test(tc, test_mprotect_hole_spares_later_thp);
  tcase_add_test(tc, test_mmap_bad_offset);
  tcase_add_test(tc, test_munmap_keeps_page_cache);
  tcase_add_test(tc, test_cache_hit_fraction);
  tcase_add_test(tc, test_named_file_shared_between_processes);
  tcase_add_test(tc, test_named_file_offset_and_names);
  tcase_add_test(tc, test_named_file_private_cow_copies);
  tcase_add_test(tc, test_named_file_split_and_merge);
  suite_add_tcase(s, tc);
  return s;
}

TEST_MAIN(suite)
