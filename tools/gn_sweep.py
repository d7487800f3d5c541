"""Developer sweep (GPU): where region_group_norm's time goes on a group whose length is not a
multiple of the segment (hz09: Conv1d output (64, 256, 8190), 8 groups, the convolution's bias
before and GELU after), against Inductor's two kernels and against hz02's whole-channel segments.
Variants of templates/kernels/region_group_norm.py.tmpl's kernel: as shipped (NCH as the plan
computes it: per-channel values selected at the channel boundaries a segment meets); without the
activation; without the bias (timing only); the per-element gather (NCH 5: an integer division and
a gather of each per-channel value, what the template did before session 49); one channel forced
(NCH 1, timing only: wrong where a segment straddles two channels).
Each checked variant is compared with float64 PyTorch first (fresh randn input, output poisoned
with NaN), then timed with CUDA events, L2 flushed before every run, median of 25 after warm-up;
the zero-filled ticket counters are reset inside the timed region, as the plan does.
usage: python3 tools/gn_sweep.py"""

import torch
import torch.nn.functional as F

from sweeplib import print_best, template_module, timeit, try_variant


def load():
    """The kernels without a lifted _post (POST off: the activation is the template's own)."""
    return template_module("region_group_norm", {"POST": False})


def main():
    mod = load()
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for name, nb, ch, hw, g, bias, act in (("hz09", 64, 256, 8190, 8, True, 1), ("hz02", 128, 256, 8192, 16, False, 0)):
        x = torch.randn(nb, ch, hw, device="cuda")
        cb = torch.randn(ch, device="cuda") if bias else None
        w, b = torch.rand(ch, device="cuda") + 0.5, torch.randn(ch, device="cuda")

        def model(t):
            y = F.group_norm(t + cb[:, None] if bias else t, g, w, b)
            return F.gelu(y) if act == 1 else y
        xd = x.double()
        yd = F.group_norm(xd + cb.double()[:, None] if bias else xd, g, w.double(), b.double())
        ref = (F.gelu(yd) if act == 1 else yd).float()
        comp = torch.compile(model, dynamic=False)
        comp(x)
        gb = 2 * x.numel() * 4 / 1e9
        t0 = timeit(lambda: comp(x), flush)
        print("%s (%d, %d, %d) G=%d bias=%s act=%d: inductor %.3f ms (%.0f GB/s)"
              % (name, nb, ch, hw, g, bias, act, t0, gb / t0 * 1e3), flush=True)
        cpg = ch // g
        gsize = cpg * hw
        y = torch.empty_like(x)
        out = []
        for seg in (4096, 8192, 16384):
            nseg = -(-gsize // seg)
            if nseg > torch.cuda.get_device_properties(0).multi_processor_count:
                continue
            p2 = 1 << (nseg - 1).bit_length()
            part = torch.empty(2 * nb * g * nseg, device="cuda")
            sync = torch.zeros(1 + nb * g, dtype=torch.int32, device="cuda")
            nch = 1 + min(1, hw % seg) * min(4, (seg - 1) // hw + 1)   # as the plan computes it
            for nw in (4, 8, 16):
                for tag, pb, ac, n, checked in (("as shipped", bias, act, nch, True),
                                                ("no act", bias, 0, nch, False),
                                                ("no bias, no act", False, 0, nch, False),
                                                ("gather (NCH 5)", bias, act, 5, True),
                                                ("one channel forced", bias, act, 1, False)):
                    if n == nch and tag.startswith(("gather", "one")):
                        continue

                    def f(pb=pb, ac=ac, n=n, nw=nw, seg=seg, nseg=nseg, p2=p2, part=part, sync=sync):
                        sync.zero_()
                        mod._group_norm_split[(nb * g * nseg,)](
                            x, cb if bias else x, w, b, y, part, sync, hw, cpg, g, 1e-5, GSIZE=gsize, NSEG=nseg,
                            NSEG_P2=p2, SEG=seg, NCH=n, PRE_BIAS=pb, ACT=ac, num_warps=nw)
                    key = "%s seg %d w%d" % (tag, seg, nw)
                    if checked:
                        t = try_variant(key, f, y, ref, 1e-4, flush)
                    else:
                        f()
                        torch.cuda.synchronize()
                        t = timeit(f, flush)
                    if t is not None:
                        out.append((t, key))
                        print("  %-34s %.3f ms  %.3fx inductor" % (key, t, t0 / t), flush=True)
        print_best(out, t0, gb, 6)
        x = y = ref = yd = xd = None
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
