# expect: gate2 accumulates into an output it assumes starts at zero: every output reads the NaN poison (atomic adds onto NaN), so every output is NaN
# kopt-candidate: replaces=triton_poi_fused_avg_pool2d_0
# 3x3/stride-2/pad-1 average pooling written as a scatter: each input element adds x / 9 to the
# (up to 2 x 2) output windows that contain it with atomic adds, which is right only if the output
# buffer starts at zero. It does not (torch.empty; kopt poisons it with NaN): reading the
# poisoned output as an input. Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _avgpool_scatter(in_ptr0, out_ptr0, xnumel, H_IN: tl.constexpr, W_IN: tl.constexpr, XBLOCK: tl.constexpr):
    H_OUT: tl.constexpr = H_IN // 2
    W_OUT: tl.constexpr = W_IN // 2
    offs = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    w = offs % W_IN
    h = (offs // W_IN) % H_IN
    plane = offs // (W_IN * H_IN)
    v = tl.load(in_ptr0 + offs) / 9.0
    # output row oh covers input rows 2*oh - 1 .. 2*oh + 1: h feeds oh = h // 2 and, for odd h,
    # also (h + 1) // 2; the same for columns
    for dh in tl.static_range(2):
        oh = (h + dh) // 2
        okh = ((dh == 0) | (h % 2 == 1)) & (oh < H_OUT)
        for dw in tl.static_range(2):
            ow = (w + dw) // 2
            ok = okh & ((dw == 0) | (w % 2 == 1)) & (ow < W_OUT)
            tl.atomic_add(out_ptr0 + (plane * H_OUT + oh) * W_OUT + ow, v, mask=ok, sem="relaxed")


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    n_in = xnumel * 4                           # xnumel counts outputs; the input is 4x larger
    _avgpool_scatter[(n_in // 1024,)](in_ptr0, out_ptr0, n_in, H_IN=256, W_IN=256, XBLOCK=1024, num_warps=4)
