"""Host cost of one Triton launch by each path kopt's output can take (developer tool, GPU only).

Run on the GPU machine: `python3 tools/launch_cost.py`. A one-program-per-1024-elements scale
kernel over 65,536 fp32 (GPU time far below the host's), per path the best of 5 x 3000 launches
of host time per launch, no synchronisation inside the loop. Paths: Triton's JIT dispatch
`K[grid](...)`; a launcher shaped like the one kopt writes from a form-P plan (scratch-bound
arithmetic, one `torch.full` scratch, then `K[grid]`); the compiled kernel's runner
(`K.warmup(...)`, then `ck[grid](..., stream=s)`); its raw launcher; the guard's signature check;
a whole `torch.compile` call of a one-kernel function. docs/BENCHMARKS.md (eighteenth session).
"""
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def per_call_us(fn, n=3000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        best = min(best, (t1 - t0) / n * 1e6)
    return best


def main():
    n = 1 << 16
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024), 1, 1)
    res = {"jit K[grid](...)": per_call_us(lambda: _scale[grid](x, y, n, BLOCK=1024, num_warps=4))}

    def plan_like(x_ptr, y_ptr, n):
        args = x_ptr.numel() * x_ptr.element_size() + y_ptr.numel() * y_ptr.element_size()
        if 4 * (n // 1024 + 1) > 4 * args + (64 << 20):
            raise ValueError("scratch bound")
        torch.full((n // 1024 + 1,), float("nan"), dtype=torch.float32, device=x_ptr.device)
        _scale[(triton.cdiv(n, 1024),)](x_ptr, y_ptr, n, BLOCK=1024, num_warps=4)
    res["form-P-like launcher"] = per_call_us(lambda: plan_like(x, y, n))
    ck = _scale.warmup(x, y, n, BLOCK=1024, num_warps=4, grid=grid)
    s = torch.cuda.current_stream().cuda_stream
    runner = ck[grid]
    res["compiled runner ck[grid](..., stream)"] = per_call_us(lambda: runner(x, y, n, 1024, stream=s))
    y.zero_()
    runner(x, y, n, 1024, stream=s)
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2), "the compiled runner computed something else"
    ck._init_handles()
    res["raw ck.run(...)"] = per_call_us(lambda: ck.run(grid[0], 1, 1, s, ck.function, ck.packed_metadata, None,
                                                        None, None, x, y, n, 1024))
    check = (("t", (n,), (1,), torch.float32, "cuda"),) * 2 + (("i", n),)

    def matches(args):
        for a, c in zip(args, check):
            if c[0] == "t":
                if (not isinstance(a, torch.Tensor) or a.dtype != c[3] or a.shape != c[1]
                        or a.stride() != c[2] or a.device.type != c[4]):
                    return False
            elif type(a) is not int or a != c[1]:
                return False
        return True
    res["guard signature check"] = per_call_us(lambda: matches((x, y, n)))
    f = torch.compile(lambda a: a * 2.0)
    f(x)
    res["torch.compile call (1 kernel)"] = per_call_us(lambda: f(x), n=1000)
    for k, v in res.items():
        print("%-40s %7.2f us" % (k, v))


if __name__ == "__main__":
    main()
