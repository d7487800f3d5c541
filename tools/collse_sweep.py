"""Developer sweep (GPU): time the col_logsumexp template's tiles against Inductor on a logsumexp
over the middle dimension of an (OUTER, C, INNER) tensor, to pick the variants builtin_collse.c
offers and their order: tiles (columns, rows, warps) and the parts the reduced dimension is cut
into (SPLIT, merged by the template's second kernel). Each tile is checked against torch.logsumexp in float64 first (fresh randn
input, output poisoned with NaN), then timed with CUDA events, L2 flushed before every run, median
of 25 after warm-up (tools/sweeplib.py).
usage: python3 tools/collse_sweep.py [--dtype float32|bfloat16|float16] [OUTER C INNER ...]
(default 64 2048 2048 float16: held-out ha08's shape)."""
import torch

from sweeplib import inductor_ms, print_best, shape_args, shapes, template_module, try_variant


def main():
    dtype, dims, esize = shape_args(torch.float16, [64, 2048, 2048])
    m = template_module("col_logsumexp", {"SCALED": False, "SCALE": "1.0"})
    k, kc = m._col_logsumexp, m._col_logsumexp_combine
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for outer, c, inner, x, ref in shapes(dims, dtype, torch.logsumexp):
        y = torch.empty(outer, inner, device="cuda", dtype=dtype)
        part = torch.empty(2 * 64 * outer * inner, device="cuda", dtype=torch.float32)
        gb = (x.numel() + y.numel()) * esize / 1e9
        t0 = inductor_ms(lambda t: torch.logsumexp(t, dim=1), x, flush, gb,
                         "shape %d x %d x %d (%s)" % (outer, c, inner, str(dtype)))
        out = []
        # builtin_collse.c's tiles first (columns, rows, warps), each with the reduced dimension
        # in 1-16 parts (SPLIT) where that leaves at most 8192 programs, then the rest of the grid
        tiles = [(64, 32, 4), (128, 32, 8), (64, 16, 4), (64, 32, 8), (32, 64, 4), (128, 16, 8)]
        tiles += [(bi, rows, nw) for bi in (32, 64, 128, 256) for rows in (16, 32, 64, 128, 256) for nw in (4, 8, 16)
                  if (bi, rows, nw) not in tiles and 8 <= bi * rows // (32 * nw) <= 64]
        grid = [(bi, rows, nw, sp) for bi, rows, nw in tiles for sp in (1, 2, 4, 8, 16)
                if outer * -(-inner // bi) * sp <= 8192 and c // sp >= 2 * rows]
        for bi, rows, nw, sp in grid:
            nib = -(-inner // bi)
            nt = outer * nib
            chunk = -(-(-(-c // sp)) // rows) * rows

            def f(bi=bi, rows=rows, nw=nw, nib=nib, nt=nt, sp=sp, chunk=chunk):
                k[(nt * sp,)](x, y, part, c, inner, nib, nt, chunk, ROWS=rows, BLOCK_I=bi, SPLIT=sp, num_warps=nw,
                              num_stages=1)
                if sp > 1:
                    kc[(-(-(outer * inner) // 1024),)](part, y, outer * inner, SPLIT=sp, BLOCK=1024, num_warps=4,
                                                       num_stages=1)
            t = try_variant((bi, rows, nw, sp), f, y, ref, 2e-2 if esize == 2 else 1e-5, flush)
            if t is not None:   # printed as measured: a run cut off by a time limit keeps what it measured
                print("  %-26s %.3f ms" % ((bi, rows, nw, sp), t), flush=True)
                out.append((t, (bi, rows, nw, sp)))
        print_best(out, t0, gb, 10)


if __name__ == "__main__":
    main()
