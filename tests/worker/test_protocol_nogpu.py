#!/usr/bin/env python3
"""No-GPU protocol test of the Python worker (plain python3; no torch, no pytest needed).

    python3 tests/worker/test_protocol_nogpu.py        # exit status 0: pass, 1: failure

Starts worker/kopt_worker.py as a subprocess in an environment where `import torch` and
`import triton` fail: a directory put first on PYTHONPATH holds stand-in torch/ and triton/
packages that raise ImportError — so the test behaves the same on a machine that has torch.
The stand-in torch first prints to stdout from Python and writes to fd 1 directly (as C code
would), to check that such output reaches stderr and never the protocol stream.

Checks: the ready event (torch null, import_error set, cuda false); ping; an unknown op, a
garbage line, a non-object line and a request without op give bad_request responses (garbage
with id null); load and run without torch give a clear error (code internal, naming torch);
shutdown answers {} and exits 0; EOF exits 0; every stdout line is a JSON object; the private
Inductor cache directory the worker created is gone after it exits.
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKER = os.path.join(ROOT, "worker", "kopt_worker.py")
TIMEOUT = 30.0

FAKE_TORCH = r'''
import os, sys
print("FAKE-TORCH-PRINT to sys.stdout")
sys.stdout.flush()
os.write(1, b"FAKE-TORCH-FD1 raw write to fd 1\n")
sys.stderr.write("FAKE-TORCH-CACHE-DIR=%s\n" % os.environ.get("TORCHINDUCTOR_CACHE_DIR", ""))
sys.stderr.write("FAKE-TORCH-ALLOC=%s\n" % os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
sys.stderr.flush()
raise ImportError("torch is blocked by the kopt no-GPU protocol test")
'''
FAKE_TRITON = 'raise ImportError("triton is blocked by the kopt no-GPU protocol test")\n'

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


class Worker:
    def __init__(self, fake_dir, extra_env=None):
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        env.pop("PYTORCH_ALLOC_CONF", None)
        env.update(extra_env or {})
        env["PYTHONPATH"] = fake_dir + (os.pathsep + env["PYTHONPATH"]
                                        if env.get("PYTHONPATH") else "")
        env.pop("TORCHINDUCTOR_CACHE_DIR", None)
        env["PYTHONUNBUFFERED"] = "1"
        self.p = subprocess.Popen([sys.executable, WORKER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.lines = queue.Queue()
        self.raw_stdout = []
        self.stderr = []
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self):
        for line in self.p.stdout:
            self.raw_stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self):
        for line in self.p.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def next(self):
        """The next stdout line as a parsed JSON value (None at EOF or timeout)."""
        try:
            line = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            return None
        if line is None:
            return None
        try:
            return json.loads(line.decode("utf-8"))
        except ValueError:
            return {"__not_json__": line.decode("utf-8", "replace")}

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def request(self, obj):
        self.send_raw((json.dumps(obj) + "\n").encode())
        return self.next()

    def wait(self):
        try:
            return self.p.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return None


def is_error(resp, code, rid):
    return (isinstance(resp, dict) and resp.get("id") == rid and resp.get("ok") is False
            and isinstance(resp.get("error"), dict) and resp["error"].get("code") == code
            and resp["error"].get("fatal") is False
            and isinstance(resp["error"].get("message"), str) and resp["error"]["message"]
            and "\n" not in resp["error"]["message"])


def main():
    with tempfile.TemporaryDirectory(prefix="kopt-nogpu-test-") as fake:
        for name, text in (("torch", FAKE_TORCH), ("triton", FAKE_TRITON)):
            os.makedirs(os.path.join(fake, name))
            with open(os.path.join(fake, name, "__init__.py"), "w") as f:
                f.write(text)

        w = Worker(fake)
        ready = w.next()
        check(isinstance(ready, dict) and ready.get("event") == "ready", "ready event first")
        ready = ready if isinstance(ready, dict) else {}
        check(ready.get("protocol") == 1, "ready: protocol 1")
        check(ready.get("pid") == w.p.pid, "ready: pid is the worker's")
        check(isinstance(ready.get("python"), str), "ready: python version")
        check("torch" in ready and ready["torch"] is None, "ready: torch null")
        check("triton" in ready and ready["triton"] is None, "ready: triton null")
        check(ready.get("cuda") is False, "ready: cuda false")
        check(isinstance(ready.get("import_error"), str) and "blocked" in ready["import_error"],
              "ready: import_error carries the import failure")

        r = w.request({"id": 1, "op": "ping"})
        check(r == {"id": 1, "ok": True, "result": {}}, "ping answers {}")
        r = w.request({"id": 2, "op": "no_such_op"})
        check(is_error(r, "bad_request", 2), "unknown op: bad_request")
        w.send_raw(b"this is {not json\n")
        r = w.next()
        check(is_error(r, "bad_request", None), "garbage line: bad_request with id null")
        w.send_raw(b"\xff\xfe\x00 binary\n")
        r = w.next()
        check(is_error(r, "bad_request", None), "non-UTF-8 line: bad_request")
        w.send_raw(b"[1, 2, 3]\n")
        r = w.next()
        check(is_error(r, "bad_request", None), "non-object JSON: bad_request")
        r = w.request({"id": 3})
        check(is_error(r, "bad_request", 3), "request without op: bad_request")
        r = w.request({"id": 4, "op": "load", "path": "/nonexistent/problem.py"})
        check(is_error(r, "internal", 4) and "torch" in r["error"]["message"],
              "load without torch: clear error naming torch")
        r = w.request({"id": 5, "op": "run", "target": {"kind": "eager"}, "out_prefix": "/tmp/x"})
        check(is_error(r, "internal", 5), "run without torch: error")
        r = w.request({"id": 6, "op": "ping"})
        check(r == {"id": 6, "ok": True, "result": {}}, "still answering after errors")
        r = w.request({"id": 7, "op": "shutdown"})
        check(r == {"id": 7, "ok": True, "result": {}}, "shutdown answers {}")
        rc = w.wait()
        check(rc == 0, "shutdown exits 0 (got %r)" % (rc,))
        rest = w.next()
        check(rest is None, "nothing after the shutdown response")

        # stdout carried only JSON objects, one per line; the prints went to stderr.
        bad = []
        for line in w.raw_stdout:
            try:
                if not isinstance(json.loads(line.decode("utf-8")), dict):
                    bad.append(line)
            except ValueError:
                bad.append(line)
        check(not bad, "stdout carries only JSON object lines (bad: %r)" % bad[:3])
        err = "".join(w.stderr)
        check("FAKE-TORCH-PRINT" in err, "a Python print during import went to stderr")
        check("FAKE-TORCH-FD1" in err, "a raw write to fd 1 went to stderr")
        cache_dirs = [l.split("=", 1)[1].strip() for l in err.splitlines()
                      if l.startswith("FAKE-TORCH-CACHE-DIR=")]
        check(len(cache_dirs) == 1 and cache_dirs[0] != "",
              "TORCHINDUCTOR_CACHE_DIR was set before importing torch")
        if cache_dirs and cache_dirs[0]:
            check(not os.path.exists(cache_dirs[0]), "private cache dir removed at exit")

        # the allocator: expandable segments unless the user chose a setting (kopt.env)
        allocs = [l.split("=", 1)[1].strip() for l in err.splitlines() if l.startswith("FAKE-TORCH-ALLOC=")]
        check(allocs == ["expandable_segments:True"],
              "PYTORCH_CUDA_ALLOC_CONF set to expandable segments before importing torch (%r)" % allocs)

        # EOF on stdin: exit 0 (this worker's user chose an allocator setting: it stays)
        w2 = Worker(fake, {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64"})
        ready2 = w2.next()
        check(isinstance(ready2, dict) and ready2.get("event") == "ready", "second worker ready")
        w2.p.stdin.close()
        rc2 = w2.wait()
        check(rc2 == 0, "EOF exits 0 (got %r)" % (rc2,))
        allocs2 = [l.split("=", 1)[1].strip() for l in "".join(w2.stderr).splitlines()
                   if l.startswith("FAKE-TORCH-ALLOC=")]
        check(allocs2 == ["max_split_size_mb:64"], "a user's PYTORCH_CUDA_ALLOC_CONF is kept (%r)" % allocs2)

    if failures:
        print("\n%d check(s) failed" % len(failures))
        print("worker stderr tail:\n" + "".join(w.stderr)[-3000:])
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
