#!/usr/bin/env bash
# Runs `kopt bench` over the project's KernelBench-scale suite on a GPU machine and leaves what
# a person needs in $OUT (the device tool returns at most 8 files): results.json, summary.md,
# summary.html, the store (to merge the shards of several sessions), a tarball of the
# per-problem reports, and the bench log.
#
# usage: OUT=dir [BENCH_ARGS="--dev"] [BENCH_BUDGET=2m] [BENCH_STORE=path] [BENCH_SUITE=bench/suite]
#        tools/bench_device.sh
# BENCH_ARGS selects the problems (--dev when unset, --shard I/N, --only a,b, both --dev and
# --only; set but empty: the whole suite); BENCH_SUITE another suite (bench/heldout, which has no
# DEV list: give it BENCH_ARGS); BENCH_STORE resumes a store brought along (else a fresh one); BENCH_TIMEOUT
# (s) stops the sweep with SIGTERM (the unfinished problems stay unfinished in the store and run
# again next time).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:?set OUT}
ARGS=${BENCH_ARGS---dev}   # set but empty: the whole suite
BUDGET=${BENCH_BUDGET:-2m}
SUITE=${BENCH_SUITE:-bench/suite}
STORE=${BENCH_STORE:-/tmp/kopt-bench.sqlite}
WORK=/tmp/kopt-bench-out
rm -rf "$WORK"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv >"$OUT/bench-gpus.txt" 2>&1
# shellcheck disable=SC2086
timeout --signal=TERM "${BENCH_TIMEOUT:-0}" \
  build/kopt bench "$SUITE" $ARGS --budget "$BUDGET" --gpus all -o "$WORK" --store "$STORE" -v \
  >"$OUT/bench.log" 2>&1
echo "kopt bench exit $?" >>"$OUT/bench.log"
df -h /tmp >>"$OUT/bench.log"
cp "$WORK/results.json" "$WORK/summary.md" "$WORK/summary.html" "$OUT/" 2>/dev/null
cp "$STORE" "$OUT/bench-store.sqlite" 2>/dev/null
[ -s "$WORK/results.json" ] || build/kopt bench "$SUITE" --report-only --budget "$BUDGET" --store "$STORE" -o "$WORK" \
  >>"$OUT/bench.log" 2>&1 && cp "$WORK/results.json" "$WORK/summary.md" "$OUT/" 2>/dev/null
# each problem's report.json and optimize.log (small), not their modules
(cd "$WORK" && find runs -name report.json -o -name optimize.log -o -name worker.log | tar czf "$OUT/runs.tgz" -T -) 2>/dev/null
