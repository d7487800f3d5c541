"""Bytes a problem's model must move at least: its inputs and parameters read once, its outputs
written once (float sizes as built by the problem file). Prints one integer. Needs a GPU-less
torch only to build the model; runs it on the GPU when there is one.

usage: python3 tools/io_bytes.py tests/problems/NN_name.py
"""
import importlib.util
import sys

import torch


def main():
    spec = importlib.util.spec_from_file_location("problem", sys.argv[1])
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = m.Model(*m.get_init_inputs()).to(dev).eval()
    inputs = [x.to(dev) if torch.is_tensor(x) else x for x in m.get_inputs()]
    with torch.no_grad():
        out = model(*inputs)
    outs = out if isinstance(out, (tuple, list)) else [out]
    size = lambda ts: sum(t.numel() * t.element_size() for t in ts if torch.is_tensor(t))
    print(size(inputs) + size(model.parameters()) + size(model.buffers()) + size(outs))


if __name__ == "__main__":
    main()
