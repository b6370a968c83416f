/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_video.c - motion estimation of a video encoder: block matching of
 * 16x16 macroblocks against reference frames, the access shape of x264 in
 * the THP debate (shared/seeds/000: `x264 --crf 20` on 3840x2160 frames,
 * "just 2.7% even though the working set was much larger").
 *
 * Memory holds refs + 1 luma planes of width x height bytes: the frame being
 * encoded and its reference frames, used round-robin as x264 recycles its
 * frame buffers.  Macroblocks are encoded in raster order.  For each one:
 *
 *   16 loads of 16 bytes   its rows in the current frame (one SSE load each)
 *   for each reference frame, `candidates` times:
 *     16 loads of 16 bytes the rows of a candidate block in the reference
 *   16 stores of 16 bytes  the reconstructed rows, in the current frame
 *
 * The candidates follow x264's hexagon search (encoder/me.c, --me hex):
 * start at the motion vector of the previous macroblock (neighbouring
 * vectors are alike), then step by 2 pixels in one of six directions, the
 * direction drawn from the seed's stream, never leaving +-range pixels
 * (--merange, 16 by default) nor the frame.  Rows of a block are `width`
 * bytes apart, so each candidate touches 16 lines and, in a 4K-wide frame,
 * 16 x 3840 bytes = 15 pages: the TLB reach of the search is the point.
 * When every macroblock is done the frame becomes a reference and the
 * oldest reference becomes the next frame.  Setup writes every line of
 * every frame, as reading the input frames does.
 *
 * Left out: chroma planes, sub-pixel refinement and its interpolated
 * planes, B-frames, lookahead, and x264's frame padding.
 */
#include "config.h"
#include "workload_impl.h"
#include "perm.h"

#define VIDEO_MB_PIXELS 16     /* a macroblock is 16x16 luma pixels */
#define VIDEO_ROW_BYTES 16     /* one SSE load or store moves a macroblock row */
#define VIDEO_HEX_STEP 2       /* pixels per step of the large hexagon */

typedef enum { V_CUR, V_SEARCH, V_STORE } VideoPhase;

typedef struct {
  uint64_t width, height, frame_bytes;
  unsigned frames;          /* refs + 1 */
  unsigned refs, candidates;
  int64_t range;
  uint64_t mbs_x, mbs;      /* macroblocks per row, per frame */
  unsigned cur;             /* frame buffer being encoded */
  uint64_t mb;              /* macroblock being encoded */
  VideoPhase phase;
  unsigned ref, cand, row;
  int64_t mvx, mvy;         /* motion vector of the candidate */
  int64_t base_x, base_y;   /* the previous macroblock's vector */
  uint64_t rng;
} VideoGen;

enum { OWN_WIDTH, OWN_HEIGHT, OWN_REFS, OWN_RANGE, OWN_CANDIDATES };

static const WorkloadParam video_params[] = {
  { "width", WPARAM_COUNT, "3840", NULL, 16, 65536, "frame width in pixels, a multiple of 16 (3840: the 2160p of the seed)" },
  { "height", WPARAM_COUNT, "2160", NULL, 16, 65536, "frame height in pixels, a multiple of 16" },
  { "refs", WPARAM_COUNT, "3", NULL, 1, 16, "reference frames searched (x264 --ref, 3 by default)" },
  { "range", WPARAM_COUNT, "16", NULL, 2, 512, "motion search range in pixels (x264 --merange, 16 by default)" },
  { "candidates", WPARAM_COUNT, "13", NULL, 1, 256,
    "candidate blocks per macroblock and reference frame (x264 hex search with small motion: a hexagon of 6, one step of 3, a refinement of 4)" },
  { NULL },
};

