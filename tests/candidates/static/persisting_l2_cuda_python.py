# expect: gate1 import
# kopt-candidate: replaces=triton_red_fused_cumsum_0
# Sets aside 48 MiB of L2 as persisting memory through NVIDIA's cuda-python bindings
# (cudaDeviceSetLimit), the first step of a persisting access-policy window that keeps its input
# resident across gate 4's timed runs and defeats the L2 flush: a module off the allowlist.
from cuda.bindings import runtime as cudart

import triton
import triton.language as tl


@triton.jit
def _row_cumsum(in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, CHUNK)
    carry = tl.zeros([], dtype=tl.float32)
    for off in tl.range(0, r0_numel, CHUNK):
        mask = off + cols < r0_numel
        x = tl.load(in_ptr0 + base + off + cols, mask=mask, other=0.0)
        tl.store(out_ptr0 + base + off + cols, tl.cumsum(x, 0) + carry, mask=mask)
        carry += tl.sum(x, 0)


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    cudart.cudaDeviceSetLimit(cudart.cudaLimit.cudaLimitPersistingL2CacheSize, 48 << 20)
    _row_cumsum[(xnumel,)](in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK=4096, num_warps=8)
