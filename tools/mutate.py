#!/usr/bin/env python3
"""mutate.py - mutation testing of kopt's verdict code (issue 11, `make mutate`).

A verdict that a flipped comparison cannot change is a verdict nobody tested. For each target C
file this script makes small changes ("mutants") one at a time, rebuilds, runs the tests that
cover the file, and counts a mutant as killed when a test fails (or hangs past its timeout) and
as survived when every test still passes. A mutant that does not compile is not counted: it is
reported separately.

Mutation operators (one change per mutant; the same change is never made twice):
  rel     a relational operator to its boundary / equality neighbour: < <=, <= <, > >=, >= >,
          == !=, != ==
  logic   && ||, || &&
  arith   binary + -, - +, * /, / * (and += -=, -= +=, *= /=, /= *=)
  cond    if (c) -> if (!(c))
  const   integer 0 -> 1, 1 -> 0, n -> n+1 (n >= 2); a float literal x -> x*1.01 and x*0.99
  return  return E; -> return 0; (E not already a 0/1/NULL literal), and an early return
          statement deleted (replaced by {})
Comments, string and character literals and preprocessor lines are never mutated.

Where it runs: the repository is copied (without .git) to one working copy per job under
$TMPDIR (the build/ folder travels with it, so only the mutated object is rebuilt); the
mutated file is written in place in that copy and restored in a finally block (also on
SIGINT / SIGTERM); `make build/unit-tests build/kopt-asan` rebuilds just that object and relinks.
The tree you work in is never written to (--in-tree mutates it instead, one job only).
Before the mutants, every test stage used is run once on the unmutated copy: it must pass, and
its time sets that stage's timeout (4x + 20 s).

Tests per file (TARGETS below): the Criterion unit binary filtered to the suites that exercise
the file, then (only for a mutant the unit tests did not kill) the CLI tests that exercise it
through the fake worker. The first failing stage kills the mutant.

usage:
  python3 tools/mutate.py [--files F,F...] [--max N] [--jobs J] [--threshold 0.90]
                          [--list] [--quick] [--json OUT.json] [--in-tree] [-v]
    --files      target files (paths or basenames: decide.c,stats.c); default all of TARGETS but
                 the "extra" ones (code next to the verdicts, run on request)
    --max N      at most N mutants per file, spread evenly over the file
    --jobs J     mutants run in parallel, each in its own copy (default: CPU count)
    --list       only list the mutants (file:line, function, operator, change), run nothing
    --quick      unit-test stages only (skip the CLI stages: faster, a lower kill rate)
    --json OUT   write every mutant's result to OUT
    --threshold  exit 0 when killed / (killed + survived) >= this (default 0.90), else 1
    --only RE    only the mutants whose 'file:line: op: change' matches RE
    --equivalent the list of equivalent mutants (default tools/mutate_equivalent.txt): a mutant
                 listed there (file, function, source line, change) that survives is counted as
                 equivalent, not as a survivor; one listed there that a test kills is reported
Output: one line per surviving mutant (file:line: operator: change | source line), a table per
file and overall (mutants, killed, survived, equivalent, uncompilable, killed / (killed +
survived)). Exit 2 on a usage error or when the unmutated tests fail.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# file -> {"stages": [(kind, arg)], "functions": [names] (mutate only their bodies; None: all)}
# kind "unit": the Criterion binary with --filter arg; kind "cli": bash arg with KOPT=kopt-asan.
TARGETS = {
    "src/gates/decide.c": {
        "stages": [("unit", "@(decide|tensor)/*"), ("cli", "tests/cli/run.sh")],
    },
    "src/gates/stats.c": {
        "stages": [("unit", "@(stats|decide)/*")],
    },
    "src/gates/tensor.c": {
        "stages": [("unit", "@(tensor|decide)/*"), ("unit", "worker/*")],
    },
    "src/gates/static.c": {
        "stages": [("unit", "@(static*|templates|region_agents)/*")],
    },
    "src/gates/static_names.c": {
        "stages": [("unit", "@(static*|templates)/*"), ("cli", "tests/cli/lint.sh")],
    },
    "src/gates/plan.c": {
        # form P: the plan's checks and the launcher kopt writes from it
        "stages": [("unit", "@(plan|static*|templates|agents|region_agents|scan|colsoftmax)/*"), ("cli", "tests/cli/lint.sh")],
    },
    "src/gates/plan_eval.c": {
        # a form-P plan evaluated for one launch's values: the faults gate 1 refuses (lint rule
        # plan_eval, the machine-code check's values) and the specialisation it compiles
        "stages": [("unit", "@(plan*|sass_gate*)/*"), ("cli", "tests/cli/lint.sh")],
    },
    "src/gates/candidate.c": {
        # the candidate parser: form, bindings, scopes and name resolution that gate 1's rules
        # and the interface check judge by
        "stages": [("unit", "@(static*|templates|region|region_agents|guard|plan)/*"), ("cli", "tests/cli/lint.sh")],
    },
    "src/gates/gate1.c": {
        "stages": [("unit", "@(static_candidate*|templates|region_agents)/*"), ("cli", "tests/cli/run.sh")],
    },
    "src/gates/kmeta.c": {
        # gate 1's check of the sandbox's compile metadata against what kopt asked
        "stages": [("unit", "kmeta/*")],
    },
    "src/gates/sass.c": {
        # gate 1's machine-code classes: reduced precision, clock and hardware-state reads
        "stages": [("unit", "sass/*")],
    },
    "src/util/tknobs.c": {
        # which Triton knobs keep a candidate from running (the worker's environment, the guard)
        "stages": [("unit", "@(tknobs|guard)/*"), ("cli", "tests/cli/run.sh")],
    },
    "src/artifact/region_vendor.c": {
        # not verdict code (gate 3 judges against the float64 eager model whatever this writes),
        # so not in the default set (`--files region_vendor.c`): the module a vendor region's
        # candidates are judged in -- which ATen calls become a region, the launcher (the op's
        # out= overload, gate 2's baseline) and the output buffer
        "extra": True,
        "stages": [("unit", "@(region|region_agents|templates)/*"), ("cli", "tests/cli/run.sh")],
    },
    "src/agents/builtin_pool.c": {
        # not verdict code (the gates judge what it writes), so not in the default set (`--files
        # builtin_pool.c`): which launches the pooling family recognises -- a vendor region's ATen
        # call or an Inductor kernel's FX graph -- and the arguments it reads from them
        "extra": True,
        "stages": [("unit", "@(pool|region_agents|templates)/*")],
    },
    "src/agents/builtin_groupstats.c": {
        # not verdict code either (`--files builtin_groupstats.c`): which kernels the channels-last
        # group-statistics family recognises (FX graph, loads, stores) and its variants
        "extra": True,
        "stages": [("unit", "@(groupstats|templates)/*")],
    },
    "src/agents/kfacts.c": {
        # not verdict code (`--files kfacts.c`): the planner context's kernel object read into the
        # typed facts every family matcher decides from
        "extra": True,
        "stages": [("unit", "@(kfacts|agents|tuned|pool|scan|region_agents|families_recorded)/*")],
    },
    "src/agents/builtin_aligned.c": {
        # not verdict code (`--files builtin_aligned.c`): which split reductions aligned_chunks
        # recognises and the text it writes (the goldens pin it; the interpreter test runs them)
        "extra": True,
        "stages": [("unit", "@(agents|templates|families_recorded)/*")],
    },
    "src/optimize/search.c": {
        # only the search's gating decisions: the screen (its 0.98 bar), who goes to the gates,
        # the per-kernel budget, the screen's worker limit (opt_screen_timeout_s: a unit test at
        # its edges; search_gating.sh's hung screen checks the budget left evaluate() hands it);
        # not the constants handed to bookkeeping calls (the attempt
        # record, the planner's history, progress and log lines, the worker request's fields)
        "functions": ["evaluate", "over_kernel_budget", "opt_screen_timeout_s"],
        "skip_calls": ["opt_record_attempt", "history_add", "opt_progress", "log_warn", "log_info", "json_pack"],
        "stages": [("unit", "search/*"), ("cli", "tests/cli/search_gating.sh"), ("cli", "tests/cli/llm_optimize.sh"),
                   ("cli", "tests/cli/run.sh")],
    },
}

# ---------------------------------------------------------------------------- C tokens

KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "_Bool", "_Static_assert", "_Alignof", "_Atomic",
}
PUNCT = sorted("""<<= >>= ... -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= ##
    [ ] ( ) { } . & * + - ~ ! / % < > ^ | ? : ; = , #""".split(), key=len, reverse=True)


