#!/usr/bin/env bash
# session 58 call 3 (developer scratch): gpu-test with late rounds timed again; HEAD's binary beside it
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
OUT=$OUT INTERP=0 SUITES="optimize verify" VERIFY=22_logsumexp_middle T_GPUTEST=300 ONLY= bash tools/device_session.sh
{
  g4 /tmp/kopt-gt/optimize-03/report.json
  for b in kopt-head; do
    echo "== $b optimize 03 $(date +%T)"
    timeout 100 build/$b optimize tests/problems/03_log_softmax.py -o /tmp/p03-$b --budget 60s --no-store > /dev/null 2>&1
    echo "rc=$?"; g4 /tmp/p03-$b/report.json
  done
  echo "== done $(date +%T)"
} > "$OUT/g4.log" 2>&1
