"""Template kernels compiled to sm_90 machine code on the CPU (no GPU, no interpreter): Triton
lowers them through the same passes as on the GPU machine, so a kernel the interpreter runs but
the compiler refuses (a masked load through a scalar pointer, a constexpr branch typed two ways)
fails here, not on the device. Covers the kernels whose programs wait for each other (the group
norm region with several segments a group, col_split_softmax), which the interpreter cannot run,
and the 16-bit and logcumsumexp readings and 2-D pooling slid down its rows, at the sizes the
held-out problems use; and revloop's looped layer norm with its last pass walked backward.

Each kernel goes through worker/kopt_compile.py, kopt's sandboxed compile step, as gate 1's
machine-code check sends it (its request: source, kernel, signature, constexprs, warps, arch).

usage: PY tests/interp/test_compile_sm90.py (`make interp-check`; PY a python with triton);
exit 0 when every kernel compiles, 1 otherwise; skipped (exit 0, one line) when triton does not
import.
"""
import inspect
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import ROOT, group_norm_ptrs, render, require_triton  # noqa: E402

require_triton()
KERNELS = os.path.join(ROOT, "templates", "kernels")
COMPILE = os.path.join(ROOT, "worker", "kopt_compile.py")


def compile_ok(tmp, tag, text, kernel, sig, cx, warps):
    """Whether kopt_compile.py compiles `kernel` of `text` for sm_90; prints the verdict."""
    d = os.path.join(tmp, tag)
    os.makedirs(d)
    sig = dict(sig, **{k: "constexpr" for k in cx})
    req = {"source": text, "kernel": kernel, "signature": sig, "constexprs": cx, "num_warps": warps, "arch": 90}
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}   # compiled, not interpreted
    r = subprocess.run([sys.executable, "-I", COMPILE], input=json.dumps(req), capture_output=True, text=True, cwd=d,
                       env=env, timeout=300)
    try:
        ans = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        ans = {"ok": False, "error": (r.stderr or r.stdout).strip()[-300:]}
    ok = bool(ans.get("ok")) and os.path.getsize(os.path.join(d, "kernel.cubin")) > 0
    print("%s %s: %s" % ("ok  " if ok else "FAIL", tag, "cubin" if ok else ans.get("error")))
    return ok


