/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_stream.c - McCalpin's STREAM: copy, scale, add and triad over three
 * arrays of 8-byte doubles (https://www.cs.virginia.edu/stream/, stream.c).
 *
 * Imitates stream.c as it runs: `size` is the bytes of each array (what
 * STREAM_ARRAY_SIZE x 8 is in stream.c), a, b and c lie one after the other
 * as stream.c's static arrays do, and the measured phase repeats, `ntimes`
 * times (NTIMES, 10), the four kernels in stream.c's order, element by
 * element, each element's loads in source order and then its store:
 *
 *   copy   c[j] = a[j]             load a[j], store c[j]
 *   scale  b[j] = s * c[j]         load c[j], store b[j]      (1 multiply)
 *   add    c[j] = a[j] + b[j]      load a[j], load b[j], store c[j]   (1 add)
 *   triad  a[j] = b[j] + s * c[j]  load b[j], load c[j], store a[j]   (multiply, add)
 *
 * Non-memory instructions go in the accesses' gap fields (the text format's
 * "+N"), which the core charges exactly as compute records: `loop_insns`
 * before each element's first load (the loop's index step, compare and
 * branch: 3 in the scalar loop gcc -O2 makes of each kernel, a stated
 * choice), and the kernel's floating-point operations before its store (0,
 * 1, 1, 2: no fused multiply-add, as in a build without -mfma); the common
 * `gap` is added to every access as for every generator.  So one iteration
 * is 10 accesses per element.  `accesses`, when given, stops the measured
 * phase early; otherwise the phase is all ntimes iterations, and the
 * description shows that count.
 *
 * Where the arrays live (`placement`): static, stream.c's own, an anonymous
 * mapping where a non-PIE executable's .bss lies; stack, the seed's patched
 * STREAM (arrays local to main on a large stack), a mapping flagged stack
 * that ends at the top of the user address space; heap, an anonymous mmap at
 * the workload base, as malloc'd arrays get.  backing=hugetlb flags the
 * mapping hugetlb, so the hugetlbfs pool backs it: size the pool with
 * -s hugetlb.nr_hugepages=N (2M pages; 3 x size / 2M of them at least).
 * The setup phase is stream.c's initialisation loop, a[j] = 1, b[j] = 2,
 * c[j] = 0, one store per cache line of each array, interleaved as that
 * loop interleaves them.  The stream does not depend on the seed.
 *
 * Left out: the floating-point values, stream.c's timing pass over a and its
 * validation pass, the first iteration's exclusion from the statistics, the
 * OpenMP threads, and vectorised loops (set loop_insns lower for those).
 */
#include "config.h"
#include "workload_impl.h"

/* Where a non-PIE x86-64 executable's data and .bss start: GNU ld's default
 * script puts the text at 0x400000 and the data on the next 2M page
 * (MAXPAGESIZE 0x200000), which also lets hugetlb back the region. */
#define STREAM_STATIC_VA 0x600000ULL
/* The top of the stack: the 4-level user address space ends a page below
 * 128T (TASK_SIZE_MAX, arch/x86/include/asm/page_64_types.h) and the stack
 * starts just below it (less the randomisation, not modelled); rounded down
 * to 2M so hugetlb and THP can back the whole mapping. */
#define STREAM_STACK_TOP 0x7fffffe00000ULL

enum { ARRAY_A, ARRAY_B, ARRAY_C, N_ARRAYS };
enum { OWN_NTIMES, OWN_PLACEMENT, OWN_LOOP_INSNS };
enum { PLACE_HEAP, PLACE_STACK, PLACE_STATIC };

/* One kernel: the arrays it loads from in source order, the one it stores
 * to, and its floating-point operations per element. */
typedef struct {
  unsigned n_loads;
  uint8_t load[2];
  uint8_t store;
  uint32_t flops;
} StreamKernel;

#define STREAM_KERNELS 4
static const StreamKernel kernels[STREAM_KERNELS] = {
  { 1, { ARRAY_A }, ARRAY_C, 0 },          /* copy */
  { 1, { ARRAY_C }, ARRAY_B, 1 },          /* scale */
  { 2, { ARRAY_A, ARRAY_B }, ARRAY_C, 1 }, /* add */
  { 2, { ARRAY_B, ARRAY_C }, ARRAY_A, 2 }, /* triad */
};

/* Accesses of one element in all four kernels: 2 + 2 + 3 + 3. */
#define STREAM_ACCESSES_PER_ELEMENT 10

typedef struct {
  uint64_t va;          /* a[0]; b and c follow */
  uint64_t elements;    /* per array */
  uint64_t array_bytes; /* elements * 8 */
  uint64_t lines;       /* setup stores per array */
  uint32_t loop_insns;
  unsigned kernel;      /* position of the next access: kernel, element, operand */
  uint64_t j;
  unsigned op;
} Stream;