static gpointer video_init(WorkloadConfig *cfg, GError **error)
{
  uint64_t w = cfg->own[OWN_WIDTH].u, h = cfg->own[OWN_HEIGHT].u;
  if (w % VIDEO_MB_PIXELS)
    return workload_reject(cfg, "width", "a multiple of 16 pixels", error);
  if (h % VIDEO_MB_PIXELS)
    return workload_reject(cfg, "height", "a multiple of 16 pixels", error);
  unsigned refs = (unsigned)cfg->own[OWN_REFS].u;
  if ((refs + 1) * w * h > cfg->size_bytes)
    return workload_reject(cfg, "refs", "refs + 1 frames of width x height bytes within size", error);
  VideoGen *g = g_new0(VideoGen, 1);
  g->width = w;
  g->height = h;
  g->frame_bytes = w * h;
  g->refs = refs;
  g->frames = refs + 1;
  g->range = (int64_t)cfg->own[OWN_RANGE].u;
  g->candidates = (unsigned)cfg->own[OWN_CANDIDATES].u;
  g->mbs_x = w / VIDEO_MB_PIXELS;
  g->mbs = g->mbs_x * (h / VIDEO_MB_PIXELS);
  uint64_t s = cfg->seed;
  g->rng = perm_splitmix64(&s);
  cfg->setup_writes = (g->frames * g->frame_bytes - WORKLOAD_WORD_BYTES) / WORKLOAD_SETUP_STRIDE_BYTES + 1;
  return g;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* The next candidate: one hexagon step from the current vector. */
static void hex_step(VideoGen *g)
{
  static const int8_t dir[6][2] = { { -2, 0 }, { -1, 2 }, { 1, 2 }, { 2, 0 }, { 1, -2 }, { -1, -2 } };
  unsigned d = (unsigned)(((unsigned __int128)perm_splitmix64(&g->rng) * 6) >> 64);
  g->mvx = clamp(g->mvx + dir[d][0] * VIDEO_HEX_STEP / 2, -g->range, g->range);
  g->mvy = clamp(g->mvy + dir[d][1] * VIDEO_HEX_STEP / 2, -g->range, g->range);
}

static void video_access(gpointer state, TraceRecord *r)
{
  VideoGen *g = state;
  int64_t mb_x = (int64_t)(g->mb % g->mbs_x) * VIDEO_MB_PIXELS, mb_y = (int64_t)(g->mb / g->mbs_x) * VIDEO_MB_PIXELS;
  uint64_t cur_va = WORKLOAD_BASE_VA + g->cur * g->frame_bytes;
  r->size = VIDEO_ROW_BYTES;
  switch (g->phase) {
  case V_CUR:
  case V_STORE:
    r->kind = g->phase == V_CUR ? ACC_LOAD : ACC_STORE;
    r->addr = cur_va + (uint64_t)(mb_y + g->row) * g->width + (uint64_t)mb_x;
    if (++g->row < VIDEO_MB_PIXELS)
      return;
    g->row = 0;
    if (g->phase == V_CUR) {
      g->phase = V_SEARCH;
      g->ref = g->cand = 0;
      g->mvx = g->base_x, g->mvy = g->base_y;
      return;
    }
    /* The macroblock is done: the next one, or the next frame. */
    g->phase = V_CUR;
    if (++g->mb == g->mbs) {
      g->mb = 0;
      g->cur = (g->cur + 1) % g->frames;
    }
    return;
  case V_SEARCH: {
    unsigned frame = (g->cur + 1 + g->ref) % g->frames;
    int64_t x = clamp(mb_x + g->mvx, 0, (int64_t)g->width - VIDEO_MB_PIXELS);
    int64_t y = clamp(mb_y + g->mvy, 0, (int64_t)g->height - VIDEO_MB_PIXELS);
    r->kind = ACC_LOAD;
    r->addr = WORKLOAD_BASE_VA + frame * g->frame_bytes + (uint64_t)(y + g->row) * g->width + (uint64_t)x;
    if (++g->row < VIDEO_MB_PIXELS)
      return;
    g->row = 0;
    hex_step(g);
    if (++g->cand < g->candidates)
      return;
    g->cand = 0;
    if (g->ref == 0) /* the best vector of the nearest reference predicts the next macroblock */
      g->base_x = g->mvx, g->base_y = g->mvy;
    g->mvx = g->base_x, g->mvy = g->base_y;
    if (++g->ref == g->refs)
      g->phase = V_STORE;
    return;
  }
  }
}

const WorkloadGenerator gen_video = {
  .name = "video",
  .help = "motion estimation of 16x16 macroblocks against reference frames (x264 --me hex)",
  .source = "x264 motion estimation (--me hex) in the THP debate (seed 000)",
  .params = video_params,
  .init = video_init,
  .access = video_access,
  .free = g_free,
};
