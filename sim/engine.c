/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.c - the event loop: per-thread queues, clock-ordered CPUs, barriers,
 * the region of interest, and the daemons that run in simulated time.
 *
 * khugepaged (kernel/khugepaged.c) runs when the CPU about to run a record has
 * reached its next wake: that CPU has the lowest clock of those with work,
 * so everything before the wake has run.  The test is one compare per
 * record, against the wake time read through a pointer the daemon keeps
 * current (UINT64_MAX while no mm is registered), so a registration made by
 * a system call or a fault counts from the next record.  The NUMA scanner
 * (kernel/numa_balance.c) is driven the same way, per CPU: cpu->kc.numa_due is
 * the clock at which the running thread's run time (counted from its
 * switch-in, cpu->kc.cur_since, plus Thread.ran) makes its scan tick due.
 *
 * A process the OOM killer killed (mem.oom_policy=kill, kernel/oom_kill.c) is
 * dead: its records still queued and every later one are dropped, counted
 * per process (Mm.oom_dropped_records), except the region marks, which are
 * the run's, not the process's.  The test is one load per record, of the
 * kernel's kill count, until a first kill; the queues of dead threads leave
 * the heaps at the next rebuild, which the first record after a kill asks
 * for, and the single-thread loop's shortcut (solo_due) stays off for the
 * rest of the run, so that a dead thread's records reach that test.  A CPU
 * whose thread was killed switches to its next one as from a live thread
 * (switch_to).
 * (Measured: threads:size=128M,accesses=16M took 1.77-1.83 s of user time
 * against 1.79-1.85 s without the test, three runs each: noise.)
 *
 * Queues hold at most ENGINE_QUEUE_MAX records in all; past that the engine
 * runs whatever is queued, so a trace whose threads are far apart costs
 * bounded memory.  (That bound is a memory limit of the host, not a model
 * parameter.)
 */
#include "config.h"
#include "engine.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>
#include "events.h"
#include "kcompactd.h"
#include "khugepaged.h"
#include "numa_balance.h"

#define ENGINE_QUEUE_MAX (1u << 20)
/* Records of a thread's first queue buffer, doubled as it fills: small, since
 * a trace may have millions of threads that each queue a few (host memory,
 * not model). */
#define ENGINE_QUEUE_FIRST 16u

/* Host prefetch pays only where records change pages often: a batch whose
 * sampled neighbours (this many pairs) change 4K page less than once in
 * PREFETCH_JUMP_RATIO pairs runs without it (sequential work, such as the
 * setup writes of a random workload, whose page changes the host's own
 * prefetchers follow).  Host tuning, not model. */
#define PREFETCH_SAMPLES 64u
#define PREFETCH_JUMP_RATIO 8u

typedef struct {
  Thread *t;
  TraceRecord *buf;
  size_t cap, head, len;
  unsigned idx;        /* order of first appearance: breaks ties between equal clocks */
  unsigned pos;        /* position in its CPU's slot */
} Queue;

/* The threads of one CPU and where the CPU stands in the engine's heaps.
 * Threads on one CPU share its clock, so the next record to run is that of
 * the CPU with the lowest (clock, idx of its first thread with records),
 * and within the CPU that first thread: the order of a scan over every
 * queue by (clock, idx), at the cost of one heap entry per CPU. */
typedef struct {
  Queue **q;           /* its threads' queues, by idx */
  unsigned n, cap;
  unsigned first;      /* position of the first queue with records (SLOT_NONE: none) */
  unsigned nready;     /* queues with records */
  int rpos;            /* position in the ready heap, -1 when absent */
  uint64_t aclock;     /* clock stored in the all heap */
  gboolean in_all;
} CpuSlot;

#define SLOT_NONE UINT_MAX

/* Binary min-heaps of CPU numbers.  `ready` holds the CPUs with records to
 * run, keyed by (clock, idx of the first such queue), positions tracked so
 * a key can fall when a lower thread gets records; `all` holds every CPU
 * with a thread, keyed by clock, for the lowest clock of any thread.  Clock
 * parts are refreshed lazily: clocks only grow, so a stored clock is never
 * above the real one, and a top whose stored clock is current is the true
 * minimum; a stale top gets its clock refreshed and sinks.  Moving a thread
 * to another CPU rebuilds the slots and heaps. */
typedef struct {
  int *a;
  unsigned n, cap;
} Heap;

/* The ready heap holds its keys itself: a sift compares neighbouring
 * entries without following each CPU's slot to its first queue. */
typedef struct {
  uint64_t clock;      /* the CPU's clock when stored */
  unsigned idx;        /* idx of the CPU's first queue with records */
  int cpu;
} ReadyKey;

typedef struct {
  ReadyKey *a;
  unsigned n, cap;
} ReadyHeap;

/* queue_for's cache of recent threads, direct-mapped by (pid, tid): where
 * the records of many threads interleave (one thread per record in the
 * threads workload) the hash tables from (pid, tid) to Thread and from
 * Thread to Queue cost ~230 host instructions a record, a hit one compare.
 * An entry lives no longer than its queue (both are the Engine's, for one
 * engine_run) and a thread's queue never changes once made, so no entry
 * is ever stale. */
#define QCACHE_SLOTS 256u /* a power of two */
typedef struct {
  uint32_t pid, tid;
  Queue *q;            /* NULL: empty */
} QCacheEntry;

typedef struct {
  Machine *m;
  GPtrArray *queues;   /* Queue*, in order of first appearance */
  GHashTable *by_thread; /* Thread* -> Queue* */
  Queue *last;         /* lookup cache */
  uint32_t last_pid, last_tid;
  QCacheEntry qcache[QCACHE_SLOTS];
  size_t queued;
  uint64_t warmup;      /* --warmup: accesses left uncounted from the region's start */
  uint64_t warmup_left;
  gboolean whole;      /* count the whole input, region marks ignored */
  uint64_t switch_cycles; /* sched.switch_ns in cycles */
  gboolean in_roi, roi_seen, stopped;
  Counters begin;
  Annotation *ann;     /* run --annotate: every access through annotate_access; NULL: off */
  uint64_t t_begin;
  gint64 host_begin;   /* g_get_monotonic_time() at the region's start */
  EngineResult *res;
  Khugepaged *kh;
  const uint64_t *kh_wake; /* khugepaged's next wake, in cycles */
  const uint64_t *kcd_wake; /* kcompactd's next due run, in cycles (kernel/kcompactd.c) */
  const gboolean *oom;     /* the kernel's, tested after every access */
  const unsigned *oom_kills; /* the kernel's kill count, tested before every record */
  unsigned kills_seen;     /* its value when the heaps were last marked stale for a kill */
  CpuSlot *slots;      /* one per CPU */
  ReadyHeap ready;     /* CPUs with records to run */
  Heap all;            /* CPUs with threads: the lowest clock of any thread */
  unsigned lagging;    /* CPUs in `all` whose first thread has no records (first != 0) */
  gboolean heaps_stale; /* a thread changed CPU: rebuild before the next pick */
  CpuPrefetch *pf;     /* cpu_prefetch's state; its ring cleared before each run of records */
  /* Breakdowns (EngineOptions): per_cpu keeps each CPU's counters at the
   * region's start; per_thread charges a CPU's counts since thr_mark to
   * its current thread at every switch and at the region's ends. */
  gboolean per_cpu, per_thread;
  Counters *cpu_begin;     /* per_cpu: n_cpus */
  Counters *thr_mark;      /* per_thread: n_cpus */
  GHashTable *thr_counts;  /* Thread* -> EngineThreadCounts*, owned by thr_order */
  GPtrArray *thr_order;    /* EngineThreadCounts*, first seen first */
  EngineThreadCounts thr_none; /* counted with no current thread */
  /* -I: intervals of iv_cycles; the next boundary is due at iv_due
   * (UINT64_MAX when off); the open interval began at iv_start with the
   * counters iv_last (and each CPU's iv_cpu_last). */
  uint64_t iv_cycles, iv_due, iv_start;
  gboolean iv_open;        /* between a region's snapshot_begin and its end */
  Counters iv_last;
  Counters *iv_cpu_last;   /* per_cpu: n_cpus */
  /* The interval closed last, passed on only when the next closes (or
   * the region ends): an interval of no time at the region's end joins
   * it. */
  EngineInterval iv_pending;
  gboolean iv_has_pending;
  /* on_interval: the region's intervals are passed on as they close
   * (iv_live), or held in iv_held until the region is known to count
   * (before the first `roi begin`, without --whole); iv_passed: some
   * interval of this region was passed on. */
  const EngineOptions *iv_opt;
  gboolean iv_live, iv_passed;
  GArray *iv_held;         /* EngineInterval */
  /* Kept for the result (iv_keep), at most iv_max: each holds iv_merge
   * intervals, the last iv_fill of them. */
  gboolean iv_keep;
  unsigned iv_max, iv_merge, iv_fill;
  GArray *intervals;       /* EngineInterval */
  GError *limit_error;     /* a new thread past a limit of the machine (machine_thread_check) */
} Engine;

