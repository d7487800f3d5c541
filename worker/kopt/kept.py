"""Outputs kept in the worker between requests, and their comparison (PROTOCOL.md, `run` with
`keep`, `compare`, `drop`).

A `run` with keep=NAME leaves its flattened outputs in the worker under NAME (replacing, and
freeing first, whatever NAME held) instead of writing them anywhere; `compare` reduces two kept
lists to comparison statistics (kopt.compare.compare_stats) per output; `drop` frees names. So
a multi-GB output is held once, in the worker, for exactly as long as the core needs it.

Where kept tensors live. On the GPU when they fit; otherwise they are staged in host memory
(ordinary pageable memory, never pinned: a candidate kernel could address pinned host memory)
and compared chunk by chunk. `keep` stages to the host when the GPU would be left with less free
memory than the next run needs (the largest run seen so far: its inputs, outputs and
intermediates), or always when the request says low_memory (the core's retry after an OOM).
Kept outputs already on the GPU are moved to the host later when a step needs their room under
the memory cap (stage, from kopt.room.make_room).

Content sums. `compare` checks that both sides still hold what was kept (a candidate's kernel can
write any memory of this process) before it answers. The sum of a host-staged tensor compared
with another is taken from the chunks the comparison moves to the GPU anyway
(kopt.compare.ChunkSum), so a staged float64 reference crosses once per comparison instead of
twice; a device tensor's is taken whole, in one kernel; the statistics are answered only when
every sum holds.
"""

import time

import torch

from kopt.compare import CHUNK, ChunkSum, abs_max, checksum, compare_stats
from kopt.errors import BadRequest
from kopt.memory import compare_chunk, free_bytes, nbytes
from kopt.protocol import get_arg
from kopt.tensors import flatten, json_value, whole_storage


def content_sum(x):
    """kopt.compare.checksum of x's own elements in their logical order, wherever x lives: its
    storage when x is all of it and contiguous, else a compact copy's (so a kept output staged to
    the host later, a compact copy, sums the same). None for non-tensors."""
    if not isinstance(x, torch.Tensor):
        return None
    if whole_storage(x):
        return checksum(x)
    return checksum(x.detach().contiguous().clone())


class Kept:
    def __init__(self, items, staged, name="", sums=None):
        self.name = name
        self.items = items      # flattened outputs: tensors or plain values
        self.staged = staged    # True when the tensors were moved to host memory
        self.abs_max = {}       # item index -> compare.abs_max of it, once asked (rel_err)
        # their content sums when kept (`sums`: taken by the caller before it staged them to the
        # host, where taking them costs a crossing): a reference must still hold them when it is
        # compared (a candidate's kernel can write any memory of this process, kept outputs included)
        self.sums = [content_sum(x) for x in items] if sums is None else sums


def keep(ctx, name, outputs, low_memory=False):
    """Store the flattened `outputs` under `name` (GPU, or host when memory is short)."""
    drop(ctx, [name])
    items = flatten(outputs)
    size = nbytes(items)
    staged = bool(low_memory) or (size > 0 and free_bytes() < ctx.run_need + (64 << 20))
    am = _abs_max_on_device(ctx, items)
    sums = [content_sum(x) for x in items]   # where they are (a compact host copy sums the same)
    if staged:
        ctx.log("keep %s: %d MiB staged to host memory (%s)"
                % (name, size >> 20, "low memory asked" if low_memory else "GPU memory short"))
        items = [x.detach().to("cpu") if isinstance(x, torch.Tensor) else x for x in items]
    k = Kept(items, staged, name, sums)
    k.abs_max.update(am)
    ctx.kept[name] = k
    return staged


def _on_gpu(x):
    return x.device.type == "cuda"


def _abs_max_on_device(ctx, items):
    """{index: abs_max} of the float64 tensors among items that are on the GPU: a float64
    reference's largest magnitude (what a comparison with rel_err needs first) found while it is
    still there, before it may be staged to the host (where finding it would cost one more
    crossing); empty when memory is short for even that."""
    got = {}
    try:
        for i, x in enumerate(items):
            if isinstance(x, torch.Tensor) and x.dtype == torch.float64 and _on_gpu(x):
                got[i] = abs_max(x, compare_chunk(ctx, CHUNK))
    except torch.cuda.OutOfMemoryError:
        return {}
    return got


def stage(ctx, name):
    """Move the kept outputs `name` to host memory (pageable), if they are not there already."""
    k = ctx.kept.get(name)
    if k is None or k.staged:
        return
    ctx.log("keep %s: staged to host memory" % name)
    k.items = [x.detach().to("cpu") if isinstance(x, torch.Tensor) else x for x in k.items]
    k.staged = True


def drop(ctx, names):
    """Free the named kept outputs (unknown names are ignored)."""
    freed = False
    for n in names:
        if ctx.kept.pop(n, None) is not None:
            freed = True
    if freed and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def _get(ctx, name):
    k = ctx.kept.get(name)
    if k is None:
        raise BadRequest("nothing is kept under '%s' (kept: %s)" % (name, ", ".join(sorted(ctx.kept)) or "none"))
    return k


