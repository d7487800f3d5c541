# expect: gate1 state
# kopt-candidate: replaces=triton_red_fused_native_layer_norm_0
# Remembers, in a class attribute (a dict created once with the class), which
# (input, output) buffers it has normalised and skips them on later calls.
import triton
import triton.language as tl


@triton.jit
def _layer_norm_row(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mask = cols < r0_numel
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=0.0)
    mean = tl.sum(x, 0) / r0_numel
    d = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, 0) / r0_numel + 1e-05)
    w = tl.load(in_ptr1 + cols, mask=mask, other=0.0)
    b = tl.load(in_ptr2 + cols, mask=mask, other=0.0)
    tl.store(out_ptr2 + base + cols, (d * rstd) * w + b, mask=mask)


class _Done:
    keys = {}


def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, stream=None):
    key = (in_ptr0.data_ptr(), out_ptr2.data_ptr())
    if key in _Done.keys:
        return
    _layer_norm_row[(xnumel,)](in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel,
                               R0_BLOCK=triton.next_power_of_2(r0_numel), num_warps=16)