static inline uint64_t cpu_clock(const Engine *e, int c)
{
  return e->m->cpus[c]->clock;
}

static inline uint64_t queue_clock(const Engine *e, const Queue *q)
{
  return cpu_clock(e, q->t->cpu);
}

/* ---- the ready heap: key (clock, idx of the CPU's first ready queue) ---- */

static inline gboolean ready_less(const ReadyKey *a, const ReadyKey *b)
{
  return a->clock < b->clock || (a->clock == b->clock && a->idx < b->idx);
}

static inline void ready_set(Engine *e, unsigned i, ReadyKey k)
{
  e->ready.a[i] = k;
  e->slots[k.cpu].rpos = (int)i;
}

static void ready_up(Engine *e, unsigned i)
{
  ReadyKey *a = e->ready.a, k = a[i];
  while (i > 0) {
    unsigned p = (i - 1) / 2;
    if (!ready_less(&k, &a[p]))
      break;
    ready_set(e, i, a[p]);
    i = p;
  }
  ready_set(e, i, k);
}

static void ready_down(Engine *e, unsigned i)
{
  ReadyHeap *h = &e->ready;
  ReadyKey *a = h->a, k = a[i];
  for (;;) {
    unsigned c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && ready_less(&a[c + 1], &a[c]))
      c++;
    if (!ready_less(&a[c], &k))
      break;
    ready_set(e, i, a[c]);
    i = c;
  }
  ready_set(e, i, k);
}

static void heap_grow(Heap *h)
{
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 16;
    h->a = g_renew(int, h->a, h->cap);
  }
}

static void ready_push(Engine *e, int c)
{
  ReadyHeap *h = &e->ready;
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 16;
    h->a = g_renew(ReadyKey, h->a, h->cap);
  }
  const CpuSlot *s = &e->slots[c];
  h->a[h->n++] = (ReadyKey){ cpu_clock(e, c), s->q[s->first]->idx, c };
  ready_up(e, h->n - 1);
}

/* Remove the top CPU. */
static void ready_pop(Engine *e)
{
  ReadyHeap *h = &e->ready;
  e->slots[h->a[0].cpu].rpos = -1;
  if (--h->n) {
    ready_set(e, 0, h->a[h->n]);
    ready_down(e, 0);
  }
}

/* ---- the all heap: key (clock, idx of the CPU's first thread) ---- */

/* A CPU's threads are kept by idx, so its first thread is q[0]; it only
 * changes when the slots are rebuilt. */
static inline gboolean all_less(const Engine *e, int x, int y)
{
  const CpuSlot *a = &e->slots[x], *b = &e->slots[y];
  return a->aclock < b->aclock || (a->aclock == b->aclock && a->q[0]->idx < b->q[0]->idx);
}

static void all_down(Engine *e, unsigned i)
{
  Heap *h = &e->all;
  int c = h->a[i];
  for (;;) {
    unsigned k = 2 * i + 1;
    if (k >= h->n)
      break;
    if (k + 1 < h->n && all_less(e, h->a[k + 1], h->a[k]))
      k++;
    if (!all_less(e, h->a[k], c))
      break;
    h->a[i] = h->a[k];
    i = k;
  }
  h->a[i] = c;
}

static void all_push(Engine *e, int c)
{
  Heap *h = &e->all;
  heap_grow(h);
  CpuSlot *s = &e->slots[c];
  s->aclock = cpu_clock(e, c);
  s->in_all = TRUE;
  e->lagging += s->first != 0;
  unsigned i = h->n++;
  while (i > 0) {
    unsigned p = (i - 1) / 2;
    if (!all_less(e, c, h->a[p]))
      break;
    h->a[i] = h->a[p];
    i = p;
  }
  h->a[i] = c;
}

/* ---- slots ---- */

/* Set the first ready queue of s, a CPU in the all heap, keeping count of
 * the CPUs whose first thread has no records: while there are none, the
 * all heap's minimum is the ready heap's (the same CPUs, the same keys), so
 * pick need not look at it. */
static inline void slot_set_first(Engine *e, CpuSlot *s, unsigned first)
{
  e->lagging -= s->first != 0;
  e->lagging += first != 0;
  s->first = first;
}

/* A queue of CPU c got records. */
static void slot_ready(Engine *e, Queue *q)
{
  int c = q->t->cpu;
  CpuSlot *s = &e->slots[c];
  s->nready++;
  if (q->pos >= s->first)
    return; /* a queue before it has records already: the key stands */
  slot_set_first(e, s, q->pos);
  if (s->rpos < 0) {
    ready_push(e, c);
  } else {
    ReadyKey *k = &e->ready.a[s->rpos];
    k->clock = cpu_clock(e, c); /* the key falls (lower idx), its clock only grew */
    k->idx = q->idx;
    ready_down(e, (unsigned)s->rpos);
    ready_up(e, (unsigned)s->rpos);
  }
}

static void slot_add(Engine *e, Queue *q)
{
  int c = q->t->cpu;
  CpuSlot *s = &e->slots[c];
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 4;
    s->q = g_renew(Queue *, s->q, s->cap);
  }
  unsigned i = s->n++;
  for (; i > 0 && s->q[i - 1]->idx > q->idx; i--) { /* by idx (a rebuild adds them in any order) */
    s->q[i] = s->q[i - 1];
    s->q[i]->pos = i;
  }
  s->q[i] = q;
  q->pos = i;
  if (s->first != SLOT_NONE && s->first >= i)
    slot_set_first(e, s, s->first + 1); /* the first ready queue moved up one */
  if (!s->in_all)
    all_push(e, c);
  if (q->len)
    slot_ready(e, q);
}

