"""The group norm region template (templates/kernels/region_group_norm.py.tmpl) run by Triton's
interpreter on the CPU against float64 PyTorch: GroupNorm with weight and bias over (N, C, L) and
(N, C, H, W), alone or with a convolution's per-channel bias added before it and a GELU (erf form)
or ReLU after it; groups a power of two long and groups the segment does not divide (the segment's
tail masked), a segment inside one channel (NCH 1) or across several (NCH 2-4: per-channel values
selected at the boundaries; 5: gathered); fp32, and fp16/bf16
computed in fp32 and stored in their own type. The interpreter runs programs one after another and
a group's programs wait for each other, so each group here is one segment (its ticket, masking,
count-weighted statistics, bias, activation and plan); the GPU covers several segments a group.
The per-channel lookup (_per_channel) is also run alone on every segment of groups that several
segments cut, for each NCH, against the channel each element is in.
Mutants (the bias left out, the GELU as ReLU, another _post, a boundary off by one) must fail (the
check can). ACT 3 (Inductor's own lines after the affine transform as _post) runs SiLU + tanh,
GELU's tanh form and HardSwish then a scale.

usage: TRITON_INTERPRET=1 PY tests/interp/test_group_norm_interp.py (`make interp-check`); exit 0
when every case is within 1e-4 of float64 (16-bit outputs: plus half a unit of the last place for
fp16, a whole one for bf16, which the interpreter truncates), 1 otherwise; skipped (exit 0, one
line) when triton does not import. Rendering: tests/interp/interp_util.py's mirror of template.c;
run as the text kopt judges for it (its plan lowered to kopt's launcher; KOPT=... names the binary).
"""
import importlib.util
import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from interp_util import ROOT, group_norm_ptrs, load_judged, render  # noqa: E402
from test_aligned_interp import inductor_stand_ins  # noqa: E402

TEMPLATE = os.path.join(ROOT, "templates", "kernels", "region_group_norm.py.tmpl")
EPS = 1e-5


def reference(x, cb, w, b, groups, act):
    """GroupNorm in float64 of x (+ the per-channel bias cb), then the activation (a POSTS key: its
    function)."""
    shape = [1, -1] + [1] * (x.dim() - 2)
    y = x.double() + (cb.double().view(shape) if cb is not None else 0)
    y = F.group_norm(y, groups, w.double(), b.double(), EPS)
    if act == 1:
        y = F.gelu(y)
    elif act == 2:
        y = torch.relu(y)
    elif isinstance(act, str):
        y = POSTS[act][1](y)
    return y


def run(mod, shape, groups, pre_bias, act, dt, want_act=None, want_bias=None, in_place=False):
    """The candidate's output for random inputs against float64: the worst error over its tolerance.
    want_act / want_bias: the reference's (a mutant's differs from what it was rendered with).
    in_place: the result written over the input (the launch's last argument is the input)."""
    c = shape[1]
    x = (torch.randn(*shape) * 2 + 0.5).to(dt)
    cb, w, b = (torch.randn(c) * 0.5).to(dt), (torch.rand(c) + 0.5).to(dt), (torch.randn(c) * 0.3).to(dt)
    x0 = x.clone()
    out = x if in_place else torch.full(shape, float("nan"), dtype=dt)
    mod.launch(*([cb, w, b, x] if in_place else [x, cb, w, b, out] if pre_bias else [x, w, b, out]))
    x = x0
    ref = reference(x, cb if (pre_bias if want_bias is None else want_bias) else None, w, b, groups,
                    act if want_act is None else want_act)
    ulps = {torch.float32: 0.0, torch.float16: 0.5, torch.bfloat16: 1.0}[dt]
    tol = 1e-4 + ulps * torch.finfo(dt).eps * ref.abs()
    return ((out.double() - ref).abs() / tol).max().item()


