#!/usr/bin/env python3
"""fake_worker.py - a stand-in for worker/kopt_worker.py that speaks protocol 1
(docs/PROTOCOL.md) without torch, for the unit and CLI tests of the C core.

Standard library only. Behaviour is chosen by FAKE_WORKER_MODE, a comma-separated list of:
  ok                  plausible fixed answers to ping/load/compile/run/time/profile/ceilings
                      (the default; `run` keeps its outputs as lists under `keep` -- or writes
                      real float32/float64 .bin files for out_prefix -- and `compare`
                      reduces two kept lists with the worker's statistics, in pure Python)
  oom_on=OP           answer OP with out_of_memory, unless the request says low_memory
  oom_always_on=OP    answer OP with out_of_memory, low_memory or not
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
  odd_triton          ready event whose triton version is not a version string (quote, spaces)
  no_graphs           compile returns no graph (a model that runs eagerly)
  no_triton           compile (every mode) captures a module without a Triton kernel: the
                      aten fallback of avg_pool3d that Inductor wrote on an H200
                      (fixtures/inductor/suite_level1_38_avg_pool3d_g0.py; FAKE_NO_TRITON_FIXTURE
                      names another)
FAKE_WORKER_FIXTURE names the Inductor output module that `compile` pretends to capture
(default tests/fixtures/inductor/14_gemm_bias_relu_g0.py); FAKE_WORKER_FIXTURE_MA the one of
mode max-autotune (default the same). FAKE_MA_HANG makes the max-autotune compile hang;
FAKE_COMPILE_SLEEP=S makes every compile take S seconds. FAKE_CONFIGS (JSON) is what `profile`
answers as "configs": the launch configuration each kernel settled on.
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

NO_TRITON_FIXTURE = os.environ.get("FAKE_NO_TRITON_FIXTURE") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "fixtures", "inductor", "suite_level1_38_avg_pool3d_g0.py")

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
KEPT = {}           # name -> (dtype, [values]) of `run ... keep`
TAMPERED = set()   # kept names a FAKE_TAMPER_REF3 module wrote into
SHAPE = [16, 32]
NUMEL = SHAPE[0] * SHAPE[1]
# Memory accounting as the worker's (kopt.memory, PROTOCOL.md "Memory phases"): a fixed peak per
# phase for kopt's own work, and EAGER_BYTES (the eager model's unfused intermediates) in the
# phase of every request that ran the eager model in its own dtypes -- a `run` of the eager
# target without float64, a `time` of it, and `load` (which switches to "eager" itself, as the
# worker does). The core sends those in "eager": one sent in "main" would raise the main peak
# that the CLI tests check exactly. PEAK_BY_OP names them "op/phase" off main.
EAGER_BYTES = 5 * NUMEL * 4 + (1 << 21)
PEAKS = {"main": 3 * NUMEL * 4 + (1 << 20), "eager": 0, "f64": 6 * NUMEL * 4, "ceilings": 1 << 30,
         "inputs": 2 * NUMEL * 4}
PEAK_BY_OP = {}


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
            "param_bytes": 4224, "buffer_bytes": 0, "input_bytes": NUMEL * 4,
            "output_bytes": NUMEL * 4, "mutates_inputs": False,
            "outputs": [{"shape": SHAPE, "dtype": "float32"}]}


def op_compile(req):
    out_dir = req.get("out_dir")
    if not isinstance(out_dir, str):
        raise BadRequest("compile needs out_dir")
    os.makedirs(out_dir, exist_ok=True)
    module = os.path.join(out_dir, "graph0.py")
    args = os.path.join(out_dir, "graph0.args.pt")
    if "no_graphs" in MODES:
        return {"compile_s": 0.1, "graphs": []}
    mode = req.get("mode", "default")
    if mode != "default" and os.environ.get("FAKE_MA_HANG"):
        time.sleep(3600)
    time.sleep(float(os.environ.get("FAKE_COMPILE_SLEEP", "0")))
    # The "captured" module is a real Inductor output module from the fixtures, so the C
    # core's parser, emitter and profile table run on real text. FAKE_WORKER_FIXTURE_MA
    # names the module max-autotune "captures" (default: the same fixture).
    fixture = os.environ.get("FAKE_WORKER_FIXTURE_MA") if mode != "default" else None
    if "no_triton" in MODES:
        fixture = NO_TRITON_FIXTURE
    with open(fixture or FIXTURE, encoding="utf-8") as src, open(module, "w", encoding="utf-8") as f:
        f.write(src.read())
    sources = ["param:fc.weight", "param:fc.bias", "input:0", "param:bias"]
    with open(args, "wb") as f:
        f.write(b"fake torch.save payload")
    with open(args[:-3] + ".json", "w", encoding="utf-8") as f:
        json.dump({"sources": sources}, f)
    ws = {"input_bytes": NUMEL * 4, "param_bytes": 4224, "buffer_bytes": 0, "run_bytes": 2 * NUMEL * 4}
    ws["total_bytes"] = sum(ws.values())
    return {"compile_s": 0.5, "working_set": ws,
            "graphs": [{"index": 0, "module": module, "args": args, "n_args": 4,
                        "arg_sources": sources}]}


def module_text(path):
    """The module's text, with the texts of the candidates a judged module names appended."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, TypeError):
        return ""
    return text + "\n" + judged_text(text) if "# kopt-judged-from: " in text else text


