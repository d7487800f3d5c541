"""Runs an Inductor output module's call() a few times, for Nsight Compute to profile (kopt's
profiler runs `ncu ... python3 worker/ncu_run.py MODULE ARGS`). Nothing is printed on stdout
but what ncu writes; errors go to stderr with exit status 2.

usage: python3 worker/ncu_run.py MODULE.py ARGS.pt [REPS]
The first call may autotune (its launches are profiled too); the core keeps the last profiled
launch of each kernel name.
"""
import importlib.util
import sys


def main():
    module, args_path = sys.argv[1], sys.argv[2]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    import torch
    spec = importlib.util.spec_from_file_location("kopt_ncu_module", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    saved = torch.load(args_path, weights_only=False)
    with torch.no_grad():
        for _ in range(reps):
            args = [a.clone() if isinstance(a, torch.Tensor) else a for a in saved]
            mod.call(args)
        torch.cuda.synchronize()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the core falls back to event timing
        sys.stderr.write("ncu_run: %s: %s\n" % (type(e).__name__, e))
        sys.exit(2)
