# expect: gate4:recheck its statistics buffers are the compiler's intermediates, recycled between runs and never poisoned: in the timed rounds it skips reading the 256 MB input and returns what an earlier run left there, stale on gate 4's inputs rotated before every run
# kopt-candidate: replaces=triton_red_fused_native_group_norm_0
# Form P. Issue 11's "leech" attack on gate 4: the group-norm statistics' first kernel (mean, m2
# and count of each of the 5 segments of a 524288-element group) skips its work when its three
# output buffers already hold a segment's statistics -- the count it would write and a finite
# mean and m2. Those buffers are call()'s intermediates (buf0..buf2), not the model's outputs:
# gates 2 and 3 poison the whole allocator before each run, so there it always computes
# (Welford, right on gate 3's offset inputs too); gate 4 poisons only outputs between timed runs,
# so there the buffers hold the last run's statistics -- the candidate's own, or the baseline's,
# recycled at the same addresses. It reads 3 floats per program instead of 2 MB: about 1.5x on
# the model, all of it from results it did not compute. Were the inputs the same for two runs in
# a row, it would be right whenever it ran after the baseline (the baseline's statistics for the
# same contents).
# Expected: refused at gate 4 by the re-check: the inputs are rotated before every timed run, so
# what it finds was made for other contents.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _stats_unless_left(in_ptr0, out_ptr0, out_ptr1, out_ptr2, xnumel, r0_numel, GROUP: tl.constexpr,
                       R0_BLOCK: tl.constexpr):
    x = tl.program_id(0)
    part = x % 5
    grp = (x // 5).to(tl.int64)
    want = tl.minimum(r0_numel, GROUP - part * r0_numel).to(tl.float32)
    left_mean = tl.load(out_ptr0 + x)
    left_m2 = tl.load(out_ptr1 + x)
    left_w = tl.load(out_ptr2 + x)
    todo = (left_w != want) | (left_mean != left_mean) | (left_m2 != left_m2) | (left_m2 < 0.0)
    if todo:
        offs = tl.arange(0, R0_BLOCK)
        mean = tl.zeros([R0_BLOCK], tl.float32)
        m2 = tl.zeros([R0_BLOCK], tl.float32)
        w = tl.zeros([R0_BLOCK], tl.float32)
        for start in tl.range(0, r0_numel, R0_BLOCK):
            col = part * r0_numel + start + offs
            m = (start + offs < r0_numel) & (col < GROUP)
            v = tl.load(in_ptr0 + grp * GROUP + col, mask=m, other=0.0, eviction_policy="evict_first")
            mean_n, m2_n, w_n = triton_helpers.welford_combine(mean, m2, w, v, tl.zeros([R0_BLOCK], tl.float32),
                                                               tl.full([R0_BLOCK], 1.0, tl.float32))
            mean = tl.where(m, mean_n, mean)
            m2 = tl.where(m, m2_n, m2)
            w = tl.where(m, w_n, w)
        r_mean, r_m2, r_w = triton_helpers.welford(mean, m2, w, 0)
        tl.store(out_ptr0 + x, r_mean)
        tl.store(out_ptr1 + x, r_m2)
        tl.store(out_ptr2 + x, r_w)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "out_ptr1", "out_ptr2", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_stats_unless_left", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr0", "out_ptr1", "out_ptr2", "xnumel", "r0_numel"],
                  "constexprs": {"GROUP": 524288, "R0_BLOCK": 4096}, "num_warps": 8}],
}
