"""kopt_loader — run a kernelopt-verified module with your model's own weights.

This directory was written by `kopt verify` / `kopt optimize`. It holds:
  optimized_module.py   Inductor's output module for the model, with the verified Triton
                        kernels stitched in (or unchanged, when no candidate passed)
  kopt_meta.json        where each argument of the module's call() comes from
  kopt_args.pt          the arguments captured at compile time (used only for constants)
  kopt_loader.py        this file

Usage, from a fresh Python process (torch and triton needed, same GPU architecture):

    import sys; sys.path.insert(0, "out")            # this directory
    from kopt_loader import load_optimized
    model = Model(*init_args).cuda().eval()          # your weights
    fast = load_optimized(model)
    y = fast(*inputs)                                # inputs on the GPU, same shapes/dtypes

The module was compiled for fixed shapes, dtypes and strides: call() asserts them. The weights
are read from `model` at every call, so updating them in place is seen.
"""

import importlib.util
import json
import os

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_module(path):
    spec = importlib.util.spec_from_file_location("kopt_optimized_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_optimized(model, directory=_HERE):
    """A callable fast(*inputs) computing model(*inputs) through the optimized module."""
    with open(os.path.join(directory, "kopt_meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    mod = _load_module(os.path.join(directory, meta["module"]))
    if meta.get("attrs"):
        for name, value in torch.load(os.path.join(directory, meta["attrs"]), weights_only=False).items():
            setattr(mod, name, value)
    sources = meta.get("arg_sources")
    if not sources:
        raise RuntimeError("kopt_meta.json lists no argument sources")
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    saved = []

    def arg(k, src, inputs):
        kind, _, name = src.partition(":")
        if kind == "param":
            return params[name].detach()
        if kind == "buffer":
            return buffers[name]
        if kind == "input":
            return inputs[int(name)]
        if not saved:
            saved.extend(torch.load(os.path.join(directory, meta["args"]), weights_only=False))
        return saved[k]

    def fast(*inputs):
        args = [arg(k, s, inputs) for k, s in enumerate(sources)]
        with torch.no_grad():
            out = mod.call(args)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return out[0] if len(out) == 1 else out

    fast.module = mod   # the loaded module: its guards' counters (NAME._kopt_fallbacks) are readable
    return fast
