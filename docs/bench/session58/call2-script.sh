#!/usr/bin/env bash
# session 58 call 2 (developer scratch): optimize 03 with the new binary and HEAD's, alternating
set -u
dump() {
python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d.get("model", {})
keep = {k: m[k] for k in m if k not in ("kernels",) and not isinstance(m[k], list)}
print(json.dumps(keep, sort_keys=True)[:3000])
for k in d.get("kernels", [])[:3]:
    print(k.get("name"), k.get("status"), k.get("speedup"))
PY
}
for i in 1 2 3; do
  for b in kopt kopt-head; do
    echo "== $b run $i $(date +%T)"
    timeout 100 build/$b optimize tests/problems/03_log_softmax.py -o /tmp/o03-$b-$i --budget 60s --no-store --json > /tmp/o03-$b-$i.json 2>/tmp/o03-$b-$i.err
    echo "rc=$?"
    dump /tmp/o03-$b-$i/report.json
    nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv,noheader
  done
done > "$OUT/o03.log" 2>&1
cp /tmp/o03-kopt-1/report.json "$OUT/report-new1.json"
cp /tmp/o03-kopt-head-1/report.json "$OUT/report-head1.json"
