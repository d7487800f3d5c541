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

SUITES=${KOPT_GPU_SUITES:-inspect errors verify}
want() { case " $SUITES " in *" $1 "*) return 0;; esac; return 1; }

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
    fx=tests/fixtures/inductor/${n}_g0.py
    cands=("$d"*.py)
    for s in tests/candidates/static/*.py; do     # static-rule candidates bound to this model
      k=$(sed -n 's/^# kopt-candidate: replaces=//p' "$s")
      grep -q "^$k = async_compile" "$fx" && cands+=("$s")
    done
    args=(); for c in "${cands[@]}"; do args+=(--candidate "$c"); done
    t0=$SECONDS
    "$KOPT" verify "tests/problems/$n.py" "${args[@]}" -o "$OUTD/verify-$n" --timeout 45 --json >"$OUTD/verify-$n.json" 2>"$OUTD/verify-$n.err"
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

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