/* Drop the records queued for q, a dead process's thread. */
static void queue_drop(Engine *e, Queue *q)
{
  q->t->mm->oom_dropped_records += q->len;
  e->queued -= q->len;
  q->head = 0;
  q->len = 0;
}

static void heaps_rebuild(Engine *e)
{
  for (unsigned c = 0; c < e->m->n_cpus; c++) {
    CpuSlot *s = &e->slots[c];
    s->n = s->nready = 0;
    s->first = SLOT_NONE;
    s->rpos = -1;
    s->in_all = FALSE;
  }
  e->ready.n = e->all.n = 0;
  e->lagging = 0;
  for (guint i = 0; i < e->queues->len; i++) {
    Queue *q = g_ptr_array_index(e->queues, i);
    if (G_UNLIKELY(q->t->mm->oom_killed)) {
      queue_drop(e, q); /* it never runs again: out of the heaps */
      continue;
    }
    slot_add(e, q);
  }
  e->heaps_stale = FALSE;
}

static void queue_free(gpointer p)
{
  Queue *q = p;
  g_free(q->buf);
  g_free(q);
}

static void run_queues(Engine *e, gboolean all);

static inline QCacheEntry *qcache_slot(Engine *e, uint32_t pid, uint32_t tid)
{
  /* Threads of a process have consecutive tids (the generators', a
   * recorder's): they take consecutive slots, so up to QCACHE_SLOTS of them
   * never collide; processes start at scattered offsets. */
  return &e->qcache[(tid + pid * 0x9E3779B1u) & (QCACHE_SLOTS - 1)];
}

/* The thread (pid, tid)'s queue, made on its first appearance.  A new thread
 * starts when the thread of the records before it (its creator, as clone()
 * or fork()) got there: the creator's queued records run first, and the new
 * thread's CPU, if its clock is behind, idles until then. */
static Queue *queue_for_slow(Engine *e, uint32_t pid, uint32_t tid, int cpu)
{
  if (G_UNLIKELY(!machine_thread_check(e->m, pid, tid, &e->limit_error)))
    return NULL;
  Thread *t = machine_thread(e->m, pid, tid, cpu);
  if (!t)
    return NULL;
  Queue *q = g_hash_table_lookup(e->by_thread, t);
  if (!q) {
    Queue *creator = e->last;
    if (creator)
      run_queues(e, TRUE);
    gboolean dead = t->mm->oom_killed; /* a new thread of a killed process: never runs */
    if (creator && !e->stopped && !dead) {
      Cpu *c = e->m->cpus[t->cpu];
      uint64_t now = queue_clock(e, creator);
      if (c->clock < now) {
        cpu_drain(c);
        c->idle_cycles += now - c->clock;
        c->clock = now;
      }
    }
    if (!dead)
      numa_balance_task_new(e->m->k->numa_balance, t, creator ? creator->t : NULL);
    q = g_new0(Queue, 1);
    q->t = t;
    q->idx = e->queues->len;
    g_hash_table_insert(e->by_thread, t, q);
    g_ptr_array_add(e->queues, q);
    if (!e->heaps_stale && !dead)
      slot_add(e, q);
  } else if (cpu >= 0) {
    e->heaps_stale = TRUE; /* may have moved to a CPU with a lower clock */
  }
  *qcache_slot(e, pid, tid) = (QCacheEntry){ pid, tid, q };
  e->last = q;
  e->last_pid = pid;
  e->last_tid = tid;
  return q;
}

/* queue_for_slow's answer for a thread named again without a CPU, from the
 * caches: nothing about the thread changes then (machine_thread re-pins
 * only with cpu >= 0). */
static inline Queue *queue_for(Engine *e, uint32_t pid, uint32_t tid, int cpu)
{
  if (e->last && e->last_pid == pid && e->last_tid == tid && cpu < 0)
    return e->last;
  const QCacheEntry *ce = qcache_slot(e, pid, tid);
  if (ce->q && ce->pid == pid && ce->tid == tid && cpu < 0) {
    e->last = ce->q;
    e->last_pid = pid;
    e->last_tid = tid;
    return ce->q;
  }
  return queue_for_slow(e, pid, tid, cpu);
}

static void push(Engine *e, Queue *q, const TraceRecord *r)
{
  gboolean woke = q->len == 0;
  if (q->len == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : ENGINE_QUEUE_FIRST;
    TraceRecord *nb = g_new(TraceRecord, cap);
    for (size_t i = 0; i < q->len; i++)
      nb[i] = q->buf[(q->head + i) % q->cap];
    g_free(q->buf);
    q->buf = nb;
    q->cap = cap;
    q->head = 0;
  }
  q->buf[(q->head + q->len) & (q->cap - 1)] = *r; /* cap is a power of two */
  q->len++;
  e->queued++;
  if (woke && !e->heaps_stale)
    slot_ready(e, q);
}

/* ---- breakdowns: per thread, per interval --------------------------- */

/* cpu's counters as machine_counters() sums them: its cycles are its clock
 * less its idle time. */
static void cpu_counters(const Cpu *cpu, Counters *out)
{
  *out = cpu->ctr;
  out->c[CTR_CYCLES] += cpu->clock - cpu->idle_cycles;
}

static EngineThreadCounts *thread_counts(Engine *e, Thread *t)
{
  EngineThreadCounts *tc = g_hash_table_lookup(e->thr_counts, t);
  if (!tc) {
    tc = g_new0(EngineThreadCounts, 1);
    tc->pid = t->pid;
    tc->tid = t->tid;
    g_hash_table_insert(e->thr_counts, t, tc);
    g_ptr_array_add(e->thr_order, tc);
  }
  return tc;
}

/* By pid then tid; pid 0 (no thread) last. */
static int thread_counts_cmp(const void *a, const void *b)
{
  const EngineThreadCounts *x = a, *y = b;
  uint64_t kx = ((uint64_t)(x->pid - 1u) << 32) | x->tid, ky = ((uint64_t)(y->pid - 1u) << 32) | y->tid;
  return kx < ky ? -1 : kx > ky;
}

/* What cpu counted since its mark goes to its current thread (none: the
 * row of pid 0).  Called before a switch changes the current thread, so a
 * switch's own cost (its stall, its flushes) counts for the thread
 * switched to. */
static void thread_charge(Engine *e, Cpu *cpu)
{
  Counters *mark = &e->thr_mark[cpu->id], now, d;
  cpu_counters(cpu, &now);
  counters_diff(&d, &now, mark);
  counters_add(cpu->kc.cur ? &thread_counts(e, cpu->kc.cur)->ctr : &e->thr_none.ctr, &d);
  *mark = now;
}

unsigned engine_intervals_max(unsigned n_cpus)
{
  unsigned n = MIN(ENGINE_INTERVALS_KEPT, ENGINE_INTERVAL_ROWS / (1 + n_cpus));
  return MAX(2, n & ~1u);
}

static void intervals_free(GArray *a)
{
  for (guint i = 0; i < a->len; i++)
    g_free(g_array_index(a, EngineInterval, i).per_cpu);
  g_array_set_size(a, 0);
}

