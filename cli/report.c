/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c - print a run's counters as `perf stat` does, or as JSON or CSV.
 *
 * The text report copies the layout of tools/perf/util/stat-display.c: the
 * count right-aligned in 18 columns with thousands separators, the counter
 * name in 25, a "# ..." note with a ratio that makes the count readable, and
 * with repeated runs a "( +- x% )" noise column.  Counters are simulated;
 * what the host spent (time, speed, memory) is printed apart, below them.
 * Every number goes through g_ascii_formatd(), so the output is the same under
 * any LC_NUMERIC.  Left out: perf's metric groups, colours and interval mode.
 */
#include "config.h"
#include "report.h"

#include <math.h>
#include <string.h>

/* ---- aggregation ------------------------------------------------------- */

/*
 * The noise figure is the one `perf stat --repeat` prints (tools/perf/util/
 * stat.c, stddev_stats() and rel_stddev_stats()): the standard deviation of
 * the mean, relative to the mean,
 *
 *   s = sqrt(sum (x_i - mean)^2 / (n - 1))      sample standard deviation
 *   rel_stddev = s / sqrt(n) / mean
 *
 * so it shrinks as runs are added.  It is 0 for one run or a zero mean.
 */
void report_aggregate(const CounterValues *runs, unsigned n, CounterValues *mean, CounterValues *rel_stddev)
{
  for (int i = 0; i < N_COUNTERS; i++) {
    mean->v[i] = 0;
    rel_stddev->v[i] = 0;
    if (n == 0)
      continue;
    double sum = 0;
    for (unsigned k = 0; k < n; k++)
      sum += runs[k].v[i];
    double m = sum / n;
    mean->v[i] = m;
    if (n < 2 || m == 0)
      continue;
    double sq = 0;
    for (unsigned k = 0; k < n; k++)
      sq += (runs[k].v[i] - m) * (runs[k].v[i] - m);
    double s = sqrt(sq / (n - 1));
    rel_stddev->v[i] = fabs(s / sqrt((double)n) / m);
  }
}

gboolean report_counter_applies(CounterId id, const char *arch)
{
  const CounterDef *d = counter_def(id);
  if (!d)
    return FALSE;
  return !(d->flags & CF_PPC64) || g_strcmp0(arch, "ppc64") == 0;
}

/* Each gated flag of counters.def, once. */
/* The mTHP counters: some thp.hugepages_* setting differs from its
 * default (the rows are consecutive in settings.def). */
static gboolean mthp_on(const Settings *s)
{
  for (SettingId id = SET_THP_HUGEPAGES_16KB; id <= SET_THP_HUGEPAGES_16384KB; id++)
    if (strcmp(settings_str(s, id), settings_def(id)->def) != 0)
      return TRUE;
  return FALSE;
}

/* The kcompactd counters: a defrag mode that wakes it. */
static gboolean kcompactd_on(const Settings *s)
{
  const char *d = settings_str(s, SET_THP_DEFRAG);
  return strcmp(d, "defer") == 0 || strcmp(d, "defer+madvise") == 0;
}

static const CounterGate counter_gates[] = {
  { CF_OOM_KILL, SET_MEM_OOM_POLICY, "kill", NULL, NULL },
  { CF_COALESCE, SET_TLB_COALESCE, "true", NULL, NULL },
  { CF_MTHP, SET_THP_HUGEPAGES_64KB, "always", mthp_on, "a thp.hugepages_* setting other than its default" },
  { CF_NESTED, SET_VIRT_NESTED, "true", NULL, NULL },
  { CF_KCOMPACTD, SET_THP_DEFRAG, "defer", kcompactd_on, "thp.defrag=defer or defer+madvise" },
};

const CounterGate *report_counter_gate(CounterId id)
{
  const CounterDef *d = counter_def(id);
  for (unsigned k = 0; d && k < G_N_ELEMENTS(counter_gates); k++)
    if (d->flags & counter_gates[k].flag)
      return &counter_gates[k];
  return NULL;
}

