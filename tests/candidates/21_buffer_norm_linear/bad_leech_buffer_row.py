# expect: gate2 leaves a row whose first output value is already finite: gate 2's random-byte and N(0,1) poisons (since the forty-first session) are finite there, so those rows stay wrong (before, refused at gate 4's re-check: the compiler's intermediate, recycled between timed runs, stale once the buffers rotate)
# kopt-candidate: replaces=triton_red_fused_add_div_linalg_vector_norm_0
# Form P. Issue 11's leech on a kernel that reads only a buffer (thirty-ninth session; the
# kernel name is predicted from 20_weight_norm_linear's, whose graph is the same with a
# parameter). One program holds a whole row in registers (one read, one write); it skips the
# row when the compiler's intermediate already holds a finite first value there. Gates 2 and 3
# poison the whole allocator before each run, so there it always computes; gate 4 poisons only
# outputs, so there the intermediate holds the last run's rows, recycled at the same address --
# right for every run before the thirty-ninth session, when buffers were never rotated.
# Expected: refused at gate 2 since the forty-first session (a finite poison; H100, make
# gpu-test at 8814cd7); before, at gate 4 by the re-check (the buffers rotate before every run).
import triton
import triton.language as tl


@triton.jit
def _row_normalize_once(in_ptr0, out_ptr1, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, R0_BLOCK)
    m = offs < r0_numel
    first = tl.load(out_ptr1 + row * r0_numel)
    if first != first:   # NaN (poisoned): compute
        v = tl.load(in_ptr0 + row * r0_numel + offs, mask=m, other=0.0)
        norm = tl.sqrt_rn(tl.sum(v * v, 0)) + 1e-12
        tl.store(out_ptr1 + row * r0_numel + offs, v / norm, mask=m)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr1", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_row_normalize_once", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr1", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": 32768}, "num_warps": 16}],
}
