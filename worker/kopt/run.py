"""`run`: one run of a target under no_grad; each output is dumped to `out_prefix<k>.bin`.

Arguments (PROTOCOL.md): target, out_prefix, seed (eager/compiled: fresh inputs drawn from
get_inputs() under that seed; the loaded inputs are left as they are), float64 (eager only: a
float64 deep copy of the model, kept for later runs, on float64 copies of floating inputs).

poison: accepted and ignored here. Every target allocates its outputs itself (the eager model,
the compiled model, an output module's call() via empty_strided_cuda), so there is no output
buffer to fill beforehand from outside. Poisoning of outputs belongs to the per-kernel
isolation harness, where the caller owns the output buffers.
"""

import torch

from kopt.protocol import get_arg
from kopt.targets import make_target
from kopt.tensors import dump_outputs


def op_run(ctx, req):
    spec = get_arg(req, "target", dict)
    out_prefix = get_arg(req, "out_prefix", str)
    seed = get_arg(req, "seed", int, None)
    get_arg(req, "poison", bool, True)  # validated, see the module docstring
    float64 = get_arg(req, "float64", bool, False)

    target = make_target(ctx, spec, seed=seed, float64=float64)
    with torch.no_grad():
        out = target.run(target.prepare())
        torch.cuda.synchronize()
    return {"outputs": dump_outputs(out, out_prefix)}
