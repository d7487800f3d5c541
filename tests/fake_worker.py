#!/usr/bin/env python3
"""fake_worker.py - a stand-in for worker/kopt_worker.py that speaks protocol 1
(docs/PROTOCOL.md) without torch, for the unit and CLI tests of the C core.

Standard library only. Behaviour is chosen by FAKE_WORKER_MODE, a comma-separated list of:
  ok                  plausible fixed answers to ping/load/compile/run/time/profile/ceilings
                      (the default; `run` writes real float32/float64 .bin files)
  hang_on=OP          never answer OP
  crash_on=OP         write a line to stderr, then kill itself with SIGSEGV on OP
  exit_on=OP          write a line to stderr, then exit with status 3 on OP
  garbage_on=OP       answer OP with a line that is not JSON
  wrong_id_on=OP      answer OP with id + 1000
  fatal_on=OP         answer OP with error cuda_error, fatal:true, then exit 1
  big_on=OP           add "blob": "x" * FAKE_WORKER_BIG (default 4 MiB) to OP's result
  no_ready            never send the ready event
  exit_at_start       write an error to stderr and exit 1 before the ready event
  exit_at_restart     the same, but only when FAKE_WORKER_COUNTER shows an earlier start
  noisy               before each answer: 1 MB of junk on stderr and a few log events
  error=CODE          answer every load with error CODE (fatal:false)
  load_fails_after_restart
                      answer load with file_not_found when FAKE_WORKER_COUNTER shows an
                      earlier start (i.e. on a replay after a restart)
  no_cuda             ready event with cuda:false
  no_torch            ready event with torch:null and an import_error
  no_graphs           compile returns no graph (a model that runs eagerly)
FAKE_WORKER_FIXTURE names the Inductor output module that `compile` pretends to capture
(default tests/fixtures/inductor/14_gemm_bias_relu_g0.py).
FAKE_WORKER_COUNTER, if set, names a file that gets one line "start <pid>" per start and one
line "load <path>" per load request received.
"""
import json
import os
import platform
import signal
import struct
import sys
import time

MODES = {}
for item in os.environ.get("FAKE_WORKER_MODE", "ok").split(","):
    item = item.strip()
    if not item:
        continue
    key, _, val = item.partition("=")
    MODES.setdefault(key, []).append(val)

COUNTER = os.environ.get("FAKE_WORKER_COUNTER")
FIXTURE = os.environ.get("FAKE_WORKER_FIXTURE") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "fixtures", "inductor", "14_gemm_bias_relu_g0.py")

# Protocol lines go to the original stdout; everything else printed goes to stderr, as the
# real worker does.
PROTO = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr


def on(mode, op):
    return op in MODES.get(mode, [])


