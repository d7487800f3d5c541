# expect: gate2 swapped grid axes: the kernel reads the plane from axis 1 (32 long) and the row block from axis 0, so only planes 0-31 of 1024 are written; the rest stay NaN-poisoned
# kopt-candidate: replaces=triton_poi_fused_avg_pool2d_0
# Average pooling by tiles of 4 output rows of one plane, on a 2-D grid (planes, row blocks),
# while the kernel takes the row block from program_id(0) and the plane from program_id(1):
# KernelBench's wrong grid. The row mask keeps it in bounds; 992 of the 1024 planes are never
# written. Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _avgpool_tiles(in_ptr0, out_ptr0, xnumel, H_IN: tl.constexpr, W_IN: tl.constexpr, BR: tl.constexpr):
    H_OUT: tl.constexpr = H_IN // 2
    W_OUT: tl.constexpr = W_IN // 2
    oh = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]      # BUG: axis 0 is the plane
    plane = tl.program_id(1).to(tl.int64)                       # BUG: axis 1 is the row block
    ow = tl.arange(0, W_OUT)[None, :]
    rows_ok = oh < H_OUT
    acc = tl.zeros([BR, W_OUT], tl.float32)
    for dh in tl.static_range(3):
        for dw in tl.static_range(3):
            h = 2 * oh - 1 + dh
            w = 2 * ow - 1 + dw
            ok = rows_ok & (h >= 0) & (h < H_IN) & (w >= 0) & (w < W_IN)
            acc += tl.load(in_ptr0 + (plane * H_IN + h) * W_IN + w, mask=ok, other=0.0)
    tl.store(out_ptr0 + (plane * H_OUT + oh) * W_OUT + ow, acc / 9.0, mask=rows_ok)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    planes = xnumel // (128 * 128)
    _avgpool_tiles[(planes, 128 // 4)](in_ptr0, out_ptr0, xnumel, H_IN=256, W_IN=256, BR=4, num_warps=4)