def judged_text(text):
    """The candidate files a judged module (gates run from gate 1's cubins, so the candidate's
    text is not in it) names in its `# kopt-judged-from: PATH sha256=...` lines: their texts, so
    that the candidate's markers steer the fake as they do for a stitched module."""
    out = []
    for line in text.splitlines():
        if line.startswith("# kopt-judged-from: "):
            p = line[len("# kopt-judged-from: "):].rsplit(" sha256=", 1)[0]
            try:
                with open(p) as f:
                    out.append(f.read())
            except OSError:
                pass
    return "\n".join(out)


def marked(path, marker):
    """Candidate markers (in a candidate's comments, so in the module it was stitched into)
    steer the fake's answers: FAKE_NOCOMPILE, FAKE_WRONG (isolation outputs differ),
    FAKE_RACE (the second candidate run differs), FAKE_MODEL_WRONG (model outputs differ),
    FAKE_FAST (the module times 20% faster), FAKE_CRASH (isolate kills the worker),
    FAKE_TAMPER_REF (gate 2's kept reference changes while it runs), FAKE_TAMPER_REF3 (the
    module's run changes every output kept in the worker, its own kept outputs included: gate 3
    runs the candidate before its references exist, so only its own are there to change)."""
    return marker in module_text(path)


def values(shift=0.0):
    return [((i % 37) - 18) * 0.25 + shift for i in range(NUMEL)]


def op_run(req):
    prefix = req.get("out_prefix")
    keep = req.get("keep")
    # FAKE_OUT_DTYPE: the dtype the model's outputs report (bfloat16: a half-precision model);
    # FAKE_F64_FAILS: the eager model raises in float64
    dtype = "float64" if req.get("float64") else os.environ.get("FAKE_OUT_DTYPE", "float32")
    target = req.get("target") or {}
    if req.get("float64") and target.get("kind") == "eager" and os.environ.get("FAKE_F64_FAILS"):
        return (None, "model_raised", "RuntimeError: \"addmm_cuda\" not implemented for 'Double' (fake)")
    module = target.get("module") if target.get("kind") == "module" else None
    shift = 0.5 if module and marked(module, "FAKE_MODEL_WRONG") else 0.0
    if module and req.get("transform") and marked(module, "FAKE_ADV_WRONG"):
        shift = 0.5   # right on N(0,1)-like inputs, wrong on gate 3's adversarial sets
    res = {"run_bytes": NUMEL * 8}
    if isinstance(prefix, str):
        res["outputs"] = [write_tensor(prefix + "0.bin", dtype, shift)]
    else:
        res["outputs"] = [{"shape": SHAPE, "dtype": dtype}]
    if module and marked(module, "FAKE_TAMPER_REF3"):
        TAMPERED.update(KEPT)   # its kernel wrote into every output kept in the worker...
    if isinstance(keep, str):
        KEPT[keep] = (dtype, values(shift))
        TAMPERED.discard(keep)
        if module and marked(module, "FAKE_TAMPER_REF3"):
            TAMPERED.add(keep)   # ...and into its own outputs after they were kept
        res["staged"] = bool(req.get("low_memory"))
    res["inputs_changed"] = [2] if module and marked(module, "FAKE_MUTATE\n") else []
    if target.get("kind") == "module":
        res["loaded_inputs_changed"] = []
    return res


