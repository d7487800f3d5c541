# expect: gate3 eps shaded to a quarter (2.5e-6 for 1e-5): on N(0,1) groups (variance ~1) the outputs move by ~4e-6 of their value, under gate 2's 1e-4; on gate 3's inputs x1e-3 (variance ~1e-6, where eps dominates) rstd is ~1.9x the model's
# kopt-candidate: replaces=triton_red_fused_native_group_norm_0+triton_per_fused_native_group_norm_1+triton_poi_fused_native_group_norm_2
# The region template's kernel as the built-in executor writes it (region_group_norm_seg16384.py),
# with only the eps its launcher passes changed. An attack on session 51's gate-3 rule (the bound
# never below the compiled baseline's own error): where the baseline is already beyond the
# absolute bound (constant rows), this candidate is further off than the baseline, not as far.
# Not yet run on a GPU.
import torch
import triton
import triton.language as tl


@triton.jit
def _group_norm_split(x_ptr, w_ptr, b_ptr, y_ptr, part_ptr, sync_ptr, HW, CPG, G, eps,
                      GSIZE: tl.constexpr, NSEG: tl.constexpr, SEG: tl.constexpr, ONE_CH: tl.constexpr):
    t = tl.atomic_add(sync_ptr, 1)            # ticket: programs 0..t-1 have all started
    grp = t // NSEG                           # n * G + g
    seg = t - grp * NSEG
    offs = seg * SEG + tl.arange(0, SEG)
    base = grp.to(tl.int64) * GSIZE
    x = tl.load(x_ptr + base + offs)
    mean_k = tl.sum(x, 0) / SEG
    d = x - mean_k
    m2_k = tl.sum(d * d, 0)
    tl.store(part_ptr + 2 * t, mean_k)
    tl.store(part_ptr + 2 * t + 1, m2_k)
    tl.debug_barrier()
    tl.atomic_add(sync_ptr + 1 + grp, 1, sem="release")
    while tl.atomic_add(sync_ptr + 1 + grp, 0, sem="acquire") < NSEG:
        pass
    ks = tl.arange(0, NSEG)
    pmean = tl.load(part_ptr + 2 * (grp * NSEG + ks), volatile=True)
    pm2 = tl.load(part_ptr + 2 * (grp * NSEG + ks) + 1, volatile=True)
    mean = tl.sum(pmean, 0) / NSEG
    dm = pmean - mean
    m2 = tl.sum(pm2, 0) + SEG * tl.sum(dm * dm, 0)
    rstd = tl.rsqrt(m2 / GSIZE + eps)
    if ONE_CH:
        c = (grp % G) * CPG + (seg * SEG) // HW
    else:
        c = (grp % G) * CPG + offs // HW
    w = tl.load(w_ptr + c)
    b = tl.load(b_ptr + c)
    y = (x - mean) * rstd * w + b
    tl.store(y_ptr + base + offs, y)


def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr0, stream=None):
    nb, ch = in_ptr0.shape[0], in_ptr0.shape[1]
    hw = in_ptr0.numel() // (nb * ch)
    cpg = 524288 // hw
    groups = ch // cpg
    nseg = 524288 // 16384
    if nseg > torch.cuda.get_device_properties(in_ptr0.device).multi_processor_count:
        raise ValueError("a group's %d programs must all fit on the GPU at once" % nseg)
    part = torch.empty(2 * nb * groups * nseg, device=in_ptr0.device, dtype=torch.float32)
    sync = torch.zeros(1 + nb * groups, device=in_ptr0.device, dtype=torch.int32)
    _group_norm_split[(nb * groups * nseg,)](in_ptr0, in_ptr1, in_ptr2, out_ptr0, part, sync, hw, cpg, groups,
                                            2.5e-06, GSIZE=524288, NSEG=nseg, SEG=16384, ONE_CH=hw % 16384 == 0,
                                            num_warps=16)
