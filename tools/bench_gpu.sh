#!/usr/bin/env bash
# `make bench-gpu`: kopt optimize over the project's reduction-type example problems on a GPU,
# with torch.compile default and max-autotune-no-cudagraphs baselines. Each problem's
# optimize document goes to $BENCH_OUT/<problem>.json; tools/bench_table.py turns them into
# docs/BENCHMARKS.md. Problems and budget can be narrowed to fit a device session:
#   BENCH_PROBLEMS="03_log_softmax 04_layernorm" BENCH_BUDGET=40s tools/bench_gpu.sh
set -u
cd "$(dirname "$0")/.."
KOPT=${KOPT:-build/kopt}
OUTD=${BENCH_OUT:-build/bench}
mkdir -p "$OUTD"
PROBLEMS=${BENCH_PROBLEMS:-"02_softmax_wide 03_log_softmax 04_layernorm 05_rmsnorm 06_groupnorm 07_sum_inner 08_mean_outer 09_max_middle 10_argmax_inner 11_cumsum 12_avgpool2d 13_maxpool2d"}
for n in $PROBLEMS; do
  t0=$SECONDS
  "$KOPT" optimize "tests/problems/$n.py" -o "$OUTD/$n" --budget "${BENCH_BUDGET:-2m}" --max-autotune --json \
      >"$OUTD/$n.json" 2>"$OUTD/$n.err"
  rc=$?
  [ -d "$OUTD/$n" ] && python3 tools/io_bytes.py "tests/problems/$n.py" >"$OUTD/$n/io_bytes" 2>>"$OUTD/$n.err"
  echo "$n: exit $rc in $((SECONDS - t0)) s: $(python3 tools/bench_table.py --one "$OUTD/$n/report.json" 2>&1 || tail -2 "$OUTD/$n.err")"
done
python3 tools/bench_collect.py "$OUTD" "$OUTD/summary.json"
