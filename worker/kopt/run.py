"""`run`: one run of a target under no_grad; each output is dumped to `out_prefix<k>.bin`.

Arguments (PROTOCOL.md): target, out_prefix, seed (eager/compiled: fresh inputs drawn from
get_inputs() under that seed; the loaded inputs are left as they are), float64 (eager only: a
float64 deep copy of the model, kept for later runs, on float64 copies of floating inputs).

poison: every target allocates its outputs itself (the eager model, the compiled model, an
output module's call() via empty_strided_cuda) from PyTorch's caching allocator, which hands
back memory freed earlier -- possibly holding a previous run's correct results, which would hide
a kernel that leaves elements unwritten. With poison (the default) the allocator's cache is
emptied and a large NaN-filled block is allocated and freed right before the run, so the
outputs are carved from NaN-filled memory. (Exact poisoning of each output and in-place
argument is done by the isolation harness, `isolate`, which owns its buffers.)
"""

import torch

from kopt.protocol import get_arg
from kopt.targets import make_target
from kopt.tensors import dump_outputs


POISON_BYTES = 4 << 30


def poison_allocator():
    """Fill the memory the caching allocator will hand out next with NaN (see docstring)."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    n = min(POISON_BYTES, free // 2) // 4
    if n > 0:
        block = torch.full((n,), float("nan"), dtype=torch.float32, device="cuda")
        del block


def op_run(ctx, req):
    spec = get_arg(req, "target", dict)
    out_prefix = get_arg(req, "out_prefix", str)
    seed = get_arg(req, "seed", int, None)
    poison = get_arg(req, "poison", bool, True)
    float64 = get_arg(req, "float64", bool, False)

    target = make_target(ctx, spec, seed=seed, float64=float64)
    with torch.no_grad():
        prepared = target.prepare()
        if poison:
            poison_allocator()
        out = target.run(prepared)
        torch.cuda.synchronize()
    return {"outputs": dump_outputs(out, out_prefix)}