# ACT 3: Inductor's own lines after the affine transform, lifted by kopt into _post(t) (as
# builtin_region.c places it): SiLU then tanh, and GELU's tanh form, as Inductor writes them
POSTS = {
    "silu_tanh": ("    tmp16 = tl.sigmoid(t)\n    tmp17 = t * tmp16\n    tmp23 = libdevice.tanh(tmp17)\n"
                  "    return tmp23\n", lambda y: torch.tanh(F.silu(y))),
    "gelu_tanh": ("    tmp16 = tl.full([1], 0.5, tl.float32)\n    tmp17 = t * tmp16\n    tmp18 = t * t\n"
                  "    tmp19 = tmp18 * t\n    tmp20 = tl.full([1], 0.044715, tl.float32)\n"
                  "    tmp21 = tmp19 * tmp20\n    tmp22 = t + tmp21\n"
                  "    tmp23 = tl.full([1], 0.7978845608028654, tl.float32)\n    tmp24 = tmp22 * tmp23\n"
                  "    tmp25 = libdevice.tanh(tmp24)\n    tmp26 = tl.full([1], 1.0, tl.float32)\n"
                  "    tmp27 = tmp25 + tmp26\n    tmp28 = tmp17 * tmp27\n    return tmp28\n",
                  lambda y: F.gelu(y, approximate="tanh")),
    # a 16-bit model's lines: the affine result widened first (a no-op on fp32), then SiLU
    "widened_silu": ("    tmp32 = t.to(tl.float32)\n    tmp33 = tl.sigmoid(tmp32)\n    tmp34 = tmp32 * tmp33\n"
                     "    return tmp34\n", F.silu),
    "tanh": ("    tmp16 = libdevice.tanh(t)\n    return tmp16\n", torch.tanh),   # held-out hv02's, in place
    "hardswish_half": ("    tmp16 = 3.0\n    tmp17 = t + tmp16\n    tmp18 = 0.0\n"
                       "    tmp19 = triton_helpers.maximum(tmp17, tmp18)\n    tmp20 = 6.0\n"
                       "    tmp21 = triton_helpers.minimum(tmp19, tmp20)\n    tmp22 = t * tmp21\n"
                       "    tmp24 = 0.16666666666666666\n    tmp25 = tmp22 * tmp24\n    tmp26 = 0.5\n"
                       "    tmp23 = tmp25 * tmp26\n    return tmp23\n", lambda y: F.hardswish(y) * 0.5),
}


def source(gsize, seg, pre_bias, act, post=None, in_place=False):
    text = render(open(TEMPLATE).read(), dict(GSIZE=gsize, EPS=EPS, SEG=seg, NSEG=1, NSEG_P2=1, NUM_WARPS=4,
                                              PRE_BIAS=pre_bias, ACT=act, POST=act == 3, **group_norm_ptrs(pre_bias, in_place)))
    if act == 3:
        at = text.index("@triton.jit\ndef _group_norm_split(")
        text = text[:at] + "@triton.jit\ndef _post(t):\n" + POSTS[post][0] + "\n\n" + text[at:]
    return text


PROBE = """

@triton.jit
def _probe(ptr, out, HW, CPG, GSIZE: tl.constexpr, SEG: tl.constexpr, NCH: tl.constexpr):
    seg = tl.program_id(0)
    offs = seg * SEG + tl.arange(0, SEG)
    v = _per_channel(ptr, 0, (seg * SEG) // HW, offs, HW, CPG, GSIZE, SEG, NCH)
    tl.store(out + offs, v + tl.zeros([SEG], tl.float32), mask=offs < GSIZE)
"""


