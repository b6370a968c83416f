/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_validate.h - `mmusim host validate`: the host's native pointer chase
 * (cli/host_bench.h) beside the model's run of the same chase on a machine
 * file, span by span, with 4K pages and with THP.
 *
 * The model runs `ptrchase:size=SPAN,line=64,order=random,seed=1` through
 * the runner (cli/runner.h, the code of `mmusim run`), in process, once with
 * thp.enabled=never and once with thp.enabled=always, every other setting as
 * the machine file has it (so a file that turns on virt.nested runs nested).
 * The table gives native and model ns per access, the error of the model,
 * and the 4K/THP ratio of each side.
 *
 * --fit fits dram.latency_ns, the one constant of the chase no manual gives,
 * on two points only, the 4K chase at the smallest and at the largest span,
 * and reports the error of the others separately, as held out.  The model's
 * ns per access is affine in dram.latency_ns (a dependent chase keeps one
 * miss in flight, so no queue forms): two runs per fitted point give its
 * intercept and slope, and the latency minimising the squared relative
 * error of the two points has a closed form (host_validate_fit_latency).
 */
#ifndef MMUSIM_HOST_VALIDATE_H
#define MMUSIM_HOST_VALIDATE_H

#include <glib.h>
#include <stdint.h>
#include "host_bench.h"

/* Accesses the model counts per point, after HOST_VALIDATE_WARMUP uncounted
 * ones.  Chosen for the time of the whole command (doc/host-bench.md): the
 * model's cost is dominated by ptrchase's setup, which writes every slot
 * once (64 M writes at 4 GiB), not by these. */
#define HOST_VALIDATE_ACCESSES 200000
#define HOST_VALIDATE_WARMUP 50000

/* The machine `validate` models the host with when -m is not given: the
 * file `mmusim host detect` writes for this host, in a temporary file
 * (*path, to be removed by the caller) whose text is *text.  FALSE with an
 * error when the host cannot be read. */
gboolean host_validate_default_machine(char **path, char **text, GError **error);

/* (model - native) / native. */
double host_validate_error(double model_ns, double native_ns);

/* The x minimising sum_i ((a[i] + b[i] x) / native[i] - 1)^2 over n
 * points: the least-squares fit of an affine model to measurements in
 * relative terms.  FALSE when no b[i] is non-zero (x does not matter). */
gboolean host_validate_fit_latency(const double *a, const double *b, const double *native, unsigned n, double *x);

/* `mmusim host validate ...` (argv[0] is "validate"): the exit status. */
int host_validate_main(int argc, char **argv);

#endif
