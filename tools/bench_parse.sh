#!/usr/bin/env bash
# bench_parse.sh — `make bench`: time `kopt parse` on a ~5 MB output module.
#
# Builds one synthetic module from the fixtures in tests/fixtures/inductor/: the import header
# of a def-form fixture, the kernel definitions of every fixture repeated until ~4.5 MB (names
# repeat; the parser keeps the first of equal names, which does not change its work), one
# `def call(args):` whose body is a fixture's body repeated to ~0.5 MB, and the get_args /
# benchmark tail. Checks the byte-identical round trip on it, runs `kopt parse --bench 20`,
# and writes the figure to docs/BENCHMARKS-parse.md. Target: well under 50 ms.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kopt=${KOPT:-$root/build/kopt}
fix=$root/tests/fixtures/inductor
base=$fix/handmade_softmax_def.py
runs=${BENCH_RUNS:-20}
target=${BENCH_BYTES:-5242880}
out_md=$root/docs/BENCHMARKS-parse.md

[ -x "$kopt" ] || { echo "bench_parse: $kopt not built (make build/kopt)" >&2; exit 1; }
[ -f "$base" ] || { echo "bench_parse: missing $base" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kopt-bench.XXXXXX")
trap '[ -n "${BENCH_KEEP:-}" ] || rm -rf "$tmp"' EXIT
big=$tmp/big_module.py

# pieces of the def-form fixture
awk '/^# kernel path:/ {exit} {print}' "$base" > "$tmp/header.py"
awk '/^def call\(args\):/ {s=1; next} s && /^[^ \t\r]/ {exit} s {print}' "$base" > "$tmp/body.py"
awk '/^def get_args\(\):/ {s=1} s' "$base" > "$tmp/tail.py"
# the kernel definitions of every fixture (from the first comment block to async_compile.wait)
: > "$tmp/kernels.py"
for f in "$fix"/*.py; do
    awk '/^# kernel path:/ && !s {s=1} /^async_compile\.wait\(globals\(\)\)/ {s=0} s' "$f" >> "$tmp/kernels.py"
done
[ -s "$tmp/kernels.py" ] || { echo "bench_parse: no kernels found in $fix" >&2; exit 1; }

size() { wc -c < "$1" | tr -d ' '; }
kbytes=$(size "$tmp/kernels.py")
bbytes=$(size "$tmp/body.py")
kreps=$(( (target * 9 / 10) / kbytes + 1 ))
breps=$(( (target / 10) / bbytes + 1 ))

{
    cat "$tmp/header.py"
    for ((i = 0; i < kreps; i++)); do cat "$tmp/kernels.py"; done
    printf '\nasync_compile.wait(globals())\ndel async_compile\n\ndef call(args):\n'
    for ((i = 0; i < breps; i++)); do cat "$tmp/body.py"; done
    printf '\n\n'
    cat "$tmp/tail.py"
} > "$big"

bytes=$(size "$big")
"$kopt" parse "$big" --emit "$tmp/roundtrip.py" > /dev/null
cmp -s "$big" "$tmp/roundtrip.py" || { echo "bench_parse: round trip differs on $big" >&2; exit 1; }

line=$("$kopt" parse --bench "$runs" "$big")
echo "$line"
median=$(sed -n 's/^parse: median \([0-9.]*\) ms.*/\1/p' <<< "$line")
[ -n "$median" ] || { echo "bench_parse: could not read the median from: $line" >&2; exit 1; }

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
verdict=$(awk -v m="$median" 'BEGIN { print (m < 50 ? "under" : "OVER") }')
cat > "$out_md" <<EOF
# Parse benchmark

\`make bench\` (tools/bench_parse.sh) builds a synthetic Inductor output module of about 5 MB
from the fixtures in tests/fixtures/inductor/ (kernel definitions repeated, one call() body
repeated), checks that \`kopt parse --emit\` reproduces it byte for byte, and times
\`kopt parse --bench $runs\` on it: the median wall time of \`artifact_parse\` (lexing,
kernel decorators, call() statements) over $runs runs, file already in memory.

| date (UTC) | host | module bytes | result |
|---|---|---|---|
| $(date -u +%Y-%m-%dT%H:%MZ) | ${cpu:-unknown CPU}, $(nproc 2>/dev/null || echo '?') cores | $bytes | $line |

Median: **$median ms** ($verdict the 50 ms target).
EOF
echo "bench_parse: wrote $out_md (median $median ms, $bytes bytes)"
