"""`ceilings`: the device's measured ceilings (PROTOCOL.md, `ceilings`).

  copy     dst.copy_(src) of a 512 MiB float32 tensor (8 times the L2 of the largest GPUs;
           smaller when device memory is under 4 GiB: an eighth of it); copy_bytes counts bytes
           read plus written (2 x size).
  read     a buffer of up to 4 GiB (RW_BYTES; a quarter of the free device memory when that is
           less, never below the copy's size) only read: Triton kernels in which each program
           sums a strip of the buffer into one value, in a few block shapes and warp counts,
           and torch.sum; per rep the fastest counts; read_bytes = size. A larger buffer than
           the copy's because a fixed start and tail cost per launch makes a 512 MiB pass read
           about 3% slower than the multi-GB passes Inductor's kernels make (seen on an H200:
           4436 GB/s at 512 MiB, 4611 at 4 GiB), which put Inductor's kernels below the floor.
  write    the same buffer only written: fill_ and Triton store kernels; the fastest counts;
           write_bytes = size.
A kernel's memory floor is then max(read/read_bw, written/write_bw, (read+written)/best_bw)
(the core's roofline): the copy bandwidth alone would put a kernel that mostly reads above its
true floor, since reads alone stream faster than a copy.
  mm_fp32  torch.mm of two 8192x8192 float32 matrices of random normal data, TF32 off
           (torch.backends.cuda.matmul.allow_tf32 = False for the measurement — the legacy
           flag, which is also its default; the newer fp32_precision API is left alone because
           mixing the two raises errors in torch 2.9+), flops = 2 * 8192^3.
  mm_tf32  the same fp32 product with TF32 allowed (torch.backends.cuda.matmul.allow_tf32 =
           True for the measurement): the rate of fp32 work on tensor cores, which cuDNN's
           convolutions use by default (torch.backends.cudnn.allow_tf32 is True by default).
           Absent when the flag cannot be set.
  mm_bf16  the same in bfloat16.
  tf32     {"matmul": bool, "cudnn": bool}: the process's TF32 settings when the ceilings are
           measured (after the problem was loaded), which pick the rate of a library call's
           floor; a setting that cannot be read is left out.
Each: `warmup` untimed runs, then `reps` runs, each bracketed by its own event pair; one
synchronize at the end, raw milliseconds returned. Optional arguments: reps (10), warmup (3).
"""

import torch

from kopt.errors import BadRequest
from kopt.protocol import get_arg

MM_N = 8192
COPY_BYTES = 512 << 20
RW_BYTES = 4 << 30
# (BLOCK, ITERS, num_warps) of the Triton read and write kernels; per rep the fastest counts
READ_SHAPES = ((2048, 8, 8), (2048, 8, 16), (1024, 16, 16))
WRITE_SHAPES = ((2048, 8, 8), (1024, 4, 8))


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


def _rw_size(size):
    """The read/write buffer: RW_BYTES, or a quarter of the free memory when that is less (in
    whole MiB), never below the copy's size."""
    try:
        free = torch.cuda.mem_get_info()[0]
    except Exception:
        free = 0
    return max(size, min(RW_BYTES, (free // 4) & ~0xFFFFF))


def _grid(n, block, iters):
    return ((n + block * iters - 1) // (block * iters),)


def _bandwidths(size, reps, warmup):
    n = size // 4
    src = torch.empty(n, dtype=torch.float32, device="cuda").fill_(1.0)
    dst = torch.empty_like(src)
    copy_ms = _time(lambda: dst.copy_(src), reps, warmup)
    del src, dst
    torch.cuda.empty_cache()
    rw = _rw_size(size)
    n = rw // 4
    buf = torch.empty(n, dtype=torch.float32, device="cuda").fill_(1.0)
    read_k, write_k = _kernels()
    part = torch.empty(_grid(n, 1024, 4)[0], dtype=torch.float32, device="cuda")
    sink = torch.empty((), dtype=torch.float32, device="cuda")
    reads = [lambda: torch.sum(buf, dim=0, out=sink)]
    writes = [lambda: buf.fill_(2.0)]
    if read_k is not None:
        for b, it, w in READ_SHAPES:
            g = _grid(n, b, it)
            reads.append(lambda g=g, b=b, it=it, w=w: read_k[g](buf, part, n, BLOCK=b, ITERS=it, num_warps=w))
        for b, it, w in WRITE_SHAPES:
            g = _grid(n, b, it)
            writes.append(lambda g=g, b=b, it=it, w=w: write_k[g](buf, n, BLOCK=b, ITERS=it, num_warps=w))
    read_ms = _best_of(reads, reps, warmup)
    write_ms = _best_of(writes, reps, warmup)
    del buf, part, sink
    torch.cuda.empty_cache()
    return copy_ms, rw, read_ms, write_ms


def _tf32_flags():
    """The process's TF32 settings ({"matmul", "cudnn"}); one that cannot be read is left out."""
    flags = {}
    for key, get in (("matmul", lambda: torch.backends.cuda.matmul.allow_tf32),
                     ("cudnn", lambda: torch.backends.cudnn.allow_tf32)):
        try:
            flags[key] = bool(get())
        except Exception:
            pass
    return flags


def _mm_fp32(reps, warmup, tf32):
    """The fp32 product with TF32 set to `tf32` for the measurement (restored after); None when
    the flag cannot be set (torch 2.9+ refuses the legacy flag after the new API was used)."""
    matmul = torch.backends.cuda.matmul
    try:
        prev = matmul.allow_tf32
        if prev != tf32:
            matmul.allow_tf32 = tf32
    except Exception:
        return None
    try:
        return _mm(torch.float32, reps, warmup)
    finally:
        if prev != tf32:
            matmul.allow_tf32 = prev


def op_ceilings(ctx, req):
    reps = get_arg(req, "reps", int, 10)
    warmup = get_arg(req, "warmup", int, 3)
    if reps < 1 or warmup < 0:
        raise BadRequest("reps must be >= 1 and warmup >= 0")

    total = torch.cuda.get_device_properties(0).total_memory
    size = COPY_BYTES if total >= (4 << 30) else max(1 << 20, (total // 8) & ~0xFFFFF)
    flags = _tf32_flags()
    with torch.no_grad():
        copy_ms, rw, read_ms, write_ms = _bandwidths(size, reps, warmup)
        fp32 = _mm_fp32(reps, warmup, False)
        if fp32 is None:   # the legacy flag is unusable: the product as the process runs it
            fp32 = _mm(torch.float32, reps, warmup)
        tf32 = _mm_fp32(reps, warmup, True)
        bf16 = _mm(torch.bfloat16, reps, warmup)
        torch.cuda.empty_cache()
    res = {"copy_bytes": 2 * size, "copy_ms": copy_ms, "read_bytes": rw, "read_ms": read_ms,
           "write_bytes": rw, "write_ms": write_ms, "mm_fp32": fp32, "mm_bf16": bf16,
           "mm_n": MM_N, "tf32": flags}
    if tf32 is not None:
        res["mm_tf32"] = tf32
    return res
