/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_bench.h - `mmusim host bench`: native microbenchmarks of the host's
 * memory and translation, in C, timed by the clock alone (no perf counters).
 *
 * Two kernels, each over a range of spans, each with 4K pages
 * (MADV_NOHUGEPAGE) and with transparent huge pages (MADV_HUGEPAGE):
 *
 *  - chase: a dependent pointer chase, one pointer per 64-byte slot (one per
 *    cache line), the slots linked into one random cycle.  It is the access
 *    pattern of the model's `ptrchase:size=SPAN,line=64,order=random,seed=S`
 *    (traces/gen_ptrchase.c): the same keyed permutation (traces/perm.h),
 *    slot perm(k) points to slot perm(k+1), the walk starts at perm(0), and
 *    the chain is written once in address order before the clock starts.
 *  - random: independent loads of random slots of the same buffer (a
 *    splitmix64 stream), as many in flight as the core allows: the
 *    throughput counterpart of the chase's latency.
 *
 * Each point is warmed up, then timed `repeats` times with
 * clock_gettime(CLOCK_MONOTONIC), each repeat long enough to run about
 * HOST_BENCH_TARGET_S.  A shared host deschedules the thread now and then;
 * a repeat is timed in short slices and only those the thread ran through
 * (CLOCK_THREAD_CPUTIME_ID close to the wall time) count.  The report gives the median and the spread (min, max,
 * standard deviation).  With THP the huge share of the buffer is read from
 * AnonHugePages of its mapping in /proc/self/smaps, and a point the host
 * backed with fewer huge pages than it spans says so.
 *
 * Left out: hardware counters (perf), pinning to a CPU, and the noise of a
 * shared host (the spread shows it).
 */
#ifndef MMUSIM_HOST_BENCH_H
#define MMUSIM_HOST_BENCH_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

/* Bytes per chain element: one cache line, ptrchase's default `line`. */
#define HOST_BENCH_SLOT_BYTES 64
/* host_bench_random draws a slot with a 32x32-bit multiply: 2^32 slots. */
#define HOST_BENCH_MAX_SPAN ((uint64_t)HOST_BENCH_SLOT_BYTES << 32)
/* Default spans: 16 MiB to 4 GiB, each four times the last. */
#define HOST_BENCH_DEFAULT_SPANS "16M,64M,256M,1G,4G"
#define HOST_BENCH_DEFAULT_REPEATS 5
/* Buffers each point is measured on, each mapped afresh: a guest's memory is
 * backed by its host page by page, and where a buffer lands (its host pages,
 * their size, their DRAM) moves a point by more than its repeats spread
 * (doc/host-bench.md, "Buffers"); 4K and THP take turns, buffer by buffer. */
#define HOST_BENCH_DEFAULT_BUFFERS 3
/* Host time each timed repeat aims at (the issue asks for 0.2-0.5 s). */
#define HOST_BENCH_TARGET_S 0.3
/* The seed of the chain: ptrchase's own default seed, so that the native
 * chase and the model's generated one are the same cycle. */
#define HOST_BENCH_SEED 1
/* A span is measured only when it leaves this share of MemAvailable free. */
#define HOST_BENCH_MEM_SHARE 0.5
/* A point during which the other CPUs were busy for more than this share of
 * their time is flagged: they share the LLC (and, for SMT siblings, the L2
 * and the TLBs) with the bench.  On the development guest a build on its
 * other vCPU made the 4 GiB chase 2.4 to 3.3 times slower (doc/host-bench.md,
 * "A quiet host"). */
#define HOST_BENCH_OTHERS_BUSY_OK 0.1
/* A THP point whose huge share is below this is flagged "fewer huge pages". */
#define HOST_BENCH_HUGE_OK 0.9

typedef enum { HOST_BENCH_CHASE, HOST_BENCH_RANDOM, HOST_BENCH_N_KINDS } HostBenchKind;
typedef enum { HOST_BENCH_4K, HOST_BENCH_THP, HOST_BENCH_N_PAGES } HostBenchPages;

typedef struct {
  HostBenchKind kind;
  HostBenchPages pages;
  uint64_t span_bytes;
  uint64_t accesses;          /* per timed repeat */
  unsigned repeats;           /* all of them: buffers x the spec's repeats */
  double *ns_per_access;      /* repeats of them, buffer by buffer */
  unsigned buffers;           /* freshly mapped buffers the repeats were spread over */
  double *buffer_median_ns;   /* the median of each buffer's repeats, buffers of them */
  double median_ns, min_ns, max_ns, stddev_ns;
  double ran_share;           /* thread CPU time / wall time over the repeats */
  double others_busy;         /* the share of the other CPUs' time they were busy meanwhile (/proc/stat), mean over the buffers */
  uint64_t anon_huge_bytes;   /* AnonHugePages of the buffer after the run */
  double huge_fraction;       /* anon_huge_bytes / span_bytes */
} HostBenchPoint;

typedef struct {
  const uint64_t *spans;      /* bytes, n_spans of them, each a multiple of the slot */
  guint n_spans;
  unsigned repeats;           /* >= 1, on each buffer */
  unsigned buffers;           /* >= 1: each point on this many freshly mapped buffers */
  double target_s;            /* host seconds per timed repeat */
  uint64_t seed;
  gboolean chase_only;        /* skip the random loads (validate needs the chase only) */
  FILE *progress;             /* a line per point, or NULL */
} HostBenchSpec;

