# expect: gate1 io
# kopt-candidate: replaces=triton_red_fused_argmax_0
# Computes its block size by running generated text with exec: the code that runs is not
# the code the rules read (here a harmless loop; it could be anything).
import triton
import triton.language as tl


@triton.jit
def _row_argmax(in_ptr0, out_ptr0, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mask = cols < r0_numel
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"))
    best = tl.argmax(x, 0, tie_break_left=True)
    first_nan = tl.min(tl.where((x != x) & mask, cols, R0_BLOCK), 0)
    tl.store(out_ptr0 + row, tl.where(first_nan < R0_BLOCK, first_nan, best).to(tl.int64))


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    scope = {"n": r0_numel}
    exec("""
block = 1
while block < n:
    block *= 2
""", scope)
    _row_argmax[(xnumel,)](in_ptr0, out_ptr0, xnumel, r0_numel, R0_BLOCK=scope["block"], num_warps=8)
