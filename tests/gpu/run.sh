#!/usr/bin/env bash
# The GPU suite (`make gpu-test`): needs an NVIDIA GPU and a python3 with torch + triton.
# For every example problem: `kopt inspect --json` must succeed, per-launch GPU times must add up
# to within 10% of the compiled model's measured GPU time, and the emitted (round-tripped)
# module must run and give the captured module's outputs. Malformed problems must fail with
# their distinct exit codes. Results go to $KOPT_GPU_OUT (default build/gpu-test).
set -u
cd "$(dirname "$0")/../.."
KOPT=${KOPT:-build/kopt}
OUTD=${KOPT_GPU_OUT:-build/gpu-test}
mkdir -p "$OUTD"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "PASS $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }

SUITES=${KOPT_GPU_SUITES:-worker templates machine inspect errors verify optimize llm}
want() { case " $SUITES " in *" $1 "*) return 0;; esac; return 1; }

# the worker's GPU-only helpers (content checksums on the GPU and of host-staged tensors)
if want worker; then
  if msg=$(python3 tests/gpu/check_worker.py 2>&1); then ok "worker: $msg"; else bad "worker: $msg"; fi
fi

# the machine code kopt's sandbox compiles and judges is the code Triton's JIT runs for the launch
if want machine; then
  if msg=$(KOPT="$KOPT" python3 tests/gpu/check_sass_match.py 2>&1); then ok "machine: $msg"
  else bad "machine: $(echo "$msg" | tail -3)"; fi
  # ... and that machine code, loaded with no candidate Python, computes what the JIT's launch does
  if msg=$(KOPT="$KOPT" python3 tests/gpu/check_cubin_load.py 2>&1); then ok "machine: $msg"
  else bad "machine: $(echo "$msg" | tail -3)"; fi
fi
# the split templates with several programs a row or column (the interpreter runs one at a time)
if want templates; then
  if msg=$(KOPT="$KOPT" python3 tests/gpu/check_split_softmax.py 2>&1); then ok "templates: $msg"
  else bad "templates: $(echo "$msg" | tail -3)"; fi
fi

