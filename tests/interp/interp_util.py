"""Helpers of the interpreter tests: a mirror of src/agents/template.c's rendering rules
({{NAME}}, {{if}}, {{else}}, {{end}}; the C renderer's output for the same parameters is pinned by
the unit tests' goldens, so a divergence shows up there), and the text kopt judges and ships for
a candidate file (`kopt lint --show-launcher --json`: for form P the launcher kopt writes from
the plan), loaded as a module."""
import importlib.util
import json
import os
import re
import subprocess
import sys

def require_triton():
    """Interpreter mode on; exits 0 with one line when torch or triton does not import."""
    os.environ.setdefault("TRITON_INTERPRET", "1")
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError as e:
        print("interp-check skipped: %s" % e)
        sys.exit(0)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KOPT = os.environ.get("KOPT", os.path.join(ROOT, "build", "kopt"))


def render(text, params):
    out, stack = [], []
    for line in text.split("\n"):
        if line.startswith("#@"):
            continue
        s = line.strip()
        m = re.fullmatch(r"\{\{if (\w+)\}\}", s)
        if m:
            stack.append(bool(params[m.group(1)]))
            continue
        if s == "{{else}}":
            stack[-1] = not stack[-1]
            continue
        if s == "{{end}}":
            stack.pop()
            continue
        if not all(stack):
            continue
        m = re.fullmatch(r"\{\{include (\w+)\}\}", s)
        if m:  # a part file: its '#@' header dropped, the same substitutions
            part = open(os.path.join(ROOT, "templates", "kernels", m.group(1) + ".part")).read()
            out.append(render(part, params))
            continue

        def sub(mm):
            v = params[mm.group(1)]
            return ("True" if v else "False") if isinstance(v, bool) else str(v)
        out.append(re.sub(r"\{\{(\w+)\}\}", sub, line))
    return "\n".join(out)


def judged(text, path):
    """The text kopt judges for candidate `text` (written to `path`); exits when kopt refuses it."""
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([KOPT, "lint", path, "--json", "--show-launcher"], capture_output=True, text=True)
    try:
        d = json.loads(r.stdout)
    except ValueError:
        raise SystemExit("kopt lint %s: no JSON (exit %d): %s" % (path, r.returncode, r.stderr[:2000]))
    if r.returncode != 0 or not d["ok"]:
        raise SystemExit("kopt lint refused %s: %s" % (path, r.stdout[:2000]))
    return d["judged_text"], d["form"]


def load_judged(text, tag, tmp):
    """The module of the text kopt judges for candidate `text`."""
    src, _ = judged(text, os.path.join(tmp, "%s.py" % tag))
    path = os.path.join(tmp, "%s_judged.py" % tag)
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(tag, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
