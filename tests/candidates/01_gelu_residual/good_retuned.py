# expect: pass-or-gate4
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Form P. Faithful rewrite of the fused erf-GELU * 0.5 + x pointwise kernel with 2048-element blocks and 8 warps (same operation order as Inductor's kernel).
import triton
import triton.language as tl
from torch._inductor.runtime.triton_helpers import libdevice


@triton.jit
def _gelu_residual_kernel(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    # xnumel = 4096 * 8192 = 2**25 < 2**31: int32 offsets are safe.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    # Same order as Inductor: tmp2 = x*0.5; tmp4 = x*0.7071..; tmp7 = erf(tmp4)+1;
    # tmp8 = tmp2*tmp7; tmp9 = tmp8*0.5; tmp10 = tmp9 + x
    half_x = x * 0.5
    e = libdevice.erf(x * 0.7071067811865476) + 1.0
    gelu = half_x * e
    y = gelu * 0.5 + x
    tl.store(out_ptr0 + offs, y, mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_gelu_residual_kernel", "grid": ["cdiv(xnumel, 2048)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"],
                  "constexprs": {"BLOCK": 2048}, "num_warps": 8, "num_stages": 1}],
}
