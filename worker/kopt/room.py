"""Making room under the memory cap (kopt.memory, `limits`) before a step allocates.

make_room(ctx, need, keep_launch=None): when `need` more bytes would take PyTorch's allocator
past the cap, frees what the worker holds only for convenience, cheapest to rebuild first:
  1. captured launches (kopt.isolate.LaunchCache) other than `keep_launch`: a later request
     captures them again (one call() of the module up to the launch);
  2. kept outputs (kopt.kept), largest first, moved to ordinary pageable host memory (never
     pinned: a candidate kernel could address pinned host memory); comparisons then read them
     a chunk at a time.
Stops as soon as the step fits. Returns what it did, for the worker's log ({"launches": n,
"staged": [names]}). Nothing happens without a cap, or outside the main memory phase.
"""

import torch

from kopt.memory import nbytes, over_cap


def make_room(ctx, need, keep_launch=None):
    done = {"launches": 0, "staged": []}
    if not over_cap(ctx, need):
        return done
    cache = getattr(ctx, "launches", None)
    if cache is not None:
        done["launches"] = cache.forget_all(keep=keep_launch)
        torch.cuda.empty_cache()
    if over_cap(ctx, need):
        from kopt.kept import stage
        names = sorted((n for n, k in ctx.kept.items() if not k.staged),
                       key=lambda n: -nbytes(ctx.kept[n].items))
        for n in names:
            if not over_cap(ctx, need):
                break
            stage(ctx, n)
            done["staged"].append(n)
        torch.cuda.empty_cache()
    if done["launches"] or done["staged"]:
        ctx.log("memory cap: made room for %d MiB (forgot %d captured launch(es), staged %s to host)"
                % (need >> 20, done["launches"], ", ".join(done["staged"]) or "nothing"))
    return done