def per_channel_cases(tmp, mutate=False):
    """_per_channel on every segment of one group of cpg channels of hw elements: each element must
    get its channel's value. NCH as the plan computes it (1 + min(1, hw % SEG) * min(4, (SEG - 1)
    // hw + 1)). mutate: the boundary compare off by one (>= becomes >), which must fail."""
    text = render(open(TEMPLATE).read(), dict(GSIZE=1, EPS=EPS, SEG=1, NSEG=1, NSEG_P2=1, NUM_WARPS=4,
                                              PRE_BIAS=False, ACT=0, POST=False, **group_norm_ptrs(False))).split("KOPT_PLAN")[0]
    if mutate:
        assert "offs >= (cf + k) * HW" in text
        text = text.replace("offs >= (cf + k) * HW", "offs > (cf + k) * HW")
    path = os.path.join(tmp, "gn_probe%s.py" % ("_mut" if mutate else ""))
    with open(path, "w") as f:
        f.write(text + PROBE)
    spec = importlib.util.spec_from_file_location("gn_probe%s" % ("_mut" if mutate else ""), path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    worst = []
    for hw, cpg, seg in ((50, 4, 32), (50, 4, 64), (30, 5, 64), (8190, 3, 4096), (10, 8, 64), (64, 4, 32)):
        gsize = hw * cpg
        nch = 1 + min(1, hw % seg) * min(4, (seg - 1) // hw + 1)
        vals = torch.randn(cpg)
        out = torch.full((gsize,), float("nan"))
        m._probe[(-(-gsize // seg),)](vals, out, hw, cpg, GSIZE=gsize, SEG=seg, NCH=nch)
        want = vals.repeat_interleave(hw)
        worst.append((hw, cpg, seg, nch, bool(torch.equal(out, want))))
    return worst


def main():
    # _post's imports (torch._inductor's triton_helpers and its libdevice) in a torch without
    # Inductor: the stand-ins; the interpreter runs no libdevice call (CUDA's library), so tanh
    # stands in as 2 sigmoid(2x) - 1 (within 1e-7 of it; the sm_90 compile test has the real one)
    inductor_stand_ins()
    th = sys.modules["torch._inductor.runtime.triton_helpers"]
    import triton.language as tl
    if getattr(th, "libdevice", None) is tl:
        th.libdevice = types.SimpleNamespace(tanh=lambda v: 2.0 * tl.sigmoid(2.0 * v) - 1.0, erf=tl.erf,
                                             rsqrt=tl.rsqrt, exp=tl.exp)
    if not hasattr(th, "maximum"):   # Inductor's clamps (NaN-propagating; randn inputs here have none)
        th.maximum = lambda a, b: tl.maximum(a, b)   # looked up when called: the interpreter's patched tl
        th.minimum = lambda a, b: tl.minimum(a, b)
    # the interpreter has no GPU to ask for its SM count (sm_count() in the plan's checks)
    torch.cuda.get_device_properties = lambda d: types.SimpleNamespace(multi_processor_count=132)
    f32, f16, b16 = torch.float32, torch.float16, torch.bfloat16
    # (shape, groups, SEG >= the group's size): groups of 4 x 50 = 200 in 256 (masked tail), 4 x 64 =
    # 256 exactly, 2 x 3 x 5 = 30 in 32 (4-D, masked), one channel of 16 x 16 = 256 (ONE_CH)
    shapes = [((2, 8, 50), 2, 256), ((2, 8, 64), 2, 256), ((3, 4, 3, 5), 2, 32), ((2, 4, 16, 16), 4, 256)]
    cases = [(s, g, seg, pb, act, f32) for s, g, seg in shapes for pb in (False, True) for act in (0, 1, 2)]
    cases += [(s, g, seg, True, act, dt) for s, g, seg in shapes[:2] for act in (1, 2) for dt in (f16, b16)]
    bad = 0
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        for n, (shape, groups, seg, pb, act, dt) in enumerate(cases):
            gsize = shape[1] // groups
            for d in shape[2:]:
                gsize *= d
            mod = load_judged(source(gsize, seg, pb, act), "gn_%d" % n, tmp)
            err = run(mod, shape, groups, pb, act, dt)
            ok = err <= 1
            bad += not ok
            print("%s shape=%s groups=%d seg=%d bias_before=%s act=%d %s max_err/tol=%.3g"
                  % ("ok  " if ok else "FAIL", shape, groups, seg, pb, act, str(dt)[6:], err))
        for hw, cpg, seg, nch, same in per_channel_cases(tmp):
            bad += not same
            print("%s per-channel values: %d channels of %d, segments of %d, NCH %d"
                  % ("ok  " if same else "FAIL", cpg, hw, seg, nch))
        caught = not all(r[4] for r in per_channel_cases(tmp, mutate=True))
        bad += not caught
        print("%s mutant (a channel boundary off by one)" % ("ok  " if caught else "FAIL"))
        # ACT 3, Inductor's lines as _post: fp32 and 16-bit, masked tails and whole groups
        # (the last three written over the input: Inductor's reuse of the convolution's buffer)
        posts = [((2, 8, 50), 2, 256, "silu_tanh", f32, False), ((2, 8, 64), 2, 256, "gelu_tanh", f32, False),
                 ((3, 4, 3, 5), 2, 32, "silu_tanh", f16, False), ((2, 8, 50), 2, 256, "gelu_tanh", b16, False),
                 ((2, 8, 64), 2, 256, "hardswish_half", f32, False), ((3, 4, 3, 5), 2, 32, "hardswish_half", f16, False),
                 ((2, 8, 50), 2, 256, "tanh", f32, True), ((3, 4, 3, 5), 2, 32, "tanh", f16, True),
                 ((2, 8, 64), 2, 256, "hardswish_half", f32, True), ((2, 8, 50), 2, 256, "widened_silu", b16, False),
                 ((3, 4, 3, 5), 2, 32, "widened_silu", f16, True)]
        for n, (shape, groups, seg, post, dt, inpl) in enumerate(posts):
            gsize = shape[1] // groups
            for d in shape[2:]:
                gsize *= d
            mod = load_judged(source(gsize, seg, True, 3, post, inpl), "gn_post_%d" % n, tmp)
            err = run(mod, shape, groups, True, 3, dt, want_act=post, in_place=inpl)
            ok = err <= 1
            bad += not ok
            print("%s shape=%s groups=%d seg=%d _post=%s %s%s max_err/tol=%.3g"
                  % ("ok  " if ok else "FAIL", shape, groups, seg, post, str(dt)[6:], " in place" if inpl else "", err))
        # mutants: rendered without the bias (launched without it, judged against a reference with
        # it), or with ReLU for GELU
        for n, (pb, act, want_bias, want_act) in enumerate([(False, 1, True, 1), (True, 2, True, 1),
                                                              (True, 3, True, "gelu_tanh")]):
            mod = load_judged(source(200, 256, pb, act, "silu_tanh"), "gn_mutant_%d" % n, tmp)
            err = run(mod, (2, 8, 50), 2, pb, act, f32, want_act=want_act, want_bias=want_bias)
            caught = err > 1
            bad += not caught
            what = "bias left out" if not pb else "ReLU for GELU" if act == 2 else "another _post"
            print("%s mutant %d (%s) max_err/tol=%.3g" % ("ok  " if caught else "FAIL", n, what, err))
    print("group_norm interp: %d cases, %d _post cases (4 in place), 6 per-channel cases and 4 mutants, %d failed"
          % (len(cases), len(posts), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
