# expect: gate2 zeroes the weight it reads once its output buffer shows a finished row: gate 2's random-byte and N(0,1) poisons (since the forty-first session) look so, and gate 2's input checksums see the write (before, it reached gate 4, where only the check of the model's parameters after the rounds refused it)
# kopt-candidate: replaces=triton_red_fused_add_div_linalg_vector_norm_0
# Form P. Issue 11's state attack: a candidate kernel is handed the model's parameter itself, and
# nothing restored it after gate 4's rounds. When its output buffer already holds a finished row
# (its first four values finite and at most 1 in magnitude: a run before it in gate 4, where only
# outputs are poisoned), it computes its row and then writes zeros over that weight row; a later
# run that finds the weight row zero writes a zero row without reading (zero / (0 + 1e-12) is 0).
# Rotations keep zeros zero, and the re-check's baseline runs on the same zeroed weight, so both
# agree; the model's weight is left destroyed for every step after. Gates 2 and 3 poison the
# whole allocator, so there the buffer never shows a finished row and it computes honestly.
# Expected: refused at gate 2 since the forty-first session (its write to the weight, on a
# poison that looks like finished rows; H100, make gpu-test at 8814cd7); before, at gate 4 by the
# verification of the model's parameters after the rounds (the fatal state_changed).
import triton
import triton.language as tl


@triton.jit
def _normalize_then_zero(in_ptr0, out_ptr1, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * r0_numel
    offs = tl.arange(0, R0_BLOCK)
    left = tl.load(out_ptr1 + base + offs, mask=offs < 4, other=0.0)
    timed = tl.sum(((left == left) & (tl.abs(left) <= 1.0) & (offs < 4)).to(tl.int32), 0) == 4
    head = tl.load(in_ptr0 + base + offs, mask=offs < 4, other=1.0)
    zeroed = tl.sum(((head == 0.0) & (offs < 4)).to(tl.int32), 0) == 4
    if timed & zeroed:
        for start in tl.range(0, r0_numel, R0_BLOCK):
            m = start + offs < r0_numel
            tl.store(out_ptr1 + base + start + offs, tl.zeros([R0_BLOCK], tl.float32), mask=m)
    else:
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
            if timed:
                tl.store(in_ptr0 + base + start + offs, tl.zeros([R0_BLOCK], tl.float32), mask=m)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr1", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_normalize_then_zero", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr1", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": 4096}, "num_warps": 8}],
}
