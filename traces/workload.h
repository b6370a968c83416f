/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * workload.h - workload generators: the registry and the common parameters.
 *
 * A WORKLOAD is "name:key=value,key=value".  Every generator takes size
 * (bytes it works on), accesses (count in the measured phase), seed, gap
 * (non-memory instructions before each access) and backing (anon | hugetlb).
 * A generator is a TraceSource: it emits the mmap of its memory, a setup phase
 * that touches it as the benchmark it imitates does, `roi begin`, the measured
 * accesses, and `roi end`.  State is O(1) in size: random orders come from a
 * keyed permutation (traces/perm.c), not from stored arrays.
 */
#ifndef MMUSIM_WORKLOAD_H
#define MMUSIM_WORKLOAD_H

#include "source.h"

/* Base virtual address of the first region a generator maps. */
#define WORKLOAD_BASE_VA 0x7f0000000000ULL

/* Open a generator.  `*seed` replaces the spec's seed (`mmusim run --seed`,
 * and each repeat of -r); NULL keeps the spec's own. */
TraceSource *workload_open(const char *spec, const uint64_t *seed, GError **error);
/* `mmusim list workloads`: one block per generator with its parameters. */
void workload_list(GString *out);

#endif