/* In this report: the architecture's counters, a gated one only when its
 * setting has the value that turns it on (so that no other report changes). */
static gboolean report_shows(const RunReport *r, CounterId id)
{
  if (!report_counter_applies(id, r->arch))
    return FALSE;
  const CounterGate *g = report_counter_gate(id);
  if (!g)
    return TRUE;
  if (!r->settings)
    return FALSE;
  return g->on ? g->on(r->settings) : strcmp(settings_str(r->settings, g->setting), g->value) == 0;
}

/* ---- number formatting ------------------------------------------------- */

typedef char NumBuf[G_ASCII_DTOSTR_BUF_SIZE + 16];

/* printf-style, one double, '.' as the decimal point whatever the locale. */
static const char *fmt_double(NumBuf buf, const char *format, double v)
{
  return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, format, v);
}

/* Values of 2^53 and above are not exact in a double; print them as reals. */
#define EXACT_INT_LIMIT 9007199254740992.0

static gboolean is_whole(double v)
{
  return isfinite(v) && v == floor(v) && fabs(v) < EXACT_INT_LIMIT;
}

/* A count as perf prints it with --big-num: "123,456,789", or with two
 * decimals when it is a mean that is not whole ("1,234.50"). */
static const char *fmt_count(NumBuf buf, double v)
{
  NumBuf plain;
  fmt_double(plain, is_whole(v) ? "%.0f" : "%.2f", v);
  const char *p = plain;
  char *o = buf;
  if (*p == '-')
    *o++ = *p++;
  size_t digits = strspn(p, "0123456789");
  for (size_t k = 0; k < digits; k++) {
    if (k > 0 && (digits - k) % 3 == 0)
      *o++ = ',';
    *o++ = p[k];
  }
  strcpy(o, p + digits);
  return buf;
}

/* The shortest text that reads back as the same double. */
static const char *fmt_exact(NumBuf buf, double v)
{
  if (is_whole(v))
    return fmt_double(buf, "%.0f", v);
  for (int prec = 15; prec <= 17; prec++) {
    char format[8];
    g_snprintf(format, sizeof format, "%%.%dg", prec);
    fmt_double(buf, format, v);
    if (g_ascii_strtod(buf, NULL) == v)
      break;
  }
  return buf;
}

/* ---- text report ------------------------------------------------------- */

/* Blank-line groups, each named by its first counter in counters.def order;
 * a counter belongs to the last group that starts at or before it. */
static const CounterId group_starts[] = {
  CTR_ACCESSES,        /* core */
  CTR_DTLB_LOADS,      /* TLBs and walks */
  CTR_L1_DCACHE_LOADS, /* caches */
  CTR_PAGE_FAULTS,     /* faults and kernel */
  CTR_THP_FAULT_ALLOC, /* THP, NUMA, footprint */
  CTR_SLB_MISSES,      /* ppc64 hash MMU */
};

static unsigned group_of(CounterId id)
{
  unsigned g = 0;
  for (unsigned k = 0; k < G_N_ELEMENTS(group_starts); k++)
    if (id >= group_starts[k])
      g = k;
  return g;
}

/* Shown elsewhere: seconds as the footer, ipc and ns_per_access as notes. */
static gboolean shown_as_note(CounterId id)
{
  return id == CTR_SECONDS || id == CTR_IPC || id == CTR_NS_PER_ACCESS;
}

#define NO_CTR N_COUNTERS

/* Cycles per elapsed second above the clock by more than rounding error mean
 * more than one CPU ran. */
/* CPU time the counted region took, summed over CPUs (perf's task-clock):
 * the cycles at the clock of cpu.freq_mhz.  0 when unknown. */
static double task_clock_seconds(const RunReport *r, const double *v)
{
  double clock_hz = r->settings ? settings_double(r->settings, SET_CPU_FREQ_MHZ) * 1e6 : 0;
  return clock_hz > 0 ? v[CTR_CYCLES] / clock_hz : 0;
}