def fnum(x):
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return x


def compare_stats(ref, got, atol, rtol, dtype="float32", rel_err=None):
    """The worker's kopt.compare.compare_stats over two value lists (same shape)."""
    st = {"shape_mismatch": False, "shape": SHAPE, "numel": NUMEL, "dtype": dtype, "got_dtype": dtype,
          "n_mismatch": 0, "n_nonfinite_mismatch": 0, "first_mismatch": None,
          "first_nonfinite_mismatch": None, "max_abs_err": 0.0, "max_abs_index": None,
          "ref_at_max_abs": None, "got_at_max_abs": None, "max_rel_err": 0.0, "max_rel_index": None,
          "ref_at_first": None, "got_at_first": None, "ref_at_first_nonfinite": None,
          "got_at_first_nonfinite": None, "ref_abs_max": 0.0, "sum_sq_ref": 0.0, "sum_sq_diff": 0.0,
          "atol": atol, "rtol": rtol}
    inf = float("inf")
    if rel_err is not None:
        amax = max([abs(r) for r in ref if abs(r) != inf and r == r] or [0.0])
        floor = max(float(rel_err[1]), float(rel_err[2]) * amax)
        st.update(n_rel_err=0, rel_err_thr=float(rel_err[0]), rel_err_floor=floor)
    for i, (r, g) in enumerate(zip(ref, got)):
        rf, gf = abs(r) != inf and r == r, abs(g) != inf and g == g
        if rf:
            st["ref_abs_max"] = max(st["ref_abs_max"], abs(r))
        if rf and gf:
            d = abs(g - r)
            bad = d > atol + rtol * abs(r)
            if d > st["max_abs_err"]:
                st.update(max_abs_err=d, max_abs_index=i, ref_at_max_abs=r, got_at_max_abs=g)
            if r != 0 and d / abs(r) > st["max_rel_err"]:
                st.update(max_rel_err=d / abs(r), max_rel_index=i)
            if rel_err is not None and d > max(float(rel_err[0]) * abs(r), st["rel_err_floor"]):
                st["n_rel_err"] += 1
            st["sum_sq_diff"] += d * d
            st["sum_sq_ref"] += r * r
            nonfin = False
        else:
            same = (r != r and g != g) or r == g
            bad = nonfin = not same
        if bad:
            st["n_mismatch"] += 1
            if st["first_mismatch"] is None:
                st.update(first_mismatch=i, ref_at_first=fnum(r), got_at_first=fnum(g))
        if nonfin:
            st["n_nonfinite_mismatch"] += 1
            if st["first_nonfinite_mismatch"] is None:
                st.update(first_nonfinite_mismatch=i, ref_at_first_nonfinite=fnum(r),
                          got_at_first_nonfinite=fnum(g))
    return st


def op_compare(req):
    ref, got = KEPT.get(req.get("ref")), KEPT.get(req.get("got"))
    if ref is None or got is None:
        raise BadRequest("nothing is kept under '%s' or '%s'" % (req.get("ref"), req.get("got")))
    changed = [n for n in (req.get("ref"), req.get("got")) if n in TAMPERED]
    if changed:
        return {"outputs": [], "count_mismatch": False, "reference_changed": True, "changed": changed}
    tols = req.get("tols") or [[req.get("atol", 0), req.get("rtol", 0)]]
    atol, rtol = tols[0]
    return {"outputs": [compare_stats(ref[1], got[1], float(atol), float(rtol), ref[0], req.get("rel_err"))],
            "count_mismatch": False, "reference_changed": False}


def op_drop(req):
    for n in req.get("names") or []:
        KEPT.pop(n, None)
        TAMPERED.discard(n)
    return {"kept": sorted(KEPT)}


def account(req):
    """Credits a successful request that ran the eager model (see PEAKS) to its phase and op."""
    op, phase = req.get("op"), req.get("phase", "main")
    if phase not in PEAKS:
        phase = "main"
    if op == "run":
        eager = (req.get("target") or {}).get("kind") == "eager" and not req.get("float64")
    elif op == "time":
        eager = any(isinstance(v, dict) and v.get("kind") == "eager" for v in req.get("variants") or [])
    else:
        eager = op == "load"
    if op == "load":
        phase = "eager"
    if eager:
        PEAKS[phase] = max(PEAKS[phase], EAGER_BYTES)
        name = op if phase == "main" else "%s/%s" % (op, phase)
        PEAK_BY_OP[name] = max(PEAK_BY_OP.get(name, 0), EAGER_BYTES)