/* Forget the intervals of the region that ended: a new one begins. */
static void interval_clear(Engine *e)
{
  intervals_free(e->intervals);
  intervals_free(e->iv_held);
  if (e->iv_has_pending)
    g_free(e->iv_pending.per_cpu);
  e->iv_has_pending = FALSE;
  e->iv_merge = 1;
  e->iv_fill = 0;
}

/* What a run that stopped short (an error) leaves held or pending. */
static void interval_clear_pending_held(Engine *e)
{
  intervals_free(e->iv_held);
  g_array_free(e->iv_held, TRUE);
  e->iv_held = NULL;
  if (e->iv_has_pending)
    g_free(e->iv_pending.per_cpu);
  e->iv_has_pending = FALSE;
}

/* to += from: the counters, and the end. */
static void interval_join(EngineInterval *to, const EngineInterval *from, unsigned n_cpus)
{
  to->end = from->end;
  counters_add(&to->total, &from->total);
  for (unsigned i = 0; to->per_cpu && i < n_cpus; i++)
    counters_add(&to->per_cpu[i], &from->per_cpu[i]);
}

/* Keep iv (taking its per_cpu) for the result.  Past iv_max, the kept
 * ones merge in pairs (0 and 1, 2 and 3, ...) and each holds twice as
 * many intervals from then on, as a plot of a long run needs no more
 * points than its width: memory stays bounded however long the run. */
static void interval_keep(Engine *e, EngineInterval *iv)
{
  GArray *a = e->intervals;
  unsigned n_cpus = e->m->n_cpus;
  if (a->len && e->iv_fill < e->iv_merge) {
    interval_join(&g_array_index(a, EngineInterval, a->len - 1), iv, n_cpus);
    g_free(iv->per_cpu);
    e->iv_fill++;
    return;
  }
  if (a->len == e->iv_max) { /* iv_max is even, and every kept one is full */
    for (guint i = 0; i < a->len / 2; i++) {
      EngineInterval *x = &g_array_index(a, EngineInterval, 2 * i), *y = x + 1;
      interval_join(x, y, n_cpus);
      g_free(y->per_cpu);
      g_array_index(a, EngineInterval, i) = *x;
    }
    g_array_set_size(a, a->len / 2);
    e->iv_merge *= 2;
  }
  g_array_append_val(a, *iv);
  e->iv_fill = 1;
}

static void interval_held_pass(Engine *e)
{
  const EngineOptions *o = e->iv_opt;
  for (guint i = 0; i < e->iv_held->len; i++)
    o->on_interval(&g_array_index(e->iv_held, EngineInterval, i), e->m->n_cpus, o->interval_data);
  e->iv_passed |= e->iv_held->len > 0;
  intervals_free(e->iv_held);
}

/* A closed interval (taking its per_cpu): to on_interval, now or held,
 * and kept. */
static void interval_emit(Engine *e, EngineInterval *iv)
{
  const EngineOptions *o = e->iv_opt;
  if (o && o->on_interval) {
    if (e->iv_live) {
      o->on_interval(iv, e->m->n_cpus, o->interval_data);
      e->iv_passed = TRUE;
    } else {
      EngineInterval copy = *iv;
      copy.per_cpu = iv->per_cpu ? g_memdup2(iv->per_cpu, e->m->n_cpus * sizeof(Counters)) : NULL;
      g_array_append_val(e->iv_held, copy);
      if (e->iv_held->len >= e->iv_max) { /* an input that marks no region, most likely: on with the show */
        e->iv_live = TRUE;
        interval_held_pass(e);
      }
    }
  }
  if (e->iv_keep)
    interval_keep(e, iv);
  else
    g_free(iv->per_cpu);
}

/* The region ended: its last interval and those held go on. */
static void interval_flush(Engine *e)
{
  if (e->iv_has_pending)
    interval_emit(e, &e->iv_pending);
  e->iv_has_pending = FALSE;
  if (e->iv_opt && e->iv_opt->on_interval)
    interval_held_pass(e);
}

/* Close the open interval at `end` (cycles): its counters are those since
 * the last close.  An interval of no time (the region ended on a
 * boundary) joins the one before it. */
static void interval_close(Engine *e, uint64_t end)
{
  Machine *m = e->m;
  Counters now, d;
  machine_counters(m, &now);
  EngineInterval iv = { .start = e->iv_start, .end = MAX(end, e->iv_start) };
  gboolean join = e->iv_has_pending && iv.end == iv.start;
  EngineInterval *to = join ? &e->iv_pending : &iv;
  counters_diff(&d, &now, &e->iv_last);
  counters_add(&to->total, &d);
  if (e->per_cpu) {
    if (!to->per_cpu)
      to->per_cpu = g_new0(Counters, m->n_cpus);
    for (unsigned i = 0; i < m->n_cpus; i++) {
      Counters cur;
      cpu_counters(m->cpus[i], &cur);
      counters_diff(&d, &cur, &e->iv_cpu_last[i]);
      counters_add(&to->per_cpu[i], &d);
      e->iv_cpu_last[i] = cur;
    }
  }
  if (!join) {
    if (e->iv_has_pending)
      interval_emit(e, &e->iv_pending);
    e->iv_pending = iv;
    e->iv_has_pending = TRUE;
  }
  e->iv_last = now;
  e->iv_start = iv.end;
}

/* cpu's clock reached the next boundary: close the interval there when
 * the counted region is open (and past its warmup).  A clock that jumped
 * over several boundaries (a long stall) closes one interval, at the
 * last of them.  counts: the caller's pending quick counts of cpu. */
static G_NO_INLINE void interval_tick(Engine *e, Cpu *cpu, CpuQuickCounts *counts)
{
  if (counts)
    cpu_quick_flush(cpu, counts);
  uint64_t end = cpu->clock / e->iv_cycles * e->iv_cycles;
  e->iv_due = end + e->iv_cycles;
  if (e->iv_open && !e->warmup_left && end > e->iv_start)
    interval_close(e, end);
}

static void snapshot_begin(Engine *e)
{
  Machine *m = e->m;
  for (unsigned i = 0; i < m->n_cpus; i++)
    cpu_drain(m->cpus[i]);
  machine_counters(m, &e->begin);
  if (e->ann)
    annotation_reset(e->ann);
  e->t_begin = machine_max_clock(m);
  e->host_begin = g_get_monotonic_time();
  for (unsigned i = 0; e->per_cpu && i < m->n_cpus; i++)
    cpu_counters(m->cpus[i], &e->cpu_begin[i]), e->iv_cpu_last[i] = e->cpu_begin[i];
  if (e->per_thread) {
    for (guint i = 0; i < e->thr_order->len; i++)
      memset(&((EngineThreadCounts *)e->thr_order->pdata[i])->ctr, 0, sizeof(Counters));
    memset(&e->thr_none.ctr, 0, sizeof(Counters));
    for (unsigned i = 0; i < m->n_cpus; i++)
      cpu_counters(m->cpus[i], &e->thr_mark[i]);
  }
  if (e->iv_cycles) {
    interval_clear(e); /* a new region: the intervals are of it alone */
    if (e->iv_passed && e->iv_opt->on_region)
      e->iv_opt->on_region(e->t_begin, e->iv_opt->interval_data);
    e->iv_passed = FALSE;
    e->iv_last = e->begin;
    e->iv_start = e->t_begin;
    e->iv_open = TRUE;
  }
}

