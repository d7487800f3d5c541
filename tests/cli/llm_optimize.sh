#!/usr/bin/env bash
# CPU test of `kopt optimize --llm`: the fake worker stands in for the GPU and the scripted LLM
# server (tests/llm/scripted_server.py) plays planner and executor. The executor's first
# candidate breaks a static rule; kopt must send the refusal back in the same conversation and
# accept the retry, which the fake worker times 20% faster. Also `kopt llm check`.
# usage: KOPT=build/kopt bash tests/cli/llm_optimize.sh   (prints 'N passed, N failed')
set -u
cd "$(dirname "$0")/../.."
KOPT=${KOPT:-build/kopt}
T=$(mktemp -d)
trap 'kill $SPID 2>/dev/null; rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }

python3 tests/candidates/fake/generate.py "$T/fake"
python3 - "$T/script.json" "$T/fake" <<'PY'
import json, sys
good = open(sys.argv[2] + "/a_fast.py").read()
broken = open(sys.argv[2] + "/h_static_io.py").read()
plan = {"plans": [{"direction": "llm_rewrite", "params": {"idea": "larger tiles"}, "rationale": "scripted"}]}
steps = [
    {"reply": "Plan:\n```json\n" + json.dumps(plan) + "\n```", "tokens": [100, 20]},          # planner, round 0
    {"reply": "Here it is:\n```python\n" + broken + "```\n", "tokens": [300, 200]},         # executor, try 1
    {"reply": "Fixed:\n```python\n" + good + "```\n", "tokens": [400, 200]},                # executor, retry
    {"reply": "```json\n{\"plans\": []}\n```", "tokens": [100, 5]},                          # planner, round 1
]
json.dump(steps, open(sys.argv[1], "w"))
PY
python3 tests/llm/scripted_server.py --script "$T/script.json" --log "$T/requests.jsonl" --idle 60 --parent $$ >"$T/port" &
SPID=$!
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
PORT=$(head -1 "$T/port")
export OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY="sk-test-not-a-real-key"
export KOPT_WORKER=$PWD/tests/fake_worker.py
"$KOPT" optimize tests/problems/14_gemm_bias_relu.py -o "$T/out" --llm openai:scripted --roles planner,executor \
    --no-store --budget 60s --rounds 6 >"$T/stdout" 2>"$T/stderr"
rc=$?
[ $rc -eq 0 ] && ok || bad "optimize --llm exit $rc: $(tail -3 "$T/stderr")"
grep -q "FAKE_FAST" "$T/out/optimized_module.py" && ok || bad "the LLM's retried candidate was not stitched"
# the planner's explicit empty list ends the search for the kernel: no retry, no warning
grep -q "warning: planner" "$T/stderr" && bad "the planner's empty plan list was not taken as an answer: $(grep 'warning: planner' "$T/stderr")" || ok
HAS_TRITON=0; "${KOPT_PYTHON:-python3}" -c 'import triton' 2>/dev/null && HAS_TRITON=1
python3 - "$T/requests.jsonl" "$T/out/report.json" "$HAS_TRITON" <<'PY' && ok || bad "conversation / accounting"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert len(reqs) >= 3, len(reqs)
retry = reqs[2]["body"]["messages"]
text = json.dumps(retry)
# the retry continues the executor's conversation and carries the static refusal (open(...))
assert "open" in text and ("gate 1" in text or "static" in text.lower()), text[-600:]
assert all(not r["key_sent"] or "sk-test-not-a-real-key" not in json.dumps(r["headers"]) for r in reqs)
d = json.load(open(sys.argv[2]))
assert d["agents"]["planner"].startswith("openai:") and d["agents"]["executor"].startswith("openai:")
ok = [a for a in d["attempts"] if a["outcome"] == "accepted"]
assert ok and ok[0]["direction"] == "llm_rewrite", d["attempts"]
# an LLM executor's candidates get gate 1's machine-code check where the worker's python has
# triton (and a cuobjdump is found); the accepted one is then a checked form-P kernel
m = d["machine_check"]
if sys.argv[3] == "1":
    assert m == {"mode": "llm candidates", "ran": True}, m
    acc = [c for c in d["verify"]["candidates"] if c.get("verdict") == "accepted"]
    assert acc and "sass" in acc[0]["gates"][0], acc
