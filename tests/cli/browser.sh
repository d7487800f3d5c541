#!/usr/bin/env bash
# The reports in a real browser (make browser-check): an optimize report.html and a bench
# summary.html, made now with the fake worker, rendered in headless Chromium (Debian's chromium).
# A page fails when a script raised or called console.error (caught by a recorder put first in
# the page's <head>, and Chromium's own "Uncaught" console lines), or when the rendered DOM holds
# no chart (<svg>). Screenshots and Chromium's log go to $OUT (default build/browser/).
# usage: KOPT=build/kopt bash tests/cli/browser.sh   (prints 'browser: N passed, N failed')
set -u
cd "$(dirname "$0")/../.."
KOPT=${KOPT:-build/kopt}
OUT=${OUT:-build/browser}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/cli/lib.sh   # ok, bad, expect_exit, has
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$CHROME" ] || { echo "browser: no chromium on PATH (tools/deps.sh --browser installs Debian's)"; exit 1; }

export KOPT_WORKER=$PWD/tests/fake_worker.py FAKE_FAST_PATTERN="num_warps=8, num_stages=1)"
export KOPT_NVIDIA_SMI=/nonexistent/nvidia-smi
unset KOPT_STORE FAKE_WORKER_MODE
P=tests/problems/14_gemm_bias_relu.py

# the two pages
expect_exit 0 "optimize report" -- "$KOPT" optimize "$P" -o "$T/opt" --budget 20s --rounds 4 --no-store
S=$T/suite
mkdir -p "$S/level1" "$S/level2"
cp tests/problems/03_log_softmax.py "$S/level1/"
cp tests/problems/14_gemm_bias_relu.py "$S/level2/"
expect_exit 0 "bench summary" -- "$KOPT" bench "$S" -o "$T/bench" --budget 20s --store "$T/st.sqlite"

# render NAME HTML: screenshot to $OUT/NAME.png, the DOM after load; sets R_SHOT, R_DOM, R_SVG
# (1: each obtained / present) and R_ERRS (the script errors and console.error calls, "" if none)
render() {
  local name=$1 html=$2 page="$T/$1.html"
  R_SHOT=0 R_DOM=0 R_SVG=0 R_ERRS=""
  # the recorder: errors and console.error calls land in an element the DOM dump shows
  python3 - "$html" "$page" <<'PY'
import sys
src = open(sys.argv[1], encoding="utf-8").read()
rec = ("<script>(function(){var l=[];function put(m){l.push(String(m));var e=document.getElementById('kopt-errors');"
       "if(!e&&document.body){e=document.createElement('pre');e.id='kopt-errors';document.body.appendChild(e);}"
       "if(e)e.textContent=l.join(' | ');}window.addEventListener('error',function(ev){put('error: '+ev.message);});"
       "var ce=console.error;console.error=function(){put('console.error: '+Array.prototype.join.call(arguments,' '));"
       "return ce.apply(console,arguments);};window.addEventListener('load',function(){if(l.length)put('end');});})();"
       "</script>")
i = src.find("<head>")
page = src[:i + 6] + rec + src[i + 6:] if i >= 0 else rec + src
open(sys.argv[2], "w", encoding="utf-8").write(page)
PY
  local flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars
               --user-data-dir="$T/profile-$name" --window-size=1280,1600 --enable-logging=stderr --v=0)
  timeout 120 "$CHROME" "${flags[@]}" --screenshot="$OUT/$name.png" "file://$page" >"$OUT/$name.log" 2>&1
  [ -s "$OUT/$name.png" ] && R_SHOT=1
  timeout 120 "$CHROME" "${flags[@]}" --dump-dom "file://$page" >"$T/$name.dom" 2>>"$OUT/$name.log" && R_DOM=1
  grep -q "<svg" "$T/$name.dom" && R_SVG=1
  R_ERRS=$(sed -n 's/.*<pre id="kopt-errors">\([^<]*\).*/\1/p' "$T/$name.dom" | head -c 400)
  local uncaught
  uncaught=$(grep -E 'CONSOLE.*Uncaught' "$OUT/$name.log" | head -2)
  [ -n "$uncaught" ] && R_ERRS="$R_ERRS $uncaught"
  return 0
}
# check NAME HTML: a page that renders, holds a chart and raises nothing
check() {
  render "$1" "$2"
  [ "$R_SHOT" = 1 ] && ok || bad "$1: no screenshot ($(tail -2 "$OUT/$1.log"))"
  [ "$R_DOM" = 1 ] && ok || bad "$1: chromium could not dump the DOM ($(tail -2 "$OUT/$1.log"))"
  [ "$R_SVG" = 1 ] && ok || bad "$1: no chart (<svg>) in the rendered page"
  [ -z "$R_ERRS" ] && ok || bad "$1: script errors: $R_ERRS"
}
[ -f "$T/opt/report.html" ] && check report "$T/opt/report.html" || bad "no report.html"
[ -f "$T/bench/summary.html" ] && check summary "$T/bench/summary.html" || bad "no summary.html"
# the checks themselves: a page with a failing script, a console.error and no chart is caught
printf '<!DOCTYPE html><html><head><title>x</title></head><body><p>no chart</p>%s</body></html>\n' \
  '<script>console.error("canary"); undefined_function();</script>' >"$T/canary.html"
render canary "$T/canary.html"
[ "$R_DOM" = 1 ] && [ "$R_SVG" = 0 ] && ok || bad "canary: a page without a chart was not caught"
case "$R_ERRS" in *canary*undefined_function*) ok ;; *) bad "canary: its errors were not caught: '$R_ERRS'" ;; esac
rm -f "$OUT/canary.png"

echo "screenshots: $OUT/report.png $OUT/summary.png (logs beside them)"
echo "browser: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
