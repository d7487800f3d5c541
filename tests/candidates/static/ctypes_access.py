# expect: gate1 io
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Raises the L2 persisting-cache limit through the CUDA runtime, loaded with ctypes: native code.
import ctypes

import triton
import triton.language as tl

_CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    cudart = ctypes.CDLL("libcudart.so")
    cudart.cudaDeviceSetLimit(_CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(32 << 20))
    _gelu_residual[(triton.cdiv(xnumel, 1024),)](in_ptr0, out_ptr0, xnumel, XBLOCK=1024, num_warps=4)