want inspect && for p in ${KOPT_GPU_PROBLEMS:-tests/problems/*.py}; do
  n=$(basename "$p" .py)
  t0=$SECONDS
  "$KOPT" inspect "$p" --json -o "$OUTD/$n" --reps ${KOPT_GPU_REPS:-15} --rounds ${KOPT_GPU_ROUNDS:-15} \
      >"$OUTD/$n.json" 2>"$OUTD/$n.err"
  rc=$?
  dt=$((SECONDS - t0))
  if [ $rc -ne 0 ]; then bad "inspect $n: exit $rc: $(tail -2 "$OUTD/$n.err")"; continue; fi
  if msg=$(python3 tests/gpu/check_inspect.py "$OUTD/$n.json"); then ok "inspect $n (${dt}s): $msg"
  else bad "inspect $n: $msg"; fi
done

expect() {  # expect <exit code> <problem> <what>
  "$KOPT" inspect "$2" >"$OUTD/bad.out" 2>"$OUTD/bad.err"
  rc=$?
  lines=$(wc -l <"$OUTD/bad.err")
  if [ "$rc" -eq "$1" ] && ! grep -q Traceback "$OUTD/bad.err"; then ok "$3 -> exit $rc: $(head -1 "$OUTD/bad.err")"
  else bad "$3: expected exit $1, got $rc ($lines stderr lines): $(head -3 "$OUTD/bad.err")"; fi
}
if want errors; then
  expect 3 tests/problems/bad/does_not_exist.py "missing file"
  expect 4 tests/problems/bad/syntax_error.py "syntax error"
  expect 4 tests/problems/bad/no_model.py "no Model"
  expect 4 tests/problems/bad/no_get_inputs.py "no get_inputs"
  expect 4 tests/problems/bad/non_tensor_inputs.py "inputs not tensors"
  expect 5 tests/problems/bad/init_raises.py "constructor raises"
  expect 5 tests/problems/bad/forward_raises.py "forward raises"
  expect 8 tests/problems/bad/only_matmul.py "only vendor calls"
  expect 8 tests/problems/bad/lstm.py "nothing compiled (LSTM)"
  KOPT_PYTHON=/nonexistent/python3 expect 9 tests/problems/01_gelu_residual.py "no python"
  CUDA_VISIBLE_DEVICES= expect 6 tests/problems/01_gelu_residual.py "no CUDA device"
fi
# The four-gate cascade on the project's candidate suite: every candidate must be accepted or
# refused exactly as its `# expect:` line says; an accepted module must load and run from a
# fresh Python process and match the eager model.
if want verify; then
  for d in tests/candidates/[0-9]*/; do
    n=$(basename "$d")
    case " ${KOPT_GPU_VERIFY:-$n} " in *" $n "*) ;; *) continue;; esac   # KOPT_GPU_VERIFY="03_log_softmax ..." narrows
    fx=tests/fixtures/inductor/${n}_g0.py
    cands=("$d"*.py)
    # static-rule candidates bound to this model (by its recorded Inductor module, where there is one)
    [ -f "$fx" ] && for s in tests/candidates/static/*.py; do
      k=$(sed -n 's/^# kopt-candidate: replaces=//p' "$s")
      grep -q "^$k = async_compile" "$fx" && cands+=("$s")
    done
    args=(); for c in "${cands[@]}"; do args+=(--candidate "$c"); done
    t0=$SECONDS
    # --allow-launcher: the form-L attacks are judged with their launcher allowed, so that each is
    # refused by the rule it targets (without it every form-L file is refused by rule launcher)
    # gate 2's compute-sanitizer memcheck on the folders whose attacks need it (a second worker,
    # slower: not on every folder); KOPT_GPU_MEMCHECK=all runs it everywhere (false reports on the
    # honest controls of every kernel family, and its cost)
    case " ${KOPT_GPU_MEMCHECK:-01_gelu_residual} " in *" $n "*|" all ") args+=(--memcheck);; esac
    "$KOPT" verify "tests/problems/$n.py" "${args[@]}" --allow-launcher -o "$OUTD/verify-$n" --timeout 45 --json >"$OUTD/verify-$n.json" 2>"$OUTD/verify-$n.err"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 12 ]; then bad "verify $n: exit $rc: $(tail -2 "$OUTD/verify-$n.err")"; continue; fi
    if python3 tests/candidates/check_expect.py "$OUTD/verify-$n.json" >"$OUTD/verify-$n.expect"; then
      ok "verify $n ($((SECONDS - t0))s): $(tail -1 "$OUTD/verify-$n.expect")"
    else
      bad "verify $n: $(grep FAIL "$OUTD/verify-$n.expect" | head -5)"
    fi
    sed 's/^/    /' "$OUTD/verify-$n.expect" | grep -v "verify expectations"
    if [ $rc -eq 0 ]; then
      if msg=$(python3 tests/gpu/check_loader.py "tests/problems/$n.py" "$OUTD/verify-$n" 2>&1); then ok "loader $n: $msg"
      else bad "loader $n: $(echo "$msg" | tail -3)"; fi
    fi
  done
fi

# kopt optimize end to end on a problem where a rewrite is known to win (log-softmax): the
# result must be faster with its 95% interval above 1, and load from a fresh process.
if want optimize; then
  t0=$SECONDS
  "$KOPT" optimize tests/problems/03_log_softmax.py -o "$OUTD/optimize-03" --budget 60s --no-store --json \
      >"$OUTD/optimize-03.json" 2>"$OUTD/optimize-03.err"
  rc=$?
  if [ $rc -eq 0 ] && python3 - "$OUTD/optimize-03/report.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["model"]["speedup"]
if not (d["outcome"] == "optimized" and s["ci95_lo"] > 1.0):
    print("  final_pick: %s" % json.dumps(d["model"].get("final_pick"))[:600])
    sys.exit("optimize 03: %s %s" % (d["outcome"], s))
print("optimize 03_log_softmax: %.3fx [%.3f, %.3f]" % (s["estimate"], s["ci95_lo"], s["ci95_hi"]))
PY
  then ok "optimize 03_log_softmax ($((SECONDS - t0))s)"
    if msg=$(python3 tests/gpu/check_loader.py tests/problems/03_log_softmax.py "$OUTD/optimize-03" 2>&1); then ok "optimize loader: $msg"
    else bad "optimize loader: $(echo "$msg" | tail -3)"; fi
  else bad "optimize 03_log_softmax: exit $rc: $(tail -3 "$OUTD/optimize-03.err")"
    # what each attempt got: a slow machine or a gate that refuses too much
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print("  attempt", json.dumps(a)[:500]) for a in d.get("attempts", [])]' \
      "$OUTD/optimize-03.json" 2>&1 | head -40
  fi
fi

# The LLM path on the GPU: the scripted server plays planner and executor; the executor's
# first answer breaks a static rule, its second writes NaN into its read-only input (the kernel
# screen must refuse it by name, and the search go on with the inputs restored), the third is a
# real faster kernel (the one-pass log-softmax of the candidate suite), which must pass the four
# gates and be stitched.
if want llm; then
  python3 - "$OUTD/llm-script.json" <<'PY'
import json, sys
good = open("tests/candidates/03_log_softmax/good_online.py").read()
bad = open("tests/candidates/static/file_access.py").read()
writer = open("tests/candidates/03_log_softmax/bad_writes_nan_into_input_plan.py").read()
plan = {"plans": [{"direction": "llm_rewrite", "params": {}, "rationale": "one pass over each row"}]}
json.dump([{"reply": "```json\n" + json.dumps(plan) + "\n```"},
           {"reply": "```python\n" + bad + "```"},
           {"reply": "```python\n" + writer + "```"},
           {"reply": "```python\n" + good + "```"},
           {"reply": "```json\n{\"plans\": []}\n```"}] + [{"reply": "```json\n{\"plans\": []}\n```"}] * 4,
          open(sys.argv[1], "w"))
PY
  python3 tests/llm/scripted_server.py --script "$OUTD/llm-script.json" --log "$OUTD/llm-requests.jsonl" --idle 120 --parent $$ >"$OUTD/llm-port" &
  for _ in $(seq 50); do [ -s "$OUTD/llm-port" ] && break; sleep 0.1; done
  OPENAI_BASE_URL="http://127.0.0.1:$(head -1 "$OUTD/llm-port")/v1" OPENAI_API_KEY=sk-scripted \
    "$KOPT" optimize tests/problems/03_log_softmax.py -o "$OUTD/llm-03" --llm openai:scripted --roles planner,executor \
      --budget 90s --no-store --json >"$OUTD/llm-03.json" 2>"$OUTD/llm-03.err"
  rc=$?
  # the kernel is faster on the H200 (1.14x); where gate 4 measures it as not faster (an H100:
  # 1.04x in GPU time, slower as called), the pipeline still has to carry it through gates 1-3
  # and decide on speed alone
  llm_gates=$(python3 - "$OUTD/llm-03.json" <<'PY' 2>&1
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit("no JSON: %s" % e)
gates = [(a.get("gate"), a.get("outcome"), a.get("reason", "")) for a in d.get("attempts", [])
         if a.get("direction") == "llm_rewrite"]
print(" ".join("%s/%s" % (g, o) for g, o, _ in gates))
# the writer: refused by the screen, by name (its own attempt), before the good kernel's
wrote = [i for i, (g, o, r) in enumerate(gates) if "only reads" in (r or "")]
if not wrote or wrote[0] + 1 >= len(gates):
    print("the input writer was not refused by the screen before the last attempt: %s" % [r for _, _, r in gates])
    sys.exit(1)
ok = bool(gates) and gates[-1][0] in (0, 4)
sys.exit(0 if ok else 1)
PY
)
  llm_rc=$?
  if [ $rc -ne 0 ]; then bad "llm-driven optimize: exit $rc, attempts $llm_gates: $(tail -3 "$OUTD/llm-03.err")"
  elif [ $llm_rc -ne 0 ]; then bad "llm-driven optimize: attempts gate/outcome: $llm_gates"
  elif grep -q "_log_softmax_row" "$OUTD/llm-03/optimized_module.py"; then
    ok "llm-driven optimize: the input writer refused by the screen, the scripted executor's kernel passed the gates and was stitched (attempts $llm_gates)"
  else
    ok "llm-driven optimize: the input writer refused by the screen, the scripted executor's kernel passed gates 1-3 and gate 4 kept the compiler's kernel as faster on this GPU (attempts gate/outcome: $llm_gates)"
  fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
