/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * oom_kill.c - the OOM killer of mem.oom_policy=kill (see oom_kill.h).
 *
 * Models: out_of_memory with vm.panic_on_oom=0 for a page fault's
 * allocation: select_bad_process over every live process, oom_badness as
 * get_mm_rss() + mm_pgtables_bytes() / PAGE_SIZE (no swap here, so no swap
 * entries; oom_score_adj is 0 for every process), oom_kill_process on the
 * victim, whose memory the teardown frees at once (exit_mmap, done
 * synchronously as the oom_reaper would start it); the fault then runs
 * again.  RSS counts what get_mm_rss counts: anonymous pages, a THP as its
 * 512 frames; not the shared zero page or the huge zero page, nor hugetlb
 * pages (accounted apart, as hugetlb_count).  Badness is in 4K frames on
 * every base page size.  The trace's processes are ordinary tasks: pid 1 is
 * not init and may be killed.
 *
 * Leaves out: vm.oom_kill_allocating_task, oom_score_adj, cpusets and
 * memory cgroups (one constraint: the whole machine), the sacrifice of a
 * child, the wait for a victim that is still exiting (the teardown here is
 * immediate), and the kernel log's dump of every task.  The killer itself
 * costs no simulated time: the victim's teardown is charged as munmap's is
 * (the TLB shootdown to the CPU whose fault ran the killer); the task scan,
 * the signal and the victim's exit path are not priced.
 * Sources: mm/oom_kill.c (out_of_memory, select_bad_process,
 * oom_evaluate_task, oom_badness, __oom_kill_process), mm/mmap.c exit_mmap,
 * Documentation/admin-guide/sysctl/vm.rst (panic_on_oom, oom_kill).
 */
#include "config.h"
#include "oom_kill.h"

#include "events.h"
#include "hugetlb.h"

typedef struct {
  const Kernel *k;
  uint64_t rss;
} RssWalk;

/* Frames get_mm_rss counts for one entry of the walk: a leaf present (a
 * NUMA hinting entry keeps PTE_P), not a zero page, not a hugetlb page. */
static int rss_entry(PtWalk *w, uint64_t e, uint64_t addr, uint64_t next)
{
  RssWalk *rw = w->ctx;
  if (!pte_leaf(e, w->level) || !pte_present(e) || pte_zero_page(e))
    return 0;
  if (w->level > 1 && hugetlb_owns(rw->k->hugetlb, pte_pfn(e), NULL))
    return 0;
  rw->rss += pgtable_entry_span(&w->pt->g, w->level) >> 12;
  return 0;
}

static const PtWalkOps rss_ops = { .pud_entry = rss_entry, .pmd_entry = rss_entry, .pte_entry = rss_entry };

uint64_t oom_badness(const Kernel *k, const Mm *mm, uint64_t *rss, uint64_t *pgtables)
{
  RssWalk w = { k, 0 };
  uint64_t tables = 0;
  if (!mm->oom_killed && mm->pt.root) {
    pgtable_walk(&mm->pt, 0, UINT64_MAX, &rss_ops, &w);
    /* mm_pgtables_bytes counts the tables below the PGD, a deposited one
     * too (mm_inc_nr_ptes when a huge PMD deposits it). */
    tables = mm->pt.tables - 1 + mm_deposited_count(mm);
  }
  if (rss)
    *rss = w.rss;
  if (pgtables)
    *pgtables = tables;
  return w.rss + tables;
}

Mm *oom_select_bad_process(const Kernel *k)
{
  Mm *chosen = NULL;
  uint64_t chosen_points = 0;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, k->mms);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    Mm *mm = value;
    if (mm->oom_killed || !mm->pt.root)
      continue; /* dead, or never set up: oom_badness's LONG_MIN, not a candidate */
    uint64_t points = oom_badness(k, mm, NULL, NULL);
    /* oom_evaluate_task (Linux 5.9 on): "if (points == LONG_MIN || points
     * < oc->chosen_points) goto next", chosen_points starting at LONG_MIN:
     * any live process may be chosen, one scoring 0 too (its root table
     * is freed); an equal score replaces the choice, so the tie goes to the
     * task met last in creation order.  The hash table has no order: the
     * serial stands for the task list's. */
    if (chosen && points < chosen_points)
      continue;
    if (chosen && points == chosen_points && mm->serial < chosen->serial)
      continue;
    chosen = mm;
    chosen_points = points;
  }
  return chosen;
}

/* The victim's threads stop: each CPU running one of them drops it, as
 * do_exit's final schedule() would; it leaves the mm's CPU mask.  The
 * switch to the next task is that task's to pay when it arrives there
 * (cur_exited: the engine's switch_to counts and charges it). */
static void threads_off_cpus(Kernel *k, Mm *victim)
{
  for (unsigned i = 0; i < k->n_cpus; i++) {
    KCpu *c = k->cpus[i];
    if (!c->cur || c->cur->mm != victim)
      continue;
    c->cur->ran += kcpu_now(c) - c->cur_since;
    mm_cpumask_leave(victim, (unsigned)c->id);
    c->cur = NULL;
    c->cur_exited = TRUE;
    c->numa_due = UINT64_MAX;
    k->hooks->forget_shortcuts(k->hw, c);
  }
}

const char *oom_trigger_name(OomTrigger trigger)
{
  return trigger == OOM_TRIGGER_CREATION ? "creation" : "fault";
}

Mm *oom_kill(Kernel *k, KCpu *cpu, uint32_t by_pid, OomTrigger trigger)
{
  Mm *victim = oom_select_bad_process(k);
  if (!victim)
    return NULL; /* "Out of memory and no killable processes": k->oom stays */
  uint32_t tid = cpu->cur ? cpu->cur->tid : 0; /* before the victim's threads leave */
  OomKill kill = {
    .pid = victim->pid,
    .by_pid = by_pid,
    .trigger = trigger,
    .cpu = cpu->id,
    .time_ns = kernel_now_ns(k, cpu),
  };
  kill.badness = oom_badness(k, victim, &kill.rss_pages, &kill.pgtable_pages);
  /* __oom_kill_process: SIGKILL, then the victim's memory goes (exit_mmap,
   * or the oom_reaper first); here both at once, on the faulting CPU. */
  kill.freed_pages = kernel_exit_mmap(k, cpu, victim);
  threads_off_cpus(k, victim);
  victim->oom_killed = TRUE;
  g_array_append_val(k->oom_kills, kill);
  k->oom_kill_count = k->oom_kills->len;
  k->oom = FALSE;
  cpu->ctr->c[CTR_OOM_KILL]++;
  if (events_enabled(k->ev))
    events_emit(k->ev, kill.time_ns, cpu->id, by_pid, tid, "oom_kill",
                "victim=%u badness=%" G_GUINT64_FORMAT " rss_pages=%" G_GUINT64_FORMAT " pgtable_pages=%" G_GUINT64_FORMAT
                " freed_pages=%" G_GUINT64_FORMAT " trigger=%s",
                kill.pid, kill.badness, kill.rss_pages, kill.pgtable_pages, kill.freed_pages, oom_trigger_name(trigger));
  return victim;
}