class Tok:
    __slots__ = ("kind", "text", "start", "end", "line", "ws_before", "ws_after")

    def __init__(self, kind, text, start, end, line):
        self.kind, self.text, self.start, self.end, self.line = kind, text, start, end, line
        self.ws_before = self.ws_after = False

    def __repr__(self):
        return "Tok(%s %r @%d)" % (self.kind, self.text, self.line)


def tokenize(src):
    """C tokens of src: kinds id, num, str, chr, op. Comments, preprocessor lines (with their
    continuations) and whitespace are skipped; each token knows whether whitespace (or a
    comment) touches it on either side."""
    toks = []
    i, n, line = 0, len(src), 1
    at_line_start = True
    gap = True
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = gap = True
            continue
        if c in " \t\r\f\v":
            i += 1
            gap = True
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            gap = True
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            i = j
            gap = True
            continue
        if c == "#" and at_line_start:
            while i < n:
                j = src.find("\n", i)
                if j < 0:
                    i = n
                    break
                k = j - 1
                while k > i and src[k] in " \t\r":
                    k -= 1
                if src[k] == "\\":
                    line += 1
                    i = j + 1
                    continue
                i = j
                break
            gap = True
            continue
        at_line_start = False
        start = i
        if c.isalpha() or c == "_":
            while i < n and (src[i].isalnum() or src[i] == "_"):
                i += 1
            kind = "id"
            # string prefixes: L"..", u8"..", u".."
            if i < n and src[i] in "\"'" and src[start:i] in ("L", "u", "U", "u8"):
                q = src[i]
                i = skip_quoted(src, i, q)
                kind = "str" if q == '"' else "chr"
        elif c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            i += 1
            while i < n:
                if src[i] in "eEpP" and i + 1 < n and src[i + 1] in "+-":
                    i += 2
                elif src[i].isalnum() or src[i] in "._":
                    i += 1
                else:
                    break
            kind = "num"
        elif c in "\"'":
            i = skip_quoted(src, i, c)
            kind = "str" if c == '"' else "chr"
        else:
            for p in PUNCT:
                if src.startswith(p, i):
                    i += len(p)
                    break
            else:
                i += 1
            kind = "op"
        t = Tok(kind, src[start:i], start, i, line)
        t.ws_before = gap
        if toks and gap:
            toks[-1].ws_after = True
        toks.append(t)
        gap = False
    if toks:
        toks[-1].ws_after = True
    return toks