def count(line):
    if COUNTER:
        with open(COUNTER, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def starts_so_far():
    if not COUNTER or not os.path.exists(COUNTER):
        return 0
    with open(COUNTER, encoding="utf-8") as f:
        return sum(1 for ln in f if ln.startswith("start "))


def send(obj):
    PROTO.write(json.dumps(obj, separators=(",", ":")) + "\n")
    PROTO.flush()


def error(rid, code, message, fatal=False):
    send({"id": rid, "ok": False,
          "error": {"code": code, "message": message,
                    "detail": "Traceback (most recent call last):\n  fake\n" + message,
                    "fatal": fatal}})


FIRST_START = starts_so_far() == 0
count("start %d" % os.getpid())

STATE = {"loaded": False}
SHAPE = [16, 32]
NUMEL = SHAPE[0] * SHAPE[1]


def write_tensor(path, dtype, shift=0.0):
    vals = [((i % 37) - 18) * 0.25 + shift for i in range(NUMEL)]
    fmt = {"float32": "<%df", "float64": "<%dd"}[dtype] % NUMEL
    with open(path, "wb") as f:
        f.write(struct.pack(fmt, *vals))
    return {"path": path, "dtype": dtype, "shape": SHAPE, "numel": NUMEL}


def op_ping(req):
    return {}


def op_load(req):
    path = req.get("path")
    if not isinstance(path, str):
        raise BadRequest("load needs a path")
    if MODES.get("error"):
        code = MODES["error"][0]
        return ("error", code, "fake %s for %s" % (code, path))
    if "load_fails_after_restart" in MODES and not FIRST_START:
        return ("error", "file_not_found", "fake: %s vanished" % path)
    STATE["loaded"] = True
    return {"inputs": [{"shape": SHAPE, "dtype": "float32"}], "n_params": 1056,
            "param_bytes": 4224, "outputs": [{"shape": SHAPE, "dtype": "float32"}]}


def op_compile(req):
    out_dir = req.get("out_dir")
    if not isinstance(out_dir, str):
        raise BadRequest("compile needs out_dir")
    os.makedirs(out_dir, exist_ok=True)
    module = os.path.join(out_dir, "graph0.py")
    args = os.path.join(out_dir, "graph0.args.pt")
    if "no_graphs" in MODES:
        return {"compile_s": 0.1, "graphs": []}
    # The "captured" module is a real Inductor output module from the fixtures, so the C
    # core's parser, emitter and profile table run on real text.
    with open(FIXTURE, encoding="utf-8") as src, open(module, "w", encoding="utf-8") as f:
        f.write(src.read())
    with open(args, "wb") as f:
        f.write(b"fake torch.save payload")
    return {"compile_s": 0.5,
            "graphs": [{"index": 0, "module": module, "args": args, "n_args": 4,
                        "arg_sources": ["param:fc.weight", "param:fc.bias", "input:0", "param:bias"]}]}


def module_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, TypeError):
        return ""


def marked(path, marker):
    """Candidate markers (in a candidate's comments, so in the module it was stitched into)
    steer the fake's answers: FAKE_NOCOMPILE, FAKE_WRONG (isolation outputs differ),
    FAKE_RACE (the second candidate run differs), FAKE_MODEL_WRONG (model outputs differ),
    FAKE_FAST (the module times 20% faster), FAKE_CRASH (isolate kills the worker)."""
    return marker in module_text(path)


def op_run(req):
    prefix = req.get("out_prefix")
    if not isinstance(prefix, str):
        raise BadRequest("run needs out_prefix")
    dtype = "float64" if req.get("float64") else "float32"
    target = req.get("target") or {}
    shift = 0.5 if target.get("kind") == "module" and marked(target.get("module"), "FAKE_MODEL_WRONG") else 0.0
    return {"outputs": [write_tensor(prefix + "0.bin", dtype, shift)]}


def op_capture_launch(req):
    out = req.get("out")
    if not isinstance(out, str):
        raise BadRequest("capture_launch needs out")
    with open(out, "wb") as f:
        f.write(b"fake launch arguments")
    arg = {"shape": SHAPE, "stride": [SHAPE[1], 1], "dtype": "float32", "nbytes": NUMEL * 4,
           "storage_bytes": NUMEL * 4}
    return {"args": [arg, arg, arg, {"value": NUMEL}]}


def op_compile_candidate(req):
    if marked(req.get("module"), "FAKE_NOCOMPILE"):
        return {"compiled": False, "error": "CompilationError: at 12:4: fake error"}
    return {"compiled": True}


def fast_module(path):
    pat = os.environ.get("FAKE_FAST_PATTERN")
    text = module_text(path)
    return "FAKE_FAST" in text or bool(pat and pat in text)


def op_bench_kernels(req):
    """Kernel-level screen: the original takes 0.1 ms; a candidate module marked fast (see
    fast_module) 0.08 ms, any other 0.1 ms + 1 us per position in the list."""
    rounds = int(req.get("rounds", 10))
    cands = []
    for k, path in enumerate(req.get("cands") or []):
        if marked(path, "FAKE_NOCOMPILE"):
            cands.append({"error": "CompilationError: fake"})
            continue
        t = 0.08 if fast_module(path) else 0.1 + 0.001 * k
        cands.append([round(t * (1 + 0.001 * (r % 3)), 6) for r in range(rounds)])
    return {"orig": [0.1] * rounds, "cands": cands, "sleep_ms": 0.2, "compile_s": 0.05 * len(cands),
            "compile_threads": 4}


