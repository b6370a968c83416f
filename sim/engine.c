/*
 * engine.c - the event loop: per-thread queues, clock-ordered CPUs, barriers,
 * the region of interest, and the daemons that run in simulated time.
 *
 * khugepaged (mmu/khugepaged.c) runs when the CPU about to run a record has
 * reached its next wake: that CPU has the lowest clock of those with work,
 * so everything before the wake has run.  The test is one compare per
 * record, against the wake time read through a pointer the daemon keeps
 * current (UINT64_MAX while no mm is registered), so a registration made by
 * a system call or a fault counts from the next record.  The NUMA scanner
 * (mmu/numa_balance.c) is driven the same way, by the earliest next scan
 * of any address space, and scans the running thread's address space when
 * its time has come.
 *
 * Queues hold at most ENGINE_QUEUE_MAX records in all; past that the engine
 * runs whatever is queued, so a trace whose threads are far apart costs
 * bounded memory.  (That bound is a memory limit of the host, not a model
 * parameter.)
 */
#include "config.h"
#include "engine.h"

#include <string.h>
#include "events.h"
#include "khugepaged.h"
#include "numa_balance.h"

#define ENGINE_QUEUE_MAX (1u << 20)

/* How many records ahead the host prefetches, per stage of cpu_prefetch():
 * far enough for a host DRAM miss to complete while the records in between
 * run.  Host tuning, not model. */
static const unsigned prefetch_ahead[] = { 16, 10, 5 };

typedef struct {
  Thread *t;
  TraceRecord *buf;
  size_t cap, head, len;
  unsigned idx;        /* order of first appearance: breaks ties between equal clocks */
} Queue;

/* A binary min-heap of queues keyed by (clock of the queue's CPU, idx).
 * Keys are refreshed lazily: clocks only grow, so a stored clock is never
 * above the real one, and a top whose stored clock is current is the true
 * minimum; a stale top gets its clock refreshed and sinks.  Re-pinning a
 * thread to another CPU can lower its key: that rebuilds the heaps. */
typedef struct {
  uint64_t clock;
  unsigned idx;
  Queue *q;
} HeapEnt;

typedef struct {
  HeapEnt *a;
  unsigned n, cap;
} Heap;

typedef struct {
  Machine *m;
  GPtrArray *queues;   /* Queue*, in order of first appearance */
  GHashTable *by_thread; /* Thread* -> Queue* */
  Queue *last;         /* lookup cache */
  uint32_t last_pid, last_tid;
  size_t queued;
  uint64_t warmup_left;
  gboolean whole;      /* count the whole input, region marks ignored */
  uint64_t switch_cycles; /* sched.switch_ns in cycles */
  gboolean pcid;       /* tlb.pcid */
  gboolean in_roi, roi_seen, stopped;
  Counters begin;
  uint64_t t_begin;
  gint64 host_begin;   /* g_get_monotonic_time() at the region's start */
  EngineResult *res;
  Khugepaged *kh;
  const uint64_t *kh_wake; /* khugepaged's next wake, in cycles */
  Heap ready;          /* queues with records */
  Heap all;            /* every queue: the lowest clock of any thread */
  gboolean heaps_stale; /* a thread changed CPU: rebuild before the next pick */
  const uint64_t *nb_next; /* the NUMA scanner's next scan, in cycles */
} Engine;

static inline gboolean heap_less(const HeapEnt *x, const HeapEnt *y)
{
  return x->clock < y->clock || (x->clock == y->clock && x->idx < y->idx);
}

static void heap_sift_down(Heap *h, unsigned i)
{
  HeapEnt v = h->a[i];
  for (;;) {
    unsigned c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && heap_less(&h->a[c + 1], &h->a[c]))
      c++;
    if (!heap_less(&h->a[c], &v))
      break;
    h->a[i] = h->a[c];
    i = c;
  }
  h->a[i] = v;
}

