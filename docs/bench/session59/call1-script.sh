#!/usr/bin/env bash
# session 59 call 1 (developer scratch): gpu-test optimize + verify 22 at HEAD (gate 4's figures of
# optimize 03 into g4.log); then the tenth held-out folder's first run (resumed in call 2 from
# its store when cut)
set -u
g4() {
python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def find(o):
    if isinstance(o, dict):
        if o.get("gate") == 4 and "speedup" in o:
            print("  gate4", json.dumps({k: o[k] for k in ("speedup", "host_speedup", "baseline_ms", "candidate_ms", "rounds_timed_again", "rechecked_host_rounds", "added_rechecked_host_rounds", "reason") if k in o}))
        for x in o.values(): find(x)
    elif isinstance(o, list):
        for x in o: find(x)
find(d.get("verify", d))
m = d.get("model", {})
print("  model", json.dumps({k: m[k] for k in ("speedup_vs_default", "speedup_vs_max_autotune", "as_called_vs_default", "as_called_vs_max_autotune", "rounds_timed_again", "as_called_recheck", "final_pick") if k in m}))
print("  outcome", d.get("outcome"))
PY
}
OUT=$OUT INTERP=0 SUITES="optimize verify" VERIFY=22_logsumexp_middle T_GPUTEST=200 ONLY= bash tools/device_session.sh
g4 /tmp/kopt-gt/optimize-03/report.json > "$OUT/g4.log" 2>&1
OUT=$OUT INTERP=0 SUITES= ONLY=all BENCH_DIR=bench/heldout10 BUDGET=1m T_BENCH=170 bash tools/device_session.sh
(cd tools && timeout 120 python3 packed_sweep.py ln) > "$OUT/packed.log" 2>&1; echo "rc=$?" >> "$OUT/packed.log"