def op_resources(req):
    return {"peak_reserved": dict(PEAKS), "peak_reserved_by_op": dict(PEAK_BY_OP),
            "peak_allocated_by_op": {n: b // 2 for n, b in PEAK_BY_OP.items()},
            "context_bytes": 500 << 20, "reserved_bytes": 0, "allocated_bytes": 0,
            "free_bytes": 140 << 30, "total_bytes": 150 << 30, "compile_cache_bytes": 12345}


def op_limits(req):
    cap = req.get("memory_cap_bytes")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float)) or cap < 0):
        raise BadRequest("memory_cap_bytes must be a non-negative number or null")
    return {"memory_cap_bytes": int(cap) if cap else None,
            "alloc_cap_bytes": max(0, int(cap) - (500 << 20)) if cap else None, "context_bytes": 500 << 20}


def op_env(req):
    """Test-only: the names in this process's environment and where this Python keeps its
    bytecode (the real worker has no such op)."""
    return {"names": sorted(os.environ), "pycache_prefix": sys.pycache_prefix,
            "dont_write_bytecode": bool(sys.flags.dont_write_bytecode)}


def check_spec(spec):
    """A launch spec as the real worker requires it (module, args, launch, roles)."""
    if not (isinstance(spec, dict) and isinstance(spec.get("module"), str)
            and isinstance(spec.get("args"), str) and isinstance(spec.get("launch"), int)):
        raise BadRequest("launch_args must be a launch spec {module, args, launch, roles}")


def op_capture_launch(req):
    check_spec(req)
    # FAKE_CAPTURE_DTYPE: the tensors' dtype the capture reports (gate 1's machine-code check)
    arg = {"shape": SHAPE, "stride": [SHAPE[1], 1], "dtype": os.environ.get("FAKE_CAPTURE_DTYPE", "float32"),
           "nbytes": NUMEL * 4,
           "storage_bytes": NUMEL * 4, "device": "cuda"}
    return {"args": [arg, arg, arg, {"value": NUMEL}]}


def op_compile_candidate(req):
    check_spec(req.get("launch_args"))
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
    check_spec(req.get("launch_args"))
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
    if marked(cand, "FAKE_HANG"):
        time.sleep(3600)
    check_spec(req.get("launch_args"))
    mc_log = os.environ.get("FAKE_MEMCHECK_LOG")
    if mc_log:   # under tests/fake_sanitizer.sh: one report for an out-of-bounds candidate
        with open(mc_log, "a", encoding="utf-8") as f:
            f.write("========= Invalid __global__ read of size 4 bytes\n")
            if marked(cand, "FAKE_OOB"):
                f.write("=========     at _kopt_%s__k+0x1b0 in %s:12\n" % (req.get("kernel"), cand))
            else:   # an error outside the candidate: recorded, not held against it
                f.write("=========     at triton_poi_other_kernel+0x70\n")
            f.write("=========     by thread (31,0,0) in block (4,0,0)\n=========     Address 0x7f0012 is out of bounds\n=========\n")
    roles = req.get("roles") or []
    tol = req.get("tol") or {}
    checked = [k for k, r in enumerate(roles) if r in ("out", "inout")]
    global ISOLATE_CALLS
    ISOLATE_CALLS += 1
    wrong_first = int(os.environ.get("FAKE_WRONG_FIRST", "0"))
    wrong = marked(cand, "FAKE_WRONG") or ISOLATE_CALLS <= wrong_first
    race = marked(cand, "FAKE_RACE")
    writes_input = marked(cand, "FAKE_WRITES_INPUT")
    atol, rtol = (tol.get("float32") or [0, 0])
    sets = []
    for name in ["captured"] + ["seed%d" % x for x in req.get("seeds") or []]:
        ref = values()
        args = []
        for k in checked:
            runs = []
            for r in range(int(req.get("repeat", 2))):
                shift = (1.0 if wrong else 0.0) + (0.25 if race and r == 1 else 0.0)
                runs.append(compare_stats(ref, values(shift), float(atol), float(rtol)))
            args.append({"arg": k, "runs": runs})
        ins = [k for k, r in enumerate(roles) if r == "in"]
        sets.append({"name": name, "args": args, "inputs_changed": ins[:1] if writes_input else [],
                     "reference_changed": marked(cand, "FAKE_TAMPER_REF\n")})
    return {"sets": sets, "checked": checked}


