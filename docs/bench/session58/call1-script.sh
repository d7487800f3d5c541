#!/usr/bin/env bash
# session 58 call 1 (developer scratch, not committed)
set -u
export PATH=$PWD/build:$PATH
OUT=$OUT INTERP=0 SUITES="optimize verify" VERIFY=22_logsumexp_middle T_GPUTEST=300 ONLY= bash tools/device_session.sh
{
  echo "== optimize level1/40 $(date +%T)"
  timeout 150 kopt optimize bench/suite/level1/40_cross_entropy.py -o /tmp/o40 --keep-work --max-autotune --budget 1m --no-store -v 2>&1 | tail -n 25
  echo "rc=$?"
  ls /tmp/o40/work
  mods=$(ls -d /tmp/o40/work/compile-*/graph0.py 2>/dev/null)
  cands=$(grep -l _row_softmax_stats /tmp/o40/work/cand*/graph0.py 2>/dev/null | head -n 2)
  cp /tmp/o40/report.md "$OUT/report40.md" 2>/dev/null
  echo "modules: $mods $cands"
  echo "== launch_profile unflushed $(date +%T)"
  timeout 120 python3 tools/launch_profile.py bench/suite/level1/40_cross_entropy.py $mods $cands --calls 300 2>&1 | grep -v "^ " | head -n 60
  echo "== launch_profile --flush $(date +%T)"
  timeout 120 python3 tools/launch_profile.py bench/suite/level1/40_cross_entropy.py $mods $cands --calls 300 --flush 2>&1 | grep -v "^ " | head -n 60
  echo "== done $(date +%T)"
} > "$OUT/lp40.log" 2>&1
