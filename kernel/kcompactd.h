/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kcompactd.h - the per-node compaction daemon (mm/compaction.c, Linux 6.12):
 * woken by an allocation that may not compact itself (thp.defrag=defer, a
 * plain VMA under defer+madvise), it compacts its node's zones in the
 * background, so that later faults and khugepaged find free huge pages.
 */
#ifndef MMUSIM_KCOMPACTD_H
#define MMUSIM_KCOMPACTD_H

#include <glib.h>
#include <stdint.h>
#include "hooks.h"

typedef struct Kernel Kernel;
typedef struct Kcompactd Kcompactd;

/* NULL with *error when kcompactd.cpu names no CPU of the machine. */
Kcompactd *kcompactd_new(Kernel *k, GError **error);
void kcompactd_free(Kcompactd *kd);

/* wakeup_kcompactd (mm/compaction.c 6.12) of `node` for an allocation of
 * 2^order 4K frames that failed on waker: the order is remembered
 * (kcompactd_max_order); a daemon that is asleep and whose node
 * kcompactd_node_suitable finds worth compacting is woken, to run from
 * waker's clock on. */
void kcompactd_wakeup(Kcompactd *kd, const KCpu *waker, int node, unsigned order);

/* Simulated time, in cycles, of the next due run (UINT64_MAX: none), and
 * where it lives, for the engine's per-record test. */
uint64_t kcompactd_next_wake(const Kcompactd *kd);
const uint64_t *kcompactd_next_wake_ptr(const Kcompactd *kd);

/* kcompactd_do_work of every node whose daemon is due at or before `now`
 * (cycles), each charged to its CPU (kcompactd.cpu). */
void kcompactd_run(Kcompactd *kd, uint64_t now);

#endif