def main():
    gn = open(os.path.join(KERNELS, "region_group_norm.py.tmpl")).read()
    scan = open(os.path.join(KERNELS, "scan.py.tmpl")).read()
    col = open(os.path.join(KERNELS, "col_softmax.py.tmpl")).read()
    split = open(os.path.join(KERNELS, "col_split_softmax.py.tmpl")).read()
    f32 = "*fp32"
    gsig = lambda t: {"x_ptr": t, "cb_ptr": t, "w_ptr": t, "b_ptr": t, "y_ptr": t, "part_ptr": f32, "sync_ptr": "*i32",
                      "HW": "i32", "CPG": "i32", "G": "i32", "eps": "fp32"}
    jobs = []
    # group norm: hz09 (32 x 8,190 with the conv bias and GELU, masked tail; a segment meeting up to
    # 3 or 2 channels, and the gather), 06 (one channel a segment), ReLU with the bias over bf16
    for tag, gs, seg, pb, act, nch, t in [("group_norm_bias_gelu_masked", 262080, 8192, True, 1, 3, f32),
                                          ("group_norm_bias_gelu_select2", 262080, 4096, True, 1, 2, f32),
                                          ("group_norm_gather", 262080, 8192, True, 0, 5, f32),
                                          ("group_norm_one_channel", 524288, 16384, False, 0, 1, f32),
                                          ("group_norm_bias_relu_bf16", 65536, 8192, True, 2, 1, "*bf16")]:
        nseg = -(-gs // seg)
        p2 = 1 << (nseg - 1).bit_length()
        src = render(gn, dict(GSIZE=gs, EPS=1e-5, SEG=seg, NSEG=nseg, NSEG_P2=p2, NUM_WARPS=8, PRE_BIAS=pb, ACT=act,
                              POST=False, **group_norm_ptrs(pb)))
        jobs.append((tag, src, "_group_norm_split", gsig(t),
                     {"GSIZE": gs, "NSEG": nseg, "NSEG_P2": p2, "SEG": seg, "NCH": nch, "PRE_BIAS": pb, "ACT": act}, 8))
    # ACT 3: Inductor's lines after the norm as _post(t) (GELU's tanh form, as Inductor writes it)
    # over hz09's groups; the CPU's torch has no torch._inductor, so its libdevice import is
    # Triton's own here (the same module: triton_helpers.libdevice is triton.language.extra's)
    src = render(gn, dict(GSIZE=262080, EPS=1e-5, SEG=4096, NSEG=64, NSEG_P2=64, NUM_WARPS=4, PRE_BIAS=True, ACT=3,
                          POST=True, **group_norm_ptrs(True)))
    post = ("@triton.jit\ndef _post(t):\n    tmp16 = tl.full([1], 0.5, tl.float32)\n    tmp17 = t * tmp16\n"
            "    tmp18 = t * t\n    tmp19 = tmp18 * t\n    tmp20 = tl.full([1], 0.044715, tl.float32)\n"
            "    tmp21 = tmp19 * tmp20\n    tmp22 = t + tmp21\n    tmp23 = tl.full([1], 0.7978845608028654, tl.float32)\n"
            "    tmp24 = tmp22 * tmp23\n    tmp25 = libdevice.tanh(tmp24)\n    tmp26 = tl.full([1], 1.0, tl.float32)\n"
            "    tmp27 = tmp25 + tmp26\n    tmp28 = tmp17 * tmp27\n    return tmp28\n\n\n")
    src = src.replace("from torch._inductor.runtime import triton_helpers\n", "").replace(
        "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n",
        "from triton.language.extra import libdevice\n")
    at = src.index("@triton.jit\ndef _group_norm_split(")
    jobs.append(("group_norm_post_gelu_tanh", src[:at] + post + src[at:], "_group_norm_split", gsig(f32),
                 {"GSIZE": 262080, "NSEG": 64, "NSEG_P2": 64, "SEG": 4096, "NCH": 2, "PRE_BIAS": True, "ACT": 3}, 4))
    # logcumsumexp: rows (hz06: 8,192 fp32 in one chunk) and columns over fp16
    base = dict(IN0="in_ptr0", IN1="in_ptr0", OUT="out_ptr0", XARG="in_ptr0", MARG="in_ptr0", MASKED=False, REGION=False,
                DIM=1, SHIFT=0, REVERSE=False, CHUNK=8192, BLOCK_S=16, BLOCK_I=128, NUM_WARPS=8, LSE=True, MAX=False)
    jobs.append(("lse_rows", render(scan, dict(base, ROWS=True)), "_lse_rows", {"x_ptr": f32, "out_ptr": f32, "S": "i32"},
                 {"CHUNK": 8192}, 8))
    jobs.append(("lse_cols_fp16", render(scan, dict(base, ROWS=False)), "_lse_cols",
                 {"x_ptr": "*fp16", "out_ptr": "*fp16", "S": "i32", "INNER": "i32", "NIB": "i32"},
                 {"BLOCK_S": 16, "BLOCK_I": 128}, 8))
    # cummax's values: hb03's rows (16384 x 8192 fp32) in 4096-element chunks, and columns of fp16
    jobs.append(("cummax_rows", render(scan, dict(base, LSE=False, MAX=True, ROWS=True, CHUNK=4096)), "_scan_rows",
                 {"x_ptr": f32, "m_ptr": f32, "out_ptr": f32, "S": "i32"},
                 {"CHUNK": 4096, "REVERSE": False, "SHIFT": 0, "MASKED": False}, 8))
    jobs.append(("cummax_cols_fp16", render(scan, dict(base, LSE=False, MAX=True, ROWS=False)), "_scan_cols",
                 {"x_ptr": "*fp16", "m_ptr": "*fp16", "out_ptr": "*fp16", "S": "i32", "INNER": "i32", "NIB": "i32"},
                 {"BLOCK_S": 64, "BLOCK_I": 32, "REVERSE": False, "SHIFT": 0, "MASKED": False}, 1))
    # hz01: softmax of bf16 x * (1 / 0.7) over 4,096 of 512 columns, both templates
    p = dict(IN="in_ptr0", OUT="out_ptr2", DIM=1, LOG=False, SCALED=True, SCALE="1.4285714285714286", NUM_WARPS=32)
    jobs.append(("col_softmax_bf16_scaled", render(col, dict(p, BLOCK_C=4096, BLOCK_I=8)), "_col_softmax",
                 {"x_ptr": "*bf16", "out_ptr": "*bf16", "C": "i32", "INNER": "i32", "NIB": "i32"},
                 {"BLOCK_C": 4096, "BLOCK_I": 8, "LOG": False}, 32))
    # the split template holding its block through the exchange, and loading it again (REREAD)
    # and the wait on plain loads of the counter (POLL, a kernel constexpr the sweep sets)
    for rr, poll in ((False, False), (True, False), (False, True)):
        jobs.append(("col_split_softmax_bf16_" + ("reread" if rr else "poll" if poll else "scaled"),
                     render(split, dict(p, CB=256, IB=32, NUM_WARPS=4, REREAD=rr)), "_col_split_softmax",
                     {"x_ptr": "*bf16", "y_ptr": "*bf16", "part_ptr": f32, "sync_ptr": "*i32", "C": "i32", "INNER": "i32",
                      "NIT": "i32", "nseg": "i32"},
                     {"NSEG": 16, "CB": 256, "IB": 32, "LOG": False, "REREAD": rr, "POLL": poll}, 4))
    # ha08: logsumexp over the middle of (64, 2048, 2048) fp16, 32 x 64 tiles, output first
    lse = open(os.path.join(KERNELS, "col_logsumexp.py.tmpl")).read()
    # and hb01's over the first axis of 16384 x 16384 bf16 in 4 parts, with the merging kernel
    for tag, dt, sp in (("col_logsumexp_fp16", "*fp16", 1), ("col_logsumexp_bf16_parts", "*bf16", 4)):
        lsrc = render(lse, dict(IN="in_ptr0", OUT="in_out_ptr0", OUT_FIRST=True, DIM=1, ROWS=32, BLOCK_I=64, SCALED=False,
                                SCALE="1.0", NUM_WARPS=4, SPLIT=sp, PARTS=sp > 1))
        jobs.append((tag, lsrc, "_col_logsumexp",
                     {"x_ptr": dt, "out_ptr": dt, "part_ptr": f32, "C": "i32", "INNER": "i32", "NIB": "i32", "NT": "i32",
                      "CHUNK": "i32"}, {"ROWS": 32, "BLOCK_I": 64, "SPLIT": sp}, 4))
    jobs.append(("col_logsumexp_combine_bf16", lsrc, "_col_logsumexp_combine",
                 {"part_ptr": f32, "out_ptr": "*bf16", "XN": "i32"}, {"SPLIT": 4, "BLOCK": 1024}, 4))
    # 2-D max pooling slid down its rows: hy05's 3 x 3 s1 p1 (two rows kept a step) and level1/34's
    # 3 x 3 s2 p1 with paired row loads
    pool = open(os.path.join(KERNELS, "pool.py.tmpl")).read()
    psig = {"x_ptr": f32, "y_ptr": f32, **{k: "i32" for k in ("D", "H", "W", "OD", "OH", "OW", "NBH", "NBW", "NDC")}}
    for tag, kd, sd, kw, sw, pair, share, bw in [("pool_rows_3x3_s1", 3, 1, 3, 1, False, 2, 256),
                                                 ("pool_rows_3x3_s2_pair", 3, 2, 3, 2, True, 1, 128)]:
        prm = dict(MAX=True, IN="in_ptr0", OUT="out_ptr0", OUT_FIRST=False, XNUMEL=True, R0NUMEL=False, IN3=False,
                   ND3=False, ROWS=True, KD=kd, KH=1, KW=kw, SD=sd, SH=1, SW=sw, PD=1, PH=0, PW=1, DD=1, DH=1, DW=1,
                   EKD=kd, EKH=1, EKW=kw, COUNT_PAD=False, DIVISOR=0, BH=1, BW=bw, NUM_WARPS=2, SLIDE=True, PAIR=pair,
                   ODC=32, SHARE=share)
        cx = {k: prm[k] for k in ("KD", "KH", "KW", "SD", "SH", "SW", "PD", "PH", "PW", "DH", "DW", "PAIR", "MAX",
                                  "COUNT_PAD", "DIVISOR", "BH", "BW", "ODC", "SHARE")}
        jobs.append((tag, render(pool, prm), "_pool_slide", psig, cx, 2))
    # revloop: Inductor's looped layer norm with its last pass walked backward (the golden candidate
    # of tests/unit/test_revloop.c), Inductor's Welford helpers replaced by the interpreter tests'
    # stand-ins, which this torch lacks
    from test_aligned_interp import _welford, _welford_combine
    from test_revloop_interp import _welford_reduce
    rev = open(os.path.join(ROOT, "tests", "fixtures", "revloop", "candidate_reversed.py")).read()
    defs = (inspect.getsource(getattr(f, "fn", f)) for f in (_welford_combine, _welford, _welford_reduce))
    helpers = "".join("@triton.jit\n%s\n\n" % d[d.index("def "):] for d in defs)
    rev = rev.replace("triton_helpers.welford_reduce(", "_welford_reduce(").replace("triton_helpers.welford(", "_welford(")
    rev = "\n".join(ln for ln in rev.splitlines() if not ln.startswith("from torch._inductor"))
    rev = rev.replace("import triton.language as tl\n", "import triton.language as tl\nfrom triton.language.extra import libdevice\n\n" + helpers, 1)
    jobs.append(("revloop_layer_norm_reversed", rev, "triton_red_fused_native_layer_norm_0",
                 {"in_ptr0": f32, "in_ptr1": f32, "in_ptr2": f32, "out_ptr2": f32, "xnumel": "i32", "r0_numel": "i32"},
                 {"XBLOCK": 2, "R0_BLOCK": 256}, 4))
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for job in jobs:
            bad += not compile_ok(tmp, *job)
    print("compile sm_90: %d kernels, %d failed" % (len(jobs), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
