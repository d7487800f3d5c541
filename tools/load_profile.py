"""Where the worker's `load` of a problem spends its time (developer tool, GPU only).

usage: python3 tools/load_profile.py PROBLEM.py [TOP]
Run from the repository root in a fresh process, as kopt starts a worker per problem: imports
the worker's modules as the worker does (its private Inductor cache, its allocator setting),
then runs the worker's own op_load under cProfile and prints the wall times of the imports and
of the load, then the TOP (30) functions by cumulative time. Run it twice with the same
TRITON_CACHE_DIR and PYTHONPYCACHEPREFIX to see what the caches save (the thirty-second
session's run, docs/BENCHMARKS.md: 5.8 s of a 10.7 s load was `builtins.compile`, the machine's
Python compiling torch's modules from source because it ships no .pyc and forbids writing them;
src/worker/pycache.h is the fix).
"""
import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker"))


class _Channel:
    """The worker's protocol channel, reduced to what op_load uses (progress events)."""

    def log(self, message):
        pass


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    top = int(argv[2]) if len(argv) > 2 else 30
    t0 = time.time()
    from kopt import env
    env.setup_cache_dir()
    env.setup_allocator()
    import torch
    try:
        import triton  # noqa: F401 - the worker imports it at start, as here
    except ImportError:
        pass
    t1 = time.time()
    from kopt.problem import op_load
    from kopt.server import Context
    ctx = Context(_Channel(), torch, None)
    prof = cProfile.Profile()
    t2 = time.time()
    prof.enable()
    try:
        op_load(ctx, {"path": argv[1], "seed": 0})
        failed = None
    except Exception as e:  # noqa: BLE001 - a developer tool: print it and the profile so far
        failed = e
    prof.disable()
    t3 = time.time()
    print("%s: imports %.2f s, load %.2f s%s (bytecode prefix %s, dont_write_bytecode %d)"
          % (argv[1], t1 - t0, t3 - t2, "" if failed is None else " FAILED: %s" % failed,
             sys.pycache_prefix, sys.flags.dont_write_bytecode))
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    print(out.getvalue())
    return 0 if failed is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