/* The breakdowns of the region that just ended, into e->res. */
static void breakdowns_end(Engine *e)
{
  Machine *m = e->m;
  EngineResult *res = e->res;
  if (e->iv_open) {
    interval_close(e, machine_max_clock(m));
    interval_flush(e);
    e->iv_open = FALSE;
  }
  if (e->per_cpu) {
    res->n_cpus = m->n_cpus;
    g_free(res->per_cpu);
    res->per_cpu = g_new(Counters, m->n_cpus);
    for (unsigned i = 0; i < m->n_cpus; i++) {
      Counters now;
      cpu_counters(m->cpus[i], &now);
      counters_diff(&res->per_cpu[i], &now, &e->cpu_begin[i]);
    }
  }
  if (e->per_thread) {
    for (unsigned i = 0; i < m->n_cpus; i++)
      thread_charge(e, m->cpus[i]);
    g_free(res->threads);
    res->threads = g_new(EngineThreadCounts, e->thr_order->len + 1);
    res->n_threads = 0;
    for (guint i = 0; i <= e->thr_order->len; i++) {
      const EngineThreadCounts *tc = i < e->thr_order->len ? e->thr_order->pdata[i] : &e->thr_none;
      static const Counters zero;
      if (memcmp(&tc->ctr, &zero, sizeof zero) != 0) /* a thread that ran in the region */
        res->threads[res->n_threads++] = *tc;
    }
    qsort(res->threads, res->n_threads, sizeof *res->threads, thread_counts_cmp);
  }
}

static void snapshot_end(Engine *e)
{
  Machine *m = e->m;
  /* A region shorter than --warmup: every access of it was warmup, and
   * nothing is counted (the caller says so). */
  e->res->warmup_unfinished = e->warmup_left != 0;
  e->res->warmup_seen = e->warmup - e->warmup_left;
  if (e->warmup_left) {
    e->warmup_left = 0;
    snapshot_begin(e);
  }
  for (unsigned i = 0; i < m->n_cpus; i++)
    cpu_drain(m->cpus[i]);
  Counters now;
  machine_counters(m, &now);
  counters_diff(&e->res->counted, &now, &e->begin);
  if (e->ann)
    annotation_freeze(e->ann);
  e->res->elapsed_cycles = machine_max_clock(m) - e->t_begin;
  e->res->host_seconds = (double)(g_get_monotonic_time() - e->host_begin) / 1e6;
  breakdowns_end(e);
}

/* Switch CPU cpu to thread t (run_on's slow path).  A CPU whose thread
 * was killed (cpu->kc.cur_exited) switches as from a live one: the dead task's
 * final schedule() is a context switch, priced as any, and loads t's CR3.
 * Its run time was counted and its mm's CPU mask left at the kill
 * (oom_kill.c), so neither happens twice; t is never of the dead mm. */
static G_NO_INLINE Cpu *switch_to(Engine *e, Thread *t, Cpu *cpu)
{
  gboolean from_task = cpu->kc.cur || cpu->kc.cur_exited; /* not a CPU's first thread */
  if (G_UNLIKELY(e->per_thread))
    thread_charge(e, cpu);
  if (cpu->kc.cur)
    cpu->kc.cur->ran += cpu->clock - cpu->kc.cur_since;
  if (from_task) {
    cpu->ctr.c[CTR_CONTEXT_SWITCHES]++;
    cpu_stall(cpu, e->switch_cycles);
  }
  if (!cpu->kc.cur || cpu->kc.cur->mm != t->mm) {
    /* switch_mm_irqs_off: stop remote flushes for the previous mm, start
     * them for the next; a CPU that missed some drops the next mm's
     * entries (choose_new_asid's need_flush). */
    if (cpu->kc.cur)
      mm_cpumask_leave(cpu->kc.cur->mm, (unsigned)cpu->id);
    gboolean stale = mm_cpumask_enter(t->mm, (unsigned)cpu->id);
    Kernel *k = e->m->k;
    if (k->asid_mode == KERNEL_ASID_DYNAMIC) {
      /* x86 PCIDs: the kernel picks this CPU's slot (choose_new_asid); a
       * slot taken from another mm, or behind t's flushes, is flushed. */
      gboolean flush;
      cpu->cur_asid = kernel_pcid_of(kernel_switch_asid(k, &cpu->kc, t->mm, &flush));
      if (flush && from_task) {
        cpu_flush_asid(cpu, cpu->cur_asid);
        cpu->ctr.c[CTR_TLB_FLUSH_FULL]++;
      }
    } else if (k->asid_mode == KERNEL_ASID_NONE) {
      if (from_task)
        cpu_flush_all(cpu); /* no PCIDs: a CR3 write drops every translation */
      cpu->cur_asid = 0;
    } else {
      if (stale) {
        cpu_flush_asid(cpu, t->mm->asid);
        cpu->ctr.c[CTR_TLB_FLUSH_FULL]++;
      }
      cpu->cur_asid = t->mm->asid;
    }
    cpu_forget_shortcuts(cpu);
  }
  cpu->kc.cur = t;
  cpu->kc.cur_exited = FALSE;
  cpu->kc.cur_since = cpu->clock;
  numa_balance_switch_in(e->m->k->numa_balance, &cpu->kc, t);
  return cpu;
}

/* Put thread t on its CPU, switching contexts if another thread ran there. */
static inline Cpu *run_on(Engine *e, Thread *t)
{
  Cpu *cpu = e->m->cpus[t->cpu];
  if (G_LIKELY(cpu->kc.cur == t))
    return cpu;
  return switch_to(e, t, cpu);
}

/* Some process was killed: a new kill takes the dead queues out of the
 * heaps at the next pick; TRUE when t is dead (its record is dropped). */
static G_NO_INLINE gboolean oom_dead(Engine *e, Thread *t)
{
  if (*e->oom_kills != e->kills_seen) {
    e->kills_seen = *e->oom_kills;
    e->heaps_stale = TRUE;
  }
  if (!t->mm->oom_killed)
    return FALSE;
  t->mm->oom_dropped_records++;
  return TRUE;
}

/* An access with --annotate: the full path (cpu_access), its cost read off
 * the CPU's counters around it and added to its instruction's and
 * mapping's rows (sim/annotation.h). */
static G_NO_INLINE void annotate_access(Engine *e, Cpu *cpu, Thread *t, const TraceRecord *r)
{
  Counters before = cpu->ctr;
  cpu_access(cpu, t, r);
  const Vma *vma = t->mm->oom_killed ? NULL : mm_find_vma(t->mm, r->addr);
  annotation_add(e->ann, t, t->pid, r->kind, r->addr, r->arg2, vma, &before, &cpu->ctr);
}

static void count_warmup(Engine *e)
{
  if (G_UNLIKELY(e->warmup_left) && --e->warmup_left == 0)
    snapshot_begin(e);
}

/* Run one record of thread t on cpu, its CPU (e->m->cpus[t->cpu], which
 * only a thread record changes); `on_cpu`: the caller made t cpu's current
 * thread.  `quick`: try cpu_access_quick first, worth its test where most
 * accesses stay on the page of the one before (its callers pass a constant
 * or a flag of the batch); it counts its accesses in *counts, which the
 * caller flushes into cpu (run_record does before a snapshot), or with
 * counts NULL in cpu's counters.  Returns TRUE when the run stopped
 * (e->stopped). */
