"""`run`: one run of a target under no_grad (PROTOCOL.md, `run`).

Arguments: target, seed (fresh inputs drawn from get_inputs() under that seed; the loaded inputs
are left as they are), float64 (eager only: a float64 copy of the model, on float64 copies of
floating inputs; the copy is dropped after the run so it never stays resident), and where the
outputs go:
  keep=NAME        kept in the worker under NAME (kopt.kept), for `compare`; nothing is written;
  out_prefix=P     each output k written to P<k>.bin (tensor files; small tensors only: tests,
                   `kopt inspect --keep-work`);
  neither          described only (shapes and dtypes).
low_memory stages kept outputs in host memory at once (the core's retry after an OOM).
A module run on a seed's inputs, where the cap (kopt.memory) leaves no room for them beside the
loaded inputs, runs with the loaded inputs displaced (kopt.problem: `displace`), refilled once
the run's own inputs are freed.
transform ({"kind": "scale"|"shift"|"const_rows", "value": v}, with a seed): the drawn inputs'
floating tensors are scaled, shifted or made constant along their last dimension (gate 3's
adversarial sets; kopt.targets.transformed).
check_inputs: the checksums of the run's tensor arguments before and after the run are compared
and the indices of the ones that changed are returned (`inputs_changed`): a module target's
call() arguments, or the eager model's inputs. The loaded inputs are also verified (and
restored) after every module target: a candidate must not leave them changed; so are the
model's parameters and buffers (Problem.check_state: a change is the fatal state_changed).

poison: every target allocates its outputs itself from PyTorch's caching allocator, which hands
back memory freed earlier -- possibly holding a previous run's correct results, which would hide
a kernel that leaves elements unwritten. With poison (the default) the allocator's cache is
emptied and a poisoned block as large as the run needs (the largest run seen so far, at least
256 MiB where the memory cap leaves room for that, at most half the free memory) is allocated
and freed right before the run, so the outputs are carved from poisoned memory: NaN for eager
runs, kopt.poison's kinds in turn (NaN, random bytes, normal values) for module runs, so that a
kernel cannot tell kopt's runs from a user's by what its buffers hold before it writes them.

The result describes the outputs and says how much the run allocated (`run_bytes`, the peak
minus what was allocated before: outputs and intermediates); for module targets in the main
memory phase the worker also keeps it as the measure of what the next module run needs
(ctx.run_need, the poison block's size) -- unless the request says `candidate`: a candidate's
module keeps the compiler's call(), so its outputs are the compiler's, and its own scratch is
poisoned by the launcher kopt writes; a candidate allocating much more (a scratch up to the
plan's bound) must not make every later run poison, and hold, that much more. Before a module
run, kopt.room.make_room frees what the memory cap needs for it (captured launches, kept outputs
to host).
"""

import time

import torch

from kopt.compare import checksums
from kopt.kept import keep
from kopt.memory import alloc_cap, nbytes, over_cap
from kopt.poison import fill, kind_at
from kopt.protocol import get_arg
from kopt.room import make_room
from kopt.targets import check_transform, make_target
from kopt.tensors import dump_outputs, flatten, meta

MIN_POISON = 256 << 20


