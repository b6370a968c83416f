/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kcompactd.c - the per-node compaction daemon, after mm/compaction.c and
 * mm/vmscan.c of Linux 6.12.
 *
 * Models:
 * - The wake (wakeup_kcompactd).  An allocation whose gfp mask has
 *   __GFP_KSWAPD_RECLAIM and not __GFP_DIRECT_RECLAIM (a THP or mTHP fault
 *   under thp.defrag=defer, or in a VMA without MADV_HUGEPAGE under
 *   defer+madvise: vma_thp_gfp_mask, mm/huge_memory.c) and finds no free
 *   block enters __alloc_pages_slowpath, which wakes the kswapd of every
 *   node of its zonelist (wake_all_kswapds).  wakeup_kswapd wakes kcompactd
 *   at once when the node is balanced at order 0 but not at the order, as a
 *   fragmented node with free memory is (pgdat_balanced, then
 *   wakeup_kcompactd since the mask lacks __GFP_DIRECT_RECLAIM); otherwise
 *   kswapd reclaims and wakes kcompactd before it sleeps
 *   (kswapd_try_to_sleep).  Reclaim frees nothing here, so both end in
 *   wakeup_kcompactd(pgdat, order): the node's kcompactd_max_order rises to
 *   the order, and a sleeping daemon is woken when kcompactd_node_suitable
 *   finds a zone without a free block of the order that is worth
 *   compacting (compaction_suit_allocation_order).  An order-0 wake does
 *   nothing.
 * - The work (kcompactd_do_work), from the waker's clock on: count
 *   compact_daemon_wake, then each zone of the node, lowest first, that is
 *   not deferred and worth compacting is compacted at MIGRATE_SYNC_LIGHT
 *   (kernel/compaction.c compact_zone_kcompactd), a failure deferring the
 *   zone; compact_daemon_migrate_scanned and compact_daemon_free_scanned
 *   count the scanners' steps, compact_migrated the pages moved; then
 *   kcompactd_max_order goes back to 0 and the daemon sleeps until woken.
 * - Costs as direct compaction's (compact.scan_page_ns per pfn examined,
 *   compact.migrate_page_ns and a 4K copy per page moved), charged to
 *   compact_daemon_cycles and stalled on the CPU of kcompactd.cpu.
 * Leaves out: proactive compaction (the HPAGE_FRAG_CHECK_INTERVAL_MSEC
 * timeout and vm.compaction_proactiveness's fragmentation score), kswapd
 * and reclaim themselves, watermarks (a free block of the order is the
 * whole test), the scheduling delay of the woken kthread, and what a
 * kernel older than 4.6 did (kswapd compacted itself: no daemon runs then).
 */
#include "config.h"
#include "kcompactd.h"

#include "events.h"
#include "kernel.h"
#include "rmap.h"
#include "thp.h"

#define KCD_IDLE UINT64_MAX

typedef struct {
  unsigned max_order; /* pgdat->kcompactd_max_order, in 4K frames */
  gboolean woken;     /* woken and not run yet (no sleeper on kcompactd_wait) */
  uint64_t due;       /* cycles: the waker's clock at the wake */
} KcompactdNode;

struct Kcompactd {
  Kernel *k;
  int nodes;
  KcompactdNode *node;
  int64_t cpu;        /* kcompactd.cpu: -1 for the last CPU of each node */
  uint64_t next_wake; /* the earliest due of a woken node, or KCD_IDLE */
};

Kcompactd *kcompactd_new(Kernel *k, GError **error)
{
  g_return_val_if_fail(k != NULL && k->s != NULL, NULL);
  const Settings *s = k->s;
  int64_t nodes = settings_int(s, SET_MACHINE_NODES);
  int64_t cpu;
  if (!kernel_cpu_setting(s, SET_KCOMPACTD_CPU, "the last CPU of each node", &cpu, error))
    return NULL;
  Kcompactd *kd = g_new0(Kcompactd, 1);
  kd->k = k;
  kd->nodes = (int)nodes;
  kd->node = g_new0(KcompactdNode, (gsize)nodes);
  kd->cpu = cpu;
  kd->next_wake = KCD_IDLE;
  return kd;
}

void kcompactd_free(Kcompactd *kd)
{
  if (!kd)
    return;
  g_free(kd->node);
  g_free(kd);
}

uint64_t kcompactd_next_wake(const Kcompactd *kd)
{
  return kd->next_wake;
}

const uint64_t *kcompactd_next_wake_ptr(const Kcompactd *kd)
{
  return &kd->next_wake;
}

void kcompactd_wakeup(Kcompactd *kd, const KCpu *waker, int node, unsigned order)
{
  g_return_if_fail(kd != NULL && waker != NULL && node >= 0 && node < kd->nodes);
  if (!order || !kernel_has(kd->k, KR_KCOMPACTD))
    return;
  KcompactdNode *n = &kd->node[node];
  n->max_order = MAX(n->max_order, order);
  if (n->woken || !physmem_kcompactd_suitable(kd->k->pm, node, n->max_order))
    return;
  n->woken = TRUE;
  n->due = kcpu_now(waker);
  kd->next_wake = MIN(kd->next_wake, n->due);
}

/* The CPU node's daemon runs on: kcompactd binds itself to the node's CPUs
 * (kcompactd(): set_cpus_allowed_ptr(cpumask_of_node)); the model takes the
 * last of them, or kcompactd.cpu. */
static KCpu *node_cpu(const Kcompactd *kd, int node)
{
  const Kernel *k = kd->k;
  if (kd->cpu >= 0)
    return kd->cpu < (int64_t)k->n_cpus ? k->cpus[kd->cpu] : NULL;
  for (unsigned i = k->n_cpus; i-- > 0;)
    if (k->cpus[i]->node == node)
      return k->cpus[i];
  return NULL;
}

static void do_work(Kcompactd *kd, int node)
{
  Kernel *k = kd->k;
  KcompactdNode *n = &kd->node[node];
  KCpu *cpu = node_cpu(kd, node);
  if (!cpu)
    return;
  CompactResult cr = { 0 };
  KCpu *was = rmap_compact_cpu(k, cpu);
  physmem_kcompactd_work(k->pm, node, n->max_order, &cr);
  rmap_compact_cpu(k, was);
  uint64_t cycles = thp_compact_cycles(k, &cr);
  cpu->ctr->c[CTR_COMPACT_DAEMON_WAKE]++;
  cpu->ctr->c[CTR_COMPACT_DAEMON_MIGRATE_SCANNED] += cr.scanned - cr.free_scanned;
  cpu->ctr->c[CTR_COMPACT_DAEMON_FREE_SCANNED] += cr.free_scanned;
  thp_count_compact_work(cpu, &cr);
  cpu->ctr->c[CTR_COMPACT_DAEMON_CYCLES] += cycles;
  kernel_drain(k, cpu);
  kernel_stall(k, cpu, cycles);
  kernel_event(k, cpu, 0, "kcompactd",
               "node=%d order=%u scanned=%" G_GUINT64_FORMAT " migrated=%" G_GUINT64_FORMAT
               " cycles=%" G_GUINT64_FORMAT,
               node, n->max_order, cr.scanned, cr.migrated, cycles);
  /* kcompactd_do_work: kcompactd_max_order <= cc.order goes back to 0. */
  n->max_order = 0;
}

void kcompactd_run(Kcompactd *kd, uint64_t now)
{
  g_return_if_fail(kd != NULL);
  while (kd->next_wake <= now) {
    uint64_t next = KCD_IDLE;
    for (int i = 0; i < kd->nodes; i++) {
      KcompactdNode *n = &kd->node[i];
      if (!n->woken)
        continue;
      if (n->due <= now) {
        n->woken = FALSE;
        do_work(kd, i);
      } else {
        next = MIN(next, n->due);
      }
    }
    kd->next_wake = next;
  }
}