def skip_quoted(src, i, q):
    i += 1
    while i < len(src) and src[i] != q:
        if src[i] == "\\":
            i += 1
        elif src[i] == "\n":
            break
        i += 1
    return i + 1


def match_close(toks, i):
    """Index of the token closing the bracket at toks[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    o, c, d = toks[i].text, pairs[toks[i].text], 0
    for k in range(i, len(toks)):
        if toks[k].text == o and toks[k].kind == "op":
            d += 1
        elif toks[k].text == c and toks[k].kind == "op":
            d -= 1
            if d == 0:
                return k
    return len(toks) - 1


def function_ranges(toks, names):
    """Token index ranges [open brace, close brace] of the bodies of the named functions
    (definitions at file scope)."""
    out = []
    depth = 0
    k = 0
    while k < len(toks):
        t = toks[k]
        if t.kind == "op" and t.text == "{":
            depth += 1
        elif t.kind == "op" and t.text == "}":
            depth -= 1
        elif depth == 0 and t.kind == "id" and t.text in names and k + 1 < len(toks) and toks[k + 1].text == "(":
            close = match_close(toks, k + 1)
            if close + 1 < len(toks) and toks[close + 1].text == "{":
                end = match_close(toks, close + 1)
                out.append((close + 1, end))
                k = end + 1
                continue
        k += 1
    return out


def enclosing_functions(toks):
    """The name of the file-scope function whose body holds each token ("" outside any)."""
    out = [""] * len(toks)
    k = 0
    depth = 0
    while k < len(toks):
        t = toks[k]
        if t.kind == "op" and t.text == "{":
            depth += 1
        elif t.kind == "op" and t.text == "}":
            depth -= 1
        elif depth == 0 and t.kind == "id" and t.text not in KEYWORDS and k + 1 < len(toks) and toks[k + 1].text == "(":
            close = match_close(toks, k + 1)
            if close + 1 < len(toks) and toks[close + 1].text == "{":
                end = match_close(toks, close + 1)
                for j in range(close + 1, end + 1):
                    out[j] = t.text
                k = end + 1
                continue
        k += 1
    return out


# ---------------------------------------------------------------------------- mutants

REL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
LOGIC = {"&&": "||", "||": "&&"}
ARITH = {"+": "-", "-": "+", "*": "/", "/": "*", "+=": "-=", "-=": "+=", "*=": "/=", "/=": "*="}


def operand_end(t):
    """Can t end an operand (so that a following + - * / is binary)?"""
    if t.kind in ("num", "str", "chr"):
        return True
    if t.kind == "id":
        return t.text not in KEYWORDS
    return t.text in (")", "]", "++", "--")


def float_text(x):
    s = "%.10g" % x
    if "e" not in s and "." not in s and "inf" not in s and "nan" not in s:
        s += ".0"
    return s


def int_literal(text):
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]*)", text)
    if not m:
        return None
    return int(m.group(1), 0), m.group(2), m.group(1).lower().startswith("0x")


def float_literal(text):
    m = re.fullmatch(r"([0-9]*\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)([fFlL]?)", text)
    if not m:
        return None
    try:
        return float(m.group(1)), m.group(2)
    except ValueError:
        return None


def gen_mutants(path, src, functions=None, skip_calls=()):
    """The mutants of one file: dicts with line, op, desc and the edits [(start, end, text)]."""
    toks = tokenize(src)
    allowed = None
    if functions:
        allowed = function_ranges(toks, set(functions))
        if not allowed:
            raise SystemExit("mutate: %s: none of the functions %s found" % (path, ", ".join(functions)))

    def inside(k):
        return allowed is None or any(a < k < b for a, b in allowed)

    bdepth, d = [], 0   # brace depth of each token
    for t in toks:
        if t.kind == "op" and t.text == "}":
            d -= 1
        bdepth.append(d)
        if t.kind == "op" and t.text == "{":
            d += 1
    # the calls each token is an argument of (names of the identifiers before open parens)
    in_skipped, stack = [], []
    for k, t in enumerate(toks):
        if t.kind == "op" and t.text == "(":
            stack.append(toks[k - 1].text if k and toks[k - 1].kind == "id" else "")
        elif t.kind == "op" and t.text == ")" and stack:
            stack.pop()
        in_skipped.append(any(c in skip_calls for c in stack))
    muts = []
    func_of = enclosing_functions(toks)

    def add(k, op, desc, edits):
        muts.append({"line": toks[k].line, "op": op, "desc": desc, "edits": edits, "tok": k, "func": func_of[k]})

    for k, t in enumerate(toks):
        if not inside(k):
            continue
        prev = toks[k - 1] if k else None
        if t.kind == "op":
            if t.text in REL:
                add(k, "rel", "'%s' -> '%s'" % (t.text, REL[t.text]), [(t.start, t.end, REL[t.text])])
            elif t.text in LOGIC:
                add(k, "logic", "'%s' -> '%s'" % (t.text, LOGIC[t.text]), [(t.start, t.end, LOGIC[t.text])])
            elif t.text in ARITH:
                binary = t.text.endswith("=") or (prev is not None and operand_end(prev) and t.ws_before and t.ws_after)
                if binary:
                    add(k, "arith", "'%s' -> '%s'" % (t.text, ARITH[t.text]), [(t.start, t.end, ARITH[t.text])])
        elif t.kind == "num":
            if in_skipped[k]:
                continue
            iv = int_literal(t.text)
            if iv is not None:
                v, suffix, hexa = iv
                if prev is not None and prev.text == "{" and k + 1 < len(toks) and toks[k + 1].text == "}":
                    continue   # the {0} zero-initialiser idiom
                if v == 0:
                    new = "1"
                elif v == 1:
                    new = "0"
                else:
                    new = (hex(v + 1) if hexa else str(v + 1))
                add(k, "const", "%s -> %s" % (t.text, new + suffix), [(t.start, t.end, new + suffix)])
                continue
            fv = float_literal(t.text)
            if fv is not None and fv[0] != 0.0:
                x, suffix = fv
                for f in (1.01, 0.99):
                    new = float_text(x * f) + suffix
                    add(k, "const", "%s -> %s" % (t.text, new), [(t.start, t.end, new)])
        elif t.kind == "id" and t.text == "if" and k + 1 < len(toks) and toks[k + 1].text == "(":
            o = k + 1
            c = match_close(toks, o)
            inner = src[toks[o].end:toks[c].start]
            top = [toks[j].text for j in range(o + 1, c) if toks[j].kind == "op"]
            if sum(x in REL for x in top) == 1 and any(x in ("==", "!=") for x in top) and \
                    not any(x in ("&&", "||", "?", "!") for x in top):
                continue   # if (a == b): negating it is the == / != flip again
            add(k, "cond", "if (%s) -> if (!(%s))" % (short(inner), short(inner)),
                [(toks[o].end, toks[o].end, "!("), (toks[c].start, toks[c].start, ")")])
        elif t.kind == "id" and t.text == "return":
            e = k + 1
            depth = 0
            while e < len(toks) and not (depth == 0 and toks[e].text == ";"):
                if toks[e].text in "([{":
                    depth += 1
                elif toks[e].text in ")]}":
                    depth -= 1
                e += 1
            if e >= len(toks):
                continue
            expr = src[toks[k + 1].start:toks[e].start].strip() if e > k + 1 else ""
            if expr and expr not in ("0", "1", "NULL", "0.0"):
                add(k, "return", "return %s; -> return 0;" % short(expr), [(toks[k + 1].start, toks[e].start, "0")])
            # an early return: in a nested block, the body of an if/else, or not the last
            # statement of the function
            early = prev is not None and (bdepth[k] > 1 or prev.text in (")", "else") or
                                          (e + 1 < len(toks) and toks[e + 1].text != "}"))
            if early:
                add(k, "return", "delete 'return%s;'" % (" " + short(expr) if expr else ""),
                    [(t.start, toks[e].end, "{}")])
    # the same change twice on a line: the second is "#2", ...
    nth = {}
    for m in muts:
        key = (m["line"], m["desc"])
        nth[key] = nth.get(key, 0) + 1
        if nth[key] > 1:
            m["desc"] += " #%d" % nth[key]
    # one mutant per distinct mutated text
    seen = set()
    out = []
    for m in muts:
        text = apply(src, m["edits"])
        h = hashlib.sha1(text.encode()).hexdigest()
        if h in seen or text == src:
            continue
        seen.add(h)
        m["file"] = path
        m["id"] = "%s:%d:%s:%d" % (os.path.basename(path), m["line"], m["op"], len(out))
        out.append(m)
    return out


def short(s, n=48):
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n - 3] + "..."


def apply(src, edits):
    out = src
    for a, b, text in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[:a] + text + out[b:]
    return out


def load_equivalent(path):
    """{(file, function, stripped source line, change): reason} from the equivalent-mutant list:
    lines `FILE | FUNCTION | SOURCE LINE | CHANGE | REASON`, '#' comments. The function keeps an
    entry from covering the same line text elsewhere in the file (`if (n == 0) return NAN;`)."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as fh:
        for n, ln in enumerate(fh, 1):
            if not ln.strip() or ln.lstrip().startswith("#"):
                continue
            parts = [x.strip() for x in ln.rstrip("\n").split(" | ")]
            if len(parts) != 5 or not all(parts):
                raise SystemExit("mutate: %s:%d: expected FILE | FUNCTION | SOURCE LINE | CHANGE | REASON" % (path, n))
            key = tuple(parts[:4])
            if key in out:
                raise SystemExit("mutate: %s:%d: listed twice" % (path, n))
            out[key] = parts[4]
    return out


