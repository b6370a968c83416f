/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * summary.c - counts, threads, footprint and regions of a trace.
 *
 * The footprint is the number of distinct 4K pages, and of distinct 2M
 * (x86-64 PMD) huge pages, that accesses touch, per process: the memory a
 * run with base pages, and with every huge page THP could give, would have
 * to back.  An access counts for the page of its first byte, as the engine
 * translates it.  Regions are the touched 2M huge pages merged where they
 * are adjacent, each with the 4K pages touched inside.
 *
 * Memory grows with the footprint (16 bytes a touched page in an open
 * addressing set), not with the length of the trace.  Left out: mapping
 * events do not count towards the footprint, only accesses do.
 */
#include "config.h"
#include "summary.h"
#include "varint.h"

#include <stdlib.h>
#include <string.h>

#define PID_BITS 19 /* distinct processes a set key can tell apart */
#define SMALL_PAGE_SHIFT 12
#define HUGE_PAGE_SHIFT 21

static const char *const TYPE_NAMES[N_REC_TYPES] = {
  [REC_ACCESS] = "accesses", [REC_COMPUTE] = "compute", [REC_MMAP] = "mmap", [REC_MUNMAP] = "munmap",
  [REC_MPROTECT] = "mprotect", [REC_MADVISE] = "madvise", [REC_PRCTL] = "prctl", [REC_MEMPOLICY] = "mempolicy",
  [REC_THREAD] = "process/thread", [REC_ROI_BEGIN] = "roi begin", [REC_ROI_END] = "roi end",
};

/* ---- a set of 64-bit keys (open addressing, linear probing) ------------- */

struct SummarySet {
  uint64_t *slot; /* key + 1; 0 is empty */
  size_t mask, n;
};

static SummarySet *set_new(void)
{
  SummarySet *s = g_new0(SummarySet, 1);
  s->mask = 1023;
  s->slot = g_new0(uint64_t, s->mask + 1);
  return s;
}

static void set_free(SummarySet *s)
{
  if (s) {
    g_free(s->slot);
    g_free(s);
  }
}

static inline size_t set_hash(uint64_t k)
{
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (size_t)k;
}

static void set_add(SummarySet *s, uint64_t key)
{
  uint64_t v = key + 1;
  for (size_t i = set_hash(key) & s->mask;; i = (i + 1) & s->mask) {
    if (s->slot[i] == v)
      return;
    if (s->slot[i] == 0) {
      s->slot[i] = v;
      break;
    }
  }
  if (++s->n * 2 > s->mask) { /* grow at half full */
    size_t old_cap = s->mask + 1;
    uint64_t *old = s->slot;
    s->mask = old_cap * 2 - 1;
    s->slot = g_new0(uint64_t, s->mask + 1);
    for (size_t j = 0; j < old_cap; j++)
      if (old[j])
        for (size_t i = set_hash(old[j] - 1) & s->mask;; i = (i + 1) & s->mask)
          if (s->slot[i] == 0) {
            s->slot[i] = old[j];
            break;
          }
    g_free(old);
  }
}

/* ---- accumulating -------------------------------------------------------- */

void trace_summary_init(TraceSummary *s)
{
  memset(s, 0, sizeof *s);
  s->threads = g_array_new(FALSE, FALSE, sizeof(SummaryThread));
  s->regions = g_array_new(FALSE, FALSE, sizeof(SummaryRegion));
  s->pids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  s->set_4k = set_new();
  s->set_2m = set_new();
  s->last_thread = UINT32_MAX;
  s->last_key_4k = UINT64_MAX;
}

void trace_summary_clear(TraceSummary *s)
{
  if (s->threads)
    g_array_free(s->threads, TRUE);
  if (s->regions)
    g_array_free(s->regions, TRUE);
  if (s->pids)
    g_array_free(s->pids, TRUE);
  set_free(s->set_4k);
  set_free(s->set_2m);
  memset(s, 0, sizeof *s);
}

