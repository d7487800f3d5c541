"""The machine code kopt judges is the machine code that runs (issue 11): for form-P candidates
of the suite, on launches of several specialisations (every integer a multiple of 16, none, an
integer equal to 1, which Triton's JIT turns into a constant), `kopt lint --sass --json` compiles
each launch of the plan in kopt's sandbox (worker/kopt_compile.py with the divisibility
attributes kopt derives) and reports each listing's digest (src/gates/sass.h, sass_digest); the
same plan launched by the launcher kopt writes for it (`kopt lint --show-launcher`), compiled by
Triton's own JIT in a fresh process with an empty cache, must give listings with the same
digests, in the same order.

usage: python3 tests/gpu/check_sass_match.py (`make gpu-test`, suite `machine`); one line, exit 0
when every launch's machine code matches, 1 otherwise. `--digest FILE` prints the digest of a
listing (the CPU unit test pins the C digest of a recorded listing to this one).
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KOPT = os.environ.get("KOPT", os.path.join(ROOT, "build", "kopt"))
INSN = re.compile(r"^\s*/\*[0-9a-fA-F]+\*/([^;]*);")


def digest(listing):
    """sass_digest (src/gates/sass.h): 64-bit FNV-1a over each instruction's text between the
    address comment and ';' (predicate included; blanks collapsed; ends trimmed), each + '\\n'.
    Lines are read as the C scanner reads them (at most 511 bytes); an instruction is one whose
    opcode (after an optional predicate) starts with a capital letter."""
    h = 0xcbf29ce484222325
    for line in listing.split("\n"):
        m = INSN.match(line.encode()[:511].decode(errors="replace"))
        if not m:
            continue
        text = " ".join(m.group(1).split())
        opcode = text.split(" ", 1)[1] if text.startswith("@") and " " in text else text
        if not opcode[:1].isupper():
            continue
        for b in (text + "\n").encode():
            h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


# (candidate, kernel values for kopt lint, the launcher's arguments: tensor shapes and ints)
CASES = [
    ("tests/candidates/03_log_softmax/good_plan_online.py", {"xnumel": 64, "r0_numel": 16384},
     [("in_ptr0", (64, 16384)), ("out_ptr2", (64, 16384)), "xnumel", "r0_numel"]),
    ("tests/candidates/03_log_softmax/good_plan_online.py", {"xnumel": 7, "r0_numel": 1000},
     [("in_ptr0", (7, 1000)), ("out_ptr2", (7, 1000)), "xnumel", "r0_numel"]),
    ("tests/candidates/03_log_softmax/good_plan_online.py", {"xnumel": 1, "r0_numel": 4096},
     [("in_ptr0", (1, 4096)), ("out_ptr2", (1, 4096)), "xnumel", "r0_numel"]),
    ("tests/candidates/02_softmax_wide/good_partial_exp_sum.py", {"xnumel": 40, "r0_numel": 52429},
     [("in_ptr0", (8, 262144)), ("in_ptr1", (8,)), ("out_ptr0", (40,)), "xnumel", "r0_numel"]),
]

JIT = r'''
import glob, importlib.util, json, os, subprocess, sys
import torch
src, args = sys.argv[1], json.loads(sys.argv[2])
spec = importlib.util.spec_from_file_location("judged", src)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
vals = []
for a in args:
    vals.append(torch.randn(*a, device="cuda") if isinstance(a, list) else a)
mod.launch(*vals)
torch.cuda.synchronize()
print(json.dumps(sorted(glob.glob(os.path.join(os.environ["TRITON_CACHE_DIR"], "*", "*.cubin")),
                        key=os.path.getmtime)))
'''


def lint_case(k, cand, values, launch, extra=()):
    """`kopt lint --sass --json --show-launcher` of case k (its values and shapes, then `extra`):
    (its JSON document, None) when it checked the machine code, else (None, why)."""
    lint = [KOPT, "lint", os.path.join(ROOT, cand), "--sass", "--json", "--show-launcher"] + list(extra)
    for name, v in values.items():
        lint += ["--value", "%s=%d" % (name, v)]
    for a in launch:
        if isinstance(a, tuple):
            lint += ["--shape", "%s=%s" % (a[0], "x".join(map(str, a[1])))]
    r = subprocess.run(lint, capture_output=True, text=True)
    try:
        d = json.loads(r.stdout)
    except ValueError:
        return None, "case %d: kopt lint gave no JSON (exit %d): %s" % (k, r.returncode, r.stderr[-300:])
    if not d.get("ok") or "sass" not in d:
        return None, "case %d: kopt lint did not check the machine code: %s" % (k, r.stdout[-400:])
    return d, None


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--digest":
        print(digest(open(sys.argv[2]).read()))
        return 0
    bad, n = [], 0
    for k, (cand, values, launch) in enumerate(CASES):
        d, why = lint_case(k, cand, values, launch)
        if why:
            bad.append(why)
            continue
        want = [L["sass_digest"] for L in d["sass"]["launches"]]
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "judged.py")
            with open(src, "w") as f:
                f.write(d["judged_text"])
            args = [list(a[1]) if isinstance(a, tuple) else values[a] for a in launch]
            env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(tmp, "cache"))
            j = subprocess.run([sys.executable, "-c", JIT, src, json.dumps(args)], capture_output=True, text=True,
                               env=env)
            if j.returncode != 0:
                bad.append("case %d: the JIT launch failed: %s" % (k, j.stderr[-400:]))
                continue
            cubins = json.loads(j.stdout.strip().splitlines()[-1])
            got = []
            for c in cubins:
                s = subprocess.run(["cuobjdump", "-sass", c], capture_output=True, text=True)
                got.append(digest(s.stdout))
        n += len(want)
        if got != want:
            bad.append("case %d (%s %s): sandbox %s, JIT %s" % (k, os.path.basename(cand), values, want, got))
    if bad:
        print("machine code: %d mismatch(es): %s" % (len(bad), "; ".join(bad)))
        return 1
    print("machine code: %d launches of %d cases (multiples of 16, not, an integer equal to 1): the sandbox's "
          "cubin is the JIT's, instruction for instruction" % (n, len(CASES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
