"""Developer sweep (GPU): time the scan template's column kernel (_scan_cols: a cumsum over a
dimension that is not the last) against Inductor on a cumsum over the middle dimension of an
(OUTER, S, INNER) tensor, to pick the tiles builtin_scan.c offers and their order. Each tile is
checked against torch.cumsum in float64 first (fresh randn input, output poisoned with NaN), then
timed with CUDA events, L2 flushed before every run, median of 25 after warm-up (tools/sweeplib.py).
usage: python3 tools/scan_sweep.py [--dtype float32|bfloat16|float16] [OUTER S INNER ...]
(default 32 4096 1024 float16: held-out hb02's shape)."""
import torch

from sweeplib import inductor_ms, print_best, shape_args, shapes, template_module, try_variant


def main():
    dtype, dims, esize = shape_args(torch.float16, [32, 4096, 1024])
    k = template_module("scan", {"LSE": False, "MAX": False})._scan_cols
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for outer, n, inner, x, ref in shapes(dims, dtype, torch.cumsum):
        y = torch.empty_like(x)
        gb = 2 * x.numel() * esize / 1e9
        t0 = inductor_ms(lambda t: torch.cumsum(t, dim=1), x, flush, gb,
                         "shape %d x %d x %d (%s)" % (outer, n, inner, str(dtype)))
        out = []
        # builtin_scan.c's column tiles first (rows per step, columns, warps), then the rest
        grid = [(32, 64, 8), (16, 128, 8), (64, 32, 4), (32, 128, 16), (16, 256, 16)]
        grid += [(bs, bi, nw) for bi in (8, 16, 32, 64, 128) for bs in (16, 32, 64, 128, 256) for nw in (1, 2, 4, 8)
                 if (bs, bi, nw) not in grid and 4 <= bs * bi // (32 * nw) <= 64]
        for bs, bi, nw in grid:
            nib = -(-inner // bi)

            def f(bs=bs, bi=bi, nw=nw, nib=nib):
                k[(outer * nib,)](x, x, y, n, inner, nib, BLOCK_S=bs, BLOCK_I=bi, REVERSE=False, SHIFT=0,
                                  MASKED=False, num_warps=nw)
            t = try_variant((bs, bi, nw), f, y, ref, 2e-2 if esize == 2 else 1e-5 * n ** 0.5, flush)
            if t is not None:   # printed as measured: a run cut off by a time limit keeps what it measured
                print("  %-26s %.3f ms" % ((bs, bi, nw), t), flush=True)
                out.append((t, (bs, bi, nw)))
        print_best(out, t0, gb, 10)


if __name__ == "__main__":
    main()