def poison_allocator(ctx, kind="nan"):
    """Fill the memory the caching allocator will hand out next with poison `kind` (see
    docstring; kopt.poison)."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    floor = MIN_POISON
    cap = alloc_cap(ctx) if ctx.memory is not None and ctx.memory.phase == "main" else None
    if cap is not None:   # the 256 MiB floor only as far as the cap leaves room for it
        floor = min(MIN_POISON, max(0, cap - int(torch.cuda.memory_allocated())))
    want = max(floor, int(ctx.run_need * 1.1))
    n = min(want, free // 2) // 4
    if n > 0:
        block = torch.empty((n,), dtype=torch.float32, device="cuda")
        fill(block, kind)
        del block
    return max(0, n) * 4


def _module_poison(ctx):
    """The poison of the next module run: kopt.poison's kinds in turn over this worker's module
    runs (gate 3 runs a candidate's module on ten input sets: each kind several times)."""
    ctx.poison_turn += 1
    return kind_at(ctx.poison_turn - 1)


def _displace_for_seed(ctx, spec, seed):
    """Displaces the loaded inputs for a module run on a seed's inputs when the draw and the run
    would not fit beside them under the cap; whether it did."""
    problem = ctx.problem
    if spec.get("kind") != "module" or seed is None or problem is None or ctx.memory is None:
        return False
    if not over_cap(ctx, nbytes(problem.inputs) + ctx.run_need):
        return False
    freed = problem.displace()
    if freed:
        ctx.log("memory cap: the loaded inputs (%d MiB) displaced for a run on seed %d"
                % (freed >> 20, seed))
    return freed > 0


def op_run(ctx, req):
    spec = get_arg(req, "target", dict)
    out_prefix = get_arg(req, "out_prefix", str, None)
    keep_name = get_arg(req, "keep", str, None)
    seed = get_arg(req, "seed", int, None)
    poison = get_arg(req, "poison", bool, True)
    float64 = get_arg(req, "float64", bool, False)
    low_memory = get_arg(req, "low_memory", bool, False)
    check_inputs = get_arg(req, "check_inputs", bool, False)
    candidate = get_arg(req, "candidate", bool, False)
    transform = check_transform(req.get("transform"))

    t0 = time.perf_counter()
    # an op that fails while the loaded inputs are displaced leaves them to the server, which
    # restores them before the next request
    displaced = _displace_for_seed(ctx, spec, seed)
    target = make_target(ctx, spec, seed=seed, float64=float64, transform=transform)
    if displaced and ctx.problem.shares_displaced(target.prepare()):
        # get_inputs() handed out the loaded tensors themselves: run with them in place
        target = None
        ctx.problem.restore()
        displaced = False
        target = make_target(ctx, spec, seed=seed, float64=float64, transform=transform)
    res = {}
    with torch.no_grad():
        prepared = target.prepare()
        if spec.get("kind") == "module":
            make_room(ctx, ctx.run_need)   # under the memory cap (kopt.room): the run's own bytes
        before = checksums(target.arguments(prepared)) if check_inputs else None
        held = torch.cuda.memory_allocated()
        poisoned = poison_allocator(ctx, _module_poison(ctx) if spec.get("kind") == "module" else "nan") if poison else 0
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        ctx.memory.fold()
        torch.cuda.reset_peak_memory_stats()
        t_run = time.perf_counter()
        out = target.run(prepared)
        torch.cuda.synchronize()
        t_ran = time.perf_counter()
        run_bytes = max(0, int(torch.cuda.max_memory_allocated()) - int(base))
        if before is not None:
            after = checksums(target.arguments(prepared))
            res["inputs_changed"] = [k for k, (a, b) in enumerate(zip(before, after)) if a != b]
        del prepared
    target.release()
    target = None   # the seed's inputs go with it, before displaced loaded ones come back
    if displaced:
        # the run never reached them (their storages were empty); restore() refills them as
        # loaded (a draw checked against the load's checksums, or the host copy checked when made)
        ctx.problem.restore()
        res["loaded_inputs_changed"] = []
    elif spec.get("kind") == "module" and ctx.problem is not None:
        res["loaded_inputs_changed"] = ctx.problem.verify_inputs()
    if spec.get("kind") == "module" and ctx.problem is not None:
        # a weight written on a later run than a module's first (kopt.modules checks that one)
        # would stay written for every step after: fatal, the restarted worker reloads the model
        ctx.problem.check_state("a module run")
    # the poison block is sized for what a *module* needs (outputs and Inductor's fused
    # intermediates); eager and float64 runs allocate far more (unfused intermediates), and a
    # kept output carved from an oversized block pins all of it
    if ctx.memory.phase == "main" and spec.get("kind") == "module":
        if not candidate:
            ctx.run_need = max(ctx.run_need, run_bytes)
        # where a main-phase run's memory went (the bench's peak per step names `run`, not why)
        # and its time: the draw and the checks around the run, the run, the refill after it
        ctx.log("run %s seed %s: %d MiB allocated before the run (inputs, kept, captured), poison block "
                "%d MiB, the run %d MiB; %.2f s before the run, %.2f s the run, %.2f s after"
                % (spec.get("module", "?"), seed, held >> 20, poisoned >> 20, run_bytes >> 20,
                   t_run - t0, t_ran - t_run, time.perf_counter() - t_ran))
    items = flatten(out)
    if out_prefix is not None:
        res["outputs"] = dump_outputs(items, out_prefix)
    else:
        res["outputs"] = [meta(x) for x in items]
    if keep_name is not None:
        res["staged"] = keep(ctx, keep_name, items, low_memory)
    del out, items
    res["run_bytes"] = run_bytes
    return res
