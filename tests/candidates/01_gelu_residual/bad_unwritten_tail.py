# expect: gate2 unwritten tail
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Correct GELU residual math, but the grid is one program short (cdiv(numel, BLOCK) - 1), so the last 2048 outputs are never written.
import triton
import triton.language as tl
from torch._inductor.runtime.triton_helpers import libdevice


@triton.jit
def _gelu_residual_kernel(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    gelu = (x * 0.5) * (libdevice.erf(x * 0.7071067811865476) + 1.0)
    y = gelu * 0.5 + x
    tl.store(out_ptr0 + offs, y, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    BLOCK = 2048
    # BUG: xnumel = 2**25 is a multiple of BLOCK, and the author "skips the ragged last block"
    # anyway: elements [xnumel - BLOCK, xnumel) keep whatever out_ptr0 held (NaN under gate 2's
    # poisoning, uninitialised memory in the model).
    grid = (triton.cdiv(xnumel, BLOCK) - 1,)
    _gelu_residual_kernel[grid](in_ptr0, out_ptr0, xnumel, BLOCK=BLOCK, num_warps=8, num_stages=1)
