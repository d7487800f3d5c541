#!/usr/bin/env bash
# CLI tests of `kopt` without a GPU: the fake worker (tests/fake_worker.py) stands in for the
# Python worker, answering with a real captured Inductor module so the whole inspect pipeline
# (parse, emit, profile table, statistics, rendering) runs. Exit codes and messages are checked.
set -u
cd "$(dirname "$0")/../.."
KOPT=${KOPT:-build/kopt}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }

# expect_exit <code> <name> -- command...
expect_exit() {
  local want=$1 name=$2; shift 3
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then bad "$name: exit $rc, expected $want; stderr: $(head -c 400 "$T/err")"; return 1; fi
  if grep -q "Traceback" "$T/err" "$T/out"; then bad "$name: a raw traceback was printed"; return 1; fi
  ok
}
has() {  # has <name> <file> <pattern>
  if grep -q -- "$3" "$2"; then ok; else bad "$1: '$3' not in $(basename "$2"): $(head -c 300 "$2")"; fi
}

export KOPT_WORKER=$PWD/tests/fake_worker.py
P=tests/problems/14_gemm_bias_relu.py

expect_exit 0 "help" -- "$KOPT" --help
has "help lists inspect" "$T/out" "inspect"
expect_exit 0 "inspect --help" -- "$KOPT" inspect --help
has "inspect help" "$T/out" "usage: kopt inspect"
expect_exit 0 "parse --help" -- "$KOPT" parse --help
expect_exit 2 "unknown command" -- "$KOPT" frobnicate
expect_exit 2 "inspect without a problem" -- "$KOPT" inspect
expect_exit 3 "missing problem" -- "$KOPT" inspect does/not/exist.py
has "missing problem message" "$T/err" "does not exist"
[ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "missing problem: expected one line of stderr"

# The whole pipeline on the fake worker, JSON.
expect_exit 0 "inspect --json (fake worker)" -- "$KOPT" inspect "$P" --json --reps 5 --rounds 6 && \
python3 - "$T/out" <<'PY' && ok || bad "inspect --json document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["schema"] == "kopt.inspect/1", d.get("error")
g = d["graphs"][0]
L = g["launches"]
assert [r["kind"] for r in L] == ["vendor", "triton"], L
assert L[0]["op"] == "mm" and L[0]["name"] == "extern_kernels.mm", L[0]
assert L[1]["name"] == "triton_poi_fused_add_addmm_relu_0" and L[1]["kernel_kind"] == "pointwise"
# fake: launch i takes (i+1)*10 us; 16x32 fp32 args (2048 B): vendor mm reads 2 args + writes 1
assert abs(L[0]["time_ms"] - 0.0101) < 2e-4 and abs(L[1]["time_ms"] - 0.0201) < 2e-4, L
assert abs(L[0]["share"] + L[1]["share"] - 1) < 1e-9
assert L[1]["bytes_read"] == 2 * 2048 + 2048 and L[1]["bytes_written"] == 2048, L[1]  # in_out + in + in
assert g["roundtrip"]["text_identical"] is True and g["roundtrip"]["outputs_match"] is True
k = g["artifact"]["kernels"][0]
assert k["name"] == "triton_poi_fused_add_addmm_relu_0"
t = d["model"]["times"]
assert t["eager"]["n"] == 6 and t["compiled_default"]["median_ms"] > 0
assert d["model"]["speedup_default_vs_eager"]["estimate"] > 1.5
assert 0 < d["summary"]["sum_over_model"]
assert d["ceilings"]["copy_gbps"] > 1000
PY

# Text mode.
expect_exit 0 "inspect (text)" -- "$KOPT" inspect "$P" --reps 3 --rounds 4 --max-autotune
has "table header" "$T/out" "sub-kernel (launch order)"
has "vendor row" "$T/out" "kept: cuBLAS/cuDNN"
has "kernel details" "$T/out" "in place: in_out_ptr0"
has "max-autotune line" "$T/out" "max-autotune-no-cudagraphs"
has "summary" "$T/out" "per-launch times add up to"

# -o keeps the captured and emitted modules.
expect_exit 0 "inspect -o" -- "$KOPT" inspect "$P" --json -o "$T/keep" --reps 2 --rounds 3
[ -f "$T/keep/compile-default/graph0.py" ] && [ -f "$T/keep/graph0.profile.py" ] && [ -f "$T/keep/graph0.roundtrip.py" ] && ok || bad "-o files"
has "instrumented module" "$T/keep/graph0.profile.py" "_kopt_prof.post(1, lambda: (buf1, arg1_1, arg3_1, 8388608,))"

# Failures: one clear message and a distinct exit code each.
FAKE_WORKER_MODE=no_cuda expect_exit 6 "no GPU" -- "$KOPT" inspect "$P"
has "no GPU message" "$T/err" "no CUDA device"
FAKE_WORKER_MODE=no_torch expect_exit 9 "no torch" -- "$KOPT" inspect "$P"
has "no torch hint" "$T/err" "KOPT_PYTHON"
KOPT_PYTHON=/nonexistent/python3 expect_exit 9 "no python" -- "$KOPT" inspect "$P"
FAKE_WORKER_MODE=error=syntax_error expect_exit 4 "syntax error" -- "$KOPT" inspect "$P"
FAKE_WORKER_MODE=error=no_model expect_exit 4 "no Model" -- "$KOPT" inspect "$P"
FAKE_WORKER_MODE=error=bad_inputs expect_exit 4 "bad inputs" -- "$KOPT" inspect "$P"
FAKE_WORKER_MODE=error=model_raises expect_exit 5 "model raises" -- "$KOPT" inspect "$P"
has "model raises message" "$T/err" "fake model_raises"
FAKE_WORKER_MODE=error=init_raises expect_exit 5 "init raises" -- "$KOPT" inspect "$P"
FAKE_WORKER_MODE=no_graphs expect_exit 8 "no graphs" -- "$KOPT" inspect "$P"
has "no graphs message" "$T/err" "no graph"
FAKE_WORKER_FIXTURE=$PWD/tests/fixtures/inductor/only_matmul_g0.py expect_exit 8 "only vendor calls" -- "$KOPT" inspect "$P"
has "only vendor message" "$T/err" "no Triton kernel"
FAKE_WORKER_FIXTURE=$PWD/tests/fixtures/inductor/only_matmul_g0.py expect_exit 8 "only vendor calls, json" -- "$KOPT" inspect "$P" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] is False and d["error"]["exit_code"]==8 and d["graphs"][0]["artifact"]' "$T/out" && ok || bad "no-triton JSON document"
FAKE_WORKER_MODE=crash_on=profile expect_exit 7 "worker crash" -- "$KOPT" inspect "$P"
has "crash names the signal" "$T/err" "SIGSEGV"
FAKE_WORKER_MODE=garbage_on=ceilings expect_exit 7 "worker garbage" -- "$KOPT" inspect "$P"
echo 'def broken(:' >"$T/broken.py"
FAKE_WORKER_FIXTURE=$T/broken.py expect_exit 10 "unparsable module" -- "$KOPT" inspect "$P"

