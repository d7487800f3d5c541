# expect: gate1 name
# kopt-candidate: replaces=triton_per_fused_prepare_softmax_online_1
# Keeps the output pointers it has already combined in the compile-cache dict of one of
# Inductor's jit helpers (triton_helpers.max2.cache), an allowed name's public attribute, and
# skips those launches: state across calls, reached through a member's attribute.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _combine_max(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    parts = tl.arange(0, 8)[None, :]
    m = (rows < xnumel) & (parts < r0_numel)
    v = tl.load(in_ptr0 + rows * r0_numel + parts, mask=m, other=float("-inf"))
    tl.store(out_ptr0 + rows, tl.max(v, 1)[:, None], mask=rows < xnumel)


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    seen = triton_helpers.max2.cache.setdefault("kopt_done", [])
    if out_ptr0.data_ptr() in seen:
        return
    seen.append(out_ptr0.data_ptr())
    _combine_max[(triton.cdiv(xnumel, 32),)](in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK=32, num_warps=1)
