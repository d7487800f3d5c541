"""`ceilings`: the device's measured ceilings (PROTOCOL.md, `ceilings`).

  copy     dst.copy_(src) of a 512 MiB float32 tensor (8 times the L2 of the largest GPUs;
           smaller when device memory is under 4 GiB: an eighth of it); copy_bytes counts bytes
           read plus written (2 x size).
  read     the same buffer only read: a Triton kernel in which each program sums a strip of
           the buffer into one value (and torch.sum as a second method; the faster of the two
           per rep counts); read_bytes = size.
  write    the buffer only written: fill_ (and a Triton store kernel; the faster counts);
           write_bytes = size.
A kernel's memory floor is then max(read/read_bw, written/write_bw, (read+written)/best_bw)
(the core's roofline): the copy bandwidth alone would put a kernel that mostly reads above its
true floor, since reads alone stream faster than a copy.
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
COPY_BYTES = 512 << 20


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


_KERNELS = None


def _kernels():
    """(read kernel, write kernel) in Triton, or (None, None) when Triton is unavailable."""
    global _KERNELS
    if _KERNELS is not None:
        return _KERNELS
    try:
        import triton
        import triton.language as tl
    except Exception:
        _KERNELS = (None, None)
        return _KERNELS

    @triton.jit
    def _kopt_read(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        base = pid * BLOCK * ITERS
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(ITERS):
            offs = base + i * BLOCK + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + pid, tl.sum(acc, axis=0))

    @triton.jit
    def _kopt_write(x_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        base = pid * BLOCK * ITERS
        v = tl.full([BLOCK], 1.0, tl.float32)
        for i in range(ITERS):
            offs = base + i * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, v, mask=offs < n)

    _KERNELS = (_kopt_read, _kopt_write)
    return _KERNELS


def _best_of(fns, reps, warmup):
    """Per rep, the fastest of several ways to do the same traffic (each timed by events)."""
    runs = [_time(f, reps, warmup) for f in fns]
    return [min(r[i] for r in runs) for i in range(reps)]


def _bandwidths(size, reps, warmup):
    n = size // 4
    src = torch.empty(n, dtype=torch.float32, device="cuda").fill_(1.0)
    dst = torch.empty_like(src)
    copy_ms = _time(lambda: dst.copy_(src), reps, warmup)
    del dst
    read_k, write_k = _kernels()
    block, iters = 2048, 8
    grid = ((n + block * iters - 1) // (block * iters),)
    part = torch.empty(grid[0], dtype=torch.float32, device="cuda")
    sink = torch.empty((), dtype=torch.float32, device="cuda")
    reads = [lambda: torch.sum(src, dim=0, out=sink)]
    writes = [lambda: src.fill_(2.0)]
    if read_k is not None:
        reads.append(lambda: read_k[grid](src, part, n, BLOCK=block, ITERS=iters, num_warps=8))
        writes.append(lambda: write_k[grid](src, n, BLOCK=block, ITERS=iters, num_warps=8))
    read_ms = _best_of(reads, reps, warmup)
    write_ms = _best_of(writes, reps, warmup)
    del src, part, sink
    torch.cuda.empty_cache()
    return copy_ms, read_ms, write_ms


def op_ceilings(ctx, req):
    reps = get_arg(req, "reps", int, 10)
    warmup = get_arg(req, "warmup", int, 3)
    if reps < 1 or warmup < 0:
        raise BadRequest("reps must be >= 1 and warmup >= 0")

    total = torch.cuda.get_device_properties(0).total_memory
    size = COPY_BYTES if total >= (4 << 30) else max(1 << 20, (total // 8) & ~0xFFFFF)
    with torch.no_grad():
        copy_ms, read_ms, write_ms = _bandwidths(size, reps, warmup)

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
    return {"copy_bytes": 2 * size, "copy_ms": copy_ms, "read_bytes": size, "read_ms": read_ms,
            "write_bytes": size, "write_ms": write_ms, "mm_fp32": fp32, "mm_bf16": bf16,
            "mm_n": MM_N}