def _tols(req, n):
    tols = req.get("tols")
    if tols is None:
        atol = get_arg(req, "atol", (int, float))
        rtol = get_arg(req, "rtol", (int, float))
        return [(float(atol), float(rtol))] * n
    if not isinstance(tols, list) or len(tols) != n or not all(
            isinstance(t, list) and len(t) == 2 and all(isinstance(x, (int, float)) for x in t) for t in tols):
        raise BadRequest("tols must list one [atol, rtol] pair per output (%d)" % n)
    return [(float(a), float(r)) for a, r in tols]


def _rel_err(req):
    """The optional rel_err [thr, floor_abs, floor_rel] of a compare request (three numbers >= 0)."""
    r = req.get("rel_err")
    if r is None:
        return None
    if not isinstance(r, list) or len(r) != 3 or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in r):
        raise BadRequest("rel_err must be [thr, floor_abs, floor_rel], three numbers >= 0")
    return [float(x) for x in r]


def op_compare(ctx, req):
    """compare {ref, got, tols: [[atol, rtol] per output] | atol, rtol, rel_err?} ->
    {"outputs": [stats | {"value_ref", "value_got"} per output], "count_mismatch": bool,
    "reference_changed": bool}. reference_changed: ref's or got's contents are no longer what was
    kept (something wrote to them since -- "changed" names which: the core refuses the candidate
    that ran meanwhile); nothing is compared then."""
    ref = _get(ctx, get_arg(req, "ref", str))
    got = _get(ctx, get_arg(req, "got", str))
    rel_err = _rel_err(req)
    n = len(ref.items)
    tols = _tols(req, n) if len(got.items) == n else None
    chunk = compare_chunk(ctx, CHUNK)
    t0 = time.perf_counter()
    # the content sums: of a host tensor compared with one of its shape (and all of its
    # storage), taken in the comparison's own pass (ChunkSum: a host-staged reference then
    # crosses to the GPU once, not twice); of the others, here, before anything is compared (a
    # device tensor's in one kernel, not one a chunk)
    fused = {}
    if tols is not None:
        for i, (a, b) in enumerate(zip(ref.items, got.items)):
            if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape:
                fused[i] = tuple(ChunkSum(x) if not x.is_cuda and ChunkSum.fusable(x, chunk) else None for x in (a, b))
    changed = _changed((ref, got), fused, in_pass=False)
    t_sums = time.perf_counter()
    if changed:
        return {"outputs": [], "count_mismatch": False, "reference_changed": True, "changed": changed}
    if tols is None:
        return {"outputs": [], "count_mismatch": True, "ref_count": n, "got_count": len(got.items),
                "reference_changed": False}
    out = []
    for i, ((a, b), (atol, rtol)) in enumerate(zip(zip(ref.items, got.items), tols)):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            am = None
            if rel_err is not None and a.shape == b.shape:
                if i not in ref.abs_max:
                    ref.abs_max[i] = abs_max(a, chunk)
                am = ref.abs_max[i]
            out.append(compare_stats(a, b, atol, rtol, chunk, rel_err, am, fused.get(i, (None, None))))
        elif isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            out.append({"kind_mismatch": True})
        else:
            out.append({"value_ref": json_value(a), "value_got": json_value(b)})
    changed = _changed((ref, got), fused, in_pass=True)
    if changed:
        return {"outputs": [], "count_mismatch": False, "reference_changed": True, "changed": changed}
    t_end = time.perf_counter()
    if t_end - t0 > 0.5:   # where a slow gate 3 spends its time (the worker log)
        ctx.log("compare %s (%s) with %s (%s): %.2f s the content sums, %.2f s the comparison (%d of %d sums "
                "taken in its pass)" % (ref.name, "host" if ref.staged else "device", got.name,
                                        "host" if got.staged else "device", t_sums - t0, t_end - t_sums,
                                        sum(c is not None for cs in fused.values() for c in cs), 2 * n))
    return {"outputs": out, "count_mismatch": False, "reference_changed": False}


def _changed(sides, fused, in_pass):
    """Names of the kept sides (ref, got) whose content sums no longer hold, over the items
    whose sum op_compare's pass takes (in_pass: fused[i][side] a ChunkSum; one the pass did not
    complete is taken whole) or over the others."""
    out = []
    for j, k in enumerate(sides):
        for i, x in enumerate(k.items):
            cs = fused.get(i, (None, None))[j]
            if (cs is not None) != in_pass:
                continue
            if (cs.value() if cs is not None and cs.complete else content_sum(x)) != k.sums[i]:
                out.append(k.name)
                break
    return out


def op_drop(ctx, req):
    names = get_arg(req, "names", list)
    drop(ctx, [str(n) for n in names])
    return {"kept": sorted(ctx.kept)}
