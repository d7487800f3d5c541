#!/usr/bin/env bash
# CLI tests of `kopt bench` without a GPU: a small suite (copies of tests/problems/ in level1/
# and level2/) run by child `kopt optimize` processes on the fake worker (tests/fake_worker.py,
# which ignores the problem's content). A wrapper worker script logs which problem each child
# ran on which CUDA_VISIBLE_DEVICES, and can sleep first, to slow one problem down (resume after
# kill -9, timeouts, signals). Exit codes, store rows and the outputs are checked.
set -u
cd "$(dirname "$0")/../.."
KOPT=${KOPT:-build/kopt}
T=$(mktemp -d)
BGPID=
cleanup() { [ -n "$BGPID" ] && kill -9 "$BGPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
. tests/cli/lib.sh   # ok, bad, expect_exit, has
# sql <store> <query>: one value per line
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print(*r, sep="|") for r in c.execute(sys.argv[2])]' "$1" "$2"; }
# alive <pid>: the process exists and is not a zombie (a killed orphan may wait for its reaper)
alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat"; }
# ran <log>: the problems the children ran (sorted, unique), relative to the suite
ran() { [ -f "$1" ] && sed 's#^[^ ]* .*/suite/##' "$1" | sort -u; }

# --- the suite and the wrapper worker ----------------------------------------------------------
S=$T/suite
mkdir -p "$S/level1" "$S/level2"
cp tests/problems/01_gelu_residual.py tests/problems/03_log_softmax.py tests/problems/04_layernorm.py "$S/level1/"
cp tests/problems/14_gemm_bias_relu.py tests/problems/16_mlp_block.py "$S/level2/"
ALL="level1/01_gelu_residual.py level1/03_log_softmax.py level1/04_layernorm.py level2/14_gemm_bias_relu.py level2/16_mlp_block.py"

cat >"$T/wrap_worker.py" <<'PY'
# Logs "<CUDA_VISIBLE_DEVICES> <problem>" (the problem from the parent kopt optimize's command
# line), sleeps when the problem matches BENCH_TEST_SLOW, then becomes the fake worker.
import os, sys, time
try:
    args = open("/proc/%d/cmdline" % os.getppid(), "rb").read().split(b"\0")
except OSError:
    args = []
problem = next((a.decode() for a in args if a.endswith(b".py")), "?")
log = os.environ.get("BENCH_TEST_LOG")
if log:
    with open(log, "a") as f:
        f.write("%s %s\n" % (os.environ.get("CUDA_VISIBLE_DEVICES", "-"), problem))
slow = os.environ.get("BENCH_TEST_SLOW")
if slow and slow in problem:
    pidfile = os.environ.get("BENCH_TEST_PIDFILE")
    if pidfile:
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))
    time.sleep(float(os.environ.get("BENCH_TEST_SLOW_S", "60")))
fake = os.environ["BENCH_TEST_FAKE"]
os.execv(sys.executable, [sys.executable, fake] + sys.argv[1:])
PY
export KOPT_WORKER=$T/wrap_worker.py BENCH_TEST_FAKE=$PWD/tests/fake_worker.py
# the worker inherits an allowlist of the environment: the wrapper's settings are named
export KOPT_WORKER_ENV=BENCH_TEST_LOG,BENCH_TEST_SLOW,BENCH_TEST_SLOW_S,BENCH_TEST_PIDFILE,BENCH_TEST_FAKE
export FAKE_FAST_PATTERN="num_warps=8, num_stages=1)"
export KOPT_NVIDIA_SMI=/nonexistent/nvidia-smi    # no GPU name: "unknown"
unset KOPT_STORE FAKE_WORKER_MODE
B="--budget 20s"

# --- help and bad command lines ----------------------------------------------------------------
expect_exit 0 "bench --help" -- "$KOPT" bench --help
for w in "usage: kopt bench SUITE" --shard --report-only --retry-failed --timeout-factor "exit codes" KOPT_BENCH_GRACE_S; do
  has "help mentions $w" "$T/out" "$w"
