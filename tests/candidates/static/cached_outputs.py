# expect: gate1 state
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Skips the launch when it has already seen the same buffers: the output of an earlier run
# is reused, which is state kept across calls (a module-level dict).
import triton
import triton.language as tl

_done = {}


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    key = (in_ptr0.data_ptr(), out_ptr0.data_ptr(), xnumel)
    if key in _done:
        return
    block = 1024
    _gelu_residual[(triton.cdiv(xnumel, block),)](in_ptr0, out_ptr0, xnumel, XBLOCK=block, num_warps=4)
    _done[key] = True
