# lib.sh — the helpers the CLI test scripts share (sourced after they set $T, their temp folder):
#   ok / bad MSG            count a passed / failed check (bad prints "FAIL: MSG")
#   expect_exit CODE NAME -- CMD...   run CMD (stdout to $T/out, stderr to $T/err); a failure
#                           unless it exits CODE and printed no raw Python traceback
#   has NAME FILE PATTERN   a failure unless FILE contains PATTERN
pass=0; fail=0
ok()  { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }

expect_exit() {
  local want=$1 name=$2; shift 3
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then bad "$name: exit $rc, expected $want; stderr: $(head -c 600 "$T/err")"; return 1; fi
  if grep -q "Traceback" "$T/err" "$T/out"; then bad "$name: a raw traceback was printed"; return 1; fi
  ok
}

has() {
  if grep -q -- "$3" "$2"; then ok; else bad "$1: '$3' not in $(basename "$2"): $(head -c 300 "$2")"; fi
}
