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

for p in ${KOPT_GPU_PROBLEMS:-tests/problems/*.py}; do
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
if [ -z "${KOPT_GPU_PROBLEMS:-}" ]; then
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
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
