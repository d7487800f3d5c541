#!/usr/bin/env python3
"""kernelopt's sandboxed compile step (src/gates/machine.h): compiles one Triton kernel of an
untrusted candidate file for a given GPU architecture and writes the cubin, nothing else.

Runs inside kopt's sandbox (src/sandbox/sandbox.h: its own process, namespaces where allowed,
an exact environment, rlimits, the work directory as the only place it may write), started as
`python3 -I kopt_compile.py` in that directory. Needs triton, not torch and not a GPU.

stdin, one JSON object:
  {"source": file text, "kernel": name, "signature": {param: triton type | "constexpr"},
   "constexprs": {param: value}, "attrs": {param: "D"}, "num_warps": n, "num_stages": n (0:
   Triton's default), "arch": 90}
"attrs" names the parameters Triton's JIT would specialise as divisible by 16 on the launch
judged (a 16-byte aligned pointer, an integer multiple of 16: tt.divisibility 16), so that the
cubin checked is compiled as the one the launch runs (vectorised loads and stores included).
stdout, one JSON object: {"ok": true, "cubin": "kernel.cubin", "metadata": "kernel.json", "name": ...,
  "shared": bytes, "num_warps": n, "triton": version} or {"ok": false, "error": "..."} (exit status 1).
The cubin and Triton's metadata of the compile are in the work directory; kopt reads them there
(regular files, size-capped), disassembles the cubin itself and checks the metadata against what
it asked: what this process says about the kernel is not believed.

`kopt_compile.py --serve` is the same compile as a server (serve() below): one request per stdin
line, one answer per stdout line with "dir", the directory (under the work directory) that holds
its cubin; the first line says whether the server is ready.
"""

import importlib.util
import inspect
import io
import json
import os
import signal
import sys
import time


def fail(msg):
    sys.stdout.write(json.dumps({"ok": False, "error": msg}) + "\n")
    sys.exit(1)


def main(text=None):
    try:
        req = json.loads(sys.stdin.read() if text is None else text)
        source, kernel = req["source"], req["kernel"]
        sig, cx = dict(req["signature"]), dict(req.get("constexprs") or {})
        div16 = [k for k, v in dict(req.get("attrs") or {}).items() if v == "D"]
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
    attrs = {}
    for name in div16:
        if full_sig.get(name) in (None, "constexpr"):
            fail("attrs: %s is not a runtime parameter of %s" % (name, kernel))
        attrs[(fn.arg_names.index(name),)] = [["tt.divisibility", 16]]
    opts = {"num_warps": warps}
    if stages > 0:
        opts["num_stages"] = stages
    try:
        k = triton.compile(ASTSource(fn=fn, signature=full_sig, constexprs=cx, attrs=attrs),
                           target=GPUTarget("cuda", arch, 32), options=opts)
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()
        fail("Triton could not compile %s: %s: %s" % (kernel, type(e).__name__, msg[-1] if msg else ""))
    with open("kernel.cubin", "wb") as f:
        f.write(k.asm["cubin"])
    md = k.metadata
    get = (lambda n: md.get(n)) if isinstance(md, dict) else (lambda n: getattr(md, n, None))
    # Triton's metadata of the compile (what its cache's <name>.json holds): kopt checks it against
    # what it asked and writes its own copy of the fields a loader needs (src/gates/kmeta.h)
    meta = dict(md) if isinstance(md, dict) else md._asdict()
    tgt = meta.get("target")
    if tgt is not None and not isinstance(tgt, dict):
        meta["target"] = {"backend": tgt.backend, "arch": tgt.arch, "warp_size": tgt.warp_size}
    with open("kernel.json", "w") as f:
        json.dump(meta, f, default=str)
    sys.stdout.write(json.dumps({"ok": True, "cubin": "kernel.cubin", "metadata": "kernel.json", "name": get("name"),
                                 "shared": get("shared"), "num_warps": get("num_warps"),
                                 "triton": triton.__version__}) + "\n")


ANSWER_MAX = 1 << 16