def ekey(f, m):
    return (f, m["func"], m["src"], m["desc"])


def spread(muts, n):
    """At most n of muts, evenly spread over the list."""
    if n is None or len(muts) <= n:
        return muts
    if n <= 0:
        return []
    step = len(muts) / n
    return [muts[int(i * step)] for i in range(n)]


# ---------------------------------------------------------------------------- running

class Tree:
    """One working copy: a file is mutated in place and restored."""

    def __init__(self, root, scratch):
        self.root = root
        self.scratch = scratch   # HOME / TMPDIR of the tests run here
        self.lock = threading.Lock()
        self.dirty = {}          # rel path -> original bytes, while mutated

    def write(self, rel, text, original):
        with self.lock:
            self.dirty.setdefault(rel, original)
        with open(os.path.join(self.root, rel), "w", encoding="utf-8") as f:
            f.write(text)

    def restore(self):
        with self.lock:
            items = list(self.dirty.items())
            self.dirty.clear()
        for rel, original in items:
            with open(os.path.join(self.root, rel), "w", encoding="utf-8") as f:
                f.write(original)


TREES = []


def restore_all():
    for t in TREES:
        try:
            t.restore()
        except OSError as exc:
            sys.stderr.write("mutate: could not restore %s: %s\n" % (t.root, exc))


