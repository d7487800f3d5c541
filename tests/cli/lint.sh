#!/usr/bin/env bash
# CLI tests of `kopt lint` (gate 1's static rules on the CPU; no worker, no GPU): exit codes 0
# (passes), 12 (refused, each finding as FILE:LINE: RULE: ...), 3 (missing file, directory), 2
# (bad command line); the --json shape; --kernel, --allow-precision-change, --dtype; and the
# corpus: every rendered kernel template (the goldens of tests/fixtures/templates/, split at their
# "### label" lines) and every honest candidate of tests/candidates/<problem>/ passes, every gate-1
# attack (tests/candidates/static/ and any `# expect: gate1 RULE` file) is refused with its rule.
# usage: KOPT=build/kopt bash tests/cli/lint.sh   (prints 'lint: N passed, N failed')
set -u
cd "$(dirname "$0")/../.."
KOPT=${KOPT:-build/kopt}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/cli/lib.sh   # ok, bad, expect_exit, has
export KOPT_WORKER=/nonexistent/no_worker.py   # lint must not need one

GOOD=tests/candidates/03_log_softmax/good_looped_retuned.py   # form L (its form-P twin: good_plan_online.py)
ATTACK=tests/candidates/static/subprocess.py
PREC=tests/candidates/static/reduced_precision.py

# json_check NAME FILE PY-EXPR: a failure unless the expression holds for the JSON object `d`
json_check() {
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" \
      2>"$T/jerr"; then ok; else bad "$1: $3 does not hold for $(head -c 400 "$2") $(head -c 200 "$T/jerr")"; fi
}

# ---- 1. exit codes and the text output -------------------------------------------------------
expect_exit 0 "lint a good candidate" -- "$KOPT" lint --allow-launcher "$GOOD"
has "lint good: says it passes" "$T/out" "good_looped_retuned.py: passes gate 1's static rules (form L)"
expect_exit 12 "lint an attack" -- "$KOPT" lint --allow-launcher "$ATTACK"
has "lint attack: FILE:LINE: RULE:" "$T/out" "^$ATTACK:4: io: \`import subprocess\`: "
has "lint attack: the use too" "$T/out" "^$ATTACK:20: io: \`subprocess.run\`"
has "lint attack: summary" "$T/out" "refused by gate 1's static rules: 2 findings"
[ ! -s "$T/err" ] && ok || bad "lint attack: stderr not empty: $(head -c 200 "$T/err")"
expect_exit 3 "lint a missing file" -- "$KOPT" lint "$T/nope.py"
has "missing file: named" "$T/err" "candidate file $T/nope.py does not exist"
expect_exit 3 "lint a directory" -- "$KOPT" lint tests/candidates
has "directory: named" "$T/err" "is a directory"
expect_exit 2 "lint without a file" -- "$KOPT" lint
expect_exit 2 "lint two files" -- "$KOPT" lint --allow-launcher "$GOOD" "$ATTACK"
expect_exit 2 "lint unknown option" -- "$KOPT" lint --allow-launcher "$GOOD" --fast
expect_exit 2 "lint --dtype bad" -- "$KOPT" lint --allow-launcher "$GOOD" --dtype float8
has "--dtype bad: names the value" "$T/err" "'float8'"
expect_exit 2 "lint --kernel without a value" -- "$KOPT" lint --allow-launcher "$GOOD" --kernel
expect_exit 0 "lint --help" -- "$KOPT" lint --help
has "lint --help: exit codes" "$T/out" "exit codes: 0 the candidate passes, 2 bad command line, 3 candidate file"
has "lint --help: 12" "$T/out" "12 refused"
expect_exit 0 "kopt --help" -- "$KOPT" --help
has "kopt --help lists lint" "$T/out" "^  lint "

# a file that does not parse: one finding of rule parse, with its line
printf 'import triton\n\ndef launch(x, stream=None):\n    return (\n' >"$T/broken.py"
expect_exit 12 "lint an unparsable file" -- "$KOPT" lint "$T/broken.py"
has "unparsable: rule parse" "$T/out" "broken.py:[0-9]*: parse: "
printf '# kopt-candidate: replaces=k\nimport triton\n' >"$T/nojit.py"
expect_exit 12 "lint a file without a kernel" -- "$KOPT" lint "$T/nojit.py"
has "no kernel: rule parse" "$T/out" "nojit.py:1: parse: line 1: no top-level @triton.jit function"