def _kill_the_rest():
    """Everything in this PID namespace but this process: kill(-1) from its PID 1."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                time.sleep(0.002)   # killed, not reaped yet
                os.kill(-1, signal.SIGKILL)
        except ChildProcessError:
            return
        except ProcessLookupError:
            pass


def _one(line, n):
    """One request in a forked child, in a directory of its own; the answer (the child's stdout,
    a file) read back by this process, which alone writes to the protocol's stdout."""
    try:
        limit = float(json.loads(line).get("timeout_s") or 120)
    except Exception:  # noqa: BLE001 - main() says what is wrong with it
        limit = 120.0
    d = "c%d-%s" % (n, os.urandom(6).hex())
    os.mkdir(d, 0o700)   # new: nothing a child left before can be in it
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(d)
            os.environ["TRITON_CACHE_DIR"] = os.path.join(os.getcwd(), "cache")
            fd = os.open("answer.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.dup2(fd, 1)
            os.close(fd)
            main(line)
            sys.stdout.flush()
            os._exit(0)
        except SystemExit as e:
            sys.stdout.flush()
            os._exit(e.code if isinstance(e.code, int) else 1)
        except BaseException:  # noqa: BLE001 - never back into the server's loop
            os._exit(1)
    deadline = time.time() + limit
    status = None
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        elif time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = -1
        else:
            time.sleep(0.005)
    _kill_the_rest()
    if status == -1:
        return {"ok": False, "error": "the compile took more than %.0f s" % limit, "timeout": True, "dir": d}
    try:
        fd = os.open(os.path.join(d, "answer.json"), os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            raw = f.read(ANSWER_MAX + 1)
        ans = json.loads(raw.decode() if len(raw) <= ANSWER_MAX else "null")
    except Exception:  # noqa: BLE001 - the child's file is the child's word, nothing more
        ans = None
    if not isinstance(ans, dict):
        ans = {"ok": False, "error": "the compile gave no answer (exit status %d)" % os.waitstatus_to_exitcode(status)}
    ans["dir"] = d
    return ans


def serve():
    """--serve: a compile server for kopt's sandbox session (src/gates/machine.h). Imports Triton
    once and warms its compiler up, then answers one JSON line per request line, each compiled
    in a forked child in a new directory of its own (the cubin stays there for kopt to read);
    after each child, every other process of the PID namespace is killed, so nothing of one
    candidate lives on into the next. Refuses (first line) unless it is PID 1 of its namespace."""
    import ctypes
    if os.getpid() != 1:
        sys.stdout.write(json.dumps({"ready": False, "error": "not PID 1 of a PID namespace"}) + "\n")
        return
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0: no ptrace from a child
    except Exception:  # noqa: BLE001
        pass
    try:
        import triton  # noqa: F401
        from triton.backends.compiler import GPUTarget  # noqa: F401
        from triton.compiler import ASTSource  # noqa: F401
    except Exception as e:  # noqa: BLE001
        sys.stdout.write(json.dumps({"ready": False, "error": "triton does not import: %s" % e}) + "\n")
        return
    # warm-up here, in this process, so that every child starts from a compiler already set up
    # (kopt's own kernel: nothing of a candidate has run in this process, nor ever will)
    home, out = os.getcwd(), sys.stdout
    warm = os.path.join(home, "warm")
    os.mkdir(warm, 0o700)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(warm, "cache")
    os.chdir(warm)
    sys.stdout = io.StringIO()
    try:
        main(json.dumps({"source": WARM_SOURCE, "kernel": "_kopt_warm", "signature": {"x": "*fp32", "B": "constexpr"},
                         "constexprs": {"B": 128}, "num_warps": 4, "arch": 90}))
        warmed = True
    except SystemExit:
        warmed = False
    finally:
        sys.stdout = out
        os.chdir(home)
    sys.stdout.write(json.dumps({"ready": True, "warm": warmed}) + "\n")
    sys.stdout.flush()
    n = 1
    for line in sys.stdin:
        sys.stdout.write(json.dumps(_one(line, n)) + "\n")
        sys.stdout.flush()
        n += 1


WARM_SOURCE = """import triton
import triton.language as tl


@triton.jit
def _kopt_warm(x, B: tl.constexpr):
    i = tl.arange(0, B)
    tl.store(x + i, tl.load(x + i) * 2.0)
"""


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main()
