#!/usr/bin/env bash
# CLI tests of kopt's strict input handling (issue 13), no GPU: numbers and durations parsed
# strictly (exit 2 naming the flag and the value), directories given as files (exit 3, "is a
# directory"), store commands (exit codes of the README's table, read-only ones create nothing),
# --help of every subcommand listing its exit codes, the torch/triton version check (exit 9 unless
# --force-version) and `kopt --version`. The fake worker stands in for the GPU; a command that
# wrongly accepts a bad value runs against it and is caught by its exit code.
# usage: KOPT=build/kopt bash tests/cli/usage.sh   (prints 'usage: N passed, N failed')
set -u
cd "$(dirname "$0")/../.."
KOPT=${KOPT:-build/kopt}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/cli/lib.sh   # ok, bad, expect_exit, has

export KOPT_WORKER=$PWD/tests/fake_worker.py
# the worker inherits an allowlist of the environment (worker.h): the stand-in workers' settings are named
export KOPT_WORKER_ENV=OLD_TORCH,OLD_TRITON
unset KOPT_FORCE_VERSION KOPT_STORE
P=tests/problems/14_gemm_bias_relu.py
M=tests/fixtures/inductor/14_gemm_bias_relu_g0.py
STORE=$T/st.sqlite

# bad_value NAME FLAG VALUE -- CMD...: exit 2, one stderr line naming FLAG and 'VALUE', and no
# output folder made (a bounded run: a parser that lets the value through must not hang the test)
bad_value() {
  local name=$1 flag=$2 val=$3; shift 4
  expect_exit 2 "$name" -- timeout 60 "$@" || return
  grep -q -- "$flag" "$T/err" && grep -qF -- "'$val'" "$T/err" && ok || bad "$name: the error does not name $flag and '$val': $(head -c 300 "$T/err")"
  [ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "$name: expected one line on stderr, got $(wc -l <"$T/err")"
}

# ---- 1. numbers and durations -------------------------------------------------------------
bad_value "optimize --max-candidates abc" --max-candidates abc -- "$KOPT" optimize "$P" -o "$T/o" --no-store --max-candidates abc
bad_value "optimize --max-candidates 0" --max-candidates 0 -- "$KOPT" optimize "$P" -o "$T/o" --no-store --max-candidates 0
bad_value "optimize --max-candidates 12x" --max-candidates 12x -- "$KOPT" optimize "$P" -o "$T/o" --no-store --max-candidates 12x
bad_value "optimize --rounds -3" --rounds -3 -- "$KOPT" optimize "$P" -o "$T/o" --no-store --rounds -3
bad_value "optimize --min-gain foo" --min-gain foo -- "$KOPT" optimize "$P" -o "$T/o" --no-store --min-gain foo
bad_value "optimize --min-gain -0.5" --min-gain -0.5 -- "$KOPT" optimize "$P" -o "$T/o" --no-store --min-gain -0.5
bad_value "optimize --budget nan" --budget nan -- "$KOPT" optimize "$P" -o "$T/o" --no-store --budget nan
bad_value "optimize --budget inf" --budget inf -- "$KOPT" optimize "$P" -o "$T/o" --no-store --budget inf
bad_value "optimize --budget 2x" --budget 2x -- "$KOPT" optimize "$P" -o "$T/o" --no-store --budget 2x
bad_value "optimize --budget 0" --budget 0 -- "$KOPT" optimize "$P" -o "$T/o" --no-store --budget 0
bad_value "optimize --budget=' 5m'" --budget " 5m" -- "$KOPT" optimize "$P" -o "$T/o" --no-store --budget " 5m"
[ ! -e "$T/o" ] && ok || bad "a refused command line made the output folder"
bad_value "inspect --rounds -3" --rounds -3 -- "$KOPT" inspect "$P" --rounds -3
bad_value "inspect --reps 1e3" --reps 1e3 -- "$KOPT" inspect "$P" --reps 1e3
bad_value "verify --seeds 0" --seeds 0 -- "$KOPT" verify "$P" --candidate "$M" -o "$T/v" --seeds 0
bad_value "verify --seeds abc" --seeds abc -- "$KOPT" verify "$P" --candidate "$M" -o "$T/v" --seeds abc
bad_value "verify --rounds -3" --rounds -3 -- "$KOPT" verify "$P" --candidate "$M" -o "$T/v" --rounds -3
bad_value "verify --timeout inf" --timeout inf -- "$KOPT" verify "$P" --candidate "$M" -o "$T/v" --timeout inf
bad_value "verify --timeout soon" --timeout soon -- "$KOPT" verify "$P" --candidate "$M" -o "$T/v" --timeout soon
bad_value "verify --rho-max nan" --rho-max nan -- "$KOPT" verify "$P" --candidate "$M" -o "$T/v" --rho-max nan
bad_value "verify --abs-bound x" --abs-bound x -- "$KOPT" verify "$P" --candidate "$M" -o "$T/v" --abs-bound x
bad_value "verify --min-gain 0x10" --min-gain 0x10 -- "$KOPT" verify "$P" --candidate "$M" -o "$T/v" --min-gain 0x10
bad_value "parse --bench abc" --bench abc -- "$KOPT" parse "$M" --bench abc
bad_value "bench --budget nan" --budget nan -- "$KOPT" bench "$T" --budget nan
bad_value "bench --timeout-factor inf" --timeout-factor inf -- "$KOPT" bench "$T" --timeout-factor inf
bad_value "bench --gpus 0" --gpus 0 -- "$KOPT" bench "$T" --gpus 0
KOPT_BENCH_GRACE_S=abc bad_value "KOPT_BENCH_GRACE_S=abc" KOPT_BENCH_GRACE_S abc -- "$KOPT" bench "$T"
bad_value "store export abc" RUN_ID abc -- "$KOPT" store --store "$STORE" export abc
# the accepted forms still work
expect_exit 0 "parse --bench 3" -- "$KOPT" parse "$M" --bench 3
expect_exit 0 "optimize, valid numbers" -- "$KOPT" optimize "$P" -o "$T/ok" --no-store --budget 0.5m --rounds 3 --max-candidates 4 --min-gain 0 --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["budget"]["wall_s"]==30, d["budget"]' "$T/out" && ok || bad "--budget 0.5m is not 30 s"

# ---- 2. a directory given as a file: exit 3, named as a directory ---------------------------
mkdir -p "$T/dir.py"
dir_case() {  # dir_case NAME -- CMD...
  local name=$1; shift 2
  expect_exit 3 "$name" -- timeout 60 "$@" && has "$name: named as a directory" "$T/err" "is a directory"
}
dir_case "inspect DIR" -- "$KOPT" inspect "$T/dir.py"
dir_case "optimize DIR" -- "$KOPT" optimize "$T/dir.py" -o "$T/o2" --no-store
dir_case "verify DIR" -- "$KOPT" verify "$T/dir.py" --candidate "$M" -o "$T/v2"
dir_case "verify --candidate DIR" -- "$KOPT" verify "$P" --candidate "$T/dir.py" -o "$T/v3"
dir_case "verify --replace K=DIR" -- "$KOPT" verify "$P" --replace k="$T/dir.py" -o "$T/v3"
dir_case "parse DIR" -- "$KOPT" parse "$T/dir.py"
dir_case "store merge DIR" -- "$KOPT" store --store "$STORE" merge "$T/dir.py"
expect_exit 3 "inspect, missing file" -- "$KOPT" inspect "$T/none.py"
has "missing file: does not exist" "$T/err" "does not exist"

# ---- 3. the store: exit codes of the README, read-only commands create nothing --------------
expect_exit 3 "store runs, no store" -- "$KOPT" store --store "$T/new/st.sqlite" runs
has "store runs, no store: says so" "$T/err" "no store at"
[ ! -e "$T/new" ] && ok || bad "store runs created $T/new"
expect_exit 3 "store export, no store" -- "$KOPT" store --store "$T/new/st.sqlite" export 1
[ ! -e "$T/new" ] && ok || bad "store export created $T/new"
KOPT_STORE=$T/env.sqlite expect_exit 3 "store runs, \$KOPT_STORE missing" -- "$KOPT" store runs
[ ! -e "$T/env.sqlite" ] && ok || bad "store runs created \$KOPT_STORE"
expect_exit 3 "store merge MISSING" -- "$KOPT" store --store "$STORE" merge "$T/missing.sqlite"
has "store merge MISSING names it" "$T/err" "missing.sqlite does not exist"
[ ! -e "$STORE" ] && ok || bad "a refused merge created the target store"
expect_exit 2 "store frobnicate" -- "$KOPT" store --store "$STORE" frobnicate
expect_exit 2 "store runs extra" -- "$KOPT" store --store "$STORE" runs extra
python3 -c 'import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute("create table t(x)")' "$T/other.sqlite"
expect_exit 11 "store merge of a foreign file" -- "$KOPT" store --store "$STORE" merge "$T/other.sqlite"
expect_exit 0 "store runs, empty store" -- "$KOPT" store --store "$STORE" runs
has "store runs, empty store: no runs" "$T/out" "no runs"

# ---- 4. --help of every subcommand lists its exit codes --------------------------------------
for c in inspect optimize verify parse llm store bench version; do
  expect_exit 0 "$c --help" -- "$KOPT" "$c" --help || continue
  has "$c --help lists its exit codes" "$T/out" "exit codes:"
  has "$c --help: bad command line" "$T/out" "2 bad command line"
done
expect_exit 0 "kopt --help" -- "$KOPT" --help
has "kopt --help: exit codes" "$T/out" "exit codes"

# ---- 5. supported torch/triton ----------------------------------------------------------------
OLD=$PWD/tests/fixtures/cli/old_torch_worker.py
KOPT_WORKER=$OLD expect_exit 9 "inspect, torch 2.10" -- "$KOPT" inspect "$P" --reps 2 --rounds 2
[ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "unsupported torch: expected one line, got: $(cat "$T/err")"
has "unsupported torch: names the versions" "$T/err" "torch 2.10.0+cu126 with triton 3.5.1"
has "unsupported torch: names the supported ones" "$T/err" "supports torch 2.11.x with triton 3.6.x"
has "unsupported torch: the way out" "$T/err" "force-version"
KOPT_WORKER=$OLD expect_exit 0 "inspect --force-version" -- "$KOPT" inspect "$P" --reps 2 --rounds 2 --force-version
has "forced: a warning line" "$T/err" "warning: .*running anyway"
KOPT_WORKER=$OLD KOPT_FORCE_VERSION=1 expect_exit 0 "inspect, KOPT_FORCE_VERSION=1" -- "$KOPT" inspect "$P" --reps 2 --rounds 2
KOPT_WORKER=$OLD OLD_TORCH=2.11.2+cu128 OLD_TRITON=3.6.0 expect_exit 0 "inspect, torch 2.11.2 / triton 3.6.0" -- "$KOPT" inspect "$P" --reps 2 --rounds 2
KOPT_WORKER=$OLD OLD_TORCH=2.11.0 OLD_TRITON=none expect_exit 9 "inspect, no triton" -- "$KOPT" inspect "$P" --reps 2 --rounds 2
has "no triton: says so" "$T/err" "triton (none)"
KOPT_WORKER=$OLD OLD_TORCH=2.1.0 OLD_TRITON=3.6.0 expect_exit 9 "inspect, torch 2.1 is not 2.11" -- "$KOPT" inspect "$P" --reps 2 --rounds 2
KOPT_WORKER=$OLD expect_exit 9 "optimize, torch 2.10" -- "$KOPT" optimize "$P" -o "$T/ov" --no-store
KOPT_WORKER=$OLD expect_exit 0 "optimize --force-version" -- "$KOPT" optimize "$P" -o "$T/ov" --no-store --budget 20s --rounds 3 --force-version
KOPT_WORKER=$OLD expect_exit 9 "verify, torch 2.10" -- "$KOPT" verify "$P" --candidate "$M" -o "$T/vv"
expect_exit 0 "bench takes --force-version" -- "$KOPT" bench --report-only --force-version --store "$STORE" --help

# ---- 6. kopt --version: the supported versions and the paths --------------------------------
expect_exit 0 "kopt --version" -- "$KOPT" --version
has "--version: version" "$T/out" "^kopt [0-9]"
has "--version: supported" "$T/out" "torch 2.11.x with triton 3.6.x"
has "--version: worker (\$KOPT_WORKER)" "$T/out" "worker: .*fake_worker.py"
( unset KOPT_WORKER; "$KOPT" --version >"$T/out" 2>&1 ) && ok || bad "--version without KOPT_WORKER"
has "--version: share is the source tree" "$T/out" "share: *$PWD (the source tree)"
has "--version: the source tree's worker" "$T/out" "worker: *$PWD/worker/kopt_worker.py$"
expect_exit 2 "kopt version extra" -- "$KOPT" version extra

echo "usage: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