ISOLATE_CALLS = 0   # FAKE_WRONG_FIRST=N: the first N candidates isolated in this process are wrong


def op_isolate(req):
    cand = req.get("cand")
    if marked(cand, "FAKE_CRASH"):
        os.kill(os.getpid(), signal.SIGSEGV)
    roles = req.get("roles") or []
    out_dir = req.get("out_dir")
    os.makedirs(out_dir, exist_ok=True)
    checked = [k for k, r in enumerate(roles) if r in ("out", "inout")]
    global ISOLATE_CALLS
    ISOLATE_CALLS += 1
    wrong_first = int(os.environ.get("FAKE_WRONG_FIRST", "0"))
    wrong = marked(cand, "FAKE_WRONG") or ISOLATE_CALLS <= wrong_first
    race = marked(cand, "FAKE_RACE")
    sets = []
    for name in ["captured"] + ["seed%d" % x for x in req.get("seeds") or []]:
        runs = {}
        for side in ("orig", "cand0", "cand1"):
            shift = (1.0 if wrong and side != "orig" else 0.0) + (0.25 if race and side == "cand1" else 0.0)
            runs[side] = [write_tensor(os.path.join(out_dir, "%s.%s.%d.bin" % (name, side, k)), "float32", shift)
                          for k in checked]
        sets.append({"name": name, "runs": runs})
    return {"sets": sets, "checked": checked}


def op_time(req):
    variants = req.get("variants") or []
    rounds = int(req.get("rounds", 30))
    samples = []
    for k in range(len(variants)):
        v = variants[k] if isinstance(variants[k], dict) else {}
        if v.get("kind") == "module":  # baseline vs candidate modules: FAKE_FAST is 20% faster
            base = 0.8 if fast_module(v.get("module")) else 1.0
        else:
            base = 1.0 / (k + 1)
        samples.append([round(base * (1.0 + 0.01 * ((r * 7 + k) % 5)), 6)
                        for r in range(rounds)])
    return {"samples": samples, "sleep_ms": 0.05}


def op_profile(req):
    """Launches are counted from the instrumented module the core emitted (its
    `_kopt_prof.pre(i` lines), so the answer always matches the module's launches; launch i
    takes (i + 1) * 10 us, every argument is a 16x32 float32 tensor."""
    reps = int(req.get("reps", 20))
    module = req.get("module")
    probes = []
    if isinstance(module, str) and os.path.exists(module):
        with open(module, encoding="utf-8") as f:
            for line in f:
                at = line.find("_kopt_prof.post(")
                if at >= 0:
                    probes.append(probe_items(line[line.index("lambda:", at) + 7:]))
    arg = {"shape": SHAPE, "stride": [SHAPE[1], 1], "dtype": "float32",
           "nbytes": NUMEL * 4, "storage_bytes": NUMEL * 4}
    launches = [{"index": i, "args": [{"value": int(x)} if x.isdigit() else arg for x in items]}
                for i, items in enumerate(probes)]
    n = len(launches)
    times = [[0.010 * (i + 1) + 0.0001 * (r % 3) for i in range(n)] for r in range(reps)]
    return {"launches": launches, "times": times, "total": [sum(t) + 0.002 for t in times]}


def probe_items(text):
    """The top-level items of the probe tuple `(a, f(b, c), 8192,))` as stripped strings."""
    text = text.strip()
    depth, cur, items = 0, "", []
    for ch in text[1:]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur.strip())
    return items