done
expect_exit 0 "kopt --help lists bench" -- "$KOPT" --help
has "bench in the command list" "$T/out" "bench "
bad_cmd() {  # bad_cmd <name> <pattern expected in stderr> -- args...
  local name=$1 pat=$2; shift 3
  expect_exit 2 "$name" -- "$KOPT" bench "$@" && has "$name names the problem" "$T/err" "$pat"
}
bad_cmd "bad budget" "--budget takes a duration.*'soon'" -- "$S" --budget soon
bad_cmd "bad shard (I >= N)" "--shard takes I/N.*'2/2'" -- "$S" --shard 2/2
bad_cmd "bad shard (text)" "--shard takes.*'half'" -- "$S" --shard half
bad_cmd "bad shard (N = 0)" "--shard.*'0/0'" -- "$S" --shard 0/0
bad_cmd "bad gpus" "--gpus takes.*'two'" -- "$S" --gpus two
bad_cmd "zero gpus" "--gpus takes.*'0'" -- "$S" --gpus 0
bad_cmd "bad timeout factor" "--timeout-factor takes.*'-1'" -- "$S" --timeout-factor -1
bad_cmd "trailing junk in a number" "--timeout-factor.*'1.5x'" -- "$S" --timeout-factor 1.5x
bad_cmd "unknown option" "unknown option '--frobnicate'" -- "$S" --frobnicate
bad_cmd "missing value" "needs a value" -- "$S" --budget
bad_cmd "no suite" "expected a SUITE" --
bad_cmd "two suites" "expected one SUITE" -- "$S" "$S"
KOPT_BENCH_GRACE_S=soon expect_exit 2 "bad KOPT_BENCH_GRACE_S" -- "$KOPT" bench "$S"
has "grace variable named" "$T/err" "KOPT_BENCH_GRACE_S"
CUDA_VISIBLE_DEVICES=0,1 expect_exit 2 "more GPUs than visible" -- "$KOPT" bench "$S" --gpus 3 --store "$T/x.sqlite"
has "more GPUs message" "$T/err" "only 2 GPUs are visible"

# --- missing suites: exit 3 --------------------------------------------------------------------
expect_exit 3 "missing suite" -- "$KOPT" bench "$T/nope" --store "$T/x.sqlite" -o "$T/o0"
has "missing suite message" "$T/err" "does not exist"
echo x >"$T/afile"
expect_exit 3 "suite is a file" -- "$KOPT" bench "$T/afile" --store "$T/x.sqlite" -o "$T/o0"
mkdir -p "$T/empty/level1"
expect_exit 3 "suite without problems" -- "$KOPT" bench "$T/empty" --store "$T/x.sqlite" -o "$T/o0"
has "no problem message" "$T/err" "no problem"
expect_exit 3 "--dev without a DEV list" -- "$KOPT" bench "$S" --dev --store "$T/x.sqlite" -o "$T/o0"
expect_exit 3 "--only matching nothing" -- "$KOPT" bench "$S" --only zzz --store "$T/x.sqlite" -o "$T/o0"
# store and output failures
mkdir -p "$T/adir"
CUDA_VISIBLE_DEVICES=0 expect_exit 11 "store is a directory" -- "$KOPT" bench "$S" --store "$T/adir" -o "$T/o0"
CUDA_VISIBLE_DEVICES=0 expect_exit 14 "output is a file" -- "$KOPT" bench "$S" --store "$T/x.sqlite" -o "$T/afile"
expect_exit 11 "report-only on a missing store" -- "$KOPT" bench --report-only --store "$T/none.sqlite" -o "$T/o0"

# --- a full run over two fake GPUs -------------------------------------------------------------
export BENCH_TEST_LOG=$T/log1
# (every compile takes 0.2 s: the largest step of each problem's setup, seen in results.json)
CUDA_VISIBLE_DEVICES=0,1 FAKE_COMPILE_SLEEP=0.2 expect_exit 0 "full run on 2 GPUs" -- "$KOPT" bench "$S" -o "$T/o1" $B --store "$T/s1.sqlite"
has "text summary" "$T/out" "5 problems, 5 correct"
has "plain line per finished problem (not a tty)" "$T/err" "\[5/5\]"
[ "$(ran "$T/log1" | tr '\n' ' ')" = "$ALL " ] && ok || bad "full run: every problem once: $(ran "$T/log1" | tr '\n' ' ')"
[ "$(cut -d' ' -f1 "$T/log1" | sort -u | tr '\n' ' ')" = "0 1 " ] && ok || bad "both lanes used (children saw CUDA_VISIBLE_DEVICES 0 and 1): $(cat "$T/log1")"
[ "$(sql "$T/s1.sqlite" "SELECT DISTINCT gpu_index FROM bench_results ORDER BY 1" | tr '\n' ' ')" = "0 1 " ] && ok || bad "store gpu_index 0 and 1"
[ "$(sql "$T/s1.sqlite" "SELECT count(*) FROM bench_results WHERE status='done' AND exit_code=0 AND doc_json IS NOT NULL AND wall_s > 0 AND disk_bytes > 0")" = 5 ] && ok || bad "store: 5 done rows with document, wall time, disk"
for f in results.json summary.md summary.html runs/level1/01_gelu_residual/optimize.json runs/level2/16_mlp_block/report.json; do
  [ -s "$T/o1/$f" ] && ok || bad "output $f missing"