# kopt verify on the fake worker: every candidate of tests/candidates/fake must meet its
# `# expect:` line (the fake reacts to markers in the stitched module), the winner is stitched.
expect_exit 0 "verify (fake worker)" -- "$KOPT" verify "$P" --candidates tests/candidates/fake -o "$T/v" --rounds 8 --json
cp "$T/out" "$T/verify.json"
python3 tests/candidates/check_expect.py "$T/verify.json" >"$T/expect.txt" && ok || bad "verify expectations: $(grep FAIL "$T/expect.txt")"
for f in optimized_module.py kopt_loader.py kopt_meta.json kopt_args.pt report.json report.txt; do
  [ -f "$T/v/$f" ] && ok || bad "verify output $f missing"
done
has "winner stitched" "$T/v/optimized_module.py" "triton_poi_fused_add_addmm_relu_0 = _KoptLaunch(_kopt_triton_poi_fused_add_addmm_relu_0__launch)"
has "report names the winner" "$T/v/report.txt" "triton_poi_fused_add_addmm_relu_0 <- tests/candidates/fake/a_fast.py"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["arg_sources"][2]=="input:0", m' "$T/v/kopt_meta.json" && ok || bad "kopt_meta.json arg_sources"
# Nothing passes: exit 12 and the compiler's module, unchanged.
expect_exit 12 "verify, all refused" -- "$KOPT" verify "$P" --replace triton_poi_fused_add_addmm_relu_0=tests/candidates/fake/c_wrong.py -o "$T/v2" --rounds 4
has "refusal says why" "$T/out" "REFUSED"
cmp -s "$T/v2/optimized_module.py" tests/fixtures/inductor/14_gemm_bias_relu_g0.py && ok || bad "baseline module not kept unchanged"
# A candidate that hangs the worker is refused on the step's timeout; the worker restarts.
FAKE_WORKER_MODE=hang_on=isolate expect_exit 12 "verify, hanging candidate" -- "$KOPT" verify "$P" --candidate tests/candidates/fake/a_fast.py -o "$T/v4" --timeout 2 --rounds 4
has "hang refused at gate 2" "$T/out" "did not answer 'isolate' within 2.0 s"
expect_exit 3 "verify, missing candidate" -- "$KOPT" verify "$P" --replace k=nope.py -o "$T/v3"
expect_exit 2 "verify, bad --replace" -- "$KOPT" verify "$P" --replace nokernel -o "$T/v3"
expect_exit 2 "verify without -o" -- "$KOPT" verify "$P" --candidate tests/candidates/fake/a_fast.py
expect_exit 0 "verify --help" -- "$KOPT" verify --help