/* "#   81.23% of all dTLB loads": counter as a percentage of the sum of up to
 * three others. */
typedef struct {
  CounterId id;
  CounterId of[3];
  const char *text;
} PercentNote;

static const PercentNote percent_notes[] = {
  { CTR_LOADS, { CTR_ACCESSES, NO_CTR, NO_CTR }, "of accesses" },
  { CTR_STORES, { CTR_ACCESSES, NO_CTR, NO_CTR }, "of accesses" },
  { CTR_IFETCHES, { CTR_ACCESSES, NO_CTR, NO_CTR }, "of accesses" },
  { CTR_DTLB_LOAD_MISSES, { CTR_DTLB_LOADS, NO_CTR, NO_CTR }, "of all dTLB loads" },
  { CTR_DTLB_STORE_MISSES, { CTR_DTLB_STORES, NO_CTR, NO_CTR }, "of all dTLB stores" },
  { CTR_ITLB_LOAD_MISSES, { CTR_ITLB_LOADS, NO_CTR, NO_CTR }, "of all iTLB loads" },
  { CTR_L1_TLB_MISSES, { CTR_DTLB_LOADS, CTR_DTLB_STORES, CTR_ITLB_LOADS }, "of all L1 TLB lookups" },
  { CTR_STLB_HITS, { CTR_L1_TLB_MISSES, NO_CTR, NO_CTR }, "of L1 TLB misses" },
  { CTR_STLB_MISSES, { CTR_L1_TLB_MISSES, NO_CTR, NO_CTR }, "of L1 TLB misses" },
  { CTR_STLB_COALESCED_HITS, { CTR_STLB_HITS, NO_CTR, NO_CTR }, "of STLB hits" },
  { CTR_STLB_COALESCED_FILLS, { CTR_PAGE_WALKS, NO_CTR, NO_CTR }, "of page walks" },
  { CTR_WALK_CYCLES, { CTR_CYCLES, NO_CTR, NO_CTR }, "of all cycles" },
  { CTR_WALK_REFS_L1, { CTR_WALK_REFS, NO_CTR, NO_CTR }, "of walk refs" },
  { CTR_WALK_REFS_L2, { CTR_WALK_REFS, NO_CTR, NO_CTR }, "of walk refs" },
  { CTR_WALK_REFS_LLC, { CTR_WALK_REFS, NO_CTR, NO_CTR }, "of walk refs" },
  { CTR_WALK_REFS_DRAM, { CTR_WALK_REFS, NO_CTR, NO_CTR }, "of walk refs" },
  { CTR_PWC_HITS, { CTR_PAGE_WALKS, NO_CTR, NO_CTR }, "of page walks" },
  { CTR_WALKER_STALL_CYCLES, { CTR_CYCLES, NO_CTR, NO_CTR }, "of all cycles" },
  { CTR_L1_DCACHE_LOAD_MISSES, { CTR_L1_DCACHE_LOADS, NO_CTR, NO_CTR }, "of L1-dcache loads" },
  { CTR_L1_DCACHE_STORE_MISSES, { CTR_L1_DCACHE_STORES, NO_CTR, NO_CTR }, "of L1-dcache stores" },
  { CTR_L1_ICACHE_LOAD_MISSES, { CTR_IFETCHES, NO_CTR, NO_CTR }, "of L1-icache accesses" },
  { CTR_LLC_LOAD_MISSES, { CTR_LLC_LOADS, NO_CTR, NO_CTR }, "of LL-cache accesses" },
  { CTR_MSHR_STALL_CYCLES, { CTR_CYCLES, NO_CTR, NO_CTR }, "of all cycles" },
  { CTR_FAULT_CYCLES, { CTR_CYCLES, NO_CTR, NO_CTR }, "of all cycles" },
  { CTR_ZEROING_CYCLES, { CTR_FAULT_CYCLES, NO_CTR, NO_CTR }, "of fault cycles" },
  { CTR_THP_FAULT_FALLBACK, { CTR_THP_FAULT_ALLOC, CTR_THP_FAULT_FALLBACK, NO_CTR }, "of huge page faults" },
  { CTR_REMOTE_ACCESSES, { CTR_LLC_LOAD_MISSES, NO_CTR, NO_CTR }, "of LLC misses" },
  { CTR_HPTE_EVICTIONS, { CTR_HPTE_INSERTS, NO_CTR, NO_CTR }, "of HPTE inserts" },
};

