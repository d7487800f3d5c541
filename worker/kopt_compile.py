#!/usr/bin/env python3
"""kernelopt's sandboxed compile step (src/gates/machine.h): compiles one Triton kernel of an
untrusted candidate file for a given GPU architecture and writes the cubin, nothing else.

Runs inside kopt's sandbox (src/sandbox/sandbox.h: its own process, namespaces where allowed,
an exact environment, rlimits, the work directory as the only place it may write), started as
`python3 -I kopt_compile.py` in that directory. Needs triton, not torch and not a GPU.

stdin, one JSON object:
  {"source": file text, "kernel": name, "signature": {param: triton type | "constexpr"},
   "constexprs": {param: value}, "num_warps": n, "num_stages": n (0: Triton's default),
   "arch": 90}
stdout, one JSON object: {"ok": true, "cubin": "kernel.cubin", "name": ..., "shared": bytes,
  "num_warps": n, "triton": version} or {"ok": false, "error": "..."} (exit status 1).
The cubin is in the work directory; kopt reads it there (a regular file, size-capped) and
disassembles it itself: what this process says about the kernel is not believed.
"""

import importlib.util
import inspect
import json
import os
import sys


def fail(msg):
    sys.stdout.write(json.dumps({"ok": False, "error": msg}) + "\n")
    sys.exit(1)


def main():
    try:
        req = json.loads(sys.stdin.read())
        source, kernel = req["source"], req["kernel"]
        sig, cx = dict(req["signature"]), dict(req.get("constexprs") or {})
        warps, stages, arch = int(req["num_warps"]), int(req.get("num_stages") or 0), int(req.get("arch", 90))
    except Exception as e:  # noqa: BLE001 - a malformed request is kopt's bug; say what it was
        fail("bad request: %s: %s" % (type(e).__name__, e))
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except Exception as e:  # noqa: BLE001
        fail("triton does not import: %s: %s" % (type(e).__name__, e))
    path = os.path.join(os.getcwd(), "kopt_candidate.py")
    with open(path, "w") as f:
        f.write(source)
    try:
        spec = importlib.util.spec_from_file_location("kopt_candidate", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - the candidate's failure is its verdict
        fail("the candidate file does not import: %s: %s" % (type(e).__name__, e))
    fn = getattr(mod, kernel, None)
    if not isinstance(fn, triton.runtime.jit.JITFunction):
        fail("%s is not a @triton.jit function of the file" % kernel)
    full_sig = {}
    for p in fn.params:   # the function's order; constexprs with defaults take them
        if p.name in sig:
            full_sig[p.name] = sig[p.name]
        elif p.is_constexpr and p.default is not inspect.Parameter.empty:
            full_sig[p.name] = "constexpr"
            cx[p.name] = p.default
        else:
            fail("no type for parameter %s" % p.name)
    opts = {"num_warps": warps}
    if stages > 0:
        opts["num_stages"] = stages
    try:
        k = triton.compile(ASTSource(fn=fn, signature=full_sig, constexprs=cx),
                           target=GPUTarget("cuda", arch, 32), options=opts)
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()
        fail("Triton could not compile %s: %s: %s" % (kernel, type(e).__name__, msg[-1] if msg else ""))
    with open("kernel.cubin", "wb") as f:
        f.write(k.asm["cubin"])
    md = k.metadata
    get = (lambda n: md.get(n)) if isinstance(md, dict) else (lambda n: getattr(md, n, None))
    sys.stdout.write(json.dumps({"ok": True, "cubin": "kernel.cubin", "name": get("name"),
                                 "shared": get("shared"), "num_warps": get("num_warps"),
                                 "triton": triton.__version__}) + "\n")


if __name__ == "__main__":
    main()
