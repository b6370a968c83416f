/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_bench.c - native microbenchmarks of the host: a pointer chase and
 * independent random loads over a span, with 4K pages and with THP.
 *
 * The chase is lmbench's lat_mem_rd in its random form (McVoy and Staelin,
 * USENIX 1996) and the chain is the model's ptrchase (traces/gen_ptrchase.c,
 * same permutation, slot size and seed), so that `mmusim host validate` can
 * set the two side by side.  Page sizes are asked for with madvise(2):
 * MADV_NOHUGEPAGE for 4K, MADV_HUGEPAGE for THP, which the host honours when
 * /sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise"; what
 * it gave is read back from AnonHugePages in /proc/self/smaps (proc(5)).
 * The buffer is aligned to the PMD size
 * (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size) so that every part of
 * it can be huge.
 *
 * Left out: perf counters, CPU pinning, and 1G pages (hugetlbfs).
 */
#include "config.h"
#include "host_bench.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "errors.h"
#include "outfile.h"
#include "perm.h"
#include "settings.h"

/* The PMD size when sysfs does not say (x86-64 and arm64 with 4K pages). */
#define HOST_BENCH_PMD_FALLBACK (2ULL << 20)
/* Warm-up: one trip around the chain, at most this many steps. */
#define HOST_BENCH_WARMUP_MAX (1ULL << 20)
/* A timed repeat makes at least this many accesses, however slow they are. */
#define HOST_BENCH_MIN_ACCESSES 1000
/* Host seconds per slice of a timed repeat (timed_repeat). */
#define HOST_BENCH_SLICE_S 0.001
/* A slice counts when the thread ran for this share of its wall time. */
#define HOST_BENCH_RAN_SHARE 0.95
/* A repeat gives up waiting for clean slices after this many targets. */
#define HOST_BENCH_PATIENCE 4

const char *host_bench_kind_name(HostBenchKind k)
{
  return k == HOST_BENCH_CHASE ? "chase" : "random";
}

const char *host_bench_pages_name(HostBenchPages p)
{
  return p == HOST_BENCH_4K ? "4K" : "THP";
}

/* ---- the kernels ---------------------------------------------------------- */

uintptr_t host_bench_chain_build(uintptr_t *buf, uint64_t n, uint64_t slot_words, uint64_t seed)
{
  Perm perm;
  perm_init(&perm, n, seed);
  /* In address order, as ptrchase's setup writes: slot i is perm(k) for
   * k = perm^-1(i), and points to perm(k + 1). */
  for (uint64_t i = 0; i < n; i++) {
    uint64_t k = perm_invert(&perm, i);
    uint64_t next = perm_apply(&perm, k + 1 == n ? 0 : k + 1);
    buf[i * slot_words] = (uintptr_t)&buf[next * slot_words];
  }
  return (uintptr_t)&buf[perm_apply(&perm, 0) * slot_words];
}

uintptr_t host_bench_chase(uintptr_t p, uint64_t steps)
{
  while (steps--)
    p = *(const uintptr_t *)p;
  return p;
}

uintptr_t host_bench_random(const uintptr_t *buf, uint64_t n, uint64_t slot_words, uint64_t steps, uint64_t *state)
{
  uintptr_t sum = 0;
  while (steps--) {
    /* Lemire's multiply-shift maps 32 random bits onto [0, n). */
    uint64_t slot = ((perm_splitmix64(state) >> 32) * n) >> 32;
    sum += buf[slot * slot_words];
  }
  return sum;
}

/* ---- /proc/self/smaps ------------------------------------------------------ */

/* A mapping's first line: "START-END perms ...", START and END lowercase hex. */
static gboolean smaps_header(const char *line, uint64_t *start, uint64_t *end)
{
  const char *dash = line;
  while (g_ascii_isxdigit(*dash) && !g_ascii_isupper(*dash))
    dash++;
  if (dash == line || *dash != '-')
    return FALSE;
  char *stop;
  *start = g_ascii_strtoull(line, &stop, 16);
  if (stop != dash)
    return FALSE;
  *end = g_ascii_strtoull(dash + 1, &stop, 16);
  return stop != dash + 1 && *stop == ' ';
}

