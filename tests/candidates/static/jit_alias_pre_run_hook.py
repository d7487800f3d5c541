# expect: gate1 name
# kopt-candidate: replaces=triton_poi_fused_avg_pool2d_0
# Takes its @triton.jit function under another name and registers a pre-run hook on it (Triton
# calls it before every launch of the kernel, from then on): the runtime object's attributes,
# which the rules refuse on the kernel's own name, reached through an alias.
import triton
import triton.language as tl


@triton.jit
def _avgpool(in_ptr0, out_ptr0, xnumel, H_IN: tl.constexpr, W_IN: tl.constexpr, XBLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    ow = offs % (W_IN // 2)
    oh = (offs // (W_IN // 2)) % (H_IN // 2)
    plane = offs // ((W_IN // 2) * (H_IN // 2))
    acc = tl.zeros([XBLOCK], tl.float32)
    for dh in tl.static_range(3):
        for dw in tl.static_range(3):
            h = 2 * oh - 1 + dh
            w = 2 * ow - 1 + dw
            ok = (h >= 0) & (h < H_IN) & (w >= 0) & (w < W_IN)
            acc += tl.load(in_ptr0 + (plane * H_IN + h) * W_IN + w, mask=ok, other=0.0)
    tl.store(out_ptr0 + offs, acc / 9.0)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    kern = _avgpool
    kern.add_pre_run_hook(lambda *args, **kwargs: None)
    _avgpool[(xnumel // 1024,)](in_ptr0, out_ptr0, xnumel, H_IN=256, W_IN=256, XBLOCK=1024, num_warps=4)
