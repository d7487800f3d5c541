"""Developer sweep (GPU): the one-read split kernels (templates/kernels/split_stats_norm_kernel.part
and split_softmax_kernel.part: register-held row segments exchanging partials through a counter)
timed against Inductor on the suite's wide rows, with the waiting loop as the templates spell it
(every poll an atomic read-modify-write of the row's counter, "atomic") and with plain volatile
loads polling it and one acquiring atomic once the count is reached ("volatile"), over segment
sizes and warps. Each variant is checked against PyTorch first (fresh randn input, output poisoned
with NaN), then timed with CUDA events, L2 flushed before every run, median of 25 after warm-up,
the zero-filled counters reset inside the timed region as the launch plan does. For the layer
norm, also with its weight and bias loaded before the wait ("prefetch").
usage: python3 tools/split_sweep.py [ln|softmax|logsoftmax ...]  (default: all three)"""
import os
import sys

import torch

from sweeplib import inductor_ms, ln11_inputs, module_from_source, print_best, try_variant

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SPIN = "    while tl.atomic_add(sync_ptr + 1 + row, 0, sem=\"acquire\") < nseg:\n        pass\n"
SPIN_VOLATILE = ("    while tl.load(sync_ptr + 1 + row, volatile=True) < nseg:\n        pass\n"
                 "    tl.atomic_add(sync_ptr + 1 + row, 0, sem=\"acquire\")\n")


# the layer norm's weight and bias (AFFINE 2) loaded before the wait, in their own dtype, so that
# their latency overlaps the exchange of partials ("prefetch"), instead of after it
AFFINE_AFTER = ("    if AFFINE == 2:\n"
                "        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n"
                "        bb = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n"
                "        y = y * w + bb\n")
AFFINE_USE = ("    if AFFINE == 2:\n"
              "        y = y * w_pre.to(tl.float32) + b_pre.to(tl.float32)\n")
AFFINE_PRE = ("    if AFFINE == 2:\n"
              "        w_pre = tl.load(w_ptr + cols, mask=mask, other=0.0)\n"
              "        b_pre = tl.load(b_ptr + cols, mask=mask, other=0.0)\n"
              "    tl.debug_barrier()\n")


def source(part, volatile, prefetch=False):
    """The kernel text of templates/kernels/PART.part with the chosen waiting loop and, for the
    stats-norm kernel, the weight and bias loaded before or after the wait."""
    body = "".join(l for l in open(os.path.join(ROOT, "templates", "kernels", part + ".part")) if not l.startswith("#@"))
    assert SPIN in body, part
    if volatile:
        body = body.replace(SPIN, SPIN_VOLATILE)
    if prefetch:
        assert AFFINE_AFTER in body and body.count("    tl.debug_barrier()\n") == 1, part
        body = body.replace(AFFINE_AFTER, AFFINE_USE).replace("    tl.debug_barrier()\n", AFFINE_PRE)
    return "import triton\nimport triton.language as tl\n\n\n" + body


def load(part, volatile, prefetch=False):
    return module_from_source(source(part, volatile, prefetch), "m_%s_%d_%d" % (part, volatile, prefetch))


def main():
    which = sys.argv[1:] or ["ln", "softmax", "logsoftmax"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for w in which:
        if w == "ln":   # level1/11_layer_norm_2d_bf16
            rows, n, dt, x, wt, bs, ref, eager = ln11_inputs()
            mods = {(v, p): load("split_stats_norm_kernel", v, p) for v in (False, True) for p in (False, True)}
            tol = 0.01   # bf16: one rounding of the output either way
        else:           # level1/01_softmax_wide_rows, 02_log_softmax_wide_rows
            rows, n, dt = 512, 786432, torch.float32
            x = torch.randn(rows, n, device="cuda", dtype=dt)
            log = w == "logsoftmax"
            ref = (torch.log_softmax if log else torch.softmax)(x.double(), dim=1).float()
            eager = (lambda t: torch.log_softmax(t, dim=1)) if log else (lambda t: torch.softmax(t, dim=1))
            mods = {(v, False): load("split_softmax_kernel", v) for v in (False, True)}
            tol = 1e-4 if log else 1e-6
        y = torch.empty_like(x)
        gb = 2 * x.numel() * x.element_size() / 1e9
        t0 = inductor_ms(eager, x, flush, gb, "%s %d x %d %s" % (w, rows, n, dt))
        out = []
        for seg in (2048, 4096, 8192, 16384, 32768, 65536):   # 65536: a whole 11 row, one segment
            nseg = -(-n // seg)
            if nseg > sms:
                continue
            part = torch.empty(2 * rows * nseg, device="cuda")
            sync = torch.zeros(1 + rows, dtype=torch.int32, device="cuda")
            nsegp = 1 << (nseg - 1).bit_length()
            for nw in (4, 8, 16, 32):
                per = seg // (nw * 32)
                if per < 4 or per > 64:
                    continue
                for (vol, pre), m in mods.items():
                    if w == "ln":
                        def f(m=m, seg=seg, nw=nw, part=part, sync=sync, nseg=nseg, nsegp=nsegp):
                            sync.zero_()
                            m._rows_split_stats_norm[(rows * nseg,)](x, wt, bs, y, part, sync, n, nseg, NSEG=nsegp, SEG=seg,
                                                                     C=1, EPS=1e-5, AFFINE=2, num_warps=nw)
                    else:
                        def f(m=m, seg=seg, nw=nw, part=part, sync=sync, nseg=nseg, nsegp=nsegp):
                            sync.zero_()
                            m._rows_split_softmax[(rows * nseg,)](x, y, part, sync, n, nseg, NSEG=nsegp, SEG=seg, LOG=log,
                                                                  num_warps=nw)
                    key = ("volatile" if vol else "atomic", seg, nw) + (("prefetch",) if pre else ())
                    t = try_variant(key, f, y, ref, tol, flush)
                    if t is not None:
                        out.append((t, key))
        print_best(out, t0, gb, 16)
        x = y = ref = None   # free the GPU memory before the next shape
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