/* "# 302.285 K/sec" as perf prints event rates, per simulated second. */
static void rate_note(GString *note, double count, double seconds)
{
  if (seconds <= 0)
    return;
  double rate = count / seconds;
  static const char *units[] = { "/sec", "K/sec", "M/sec", "G/sec" };
  unsigned u = 0;
  while (rate >= 1e3 && u + 1 < G_N_ELEMENTS(units)) {
    rate /= 1e3;
    u++;
  }
  NumBuf b;
  g_string_append_printf(note, "# %s %s", fmt_double(b, "%8.3f", rate), units[u]);
}

static void bytes_note(GString *note, double bytes)
{
  static const char *units[] = { "KiB", "MiB", "GiB", "TiB" };
  if (bytes < 1024)
    return;
  unsigned u = 0;
  bytes /= 1024;
  while (bytes >= 1024 && u + 1 < G_N_ELEMENTS(units)) {
    bytes /= 1024;
    u++;
  }
  NumBuf b;
  g_string_append_printf(note, "# %s %s", fmt_double(b, "%8.1f", bytes), units[u]);
}

/* Fills `note` with the "# ..." text of a counter's line, or leaves it empty
 * when the counter has none or its denominator is zero. */
static void counter_note(const RunReport *r, CounterId id, GString *note)
{
  const double *v = r->mean.v;
  NumBuf b;
  for (unsigned k = 0; k < G_N_ELEMENTS(percent_notes); k++) {
    const PercentNote *p = &percent_notes[k];
    if (p->id != id)
      continue;
    double den = 0;
    for (unsigned j = 0; j < G_N_ELEMENTS(p->of); j++)
      if (p->of[j] != NO_CTR)
        den += v[p->of[j]];
    if (den > 0)
      g_string_append_printf(note, "# %s%% %s", fmt_double(b, "%7.2f", 100.0 * v[id] / den), p->text);
    return;
  }
  switch (id) {
  case CTR_ACCESSES:
    if (v[CTR_ACCESSES] > 0)
      g_string_append_printf(note, "# %s ns per access", fmt_double(b, "%8.3f", v[CTR_NS_PER_ACCESS]));
    break;
  case CTR_INSTRUCTIONS:
    if (v[CTR_CYCLES] > 0)
      g_string_append_printf(note, "# %s  insn per cycle", fmt_double(b, "%8.2f", v[CTR_IPC]));
    break;
  case CTR_CYCLES: {
    /* cycles are summed over CPUs: per second of CPU time (task-clock, the
     * line above) that is the clock, as perf shows it. */
    double cpu_seconds = task_clock_seconds(r, v);
    if (cpu_seconds <= 0 && v[CTR_SECONDS] > 0)
      cpu_seconds = v[CTR_SECONDS];
    if (cpu_seconds > 0 && v[CTR_CYCLES] > 0)
      g_string_append_printf(note, "# %s GHz", fmt_double(b, "%8.3f", v[CTR_CYCLES] / cpu_seconds / 1e9));
    break;
  }
  case CTR_PAGE_WALKS:
    if (v[CTR_PAGE_WALKS] > 0)
      g_string_append_printf(note, "# %s cycles per walk", fmt_double(b, "%8.1f", v[CTR_WALK_CYCLES] / v[CTR_PAGE_WALKS]));
    break;
  case CTR_WALK_REFS:
    if (v[CTR_PAGE_WALKS] > 0)
      g_string_append_printf(note, "# %s refs per walk", fmt_double(b, "%8.2f", v[CTR_WALK_REFS] / v[CTR_PAGE_WALKS]));
    break;
  case CTR_PAGE_FAULTS:
  case CTR_CONTEXT_SWITCHES:
    rate_note(note, v[id], v[CTR_SECONDS]);
    break;
  case CTR_MEM_TOUCHED_BYTES:
  case CTR_MEM_USED_BYTES:
    bytes_note(note, v[id]);
    break;
  case CTR_SLB_MISSES:
  case CTR_ERAT_MISSES:
  case CTR_HASH_FAULTS:
    if (v[CTR_ACCESSES] > 0)
      g_string_append_printf(note, "# %s per 1K accesses", fmt_double(b, "%8.3f", 1000.0 * v[id] / v[CTR_ACCESSES]));
    break;
  default:
    break;
  }
}