gboolean host_bench_smaps_anon_huge(const char *smaps, uintptr_t start, uintptr_t end, uint64_t *bytes,
                                    GError **error)
{
  g_auto(GStrv) lines = g_strsplit(smaps, "\n", -1);
  gboolean in_range = FALSE, any = FALSE;
  *bytes = 0;
  for (guint i = 0; lines[i]; i++) {
    uint64_t lo, hi;
    if (smaps_header(lines[i], &lo, &hi)) {
      any = TRUE;
      in_range = lo < end && hi > start;
    } else if (in_range && g_str_has_prefix(lines[i], "AnonHugePages:")) {
      char *stop;
      uint64_t kb = g_ascii_strtoull(lines[i] + strlen("AnonHugePages:"), &stop, 10);
      while (*stop == ' ')
        stop++;
      if (strcmp(stop, "kB") != 0) {
        g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_IO, "smaps line %u: '%s' is not \"AnonHugePages: N kB\"",
                    i + 1, lines[i]);
        return FALSE;
      }
      *bytes += kb * 1024;
    }
  }
  if (!any) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_IO, "smaps text holds no mapping line (START-END perms ...)");
    return FALSE;
  }
  return TRUE;
}

/* ---- statistics ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void host_bench_summarise(const double *v, unsigned n, double *median, double *min, double *max, double *stddev)
{
  *median = *min = *max = *stddev = 0;
  if (n == 0)
    return;
  g_autofree double *s = g_memdup2(v, n * sizeof *v);
  qsort(s, n, sizeof *s, cmp_double);
  *median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  *min = s[0];
  *max = s[n - 1];
  double mean = 0, ss = 0;
  for (unsigned i = 0; i < n; i++)
    mean += s[i] / n;
  for (unsigned i = 0; i < n; i++)
    ss += (s[i] - mean) * (s[i] - mean);
  *stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
}

gboolean host_bench_parse_spans(const char *text, GArray **spans, GError **error)
{
  g_auto(GStrv) items = g_strsplit(text, ",", -1);
  g_autoptr(GArray) a = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  for (guint i = 0; items[i]; i++) {
    uint64_t v;
    if (!settings_parse_size(g_strstrip(items[i]), &v) || v == 0 || v % HOST_BENCH_SLOT_BYTES ||
        v > HOST_BENCH_MAX_SPAN) {
      g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE,
                  "--spans: '%s' is not a span; give sizes such as 16M,1G: multiples of %d bytes, at most 256G",
                  items[i], HOST_BENCH_SLOT_BYTES);
      return FALSE;
    }
    g_array_append_val(a, v);
  }
  if (a->len == 0) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_USAGE, "--spans: give at least one size, e.g. 16M,1G");
    return FALSE;
  }
  *spans = g_steal_pointer(&a);
  return TRUE;
}

/* ---- what the host says about itself ---------------------------------- */

/* The first line of a small file, stripped; NULL when it cannot be read. */
static char *read_line(const char *path)
{
  char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return NULL;
  char *nl = strchr(text, '\n');
  if (nl)
    *nl = '\0';
  return g_strstrip(text);
}

/* The value of "key:" in /proc/meminfo or /proc/cpuinfo text (first match). */
static char *proc_field(const char *text, const char *key)
{
  size_t len = strlen(key);
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, key, len) == 0 && (l[len] == ':' || l[len] == ' ' || l[len] == '\t')) {
      const char *colon = strchr(l, ':');
      const char *nl = strchr(l, '\n');
      if (!colon || (nl && colon > nl))
        continue;
      char *v = g_strndup(colon + 1, nl ? (gsize)(nl - colon - 1) : strlen(colon + 1));
      return g_strstrip(v);
    }
  }
  return NULL;
}

static void describe_host(HostBenchResult *r)
{
  g_autofree char *meminfo = NULL, *cpuinfo = NULL;
  if (g_file_get_contents("/proc/meminfo", &meminfo, NULL, NULL)) {
    g_autofree char *avail = proc_field(meminfo, "MemAvailable");
    if (avail)
      r->mem_available_bytes = g_ascii_strtoull(avail, NULL, 10) * 1024;
  }
  if (g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL)) {
    r->cpu_model = proc_field(cpuinfo, "model name");
    if (!r->cpu_model)
      r->cpu_model = proc_field(cpuinfo, "cpu"); /* ppc64 */
    g_autofree char *flags = proc_field(cpuinfo, "flags");
    r->virtualised = flags && (strstr(flags, " hypervisor") || g_str_has_prefix(flags, "hypervisor"));
  }
  r->thp_enabled = read_line("/sys/kernel/mm/transparent_hugepage/enabled");
  struct utsname u;
  r->kernel = g_strdup(uname(&u) == 0 ? u.release : "unknown");
}

