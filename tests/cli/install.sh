#!/usr/bin/env bash
# CLI tests of the install layout (issue 13), no GPU: `make install PREFIX=...` into a temporary
# prefix; the installed kopt, run from another directory with no KOPT_* variable, finds its share
# folder next to its binary (kopt --version names it), parses a module, runs the installed worker
# script (a python whose torch import fails: exit 9 with the worker's own reason) and renders the
# installed templates (an optimize run with the fake worker writes kopt_loader.py); a binary
# copied alone says what is missing and KOPT_ROOT fixes it; `make uninstall` removes it all;
# `make demo-cpu`'s script runs; `make dist` packs the tree without build outputs.
# usage: bash tests/cli/install.sh   (prints 'install: N passed, N failed'; uses build/kopt)
set -u
cd "$(dirname "$0")/../.."
SRC=$PWD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/cli/lib.sh   # ok, bad, expect_exit, has
unset KOPT_ROOT KOPT_WORKER KOPT_PYTHON KOPT_STORE KOPT_FORCE_VERSION

PREFIX=$T/prefix
make -s --no-print-directory install PREFIX="$PREFIX" >"$T/install.log" 2>&1 && ok || bad "make install: $(tail -5 "$T/install.log")"
K=$PREFIX/bin/kopt
for f in bin/kopt share/kopt/worker/kopt_worker.py share/kopt/worker/ncu_run.py share/kopt/worker/kopt/__init__.py \
         share/kopt/templates/kopt_loader.py share/kopt/prompts/v1; do
  [ -e "$PREFIX/$f" ] && ok || bad "make install: $f missing"
done
ls "$PREFIX"/share/kopt/templates/kernels/*.py.tmpl >/dev/null 2>&1 && ok || bad "make install: no kernel templates"
[ -z "$(find "$PREFIX" -name __pycache__ -o -name '*.pyc')" ] && ok || bad "make install copied __pycache__"

mkdir -p "$T/elsewhere"
cd "$T/elsewhere"
expect_exit 0 "installed kopt --version" -- "$K" --version
has "--version: the installed share folder" "$T/out" "share: *$PREFIX/share/kopt (installed, next to the binary)"
has "--version: the installed worker" "$T/out" "worker: *$PREFIX/share/kopt/worker/kopt_worker.py$"
expect_exit 0 "installed kopt parse" -- "$K" parse "$SRC/tests/fixtures/inductor/14_gemm_bias_relu_g0.py"
has "installed parse: kernels" "$T/out" "triton_poi_fused_add_addmm_relu_0"
expect_exit 0 "installed kopt inspect --help" -- "$K" inspect --help
# the installed worker script runs: a python whose torch import fails gets the worker's reason
mkdir -p "$T/notorch"
echo 'raise ImportError("no torch in this test python")' >"$T/notorch/torch.py"
printf '#!/bin/sh\nPYTHONPATH=%s exec python3 "$@"\n' "$T/notorch" >"$T/py" && chmod +x "$T/py"
KOPT_PYTHON=$T/py expect_exit 9 "installed kopt inspect runs the installed worker" -- "$K" inspect "$SRC/tests/problems/14_gemm_bias_relu.py"
has "the installed worker's own reason" "$T/err" "no torch in this test python"
# the installed templates: optimize (fake worker) renders kernels and copies the loader
KOPT_WORKER=$SRC/tests/fake_worker.py FAKE_FAST_PATTERN="num_warps=8, num_stages=1)" \
  expect_exit 0 "installed kopt optimize (fake worker)" -- "$K" optimize "$SRC/tests/problems/14_gemm_bias_relu.py" -o "$T/o" --budget 20s --rounds 4 --no-store
has "installed templates rendered: a winner" "$T/out" "optimized: XBLOCK="
cmp -s "$T/o/kopt_loader.py" "$PREFIX/share/kopt/templates/kopt_loader.py" && ok || bad "kopt_loader.py is not the installed template"
# a binary copied alone: says what is missing; KOPT_ROOT names the share folder
mkdir -p "$T/lonely" && cp "$K" "$T/lonely/kopt"
expect_exit 3 "a lone copied binary" -- "$T/lonely/kopt" --version
has "lone binary: MISSING" "$T/out" "MISSING"
has "lone binary: the hint" "$T/err" "KOPT_ROOT"
KOPT_ROOT=$PREFIX/share/kopt expect_exit 0 "a lone binary with KOPT_ROOT" -- "$T/lonely/kopt" --version
has "KOPT_ROOT wins" "$T/out" "share: *$PREFIX/share/kopt (\$KOPT_ROOT)"
# copied with its share folder (PREFIX moved): still found, no variable
cp -a "$PREFIX" "$T/moved"
expect_exit 0 "a moved install" -- "$T/moved/bin/kopt" --version
has "moved install: its own share" "$T/out" "share: *$T/moved/share/kopt"
cd "$SRC"

make -s --no-print-directory uninstall PREFIX="$PREFIX" >/dev/null 2>&1 && ok || bad "make uninstall"
[ ! -e "$PREFIX/bin/kopt" ] && [ ! -e "$PREFIX/share/kopt" ] && ok || bad "make uninstall left files"

# make demo-cpu's script: the flow and where the reports are, in seconds
KOPT=$SRC/build/kopt expect_exit 0 "demo --cpu" -- timeout 120 bash tools/demo.sh --cpu -o "$T/demo"
has "demo --cpu: inspect" "$T/out" "kopt inspect"
has "demo --cpu: says where the reports are" "$T/out" "reports: $T/demo/report.md, $T/demo/report.html"
for f in report.md report.html report.json optimized_module.py; do [ -f "$T/demo/$f" ] && ok || bad "demo --cpu: $f missing"; done

# make dist: the working tree's files, no build outputs
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  make -s --no-print-directory dist >"$T/dist.log" 2>&1 && ok || bad "make dist: $(tail -3 "$T/dist.log")"
  TGZ=$(ls build/kopt-*.tar.gz 2>/dev/null | head -1)
  tar -tzf "$TGZ" >"$T/dist.txt" 2>/dev/null && ok || bad "make dist: no tarball"
  for f in Makefile README.md src/cli/args.c src/cli/main.c tools/deps.sh worker/kopt_worker.py templates/kopt_loader.py \
           tests/fake_worker.py tests/cli/usage.sh .ci/run; do
    grep -qx "kopt-[0-9.]*/$f" "$T/dist.txt" && ok || bad "make dist: $f not in the tarball"
  done
  grep -q '/build/\|__pycache__' "$T/dist.txt" && bad "make dist: build outputs in the tarball" || ok
fi

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