/* Column layout, as in the perf example: count in 18, 6 spaces, name in 25,
 * a space, the note, then the noise column at 84. */
#define COUNT_WIDTH 18
#define NAME_WIDTH 25
#define NOISE_COLUMN 84

static void print_noise(FILE *out, GString *line, const RunReport *r, double rsd)
{
  if (r->runs > 1) {
    NumBuf b;
    if (line->len + 2 > NOISE_COLUMN)
      g_string_append(line, "  ");
    while (line->len < NOISE_COLUMN)
      g_string_append_c(line, ' ');
    g_string_append_printf(line, "( +- %s%% )", fmt_double(b, "%5.2f", 100.0 * rsd));
  }
  while (line->len > 0 && line->str[line->len - 1] == ' ')
    g_string_truncate(line, line->len - 1);
  fprintf(out, "%s\n", line->str);
}

/* The kernel log's "Out of memory: Killed process" lines, one a kill. */
static void print_oom_kills(const RunReport *r, FILE *out)
{
  if (!r->n_oom_kills)
    return;
  fprintf(out, "\n");
  for (unsigned i = 0; i < r->n_oom_kills; i++) {
    const OomKill *o = &r->oom_kills[i];
    NumBuf t, bad, rss, pt, freed, dropped;
    fprintf(out, " Out of memory: killed process %u at %s s (%s of process %u on CPU %d): badness %s pages (%s resident, %s page tables), %s pages freed, %s of its records dropped\n",
            o->pid, fmt_double(t, "%.9f", (double)o->time_ns / 1e9), oom_trigger_name(o->trigger), o->by_pid, o->cpu,
            fmt_count(bad, (double)o->badness), fmt_count(rss, (double)o->rss_pages),
            fmt_count(pt, (double)o->pgtable_pages), fmt_count(freed, (double)o->freed_pages),
            fmt_count(dropped, (double)o->dropped_records));
  }
  if (r->runs > 1)
    fprintf(out, " (processes killed in the last of the %u runs)\n", r->runs);
}

