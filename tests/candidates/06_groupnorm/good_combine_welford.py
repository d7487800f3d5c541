# expect: pass-or-gate4
# kopt-candidate: replaces=triton_per_fused_native_group_norm_1
# Form P. Honest control for bad_combine_drops_between_term.py: the 5 segment statistics of each group
# combined with Inductor's own Welford combine (triton_helpers.welford over the segments, the
# 3 padding lanes with weight 0), 32 groups per program. Not yet run on the H200.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _combine_welford(in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK: tl.constexpr,
                     PARTS: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    parts = tl.arange(0, PARTS)[None, :]
    m = (rows < xnumel) & (parts < r0_numel)
    mean = tl.load(in_ptr0 + rows * r0_numel + parts, mask=m, other=0.0)
    m2 = tl.load(in_ptr1 + rows * r0_numel + parts, mask=m, other=0.0)
    w = tl.load(in_ptr2 + rows * r0_numel + parts, mask=m, other=0.0)
    r_mean, r_m2, r_w = triton_helpers.welford(mean, m2, w, 1)
    tl.store(out_ptr0 + rows, r_mean[:, None], mask=rows < xnumel)
    tl.store(out_ptr1 + rows, r_m2[:, None], mask=rows < xnumel)


KOPT_PLAN = {
    "params": ["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr0", "out_ptr1", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_combine_welford", "grid": ["cdiv(xnumel, 32)"],
                  "args": ["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr0", "out_ptr1", "xnumel", "r0_numel"],
                  "constexprs": {"XBLOCK": 32, "PARTS": 8}, "num_warps": 1}],
}