static void heap_push(Heap *h, Queue *q, uint64_t clock)
{
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 16;
    h->a = g_renew(HeapEnt, h->a, h->cap);
  }
  HeapEnt v = { clock, q->idx, q };
  unsigned i = h->n++;
  while (i > 0) {
    unsigned p = (i - 1) / 2;
    if (!heap_less(&v, &h->a[p]))
      break;
    h->a[i] = h->a[p];
    i = p;
  }
  h->a[i] = v;
}

static void heap_pop(Heap *h)
{
  h->a[0] = h->a[--h->n];
  if (h->n)
    heap_sift_down(h, 0);
}

static inline uint64_t queue_clock(const Engine *e, const Queue *q)
{
  return e->m->cpus[q->t->cpu]->clock;
}

/* The top of h with its key refreshed, NULL when empty. */
static const HeapEnt *heap_top(const Engine *e, Heap *h)
{
  while (h->n) {
    uint64_t c = queue_clock(e, h->a[0].q);
    if (c == h->a[0].clock)
      return &h->a[0];
    h->a[0].clock = c;
    heap_sift_down(h, 0);
  }
  return NULL;
}

static void heaps_rebuild(Engine *e)
{
  e->ready.n = e->all.n = 0;
  for (guint i = 0; i < e->queues->len; i++) {
    Queue *q = g_ptr_array_index(e->queues, i);
    heap_push(&e->all, q, queue_clock(e, q));
    if (q->len)
      heap_push(&e->ready, q, queue_clock(e, q));
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

/* The thread (pid, tid)'s queue, made on its first appearance.  A new thread
 * starts when the thread of the records before it (its creator, as clone()
 * or fork()) got there: the creator's queued records run first, and the new
 * thread's CPU, if its clock is behind, idles until then. */
static Queue *queue_for(Engine *e, uint32_t pid, uint32_t tid, int cpu)
{
  if (e->last && e->last_pid == pid && e->last_tid == tid && cpu < 0)
    return e->last;
  Thread *t = machine_thread(e->m, pid, tid, cpu);
  if (!t)
    return NULL;
  Queue *q = g_hash_table_lookup(e->by_thread, t);
  if (!q) {
    Queue *creator = e->last;
    if (creator)
      run_queues(e, TRUE);
    if (creator && !e->stopped) {
      Cpu *c = e->m->cpus[t->cpu];
      uint64_t now = queue_clock(e, creator);
      if (c->clock < now) {
        cpu_drain(c);
        c->idle_cycles += now - c->clock;
        c->clock = now;
      }
    }
    q = g_new0(Queue, 1);
    q->t = t;
    q->idx = e->queues->len;
    g_hash_table_insert(e->by_thread, t, q);
    g_ptr_array_add(e->queues, q);
    heap_push(&e->all, q, queue_clock(e, q));
  } else if (cpu >= 0) {
    e->heaps_stale = TRUE; /* may have moved to a CPU with a lower clock */
  }
  e->last = q;
  e->last_pid = pid;
  e->last_tid = tid;
  return q;
}

static void push(Engine *e, Queue *q, const TraceRecord *r)
{
  if (q->len == 0 && !e->heaps_stale)
    heap_push(&e->ready, q, queue_clock(e, q));
  if (q->len == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 1024;
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
}

static void snapshot_begin(Engine *e)
{
  Machine *m = e->m;
  for (unsigned i = 0; i < m->n_cpus; i++)
    cpu_drain(m->cpus[i]);
  machine_counters(m, &e->begin);
  e->t_begin = machine_max_clock(m);
  e->host_begin = g_get_monotonic_time();
}

static void snapshot_end(Engine *e)
{
  Machine *m = e->m;
  for (unsigned i = 0; i < m->n_cpus; i++)
    cpu_drain(m->cpus[i]);
  Counters now;
  machine_counters(m, &now);
  counters_diff(&e->res->counted, &now, &e->begin);
  e->res->elapsed_cycles = machine_max_clock(m) - e->t_begin;
  e->res->host_seconds = (double)(g_get_monotonic_time() - e->host_begin) / 1e6;
}

/* Put thread t on its CPU, switching contexts if another thread ran there. */
static Cpu *run_on(Engine *e, Thread *t)
{
  Machine *m = e->m;
  Cpu *cpu = m->cpus[t->cpu];
  if (G_LIKELY(cpu->cur == t))
    return cpu;
  if (cpu->cur) {
    cpu->ctr.c[CTR_CONTEXT_SWITCHES]++;
    cpu_stall(cpu, e->switch_cycles);
  }
  if (!cpu->cur || cpu->cur->mm != t->mm) {
    if (!e->pcid && cpu->cur)
      cpu_flush_all(cpu); /* no PCIDs: a CR3 write drops every translation */
    cpu->cur_asid = t->mm->asid;
    cpu->ud_key = cpu->ui_key = ~0ULL;
    mm_cpumask_set(t->mm, (unsigned)cpu->id);
  }
  cpu->cur = t;
  return cpu;
}

static void count_warmup(Engine *e)
{
  if (G_UNLIKELY(e->warmup_left) && --e->warmup_left == 0)
    snapshot_begin(e);
}

static void run_record(Engine *e, Thread *t, const TraceRecord *r)
{
  Cpu *cpu = run_on(e, t);
  if (G_UNLIKELY(cpu->clock >= *e->kh_wake))
    khugepaged_run(e->kh, cpu->clock);
  if (G_UNLIKELY(cpu->clock >= *e->nb_next))
    numa_balance_tick(e->m->k->numa_balance, cpu, t);
  switch ((TraceRecordType)r->type) {
  case REC_ACCESS:
    cpu_access(cpu, t, r);
    count_warmup(e);
    if (G_UNLIKELY(e->m->k->oom))
      e->stopped = TRUE;
    break;
  case REC_COMPUTE:
    cpu_compute(cpu, r->len);
    break;
  default:
    break;
  }
}

/* The queue to run next: nonempty, lowest CPU clock, first seen among equals
 * (the top of the ready heap). */
static Queue *pick(Engine *e, gboolean *starved)
{
  if (G_UNLIKELY(e->heaps_stale))
    heaps_rebuild(e);
  const HeapEnt *best = heap_top(e, &e->ready);
  if (!best) {
    *starved = FALSE;
    return NULL;
  }
  /* A thread with nothing queued may be behind the chosen one: more input
   * might belong to it. */
  const HeapEnt *low = heap_top(e, &e->all);
  *starved = low->clock < best->clock;
  return best->q;
}

/* Run queued records.  With `all`, until every queue is empty (a barrier);
 * otherwise until the next record to run might be preceded by input not
 * read yet. */
static void run_queues(Engine *e, gboolean all)
{
  if (e->queues->len == 1) { /* one thread: no choice to make */
    Queue *q = g_ptr_array_index(e->queues, 0);
    const Cpu *cpu = e->m->cpus[q->t->cpu];
    while (q->len && !e->stopped) {
      /* Host prefetch of the records ahead (see cpu_prefetch). */
      for (unsigned st = 0; st < G_N_ELEMENTS(prefetch_ahead); st++)
        if (q->len > prefetch_ahead[st])
          cpu_prefetch(cpu, q->t, &q->buf[(q->head + prefetch_ahead[st]) & (q->cap - 1)], st);
      run_record(e, q->t, &q->buf[q->head]);
      q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
      q->len--;
      e->queued--;
    }
    if (!q->len)
      e->ready.n = 0; /* q was the only entry */
    return;
  }
  while (!e->stopped) {
    gboolean starved;
    Queue *q = pick(e, &starved);
    if (!q || (starved && !all && e->queued < ENGINE_QUEUE_MAX))
      return;
    run_record(e, q->t, &q->buf[q->head]);
    q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
    q->len--;
    e->queued--;
    /* q was the top of the ready heap; its new clock is refreshed lazily. */
    if (!q->len && !e->heaps_stale)
      heap_pop(&e->ready);
  }
}

static void barrier_event(Engine *e, Queue *q, const TraceRecord *r)
{
  run_queues(e, TRUE);
  if (e->stopped)
    return;
  Machine *m = e->m;
  Cpu *cpu = run_on(e, q->t);
  if (e->whole && (r->type == REC_ROI_BEGIN || r->type == REC_ROI_END))
    return; /* --whole: the marks count for nothing */
  switch ((TraceRecordType)r->type) {
  case REC_ROI_BEGIN:
    e->in_roi = TRUE;
    e->roi_seen = TRUE;
    snapshot_begin(e);
    break;
  case REC_ROI_END:
    if (e->in_roi)
      snapshot_end(e);
    e->in_roi = FALSE;
    break;
  default: {
    uint64_t cost = kernel_syscall(m->k, cpu, q->t->mm, r);
    (void)cost;
    break;
  }
  }
}

gboolean engine_run(Machine *m, TraceSource *src, const EngineOptions *opt, EngineResult *res, GError **error)
{
  memset(res, 0, sizeof *res);
  Engine e = { 0 };
  e.m = m;
  e.res = res;
  e.kh = m->k->khugepaged;
  e.kh_wake = khugepaged_next_wake_ptr(e.kh);
  e.nb_next = numa_balance_next_ptr(m->k->numa_balance);
  e.queues = g_ptr_array_new_with_free_func(queue_free);
  e.by_thread = g_hash_table_new(g_direct_hash, g_direct_equal);
  m->k->map_on_demand = src->unmapped == UNMAPPED_ONDEMAND;
  e.warmup_left = opt ? opt->warmup : 0;
  e.whole = opt && opt->whole;
  e.switch_cycles = (uint64_t)(settings_double(m->s, SET_SCHED_SWITCH_NS) * m->k->cycles_per_ns);
  e.pcid = settings_bool(m->s, SET_TLB_PCID);
  snapshot_begin(&e);

  g_autofree TraceBatch *batch = g_new(TraceBatch, 1);
  gboolean ok = TRUE;
  uint32_t pid = 1, tid = 1;
  while (!e.stopped) {
    if (!trace_source_next(src, batch, error)) {
      ok = FALSE;
      break;
    }
    if (batch->n == 0)
      break;
    res->records += batch->n;
    for (unsigned i = 0; i < batch->n && !e.stopped; i++) {
      const TraceRecord *r = &batch->rec[i];
      if (r->type == REC_THREAD) {
        pid = r->pid;
        tid = r->tid;
        if (!queue_for(&e, pid, tid, r->arg)) {
          m->k->oom = TRUE;
          e.stopped = TRUE;
        }
        continue;
      }
      Queue *q = queue_for(&e, r->pid ? r->pid : pid, r->tid ? r->tid : tid, -1);
      if (!q) {
        m->k->oom = TRUE;
        e.stopped = TRUE;
        break;
      }
      if (r->type == REC_ACCESS || r->type == REC_COMPUTE) {
        push(&e, q, r);
        if (e.queued >= ENGINE_QUEUE_MAX)
          run_queues(&e, FALSE);
      } else {
        barrier_event(&e, q, r);
        /* --warmup counts from the region's start (from the input's with --whole) */
        if (r->type == REC_ROI_BEGIN && !e.whole)
          e.warmup_left = opt ? opt->warmup : 0;
      }
    }
    run_queues(&e, FALSE);
  }
  if (ok)
    run_queues(&e, TRUE);
  /* Without an explicit end, the region runs to the end of the input. */
  if (ok && (e.in_roi || !e.roi_seen))
    snapshot_end(&e);
  res->oom = m->k->oom;
  g_hash_table_destroy(e.by_thread);
  g_ptr_array_free(e.queues, TRUE);
  g_free(e.ready.a);
  g_free(e.all.a);
  return ok;
}