void report_text(const RunReport *r, FILE *out)
{
  g_autoptr(GString) line = g_string_new(NULL);
  g_autoptr(GString) note = g_string_new(NULL);
  NumBuf b;

  fprintf(out, "\n Performance counter stats for '%s'", r->workload ? r->workload : "");
  if (r->machine)
    fprintf(out, " on %s", r->machine);
  if (r->runs > 1)
    fprintf(out, " (%u runs)", r->runs);
  fprintf(out, ":\n\n");

  int last_group = -1;
  for (int i = 0; i < N_COUNTERS; i++) {
    CounterId id = (CounterId)i;
    if (!report_shows(r, id) || shown_as_note(id))
      continue;
    if ((counter_def(id)->flags & CF_NUMA) && r->cpus <= 1)
      continue;
    if ((counter_def(id)->flags & CF_TEXT_NONZERO) && r->mean.v[id] == 0)
      continue;
    if (id == CTR_MINOR_FAULTS && r->mean.v[CTR_MAJOR_FAULTS] == 0)
      continue; /* the split, only when there is one */
    int g = (int)group_of(id);
    if (last_group >= 0 && g != last_group)
      fputc('\n', out);
    last_group = g;

    double task = id == CTR_CYCLES ? task_clock_seconds(r, r->mean.v) : 0;
    if (task > 0 && r->mean.v[CTR_SECONDS] > 0) {
      /* perf stat's first line: CPU time, and how many CPUs that is per
       * second elapsed.  Derived from cycles, so its noise is theirs. */
      NumBuf ms, util;
      g_string_printf(line, "%*s msec %-*s # %s CPUs utilized", COUNT_WIDTH, fmt_double(ms, "%.2f", task * 1e3),
                      NAME_WIDTH, "task-clock", fmt_double(util, "%8.3f", task / r->mean.v[CTR_SECONDS]));
      print_noise(out, line, r, r->rel_stddev.v[CTR_CYCLES]);
    }
    g_string_truncate(note, 0);
    counter_note(r, id, note);
    g_string_printf(line, "%*s      %-*s", COUNT_WIDTH, fmt_count(b, r->mean.v[id]), NAME_WIDTH, counter_def(id)->name);
    if (note->len)
      g_string_append_printf(line, " %s", note->str);
    print_noise(out, line, r, r->rel_stddev.v[id]);
  }

  fputc('\n', out);
  g_string_printf(line, "%*s seconds time elapsed (simulated)", COUNT_WIDTH,
                  fmt_double(b, "%.9f", r->mean.v[CTR_SECONDS]));
  print_noise(out, line, r, r->rel_stddev.v[CTR_SECONDS]);
  print_oom_kills(r, out);
  if (r->partial)
    fprintf(out, "\n (partial: %s)\n", r->partial);
  fputc('\n', out);
}

void report_host_text(const RunReport *r, FILE *out)
{
  NumBuf secs, rate, roi_rate, rss;
  fprintf(out, " host: %s s, %s M accesses/s (%s M/s counted), peak RSS %s MiB\n",
          fmt_double(secs, "%.2f", r->host_seconds), fmt_double(rate, "%.1f", r->host_accesses_per_second / 1e6),
          fmt_double(roi_rate, "%.1f", r->host_roi_accesses_per_second / 1e6),
          fmt_double(rss, "%.0f", (double)r->host_peak_rss_bytes / (1024.0 * 1024.0)));
}

/* ---- JSON -------------------------------------------------------------- */

static void json_add_string_or_null(JsonBuilder *jb, const char *s)
{
  if (s)
    json_builder_add_string_value(jb, s);
  else
    json_builder_add_null_value(jb);
}

/* JSON has no NaN or infinity: such a value (a division by a zero clock)
 * becomes null rather than invalid JSON. */
static void json_add_number(JsonBuilder *jb, double v, gboolean integral)
{
  if (!isfinite(v))
    json_builder_add_null_value(jb);
  else if (integral && is_whole(v))
    json_builder_add_int_value(jb, (gint64)v);
  else
    json_builder_add_double_value(jb, v);
}

static void json_add_setting(JsonBuilder *jb, const Settings *s, const SettingDef *d)
{
  switch (d->type) {
  case SETTING_INT:
  case SETTING_SIZE:
    json_builder_add_int_value(jb, settings_int(s, d->id));
    break;
  case SETTING_DOUBLE:
    json_add_number(jb, settings_double(s, d->id), FALSE);
    break;
  case SETTING_BOOL:
    json_builder_add_boolean_value(jb, settings_bool(s, d->id));
    break;
  case SETTING_ENUM:
  case SETTING_STRING:
    json_builder_add_string_value(jb, settings_str(s, d->id));
    break;
  }
}

