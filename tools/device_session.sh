#!/usr/bin/env bash
# One device call that checks a session's GPU-facing work (developer tool, run on the GPU machine
# from the repository root with build/kopt carried along): the plan-interpreter tests, a chosen
# part of `make gpu-test`, and a `kopt bench` of chosen problems whose reports are then read for
# where each kernel's search started (kernels[].tuned_config). Each step has its own time limit,
# so one slow step cannot eat the others' time; everything lands in $OUT as at most 8 files
# (the device tool returns 8): interp.log, gputest.log, bench.log, results.json, starts.txt,
# runs.tgz, bench-store.sqlite (the store, to resume the sweep in the next call), and with
# HOSTPROF hostprof.txt (tools/host_profile.py on benched problems' shipped modules).
#
# usage: OUT=dir [SUITES="optimize llm verify"] [VERIFY="12_avgpool2d 18_avg_pool3d"]
#        [ONLY="level1/36_avg_pool1d,level1/37_avg_pool2d"] [STORE=path] [T_INTERP=150]
#        [T_GPUTEST=240] [T_BENCH=300] [HOSTPROF="level1/01_softmax_wide_rows"] [INTERP=0]
#        [SWEEP="ln" T_SWEEP=240] [MAREF="level3/02_transformer_block_bf16" T_MAREF=300]
#        tools/device_session.sh
# INTERP=0 skips the plan-interpreter tests (a call that only sweeps the suite).
# An empty ONLY skips the bench, ONLY=all runs the whole suite (one lane per visible GPU: on
# nvidia-h200-x2 two), ONLY=dev its DEV list, ONLY="--dev --only a,b" part of that, ONLY="--shard
# I/N" a shard of it; BENCH_DIR=bench/heldout benches the held-out problems instead, BUDGET the
# budget (2m); an empty SUITES skips the gpu-test; an
# empty VERIFY runs every candidate folder (about 560 s: narrow it); STORE resumes a bench store
# (e.g. the bench-store.sqlite of the last call, copied into the tree): the problems it holds
# as done are not run again, so a sweep longer than one call goes on where the last one stopped.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:?set OUT}
export PATH=$PWD/build:$PATH

[ "${INTERP:-1}" = 0 ] || {
  for t in tests/interp/test_plan_interp.py tests/interp/test_scan_interp.py tests/interp/test_col_softmax_interp.py \
           tests/interp/test_aligned_interp.py tests/interp/test_fence_interp.py \
           tests/interp/test_ln_prologue_interp.py tests/interp/test_group_norm_interp.py \
           tests/interp/test_revloop_interp.py; do
    echo "== $t"
    TRITON_INTERPRET=1 timeout "${T_INTERP:-150}" python3 "$t"
    echo "rc=$?"
  done
  # the backward last pass compiled and run on the GPU, not only interpreted
  echo "== tests/interp/test_revloop_interp.py compiled (TRITON_INTERPRET=0)"
  TRITON_INTERPRET=0 timeout "${T_INTERP:-150}" python3 tests/interp/test_revloop_interp.py
  echo "rc=$?"
} >"$OUT/interp.log" 2>&1

# SWEEP="ln softmax": tools/split_sweep.py's variants timed on the GPU, appended to interp.log
# (the device tool returns 8 files)
if [ -n "${SWEEP:-}" ]; then
  echo "== tools/split_sweep.py $SWEEP" >>"$OUT/interp.log"
  (cd tools && timeout "${T_SWEEP:-240}" python3 split_sweep.py $SWEEP) >>"$OUT/interp.log" 2>&1
  echo "rc=$?" >>"$OUT/interp.log"
fi

if [ -n "${SUITES-optimize llm verify}" ]; then
  KOPT_GPU_SUITES="${SUITES-optimize llm verify}" KOPT_GPU_VERIFY="${VERIFY:-}" KOPT_GPU_OUT=/tmp/kopt-gt \
    timeout "${T_GPUTEST:-240}" make gpu-test >"$OUT/gputest.log" 2>&1
  echo "make gpu-test rc=$?" >>"$OUT/gputest.log"
  # where each verified candidate's time went, gate by gate (the verify documents' "seconds")
  python3 - >>"$OUT/gputest.log" 2>&1 <<'PY'
