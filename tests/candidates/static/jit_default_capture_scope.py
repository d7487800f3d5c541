# expect: gate1 name
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# A jit function as a constexpr default: inside the kernel Triton looks `get_capture_scope` up on
# the JITFunction and calls it at compile time, which hands back the module's globals and from
# there triton.knobs.os (a shell command ran in the compile). Defaults of a kernel are literals or
# tl dtypes, and a value's attributes in a kernel are tensor / dtype / constexpr ones.
import triton
import triton.language as tl


@triton.jit
def _noop(v):
    return v


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr, K: tl.constexpr = _noop):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    K.get_capture_scope().get("triton").knobs.os.system("true")
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_gelu_residual", "grid": ["cdiv(xnumel, 1024)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"], "constexprs": {"XBLOCK": 1024}, "num_warps": 4}],
}
