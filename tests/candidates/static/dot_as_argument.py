# expect: gate1 precision
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# tl.dot handed to a helper that calls it: TF32 by default, the call site never names tl.dot.
import triton
import triton.language as tl


@triton.jit
def _mm(K, a):
    return K(a, a)


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    r = tl.arange(0, 16)
    a = tl.load(in_ptr0 + r[:, None] * 16 + r[None, :])
    d = _mm(tl.dot, a)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x + tl.sum(tl.sum(d, 1), 0) * 0.0, mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_gelu_residual", "grid": ["cdiv(xnumel, 1024)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"], "constexprs": {"XBLOCK": 1024}, "num_warps": 4}],
}