static inline G_ALWAYS_INLINE gboolean run_record(Engine *e, Cpu *cpu, Thread *t, const TraceRecord *r, gboolean quick,
                                                  gboolean on_cpu, CpuQuickCounts *counts)
{
  TraceRecordType type = (TraceRecordType)r->type;
  if (G_UNLIKELY(*e->oom_kills) && oom_dead(e, t))
    return FALSE;
  if (!on_cpu && G_UNLIKELY(cpu->kc.cur != t))
    switch_to(e, t, cpu);
  if (G_UNLIKELY(cpu->clock >= *e->kh_wake))
    khugepaged_run(e->kh, cpu->clock);
  if (G_UNLIKELY(cpu->clock >= *e->kcd_wake))
    kcompactd_run(e->m->k->kcompactd, cpu->clock);
  if (G_UNLIKELY(cpu->clock >= cpu->kc.numa_due))
    numa_balance_tick(e->m->k->numa_balance, &cpu->kc, t);
  if (G_UNLIKELY(cpu->clock >= e->iv_due))
    interval_tick(e, cpu, counts);
  switch (type) {
  case REC_ACCESS:
    if (G_UNLIKELY(e->ann))
      annotate_access(e, cpu, t, r);
    else if (!quick)
      cpu_access(cpu, t, r);
    else if (!cpu_access_quick(cpu, r, counts))
      cpu_access_requick(cpu, t, r);
    if (G_UNLIKELY(e->warmup_left | *e->oom)) { /* both rare: one test */
      if (counts)
        cpu_quick_flush(cpu, counts); /* the warmup's end takes a snapshot */
      count_warmup(e);
      if (*e->oom) {
        e->stopped = TRUE;
        return TRUE;
      }
    }
    break;
  case REC_COMPUTE:
    cpu_compute(cpu, r->len);
    break;
  default:
    break;
  }
  return FALSE;
}

/* The queue to run next: nonempty, lowest CPU clock, first seen among equals
 * (the first ready queue of the ready heap's top CPU). */
static inline G_ALWAYS_INLINE Queue *pick(Engine *e, gboolean *starved)
{
  if (G_UNLIKELY(e->heaps_stale))
    heaps_rebuild(e);
  ReadyHeap *r = &e->ready;
  if (!r->n) {
    *starved = FALSE;
    return NULL;
  }
  ReadyKey *top = &r->a[0];
  for (;;) { /* refresh a stale top */
    uint64_t c = cpu_clock(e, top->cpu);
    if (c == top->clock)
      break;
    top->clock = c;
    ready_down(e, 0);
  }
  const CpuSlot *best = &e->slots[top->cpu];
  if (!e->lagging) { /* best is the all heap's minimum too */
    *starved = FALSE;
    return best->q[best->first];
  }
  Heap *a = &e->all;
  for (;;) {
    CpuSlot *atop = &e->slots[a->a[0]];
    uint64_t c = cpu_clock(e, a->a[0]);
    if (c == atop->aclock)
      break;
    atop->aclock = c;
    all_down(e, 0);
  }
  const CpuSlot *low = &e->slots[a->a[0]];
  /* A thread with nothing queued may come before the chosen one (a lower
   * clock, or the same clock and seen first): more input might belong to
   * it, so what runs next must not depend on where the input's batches
   * end. */
  *starved = low->aclock < top->clock || (low->aclock == top->clock && low->q[0]->idx < top->idx);
  return best->q[best->first];
}

/* The record of q, the first ready queue of the ready heap's top CPU, ran:
 * settle the CPU's key. */
static void ran(Engine *e, Queue *q)
{
  if (e->heaps_stale)
    return;
  int c = q->t->cpu;
  CpuSlot *s = &e->slots[c];
  if (!q->len) {
    if (--s->nready == 0) {
      slot_set_first(e, s, SLOT_NONE);
      ready_pop(e);
      return;
    }
    unsigned i = s->first + 1;
    while (!s->q[i]->len)
      i++;
    slot_set_first(e, s, i);
    e->ready.a[0].idx = s->q[i]->idx;
  }
  e->ready.a[0].clock = cpu_clock(e, c);
  ready_down(e, 0);
}

/* Run queued records.  With `all`, until every queue is empty (a barrier);
 * otherwise until the next record to run might be preceded by input not
 * read yet. */
static void run_queues(Engine *e, gboolean all)
{
  if (e->queues->len == 1) { /* one thread: no choice to make */
    Queue *q = g_ptr_array_index(e->queues, 0);
    const Cpu *cpu = e->m->cpus[q->t->cpu];
    cpu_prefetch_clear(e->pf);
    while (q->len && !e->stopped) {
      /* Host prefetch of the records ahead (see cpu_prefetch). */
      if (q->t->mm->pt.tables >= CPU_PREFETCH_MIN_TABLES) {
        size_t pos = q->head + CPU_PREFETCH_FAR; /* the ring's positions stay consecutive: cap is a power of two >= 16 */
        cpu_prefetch(cpu, q->t, q->len > CPU_PREFETCH_FAR ? &q->buf[pos & (q->cap - 1)] : NULL, e->pf, pos);
      }
      run_record(e, e->m->cpus[q->t->cpu], q->t, &q->buf[q->head], TRUE, FALSE, NULL);
      q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
      q->len--;
      e->queued--;
    }
    if (!q->len && !e->heaps_stale) {
      e->slots[q->t->cpu].nready = 0; /* q was the only queue */
      slot_set_first(e, &e->slots[q->t->cpu], SLOT_NONE);
      e->slots[q->t->cpu].rpos = -1;
      e->ready.n = 0;
    }
    return;
  }
  while (!e->stopped) {
    gboolean starved;
    Queue *q = pick(e, &starved);
    if (!q || (starved && !all && e->queued < ENGINE_QUEUE_MAX))
      return;
    run_record(e, e->m->cpus[q->t->cpu], q->t, &q->buf[q->head], TRUE, FALSE, NULL);
    q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
    q->len--;
    e->queued--;
    ran(e, q);
  }
}

static void barrier_event(Engine *e, Queue *q, const TraceRecord *r)
{
  run_queues(e, TRUE);
  if (e->stopped)
    return;
  Machine *m = e->m;
  gboolean mark = r->type == REC_ROI_BEGIN || r->type == REC_ROI_END;
  if (G_UNLIKELY(q->t->mm->oom_killed)) {
    if (!mark) {
      q->t->mm->oom_dropped_records++;
      return;
    }
  } else {
    run_on(e, q->t);
  }
  Cpu *cpu = m->cpus[q->t->cpu];
  if (e->whole && mark)
    return; /* --whole: the marks count for nothing */
  switch ((TraceRecordType)r->type) {
  case REC_ROI_BEGIN:
    e->in_roi = TRUE;
    e->roi_seen = TRUE;
    e->iv_live = TRUE; /* a marked region counts: its intervals go out as they close */
    snapshot_begin(e);
    e->warmup_left = e->warmup; /* --warmup counts from the region's start (the input's with --whole) */
    break;
  case REC_ROI_END:
    if (e->in_roi)
      snapshot_end(e);
    e->in_roi = FALSE;
    break;
  default: {
    if (G_UNLIKELY(e->ann) && r->type == REC_MMAP && (r->flags & MAP_F_FILE))
      annotation_map(e->ann, q->t->pid, r->addr, r->len, r->arg2, r->path); /* names for the report */
    uint64_t cost = kernel_syscall(m->k, &cpu->kc, q->t->mm, r);
    (void)cost;
    cpu_prefetch_forget(e->pf); /* it may have ended an address space */
    break;
  }
  }
}