def on_signal(signum, frame):
    restore_all()
    sys.stderr.write("mutate: interrupted; files restored\n")
    os._exit(130 if signum == signal.SIGINT else 143)


def run_cmd(cmd, cwd, env, timeout):
    """(returncode or 'timeout', seconds, output tail)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, _ = p.communicate()
        rc = "timeout"
    return rc, time.time() - t0, out.decode("utf-8", "replace")[-3000:]


def stage_env(tree):
    env = dict(os.environ)
    env.update(KOPT_ROOT=tree.root, KOPT=os.path.join(tree.root, "build", "kopt-asan"),
               ASAN_OPTIONS="detect_leaks=1", HOME=tree.scratch, TMPDIR=tree.scratch,
               KOPT_STORE=os.path.join(tree.scratch, "store.sqlite"))
    env.pop("MAKEFLAGS", None)
    env.pop("MFLAGS", None)
    env.pop("MAKELEVEL", None)
    return env


def stage_cmd(tree, stage):
    kind, arg = stage
    if kind == "unit":
        return [os.path.join(tree.root, "build", "unit-tests"), "--filter", arg, "--jobs", "1"]
    return ["bash", arg]


def build(tree, targets):
    return run_cmd(["make", "-s"] + targets, tree.root, stage_env(tree), 600)


def build_targets(stages):
    t = ["build/unit-tests"] if any(k == "unit" for k, _ in stages) else []
    if any(k == "cli" for k, _ in stages):
        t.append("build/kopt-asan")
    return t


def run_mutant(tree, m, original, stages, timeouts):
    rel = m["file"]
    try:
        tree.write(rel, apply(original, m["edits"]), original)
        rc, secs, out = build(tree, build_targets(stages))
        if rc != 0:
            return {"status": "uncompilable", "detail": last_error(out)}
        for st in stages:
            rc, secs, out = run_cmd(stage_cmd(tree, st), tree.root, stage_env(tree), timeouts[st])
            if rc == "timeout":
                return {"status": "killed", "by": "%s %s (timeout)" % st}
            if rc != 0:
                return {"status": "killed", "by": "%s %s" % st}
        return {"status": "survived"}
    finally:
        tree.restore()


def last_error(out):
    for ln in out.splitlines():
        if "error" in ln:
            return ln.strip()[:200]
    return out.strip().splitlines()[-1][:200] if out.strip() else ""


def copy_tree(src, dst):
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".git"))


def main():
    ap = argparse.ArgumentParser(description="Mutation testing of kopt's verdict code.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--files", default="", help="comma-separated target files (default: all)")
    ap.add_argument("--max", type=int, default=None, help="at most N mutants per file")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--threshold", type=float, default=0.90)
    ap.add_argument("--list", action="store_true", help="only list the mutants")
    ap.add_argument("--quick", action="store_true", help="unit-test stages only")
    ap.add_argument("--json", default=None, help="write the results to this file")
    ap.add_argument("--only", default=None, help="only the mutants whose 'file:line: op: change' matches this regex")
    ap.add_argument("--equivalent", default=os.path.join(ROOT, "tools", "mutate_equivalent.txt"),
                    help="the list of known equivalent mutants (not counted)")
    ap.add_argument("--in-tree", action="store_true", help="mutate the working tree itself (one job)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    files = [f for f in TARGETS if not TARGETS[f].get("extra")]
    if a.files:
        want = [f.strip() for f in a.files.split(",") if f.strip()]
        files = []
        for w in want:
            hit = [f for f in TARGETS if f == w or os.path.basename(f) == w or f.endswith("/" + w)]
            if not hit:
                ap.error("unknown target %s (targets: %s)" % (w, ", ".join(TARGETS)))
            files += [f for f in hit if f not in files]

    originals, per_file = {}, {}
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            originals[f] = fh.read()
        muts = gen_mutants(f, originals[f], TARGETS[f].get("functions"), TARGETS[f].get("skip_calls", ()))
        lines = originals[f].splitlines()
        for m in muts:
            m["src"] = lines[m["line"] - 1].strip()
        if a.only:
            muts = [m for m in muts if re.search(a.only, "%s:%d: %s: %s" % (f, m["line"], m["op"], m["desc"]))]
        per_file[f] = spread(muts, a.max)
    equiv = load_equivalent(a.equivalent)

    if a.list:
        total = 0
        for f in files:
            lines = originals[f].splitlines()
            for m in per_file[f]:
                eq = equiv.get(ekey(f, m))
                print("%s:%d: %s(): %s: %s | %s%s" % (f, m["line"], m["func"], m["op"], m["desc"], m["src"][:90],
                                                      "  [equivalent: %s]" % eq if eq else ""))
            print("%s: %d mutants" % (f, len(per_file[f])))
            total += len(per_file[f])
        print("total: %d mutants" % total)
        return 0

    stages_of = {}
    for f in files:
        st = TARGETS[f]["stages"]
        for s in st:
            if s[0] == "cli" and not os.path.exists(os.path.join(ROOT, s[1])):
                print("mutate: %s: stage %s skipped (no such file)" % (f, s[1]))
        st = [s for s in st if s[0] != "cli" or os.path.exists(os.path.join(ROOT, s[1]))]
        if a.quick:
            st = [s for s in st if s[0] == "unit"] or st[:1]
        stages_of[f] = st

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    jobs = 1 if a.in_tree else max(1, a.jobs)
    base = None
    trees = []
    try:
        if a.in_tree:
            scratch = tempfile.mkdtemp(prefix="kopt-mutate-home-")
            trees.append(Tree(ROOT, scratch))
        else:
            base = tempfile.mkdtemp(prefix="kopt-mutate-")
            first = os.path.join(base, "w0")
            print("mutate: copying the tree to %s" % base, flush=True)
            copy_tree(ROOT, first)
            # the copy is what we test: the files as they were read above
            for f in files:
                with open(os.path.join(first, f), "w", encoding="utf-8") as fh:
                    fh.write(originals[f])
            os.makedirs(os.path.join(base, "h0"))
            trees.append(Tree(first, os.path.join(base, "h0")))
        TREES.extend(trees)

        # the unmutated tree: builds, every stage passes; its times set the timeouts
        all_stages = []
        for f in files:
            for s in stages_of[f]:
                if s not in all_stages:
                    all_stages.append(s)
        print("mutate: building and running the tests on the unmutated tree", flush=True)
        rc, secs, out = build(trees[0], build_targets(all_stages))
        if rc != 0:
            sys.stderr.write("mutate: the unmutated tree does not build:\n%s\n" % out)
            return 2
        timeouts = {}
        for s in all_stages:
            rc, secs, out = run_cmd(stage_cmd(trees[0], s), trees[0].root, stage_env(trees[0]), 900)
            if rc != 0:
                sys.stderr.write("mutate: the tests fail on the unmutated tree (%s %s):\n%s\n" % (s[0], s[1], out))
                return 2
            timeouts[s] = 4 * secs + 20
            print("mutate:   %s %s: passed in %.1f s" % (s[0], s[1], secs), flush=True)
        for j in range(1, jobs):
            d = os.path.join(base, "w%d" % j)
            copy_tree(trees[0].root, d)
            os.makedirs(os.path.join(base, "h%d" % j))
            trees.append(Tree(d, os.path.join(base, "h%d" % j)))
        TREES[:] = trees

        work = [(f, m) for f in files for m in per_file[f]]
        print("mutate: %d mutants over %d files, %d jobs" % (len(work), len(files), jobs), flush=True)
        free = list(trees)
        free_lock = threading.Lock()
        results = {}
        done = [0]
        t_start = time.time()

        def one(item):
            f, m = item
            with free_lock:
                tree = free.pop()
            try:
                r = run_mutant(tree, m, originals[f], stages_of[f], timeouts)
            finally:
                with free_lock:
                    free.append(tree)
            with free_lock:
                results[m["id"]] = r
                done[0] += 1
                if a.verbose or r["status"] == "survived":
                    lines = originals[f].splitlines()
                    tag = "SURVIVED" if r["status"] == "survived" else r["status"]
                    print("[%d/%d] %s %s:%d: %s: %s | %s" % (done[0], len(work), tag, f, m["line"], m["op"], m["desc"],
                                                              lines[m["line"] - 1].strip()[:80]), flush=True)
                elif done[0] % 25 == 0:
                    el = time.time() - t_start
                    print("mutate: %d/%d done, %.0f s, about %.0f s left" % (done[0], len(work), el,
                                                                            el / done[0] * (len(work) - done[0])),
                          flush=True)

        with ThreadPoolExecutor(max_workers=jobs) as ex:
            list(ex.map(one, work))
    finally:
        restore_all()
        if base and not os.environ.get("KOPT_MUTATE_KEEP"):
            shutil.rmtree(base, ignore_errors=True)

    # report
    print()
    keys = ("killed", "survived", "equivalent", "uncompilable")
    tot = dict.fromkeys(keys, 0)
    rows = []
    used_equiv = set()
    for f in files:
        cnt = dict.fromkeys(keys, 0)
        for m in per_file[f]:
            r = results[m["id"]]
            eq = equiv.get(ekey(f, m))
            if eq:
                used_equiv.add(ekey(f, m))
            if r["status"] == "survived" and eq:
                r["status"], r["reason"] = "equivalent", eq
            elif r["status"] == "killed" and eq:
                print("note: listed as equivalent but killed: %s:%d: %s | %s" % (f, m["line"], m["desc"], m["src"][:80]))
            cnt[r["status"]] += 1
            if r["status"] == "survived":
                print("survived: %s:%d: %s: %s | %s" % (f, m["line"], m["op"], m["desc"], m["src"][:90]))
        for k in keys:
            tot[k] += cnt[k]
        rows.append((f, cnt))
    for f in files:
        for m in per_file[f]:
            r = results[m["id"]]
            if r["status"] == "equivalent" and a.verbose:
                print("equivalent: %s:%d: %s | %s" % (f, m["line"], m["desc"], r["reason"]))
    if not a.only and a.max is None:
        for (f, fn, src, desc), why in sorted(equiv.items()):
            if f in files and (f, fn, src, desc) not in used_equiv:
                print("note: %s lists a mutant that no longer exists: %s | %s | %s | %s" % (
                    os.path.basename(a.equivalent), f, fn, src[:60], desc))
    print()
    print("%-12s %8s %8s %9s %11s %13s %8s" % ("file", "mutants", "killed", "survived", "equivalent", "uncompilable",
                                                "killed%"))
    for f, cnt in rows + [("overall", tot)]:
        n = cnt["killed"] + cnt["survived"]
        rate = cnt["killed"] / n if n else 1.0
        print("%-12s %8d %8d %9d %11d %13d %7.1f%%" % (os.path.basename(f), sum(cnt.values()), cnt["killed"],
                                                       cnt["survived"], cnt["equivalent"], cnt["uncompilable"],
                                                       100 * rate))
    n = tot["killed"] + tot["survived"]
    rate = tot["killed"] / n if n else 1.0
    if a.json:
        doc = {"threshold": a.threshold, "quick": a.quick, "rate": rate, "files": {}}
        for f, cnt in rows:
            doc["files"][f] = {"counts": cnt, "mutants": [
                dict(line=m["line"], function=m["func"], op=m["op"], change=m["desc"], source=m["src"],
                     **results[m["id"]])
                for m in per_file[f]]}
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
    ok = rate >= a.threshold
    print("mutate: %.1f%% of %d compiled, non-equivalent mutants killed (threshold %.0f%%): %s"
          % (100 * rate, n, 100 * a.threshold, "ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
