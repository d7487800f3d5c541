"""`ceilings`: the device's measured ceilings (PROTOCOL.md, `ceilings`).

  copy     dst.copy_(src) of a 2 GiB float32 tensor (smaller when device memory is under
           16 GiB: an eighth of it); copy_bytes counts bytes read plus written (2 x size).
  mm_fp32  torch.mm of two 8192x8192 float32 matrices of random normal data, TF32 off
           (torch.backends.cuda.matmul.allow_tf32 = False for the measurement — the legacy
           flag, which is also its default; the newer fp32_precision API is left alone because
           mixing the two raises errors in torch 2.9+), flops = 2 * 8192^3.
  mm_bf16  the same in bfloat16.
Each: `warmup` untimed runs, then `reps` runs, each bracketed by its own event pair; one
synchronize at the end, raw milliseconds returned. Optional arguments: reps (10), warmup (3).
"""

import torch

from kopt.errors import BadRequest
from kopt.protocol import get_arg

MM_N = 8192
COPY_BYTES = 2 << 30


def _time(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
           for _ in range(reps)]
    for s, e in evs:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in evs]


def _mm(dtype, reps, warmup):
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    a = torch.randn(MM_N, MM_N, device="cuda", dtype=dtype, generator=g)
    b = torch.randn(MM_N, MM_N, device="cuda", dtype=dtype, generator=g)
    c = torch.empty(MM_N, MM_N, device="cuda", dtype=dtype)
    ms = _time(lambda: torch.mm(a, b, out=c), reps, warmup)
    del a, b, c
    return {"flops": 2 * MM_N ** 3, "ms": ms}


def op_ceilings(ctx, req):
    reps = get_arg(req, "reps", int, 10)
    warmup = get_arg(req, "warmup", int, 3)
    if reps < 1 or warmup < 0:
        raise BadRequest("reps must be >= 1 and warmup >= 0")

    total = torch.cuda.get_device_properties(0).total_memory
    size = COPY_BYTES if total >= (16 << 30) else max(1 << 20, (total // 8) & ~0xFFFFF)
    with torch.no_grad():
        src = torch.empty(size // 4, dtype=torch.float32, device="cuda").fill_(1.0)
        dst = torch.empty_like(src)
        copy_ms = _time(lambda: dst.copy_(src), reps, warmup)
        del src, dst
        torch.cuda.empty_cache()

        matmul = torch.backends.cuda.matmul
        prev = matmul.allow_tf32
        try:
            if prev:
                matmul.allow_tf32 = False
            fp32 = _mm(torch.float32, reps, warmup)
        finally:
            if prev:
                matmul.allow_tf32 = prev
        bf16 = _mm(torch.bfloat16, reps, warmup)
        torch.cuda.empty_cache()
    return {"copy_bytes": 2 * size, "copy_ms": copy_ms, "mm_fp32": fp32, "mm_bf16": bf16,
            "mm_n": MM_N}