static uint64_t pmd_bytes(void)
{
  g_autofree char *t = read_line("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  uint64_t v = t ? g_ascii_strtoull(t, NULL, 10) : 0;
  return v && !(v & (v - 1)) ? v : HOST_BENCH_PMD_FALLBACK;
}

/* ---- one span, one page size ----------------------------------------- */

static double clock_s(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The result of the kernels goes here, so that none of their loads is dead. */
static volatile uintptr_t host_bench_sink;

/* Run one kernel `steps` times; its host seconds by CLOCK_MONOTONIC, and in
 * *cpu_s the seconds this thread ran meanwhile.  *pos carries the chase. */
static double run_kernel(HostBenchKind kind, const uintptr_t *buf, uint64_t n, uintptr_t *pos, uint64_t *rng,
                         uint64_t steps, double *cpu_s)
{
  const uint64_t words = HOST_BENCH_SLOT_BYTES / sizeof(uintptr_t);
  double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), t0 = clock_s(CLOCK_MONOTONIC);
  if (kind == HOST_BENCH_CHASE)
    *pos = host_bench_chase(*pos, steps);
  else
    host_bench_sink += host_bench_random(buf, n, words, steps, rng);
  double t = clock_s(CLOCK_MONOTONIC) - t0;
  *cpu_s = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
  host_bench_sink += *pos;
  return t;
}

/* One timed repeat, in slices of about HOST_BENCH_SLICE_S.  On a shared host
 * the thread is descheduled now and then, and CLOCK_MONOTONIC counts that
 * time as if the loads took it: a slice counts only when the thread ran for
 * at least HOST_BENCH_RAN_SHARE of it (CLOCK_THREAD_CPUTIME_ID), until
 * `accesses` counted or HOST_BENCH_PATIENCE times the target passed (then
 * every slice counts).  Returns ns per access; *ran the share of the wall
 * time the thread ran. */
static double timed_repeat(HostBenchKind kind, const uintptr_t *buf, uint64_t n, uintptr_t *pos, uint64_t *rng,
                           uint64_t accesses, uint64_t slice, double target_s, double *ran)
{
  double kept_s = 0, all_s = 0, all_cpu = 0;
  uint64_t kept = 0, all = 0;
  while (kept < accesses && all_s < HOST_BENCH_PATIENCE * target_s) {
    double cpu, t = run_kernel(kind, buf, n, pos, rng, slice, &cpu);
    all_s += t;
    all_cpu += cpu;
    all += slice;
    if (cpu >= HOST_BENCH_RAN_SHARE * t) {
      kept_s += t;
      kept += slice;
    }
  }
  *ran = all_s > 0 ? all_cpu / all_s : 1;
  return kept >= accesses ? kept_s * 1e9 / (double)kept : all_s * 1e9 / (double)all;
}

static void measure_point(const HostBenchSpec *spec, HostBenchKind kind, const uintptr_t *buf, uint64_t n,
                          uintptr_t *pos, HostBenchPoint *pt)
{
  uint64_t rng = spec->seed;
  uint64_t warm = MIN(n, HOST_BENCH_WARMUP_MAX);
  double cpu, t = run_kernel(kind, buf, n, pos, &rng, warm, &cpu);
  double est_ns = MAX(MIN(t, cpu) * 1e9 / (double)warm, 0.1);
  pt->accesses = MAX((uint64_t)(spec->target_s * 1e9 / est_ns), HOST_BENCH_MIN_ACCESSES);
  uint64_t slice = MAX((uint64_t)(HOST_BENCH_SLICE_S * 1e9 / est_ns), HOST_BENCH_MIN_ACCESSES / 10);
  pt->repeats = spec->repeats;
  pt->ns_per_access = g_new0(double, spec->repeats);
  double ran_sum = 0;
  for (unsigned r = 0; r < spec->repeats; r++) {
    double ran;
    pt->ns_per_access[r] = timed_repeat(kind, buf, n, pos, &rng, pt->accesses, slice, spec->target_s, &ran);
    ran_sum += ran;
  }
  pt->ran_share = ran_sum / spec->repeats;
  host_bench_summarise(pt->ns_per_access, pt->repeats, &pt->median_ns, &pt->min_ns, &pt->max_ns, &pt->stddev_ns);
}

/* Append one buffer's measurement `add` to the point `pt` (its first when
 * pt->buffers is 0): repeats, the buffer's median, and the huge share as the
 * mean over the buffers. */
static void point_add_buffer(HostBenchPoint *pt, HostBenchPoint *add)
{
  unsigned b = pt->buffers, r = pt->repeats;
  pt->ns_per_access = g_renew(double, pt->ns_per_access, r + add->repeats);
  memcpy(pt->ns_per_access + r, add->ns_per_access, add->repeats * sizeof(double));
  pt->buffer_median_ns = g_renew(double, pt->buffer_median_ns, b + 1);
  pt->buffer_median_ns[b] = add->median_ns;
  pt->ran_share = (pt->ran_share * r + add->ran_share * add->repeats) / (r + add->repeats);
  pt->others_busy = (pt->others_busy * b + add->others_busy) / (b + 1);
  pt->anon_huge_bytes = (pt->anon_huge_bytes * b + add->anon_huge_bytes) / (b + 1);
  pt->accesses = MAX(pt->accesses, add->accesses);
  pt->repeats = r + add->repeats;
  pt->buffers = b + 1;
  pt->huge_fraction = (double)pt->anon_huge_bytes / (double)pt->span_bytes;
  host_bench_summarise(pt->ns_per_access, pt->repeats, &pt->median_ns, &pt->min_ns, &pt->max_ns, &pt->stddev_ns);
  g_free(add->ns_per_access);
  add->ns_per_access = NULL;
}

gboolean host_bench_parse_stat(const char *text, uint64_t *busy, uint64_t *total)
{
  guint64 v[8] = { 0 };
  /* user nice system idle iowait irq softirq steal (guest time is in user) */
  if (!text || sscanf(text, "cpu %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                      " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                      &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
    return FALSE;
  *total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
  *busy = *total - v[3] - v[4];
  return TRUE;
}

/* A snapshot of the host's CPUs for others_busy: /proc/stat's busy and total
 * seconds, this process's CPU seconds and the wall clock. */
typedef struct {
  gboolean ok;
  double busy_s, total_s, own_s, wall_s;
} StatSnap;

static StatSnap stat_snap(void)
{
  StatSnap s = { 0 };
  g_autofree char *text = NULL;
  uint64_t busy, total;
  long hz = sysconf(_SC_CLK_TCK);
  if (hz > 0 && g_file_get_contents("/proc/stat", &text, NULL, NULL) && host_bench_parse_stat(text, &busy, &total)) {
    s.ok = TRUE;
    s.busy_s = (double)busy / (double)hz;
    s.total_s = (double)total / (double)hz;
  }
  s.own_s = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  s.wall_s = clock_s(CLOCK_MONOTONIC);
  return s;
}

/* The share of the other CPUs' time they were busy between a and b: all
 * CPUs' busy time less this process's, over the other CPUs' wall time
 * (not /proc/stat's total less ours, which its 10 ms ticks leave near zero
 * but not zero on a host of one CPU).  0 on a host of one CPU, without
 * /proc/stat, or over less than a tick. */
static double others_busy(StatSnap a, StatSnap b)
{
  long online = sysconf(_SC_NPROCESSORS_ONLN), hz = sysconf(_SC_CLK_TCK);
  double others_total = (double)(online - 1) * (b.wall_s - a.wall_s);
  if (!a.ok || !b.ok || online < 2 || hz <= 0 || others_total < 1.0 / (double)hz)
    return 0;
  double others = (b.busy_s - a.busy_s) - (b.own_s - a.own_s);
  return CLAMP(others / others_total, 0.0, 1.0);
}

/* The point of (kind, pages, span) in points, appended empty when absent. */
static HostBenchPoint *point_of(GArray *points, HostBenchKind kind, HostBenchPages pages, uint64_t span)
{
  for (guint i = 0; i < points->len; i++) {
    HostBenchPoint *pt = &g_array_index(points, HostBenchPoint, i);
    if (pt->kind == kind && pt->pages == pages && pt->span_bytes == span)
      return pt;
  }
  HostBenchPoint pt = { .kind = kind, .pages = pages, .span_bytes = span };
  g_array_append_val(points, pt);
  return &g_array_index(points, HostBenchPoint, points->len - 1);
}

/* One freshly mapped buffer: map, advise, build the chain, measure each
 * kind, read AnonHugePages, unmap; the figures join the points of the span. */
static gboolean measure_buffer(const HostBenchSpec *spec, uint64_t span, HostBenchPages pages, unsigned buffer,
                               GArray *points, GError **error)
{
  uint64_t align = pmd_bytes();
  size_t len = span + align;
  char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    g_set_error(error, MMUSIM_SIM_ERROR, SIM_ERROR_IO, "host bench: mmap of %" G_GUINT64_FORMAT " bytes: %s; "
                "give smaller --spans", (guint64)len, g_strerror(errno));
    return FALSE;
  }
  uintptr_t *buf = (uintptr_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  /* Advice that the kernel does not know (THP compiled out) leaves 4K pages,
   * which AnonHugePages then shows. */
  (void)madvise(buf, span, pages == HOST_BENCH_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  uint64_t n = span / HOST_BENCH_SLOT_BYTES;
  uintptr_t pos = host_bench_chain_build(buf, n, HOST_BENCH_SLOT_BYTES / sizeof(uintptr_t), spec->seed);
  HostBenchPoint got[HOST_BENCH_N_KINDS] = { 0 };
  for (HostBenchKind k = 0; k < HOST_BENCH_N_KINDS; k++) {
    if (spec->chase_only && k != HOST_BENCH_CHASE)
      continue;
    got[k] = (HostBenchPoint){ .kind = k, .pages = pages, .span_bytes = span };
    StatSnap before = stat_snap();
    measure_point(spec, k, buf, n, &pos, &got[k]);
    got[k].others_busy = others_busy(before, stat_snap());
    if (spec->progress) {
      g_autofree char *span_text = settings_format_size(span);
      fprintf(spec->progress, "host bench: %-6s %6s %-3s buffer %u/%u %8.2f ns/access\n", host_bench_kind_name(k),
              span_text, host_bench_pages_name(pages), buffer + 1, spec->buffers, got[k].median_ns);
    }
  }
  uint64_t huge = 0;
  g_autofree char *smaps = NULL;
  GError *err = NULL;
  if (g_file_get_contents("/proc/self/smaps", &smaps, NULL, NULL) &&
      !host_bench_smaps_anon_huge(smaps, (uintptr_t)buf, (uintptr_t)buf + span, &huge, &err)) {
    g_warning("host bench: /proc/self/smaps: %s", err->message);
    g_error_free(err);
  }
  munmap(raw, len);
  for (HostBenchKind k = 0; k < HOST_BENCH_N_KINDS; k++) {
    if (spec->chase_only && k != HOST_BENCH_CHASE)
      continue;
    got[k].anon_huge_bytes = huge;
    point_add_buffer(point_of(points, k, pages, span), &got[k]);
  }
  return TRUE;
}

gboolean host_bench_run(const HostBenchSpec *spec, HostBenchResult *out, GError **error)
{
  memset(out, 0, sizeof *out);
  describe_host(out);
  out->seed = spec->seed;
  GArray *points = g_array_new(FALSE, TRUE, sizeof(HostBenchPoint));
  GArray *skipped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  gboolean ok = TRUE;
  for (guint s = 0; ok && s < spec->n_spans; s++) {
    uint64_t span = spec->spans[s];
    if (out->mem_available_bytes && (double)span > HOST_BENCH_MEM_SHARE * (double)out->mem_available_bytes) {
      g_array_append_val(skipped, span);
      continue;
    }
    /* 4K and THP take turns, buffer by buffer, so that a drift of the host
     * over the minutes of a span falls on both alike. */
    for (unsigned b = 0; ok && b < MAX(spec->buffers, 1u); b++)
      for (HostBenchPages p = 0; ok && p < HOST_BENCH_N_PAGES; p++)
        ok = measure_buffer(spec, span, p, b, points, error);
  }
  out->n_points = points->len;
  out->points = (HostBenchPoint *)(void *)g_array_free(points, FALSE);
  out->n_skipped = skipped->len;
  out->skipped_spans = (uint64_t *)(void *)g_array_free(skipped, FALSE);
  return ok;
}

void host_bench_result_clear(HostBenchResult *r)
{
  for (guint i = 0; i < r->n_points; i++) {
    g_free(r->points[i].ns_per_access);
    g_free(r->points[i].buffer_median_ns);
  }
  g_free(r->points);
  g_free(r->skipped_spans);
  g_free(r->thp_enabled);
  g_free(r->cpu_model);
  g_free(r->kernel);
  memset(r, 0, sizeof *r);
}

const HostBenchPoint *host_bench_find(const HostBenchResult *r, HostBenchKind kind, HostBenchPages pages,
                                      uint64_t span_bytes)
{
  for (guint i = 0; i < r->n_points; i++)
    if (r->points[i].kind == kind && r->points[i].pages == pages && r->points[i].span_bytes == span_bytes)
      return &r->points[i];
  return NULL;
}

/* ---- output ------------------------------------------------------------ */

void host_bench_append_busy_warning(GString *out)
{
  g_string_append_printf(out, "# busy: the other CPUs were busy for more than %.0f%% of their time during some "
                              "points; they share the caches (and, on SMT siblings, the L2 and the TLBs) with the "
                              "bench: measure again with the host quiet\n", 100 * HOST_BENCH_OTHERS_BUSY_OK);
}

void host_bench_buffer_range(const HostBenchPoint *pt, double *lo, double *hi)
{
  *lo = *hi = pt->median_ns;
  for (unsigned b = 0; b < pt->buffers; b++) {
    *lo = b ? MIN(*lo, pt->buffer_median_ns[b]) : pt->buffer_median_ns[b];
    *hi = b ? MAX(*hi, pt->buffer_median_ns[b]) : pt->buffer_median_ns[b];
  }
}

static gboolean fewer_huge(const HostBenchPoint *pt)
{
  return pt->pages == HOST_BENCH_THP && pt->huge_fraction < HOST_BENCH_HUGE_OK;
}

void host_bench_print_host(const HostBenchResult *r, GString *out)
{
  g_string_append_printf(out, "# host: %s, %s, kernel %s, THP enabled: %s, MemAvailable %.1f GiB\n",
                         r->cpu_model ? r->cpu_model : "unknown CPU",
                         r->virtualised ? "virtualised (CPUID hypervisor flag)" : "bare metal",
                         r->kernel, r->thp_enabled ? r->thp_enabled : "unknown",
                         (double)r->mem_available_bytes / (1 << 30));
}

void host_bench_print(const HostBenchResult *r, GString *out)
{
  host_bench_print_host(r, out);
  g_string_append_printf(out,
                         "# chase: dependent loads around a random cycle of %d-byte slots "
                         "(the model's ptrchase:line=%d,order=random,seed=%" G_GUINT64_FORMAT ")\n"
                         "# random: independent loads of random %d-byte slots\n"
                         "# ran%%: the share of the wall time the thread ran (the rest, the host ran others)\n"
                         "# busy%%: the share of the other CPUs' time they were busy meanwhile (they share the caches)\n",
                         HOST_BENCH_SLOT_BYTES, HOST_BENCH_SLOT_BYTES, (guint64)r->seed, HOST_BENCH_SLOT_BYTES);
  g_string_append(out, "# buffers: how many freshly mapped buffers, and the lowest and highest of their medians\n");
  g_string_append_printf(out, "%-6s %6s %-5s %10s %10s %10s %8s %17s %9s %5s %5s %7s\n", "kind", "span", "pages",
                         "median_ns", "min_ns", "max_ns", "stddev", "buffers", "accesses", "ran%", "busy%", "huge%");
  gboolean any_fewer = FALSE, any_busy = FALSE;
  for (guint i = 0; i < r->n_points; i++) {
    const HostBenchPoint *pt = &r->points[i];
    g_autofree char *span = settings_format_size(pt->span_bytes);
    gboolean fewer = fewer_huge(pt);
    any_fewer |= fewer;
    double lo, hi;
    host_bench_buffer_range(pt, &lo, &hi);
    g_autofree char *range = g_strdup_printf("%u: %.1f-%.1f", pt->buffers, lo, hi);
    any_busy |= pt->others_busy > HOST_BENCH_OTHERS_BUSY_OK;
    g_string_append_printf(out,
                           "%-6s %6s %-5s %10.2f %10.2f %10.2f %8.2f %17s %9" G_GUINT64_FORMAT " %5.0f %5.0f %6.1f%s\n",
                           host_bench_kind_name(pt->kind), span, host_bench_pages_name(pt->pages), pt->median_ns,
                           pt->min_ns, pt->max_ns, pt->stddev_ns, range, (guint64)pt->accesses, 100 * pt->ran_share,
                           100 * pt->others_busy,
                           100 * pt->huge_fraction, fewer ? "*" : "");
  }
  if (any_busy)
    host_bench_append_busy_warning(out);
  if (any_fewer)
    g_string_append_printf(out, "# *: the host gave fewer huge pages than the span holds (THP asked with "
                                "MADV_HUGEPAGE; see /sys/kernel/mm/transparent_hugepage)\n");
  for (guint i = 0; i < r->n_skipped; i++) {
    g_autofree char *span = settings_format_size(r->skipped_spans[i]);
    g_string_append_printf(out, "# span %s left out: more than %.0f%% of MemAvailable\n", span,
                           100 * HOST_BENCH_MEM_SHARE);
  }
}

void host_bench_json_host(const HostBenchResult *r, JsonBuilder *jb)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc();
  g_autofree char *date = g_date_time_format_iso8601(now);
  json_builder_set_member_name(jb, "cpu_model");
  json_builder_add_string_value(jb, r->cpu_model ? r->cpu_model : "unknown");
  json_builder_set_member_name(jb, "virtualised");
  json_builder_add_boolean_value(jb, r->virtualised);
  json_builder_set_member_name(jb, "kernel");
  json_builder_add_string_value(jb, r->kernel);
  json_builder_set_member_name(jb, "thp_enabled");
  json_builder_add_string_value(jb, r->thp_enabled ? r->thp_enabled : "unknown");
  json_builder_set_member_name(jb, "mem_available_bytes");
  json_builder_add_int_value(jb, (gint64)r->mem_available_bytes);
  json_builder_set_member_name(jb, "date");
  json_builder_add_string_value(jb, date);
  json_builder_set_member_name(jb, "seed");
  json_builder_add_int_value(jb, (gint64)r->seed);
  json_builder_set_member_name(jb, "slot_bytes");
  json_builder_add_int_value(jb, HOST_BENCH_SLOT_BYTES);
}

char *host_bench_json(const HostBenchResult *r)
{
  g_autoptr(JsonBuilder) jb = json_builder_new();
  json_builder_begin_object(jb);
  json_builder_set_member_name(jb, "host");
  json_builder_begin_object(jb);
  host_bench_json_host(r, jb);
  json_builder_end_object(jb);
  json_builder_set_member_name(jb, "points");
  json_builder_begin_array(jb);
  for (guint i = 0; i < r->n_points; i++) {
    const HostBenchPoint *pt = &r->points[i];
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "kind");
    json_builder_add_string_value(jb, host_bench_kind_name(pt->kind));
    json_builder_set_member_name(jb, "pages");
    json_builder_add_string_value(jb, host_bench_pages_name(pt->pages));
    json_builder_set_member_name(jb, "span_bytes");
    json_builder_add_int_value(jb, (gint64)pt->span_bytes);
    json_builder_set_member_name(jb, "accesses");
    json_builder_add_int_value(jb, (gint64)pt->accesses);
    json_builder_set_member_name(jb, "ns_per_access");
    json_builder_begin_array(jb);
    for (unsigned k = 0; k < pt->repeats; k++)
      json_builder_add_double_value(jb, pt->ns_per_access[k]);
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "buffer_median_ns");
    json_builder_begin_array(jb);
    for (unsigned k = 0; k < pt->buffers; k++)
      json_builder_add_double_value(jb, pt->buffer_median_ns[k]);
    json_builder_end_array(jb);
    const char *names[] = { "median_ns", "min_ns", "max_ns", "stddev_ns", "ran_share", "others_busy",
                            "huge_fraction" };
    const double values[] = { pt->median_ns, pt->min_ns, pt->max_ns, pt->stddev_ns, pt->ran_share, pt->others_busy,
                              pt->huge_fraction };
    for (unsigned k = 0; k < G_N_ELEMENTS(names); k++) {
      json_builder_set_member_name(jb, names[k]);
      json_builder_add_double_value(jb, values[k]);
    }
    json_builder_set_member_name(jb, "fewer_huge_pages");
    json_builder_add_boolean_value(jb, fewer_huge(pt));
    json_builder_end_object(jb);
  }
  json_builder_end_array(jb);
  json_builder_set_member_name(jb, "skipped_spans");
  json_builder_begin_array(jb);
  for (guint i = 0; i < r->n_skipped; i++)
    json_builder_add_int_value(jb, (gint64)r->skipped_spans[i]);
  json_builder_end_array(jb);
  json_builder_end_object(jb);
  return host_bench_json_text(jb);
}

char *host_bench_json_text(JsonBuilder *jb)
{
  g_autoptr(JsonNode) root = json_builder_get_root(jb);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_root(gen, root);
  json_generator_set_pretty(gen, TRUE);
  g_autofree char *text = json_generator_to_data(gen, NULL);
  return g_strconcat(text, "\n", NULL);
}

/* ---- the command ---------------------------------------------------------- */

void host_bench_options_add(GOptionContext *ctx, HostBenchOptions *o)
{
  *o = (HostBenchOptions){ .repeats = HOST_BENCH_DEFAULT_REPEATS, .buffers = HOST_BENCH_DEFAULT_BUFFERS,
                           .seconds = HOST_BENCH_TARGET_S };
  GOptionEntry entries[] = {
    { "spans", 0, 0, G_OPTION_ARG_STRING, &o->spans_text,
      "spans to measure (default " HOST_BENCH_DEFAULT_SPANS ")", "LIST" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &o->repeats, "timed repeats of each native point on each buffer (default 5)",
      "N" },
    { "buffers", 0, 0, G_OPTION_ARG_INT, &o->buffers,
      "freshly mapped buffers of each native point, 4K and THP in turn (default 3)", "N" },
    { "seconds", 0, 0, G_OPTION_ARG_DOUBLE, &o->seconds, "host seconds per timed repeat (default 0.3)", "S" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "print one JSON object", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "no progress lines on stderr", NULL },
    { NULL },
  };
  g_option_context_add_main_entries(ctx, entries, NULL);
}

int host_bench_options_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd, HostBenchOptions *o)
{
  GError *err = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &err) ||
      !host_bench_parse_spans(o->spans_text ? o->spans_text : HOST_BENCH_DEFAULT_SPANS, &o->spans, &err)) {
    fprintf(stderr, "mmusim: host %s: %s\n", cmd, err->message);
    g_error_free(err);
    return 2;
  }
  const char *bad = *argc > 1        ? "unexpected argument; see --help"
                    : o->repeats < 1 ? "--repeats: give 1 or more"
                    : o->buffers < 1 || o->buffers > 100 ? "--buffers: give 1 to 100"
                    : !(o->seconds > 0 && o->seconds <= 60) ? "--seconds: give a time above 0, at most 60"
                                                             : NULL;
  if (bad) {
    fprintf(stderr, "mmusim: host %s: %s\n", cmd, bad);
    return 2;
  }
  return 0;
}