static const WorkloadParam stream_params[] = {
  { "ntimes", WPARAM_COUNT, "10", NULL, 1, UINT32_MAX, "times the four kernels run (NTIMES)" },
  { "placement", WPARAM_CHOICE, "static", "heap|stack|static", 0, 0,
    "static: .bss at 0x600000 (stream.c); stack: a stack mapping ending at 0x7fffffe00000; heap: mmap at 0x7f0000000000" },
  { "loop_insns", WPARAM_COUNT, "3", NULL, 0, UINT32_MAX,
    "non-memory instructions of the loop per element (step, compare, branch)" },
  { NULL },
};

/* a * b, or UINT64_MAX when it does not fit. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
  return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static gpointer stream_init(WorkloadConfig *cfg, GError **error)
{
  uint64_t elements = cfg->size_bytes / WORKLOAD_WORD_BYTES;
  uint64_t array_bytes = elements * WORKLOAD_WORD_BYTES;
  uint64_t len = (N_ARRAYS * array_bytes + WORKLOAD_MAP_ALIGN_BYTES - 1) / WORKLOAD_MAP_ALIGN_BYTES *
                 WORKLOAD_MAP_ALIGN_BYTES;
  uint64_t va = STREAM_STATIC_VA;
  switch (cfg->own[OWN_PLACEMENT].choice) {
  case PLACE_HEAP:
    va = WORKLOAD_BASE_VA;
    if (va + len > WORKLOAD_VA_END)
      return workload_reject(cfg, "size",
                             "at most 341G with placement=heap: three arrays from 0x7f0000000000 must end by 128T",
                             error);
    break;
  case PLACE_STACK:
    va = STREAM_STACK_TOP - len; /* size <= 1T: far above zero */
    break;
  default:
    break;
  }
  uint64_t loop = cfg->own[OWN_LOOP_INSNS].u;
  if ((uint64_t)cfg->gap + loop + kernels[3].flops > UINT32_MAX)
    return workload_reject(cfg, "loop_insns", "a count that keeps gap + loop_insns + 2 within 4294967295", error);

  Stream *s = g_new0(Stream, 1);
  s->va = va;
  s->elements = elements;
  s->array_bytes = array_bytes;
  s->lines = (array_bytes - WORKLOAD_WORD_BYTES) / WORKLOAD_SETUP_STRIDE_BYTES + 1;
  s->loop_insns = (uint32_t)loop;
  cfg->map_va = va;
  cfg->map_len = len;
  cfg->map_flags = (cfg->hugetlb ? MAP_F_HUGETLB : 0) | (cfg->own[OWN_PLACEMENT].choice == PLACE_STACK ? MAP_F_STACK : 0);
  cfg->setup_writes = N_ARRAYS * s->lines;
  uint64_t all = mul_sat(mul_sat(cfg->own[OWN_NTIMES].u, elements), STREAM_ACCESSES_PER_ELEMENT);
  cfg->accesses = cfg->accesses_given ? MIN(cfg->accesses, all) : all;
  return s;
}

/* Initialisation, line by line: a, b, c of line 0, then of line 1, ... */
static void stream_setup(gpointer state, uint64_t k, TraceRecord *r)
{
  const Stream *s = state;
  r->addr = s->va + (k % N_ARRAYS) * s->array_bytes + (k / N_ARRAYS) * WORKLOAD_SETUP_STRIDE_BYTES;
}

static void stream_access(gpointer state, TraceRecord *r)
{
  Stream *s = state;
  const StreamKernel *k = &kernels[s->kernel];
  uint8_t array;
  if (s->op < k->n_loads) {
    array = k->load[s->op];
    r->kind = ACC_LOAD;
    if (s->op == 0)
      r->gap += s->loop_insns;
  } else {
    array = k->store;
    r->kind = ACC_STORE;
    r->gap += k->flops;
  }
  r->addr = s->va + array * s->array_bytes + s->j * WORKLOAD_WORD_BYTES;
  if (++s->op <= k->n_loads)
    return;
  s->op = 0;
  if (++s->j < s->elements)
    return;
  s->j = 0;
  s->kernel = (s->kernel + 1) % STREAM_KERNELS;
}

const WorkloadGenerator gen_stream = {
  .name = "stream",
  .help = "STREAM copy, scale, add, triad over arrays a, b, c of size bytes each (McCalpin)",
  .source = "McCalpin's STREAM, stream.c (https://www.cs.virginia.edu/stream/)",
  .params = stream_params,
  .init = stream_init,
  .access = stream_access,
  .free = g_free,
  .setup = stream_setup,
};