# ---- 2. --json ----------------------------------------------------------------------------------
expect_exit 12 "lint --json attack" -- "$KOPT" lint --allow-launcher "$ATTACK" --json
json_check "json attack" "$T/out" "d['ok'] is False and d['file'].endswith('subprocess.py') and d['form'] == 'L'"
json_check "json attack findings" "$T/out" \
  "[(f['rule'], f['line'], f['text']) for f in d['findings']] == [('io', 4, 'import subprocess'), ('io', 20, 'subprocess.run')]"
json_check "json finding keys" "$T/out" \
  "all(set(f) >= {'rule', 'line', 'message', 'text'} and f['message'] for f in d['findings'])"
json_check "json attack binding" "$T/out" "d['replaces'] == 'triton_poi_fused_add_gelu_mul_0' and d['kernel'] is None"
expect_exit 0 "lint --json good" -- "$KOPT" lint --allow-launcher --json "$GOOD"
json_check "json good" "$T/out" "d['ok'] is True and d['findings'] == []"
[ ! -s "$T/err" ] && ok || bad "json good: stderr not empty"
expect_exit 12 "lint --json unparsable" -- "$KOPT" lint "$T/broken.py" --json
json_check "json unparsable" "$T/out" "d['ok'] is False and d['form'] is None and d['findings'][0]['rule'] == 'parse'"
expect_exit 3 "lint --json missing" -- "$KOPT" lint --json "$T/nope.py"
json_check "json missing: an error object" "$T/out" "d['ok'] is False and d['error']['exit_code'] == 3"
expect_exit 2 "lint --json bad option" -- "$KOPT" lint --allow-launcher --json "$GOOD" --nope
json_check "json usage: an error object" "$T/out" "d['ok'] is False and d['error']['exit_code'] == 2"

# ---- 3. options ------------------------------------------------------------------------------
expect_exit 12 "reduced precision refused in a float32 model" -- "$KOPT" lint --allow-launcher "$PREC"
has "precision: the rule" "$T/out" ": precision: \`tl.float16\`"
expect_exit 0 "reduced precision with consent" -- "$KOPT" lint --allow-launcher "$PREC" --allow-precision-change
expect_exit 0 "reduced precision in a float16 model" -- "$KOPT" lint --allow-launcher "$PREC" --dtype float16
expect_exit 12 "--dtype float32 is the default" -- "$KOPT" lint --allow-launcher "$PREC" --dtype float32
# inline PTX: a declared register under a special register's name (%pm<4>, then %pm0) is still a
# counter read (rule timer once precision is consented to); a declared %c, which only starts
# %clock's name, is the kernel's own register and passes
SHADOW=tests/candidates/static/ptx_declared_special.py
expect_exit 12 "PTX: a declared special name refused with consent to precision" -- \
  "$KOPT" lint --allow-launcher --allow-precision-change --json "$SHADOW"
json_check "PTX: declared %pm0 is rule timer" "$T/out" "[f['rule'] for f in d['findings']] == ['timer']"
sed 's/{ .reg .u32 %pm<4>; mov.u32 $0, %pm0; }/{ .reg .u32 %c; mov.u32 %c, $1; mov.u32 $0, %c; }/' "$SHADOW" >"$T/ptx_own_c.py"
grep -q '%c; mov.u32 %c, \$1' "$T/ptx_own_c.py" && ok || bad "PTX control: the sed did not apply"
expect_exit 0 "PTX: a declared %c (a prefix of %clock) passes with consent" -- \
  "$KOPT" lint --allow-launcher --allow-precision-change "$T/ptx_own_c.py"
K=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
expect_exit 0 "--kernel matching the binding" -- "$KOPT" lint --allow-launcher "$GOOD" --kernel "$K"
expect_exit 12 "--kernel not matching the binding" -- "$KOPT" lint --allow-launcher "$GOOD" --kernel other_kernel --json
json_check "--kernel mismatch: rule interface" "$T/out" \
  "d['kernel'] == 'other_kernel' and [f['rule'] for f in d['findings']] == ['interface'] and d['findings'][0]['line'] == 2"

