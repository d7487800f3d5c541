# expect: gate2 crashes the CUDA context
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Writes far past the end of its output (an int64 offset of 2**40 elements): an illegal memory access that corrupts the CUDA context; the worker must be restarted and kopt must carry on.
import triton
import triton.language as tl
from torch._inductor.runtime.triton_helpers import libdevice


@triton.jit
def _gelu_residual_kernel(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    y = (x * 0.5) * (libdevice.erf(x * 0.7071067811865476) + 1.0) * 0.5 + x
    far = offs.to(tl.int64) + (1 << 40)
    tl.store(out_ptr0 + far, y, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    BLOCK = 1024
    grid = (triton.cdiv(xnumel, BLOCK),)
    _gelu_residual_kernel[grid](in_ptr0, out_ptr0, xnumel, BLOCK=BLOCK, num_warps=4)