static SummaryThread *thread_of(TraceSummary *s, uint32_t pid, uint32_t tid)
{
  if (s->last_thread != UINT32_MAX && s->last_pid == pid && s->last_tid == tid)
    return &g_array_index(s->threads, SummaryThread, s->last_thread);
  guint i = 0;
  while (i < s->threads->len && !(g_array_index(s->threads, SummaryThread, i).pid == pid &&
                                  g_array_index(s->threads, SummaryThread, i).tid == tid))
    i++;
  if (i == s->threads->len) {
    SummaryThread t = { pid, tid, -1, 0, 0 };
    g_array_append_val(s->threads, t);
  }
  s->last_thread = i;
  s->last_pid = pid;
  s->last_tid = tid;
  return &g_array_index(s->threads, SummaryThread, i);
}

static uint64_t pid_index(TraceSummary *s, uint32_t pid)
{
  for (guint i = 0; i < s->pids->len; i++)
    if (g_array_index(s->pids, uint32_t, i) == pid)
      return i;
  if (s->pids->len < (1u << PID_BITS) - 1)
    g_array_append_val(s->pids, pid);
  return s->pids->len - 1;
}

void trace_summary_add(TraceSummary *s, const TraceRecord *r)
{
  s->records++;
  if (r->type < N_REC_TYPES)
    s->by_type[r->type]++;
  SummaryThread *t = thread_of(s, r->pid, r->tid);
  switch ((TraceRecordType)r->type) {
  case REC_ACCESS: {
    s->by_kind[r->kind & 3]++;
    s->access_bytes += r->size;
    s->instructions += (uint64_t)r->gap + 1;
    t->accesses++;
    t->instructions += (uint64_t)r->gap + 1;
    if (r->pid != s->last_access_pid || s->pids->len == 0) {
      s->last_access_pid = r->pid;
      s->last_pid_index = pid_index(s, r->pid);
    }
    uint64_t pidx = s->last_pid_index;
    uint64_t key = (r->addr >> SMALL_PAGE_SHIFT) << PID_BITS | pidx;
    if (key != s->last_key_4k) {
      s->last_key_4k = key;
      set_add(s->set_4k, key);
      set_add(s->set_2m, (r->addr >> HUGE_PAGE_SHIFT) << PID_BITS | pidx);
    }
    break;
  }
  case REC_COMPUTE:
    s->instructions += r->len;
    t->instructions += r->len;
    break;
  case REC_THREAD:
    t->cpu = r->arg;
    break;
  default:
    break;
  }
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The keys of a set, sorted: pid index in the low bits, so sort by
 * (pid index, page) after rotating. */
static uint64_t *sorted_keys(const SummarySet *s)
{
  uint64_t *k = g_new(uint64_t, s->n ? s->n : 1);
  size_t n = 0;
  for (size_t i = 0; i <= s->mask; i++)
    if (s->slot[i]) {
      uint64_t key = s->slot[i] - 1;
      k[n++] = (key & ((1u << PID_BITS) - 1)) << 45 | key >> PID_BITS; /* pages are below 2^45 */
    }
  qsort(k, n, sizeof *k, cmp_u64);
  return k;
}

void trace_summary_finish(TraceSummary *s)
{
  if (!s->set_4k)
    return;
  s->pages_4k = s->set_4k->n;
  s->pages_2m = s->set_2m->n;
  g_array_set_size(s->regions, 0);
  const uint64_t page_mask = (1ULL << 45) - 1;
  g_autofree uint64_t *huge = sorted_keys(s->set_2m);
  for (size_t i = 0; i < s->set_2m->n; i++) {
    uint32_t pid = g_array_index(s->pids, uint32_t, huge[i] >> 45);
    uint64_t start = (huge[i] & page_mask) << HUGE_PAGE_SHIFT;
    SummaryRegion *last = s->regions->len ? &g_array_index(s->regions, SummaryRegion, s->regions->len - 1) : NULL;
    if (last && last->pid == pid && last->end == start) {
      last->end += 1ULL << HUGE_PAGE_SHIFT;
    } else {
      SummaryRegion r = { pid, start, start + (1ULL << HUGE_PAGE_SHIFT), 0 };
      g_array_append_val(s->regions, r);
    }
  }
  /* 4K pages per region: both lists are sorted the same way. */
  g_autofree uint64_t *small = sorted_keys(s->set_4k);
  guint ri = 0;
  for (size_t i = 0; i < s->set_4k->n && ri < s->regions->len; i++) {
    uint32_t pid = g_array_index(s->pids, uint32_t, small[i] >> 45);
    uint64_t va = (small[i] & page_mask) << SMALL_PAGE_SHIFT;
    SummaryRegion *r = &g_array_index(s->regions, SummaryRegion, ri);
    while (ri < s->regions->len && (r->pid != pid || va >= r->end)) {
      ri++;
      r = &g_array_index(s->regions, SummaryRegion, MIN(ri, s->regions->len - 1));
    }
    if (ri < s->regions->len)
      r->pages_4k++;
  }
}

/* ---- printing ------------------------------------------------------------- */

static char *human_bytes(uint64_t b)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
  double v = (double)b;
  unsigned u = 0;
  while (v >= 1024 && u + 1 < G_N_ELEMENTS(units))
    v /= 1024, u++;
  return u ? g_strdup_printf("%.1f %s", v, units[u]) : g_strdup_printf("%" G_GUINT64_FORMAT " B", b);
}