/* member: { counter name: value } for the counters of the report's arch. */
static void json_add_counters(JsonBuilder *jb, const char *member, const RunReport *r, const CounterValues *values,
                              gboolean counts)
{
  json_builder_set_member_name(jb, member);
  json_builder_begin_object(jb);
  for (int i = 0; i < N_COUNTERS; i++) {
    if (!report_shows(r, (CounterId)i))
      continue;
    const CounterDef *d = counter_def((CounterId)i);
    json_builder_set_member_name(jb, d->name);
    json_add_number(jb, values->v[i], counts && !(d->flags & CF_DERIVED));
  }
  json_builder_end_object(jb);
}

/* "oom_kills": [ { "pid", "time_ns", ... } ] of the last run. */
static void json_add_oom_kills(JsonBuilder *jb, const RunReport *r)
{
  json_builder_set_member_name(jb, "oom_kills");
  json_builder_begin_array(jb);
  for (unsigned i = 0; i < r->n_oom_kills; i++) {
    const OomKill *o = &r->oom_kills[i];
    const struct {
      const char *name;
      uint64_t v;
    } f[] = {
      { "pid", o->pid },
      { "time_ns", o->time_ns },
      { "by_pid", o->by_pid },
      { "cpu", (uint64_t)o->cpu },
      { "badness", o->badness },
      { "rss_pages", o->rss_pages },
      { "pgtable_pages", o->pgtable_pages },
      { "freed_pages", o->freed_pages },
      { "dropped_records", o->dropped_records },
    };
    json_builder_begin_object(jb);
    for (unsigned j = 0; j < G_N_ELEMENTS(f); j++) {
      json_builder_set_member_name(jb, f[j].name);
      json_builder_add_int_value(jb, (gint64)f[j].v);
    }
    json_builder_set_member_name(jb, "trigger");
    json_builder_add_string_value(jb, oom_trigger_name(o->trigger));
    json_builder_end_object(jb);
  }
  json_builder_end_array(jb);
}

JsonNode *report_json_node(const RunReport *r)
{
  g_autoptr(JsonBuilder) jb = json_builder_new();
  json_builder_begin_object(jb);
  json_builder_set_member_name(jb, "version");
  json_builder_add_string_value(jb, PACKAGE_VERSION);
  json_builder_set_member_name(jb, "machine");
  json_add_string_or_null(jb, r->machine);
  json_builder_set_member_name(jb, "workload");
  json_add_string_or_null(jb, r->workload);
  json_builder_set_member_name(jb, "runs");
  json_builder_add_int_value(jb, r->runs);

  json_builder_set_member_name(jb, "settings");
  json_builder_begin_object(jb);
  for (int i = 0; r->settings && i < N_SETTINGS; i++) {
    const SettingDef *d = settings_def((SettingId)i);
    json_builder_set_member_name(jb, d->name);
    json_add_setting(jb, r->settings, d);
  }
  json_builder_end_object(jb);

  /* counted values are whole unless they are a mean over runs; derived ones
   * are ratios; relative stddevs are fractions */
  json_add_counters(jb, "counters", r, &r->mean, TRUE);
  json_add_counters(jb, "stddev", r, &r->rel_stddev, FALSE);
  if (report_shows(r, CTR_OOM_KILL)) /* mem.oom_policy=kill */
    json_add_oom_kills(jb, r);
  if (r->partial) {
    json_builder_set_member_name(jb, "partial");
    json_builder_add_string_value(jb, r->partial);
  }

  json_builder_set_member_name(jb, "host");
  json_builder_begin_object(jb);
  json_builder_set_member_name(jb, "seconds");
  json_add_number(jb, r->host_seconds, FALSE);
  json_builder_set_member_name(jb, "accesses_per_second");
  json_add_number(jb, r->host_accesses_per_second, FALSE);
  json_builder_set_member_name(jb, "counted_accesses_per_second");
  json_add_number(jb, r->host_roi_accesses_per_second, FALSE);
  json_builder_set_member_name(jb, "peak_rss_bytes");
  json_builder_add_int_value(jb, (gint64)r->host_peak_rss_bytes);
  json_builder_end_object(jb);

  json_builder_end_object(jb);
  return json_builder_get_root(jb);
}

