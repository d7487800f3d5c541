# expect: pass-or-gate4
# kopt-candidate: replaces=triton_poi_fused_avg_pool2d_0
# Form P. 3x3/stride-2/pad-1 average pooling (count_include_pad) of (16, 64, 256, 256) by output rows:
# each input row is read as two contiguous [128, 2] tiles (columns 2c, 2c+1 and 2c-1, 2c)
# instead of nine stride-2 gathers; divisor as PyTorch computes it.
# Measured on the H200 (kopt verify, 2026-11-30): 0.935x -> refused at gate 4 (8 rows per program: 0.553x).
import triton
import triton.language as tl


@triton.jit
def _avgpool_rows(in_ptr0, out_ptr0, xnumel, H_IN: tl.constexpr, W_IN: tl.constexpr, BR: tl.constexpr):
    H_OUT: tl.constexpr = H_IN // 2
    W_OUT: tl.constexpr = W_IN // 2
    ro = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]        # flat output row
    h = ro % H_OUT
    plane = ro // H_OUT
    c = tl.arange(0, W_OUT)[None, :, None]
    j = tl.arange(0, 2)[None, None, :]
    acc = tl.zeros([BR, W_OUT], tl.float32)
    for dh in tl.static_range(3):
        hi = 2 * h[:, :, None] - 1 + dh
        hm = (hi >= 0) & (hi < H_IN)
        rowp = (plane[:, :, None].to(tl.int64) * H_IN + hi) * W_IN
        a = tl.load(in_ptr0 + rowp + 2 * c + j, mask=hm, other=0.0, eviction_policy="evict_last")
        cb = 2 * c - 1 + j
        b = tl.load(in_ptr0 + rowp + cb, mask=hm & (cb >= 0), other=0.0, eviction_policy="evict_last")
        a0, a1 = tl.split(a)
        b0, b1 = tl.split(b)
        acc += (b0 + a0) + a1
    hs = 2 * h - 1
    ws = 2 * tl.arange(0, W_OUT)[None, :] - 1
    he = tl.minimum(hs + 3, H_IN + 1)
    we = tl.minimum(ws + 3, W_IN + 1)
    div = ((he - hs) * (we - ws)).to(tl.float32)
    tl.store(out_ptr0 + ro.to(tl.int64) * W_OUT + tl.arange(0, W_OUT)[None, :], acc / div)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_avgpool_rows", "grid": ["xnumel // 128 // 4"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"],
                  "constexprs": {"H_IN": 256, "W_IN": 256, "BR": 4}, "num_warps": 4, "num_stages": 1}],
}
