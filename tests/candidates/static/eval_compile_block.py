# expect: gate1 io
# kopt-candidate: replaces=triton_red_fused_cumsum_0
# Reads its chunk size from an expression compiled and evaluated at run time (compile + eval):
# arbitrary code in a string, invisible to the rules.
import triton
import triton.language as tl


@triton.jit
def _row_cumsum(in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, CHUNK)
    carry = tl.zeros([], dtype=tl.float32)
    for off in tl.range(0, r0_numel, CHUNK):
        mask = off + cols < r0_numel
        x = tl.load(in_ptr0 + base + off + cols, mask=mask, other=0.0)
        tl.store(out_ptr0 + base + off + cols, tl.cumsum(x, 0) + carry, mask=mask)
        carry += tl.sum(x, 0)


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    chunk = eval(compile("1 << 12", "<tuning>", "eval"))
    _row_cumsum[(xnumel,)](in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK=chunk, num_warps=8)
