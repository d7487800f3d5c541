#!/usr/bin/env python3
"""Records the SASS of small Triton kernels, compiled for sm_90 without a GPU, as test data for
gate 1's machine-code precision check (src/gates/sass.c, tests/unit/test_sass.c).

    python3 tools/gen_sass_fixtures.py OUTDIR      # a python with triton (its cuobjdump is used)

Each kernel is one precision situation the check must tell apart: fp32 throughout (nothing to
report), a float16 or bfloat16 round trip, half-precision arithmetic, an fp8 conversion, a
tl.dot on float32 inputs with Triton's default (TF32 tensor cores) and with ieee precision,
an Inductor-style bfloat16 kernel (converts at load and store, float32 arithmetic) and a row
softmax (MUFU, shuffles). For the hardware-state classes: reads of the clock and the global timer
(timer), of the SM id and the warp slot (hw_reg), and controls that read only registers the
launch geometry fixes: the lane id, and a kernel with 3-D program ids, atomics, a spin wait, a
barrier and a histogram (SR_CTAID.Y/Z, SR_LANEID, SR_LTMASK, SR_CgaCtaId). The file header names
the Triton version and the expected classes.
"""
import os
import subprocess
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def fp32_axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    y = tl.load(y_ptr + o, mask=m)
    tl.store(out_ptr + o, 2.5 * x + y, mask=m)


@triton.jit
def f16_round_trip(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    tl.store(out_ptr + o, x.to(tl.float16).to(tl.float32) * 3.0, mask=m)


@triton.jit
def f16_arith(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m).to(tl.float16)
    y = tl.load(y_ptr + o, mask=m).to(tl.float16)
    tl.store(out_ptr + o, (x * y + x).to(tl.float32), mask=m)


@triton.jit
def bf16_arith(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m).to(tl.bfloat16)
    y = tl.load(y_ptr + o, mask=m).to(tl.bfloat16)
    tl.store(out_ptr + o, (x * y + x).to(tl.float32), mask=m)


@triton.jit
def fp8_round_trip(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    tl.store(out_ptr + o, x.to(tl.float8e4nv).to(tl.float32), mask=m)


@triton.jit
def dot_default(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b))


@triton.jit
def dot_ieee(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b, input_precision="ieee"))


@triton.jit
def bf16_io_fp32_math(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m).to(tl.float32)
    tl.store(out_ptr + o, (x * 0.5 + 1.0).to(tl.bfloat16), mask=m)


@triton.jit
def f16_io_fp32_math(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m).to(tl.float32)
    tl.store(out_ptr + o, (x * 0.5 + 1.0).to(tl.float16), mask=m)


@triton.jit
def fp32_row_softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    x = tl.load(x_ptr + row * n_cols + c, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * n_cols + c, e / tl.sum(e, 0), mask=m)


@triton.jit
def special_read(out_ptr, n, BLOCK: tl.constexpr, WHICH: tl.constexpr):
    """Stores what an inline-PTX read of one special register gives (WHICH picks it)."""
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WHICH == 0:
        v = tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    elif WHICH == 1:
        v = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    elif WHICH == 2:
        v = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    elif WHICH == 3:
        v = tl.inline_asm_elementwise("mov.u32 $0, %warpid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    else:
        v = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    tl.store(out_ptr + o, v.to(tl.float32), mask=o < n)


@triton.jit
def geometry_atomics(x_ptr, sync_ptr, out_ptr, n, BLOCK: tl.constexpr):
    p = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0) + tl.program_id(2) * tl.num_programs(1)
    t = tl.atomic_add(sync_ptr, 1)
    o = (p + t) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o, mask=o < n)
    tl.debug_barrier()
    while tl.atomic_cas(sync_ptr + 1, 0, 0, sem="acquire") < 1:
        pass
    tl.atomic_max(out_ptr, tl.max(x, 0))
    h = tl.histogram(o.to(tl.int32) % 16, 16)
    tl.store(out_ptr + 1 + tl.arange(0, 16), h.to(tl.float32))


_OUT = {"out_ptr": "*fp32", "n": "i32"}

# name -> (kernel, signature, constexprs, expected classes for the header)
CASES = {
    "fp32_axpy": (fp32_axpy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}, "none"),
    "f16_round_trip": (f16_round_trip, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}, "cvt_f16"),
    "f16_arith": (f16_arith, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}, "cvt_f16 arith_f16"),
    "bf16_arith": (bf16_arith, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}, "cvt_bf16 arith_bf16"),
    "fp8_round_trip": (fp8_round_trip, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}, "fp8"),
    "dot_default": (dot_default, {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"}, {"BLOCK": 32}, "mma_low"),
    "dot_ieee": (dot_ieee, {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"}, {"BLOCK": 16}, "none"),
    "bf16_io_fp32_math": (bf16_io_fp32_math, {"x_ptr": "*bf16", "out_ptr": "*bf16", "n": "i32"}, {"BLOCK": 1024}, "cvt_bf16"),
    "f16_io_fp32_math": (f16_io_fp32_math, {"x_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32"}, {"BLOCK": 1024}, "cvt_f16"),
    "fp32_row_softmax": (fp32_row_softmax, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32"}, {"BLOCK": 512}, "none"),
    "clock64_read": (special_read, _OUT, {"BLOCK": 256, "WHICH": 0}, "timer"),
    "globaltimer_read": (special_read, _OUT, {"BLOCK": 256, "WHICH": 1}, "timer"),
    "smid_read": (special_read, _OUT, {"BLOCK": 256, "WHICH": 2}, "hw_reg"),
    "warpid_read": (special_read, _OUT, {"BLOCK": 256, "WHICH": 3}, "hw_reg"),
    "laneid_read": (special_read, _OUT, {"BLOCK": 256, "WHICH": 4}, "none"),
    "geometry_atomics": (geometry_atomics, {"x_ptr": "*fp32", "sync_ptr": "*i32", "out_ptr": "*fp32", "n": "i32"},
                         {"BLOCK": 256}, "none"),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/sass"
    os.makedirs(out, exist_ok=True)
    bindir = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    for name, (fn, sig, cx, expect) in CASES.items():
        sig = dict(sig, **{k: "constexpr" for k in cx})
        k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=cx), target=GPUTarget("cuda", 90, 32),
                           options={"num_warps": 4, "num_stages": 2})
        cub = os.path.join(out, name + ".cubin")
        with open(cub, "wb") as f:
            f.write(k.asm["cubin"])
        sass = subprocess.run([os.path.join(bindir, "cuobjdump"), "-sass", cub], check=True,
                              capture_output=True, text=True).stdout
        os.remove(cub)
        with open(os.path.join(out, name + ".sass"), "w") as f:
            f.write("# kernel %s, triton %s, sm_90; expected classes: %s\n" % (name, triton.__version__, expect))
            f.write(sass)
        print(name, len(sass))


if __name__ == "__main__":
    main()