def is_final(req, variants):
    """A time request with host rounds of modules only among which are both compiler modules
    (max-autotune's module text says 'max_autotune': True, default's and modules stitched into
    it False): only the final measurement asks that (setup's baselines take no host rounds;
    gate 4 times the start module against a candidate stitched into it)."""
    if not int(req.get("host_rounds", 0)) or not variants or not all(isinstance(v, dict) and v.get("kind") == "module" for v in variants):
        return False
    ma = ["'max_autotune': True" in module_text(v.get("module")) for v in variants]
    return any(ma) and not all(ma)


HOST_TIMED = set()   # modules whose host-inclusive time was taken (FAKE_ONCE_HOST_SLOW)
FINAL_HOST_TIMED = []   # non-empty once the final measurement's host rounds were taken (FAKE_FINAL_ONCE_HOST_SLOW)


def op_time(req):
    variants = req.get("variants") or []
    rounds = int(req.get("rounds", 30))
    samples, bases = [], []
    # FAKE_FINAL_SLOW: in the final measurement every module after the first (default's) is 1.5x
    # slower -- the output and max-autotune's are then behind default's
    final_slow = bool(os.environ.get("FAKE_FINAL_SLOW")) and is_final(req, variants)
    # FAKE_FINAL_HOST_SLOW: the same as the model is called only (host samples 2 ms more), the
    # GPU samples as they are
    final_host_slow = bool(os.environ.get("FAKE_FINAL_HOST_SLOW")) and is_final(req, variants)
    # FAKE_FINAL_ONCE_HOST_SLOW: the same in the final measurement's first host rounds only (a
    # transient: the rounds added after them are not slower)
    if os.environ.get("FAKE_FINAL_ONCE_HOST_SLOW") and is_final(req, variants) and not FINAL_HOST_TIMED:
        FINAL_HOST_TIMED.append(1)
        final_host_slow = True
    # FAKE_FINAL_STALE: in the final measurement the modules of kopt's making (neither compiler
    # module) return stale outputs in the re-checked rounds: honest while the gates watched;
    # FAKE_FINAL_STALE=ma: max-autotune's module does instead (its rounds are not the output's)
    final_stale = os.environ.get("FAKE_FINAL_STALE") if is_final(req, variants) else None
    for k in range(len(variants)):
        v = variants[k] if isinstance(variants[k], dict) else {}
        if v.get("kind") == "module":  # baseline vs candidate modules: FAKE_FAST is 20% faster
            base = 0.8 if fast_module(v.get("module")) else 1.0
            fp = os.environ.get("FAKE_FASTER_PATTERN")   # 30% faster: to rank two fast candidates
            if fp and fp in module_text(v.get("module")):
                base = 0.7
            if os.environ.get("FAKE_MA_FAST") and "/compile-max-autotune/" in str(v.get("module")):
                base = min(base, 0.9)   # max-autotune's own module 10% faster: the search starts there
            if marked(v.get("module"), "FAKE_IMPOSSIBLE"):
                base = 0.01    # 100x: below any memory floor of a large model
            if final_slow and k > 0:
                base *= 1.5
        else:
            base = 1.0 / (k + 1)
        bases.append(base)
        samples.append([round(base * (1.0 + 0.01 * ((r * 7 + k) % 5)), 6)
                        for r in range(rounds)])
    res = {"samples": samples, "sleep_ms": 0.05}
    if os.environ.get("FAKE_LATE_ROUNDS"):   # the worker's host fell behind its stall in that many rounds
        res["rounds_timed_again"] = int(os.environ["FAKE_LATE_ROUNDS"])
    hr = int(req.get("host_rounds", 0))
    if hr:   # host-inclusive: the GPU figures plus 0.1 ms of dispatch; FAKE_HOST_SLOW adds 2 ms,
        # FAKE_ONCE_HOST_SLOW 2 ms in the first host timing of that module only (a transient)
        def host_extra(k):
            v = variants[k] if isinstance(variants[k], dict) else {}
            extra = 2.0 if marked(v.get("module"), "FAKE_HOST_SLOW") else 0.0
            hsp = os.environ.get("FAKE_HOST_SLOW_PATTERN")   # the same for every module holding it
            if hsp and hsp in module_text(v.get("module")):
                extra = 2.0
            if marked(v.get("module"), "FAKE_ONCE_HOST_SLOW"):
                extra += 0.0 if v.get("module") in HOST_TIMED else 2.0
                HOST_TIMED.add(v.get("module"))
            return extra + (2.0 if final_host_slow and k > 0 else 0.0)
        res["host_samples"] = []
        for k in range(len(variants)):
            extra = host_extra(k)
            res["host_samples"].append([round(bases[k] * (1.0 + 0.01 * ((r * 7 + k) % 5)) + 0.1 + extra, 6)
                                        for r in range(hr)])
    if int(req.get("warmup", 5)):   # host enqueue time: 0.1 ms, FAKE_HOST_SLOW's 2 ms more
        res["enqueue_ms"] = [0.1 + (2.0 if isinstance(v, dict) and marked(v.get("module"), "FAKE_HOST_SLOW") else 0.0)
                             for v in variants]
    if any(isinstance(v, dict) and v.get("kind") == "module" and marked(v.get("module"), "FAKE_MUTATE_TIMED")
           for v in variants):
        res["loaded_inputs_changed"] = [0]
    if any(isinstance(v, dict) and v.get("kind") == "module" and marked(v.get("module"), "FAKE_STATE_TIMED")
           for v in variants):   # the weights cannot be drawn again: fatal, the worker exits
        return ("error", "state_changed", "a timed module wrote to the model's parameters or buffers (fc.weight); "
                "the worker restarts to restore them", True)
    if req.get("fresh_inputs") and "fresh_unusable" in MODES:   # the problem's model refuses rotated inputs
        res["fresh_inputs"] = {"unusable": "the baseline raised on rotated inputs: inputs must be sorted"}
        res["rechecks"] = []
    elif req.get("fresh_inputs") and "no_rechecks" not in MODES:   # rotated inputs; the first rounds re-checked
        # rounds compared with variant 0's: rounding only (3 exact differences), or, for a module
        # marked FAKE_STALE_TIMED (results kept from contents seen before), 1000 of 1024 elements off
        # (the same in the as-called rounds re-checked, host_recheck_rounds; FAKE_STALE_HOST: stale
        # there only -- a kernel that cheats only where no stall precedes it; FAKE_STALE_ADDED: only
        # in the as-called rounds added after the first, the timing of one stalled round)
        res["fresh_inputs"] = {"rotated": [0], "skipped": []}
        res["rechecks"] = []
        checked = [(r, False) for r in range(min(rounds, int(req.get("recheck_rounds") or 0)))]
        checked += [(r, True) for r in range(min(hr, int(req.get("host_recheck_rounds") or 0)))]
        for r, host in checked:
            for k in range(1, len(variants)):
                v = variants[k] if isinstance(variants[k], dict) else {}
                path = str(v.get("module"))
                stale = "/compile-max-autotune/" in path if final_stale == "ma" else "/compile-" not in path
                off = 1000 if (marked(v.get("module"), "FAKE_STALE_TIMED") or (final_stale and stale) or
                               (host and marked(v.get("module"), "FAKE_STALE_HOST")) or
                               (host and rounds == 1 and marked(v.get("module"), "FAKE_STALE_ADDED"))) else 0
                outs = [{"numel": 1024, "n_mismatch": 3 + off, "n_rel_err": off, "n_nonfinite_mismatch": 0,
                         "dtype": "float32"}]
                if marked(v.get("module"), "FAKE_STALE_INDICES"):   # integer outputs: exact counts decide
                    outs.append({"numel": 64, "n_mismatch": 50, "n_rel_err": 0, "n_nonfinite_mismatch": 0,
                                 "dtype": "int64"})
                e = {"round": r, "variant": k, "outputs": outs}
                if host:
                    e["host"] = True
                res["rechecks"].append(e)
    return res


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
    nbytes = int(NUMEL * 4 * float(os.environ.get("FAKE_BYTES_SCALE", "1")))   # a larger model
    arg = {"shape": SHAPE, "stride": [SHAPE[1], 1], "dtype": "float32",
           "nbytes": nbytes, "storage_bytes": nbytes}
    launches = [{"index": i, "args": [{"value": int(x)} if x.isdigit() else arg for x in items]}
                for i, items in enumerate(probes)]
    n = len(launches)
    unit = float(os.environ.get("FAKE_LAUNCH_MS", "0.010"))   # launch i takes (i + 1) * unit ms
    times = [[unit * (i + 1) + 0.0001 * (r % 3) for i in range(n)] for r in range(reps)]
    res = {"launches": launches, "times": times, "total": [sum(t) + 0.002 for t in times]}
    if os.environ.get("FAKE_BYTES_SCALE"):   # a large model: call() takes what `time` says (1 ms)
        res["total"] = [1.0 for _ in times]
    if os.environ.get("FAKE_CONFIGS"):   # the configurations the kernels settled on (JSON)
        res["configs"] = json.loads(os.environ["FAKE_CONFIGS"])
    return res


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
            "read_bytes": 1 << 30, "read_ms": [0.22, 0.22, 0.23],
            "write_bytes": 1 << 30, "write_ms": [0.24, 0.24, 0.25],
            "mm_fp32": {"flops": 2 * 8192 ** 3, "ms": [20.0, 20.1]},
            "mm_tf32": {"flops": 2 * 8192 ** 3, "ms": [2.7, 2.72]},
            "mm_bf16": {"flops": 2 * 8192 ** 3, "ms": [1.5, 1.52]},
            "tf32": {"matmul": False, "cudnn": True}}