#define SUMMARY_REGIONS_SHOWN 32

void trace_summary_print(const TraceSummary *s, GString *out)
{
  g_string_append_printf(out, "records:        %" G_GUINT64_FORMAT "\n", s->records);
  g_string_append_printf(out, "  accesses:     %" G_GUINT64_FORMAT " (loads %" G_GUINT64_FORMAT ", stores %" G_GUINT64_FORMAT
                              ", dependent loads %" G_GUINT64_FORMAT ", fetches %" G_GUINT64_FORMAT ")\n",
                         s->by_type[REC_ACCESS], s->by_kind[ACC_LOAD], s->by_kind[ACC_STORE], s->by_kind[ACC_DEP_LOAD],
                         s->by_kind[ACC_IFETCH]);
  for (int t = REC_COMPUTE; t < N_REC_TYPES; t++)
    if (s->by_type[t]) {
      g_autofree char *name = g_strconcat(TYPE_NAMES[t], ":", NULL);
      g_string_append_printf(out, "  %-15s %" G_GUINT64_FORMAT "\n", name, s->by_type[t]);
    }
  g_string_append_printf(out, "instructions:   %" G_GUINT64_FORMAT "\n", s->instructions);
  g_string_append_printf(out, "bytes accessed: %" G_GUINT64_FORMAT "\n", s->access_bytes);
  g_string_append_printf(out, "threads:        %u\n", s->threads->len);
  for (guint i = 0; i < s->threads->len; i++) {
    const SummaryThread *t = &g_array_index(s->threads, SummaryThread, i);
    g_string_append_printf(out, "  process %u thread %u", t->pid, t->tid);
    if (t->cpu >= 0)
      g_string_append_printf(out, " cpu %d", t->cpu);
    g_string_append_printf(out, ": %" G_GUINT64_FORMAT " accesses, %" G_GUINT64_FORMAT " instructions\n", t->accesses,
                           t->instructions);
  }
  g_autofree char *b4 = human_bytes(s->pages_4k << SMALL_PAGE_SHIFT);
  g_autofree char *b2 = human_bytes(s->pages_2m << HUGE_PAGE_SHIFT);
  g_string_append_printf(out, "footprint:      %" G_GUINT64_FORMAT " pages of 4K (%s), %" G_GUINT64_FORMAT
                              " huge pages of 2M (%s)\n", s->pages_4k, b4, s->pages_2m, b2);
  g_string_append_printf(out, "regions:        %u\n", s->regions->len);
  for (guint i = 0; i < s->regions->len && i < SUMMARY_REGIONS_SHOWN; i++) {
    const SummaryRegion *r = &g_array_index(s->regions, SummaryRegion, i);
    g_autofree char *len = human_bytes(r->end - r->start);
    g_string_append_printf(out, "  process %u 0x%012" G_GINT64_MODIFIER "x-0x%012" G_GINT64_MODIFIER "x %10s, %" G_GUINT64_FORMAT
                                " pages of 4K touched\n", r->pid, r->start, r->end, len, r->pages_4k);
  }
  if (s->regions->len > SUMMARY_REGIONS_SHOWN)
    g_string_append_printf(out, "  ... and %u more\n", s->regions->len - SUMMARY_REGIONS_SHOWN);
}

