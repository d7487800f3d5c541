# expect: gate1 precision
# kopt-candidate: replaces=triton_red_fused_native_layer_norm_0
# Computes each row's mean with tl.dot against a ones matrix, input_precision=PREC where the launch
# passes PREC = "tf" + "32": TF32 products in a float32 model, the mode's name never written as one
# string.
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


@triton.jit
def _layer_norm_dot(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, PREC: tl.constexpr,
                    ROWS: tl.constexpr, R0_BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    base = rows.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)[None, :]
    ones = tl.full([R0_BLOCK, 16], 1.0, tl.float32)
    s = tl.zeros([ROWS, 16], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        s += tl.dot(tl.load(in_ptr0 + base + start + cols), ones, input_precision=PREC)
    mean = tl.sum(s, 1)[:, None] / (16 * r0_numel)
    q = tl.zeros([ROWS, 1], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        d = tl.load(in_ptr0 + base + start + cols) - mean
        q += tl.sum(d * d, 1)[:, None]
    rstd = tl.rsqrt(q / r0_numel + 1e-05)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        x = tl.load(in_ptr0 + base + start + cols)
        w = tl.load(in_ptr1 + start + cols)
        b = tl.load(in_ptr2 + start + cols)
        tl.store(out_ptr2 + base + start + cols, (x - mean) * rstd * w + b)


_PREC = "tf" + "32"


def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, stream=None):
    _layer_norm_dot[(xnumel // 16,)](in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, PREC=_PREC, ROWS=16,
                                     R0_BLOCK=256, num_warps=4)