done
[ -f "$T/o1/runs/level1/01_gelu_residual/optimize.log" ] && ok || bad "the child's stderr log is missing"
grep -q "kopt: info: .*gate 2" "$T/o1/runs/level1/01_gelu_residual/optimize.log" && ok || bad "the child's log has no stage lines (-v)"
python3 - "$T/o1/results.json" "$ALL" <<'PY' && ok || bad "results.json of the full run"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "kopt.bench/1" and d["ok"] is True
assert [p["problem"] for p in d["problems"]] == sys.argv[2].split(), [p["problem"] for p in d["problems"]]
assert all(p["status"] == "done" and p["exit_code"] == 0 and p["correct"] for p in d["problems"])
assert d["counts"]["problems"] == 5 and d["counts"]["done"] == 5
assert [l["name"] for l in d["levels"]] == ["level1", "level2"] and [l["problems"] for l in d["levels"]] == [3, 2]
for l in d["levels"] + [d["overall"]]:
    g = l["geomean_vs_default"]
    assert g["n"] == l["problems"] and abs(g["value"] - 1.25) < 0.01, l
    assert l["fast_p"]["default"]["0"] == 1.0 and l["fast_p"]["default"]["1.0"] == 1.0 and l["fast_p"]["default"]["1.5"] == 0.0, l["fast_p"]
    assert l["geomean_vs_max_autotune"]["value"] is not None
    # as called: the fake's host samples add 0.1 ms to each module's 1.0 / 0.8 ms
    a = l["geomean_as_called_vs_default"]
    assert a["n"] == l["problems"] and abs(a["value"] - 1.1 / 0.9) < 0.02, a
    assert l["fast_p"]["as_called_default"]["1.0"] == 1.0 and l["fast_p"]["as_called_default"]["1.5"] == 0.0, l["fast_p"]
    assert l["within_budget"]["count"] == l["problems"]
p = d["problems"][0]
assert p["speedup_vs_default"]["ci95_lo"] > 1.0 and p["times_ms"]["default"] > 0 and p["disk_bytes"] > 0
# as the model is called (host dispatch in): the fake's host samples add 0.1 ms to each
assert 1.0 < p["as_called_vs_default"]["estimate"] < p["speedup_vs_default"]["estimate"], p
# the fake's peaks per memory phase (tests/fake_worker.py PEAKS) plus its 500 MiB context (JSON
# numbers of 9 significant digits)
m = p["memory"]
for k, v in (("peak_gpu_bytes", 3 * 512 * 4 + (1 << 20)), ("eager_peak_gpu_bytes", 5 * 512 * 4 + (1 << 21)),
             ("f64_peak_gpu_bytes", 6 * 512 * 4), ("inputs_peak_gpu_bytes", 2 * 512 * 4)):
    assert abs(m[k] - v - (500 << 20)) < 1e3, (k, m)
assert sorted({p["gpu_index"] for p in d["problems"]}) == [0, 1]
assert d["config"]["lanes"] == ["0", "1"] and d["config"]["max_autotune"] is True and d["gpus"] == ["unknown"]
# the fake's floor is far below its times: every problem names why it stays above 1.3x its floor
assert all(p["floor_ratio"] > 1.3 and " of the profiled time)" in p["floor_gap_reason"] for p in d["problems"]), [(p["floor_ratio"], p["floor_gap_reason"]) for p in d["problems"]]
# the gates' time of the candidates each search judged (the verify section's gate seconds)
assert all(p["gated"] >= 1 and all(p["gate_s"][g] >= 0 for g in "1234") for p in d["problems"]), [(p["gated"], p["gate_s"]) for p in d["problems"]]
# where each problem's setup went, per worker op: the two compiles (default, max-autotune) of
# 0.2 s each lead; with the time outside requests they make the setup's GPU time
for p in d["problems"]:
    s = p["setup_by_step"]
    assert {"load", "compile", "profile", "time"} <= set(s) and "bench_kernels" not in s, s
    assert 0.4 <= s["compile"] < 2.0 and max(s, key=s.get) == "compile", s
    assert abs(sum(s.values()) + p["setup_outside_requests_s"] - p["gpu_time_s"]["setup"]) < 1e-3, p
