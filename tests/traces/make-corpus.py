#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# make-corpus.py - writes the trace files of the golden cases trace-*
# (tests/golden/cases/) and the seed corpus of the fuzz targets
# (tests/fuzz/corpus/).  The files are committed; run this again only to
# change them:  python3 tests/traces/make-corpus.py ./mmusim
# Needs the zstd, gzip and xz command-line tools.
import os, struct, subprocess, sys, zlib

mmusim = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./mmusim")
here = os.path.dirname(os.path.abspath(__file__))
cases = os.path.join(here, "..", "golden", "cases")
fuzz = os.path.join(here, "..", "fuzz", "corpus")

def put(path, data):
    with open(path, "wb") as f:
        f.write(data)

def run(*args, **kw):
    subprocess.run(args, check=True, **kw)

def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)

def zstd(data):
    return subprocess.run(["zstd", "-q", "-c", "--no-check"], input=data, stdout=subprocess.PIPE, check=True).stdout

def mtr_header(meta):
    body = struct.pack("<II", 1, len(meta))
    return b"\x89MTR\r\n\x1a\n" + body + struct.pack("<I", zlib.crc32(body + meta)) + meta

def mtr_block(magic, raw, count):
    payload = zstd(raw)
    h = struct.pack("<III", len(payload), len(raw), count)
    return magic + h + struct.pack("<I", zlib.crc32(h + payload)) + payload

def champsim(ip, loads=(), stores=()):
    dst = list(stores) + [0] * (2 - len(stores))
    src = list(loads) + [0] * (4 - len(loads))
    return struct.pack("<QBB2B4B2Q4Q", ip, 0, 0, 0, 0, 0, 0, 0, 0, *dst, *src)

os.chdir(cases)

# A good .mtr: hello.txt converted.
run(mmusim, "trace", "convert", "hello.txt", "trace-hello.mtr")
good = open("trace-hello.mtr", "rb").read()
meta_len = struct.unpack("<I", good[12:16])[0]
block = 20 + meta_len

# A generator written out: replayed, it gives the generator's counters.
run(mmusim, "trace", "convert", "-w", "random:size=8M,accesses=20K,rw=0.3", "trace-gen-random.mtr")

# Malformed .mtr files: each names an offset.
put("trace-bad-magic.mtr", b"\x89MTX" + good[4:])
put("trace-bad-truncated.mtr", good[:block + 30])
flip = bytearray(good); flip[block + 25] ^= 0x10
put("trace-bad-flip.mtr", bytes(flip))
absurd = bytearray(good); absurd[block + 4:block + 8] = b"\xff\xff\xff\xff"
put("trace-bad-size.mtr", bytes(absurd))
meta = bytearray(good); meta[12:16] = b"\xff\xff\xff\x7f"
put("trace-bad-meta.mtr", bytes(meta))
# A load at 2^57, one byte beyond the address space, in a block whose
# checksum is right: the record check must catch it.
raw = bytes([0x08]) + varint(1 << 58) + varint(8)   # tag: load, size follows; zigzag(2^57)
put("trace-bad-addr.mtr", mtr_header(b"recorder make-corpus.py\n") + mtr_block(b"MTRB", raw, 1))

# lackey: a small real-looking trace (gzip), and malformed ones.
lk = ["==4242== Lackey, an example Valgrind tool", "==4242== Command: ./tiny", "==4242== "]
ip = 0x401000
for i in range(400):
    lk.append("I  %08x,%d" % (ip, 3 + i % 4)); ip += 3 + i % 4
    if i % 3 == 0: lk.append(" L %010x,8" % (0x1ffefff000 + 8 * (i % 50)))
    if i % 5 == 0: lk.append(" S %08x,4" % (0x4c2000 + 64 * i))
    if i % 7 == 0: lk.append(" M %08x,4" % (0x4c8000 + 4096 * (i % 9)))
    if i % 97 == 96: ip = 0x401000
lk += ["hello from the program", "==4242== ", "==4242== Counted 1 call to main()"]
text = ("\n".join(lk) + "\n").encode()
put("trace-tiny.lackey.gz", subprocess.run(["gzip", "-n", "-9", "-c"], input=text, stdout=subprocess.PIPE, check=True).stdout)
put("trace-bad-lackey.txt", b"==1== noise\nI  00401000,3\n L 1ffefff000,8\nI  004010zz,3\n")
put("trace-bad-lackey-addr.txt", b"I  00401000,3\n S 200000000000000,8\n")
put("trace-bad-lackey-size.txt", b"I  00401000,3\n S 7f0000,0\n")

# ChampSim: 3000 instructions with a known number of loads and stores (xz).
recs, loads, stores = [], 0, 0
for i in range(3000):
    ld = [0x7f0000000000 + 64 * i] if i % 3 == 0 else []
    if i % 10 == 0: ld.append(0x7f1000000000 + 4096 * i)
    st = [0x7f2000000000 + 8 * i] if i % 4 == 0 else []
    loads += len(ld); stores += len(st)
    recs.append(champsim(0x400000 + 4 * (i % 500), ld, st))
cs = b"".join(recs)
put("trace-loop.champsim.xz", subprocess.run(["xz", "-c", "-6"], input=cs, stdout=subprocess.PIPE, check=True).stdout)
print("trace-loop.champsim.xz: 3000 instructions, %d loads, %d stores" % (loads, stores))
put("trace-bad-champsim-trunc.champsim", cs[:64 * 5 + 10])
put("trace-bad-champsim-addr.champsim", cs[:64 * 2] + champsim(0x400000, [1 << 60]) + cs[64 * 3:64 * 4])
xz = bytearray(subprocess.run(["xz", "-c"], input=cs[:64 * 100], stdout=subprocess.PIPE, check=True).stdout)
xz[len(xz) // 2] ^= 0x40
put("trace-bad-flip.champsim.xz", bytes(xz))
gz = subprocess.run(["gzip", "-n", "-c"], input=text, stdout=subprocess.PIPE, check=True).stdout
put("trace-bad-truncated.lackey.gz", gz[:len(gz) // 2])
put("trace-bad-text-addr.txt", b"# mmusim text trace v1\nmmap 0x7f0000000000 4M rw\nR 0x200000000000000 8\n")

# Seed corpus of the fuzz targets: small valid inputs and a few broken ones.
seeds = {
    "text": [open("hello.txt", "rb").read(), open("twoproc.txt", "rb").read(), b"R 0x1000 8 +3\nroi begin\n"],
    "lackey": [text[:2000], b"I  00401000,3\n M 7f00,4\n"],
    "mtr": [good, open("trace-bad-addr.mtr", "rb").read()],
    "champsim": [cs[:64 * 20]],
    "settings": [b"thp.enabled=always", b"tlb.stlb_entries=1536", b"machine.mem_per_node=4G", b"cpu.cpi=0.5"],
}
for target, items in seeds.items():
    d = os.path.join(fuzz, target)
    os.makedirs(d, exist_ok=True)
    for i, data in enumerate(items):
        put(os.path.join(d, "seed%d" % i), data)
