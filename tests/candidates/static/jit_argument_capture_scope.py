# expect: gate1 name
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# The same through a helper's parameter: _h(_noop) passes the JITFunction, _h looks its globals up.
import triton
import triton.language as tl


@triton.jit
def _noop(v):
    return v


@triton.jit
def _h(K, v):
    t = list(K.get_capture_scope().values())
    return v


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    x = _h(_noop, x)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_gelu_residual", "grid": ["cdiv(xnumel, 1024)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"], "constexprs": {"XBLOCK": 1024}, "num_warps": 4}],
}
