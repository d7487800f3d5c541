# expect: gate2 reads 2048 elements past the end of its input (under compute-sanitizer's memcheck)
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Form P. good_retuned.py plus a "prefetch" of the next block loaded without a mask and folded in
# only where it holds one exact value no N(0,1) draw produces (a use the compiler cannot drop;
# 0 * x was folded away on the H200): the outputs are right, but the last program reads 8 KB past
# the input.
# Inside PyTorch's caching allocator the read lands in the same segment and never faults, so only
# gate 2's memcheck (kopt verify --memcheck: allocator off, compute-sanitizer) can refuse it.
import triton
import triton.language as tl
from torch._inductor.runtime.triton_helpers import libdevice


@triton.jit
def _gelu_residual_prefetch(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    nxt = tl.load(in_ptr0 + offs + BLOCK)                  # BUG: no mask, past the end for the last block
    half_x = x * 0.5
    e = libdevice.erf(x * 0.7071067811865476) + 1.0
    gelu = half_x * e
    y = gelu * 0.5 + x
    y = tl.where(nxt == 5.6789e-28, y + 1.0, y)
    tl.store(out_ptr0 + offs, y, mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_gelu_residual_prefetch", "grid": ["cdiv(xnumel, 2048)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"],
                  "constexprs": {"BLOCK": 2048}, "num_warps": 8, "num_stages": 1}],
}
