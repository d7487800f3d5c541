#!/usr/bin/env bash
# demo.sh — kopt's first run.
#
# usage: tools/demo.sh [--python PY] [-o OUT] [--budget T]     (make demo: a GPU machine)
#        tools/demo.sh --cpu [-o OUT]                          (make demo-cpu: no GPU)
#
# GPU: finds a python with a supported torch (2.11.x) and triton (3.6.x) -- --python PY or
# $KOPT_PYTHON when given (they win: a python that does not qualify is an error), else python3
# when it qualifies, else a virtual environment under ~/.cache/kopt/venv ($KOPT_VENV), created
# and installed from PyPI on first use -- checks that torch sees a CUDA device, then runs
#   kopt optimize tests/problems/03_log_softmax.py -o out/demo --budget 60s
# --cpu: no GPU, no torch: the fake worker (tests/fake_worker.py) answers with a recorded
# Inductor module (tests/fixtures/inductor/14_gemm_bias_relu_g0.py) and made-up timings, so
# inspect -> optimize -> reports run in seconds; the reports go to out/demo-cpu. Nothing is
# opened. $KOPT names the kopt binary (default build/kopt).
# Exit codes: kopt's own; 2 bad command line, 9 no usable python.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KOPT=${KOPT:-$ROOT/build/kopt}
TORCH_WANT=2.11 TRITON_WANT=3.6
cpu=0 python="" out="" budget=60s
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) cpu=1 ;;
    --python) python=${2:?--python needs a path}; shift ;;
    -o|--out) out=${2:?-o needs a folder}; shift ;;
    --budget) budget=${2:?--budget needs a duration}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "tools/demo.sh: unknown argument '$1'; see tools/demo.sh --help" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$KOPT" ] || { echo "tools/demo.sh: $KOPT is not built; run make first" >&2; exit 2; }

if [ "$cpu" = 1 ]; then
  out=${out:-out/demo-cpu}
  export KOPT_WORKER=$ROOT/tests/fake_worker.py
  export FAKE_WORKER_FIXTURE=$ROOT/tests/fixtures/inductor/14_gemm_bias_relu_g0.py
  export FAKE_FAST_PATTERN="num_warps=8, num_stages=1)"   # the fake times these launches 20% faster
  P=tests/problems/14_gemm_bias_relu.py
  echo "== kopt demo, CPU only: the fake worker stands in for the GPU (its timings are made up) =="
  echo "\$ kopt inspect $P"
  "$KOPT" inspect "$P" --reps 5 --rounds 6
  echo
  echo "\$ kopt optimize $P -o $out --budget 20s --no-store"
  "$KOPT" optimize "$P" -o "$out" --budget 20s --rounds 6 --no-store
  echo
  echo "reports: $out/report.md, $out/report.html, $out/report.json"
  echo "module:  $out/optimized_module.py (load it with $out/kopt_loader.py)"
  exit 0
fi

# A python's versions as "torch triton cuda" ("- - -" when torch does not import).
versions() {
  "$1" - <<'PY' 2>/dev/null || echo "- - -"
try:
    import torch
except Exception:
    print("- - -"); raise SystemExit
try:
    import triton
    tv = triton.__version__
except Exception:
    tv = "-"
print(torch.__version__, tv, int(torch.cuda.is_available()))
PY
}
# qualifies PY: torch 2.11.x and triton 3.6.x (any local suffix)
qualifies() {
  local v t tr
  v=$(versions "$1"); t=${v%% *}; tr=${v#* }; tr=${tr%% *}
  [[ "$t" == "$TORCH_WANT" || "$t" == "$TORCH_WANT".* || "$t" == "$TORCH_WANT"+* ]] &&
    [[ "$tr" == "$TRITON_WANT" || "$tr" == "$TRITON_WANT".* || "$tr" == "$TRITON_WANT"+* ]]
}

python=${python:-${KOPT_PYTHON:-}}
if [ -n "$python" ]; then
  qualifies "$python" || { echo "tools/demo.sh: $python has torch/triton/cuda '$(versions "$python")'; kopt needs torch $TORCH_WANT.x with triton $TRITON_WANT.x" >&2; exit 9; }
elif command -v python3 >/dev/null && qualifies python3; then
  python=$(command -v python3)
else
  venv=${KOPT_VENV:-$HOME/.cache/kopt/venv}
  if ! { [ -x "$venv/bin/python" ] && qualifies "$venv/bin/python"; }; then
    echo "tools/demo.sh: no python with torch $TORCH_WANT.x and triton $TRITON_WANT.x; installing them from PyPI into $venv (a few GB, once)"
    python3 -m venv "$venv" || { echo "tools/demo.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 9; }
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q "torch==$TORCH_WANT.*" "triton==$TRITON_WANT.*"
  fi
  qualifies "$venv/bin/python" || { echo "tools/demo.sh: $venv has '$(versions "$venv/bin/python")' after the install" >&2; exit 9; }
  python=$venv/bin/python
fi
read -r tv trv cuda <<<"$(versions "$python")"
echo "python: $python (torch $tv, triton $trv)"
[ "$cuda" = 1 ] || { echo "tools/demo.sh: torch sees no CUDA device here; make demo needs an NVIDIA GPU (make demo-cpu runs without one)" >&2; exit 6; }
out=${out:-out/demo}
echo "\$ kopt optimize tests/problems/03_log_softmax.py -o $out --budget $budget"
"$KOPT" optimize tests/problems/03_log_softmax.py -o "$out" --budget "$budget" --python "$python"
echo "reports: $out/report.md, $out/report.html, $out/report.json"