HostBenchSpec host_bench_options_spec(const HostBenchOptions *o)
{
  return (HostBenchSpec){
    .spans = (const uint64_t *)(void *)o->spans->data, .n_spans = o->spans->len, .repeats = (unsigned)o->repeats,
    .buffers = (unsigned)o->buffers, .target_s = o->seconds, .seed = HOST_BENCH_SEED, .progress = o->quiet ? NULL : stderr,
  };
}

void host_bench_options_clear(HostBenchOptions *o)
{
  g_free(o->spans_text);
  if (o->spans)
    g_array_unref(o->spans);
  memset(o, 0, sizeof *o);
}

int host_bench_main(int argc, char **argv)
{
  g_autofree char *output = NULL;
  HostBenchOptions o;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "write to FILE instead of standard output", "FILE" },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- time a pointer chase and random loads on this host");
  host_bench_options_add(ctx, &o);
  g_option_context_add_main_entries(ctx, entries, NULL);
  int rc = host_bench_options_parse(ctx, &argc, &argv, "bench", &o);
  if (rc) {
    host_bench_options_clear(&o);
    return rc;
  }
  HostBenchSpec spec = host_bench_options_spec(&o);
  HostBenchResult r;
  GError *err = NULL;
  gboolean ok = host_bench_run(&spec, &r, &err);
  g_autofree char *text = NULL;
  if (ok && o.json) {
    text = host_bench_json(&r);
  } else if (ok) {
    GString *s = g_string_new(NULL);
    host_bench_print(&r, s);
    text = g_string_free(s, FALSE);
  }
  host_bench_result_clear(&r);
  host_bench_options_clear(&o);
  if (!ok || !out_file_set_contents(output ? output : "-", text, strlen(text), &err)) {
    rc = ok ? out_file_exit_status(err) : 1;
    fprintf(stderr, "mmusim: %s\n", err->message);
    g_error_free(err);
    return rc;
  }
  return 0;
}
