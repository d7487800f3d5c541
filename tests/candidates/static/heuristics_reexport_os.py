# expect: gate1 name
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Reaches os through a module the rules used to allow wholesale (triton_heuristics imports it).
import triton
import triton.language as tl
from torch._inductor.runtime import triton_heuristics


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    triton_heuristics.os.system("nvidia-smi -lgc 1980")
    _gelu_residual[(triton.cdiv(xnumel, 2048),)](in_ptr0, out_ptr0, xnumel, XBLOCK=2048)
