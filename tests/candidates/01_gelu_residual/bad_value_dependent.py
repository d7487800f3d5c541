# expect: gate2 wrong for some input values
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# GELU residual kernel with a "saturation shortcut" that skips erf and takes gelu(x) = x for x > 2.5, which is wrong by up to ~8e-3 for x in (2.5, ~3.4).
import triton
import triton.language as tl
from torch._inductor.runtime.triton_helpers import libdevice


@triton.jit
def _gelu_residual_kernel(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    exact = (x * 0.5) * (libdevice.erf(x * 0.7071067811865476) + 1.0)
    # BUG (value dependent): assumes erf(x/sqrt(2)) == 1 once x > 2.5. The true gelu is
    # x * Phi(x) = 0.99379 * x at x = 2.5, so the output (gelu*0.5 + x) is off by up to ~7.8e-3,
    # far above atol + rtol*|ref| (~5e-4) for every x in (2.5, ~3.4): ~0.6% of randn inputs
    # (~190k elements of the 2**25). (A tanh-GELU approximation there would NOT be caught:
    # its error stays below ~0.48x the fp32 tolerance.)
    gelu = tl.where(x > 2.5, x, exact)
    y = gelu * 0.5 + x
    tl.store(out_ptr0 + offs, y, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    BLOCK = 2048
    grid = (triton.cdiv(xnumel, BLOCK),)
    _gelu_residual_kernel[grid](in_ptr0, out_ptr0, xnumel, BLOCK=BLOCK, num_warps=8, num_stages=1)
