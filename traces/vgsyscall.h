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
 *   SYSCALL[PID,TID](NR) sys_NAME ( ARG, ... )--PID-- MESSAGE   (with -v: a message
 *    --> [pre-success] Success(0xRET)                          cuts the line)
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
 *
 * File names.  The calls that name a file descriptor are followed so that
 * a file mapping knows its file: open(2) and openat(257) (the path valgrind
 * shows as "0xADDR(PATH)"; a relative one joined to openat's directory when
 * that descriptor is known, else kept relative, the program's working
 * directory being the recorder's), dup(32), dup2(33), dup3(292),
 * fcntl(72) F_DUPFD and F_DUPFD_CLOEXEC, close(3).  mmap's fourth and
 * fifth arguments (fd, offset) then give TraceRecord.path and arg2.  A
 * descriptor opened otherwise (inherited, socket, memfd_create, a path
 * valgrind cannot show) gives a `file` mapping without name.  A path that
 * holds "), " is cut there (valgrind does not quote it).
 *
 * The mappings made before the first system call: the program and its
 * interpreter (ld.so) are mapped before valgrind traces a call, so no
 * SYSCALL line names them.  valgrind -v -v (which the recorder gives)
 * writes to the log, for each object it reads symbols of
 * (coregrind/m_debuginfo/debuginfo.c, di_notify_ACHIEVE_ACCEPT_STATE):
 *
 *   --PID-- Reading syms from /usr/bin/true
 *   --PID--    svma 0x0000001080, avma 0x0000109080
 *
 * the address the object's text was linked at (svma) and loaded at (avma).
 * Before the first SYSCALL line, each such object but valgrind's own tool
 * (under the "Valgrind library directory" line's folder) becomes the
 * mappings of its ELF PT_LOAD segments moved by avma - svma, read from the
 * file itself (base/elfload.c; a 64-bit little-endian file, as the x86-64
 * calls read imply): `mmap START LEN PROT file offset=O path=NAME`, at most
 * VG_SYSCALL_MAX_RECORDS segments.  The file must be at hand when the log is
 * read (always so for `mmusim record`; a lackey log read elsewhere may name
 * files that are not, whose mappings are then left out).  Still unknown:
 * the main stack (made up on first touch, `ondemand`, as before), the
 * vdso (valgrind gives the program none on amd64) and the initial brk page.
 */
#ifndef MMUSIM_VGSYSCALL_H
#define MMUSIM_VGSYSCALL_H

#include <glib.h>
#include "record.h"

#define VG_SYSCALL_MAX_RECORDS 6 /* mremap: an munmap and an mmap; an object loaded before: its PT_LOADs */

typedef struct {
  uint64_t brk_start, brk_end; /* the heap: its start and mapped end (0: not yet known) */
  GHashTable *pending;         /* tid -> the call line of an [async] call, until it completes */
  uint64_t records;            /* made */
  GHashTable *paths;           /* the file names given in records (trace_path_intern) */
  GHashTable *fds;             /* open descriptor -> its file's name (one of paths) */
  gboolean started;            /* a SYSCALL line was seen: -v's startup lines are over */
  char *libdir;                /* valgrind's library folder (its tool), from -v */
  const char *reading;         /* the object of the last "Reading syms from", or NULL */
  char *split;                 /* a call line a -v message cut, until its " --> " rest */
} VgSyscalls;

void vg_syscalls_init(VgSyscalls *s);
void vg_syscalls_clear(VgSyscalls *s);
/* TRUE when line (len bytes, no newline) is a `SYSCALL[` line or a -v
 * line that made records; then out
 * gets the records it makes (*n of them, 0..VG_SYSCALL_MAX_RECORDS), for
 * trace process 1, thread 1. */
gboolean vg_syscall_line(VgSyscalls *s, const char *line, size_t len, TraceRecord *out, unsigned *n);

#endif