PY
has "summary.md: where the setup time goes" "$T/o1/summary.md" "## Where the setup time goes"
grep -A4 "^## Where the setup time goes" "$T/o1/summary.md" | grep -Eq '^\| compile \| [0-9.]+ s \| 0\.[4-9] s \| [0-9.]+% \|$' && ok || bad "summary.md: compile is not the setup table's first row: $(grep -A6 '^## Where the setup' "$T/o1/summary.md")"
has "summary.html: where the setup time goes" "$T/o1/summary.html" "Where the setup time goes"
for p in $ALL; do has "summary.md lists $p" "$T/o1/summary.md" "$p"; has "summary.html lists $p" "$T/o1/summary.html" "$p"; done
has "summary.md per-level geomeans" "$T/o1/summary.md" "| level1 | 3 | 3 | 0 | 0 | 0 | 1.250x (3)"
has "summary.md fast_p" "$T/o1/summary.md" "fast_1.5"
has "summary.md gate times per problem" "$T/o1/summary.md" "gates 1 / 2 / 3 / 4 s (gated)"
grep -Eq '\| [0-9.e-]+ / [0-9.e-]+ / [0-9.e-]+ / [0-9.e-]+ \([1-9][0-9]*\) \|' "$T/o1/summary.md" && ok || bad "summary.md: no problem row with its gate times"
has "summary.md names why problems stay above 1.3x their floor" "$T/o1/summary.md" "## Problems above 1.3x their memory floor"
has "summary.html names why problems stay above 1.3x their floor" "$T/o1/summary.html" "Problems above 1.3x their memory floor"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); md=open(sys.argv[2]).read(); r=[p["floor_gap_reason"] for p in d["problems"]]; assert all(len(x) > 150 and x[-60:] in md for x in r), r' "$T/o1/results.json" "$T/o1/summary.md" && ok || bad "summary.md: a floor-gap reason cut short"
has "summary.md eager / inputs / f64 peak column" "$T/o1/summary.md" "| eager / inputs / f64 peak GPU |"
has "summary.md eager, inputs and f64 peaks" "$T/o1/summary.md" "| 502 MiB / 500 MiB / 500 MiB |"
has "summary.html eager, inputs and f64 peaks" "$T/o1/summary.html" "502 MiB / 500 MiB / 500 MiB"
has "summary.html inline svg" "$T/o1/summary.html" "<svg xmlns"
has "summary.html chart has kopt bars" "$T/o1/summary.html" 'class="kopt"'
has "summary.html chart has floor markers" "$T/o1/summary.html" 'class="floor"'
if grep -qiE '<script|<link|src=|href="http|@import|url\(' "$T/o1/summary.html"; then bad "summary.html is not self-contained"; else ok; fi
python3 -c 'import sys,xml.dom.minidom as m,re; h=open(sys.argv[1]).read(); m.parseString(re.search(r"<svg.*?</svg>", h, re.S).group(0))' "$T/o1/summary.html" && ok || bad "the chart is not well-formed XML"

# The same command again: everything is done, nothing runs.
export BENCH_TEST_LOG=$T/log1b
CUDA_VISIBLE_DEVICES=0,1 expect_exit 0 "second run: nothing to do" -- "$KOPT" bench "$S" -o "$T/o1" $B --store "$T/s1.sqlite" --json
[ ! -s "$T/log1b" ] && ok || bad "second run started children: $(cat "$T/log1b")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["counts"]["done"]==5 and len(d["problems"])==5' "$T/out" && ok || bad "--json prints results.json"
# A changed problem file is a new problem.
echo "# changed" >>"$S/level1/04_layernorm.py"
export BENCH_TEST_LOG=$T/log1c
CUDA_VISIBLE_DEVICES=0,1 expect_exit 0 "changed problem" -- "$KOPT" bench "$S" -o "$T/o1" $B --store "$T/s1.sqlite"
[ "$(ran "$T/log1c")" = "level1/04_layernorm.py" ] && ok || bad "only the changed problem runs again: $(ran "$T/log1c")"

