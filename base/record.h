/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.h - the one trace record every reader and generator produces.
 *
 * A TraceRecord is one line of the text format (doc/trace-format.md): a memory
 * access, a run of non-memory instructions, a mapping event, a policy event, a
 * thread placement or a region-of-interest mark.  Ordering guarantee: a source
 * yields records in the order the program issued them; records of different
 * threads may interleave, and each carries its process and thread id.
 */
#ifndef MMUSIM_RECORD_H
#define MMUSIM_RECORD_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  REC_ACCESS,    /* kind, addr, size, gap */
  REC_COMPUTE,   /* len = instructions */
  REC_MMAP,      /* addr, len, prot, flags; of a file mapping, arg2 = the file
                  * offset and path = the file's name, when the source knows them */
  REC_MUNMAP,    /* addr, len */
  REC_MPROTECT,  /* addr, len, prot */
  REC_MADVISE,   /* addr, len, arg = TraceAdvice */
  REC_PRCTL,     /* arg = TracePrctl, arg2 = value */
  REC_MEMPOLICY, /* addr, len, arg = TracePolicy, arg2 = node mask; flags
                  * MPOL_F_PROCESS: the process's policy, addr and len 0 */
  REC_THREAD,    /* pid, tid, arg = cpu (-1: let the scheduler place it) */
  REC_ROI_BEGIN,
  REC_ROI_END,
  N_REC_TYPES
} TraceRecordType;

typedef enum {
  ACC_LOAD,     /* R */
  ACC_STORE,    /* W */
  ACC_DEP_LOAD, /* D: address depends on an earlier load (arg: which, below) */
  ACC_IFETCH,   /* X */
} AccessKind;

/* prot bits */
enum { PROT_R = 1, PROT_W = 2, PROT_X = 4 };
/* mmap flags */
enum {
  MAP_F_STACK = 1,
  MAP_F_HUGETLB = 2,     /* hugetlbfs pages (2M unless MAP_F_HUGETLB_1G) */
  MAP_F_SHARED = 4,
  MAP_F_ONDEMAND = 8,    /* made by a reader, not the program */
  MAP_F_HUGETLB_1G = 16, /* with MAP_F_HUGETLB: 1G pages (MAP_HUGE_1GB) */
  MAP_F_FILE = 32,       /* file-backed (an mmap with a file descriptor): never THP-eligible */
};

typedef enum { ADV_HUGEPAGE, ADV_NOHUGEPAGE, ADV_DONTNEED, ADV_COLLAPSE } TraceAdvice;
typedef enum { PRCTL_THP_DISABLE } TracePrctl;
/* Trace codes of the memory policy modes (kernel/mempolicy_mode.h): kept in
 * .mtr files, so a code is never reused and a new mode takes the next. */
typedef enum {
  MPOL_DEFAULT_LOCAL,
  MPOL_BIND,
  MPOL_PREFERRED,
  MPOL_INTERLEAVE,
  MPOL_WEIGHTED_INTERLEAVE,
  MPOL_PREFERRED_MANY,
} TracePolicy;
/* flags of REC_MEMPOLICY: MPOL_F_PROCESS, set_mempolicy (the whole
 * process), not mbind; MPOL_F_BALANCING, the mode flag
 * MPOL_F_NUMA_BALANCING (a mode that takes it: kernel/mempolicy_mode.h) */
enum { MPOL_F_PROCESS = 1, MPOL_F_BALANCING = 2 };

/* The load an ACC_DEP_LOAD waits for, in its record's arg: how many loads
 * (R and D records of the thread) lie between that load and this one.  0
 * is the previous load, what a D line of the text format and a D record of
 * .mtr always mean; the ChampSim reader, which follows register
 * dependences, gives more (traces/champsim.c).  A CPU remembers when each
 * of its last TRACE_DEP_LOADS loads completes (sim/cpu.h); a load further
 * back is taken as complete, and a reader gives no distance beyond
 * TRACE_DEP_MAX_DISTANCE, writing a plain load instead. */
#define TRACE_DEP_LOADS 256
#define TRACE_DEP_MAX_DISTANCE (TRACE_DEP_LOADS - 1)

typedef struct {
  uint8_t type;   /* TraceRecordType */
  uint8_t kind;   /* AccessKind for REC_ACCESS */
  uint8_t prot;   /* PROT_* for REC_MMAP, REC_MPROTECT */
  uint8_t flags;  /* MAP_F_* for REC_MMAP, MPOL_F_* for REC_MEMPOLICY */
  uint32_t size;  /* bytes of an access */
  uint32_t pid;
  uint32_t tid;
  /* An mmap has no gap and no arg, and only an mmap has a path: the two
   * share their 8 bytes, which keeps the record at 48 bytes (below).  A
   * source makes an mmap record with gap and arg 0 unless it sets path
   * (every reader clears a record first), so path is NULL or a name. */
  union {
    struct {
      uint32_t gap; /* non-memory instructions before an access */
      int32_t arg;  /* advice, prctl option, policy, cpu; for ACC_DEP_LOAD
                     * the loads between its producer and it (above) */
    };
    const char *path; /* of REC_MMAP with MAP_F_FILE: the file's name, or
                       * NULL when unknown; interned and owned by the source
                       * that made the record (valid until it is freed), at
                       * most TRACE_PATH_MAX bytes, no NUL; any other bytes
                       * (a Linux path is bytes, not always UTF-8) */
  };
  uint64_t addr;
  uint64_t len;   /* bytes of a mapping event; instructions of REC_COMPUTE */
  uint64_t arg2;  /* prctl value, node mask; of an access, the address of
                   * its instruction when the source knows it (lackey,
                   * ChampSim: traces/insnstream.h), else 0; of an mmap with
                   * MAP_F_FILE, the offset in the file (a multiple of 4K,
                   * mmap's last argument) */
} TraceRecord;

/* Records pass from a reader or generator through batches of
 * TRACE_BATCH_MAX (traces/source.h), the decoding thread's ring and the
 * model's queues: at 56 bytes, with a path of its own, a replay took
 * 5.9 per cent more L1 data-cache misses and decoding 13.5 per cent more
 * (cachegrind; doc/performance.md, "The trace record's size"). */
G_STATIC_ASSERT(sizeof(TraceRecord) == 48);
G_STATIC_ASSERT(offsetof(TraceRecord, path) % sizeof(void *) == 0);

/* The longest path of a file mapping: PATH_MAX (include/uapi/linux/limits.h,
 * 4096 with its NUL) less the NUL.  Readers refuse longer ones. */
#define TRACE_PATH_MAX 4095

#endif
