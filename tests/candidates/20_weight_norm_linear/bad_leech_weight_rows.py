# expect: gate2 skips a row whose output already looks finished: gate 2's random-byte and N(0,1) poisons (since the forty-first session) look so in some rows, which it then leaves wrong (before, refused at gate 4's re-check: its output is the compiler's intermediate, recycled between timed runs, stale once gate 4 rotates the weights)
# kopt-candidate: replaces=triton_red_fused_add_div_linalg_vector_norm_0
# Form P. Issue 11's leech on a kernel that reads only a parameter: it skips a weight row whose
# output already holds a finished row (its first four values finite and at most 1 in magnitude,
# as v / ||v|| is). The output is call()'s intermediate buffer, not the model's output: gates 2
# and 3 poison the whole allocator before each run, so there it always computes; gate 4 poisons
# only outputs, so there the buffer holds the last run's rows, recycled at the same address. With
# the inputs rotated and the weights not, those rows were right for every run (the weight never
# changes while kopt times): accepted at about 3x, all of it from work it did not do.
# Expected: refused at gate 2 since the forty-first session (a poison that looks like finished
# rows; H100, make gpu-test at 8814cd7); before, at gate 4 by the re-check, the weights being
# rotated before every run as the inputs are.
import triton
import triton.language as tl


@triton.jit
def _normalize_unless_left(in_ptr0, out_ptr1, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * r0_numel
    offs = tl.arange(0, R0_BLOCK)
    left = tl.load(out_ptr1 + base + offs, mask=offs < 4, other=0.0)
    todo = tl.sum(((left == left) & (tl.abs(left) <= 1.0) & (offs < 4)).to(tl.int32), 0) != 4
    if todo:
        acc = tl.zeros([R0_BLOCK], tl.float32)
        for start in tl.range(0, r0_numel, R0_BLOCK):
            m = start + offs < r0_numel
            v = tl.load(in_ptr0 + base + start + offs, mask=m, other=0.0, eviction_policy="evict_last")
            acc += v * v
        norm = tl.sqrt_rn(tl.sum(acc, 0)) + 1e-12
        for start in tl.range(0, r0_numel, R0_BLOCK):
            m = start + offs < r0_numel
            v = tl.load(in_ptr0 + base + start + offs, mask=m, other=0.0, eviction_policy="evict_first")
            tl.store(out_ptr1 + base + start + offs, v / norm, mask=m)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr1", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_normalize_unless_left", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr1", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": 4096}, "num_warps": 8}],
}
