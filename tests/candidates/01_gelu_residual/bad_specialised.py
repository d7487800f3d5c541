# expect: gate2 assumes a value range
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# GELU residual kernel that clamps its input to [-5, 5] "for safety", silently assuming |x| <= 5, which randn inputs of 2**25 elements violate (~19 elements per draw).
import triton
import triton.language as tl
from torch._inductor.runtime.triton_helpers import libdevice


@triton.jit
def _gelu_residual_kernel(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    # BUG: assumes the activations stay within [-5, 5] (true for the bulk of randn). For
    # |x| > 5 the output is off by (|x| - 5) to 1.5*(|x| - 5) (0.3 at x = 5.2, 0.2 at x = -5.2):
    # the residual uses the clamped x too. P(|x| > 5) = 5.7e-7, i.e. ~19 expected elements per 2**25 randn tensor, so
    # the captured input and every fresh randn seed almost surely contain some
    # (P(none) ~ 5e-9 per draw). Inputs drawn from a narrower distribution would NOT catch it.
    x = tl.minimum(tl.maximum(x, -5.0), 5.0)
    gelu = (x * 0.5) * (libdevice.erf(x * 0.7071067811865476) + 1.0)
    y = gelu * 0.5 + x
    tl.store(out_ptr0 + offs, y, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    BLOCK = 2048
    grid = (triton.cdiv(xnumel, BLOCK),)
    _gelu_residual_kernel[grid](in_ptr0, out_ptr0, xnumel, BLOCK=BLOCK, num_warps=8, num_stages=1)