else:
    assert m["mode"] == "llm candidates" and m["ran"] is False and m["why"].startswith("not found: "), m
PY
grep -q "sk-test-not-a-real-key" "$T/stdout" "$T/stderr" "$T/out/report.json" && bad "the API key leaked into output" || ok

# Mixed roles: an LLM planner with the built-in executor (the plan's knobs in the LLM's shape).
cat >"$T/s3.json" <<'JSON'
[{"reply": "```json\n{\"plans\": [{\"direction\": \"launch_config\", \"params\": {\"XBLOCK\": 1024, \"num_warps\": 8}, \"rationale\": \"bigger tiles\"}]}\n```"},
 {"reply": "```json\n{\"plans\": []}\n```"}, {"reply": "```json\n{\"plans\": []}\n```"}]
JSON
python3 tests/llm/scripted_server.py --script "$T/s3.json" --log "$T/r3.jsonl" --idle 60 --parent $$ >"$T/port3" &
for _ in $(seq 50); do [ -s "$T/port3" ] && break; sleep 0.1; done
OPENAI_BASE_URL="http://127.0.0.1:$(head -1 "$T/port3")/v1" FAKE_FAST_PATTERN="num_warps=8, num_stages=1)" \
  "$KOPT" optimize tests/problems/14_gemm_bias_relu.py -o "$T/out3" --llm openai:scripted --roles planner --no-store \
    --budget 60s --rounds 6 --json >"$T/o4" 2>"$T/e4"
rc=$?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["agents"]["planner"].startswith("openai:") and d["agents"]["executor"]=="builtin" and d["outcome"]=="optimized" and "machine_check" not in d, (d["agents"], d["outcome"], d.get("machine_check"))' "$T/out3/report.json" && [ $rc -eq 0 ] && ok || bad "LLM planner + built-in executor: exit $rc $(tail -2 "$T/e4")"

# A verdict reused from the store reaches the LLM planner's history as what it was: the same
# plan twice over one store; the first run's candidate is refused at gate 4 (the fake times it
# no faster), the second run's planner reads it back as refused (not as kopt's error).
for run in 1 2; do
  python3 tests/llm/scripted_server.py --script "$T/s3.json" --log "$T/rs$run.jsonl" --idle 60 --parent $$ >"$T/ports$run" &
  for _ in $(seq 50); do [ -s "$T/ports$run" ] && break; sleep 0.1; done
  OPENAI_BASE_URL="http://127.0.0.1:$(head -1 "$T/ports$run")/v1" \
    "$KOPT" optimize tests/problems/14_gemm_bias_relu.py -o "$T/outs$run" --llm openai:scripted --roles planner \
      --store "$T/st.sqlite" --budget 60s --rounds 6 >"$T/os$run" 2>"$T/es$run" || bad "store run $run: $(tail -2 "$T/es$run")"
done
python3 - "$T/rs2.jsonl" <<'PY' && ok || bad "a reused refusal in the planner's history"
import json, sys
lines = [ln for r in map(json.loads, open(sys.argv[1])) for ln in json.dumps(r["body"]).split("\\n")
         if "verdict from the store" in ln]
assert lines and all("refused at gate 4" in ln and "error" not in ln for ln in lines), lines
PY

# kopt llm check: answers, and a closed port is a clear error with exit 13
echo '[{"reply": "ok", "tokens": [5, 1]}]' >"$T/s2.json"
python3 tests/llm/scripted_server.py --script "$T/s2.json" --log "$T/r2.jsonl" --idle 20 --parent $$ >"$T/port2" &
for _ in $(seq 50); do [ -s "$T/port2" ] && break; sleep 0.1; done
OPENAI_BASE_URL="http://127.0.0.1:$(head -1 "$T/port2")/v1" "$KOPT" llm check --llm openai:scripted >"$T/o2" 2>&1 && grep -q "answered" "$T/o2" && ok || bad "llm check: $(cat "$T/o2")"
OPENAI_BASE_URL="http://127.0.0.1:9/v1" "$KOPT" llm check --llm openai:scripted >"$T/o3" 2>&1
rc=$?
[ $rc -eq 13 ] && grep -q "cannot reach" "$T/o3" && ok || bad "llm check on a closed port: exit $rc: $(cat "$T/o3")"
echo "llm cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