class BadRequest(Exception):
    pass


OPS = {"ping": op_ping, "load": op_load, "compile": op_compile, "run": op_run,
       "time": op_time, "profile": op_profile, "ceilings": op_ceilings,
       "capture_launch": op_capture_launch, "compile_candidate": op_compile_candidate,
       "isolate": op_isolate, "bench_kernels": op_bench_kernels, "compare": op_compare,
       "drop": op_drop, "resources": op_resources, "limits": op_limits, "env": op_env}
NEEDS_LOAD = {"compile", "run", "time", "profile", "capture_launch", "isolate", "bench_kernels",
              "compare"}


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
    if os.environ.get("FAKE_REQ_LOG") and op in ("run", "time"):   # what the core asked
        with open(os.environ["FAKE_REQ_LOG"], "a") as f:
            if op == "run":
                f.write(json.dumps({"op": op, "keep": req.get("keep"), "phase": req.get("phase"),
                                    "kind": (req.get("target") or {}).get("kind"),
                                    "candidate": req.get("candidate")}) + "\n")
            else:
                f.write(json.dumps({"op": op, "variants": [v.get("module", v.get("kind"))
                                                           for v in req.get("variants") or []],
                                    "fresh_inputs": req.get("fresh_inputs"), "recheck_rounds": req.get("recheck_rounds"),
                                    "recheck_rel": req.get("recheck_rel"), "host_rounds": req.get("host_rounds"),
                                    "host_recheck_rounds": req.get("host_recheck_rounds")}) + "\n")
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
    if on("oom_always_on", op) or (on("oom_on", op) and not req.get("low_memory")):
        error(rid, "out_of_memory", "OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB (fake)")
        return
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
    if isinstance(res, tuple):   # ("error", code, message[, fatal]): a fatal one ends the worker
        error(rid, res[1], res[2], fatal=len(res) > 3 and res[3])
        if len(res) > 3 and res[3]:
            sys.exit(1)
        return
    account(req)
    if on("big_on", op):
        res["blob"] = "x" * int(os.environ.get("FAKE_WORKER_BIG", str(4 << 20)))
    send({"id": rid, "ok": True, "result": res})


def main():
    if os.environ.get("FAKE_ENV_DUMP"):   # the names of the environment kopt gave the worker
        with open(os.environ["FAKE_ENV_DUMP"], "w") as f:
            f.write("\n".join(sorted(os.environ)) + "\n")
    if "exit_at_start" in MODES or ("exit_at_restart" in MODES and not FIRST_START):
        sys.stderr.write("ImportError: fake worker cannot start\n")
        sys.exit(1)
    if "no_ready" in MODES:
        while True:
            time.sleep(3600)
    cuda = "no_cuda" not in MODES
    send({"event": "ready", "protocol": 1, "pid": os.getpid(),
          "python": platform.python_version(),
          "torch": None if "no_torch" in MODES else "2.11.0+fake",
          "triton": "3.6'; import os" if "odd_triton" in MODES else "3.6.0+fake",
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