# --- resume after kill -9 ----------------------------------------------------------------------
export BENCH_TEST_LOG=$T/log2 BENCH_TEST_SLOW=16_mlp_block BENCH_TEST_SLOW_S=60 BENCH_TEST_PIDFILE=$T/slow.pid
CUDA_VISIBLE_DEVICES=0 "$KOPT" bench "$S" -o "$T/o2" $B --store "$T/s2.sqlite" >"$T/bg.out" 2>"$T/bg.err" &
BGPID=$!
for _ in $(seq 1 300); do   # until the four fast problems are done and the slow one runs
  [ "$(sql "$T/s2.sqlite" "SELECT count(*) FROM bench_results WHERE status='done'" 2>/dev/null)" = 4 ] && [ -s "$T/slow.pid" ] && break
  sleep 0.1
done
kill -9 "$BGPID"; wait "$BGPID" 2>/dev/null; BGPID=
[ "$(sql "$T/s2.sqlite" "SELECT status FROM bench_results WHERE problem_rel='level2/16_mlp_block.py'")" = running ] && ok || bad "the interrupted problem is left 'running'"
sleep 0.5
if alive "$(cat "$T/slow.pid")"; then bad "the slow problem's worker outlived kill -9 of kopt bench"; else ok; fi
before=$(sql "$T/s2.sqlite" "SELECT problem_rel, started_at FROM bench_results WHERE status='done' ORDER BY 1")
unset BENCH_TEST_SLOW
export BENCH_TEST_LOG=$T/log3
CUDA_VISIBLE_DEVICES=0 expect_exit 0 "resume after kill -9" -- "$KOPT" bench "$S" -o "$T/o2" $B --store "$T/s2.sqlite"
[ "$(ran "$T/log3")" = "level2/16_mlp_block.py" ] && ok || bad "resume runs only the unfinished problem: $(ran "$T/log3")"
[ "$(sql "$T/s2.sqlite" "SELECT count(*) FROM bench_results WHERE status='done'")" = 5 ] && ok || bad "resume: all 5 done"
after=$(sql "$T/s2.sqlite" "SELECT problem_rel, started_at FROM bench_results WHERE status='done' AND problem_rel <> 'level2/16_mlp_block.py' ORDER BY 1")
[ "$before" = "$after" ] && ok || bad "done problems were touched by the resume"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["counts"]["done"]==5, d["counts"]' "$T/o2/results.json" && ok || bad "resume: results.json complete"

# --- SIGTERM: children killed, the running problem handed back ------------------------------------
export BENCH_TEST_LOG=$T/log4 BENCH_TEST_SLOW=03_log_softmax BENCH_TEST_PIDFILE=$T/slow2.pid
CUDA_VISIBLE_DEVICES=0 "$KOPT" bench "$S" -o "$T/o4" $B --store "$T/s4.sqlite" --only log_softmax >"$T/bg.out" 2>"$T/bg.err" &
BGPID=$!
for _ in $(seq 1 300); do [ -s "$T/slow2.pid" ] && break; sleep 0.1; done
kill -TERM "$BGPID"; wait "$BGPID"; rc=$?; BGPID=
[ "$rc" -eq 143 ] && ok || bad "SIGTERM: exit $rc, expected 143; $(head -c 300 "$T/bg.err")"
sleep 0.5
if alive "$(cat "$T/slow2.pid")"; then bad "SIGTERM: the child's worker is still alive"; else ok; fi
[ "$(sql "$T/s4.sqlite" "SELECT count(*) FROM bench_results")" = 0 ] && ok || bad "SIGTERM: the interrupted problem's row is not released"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["interrupted"] is True and d["problems"][0]["status"]=="not run", d["problems"]' "$T/o4/results.json" && ok || bad "SIGTERM: results.json marks the interruption"
unset BENCH_TEST_SLOW

