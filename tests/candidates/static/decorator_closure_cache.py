# expect: gate1 state
# kopt-candidate: replaces=triton_red_fused_max_0
# Wraps its launcher in a decorator of its own whose closure keeps a dict of the
# (input, output) data pointers already reduced, and skips the launch for them: a cache
# across calls that names no module-level object (the decorator applies it at import).
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _middle_max(in_ptr0, out_ptr0, xnumel, r0_numel, INNER: tl.constexpr, R_BLOCK: tl.constexpr,
                K_BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    kblocks = INNER // K_BLOCK
    b = (pid // kblocks).to(tl.int64)
    k = (pid % kblocks) * K_BLOCK + tl.arange(0, K_BLOCK)
    r = tl.arange(0, R_BLOCK)[:, None]
    acc = tl.full([R_BLOCK, K_BLOCK], float("-inf"), tl.float32)
    for off in tl.range(0, r0_numel, R_BLOCK):
        v = tl.load(in_ptr0 + b * r0_numel * INNER + (off + r) * INNER + k[None, :],
                    mask=(off + r) < r0_numel, other=float("-inf"))
        acc = triton_helpers.maximum(acc, v)
    tl.store(out_ptr0 + b * INNER + k, triton_helpers.max2(acc, 0))


def _once_per_buffer(fn):
    done = {}

    def wrapper(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
        key = (in_ptr0.data_ptr(), out_ptr0.data_ptr(), xnumel)
        if key in done:
            return None
        done[key] = True
        return fn(in_ptr0, out_ptr0, xnumel, r0_numel, stream)
    return wrapper


@_once_per_buffer


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    _middle_max[(xnumel // 64,)](in_ptr0, out_ptr0, xnumel, r0_numel, INNER=256, R_BLOCK=64, K_BLOCK=64,
                                 num_warps=4)
