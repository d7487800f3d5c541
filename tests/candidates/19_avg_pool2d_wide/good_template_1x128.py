# expect: pass-or-gate4
# kopt-candidate: replaces=torch.ops.aten.avg_pool2d.default
# Form P, replacing ATen's avg_pool2d library call (a vendor region): kopt's region_avg_pool
# template in its 2-D form as the built-in executor renders it for this problem (1 x 128
# outputs per program, two warps).
import triton
import triton.language as tl


@triton.jit
def _avg_pool(x_ptr, y_ptr, D, H, W, OD, OH, OW, NBH, NBW,
              KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr, SD: tl.constexpr, SH: tl.constexpr,
              SW: tl.constexpr, PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr, COUNT_PAD: tl.constexpr,
              DIVISOR: tl.constexpr, BH: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    bw = pid % NBW
    t = pid // NBW
    bh = t % NBH
    t = t // NBH
    od = t % OD
    plane = t // OD
    oh = bh * BH + tl.arange(0, BH)[:, None]
    ow = bw * BW + tl.arange(0, BW)[None, :]
    omask = (oh < OH) & (ow < OW)
    d0 = od * SD - PD
    h0 = oh * SH - PH
    w0 = ow * SW - PW
    base = x_ptr + plane.to(tl.int64) * D * H * W
    acc = tl.zeros([BH, BW], dtype=tl.float32)
    for kd in tl.static_range(KD):
        d = d0 + kd
        dok = (d >= 0) & (d < D)
        for kh in tl.static_range(KH):
            h = h0 + kh
            hok = dok & (h >= 0) & (h < H)
            for kw in tl.static_range(KW):
                w = w0 + kw
                m = omask & hok & (w >= 0) & (w < W)
                acc += tl.load(base + (d * H + h) * W + w, mask=m, other=0.0).to(tl.float32)
    if DIVISOR > 0:
        acc = acc / DIVISOR
    else:
        de = tl.minimum(d0 + KD, D + PD)
        he = tl.minimum(h0 + KH, H + PH)
        we = tl.minimum(w0 + KW, W + PW)
        if COUNT_PAD:
            cnt = (de - d0) * (he - h0) * (we - w0)
        else:
            cnt = ((tl.minimum(de, D) - tl.maximum(d0, 0)) * (tl.minimum(he, H) - tl.maximum(h0, 0)) *
                   (tl.minimum(we, W) - tl.maximum(w0, 0)))
        acc = acc / cnt.to(tl.float32)
    yoff = ((plane.to(tl.int64) * OD + od) * OH + oh) * OW + ow
    tl.store(y_ptr + yoff, acc.to(y_ptr.dtype.element_ty), mask=omask)


# Both tensors contiguous, the output's size the pooling's (no ceil_mode): anything else raises
# before a launch.
KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0"],
    "let": {"W": "shape(in_ptr0, -1)", "H": "shape(in_ptr0, -2)", "OW": "shape(out_ptr0, -1)",
            "OH": "shape(out_ptr0, -2)", "planes": "numel(out_ptr0) // (OH * OW)", "nbh": "cdiv(OH, 1)",
            "nbw": "cdiv(OW, 128)", "D": 1, "OD": 1},
    "checks": ["stride(in_ptr0, -1) == 1", "stride(in_ptr0, -2) == W", "stride(in_ptr0, -3) == H * W",
               "stride(in_ptr0, -4) == shape(in_ptr0, -3) * H * W",
               "stride(out_ptr0, -1) == 1", "stride(out_ptr0, -2) == OW", "stride(out_ptr0, -3) == OH * OW",
               "stride(out_ptr0, -4) == shape(out_ptr0, -3) * OH * OW",
               "numel(in_ptr0) == planes * H * W", "shape(in_ptr0, -3) == shape(out_ptr0, -3)",
               "OH == (H + 2 * 3 - 7) // 2 + 1", "OW == (W + 2 * 3 - 7) // 2 + 1"],
    "launches": [{"kernel": "_avg_pool", "grid": ["planes * OD * nbh * nbw"],
                  "args": ["in_ptr0", "out_ptr0", "D", "H", "W", "OD", "OH", "OW", "nbh", "nbw"],
                  "constexprs": {"KD": 1, "KH": 7, "KW": 7, "SD": 1, "SH": 2, "SW": 2,
                                 "PD": 0, "PH": 3, "PW": 3, "COUNT_PAD": True,
                                 "DIVISOR": 0, "BH": 1, "BW": 128},
                  "num_warps": 2}],
}