# --- timeout -----------------------------------------------------------------------------------
export BENCH_TEST_LOG=$T/log5 BENCH_TEST_SLOW=03_log_softmax BENCH_TEST_SLOW_S=30 BENCH_TEST_PIDFILE=$T/slow3.pid
start=$(date +%s)
KOPT_BENCH_GRACE_S=1 CUDA_VISIBLE_DEVICES=0 expect_exit 0 "timeout is a result" -- "$KOPT" bench "$S" -o "$T/o5" --budget 1s --timeout-factor 1 --store "$T/s5.sqlite" --only log_softmax
[ $(( $(date +%s) - start )) -lt 20 ] && ok || bad "timeout: the child was not killed in time"
[ "$(sql "$T/s5.sqlite" "SELECT status, exit_code FROM bench_results")" = "timeout|137" ] && ok || bad "timeout recorded: $(sql "$T/s5.sqlite" "SELECT status, exit_code FROM bench_results")"
sleep 0.5
if alive "$(cat "$T/slow3.pid")"; then bad "timeout: the child's worker is still alive"; else ok; fi
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["problems"][0]; assert p["status"]=="timeout" and p["error"]["kind"]=="timeout" and d["overall"]["timeout"]==1, p' "$T/o5/results.json" && ok || bad "timeout in results.json"
unset BENCH_TEST_SLOW

# --- failing problems are data -----------------------------------------------------------------
export BENCH_TEST_LOG=$T/log6
FAKE_WORKER_MODE=error=model_raises CUDA_VISIBLE_DEVICES=0,1 expect_exit 0 "failing problems" -- "$KOPT" bench "$S" -o "$T/o6" $B --store "$T/s6.sqlite"
[ "$(sql "$T/s6.sqlite" "SELECT DISTINCT status || ':' || exit_code FROM bench_results")" = "failed:5" ] && ok || bad "failed rows with exit code 5: $(sql "$T/s6.sqlite" "SELECT status, exit_code FROM bench_results")"
has "why it failed in summary.md" "$T/o6/summary.md" "fake model_raises"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); o=d["overall"]; assert o["failed"]==5 and o["correct"]==0 and o["fast_p"]["default"]["0"]==0.0 and o["geomean_vs_default"]["value"] is None, o' "$T/o6/results.json" && ok || bad "failures in results.json"
export BENCH_TEST_LOG=$T/log7
CUDA_VISIBLE_DEVICES=0,1 expect_exit 0 "failed problems are kept as results" -- "$KOPT" bench "$S" -o "$T/o6" $B --store "$T/s6.sqlite"
[ ! -s "$T/log7" ] && ok || bad "failed problems ran again without --retry-failed"
CUDA_VISIBLE_DEVICES=0,1 expect_exit 0 "--retry-failed" -- "$KOPT" bench "$S" -o "$T/o6" $B --store "$T/s6.sqlite" --retry-failed
[ "$(ran "$T/log7" | wc -l)" = 5 ] && ok || bad "--retry-failed reruns the failed problems"
[ "$(sql "$T/s6.sqlite" "SELECT count(*) FROM bench_results WHERE status='done'")" = 5 ] && ok || bad "--retry-failed: now done"

# --- a model without a Triton kernel (an aten fallback, as level1/38_avg_pool3d, here with
# ceil_mode set so that no template replaces the call) is done -----------------------------------
export BENCH_TEST_LOG=$T/log12
sed 's/\[1, 1, 1\], False, False, None)/[1, 1, 1], True, False, None)/' tests/fixtures/inductor/suite_level1_38_avg_pool3d_g0.py >"$T/avg_pool3d_ceil.py"
FAKE_NO_TRITON_FIXTURE=$T/avg_pool3d_ceil.py FAKE_WORKER_MODE=no_triton CUDA_VISIBLE_DEVICES=0 expect_exit 0 "no Triton kernel" -- "$KOPT" bench "$S" -o "$T/o12" $B --store "$T/s12.sqlite" --only gelu --json
python3 - "$T/out" <<'PY' && ok || bad "no Triton kernel: not done with its speedups"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["problems"][0]
assert p["status"] == "done" and p["exit_code"] == 0 and p["correct"] and p["error"] is None, p
assert p["outcome"] == "baseline kept: torch.compile generated no Triton kernel: the compiled module is kept", p
assert p["speedup_vs_default"]["estimate"] > 0 and p["speedup_vs_max_autotune"]["estimate"] > 0, p
assert all(p["times_ms"][k] > 0 for k in ("eager", "default", "max_autotune", "kopt", "floor")), p["times_ms"]
assert d["overall"]["correct"] == 1 and d["overall"]["failed"] == 0, d["overall"]
PY
# kopt / floor: a module measured below the floor is marked, and the definitions say what it means
FAKE_BYTES_SCALE=1000000 CUDA_VISIBLE_DEVICES=0 expect_exit 0 "a floor a module beats" -- "$KOPT" bench "$S" -o "$T/o13" $B --store "$T/s13.sqlite" --only gelu
grep -q "level1/01_gelu_residual.py .* (!) |" "$T/o13/summary.md" && ok || bad "summary.md: no (!) after kopt / floor: $(grep gelu "$T/o13/summary.md" | tail -1)"
has "summary.md defines (!)" "$T/o13/summary.md" '"(!)" after it: a measured module time'
! grep -q "level1/01_gelu_residual.py .* (!) |" "$T/o12/summary.md" && ok || bad "summary.md: (!) without a module below the floor"
# a max-autotune compile that overruns its share of the budget: the problem is done from the
# default module, and the summary lists it among the problems without a max-autotune time, why
FAKE_MA_HANG=1 KOPT_WORKER_ENV=$KOPT_WORKER_ENV,FAKE_MA_HANG KOPT_MA_TIMEOUT_S=2 CUDA_VISIBLE_DEVICES=0 expect_exit 0 "max-autotune compile overruns" -- \
  "$KOPT" bench "$S" -o "$T/o14" $B --store "$T/s14.sqlite" --only gelu