void report_json(const RunReport *r, FILE *out)
{
  g_autoptr(JsonNode) root = report_json_node(r);
  report_json_print(root, out);
}

void report_json_print(JsonNode *root, FILE *out)
{
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, TRUE);
  json_generator_set_indent(gen, 2);
  json_generator_set_root(gen, root);
  g_autofree char *text = json_generator_to_data(gen, NULL);
  fprintf(out, "%s\n", text);
}

/* ---- CSV --------------------------------------------------------------- */

/* A whole number or a decimal one, as the C locale reads it ("-5", "1e3"). */
static gboolean is_number(const char *s)
{
  char *end;
  g_ascii_strtod(s, &end);
  return end != s && *end == '\0' && !g_ascii_isspace(*s);
}

char *report_csv_quote(const char *s)
{
  /* OWASP, "CSV Injection": a cell that begins with = + - @, a tab or a
   * carriage return is a formula to a spreadsheet; a leading ' makes it
   * text.  Numbers ("-5") are left as they are. */
  gboolean formula = strchr("=+-@\t\r", *s) && *s && !is_number(s);
  if (!formula && !strpbrk(s, ",\"\r\n"))
    return g_strdup(s);
  GString *q = g_string_new(formula ? "\"'" : "\"");
  for (const char *p = s; *p; p++) {
    if (*p == '"')
      g_string_append_c(q, '"');
    g_string_append_c(q, *p);
  }
  g_string_append_c(q, '"');
  return g_string_free(q, FALSE);
}

static void csv_field(FILE *out, const char *s, gboolean first)
{
  if (!first)
    fputc(',', out);
  if (s) {
    g_autofree char *q = report_csv_quote(s);
    fputs(q, out);
  }
}

void report_csv_header(const RunReport *r, FILE *out)
{
  csv_field(out, "machine", TRUE);
  csv_field(out, "workload", FALSE);
  csv_field(out, "runs", FALSE);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < N_COUNTERS; i++) {
      if (!report_shows(r, (CounterId)i))
        continue;
      const char *name = counter_def((CounterId)i)->name;
      g_autofree char *rsd = pass ? g_strconcat(name, "_rsd", NULL) : NULL;
      csv_field(out, pass ? rsd : name, FALSE);
    }
  fputc('\n', out);
}

void report_csv_row(const RunReport *r, FILE *out)
{
  NumBuf b;
  csv_field(out, r->machine, TRUE);
  csv_field(out, r->workload, FALSE);
  g_snprintf(b, sizeof b, "%u", r->runs);
  csv_field(out, b, FALSE);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < N_COUNTERS; i++) {
      if (!report_shows(r, (CounterId)i))
        continue;
      csv_field(out, fmt_exact(b, pass ? r->rel_stddev.v[i] : r->mean.v[i]), FALSE);
    }
  fputc('\n', out);
}

void report_csv(const RunReport *r, FILE *out)
{
  report_csv_header(r, out);
  report_csv_row(r, out);
}

/* ---- for the breakdowns ------------------------------------------------ */

gboolean report_counter_shown(const RunReport *r, CounterId id)
{
  return report_shows(r, id);
}

const char *report_fmt_count(char *buf, gsize size, double v)
{
  NumBuf b;
  g_strlcpy(buf, fmt_count(b, v), size);
  return buf;
}

const char *report_fmt_exact(char *buf, gsize size, double v)
{
  NumBuf b;
  g_strlcpy(buf, fmt_exact(b, v), size);
  return buf;
}

void report_json_add_counter_values(JsonBuilder *jb, const CounterValues *values, const CounterId *ids, unsigned n)
{
  json_builder_begin_object(jb);
  for (unsigned i = 0; i < n; i++) {
    const CounterDef *d = counter_def(ids[i]);
    json_builder_set_member_name(jb, d->name);
    json_add_number(jb, values->v[ids[i]], !(d->flags & CF_DERIVED));
  }
  json_builder_end_object(jb);
}
