#!/usr/bin/env python3
"""Which special registers (SR_*) Triton's own code reads on sm_90, compiled without a GPU: the
evidence behind gate 1's `hw_reg` allowlist (src/gates/sass.h) -- re-run it after a Triton upgrade.

    build/triton-venv/bin/python tools/sass_sreg_survey.py     # a python with triton

Each kernel exercises what Triton lowers with thread, block or lane ids: 3-D program ids and
num_programs, scan + sort + argmax, atomics with a spin wait, a barrier and a histogram, ieee and
float16 dots in pipelined loops (also over a 2-CTA cluster), TMA tensor descriptors, a pipelined
row loop. Printed per kernel: the SR_* operands of its SASS and the driver constant-bank offsets
below the parameters (c[0x0][<0x210]). docs/BENCHMARKS.md (thirty-third session) has the table.
"""
import os
import re
import subprocess
import tempfile

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from gen_sass_fixtures import geometry_atomics  # atomics, a spin wait, a barrier, a histogram


@triton.jit
def pid3(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    p = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0) + tl.program_id(2) * tl.num_programs(1)
    o = p * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=o < n) * tl.num_programs(2), mask=o < n)

@triton.jit
def scan_sort(x_ptr, out_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o)
    y = tl.cumsum(x, 0) + tl.sort(x, 0) + tl.argmax(x, 0).to(tl.float32)
    tl.store(out_ptr + o, y)

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, IEEE: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        if IEEE:
            acc += tl.dot(a, b, input_precision="ieee")
        else:
            acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def tma(a_ptr, c_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    e = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    x = d.load([tl.program_id(0) * BM, 0])
    e.store([tl.program_id(0) * BM, 0], x * 2)

@triton.jit
def rowsum_loop(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in tl.range(0, n, BLOCK, num_stages=4):
        o = s + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n + o, mask=o < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, 0))

CASES = [
 ("pid3", pid3, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256}, {}),
 ("scan_sort", scan_sort, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 256}, {}),
 ("atomics_spin", geometry_atomics, {"x_ptr": "*fp32", "sync_ptr": "*i32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256}, {}),
 ("mm", mm, {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}, {"BM": 64, "BN": 64, "BK": 32, "IEEE": True}, {"num_warps": 4, "num_stages": 3}),
 ("mm_f16", mm, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}, {"BM": 128, "BN": 128, "BK": 64, "IEEE": False}, {"num_warps": 8, "num_stages": 3}),
 ("mm_f16_ctas2", mm, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}, {"BM": 128, "BN": 128, "BK": 64, "IEEE": False}, {"num_warps": 8, "num_stages": 3, "num_ctas": 2}),
 ("tma", tma, {"a_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32"}, {"BM": 64, "BN": 64}, {}),
 ("rowsum_loop", rowsum_loop, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}, {"num_warps": 8}),
]


def main():
    bindir = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    for name, fn, sig, cx, opts in CASES:
        sig = dict(sig, **{k: "constexpr" for k in cx})
        try:
            k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=cx), target=GPUTarget("cuda", 90, 32),
                               options=dict({"num_warps": 4}, **opts))
        except Exception as ex:  # a pattern this Triton cannot compile: say so, go on
            print("%-14s does not compile: %s" % (name, str(ex).splitlines()[0][:120]))
            continue
        with tempfile.TemporaryDirectory() as d:
            cub = os.path.join(d, "k.cubin")
            with open(cub, "wb") as f:
                f.write(k.asm["cubin"])
            sass = subprocess.run([os.path.join(bindir, "cuobjdump"), "-sass", cub], check=True,
                                  capture_output=True, text=True).stdout
        regs = sorted(set(re.findall(r"\bSR_[A-Za-z_.0-9]+", sass)))
        bank = sorted(set(int(x, 16) for x in re.findall(r"c\[0x0\]\[(0x[0-9a-f]+)\]", sass) if int(x, 16) < 0x210))
        print("%-14s %s | driver constants %s" % (name, " ".join(regs), " ".join(hex(b) for b in bank)))


if __name__ == "__main__":
    main()