def op_ceilings(req):
    return {"copy_bytes": 2 * 1 << 30, "copy_ms": [0.45, 0.46, 0.44],
            "mm_fp32": {"flops": 2 * 8192 ** 3, "ms": [20.0, 20.1]},
            "mm_bf16": {"flops": 2 * 8192 ** 3, "ms": [1.5, 1.52]}}


class BadRequest(Exception):
    pass


OPS = {"ping": op_ping, "load": op_load, "compile": op_compile, "run": op_run,
       "time": op_time, "profile": op_profile, "ceilings": op_ceilings,
       "capture_launch": op_capture_launch, "compile_candidate": op_compile_candidate,
       "isolate": op_isolate, "bench_kernels": op_bench_kernels}
NEEDS_LOAD = {"compile", "run", "time", "profile", "capture_launch", "isolate", "bench_kernels"}


def be_noisy():
    junk = ("junk from a noisy library " * 4 + "\n").encode()
    total = 0
    while total < 1 << 20:
        os.write(2, junk)
        total += len(junk)
    for i in range(20):
        send({"event": "log", "message": "fake progress %d" % i})


def handle(req):
    rid = req.get("id")
    op = req.get("op")
    if op == "load":
        count("load %s" % req.get("path"))
    if "noisy" in MODES:
        be_noisy()
    if on("hang_on", op):
        while True:
            time.sleep(3600)
    if on("crash_on", op):
        sys.stderr.write("fake worker: about to crash on %s\n" % op)
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(10)
    if on("exit_on", op):
        sys.stderr.write("fake worker: exiting on %s\n" % op)
        sys.stderr.flush()
        os._exit(3)
    if on("garbage_on", op):
        PROTO.write("this is not json {\n")
        PROTO.flush()
        return
    if on("fatal_on", op):
        error(rid, "cuda_error", "CUDA error: an illegal memory access was encountered",
              fatal=True)
        sys.stderr.write("fake worker: CUDA context lost, exiting\n")
        sys.stderr.flush()
        sys.exit(1)
    if on("wrong_id_on", op):
        rid = rid + 1000 if isinstance(rid, int) else 1000
    if op == "shutdown":
        send({"id": rid, "ok": True, "result": {}})
        sys.exit(0)
    fn = OPS.get(op)
    if fn is None:
        error(rid, "bad_request", "unknown op %r" % (op,))
        return
    if op in NEEDS_LOAD and not STATE["loaded"]:
        error(rid, "not_loaded", "'%s' needs a loaded problem" % op)
        return
    try:
        res = fn(req)
    except BadRequest as exc:
        error(rid, "bad_request", str(exc))
        return
    except Exception as exc:  # pragma: no cover - a bug in the fake itself
        error(rid, "internal", "%s: %s" % (type(exc).__name__, exc))
        return
    if isinstance(res, tuple):
        error(rid, res[1], res[2])
        return
    if on("big_on", op):
        res["blob"] = "x" * int(os.environ.get("FAKE_WORKER_BIG", str(4 << 20)))
    send({"id": rid, "ok": True, "result": res})


def main():
    if "exit_at_start" in MODES or ("exit_at_restart" in MODES and not FIRST_START):
        sys.stderr.write("ImportError: fake worker cannot start\n")
        sys.exit(1)
    if "no_ready" in MODES:
        while True:
            time.sleep(3600)
    cuda = "no_cuda" not in MODES
    send({"event": "ready", "protocol": 1, "pid": os.getpid(),
          "python": platform.python_version(),
          "torch": None if "no_torch" in MODES else "2.11.0+fake", "triton": "3.6.0+fake",
          "cuda": cuda, "device": "Fake H200" if cuda else None,
          "capability": [9, 0] if cuda else None, "sm_count": 132 if cuda else None,
          "l2_bytes": 62914560 if cuda else None, "mem_bytes": 150 << 30 if cuda else None,
          "import_error": "No module named 'torch'" if "no_torch" in MODES else None})
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError:
            error(None, "bad_request", "request is not JSON")
            continue
        handle(req)


if __name__ == "__main__":
    main()