typedef struct {
  HostBenchPoint *points;     /* n_points */
  guint n_points;
  uint64_t *skipped_spans;    /* spans left out for want of memory */
  guint n_skipped;
  uint64_t mem_available_bytes;
  char *thp_enabled;          /* /sys/kernel/mm/transparent_hugepage/enabled, or NULL */
  char *cpu_model;            /* /proc/cpuinfo "model name", or NULL */
  char *kernel;               /* uname -r */
  gboolean virtualised;       /* /proc/cpuinfo flags name "hypervisor" */
  uint64_t seed;
} HostBenchResult;

/* ---- the pieces, pure and testable at a tiny span ---------------------- */

/* Link n slots of slot_words 64-bit words each, at buf, into ptrchase's
 * cycle: slot perm(k) holds the address of slot perm(k+1).  Written in
 * address order.  Returns the first slot of the walk, perm(0). */
uintptr_t host_bench_chain_build(uintptr_t *buf, uint64_t n, uint64_t slot_words, uint64_t seed);
/* Follow the chain `steps` times from p; returns where it ended. */
uintptr_t host_bench_chase(uintptr_t p, uint64_t steps);
/* `steps` independent loads of random slots of [buf, buf + n slots), n at
 * most 2^32; *state is the splitmix64 state.  Returns the sum of what was
 * loaded (so that no load is dead). */
uintptr_t host_bench_random(const uintptr_t *buf, uint64_t n, uint64_t slot_words, uint64_t steps, uint64_t *state);

/* AnonHugePages, in bytes, of the mappings of smaps text that overlap
 * [start, end).  FALSE with error set when the text is not smaps. */
gboolean host_bench_smaps_anon_huge(const char *smaps, uintptr_t start, uintptr_t end, uint64_t *bytes,
                                    GError **error);

/* Median, min, max and standard deviation of v[0..n). */
void host_bench_summarise(const double *v, unsigned n, double *median, double *min, double *max, double *stddev);

/* Parse "16M,64M,1G" (sizes as settings take them); each a multiple of
 * HOST_BENCH_SLOT_BYTES, at most HOST_BENCH_MAX_SPAN.  FALSE with a message naming the bad item. */
gboolean host_bench_parse_spans(const char *text, GArray **spans, GError **error);

const char *host_bench_kind_name(HostBenchKind k);
const char *host_bench_pages_name(HostBenchPages p);

/* ---- the measurement ------------------------------------------------ */

/* Measure every span, kind and page size. FALSE on a host error (mmap). */
gboolean host_bench_run(const HostBenchSpec *spec, HostBenchResult *out, GError **error);
void host_bench_result_clear(HostBenchResult *r);
/* The point of (kind, pages, span), or NULL. */
const HostBenchPoint *host_bench_find(const HostBenchResult *r, HostBenchKind kind, HostBenchPages pages,
                                      uint64_t span_bytes);

/* The line that says what the host is. */
/* The lowest and highest of a point's buffer medians (its median when it has
 * none). */
void host_bench_buffer_range(const HostBenchPoint *pt, double *lo, double *hi);
/* The comment line printed under a table with a point above
 * HOST_BENCH_OTHERS_BUSY_OK. */
void host_bench_append_busy_warning(GString *out);
/* Parse /proc/stat's first ("cpu") line: the busy and the total time of all
 * CPUs in its units (USER_HZ); busy is all but idle and iowait (proc(5)). */
gboolean host_bench_parse_stat(const char *text, uint64_t *busy, uint64_t *total);
void host_bench_print_host(const HostBenchResult *r, GString *out);
/* The host line, a legend and the table, as text. */
void host_bench_print(const HostBenchResult *r, GString *out);
/* {"host":{...},"points":[{...}]}, newline-terminated. */
char *host_bench_json(const HostBenchResult *r);
/* The "host" object's members, added to an open JSON object (validate reuses it). */
struct _JsonBuilder;
void host_bench_json_host(const HostBenchResult *r, struct _JsonBuilder *jb);

/* The finished builder's JSON, pretty, newline-terminated. */
char *host_bench_json_text(struct _JsonBuilder *jb);

/* ---- the options bench and validate share -------------------------------- */

typedef struct {
  char *spans_text;
  int repeats;
  int buffers;
  double seconds;
  gboolean json, quiet;
  GArray *spans;              /* of uint64_t: --spans parsed */
} HostBenchOptions;

/* Defaults, and their option rows added to ctx's main group. */
void host_bench_options_add(GOptionContext *ctx, HostBenchOptions *o);
/* Parse the command line; 0, or 2 after a message "mmusim: host CMD: ..."
 * naming the option at fault. */
int host_bench_options_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd, HostBenchOptions *o);
/* The spec of the options (pointers into o). */
HostBenchSpec host_bench_options_spec(const HostBenchOptions *o);
void host_bench_options_clear(HostBenchOptions *o);

/* `mmusim host bench ...` (argv[0] is "bench"): the exit status. */
int host_bench_main(int argc, char **argv);

#endif
