# expect: gate2 never finishes (a device-side infinite loop)
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Spins forever on a condition that never becomes true for real data (an input element equal to 12345.0), re-reading it with volatile loads so the compiler cannot drop the loop: kopt must refuse it on a timeout, kill the worker and carry on.
import triton
import triton.language as tl
from torch._inductor.runtime.triton_helpers import libdevice


@triton.jit
def _gelu_residual_kernel(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    y = (x * 0.5) * (libdevice.erf(x * 0.7071067811865476) + 1.0) * 0.5 + x
    first = tl.load(in_ptr0 + tl.program_id(0) * BLOCK, volatile=True)
    while first != 12345.0:
        first = tl.load(in_ptr0 + tl.program_id(0) * BLOCK, volatile=True)
    tl.store(out_ptr0 + offs, y, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    BLOCK = 1024
    grid = (triton.cdiv(xnumel, BLOCK),)
    _gelu_residual_kernel[grid](in_ptr0, out_ptr0, xnumel, BLOCK=BLOCK, num_warps=4)
