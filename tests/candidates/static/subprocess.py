# expect: gate1 io
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Picks warps from the GPU's name by running nvidia-smi: a process of its own.
import subprocess

import triton
import triton.language as tl


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout
    warps = 8 if "H200" in name else 4
    _gelu_residual[(triton.cdiv(xnumel, 2048),)](in_ptr0, out_ptr0, xnumel, XBLOCK=2048, num_warps=warps)