/* ---- the index encoding ----------------------------------------------------- */

#define SUMMARY_ENCODING_VERSION 1

static void put(GByteArray *out, uint64_t v)
{
  uint8_t tmp[VARINT_MAX_BYTES];
  g_byte_array_append(out, tmp, (guint)(varint_put(tmp, v) - tmp));
}

void trace_summary_encode(const TraceSummary *s, GByteArray *out)
{
  put(out, SUMMARY_ENCODING_VERSION);
  put(out, s->records);
  put(out, N_REC_TYPES);
  for (int t = 0; t < N_REC_TYPES; t++)
    put(out, s->by_type[t]);
  for (int k = 0; k < 4; k++)
    put(out, s->by_kind[k]);
  put(out, s->instructions);
  put(out, s->access_bytes);
  put(out, s->threads->len);
  for (guint i = 0; i < s->threads->len; i++) {
    const SummaryThread *t = &g_array_index(s->threads, SummaryThread, i);
    put(out, t->pid);
    put(out, t->tid);
    put(out, (uint64_t)((int64_t)t->cpu + 1));
    put(out, t->accesses);
    put(out, t->instructions);
  }
  put(out, s->pages_4k);
  put(out, s->pages_2m);
  put(out, s->regions->len);
  for (guint i = 0; i < s->regions->len; i++) {
    const SummaryRegion *r = &g_array_index(s->regions, SummaryRegion, i);
    put(out, r->pid);
    put(out, r->start >> HUGE_PAGE_SHIFT);
    put(out, (r->end - r->start) >> HUGE_PAGE_SHIFT);
    put(out, r->pages_4k);
  }
}

gboolean trace_summary_decode(TraceSummary *s, const uint8_t *p, const uint8_t *end)
{
  uint64_t v, n;
#define GET(x) do { if (!varint_get(&p, end, &(x))) return FALSE; } while (0)
  GET(v);
  if (v != SUMMARY_ENCODING_VERSION)
    return FALSE;
  GET(s->records);
  GET(n);
  if (n != N_REC_TYPES)
    return FALSE;
  for (int t = 0; t < N_REC_TYPES; t++)
    GET(s->by_type[t]);
  for (int k = 0; k < 4; k++)
    GET(s->by_kind[k]);
  GET(s->instructions);
  GET(s->access_bytes);
  GET(n);
  if (n > (uint64_t)(end - p)) /* each entry takes bytes: absurd counts stop here */
    return FALSE;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t pid, tid, cpu;
    SummaryThread t;
    GET(pid);
    GET(tid);
    GET(cpu);
    GET(t.accesses);
    GET(t.instructions);
    if (pid > UINT32_MAX || tid > UINT32_MAX || cpu > (uint64_t)INT32_MAX + 1)
      return FALSE;
    t.pid = (uint32_t)pid, t.tid = (uint32_t)tid, t.cpu = (int32_t)((int64_t)cpu - 1);
    g_array_append_val(s->threads, t);
  }
  GET(s->pages_4k);
  GET(s->pages_2m);
  GET(n);
  if (n > (uint64_t)(end - p))
    return FALSE;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t pid, start, len;
    SummaryRegion r;
    GET(pid);
    GET(start);
    GET(len);
    GET(r.pages_4k);
    if (pid > UINT32_MAX || start >= (1ULL << 36) || len > (1ULL << 36) - start)
      return FALSE;
    r.pid = (uint32_t)pid, r.start = start << HUGE_PAGE_SHIFT, r.end = (start + len) << HUGE_PAGE_SHIFT;
    g_array_append_val(s->regions, r);
  }
#undef GET
  return p == end;
}
