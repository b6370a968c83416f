#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write a small synthetic YUV4MPEG2 clip for recording x264 with mmusim.

A textured background pans two pixels right and one down per frame and a
brighter square moves across it, so the encoder's motion search has real
work to do.  Usage: make-clip.py OUT.y4m [FRAMES] (CIF, 352x288, 25 fps).
"""
import random
import sys

W, H = 352, 288


def main():
    out = sys.argv[1]
    frames = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rng = random.Random(1)
    tw, th = W + 2 * frames + 16, H + frames + 16
    # A smooth random texture: random values, each averaged with its neighbours.
    raw = [[rng.randrange(256) for _ in range(tw)] for _ in range(th)]
    tex = [[(raw[y][x] + raw[y][(x + 1) % tw] + raw[(y + 1) % th][x] + raw[(y + 1) % th][(x + 1) % tw]) // 4
            for x in range(tw)] for y in range(th)]
    with open(out, "wb") as f:
        f.write(b"YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n" % (W, H))
        for i in range(frames):
            f.write(b"FRAME\n")
            ox, oy = 2 * i, i
            sx, sy = 40 + 12 * i, 100
            luma = bytearray(W * H)
            for y in range(H):
                row = tex[y + oy]
                for x in range(W):
                    v = row[x + ox]
                    if sx <= x < sx + 64 and sy <= y < sy + 64:
                        v = min(255, v + 80)
                    luma[y * W + x] = v
            f.write(bytes(luma))
            f.write(bytes([128]) * (W // 2 * H // 2) * 2)


if __name__ == "__main__":
    main()