/* A batch that can run without queueing: one thread exists, nothing is
 * queued, and every record of the batch belongs to that thread and is not a
 * thread record.  Queued records only ever run in input order then, and
 * nothing later in the batch can act on them before they run (a thread
 * record may move the thread to another CPU, a new thread's creation comes
 * before the records queued ahead of it), so running each record as it is
 * read gives the same order and the same results, without the copy into the
 * queue.  A host shortcut: a scan of the batch to save a queue per record. */
static Queue *solo_queue(const Engine *e, const TraceBatch *b, uint32_t pid, uint32_t tid)
{
  if (e->queues->len != 1)
    return NULL;
  Queue *q = e->last;
  if (q->len || e->last_pid != pid || e->last_tid != tid || q->t->mm->oom_killed)
    return NULL;
  uint32_t bpid, btid; /* a read-ahead source found them on its own core */
  if (!trace_batch_one_thread(b, &bpid, &btid) || (bpid && bpid != pid) || (btid && btid != tid))
    return NULL;
  return q;
}

/* TRUE if the batch changes pages often enough for host prefetch. */
static gboolean batch_jumps(const TraceBatch *b)
{
  unsigned step = MAX(b->n / PREFETCH_SAMPLES, 1u), samples = 0, jumps = 0;
  for (unsigned i = step; i < b->n; i += step, samples++)
    jumps += ((b->rec[i].addr ^ b->rec[i - 1].addr) >> 12) != 0;
  return jumps * PREFETCH_JUMP_RATIO >= samples;
}

/* The stays loop's bound: below this clock, a record needs none of
 * run_record's rare steps, so that a quick access or a computation is all
 * it does.  khugepaged's wake and the NUMA tick are due at the earlier of
 * their clocks; the warmup's count and an out-of-memory stop (0: every
 * record takes run_record) are tested after each access there.  Only
 * run_record changes any of them (the quick path and cpu_compute change
 * none), so the loop takes the bound again after each record it hands to
 * run_record: one compare a record instead of the four tests, two of them
 * through pointers. */
static inline uint64_t solo_due(const Engine *e, const Cpu *cpu)
{
  if (e->warmup_left || *e->oom || *e->oom_kills)
    return 0;
  return MIN(MIN(MIN(*e->kh_wake, *e->kcd_wake), cpu->kc.numa_due), e->iv_due);
}

/* run_solo's loop over records i.. of the batch, until an event record
 * (returned: its index) or the end (b->n).  Two copies: one for a batch
 * that changes pages often (`jumps`), with the host prefetch when the page
 * table is large, and one for a batch that mostly stays on a page, which
 * tries cpu_access_quick first and never prefetches; each loop then tests
 * per record only what its kind of batch needs. */
static inline G_ALWAYS_INLINE unsigned run_solo_from(Engine *e, Thread *t, const TraceBatch *b, unsigned i, gboolean jumps)
{
  /* The CPU stays: a solo batch holds no thread record. */
  Cpu *cpu = e->m->cpus[t->cpu];
  /* Tested once per batch and after each event: a host hint may lag. */
  gboolean pf = jumps && t->mm->pt.tables >= CPU_PREFETCH_MIN_TABLES;
  unsigned n = b->n;
  if (e->stopped)
    return n;
  /* Only the engine switches threads, so after the first record's switch
   * (which any record would make first, events too) t stays on it. */
  if (G_UNLIKELY(cpu->kc.cur != t) && !t->mm->oom_killed)
    switch_to(e, t, cpu);
  CpuQuickCounts counts = { 0 }; /* flushed on every way out */
  uint64_t due = jumps ? 0 : solo_due(e, cpu);
  const TraceRecord *r = &b->rec[i], *end = &b->rec[n];
  for (; r < end; r++) {
    if (G_UNLIKELY(r->type != REC_ACCESS && r->type != REC_COMPUTE))
      break;
    if (pf) {
      unsigned pos = (unsigned)(r - b->rec) + CPU_PREFETCH_FAR;
      cpu_prefetch(cpu, t, pos < n ? &b->rec[pos] : NULL, e->pf, pos);
    }
    if (!jumps && G_LIKELY(cpu->clock < due)) { /* none of run_record's rare steps is due */
      if (r->type == REC_COMPUTE) {
        cpu_compute(cpu, r->len);
        continue;
      }
      if (cpu_access_quick(cpu, r, &counts))
        continue;
    }
    if (run_record(e, cpu, t, r, !jumps, TRUE, jumps ? NULL : &counts)) {
      r = end; /* stopped */
      break;
    }
    if (!jumps)
      due = solo_due(e, cpu);
  }
  if (!jumps)
    cpu_quick_flush(cpu, &counts);
  return (unsigned)(r - b->rec);
}

/* The two copies, out of line: each loop gets its own registers.  Each
 * starts on a host cache line (64 bytes), so that its loops keep their
 * place in the host's fetch blocks when unrelated code before it grows or
 * shrinks: with the function 16 bytes off a 32-byte boundary the
 * sequential run took 0.55 s of user time instead of 0.40. */
static G_NO_INLINE __attribute__((aligned(64))) unsigned run_solo_jumps(Engine *e, Thread *t, const TraceBatch *b,
                                                                        unsigned i)
{
  return run_solo_from(e, t, b, i, TRUE);
}

static G_NO_INLINE __attribute__((aligned(64))) unsigned run_solo_stays(Engine *e, Thread *t, const TraceBatch *b,
                                                                        unsigned i)
{
  return run_solo_from(e, t, b, i, FALSE);
}

/* Run a batch solo_queue() accepted, record by record as engine_run would
 * once queued; host prefetch looks ahead within the batch. */
static void run_solo(Engine *e, Queue *q, const TraceBatch *b)
{
  Thread *t = q->t;
  gboolean jumps = e->ann || batch_jumps(b); /* the jumps loop takes no quick path */
  cpu_prefetch_clear(e->pf);
  unsigned i = 0;
  for (;;) {
    i = jumps ? run_solo_jumps(e, t, b, i) : run_solo_stays(e, t, b, i);
    if (i >= b->n || e->stopped)
      return;
    barrier_event(e, q, &b->rec[i++]);
    cpu_prefetch_clear(e->pf); /* the event may have ended the mm */
  }
}

static uint64_t engine_furthest_clock(const Machine *m)
{
  uint64_t c = 0;
  for (unsigned i = 0; i < m->n_cpus; i++)
    c = MAX(c, m->cpus[i]->clock);
  return c;
}

