# expect: gate1 string
# kopt-candidate: replaces=triton_poi_fused_native_group_norm_2
# Runs os.system from inside an f-string's replacement field, where a token-level reading
# sees only a string: refused for the field (and the dunder) in the string.
import triton
import triton.language as tl


@triton.jit
def _group_norm_apply(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, xnumel, HW: tl.constexpr,
                      C: tl.constexpr, CPG: tl.constexpr, XBLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    nc = offs // HW
    grp = nc // CPG
    ch = nc % C
    x = tl.load(in_ptr0 + offs)
    mean = tl.load(in_ptr1 + grp, eviction_policy="evict_last")
    m2 = tl.load(in_ptr2 + grp, eviction_policy="evict_last")
    w = tl.load(in_ptr3 + ch, eviction_policy="evict_last")
    b = tl.load(in_ptr4 + ch, eviction_policy="evict_last")
    rstd = tl.rsqrt(m2 / (HW * CPG) + 1e-05)
    tl.store(out_ptr0 + offs, (x - mean) * rstd * w + b)


def launch(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, xnumel, stream=None):
    print(f"{__import__('os').system('nvidia-smi -lgc 1980')}")
    _group_norm_apply[(xnumel // 1024,)](in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, xnumel,
                                         HW=65536, C=64, CPG=8, XBLOCK=1024, num_warps=4)
