#!/usr/bin/env bash
# Stand-in for compute-sanitizer in the CPU tests: takes the options kopt passes (--tool memcheck,
# --log-file F, --report-api-errors no, --print-limit N, --padding N), checks them and that PyTorch's caching
# allocator is off, then runs the worker with FAKE_MEMCHECK_LOG=F, where the fake worker writes
# a memcheck-style report for a candidate marked FAKE_OOB (tests/fake_worker.py, op_isolate).
set -u
log=
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) [ "$2" = memcheck ] || { echo "fake sanitizer: --tool $2" >&2; exit 2; }; shift 2;;
    --log-file) log=$2; shift 2;;
    --report-api-errors|--print-limit|--padding) shift 2;;
    --*) echo "fake sanitizer: unknown option $1" >&2; exit 2;;
    *) break;;
  esac
done
[ -n "$log" ] || { echo "fake sanitizer: no --log-file" >&2; exit 2; }
[ "${PYTORCH_NO_CUDA_MEMORY_CACHING:-}" = 1 ] || { echo "fake sanitizer: the caching allocator is on" >&2; exit 2; }
echo "========= COMPUTE-SANITIZER" >"$log"
FAKE_MEMCHECK_LOG=$log exec "$@"
