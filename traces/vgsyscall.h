/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgsyscall.h - the system calls that shape memory, from valgrind's
 * --trace-syscalls=yes lines in a lackey log, as mapping records.
 *
 * valgrind 3.19 (coregrind/m_syswrap/syswrap-main.c) writes each system
 * call of the program to its log, in program order with lackey's lines:
 *
 *   SYSCALL[PID,TID](NR) sys_NAME ( ARG, ARG, ... ) --> [pre-success] Success(0xRET)
 *   SYSCALL[PID,TID](NR) sys_NAME ( ARG, ... )[sync] --> Success(0xRET)
 *   SYSCALL[PID,TID](NR) sys_NAME ( ARG, ... ) --> [async] ...
 *   SYSCALL[PID,TID](NR) ... [async] --> Success(0xRET)      (its completion)
 *
 * and Failure(0xERRNO) for a call that failed.  The x86-64 calls read
 * (arch/x86/entry/syscalls/syscall_64.tbl), each made a record once it
 * succeeded:
 *
 *   mmap(9)     mmap RET LEN PROT, flags from MAP_SHARED, MAP_ANONYMOUS
 *               (absent: `file`), MAP_GROWSDOWN (`stack`), MAP_HUGETLB
 *               (with MAP_HUGE_1GB: hugetlb1g); LEN rounded up to 4K as
 *               the kernel does (mm/mmap.c, do_mmap's PAGE_ALIGN)
 *   munmap(11), mprotect(10): as they are, LEN rounded up
 *   madvise(28) MADV_DONTNEED(4), MADV_HUGEPAGE(14), MADV_NOHUGEPAGE(15),
 *               MADV_COLLAPSE(25); other advice changes nothing modelled
 *   brk(12)     the heap: the first answer is its start; a move maps
 *               (or unmaps) the 4K pages between the old and new end
 *   mremap(25)  munmap of the old range, mmap of the new one, read-write
 *               anonymous (the contents move; the model's pages do not)
 *
 * Other calls, failed calls and ranges the text format would refuse
 * (beyond 2^57, a hugetlb range not 2M-aligned) give nothing.
 */
#ifndef MMUSIM_VGSYSCALL_H
#define MMUSIM_VGSYSCALL_H

#include <glib.h>
#include "record.h"

#define VG_SYSCALL_MAX_RECORDS 2 /* mremap: an munmap and an mmap */

typedef struct {
  uint64_t brk_start, brk_end; /* the heap: its start and mapped end (0: not yet known) */
  GHashTable *pending;         /* tid -> the call line of an [async] call, until it completes */
  uint64_t records;            /* made */
} VgSyscalls;

void vg_syscalls_init(VgSyscalls *s);
void vg_syscalls_clear(VgSyscalls *s);
/* TRUE when line (len bytes, no newline) is a `SYSCALL[` line; then out
 * gets the records it makes (*n of them, 0..VG_SYSCALL_MAX_RECORDS), for
 * trace process 1, thread 1. */
gboolean vg_syscall_line(VgSyscalls *s, const char *line, size_t len, TraceRecord *out, unsigned *n);

#endif