has "summary.md: the problem without max-autotune" "$T/o14/summary.md" \
  "^| level1/01_gelu_residual.py | torch.compile (max-autotune-no-cudagraphs): worker did not answer 'compile' within 2.0 s; the worker was restarted |"
! grep -q "Problems without a max-autotune time" "$T/o13/summary.md" && ok || bad "summary.md lists problems without max-autotune where it was measured"

# --- selections: --dev, --only -------------------------------------------------------------------
printf '# the dev set\nlevel1/03_log_softmax.py\n\n  level2/14_gemm_bias_relu.py  # a comment\n' >"$S/DEV"
CUDA_VISIBLE_DEVICES=0 expect_exit 0 "--dev" -- "$KOPT" bench "$S" -o "$T/o8" $B --store "$T/s1.sqlite" --dev --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [p["problem"] for p in d["problems"]]==["level1/03_log_softmax.py","level2/14_gemm_bias_relu.py"], d["problems"]' "$T/out" && ok || bad "--dev selects SUITE/DEV"
CUDA_VISIBLE_DEVICES=0 expect_exit 0 "--only" -- "$KOPT" bench "$S" -o "$T/o8" $B --store "$T/s1.sqlite" --only gelu,level2/16 --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [p["problem"] for p in d["problems"]]==["level1/01_gelu_residual.py","level2/16_mlp_block.py"], d["problems"]' "$T/out" && ok || bad "--only selects substrings"
# both: the dev problems that --only names (none: exit 3, saying which selection)
CUDA_VISIBLE_DEVICES=0 expect_exit 0 "--dev --only" -- "$KOPT" bench "$S" -o "$T/o8" $B --store "$T/s1.sqlite" --dev --only gemm,gelu --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [p["problem"] for p in d["problems"]]==["level2/14_gemm_bias_relu.py"], d["problems"]; assert d["config"]["selection"]=="dev (SUITE/DEV), only: gemm,gelu", d["config"]' "$T/out" && ok || bad "--dev with --only selects the dev problems --only names"
expect_exit 3 "--dev --only matching none" -- "$KOPT" bench "$S" -o "$T/o8" $B --store "$T/s1.sqlite" --dev --only gelu
has "no match of both" "$T/err" "matches SUITE/DEV and --only"
echo "level9/nope.py" >>"$S/DEV"
expect_exit 3 "--dev naming an unknown problem" -- "$KOPT" bench "$S" -o "$T/o8" $B --store "$T/s1.sqlite" --dev
has "unknown dev problem named" "$T/err" "level9/nope.py"
rm "$S/DEV"

# --- shards, merge, report-only ------------------------------------------------------------------
export BENCH_TEST_LOG=$T/log9
for i in 0 1; do
  CUDA_VISIBLE_DEVICES=0 expect_exit 0 "shard $i/2" -- "$KOPT" bench "$S" -o "$T/sh$i" $B --store "$T/shard$i.sqlite" --shard $i/2 --json
  cp "$T/out" "$T/shard$i.json"