import glob, json, os
for f in sorted(glob.glob("/tmp/kopt-gt/verify-*.json")):
    try:
        d = json.load(open(f))
    except ValueError:
        continue
    for c in d.get("candidates", []):
        gs = " ".join("g%d %.2fs" % (g.get("gate", 0), g.get("seconds", -1)) for g in c.get("gates", []))
        print("gate seconds %s %s: %s" % (os.path.basename(f)[7:-5], os.path.basename(c.get("candidate", "?")), gs))
        # gate 4's figures, to tell a noisy machine from a slow candidate afterwards
        for g in c.get("gates", []):
            if g.get("gate") == 4:
                keep = {k: g[k] for k in ("speedup", "host_speedup", "host_recheck", "enqueue_ms", "baseline_ms",
                                          "candidate_ms", "fresh_inputs") if k in g}
                print("  gate 4 %s" % json.dumps(keep, sort_keys=True))
PY
fi

if [ -n "${ONLY:-}" ]; then
  mkdir -p /tmp/kopt-ds
  case "$ONLY" in
    all) ARGS="" ;;
    dev) ARGS="--dev" ;;
    --shard*|--dev*) ARGS="$ONLY" ;;
    *) ARGS="--only $ONLY" ;;
  esac
  OUT=/tmp/kopt-ds BENCH_ARGS="$ARGS" BENCH_STORE="${STORE:-/tmp/kopt-ds.sqlite}" BENCH_SUITE="${BENCH_DIR:-bench/suite}" \
    BENCH_BUDGET="${BUDGET:-2m}" \
    BENCH_TIMEOUT="${T_BENCH:-300}" bash tools/bench_device.sh
  cp /tmp/kopt-ds/bench.log /tmp/kopt-ds/results.json /tmp/kopt-ds/runs.tgz /tmp/kopt-ds/bench-store.sqlite "$OUT/" 2>/dev/null
  # where each searched kernel started: Inductor's autotuned configuration, or none found
  mkdir -p /tmp/kopt-ds/runs-x && tar xzf /tmp/kopt-ds/runs.tgz -C /tmp/kopt-ds/runs-x 2>/dev/null
  python3 - /tmp/kopt-ds/runs-x >"$OUT/starts.txt" 2>&1 <<'PY'
import glob, json, os, sys
found = total = 0
for f in sorted(glob.glob(os.path.join(sys.argv[1], "runs", "*", "*", "report.json"))):
    d = json.load(open(f))
    for k in d.get("kernels", []):
        if "tried" not in k:
            continue
        total += 1
        found += "tuned_config" in k
        print(os.path.basename(os.path.dirname(f)), k["name"], json.dumps(k.get("tuned_config")))
print("searched kernels with a tuned_config: %d of %d" % (found, total))
PY
  # HOSTPROF="level1/01_softmax_wide_rows ...": where the bench's shipped module spends its
  # per-call time as called (tools/host_profile.py), into hostprof.txt
  for p in ${HOSTPROF:-}; do
    echo "== $p"
    timeout 180 python3 tools/host_profile.py "${BENCH_DIR:-bench/suite}/$p.py" "/tmp/kopt-bench-out/runs/$p"
  done >"$OUT/hostprof.txt" 2>&1
  # MAREF="level2/07_linear_relu_logsumexp ...": the benched problem's shipped module against
  # max-autotune compiled without a time limit (tools/ma_reference.py), for problems whose bench
  # has no max-autotune figure (its compile past its share of the budget); appended to
  # hostprof.txt (the device tool returns 8 files)
  for p in ${MAREF:-}; do
    echo "== ma_reference $p"
    timeout "${T_MAREF:-300}" python3 tools/ma_reference.py "${BENCH_DIR:-bench/suite}/$p.py" "/tmp/kopt-bench-out/runs/$p" \
      --rounds 30
    echo "rc=$?"
  done >>"$OUT/hostprof.txt" 2>&1
  [ -s "$OUT/hostprof.txt" ] || rm -f "$OUT/hostprof.txt"
fi
ls -la "$OUT"
