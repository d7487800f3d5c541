"""Developer tool (run on the GPU machine): compile each example problem with torch.compile
and save Inductor's output module(s) as test fixtures for the C parser.

usage: python3 tools/capture_fixtures.py OUT_DIR [--mode default|max-autotune-no-cudagraphs]
       [problem.py ...]   (default: tests/problems/*.py plus bad/only_matmul.py, bad/lstm.py)
Writes OUT_DIR/<problem>[__<mode>]_g<i>.py for each graph. Prints one line per problem.
"""
import glob
import importlib.util
import os
import sys
import time

import torch
from torch._inductor.utils import run_and_get_code


def load(path):
    spec = importlib.util.spec_from_file_location("prob_" + os.path.basename(path)[:-3], path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def main():
    out = sys.argv[1]
    args = sys.argv[2:]
    mode = "default"
    if args and args[0] == "--mode":
        mode = args[1]
        args = args[2:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    probs = args or sorted(glob.glob(os.path.join(root, "tests/problems/*.py"))) + [
        os.path.join(root, "tests/problems/bad/only_matmul.py"),
        os.path.join(root, "tests/problems/bad/lstm.py")]
    os.makedirs(out, exist_ok=True)
    for p in probs:
        name = os.path.basename(p)[:-3]
        torch._dynamo.reset()
        m = load(p)
        torch.manual_seed(0)
        model = m.Model(*m.get_init_inputs()).cuda().eval()
        torch.manual_seed(0)
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]
        t0 = time.time()
        with torch.no_grad():
            kw = {} if mode == "default" else {"mode": mode}
            comp = torch.compile(model, **kw)
            _, codes = run_and_get_code(comp, *inputs)
        dt = time.time() - t0
        suffix = "" if mode == "default" else "__" + mode.replace("-", "_")
        for i, code in enumerate(codes):
            with open(os.path.join(out, f"{name}{suffix}_g{i}.py"), "w") as f:
                f.write(code)
        ntk = sum(c.count("async_compile.triton(") for c in codes)
        print(f"{name:24s} mode={mode} graphs={len(codes)} triton_kernels={ntk} "
              f"bytes={sum(len(c) for c in codes)} compile_s={dt:.1f}", flush=True)


if __name__ == "__main__":
    main()