done
python3 - "$T/shard0.json" "$T/shard1.json" "$ALL" <<'PY' && ok || bad "shards are disjoint, cover the suite, and follow FNV-1a 64 mod N"
import json, sys
def fnv(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h
a, b = ([p["problem"] for p in json.load(open(f))["problems"]] for f in sys.argv[1:3])
assert not set(a) & set(b), (a, b)
assert sorted(a + b) == sorted(sys.argv[3].split()), (a, b)
for i, s in enumerate((a, b)):
    assert all(fnv(p) % 2 == i for p in s), (i, s)
assert a and b, "both shards hold problems in this suite"
PY
expect_exit 0 "merge the shard stores" -- "$KOPT" store --store "$T/merged.sqlite" merge "$T/shard0.sqlite" "$T/shard1.sqlite"
expect_exit 0 "report-only on the merged store" -- "$KOPT" bench "$S" --report-only --store "$T/merged.sqlite" -o "$T/om" $B --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["config"]["report_only"] and d["counts"]["done"]==5 and len(d["problems"])==5 and abs(d["overall"]["geomean_vs_default"]["value"]-1.25)<0.01, d["counts"]' "$T/out" && ok || bad "report-only rebuilds the whole suite from the merged store"
[ -s "$T/om/summary.html" ] && [ -s "$T/om/summary.md" ] && ok || bad "report-only writes the summaries"
expect_exit 0 "report-only without SUITE" -- "$KOPT" bench --report-only --store "$T/merged.sqlite" -o "$T/om2" $B --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["problems"])==5 and d["suite"] is None' "$T/out" && ok || bad "report-only without SUITE"
expect_exit 3 "report-only with another budget" -- "$KOPT" bench --report-only --store "$T/merged.sqlite" -o "$T/om3" --budget 5m
has "report-only hint: the budgets the store holds" "$T/err" "hint: it holds results for 20s with max-autotune on: pass that --budget"
# with SUITE the problems are listed as not run, and a warning says which configurations exist
expect_exit 0 "report-only of SUITE with another budget" -- "$KOPT" bench "$S" --report-only --store "$T/merged.sqlite" -o "$T/om4" --budget 5m
has "report-only warning: nothing of this budget" "$T/err" "no problem of the selection has a result for budget 300s with max-autotune on; it holds results for 20s with max-autotune on"
expect_exit 0 "merging again adds nothing" -- "$KOPT" store --store "$T/merged.sqlite" merge "$T/shard0.sqlite"
[ "$(sql "$T/merged.sqlite" "SELECT count(*) FROM bench_results")" = 5 ] && ok || bad "merge is idempotent for bench results"
# a merged 'done' row is never run again
export BENCH_TEST_LOG=$T/log10
CUDA_VISIBLE_DEVICES=0 expect_exit 0 "run on the merged store" -- "$KOPT" bench "$S" -o "$T/om4" $B --store "$T/merged.sqlite"
[ ! -s "$T/log10" ] && ok || bad "problems done on other hosts ran again: $(cat "$T/log10")"

# --- GPUs from nvidia-smi ------------------------------------------------------------------------
cat >"$T/nvidia-smi" <<'SH'
#!/bin/sh
case "$1" in
  -L) printf 'GPU 0: Fake GPU X (UUID: GPU-0)\nGPU 1: Fake GPU X (UUID: GPU-1)\n  MIG 1g.10gb Device 0: (UUID: MIG-0)\nGPU 2: Fake GPU X (UUID: GPU-2)\n' ;;
  *) echo "Fake GPU X" ;;
esac
SH
chmod +x "$T/nvidia-smi"
export BENCH_TEST_LOG=$T/log11
(unset CUDA_VISIBLE_DEVICES; KOPT_NVIDIA_SMI=$T/nvidia-smi expect_exit 0 "lanes from nvidia-smi" -- "$KOPT" bench "$S" -o "$T/o11" $B --store "$T/s11.sqlite" --json
 python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["config"]; assert c["lanes"]==["0","1","2"] and c["lanes_source"]=="nvidia-smi" and d["gpus"]==["Fake GPU X"], (c, d["gpus"])' "$T/out" && ok || bad "3 lanes and the GPU name from nvidia-smi"
 echo "$pass $fail" >"$T/sub")
read -r pass fail <"$T/sub"
[ "$(cut -d' ' -f1 "$T/log11" | sort -u | tr '\n' ' ')" = "0 1 2 " ] && ok || bad "children on GPUs 0, 1, 2: $(cut -d' ' -f1 "$T/log11" | sort -u | tr '\n' ' ')"

echo "bench cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