gboolean engine_run(Machine *m, TraceSource *src, const EngineOptions *opt, EngineResult *res, GError **error)
{
  memset(res, 0, sizeof *res);
  Engine e = { 0 };
  e.m = m;
  e.res = res;
  e.kh = m->k->khugepaged;
  e.kh_wake = khugepaged_next_wake_ptr(e.kh);
  e.kcd_wake = kcompactd_next_wake_ptr(m->k->kcompactd);
  e.oom = &m->k->oom;
  e.oom_kills = &m->k->oom_kill_count;
  e.queues = g_ptr_array_new_with_free_func(queue_free);
  e.slots = g_new0(CpuSlot, m->n_cpus);
  e.pf = cpu_prefetch_new();
  for (unsigned c = 0; c < m->n_cpus; c++) {
    e.slots[c].first = SLOT_NONE;
    e.slots[c].rpos = -1;
  }
  e.by_thread = g_hash_table_new(g_direct_hash, g_direct_equal);
  m->k->map_on_demand = src->unmapped == UNMAPPED_ONDEMAND;
  e.warmup = opt ? opt->warmup : 0;
  e.warmup_left = e.warmup;
  e.whole = opt && opt->whole;
  e.ann = opt ? opt->annotate : NULL;
  e.switch_cycles = (uint64_t)(settings_double(m->s, SET_SCHED_SWITCH_NS) * m->k->cycles_per_ns);
  e.per_cpu = opt && opt->per_cpu;
  e.per_thread = opt && opt->per_thread;
  e.iv_cycles = opt ? opt->interval_cycles : 0;
  e.iv_due = e.iv_cycles ? e.iv_cycles : UINT64_MAX;
  e.intervals = g_array_new(FALSE, TRUE, sizeof(EngineInterval));
  e.iv_held = g_array_new(FALSE, TRUE, sizeof(EngineInterval));
  e.iv_opt = opt;
  e.iv_live = e.whole; /* else held until the input marks a region or ends */
  e.iv_keep = !(opt && opt->on_interval) || opt->keep_intervals;
  e.iv_max = engine_intervals_max(e.per_cpu ? m->n_cpus : 0);
  e.iv_merge = 1;
  if (e.per_cpu) {
    e.cpu_begin = g_new0(Counters, m->n_cpus);
    e.iv_cpu_last = g_new0(Counters, m->n_cpus);
  }
  if (e.per_thread) {
    e.thr_mark = g_new0(Counters, m->n_cpus);
    e.thr_counts = g_hash_table_new(g_direct_hash, g_direct_equal);
    e.thr_order = g_ptr_array_new_with_free_func(g_free);
  }
  snapshot_begin(&e);

  /* Filled by sources that have no batches of their own (see
   * trace_source_view).  A batch is used only until the next read: records
   * are run from it (run_solo) or copied into the queues. */
  g_autofree TraceBatch *scratch = g_new(TraceBatch, 1);
  gboolean ok = TRUE;
  uint32_t pid = 1, tid = 1;
  const volatile int *stop = opt ? opt->stop : NULL;
  while (!e.stopped) {
    if (stop && *stop) {
      res->interrupted = TRUE;
      break;
    }
    if (opt && opt->progress)
      opt->progress(opt->progress_data, res->records, src->expected_records,
                    (double)engine_furthest_clock(m) / m->k->cycles_per_ns);
    const TraceBatch *batch = trace_source_view(src, scratch, error);
    if (batch == NULL) {
      ok = FALSE;
      break;
    }
    if (batch->n == 0)
      break;
    res->records += batch->n;
    Queue *solo = solo_queue(&e, batch, pid, tid);
    if (solo) {
      run_solo(&e, solo, batch);
      continue;
    }
    unsigned i;
    for (i = 0; i < batch->n && !e.stopped; i++) {
      const TraceRecord *r = &batch->rec[i];
      if (r->type == REC_THREAD) {
        pid = r->pid;
        tid = r->tid;
        if (!queue_for(&e, pid, tid, r->arg)) {
          m->k->oom = e.limit_error == NULL;
          e.stopped = TRUE;
          break;
        }
        continue;
      }
      Queue *q = queue_for(&e, r->pid ? r->pid : pid, r->tid ? r->tid : tid, -1);
      if (!q) {
        m->k->oom = e.limit_error == NULL;
        e.stopped = TRUE;
        break;
      }
      if (r->type == REC_ACCESS || r->type == REC_COMPUTE) {
        if (G_UNLIKELY(*e.oom_kills) && q->t->mm->oom_killed) {
          q->t->mm->oom_dropped_records++;
          continue;
        }
        push(&e, q, r);
        if (e.queued >= ENGINE_QUEUE_MAX)
          run_queues(&e, FALSE);
      } else {
        barrier_event(&e, q, r);
      }
    }
    if (G_UNLIKELY(e.limit_error)) {
      /* A limit of the machine (kernel.pid_max, machine_thread_check): bad
       * input, named with its record's number in the trace. */
      g_set_error(error, MMUSIM_TRACE_ERROR, TRACE_ERROR_PARSE, "%s: record %" G_GUINT64_FORMAT ": %s",
                  src->description, res->records - batch->n + i + 1, e.limit_error->message);
      g_clear_error(&e.limit_error);
      ok = FALSE;
      break;
    }
    run_queues(&e, FALSE);
  }
  if (ok)
    run_queues(&e, TRUE);
  /* Without an explicit end, the region runs to the end of the input. */
  if (ok && (e.in_roi || !e.roi_seen))
    snapshot_end(&e);
  res->oom = m->k->oom;
  res->n_oom_kills = m->k->oom_kills->len;
  if (res->n_oom_kills) {
    res->oom_kills = g_memdup2(m->k->oom_kills->data, res->n_oom_kills * sizeof(OomKill));
    for (guint i = 0; i < res->n_oom_kills; i++) {
      const Mm *mm = g_hash_table_lookup(m->k->mms, GUINT_TO_POINTER(res->oom_kills[i].pid));
      res->oom_kills[i].dropped_records = mm ? mm->oom_dropped_records : 0;
    }
  }
  interval_clear_pending_held(&e);
  res->interval_merged = e.iv_merge;
  res->n_intervals = e.intervals->len;
  res->intervals = (EngineInterval *)(void *)g_array_free(e.intervals, FALSE);
  if (!res->n_intervals) {
    g_free(res->intervals);
    res->intervals = NULL;
  }
  g_free(e.cpu_begin);
  g_free(e.iv_cpu_last);
  g_free(e.thr_mark);
  if (e.per_thread) {
    g_hash_table_destroy(e.thr_counts);
    g_ptr_array_free(e.thr_order, TRUE);
  }
  g_hash_table_destroy(e.by_thread);
  g_ptr_array_free(e.queues, TRUE);
  for (unsigned c = 0; c < m->n_cpus; c++)
    g_free(e.slots[c].q);
  g_free(e.slots);
  cpu_prefetch_free(e.pf);
  g_free(e.ready.a);
  g_free(e.all.a);
  return ok;
}

void engine_result_clear(EngineResult *res)
{
  g_free(res->oom_kills);
  res->oom_kills = NULL;
  res->n_oom_kills = 0;
  for (unsigned i = 0; i < res->n_intervals; i++)
    g_free(res->intervals[i].per_cpu);
  g_free(res->intervals);
  res->intervals = NULL;
  res->n_intervals = 0;
  g_free(res->per_cpu);
  res->per_cpu = NULL;
  g_free(res->threads);
  res->threads = NULL;
  res->n_threads = res->n_cpus = 0;
}