# ---- 3b. a candidate's own launcher (form L) -----------------------------------------------------
# refused by default (rule launcher, at its def launch), accepted with --allow-launcher; form P
# (a kernel and a KOPT_PLAN: kopt writes the launcher) needs no flag, and --show-launcher prints
# what kopt judges for it
expect_exit 12 "form L refused by default" -- "$KOPT" lint --json "$GOOD"
json_check "form L: rule launcher only, at def launch" "$T/out" \
  "[(f['rule'], f['line'], f['text']) for f in d['findings']] == [('launcher', 44, 'def launch')] and d['form'] == 'L'"
expect_exit 12 "form L attack: its rule and launcher" -- "$KOPT" lint --json "$ATTACK"
json_check "form L attack: rules" "$T/out" "{f['rule'] for f in d['findings']} == {'io', 'launcher'}"
PLANF=tests/candidates/03_log_softmax/good_plan_online.py
expect_exit 0 "form P passes without a flag" -- "$KOPT" lint "$PLANF"
has "form P: says so" "$T/out" "good_plan_online.py: passes gate 1's static rules (form P)"
expect_exit 0 "form P --show-launcher" -- "$KOPT" lint "$PLANF" --show-launcher
has "show-launcher: kopt's launcher" "$T/out" "^def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None, _kopt_plan_go=None):"
has "show-launcher: the launch" "$T/out" "_log_softmax_online\[(xnumel, )\](in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK=2048, num_warps=8, num_stages=1)"
expect_exit 0 "form P --show-launcher --json" -- "$KOPT" lint "$PLANF" --show-launcher --json
json_check "judged_text" "$T/out" "d['form'] == 'P' and 'def launch(' in d['judged_text'] and 'KOPT_PLAN =' not in d['judged_text']"
printf '%s\n' "$(cat "$PLANF")" | sed 's/"num_warps": 8/"num_warps": 3/' >"$T/badplan.py"
expect_exit 12 "a plan that does not fit" -- "$KOPT" lint --json "$T/badplan.py"
json_check "bad plan: rule parse, its line" "$T/out" \
  "[f['rule'] for f in d['findings']] == ['parse'] and 'num_warps' in d['findings'][0]['message'] and d['findings'][0]['line'] > 40"