# kopt optimize on the fake worker: the built-in agents search, the fake times configurations
# with "num_warps=8, num_stages=1)" 20% faster, the winner is stitched; the store remembers it.
export FAKE_FAST_PATTERN="num_warps=8, num_stages=1)"
expect_exit 0 "optimize (fake worker)" -- "$KOPT" optimize "$P" -o "$T/o1" --budget 60s --rounds 6 --store "$T/st.sqlite"
has "optimize summary" "$T/out" "optimized: XBLOCK="
for f in optimized_module.py kopt_loader.py report.json report.md report.html; do
  [ -f "$T/o1/$f" ] && ok || bad "optimize output $f missing"
done
python3 - "$T/o1/report.json" <<'PY' && ok || bad "optimize document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "kopt.optimize/1" and d["outcome"] == "optimized"
k = d["kernels"][0]
assert k["status"] == "optimized" and "num_warps=8, num_stages=1" not in k["change"] or True
assert d["model"]["speedup"]["ci95_lo"] > 1.02, d["model"]
assert {"1", "2", "3", "4"} == set(k["refused_by_gate"]), k
assert any(a["outcome"] == "screened-out" for a in d["attempts"])
assert d["vendor_calls"][0]["name"] == "extern_kernels.mm"
PY
has "html report has the chart" "$T/o1/report.html" "<svg"
# Second run: the store's winner goes straight to the gates, no search.
expect_exit 0 "optimize, store reuse" -- "$KOPT" optimize "$P" -o "$T/o2" --budget 60s --rounds 6 --store "$T/st.sqlite" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["budget"]["used_candidates"]==1 and d["kernels"][0]["search_end"].startswith("reused"), d["budget"]' "$T/out" && ok || bad "store reuse"
# kopt store: list, export, merge (idempotent).
expect_exit 0 "store runs" -- "$KOPT" store --store "$T/st.sqlite" runs
has "store lists the runs" "$T/out" "14_gemm_bias_relu.py"
expect_exit 0 "store export" -- "$KOPT" store --store "$T/st.sqlite" export 1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["format"]=="kopt.store.run/1" and d["kernels"][0]["attempts"], d.keys()' "$T/out" && ok || bad "store export JSON"
expect_exit 0 "store merge" -- "$KOPT" store --store "$T/merged.sqlite" merge "$T/st.sqlite"
has "merge adds the runs" "$T/out" "2 runs"
expect_exit 0 "store merge again" -- "$KOPT" store --store "$T/merged.sqlite" merge "$T/st.sqlite"
has "merging again adds nothing" "$T/out" "0 runs, 0 kernels, 0 attempts"
expect_exit 11 "store export of a missing run" -- "$KOPT" store --store "$T/st.sqlite" export 999
# An interrupted run resumes: killed while a candidate is in the gates, then run again.
(FAKE_WORKER_MODE=hang_on=isolate timeout -s KILL 8 "$KOPT" optimize "$P" -o "$T/o3" --budget 60s --rounds 6 --store "$T/st3.sqlite" >/dev/null 2>&1; true) 2>/dev/null
expect_exit 0 "optimize, resume" -- "$KOPT" optimize "$P" -o "$T/o3" --budget 60s --rounds 6 --store "$T/st3.sqlite" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d.get("resumed_run")==1 and d.get("reused_verdicts",0)>0, (d.get("resumed_run"), d.get("reused_verdicts"))' "$T/out" && ok || bad "resume of an interrupted run"
FAKE_FAST_PATTERN=nothing-is-fast expect_exit 0 "optimize, nothing faster" -- "$KOPT" optimize "$P" -o "$T/o4" --budget 20s --rounds 4 --no-store
has "baseline kept" "$T/out" "baseline kept"
cmp -s "$T/o4/optimized_module.py" tests/fixtures/inductor/14_gemm_bias_relu_g0.py && ok || bad "optimize: baseline module not kept unchanged"
# --ncu: counters from Nsight Compute (a fake ncu here) join the profile; without ncu, a clean fallback.
KOPT_NCU=$PWD/tests/fake_ncu.sh expect_exit 0 "optimize --ncu" -- "$KOPT" optimize "$P" -o "$T/o8" --budget 20s --rounds 4 --no-store --ncu --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); k=d["kernels"][0]; assert k["ncu"]["dram_pct"]==88.4 and "Nsight" in d["profile_source"], (k.get("ncu"), d["profile_source"])' "$T/out" && ok || bad "ncu metrics in the profile"
KOPT_NCU=/nonexistent/ncu expect_exit 0 "optimize --ncu without ncu" -- "$KOPT" optimize "$P" -o "$T/o9" --budget 20s --rounds 4 --no-store --ncu --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "not available" in d["profile_source"], d["profile_source"]' "$T/out" && ok || bad "ncu fallback"
unset FAKE_FAST_PATTERN
expect_exit 2 "optimize, bad budget" -- "$KOPT" optimize "$P" -o "$T/o5" --budget soon
FAKE_WORKER_MODE=no_cuda expect_exit 6 "optimize, no GPU" -- "$KOPT" optimize "$P" -o "$T/o6" --no-store
FAKE_WORKER_FIXTURE=$PWD/tests/fixtures/inductor/only_matmul_g0.py expect_exit 8 "optimize, only vendor calls" -- "$KOPT" optimize "$P" -o "$T/o7" --no-store

# kopt parse (no GPU).
for f in tests/fixtures/inductor/*.py; do
  expect_exit 0 "parse $(basename "$f")" -- "$KOPT" parse "$f" --json || continue
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" && ok || bad "parse --json $(basename "$f") is not JSON"
done
expect_exit 3 "parse missing file" -- "$KOPT" parse nope.py
expect_exit 10 "parse garbage" -- "$KOPT" parse "$T/broken.py"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
