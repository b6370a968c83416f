/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * workload_impl.h - between workload.c and the generators (gen_*.c).
 *
 * workload.c parses a spec into a WorkloadConfig (the common parameters and
 * the generator's own, checked against the tables below), and runs the part
 * every generator shares: the thread record, the mmap of the memory, the
 * setup writes, the ROI marks around the measured phase.  A generator only
 * says where each measured access goes.
 *
 * Adding a generator: write gen_NAME.c defining a const WorkloadGenerator
 * (name, one-line help, source, its own parameters with defaults, init/access/
 * free), declare it at the bottom of this file, and add one row to the
 * registry in workload.c.  Its state must be O(1) in `size`: a random order
 * comes from traces/perm.c or a PRNG, never from a stored array.
 */
#ifndef MMUSIM_WORKLOAD_IMPL_H
#define MMUSIM_WORKLOAD_IMPL_H

#include "registry.h"
#include "workload.h"

/* Every generated access moves one 8-byte word, as the loads and stores of
 * the benchmarks imitated (lmbench lat_mem_rd, GUPS, STREAM) do. */
#define WORKLOAD_WORD_BYTES 8
/* The setup phase writes one word per this many bytes, in address order: a
 * memset touches every cache line, and one store per line is what caches,
 * TLBs and the page-fault path see of it. */
#define WORKLOAD_SETUP_STRIDE_BYTES 64
/* The mapping is `size` rounded up to whole 2M huge pages, so THP and
 * hugetlbfs can back all of it (x86-64 PMD size). */
#define WORKLOAD_MAP_ALIGN_BYTES (2ULL << 20)
/* The smallest size: one 4K page. */
#define WORKLOAD_MIN_SIZE_BYTES 4096ULL
/* The mapping ends at or below 128T, the top of the 4-level user address
 * space (Documentation/arch/x86/x86_64/mm.rst), so size is at most 1T. */
#define WORKLOAD_VA_END 0x800000000000ULL

typedef enum {
  WPARAM_SIZE,     /* bytes; K/M/G/T powers of 1024; bounded by min..max */
  WPARAM_COUNT,    /* K/M/G powers of 1000; bounded by min..max */
  WPARAM_FRACTION, /* a real number in [0, 1] */
  WPARAM_CHOICE,   /* one of the '|'-separated choices; the value is its index */
} WorkloadParamType;

typedef struct {
  const char *key;
  WorkloadParamType type;
  const char *def;     /* default, as the user would write it */
  const char *choices; /* WPARAM_CHOICE: "random|seq" */
  uint64_t min, max;   /* WPARAM_SIZE, WPARAM_COUNT */
  const char *help;    /* one line for `mmusim list workloads` */
} WorkloadParam;

typedef union {
  uint64_t u;      /* SIZE, COUNT */
  double frac;     /* FRACTION */
  unsigned choice; /* CHOICE: index into the choices */
} WorkloadValue;

#define WORKLOAD_MAX_OWN_PARAMS 12
/* Most threads a multi-threaded generator starts (threads, jbb): beyond the
 * 512 of seed 001's test; each costs the generator and the engine a little
 * host state of its own. */
#define WORKLOAD_THREADS_MAX 4096

typedef struct WorkloadGenerator WorkloadGenerator;

typedef struct {
  /* Set by workload.c before init. */
  const WorkloadGenerator *gen;
  uint64_t size_bytes; /* memory the generator works on, from WORKLOAD_BASE_VA */
  uint64_t accesses;   /* measured accesses */
  uint64_t seed;
  uint32_t gap;        /* instructions before each measured access */
  gboolean hugetlb;    /* backing=hugetlb */
  gboolean accesses_given; /* accesses= was in the spec (not the default) */
  gboolean size_given;     /* size= was in the spec */
  WorkloadValue own[WORKLOAD_MAX_OWN_PARAMS];          /* in the order of gen->params */
  gboolean own_given[WORKLOAD_MAX_OWN_PARAMS];         /* which of them the spec gave */
  const char *own_text[WORKLOAD_MAX_OWN_PARAMS];       /* the same, normalised text */
  const char *const *common_text;                      /* the common ones' text, in their table's order */
  /* May be changed by init: the setup phase writes a word at
   * map_va + k * setup_stride_bytes for k < setup_writes (or where the
   * generator's setup hook says).  Defaults: every
   * WORKLOAD_SETUP_STRIDE_BYTES that fit in size. */
  uint64_t setup_stride_bytes;
  uint64_t setup_writes;
  /* May be changed by init: the one mapping, at map_va, map_len bytes, with
   * the MAP_F_* flags map_flags.  Defaults: WORKLOAD_BASE_VA, size rounded
   * up to WORKLOAD_MAP_ALIGN_BYTES, MAP_F_HUGETLB for backing=hugetlb.  And
   * `accesses`, when the generator decides the measured phase's length
   * itself, `size_bytes`, when the generator's own parameters decide the
   * memory, and an own size or count that init derives from the others
   * (the description then shows the new values). */
  uint64_t map_va, map_len;
  uint8_t map_flags;
  /* May be changed by init: the CPU of the first thread record (pid 1,
   * tid 1); -1 (the default) lets the scheduler place it. */
  int32_t main_cpu;
} WorkloadConfig;

/* A generator: one row of the registry in workload.c (base/registry.h);
 * help is its line in `mmusim list workloads`. */
struct WorkloadGenerator {
  REGISTRY_ROW;
  const WorkloadParam *params; /* its own parameters; ends with { NULL } */
  /* Check the own parameters against the common ones, return the state
   * (NULL with *error set on a bad combination). */
  gpointer (*init)(WorkloadConfig *cfg, GError **error);
  /* Fill in the next measured access: `r` arrives as an 8-byte load of
   * pid 1, tid 1 with the gap set; set addr and, if needed, kind (and tid,
   * for a generator of several threads). */
  void (*access)(gpointer state, TraceRecord *r);
  void (*free)(gpointer state);
  /* Optional: fill in setup write k (< setup_writes): `r` arrives as an
   * 8-byte store of pid 1, tid 1 with gap 0; set addr (and tid).  A
   * generator of several threads also starts them here: it turns `r` into
   * their thread records (type REC_THREAD, size 0, tid, arg = cpu or -1),
   * each before the thread's first access.  NULL: address order from
   * map_va. */
  void (*setup)(gpointer state, uint64_t k, TraceRecord *r);
  /* Optional: the next n measured accesses at once, into r[0..n-1], each
   * starting as a copy of *proto (what `access` receives): the same
   * records and state as n calls of `access`, in one loop with the state
   * in registers, instead of a call per record.  NULL: `access` each. */
  void (*access_batch)(gpointer state, const TraceRecord *proto, TraceRecord *r, unsigned n);
  /* Whether its records name threads other than pid 1, tid 1 (its access
   * or setup hook sets tid, or makes thread records).  FALSE: every batch
   * without the first thread record is one thread's, which the source
   * says in the batch (TraceBatch.threads) so that the engine need not
   * scan it; tests/traces/test_workload.c checks each generator's answer
   * against the scan. */
  gboolean several_threads;
};

/* Set a TRACE_ERROR_WORKLOAD error "workload NAME: bad value 'TEXT' for KEY;
 * expected EXPECTED" for one of the generator's own parameters or a common
 * one; returns NULL so that init can `return workload_reject(...)`. */
gpointer workload_reject(const WorkloadConfig *cfg, const char *key, const char *expected, GError **error);

/* Loads and stores in a given ratio, spread evenly: a Bresenham accumulator
 * in units of 2^-32, so rw=0.25 makes exactly every fourth access a store. */
typedef struct {
  uint64_t acc, step;
} WorkloadMix;

void workload_mix_init(WorkloadMix *m, double store_fraction);

static inline AccessKind workload_mix_next(WorkloadMix *m)
{
  m->acc += m->step;
  if (m->acc >> 32) {
    m->acc -= 1ULL << 32;
    return ACC_STORE;
  }
  return ACC_LOAD;
}

/* TRUE when workload_mix_next returns ACC_LOAD every time and leaves the
 * mix as it is (rw=0: acc starts at 0 and a step of 0 never carries), so
 * that a batch loop can skip it. */
static inline gboolean workload_mix_loads_only(const WorkloadMix *m)
{
  return m->step == 0 && (m->acc >> 32) == 0;
}

/* The generators (one file each). */
/* Every generator, in `mmusim list workloads` order (*n of them): for
 * tests that must cover each. */
const WorkloadGenerator *const *workload_generators(unsigned *n);

extern const WorkloadGenerator gen_ptrchase;
extern const WorkloadGenerator gen_random;
extern const WorkloadGenerator gen_seq;
extern const WorkloadGenerator gen_stream;
extern const WorkloadGenerator gen_video;
extern const WorkloadGenerator gen_gups;
extern const WorkloadGenerator gen_hashjoin;
extern const WorkloadGenerator gen_graph;
extern const WorkloadGenerator gen_threads;
extern const WorkloadGenerator gen_jbb;

#endif