# ---- 4. the corpus -----------------------------------------------------------------------------
# every honest candidate passes (form L ones with --allow-launcher); every gate-1 attack is refused
# with exactly the rule it names (but a `gate1 launch ...` one, which only kopt's launcher refuses
# when it first runs, on the captured launch: it passes the static rules) (form L attacks judged with --allow-launcher, so that their own
# rule is what refuses them); without the flag every form-L file is refused, with rule launcher
n_honest=0; n_attack=0; n_plan=0
for f in tests/candidates/[0-9]*/*.py tests/candidates/static/*.py; do
  exp=$(sed -n 's/^# expect: //p' "$f" | head -1)
  case "$exp" in
    gate1\ launch\ *)   # refused when kopt's launcher first runs on the captured launch, not by the static rules
      expect_exit 0 "launch-time attack $f (passes the static rules)" -- "$KOPT" lint "$f" ;;
    gate1\ *)
      rule=${exp#gate1 }; rule=${rule%% *}   # "env+io": the findings' rules are these ones
      expect_exit 12 "attack $f" -- "$KOPT" lint --allow-launcher --json "$f" || continue
      json_check "attack $f: only [$rule]" "$T/out" "d['findings'] and {f['rule'] for f in d['findings']} <= set('$rule'.split('+')) and d['findings'][0]['rule'] in '$rule'.split('+')"
      n_attack=$((n_attack+1)) ;;
    *)
      expect_exit 0 "honest $f ($exp)" -- "$KOPT" lint --allow-launcher "$f" && n_honest=$((n_honest+1)) ;;
  esac
  "$KOPT" lint --json "$f" >"$T/out" 2>"$T/err"
  if grep -q '"form": "L"' "$T/out"; then
    json_check "form L $f: launcher refused" "$T/out" "d['ok'] is False and 'launcher' in {f['rule'] for f in d['findings']}"
  elif grep -q '"form": "P"' "$T/out"; then
    n_plan=$((n_plan+1))
  fi
done
[ "$n_plan" -ge 1 ] && ok || bad "no form-P candidate in the corpus"
[ "$n_honest" -ge 20 ] && ok || bad "only $n_honest honest candidates linted"
[ "$n_attack" -ge 15 ] && ok || bad "only $n_attack attack candidates linted"

# every rendered kernel template (the executor's output, golden files) passes
mkdir -p "$T/tmpl"
for g in tests/fixtures/templates/*.txt; do
  awk -v base="$T/tmpl/$(basename "$g" .txt)" '/^### /{n++; f=base "_" n ".py"; next} {print > f}' "$g"
done
n_tmpl=0
for f in "$T"/tmpl/*.py; do
  expect_exit 0 "template $(basename "$f")" -- "$KOPT" lint "$f" && n_tmpl=$((n_tmpl+1))
done
[ "$n_tmpl" -ge 30 ] && ok || bad "only $n_tmpl rendered templates linted"

# ---- --sass: precision read from the machine code (a sandboxed Triton compile, no GPU) -------
# Without a python that imports triton, only the checks that need none run (the skip is said).
SASS_DIR=tests/candidates/sass
HALF=(--dtype float16 --type in_ptr0=*fp16 --type out_ptr0=*fp16 --value xnumel=1048576)
expect_exit 9 "--sass with a python that does not exist" -- "$KOPT" lint --sass --python /nonexistent/python3 "${HALF[@]}" "$SASS_DIR/half_upcast.py"
expect_exit 2 "--sass with a value missing" -- "$KOPT" lint --sass --python "$(command -v python3)" --dtype float16 "$SASS_DIR/half_upcast.py"
has "--sass: names the value it needs" "$T/err" "--value xnumel=N"
expect_exit 2 "--value not a number" -- "$KOPT" lint --sass --value xnumel=lots "$SASS_DIR/half_upcast.py"
expect_exit 2 "--type unknown" -- "$KOPT" lint --sass --type in_ptr0=*float "$SASS_DIR/half_upcast.py"
expect_exit 12 "--sass on a form-L file" -- "$KOPT" lint --sass --allow-launcher "$GOOD"
has "--sass on form L: says it needs form P" "$T/out" "reads a form-P plan"
expect_exit 2 "--keep-cubins without --sass" -- "$KOPT" lint --keep-cubins "$T" "$SASS_DIR/half_upcast.py"
has "--keep-cubins without --sass: says so" "$T/err" "add --sass"
expect_exit 2 "--keep-cubins to a directory that does not exist" -- "$KOPT" lint --sass --keep-cubins "$T/none" "$SASS_DIR/half_upcast.py"

# ---- a form-P plan evaluated for the values given (no --sass, no python): launches that would
# fail only when they run are refused (rule plan_eval); faults no value avoids, when it is read
PLANF=tests/candidates/03_log_softmax/good_plan_online.py
expect_exit 0 "values: a plan launchable for them" -- "$KOPT" lint --value xnumel=4096 --value r0_numel=16384 "$PLANF"
expect_exit 12 "values: a grid past CUDA's 2^31-1 programs" -- "$KOPT" lint --json --value xnumel=2147483648 --value r0_numel=16384 "$PLANF"
json_check "values: plan_eval at the launch's line" "$T/out" \
  "[(f['rule'], f['line']) for f in d['findings']] == [('plan_eval', 47)] and 'grid size 0 is 2147483648' in d['findings'][0]['message']"
expect_exit 2 "values: one the grid needs is missing" -- "$KOPT" lint --value r0_numel=16384 "$PLANF"
has "values: names xnumel" "$T/err" "--value xnumel=N"
sed 's/"grid": \["xnumel"\]/"grid": ["xnumel", 65536]/' "$PLANF" > "$T/grid_y.py"
expect_exit 12 "a constant grid y past 65535, without values" -- "$KOPT" lint "$T/grid_y.py"
has "grid y: said at its line" "$T/out" "grid_y.py:47: parse: .*CUDA's limit for dimension y"
sed 's/"grid": \["xnumel"\]/"grid": ["xnumel \/\/ (4 - 4)"]/' "$PLANF" > "$T/grid_div0.py"
expect_exit 12 "a division by a constant zero, without values" -- "$KOPT" lint "$T/grid_div0.py"
has "division by zero: said" "$T/out" "grid_div0.py:47: parse: .*a grid size: a division by zero"
TPY=${KOPT_TRITON_PYTHON:-python3}
if "$TPY" -c 'import triton' 2>/dev/null; then
  mkdir -p "$T/keep"
  expect_exit 0 "--sass --keep-cubins: a float32 control" -- "$KOPT" lint --json --sass --python "$TPY" --value xnumel=64 \
    --value r0_numel=16384 --keep-cubins "$T/keep" tests/candidates/03_log_softmax/good_plan_online.py
  json_check "--keep-cubins: the launch's cubin, kopt's metadata and its spec" "$T/keep/launch0.spec.json" \
    "d['kernel'] == '_log_softmax_online' and d['arg_names'][-1] == 'R0_BLOCK' and d['signature'][-1] == 'constexpr' and d['constexprs'] == {'R0_BLOCK': 2048} and d['num_warps'] == 8"
  json_check "--keep-cubins: the metadata is kopt's copy" "$T/keep/launch0.json" \
    "d['name'] == '_log_softmax_online' and d['num_warps'] == 8 and d['global_scratch_size'] == 0 and 'extern_libs' not in d"
  [ -s "$T/keep/launch0.cubin" ] && ok || bad "--keep-cubins: no cubin kept"

  expect_exit 12 "--sass: float16 arithmetic in a float16 model" -- "$KOPT" lint --json --sass --python "$TPY" "${HALF[@]}" "$SASS_DIR/half_arith.py"
  json_check "--sass: half_arith refused for arith_f16" "$T/out" \
    "[f['rule'] for f in d['findings']] == ['precision_sass'] and 'arith_f16' in d['findings'][0]['message'] and d['sass']['launches'][0]['classes'] == ['arith_f16']"
  expect_exit 0 "--sass: conversions only" -- "$KOPT" lint --json --sass --python "$TPY" "${HALF[@]}" "$SASS_DIR/half_upcast.py"
  json_check "--sass: half_upcast shows cvt_f16 only" "$T/out" \
    "d['ok'] and d['sass']['launches'][0]['classes'] == ['cvt_f16'] and d['sass']['allowed'] == ['cvt_f16'] and d['sass']['launches'][0]['instructions'] > 20"
  expect_exit 12 "--sass: the same file judged for a float32 model" -- "$KOPT" lint --sass --python "$TPY" --value xnumel=1048576 "$SASS_DIR/half_upcast.py"
  has "--sass float32: the static rules refuse tl.float16 before any compile" "$T/out" "precision: \`tl.float16\`"
  expect_exit 0 "--sass: accepted with --allow-precision-change" -- "$KOPT" lint --sass --allow-precision-change --python "$TPY" "${HALF[@]}" "$SASS_DIR/half_arith.py"
  expect_exit 0 "--sass: a float32 form-P control" -- "$KOPT" lint --json --sass --python "$TPY" --value xnumel=4096 --value r0_numel=8192 tests/candidates/03_log_softmax/good_online.py
  json_check "--sass: the control has no reduced precision; the sandbox is named" "$T/out" \
    "d['sass']['launches'][0]['classes'] == [] and 'environment' in d['sass']['sandbox']"
  expect_exit 12 "--sass: a kernel that does not compile" -- "$KOPT" lint --sass --python "$TPY" --value xnumel=1048576 --value r0_numel=20000 tests/candidates/03_log_softmax/good_online.py
  has "--sass: a failing plan check is named" "$T/out" "next_pow2(r0_numel)"
else
  echo "lint --sass: the machine-code checks skipped: no python with triton (set KOPT_TRITON_PYTHON)"
fi

echo "lint: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
