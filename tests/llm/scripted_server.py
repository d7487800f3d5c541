#!/usr/bin/env python3
"""scripted_server.py — a scripted LLM endpoint for kernelopt's tests (standard library only).

Speaks OpenAI's POST .../chat/completions and Anthropic's POST .../v1/messages on 127.0.0.1.
Usage:
    scripted_server.py --script STEPS.json --log REQUESTS.jsonl [--idle 20] [--max-requests 50]
                       [--parent PID] [--port 0]
It binds (port 0: any free port) and prints the port alone on its first stdout line.

The script is a JSON list of steps; each request consumes the next step, whatever its path:
    {"reply": "text", "tokens": [in, out], "finish": "stop"}   a well-formed answer in the API's
                                                                own shape (the usual step)
    {"delay_s": 0.5, ...}                       wait before answering (any step but stall_s)
    {"status": 200, "body": {...}}              that status and JSON body, verbatim
    {"status": 200, "raw": "text"}              that body as raw bytes (malformed JSON)
    {"status": 429, "headers": {"Retry-After": "1"}}   any status, extra headers, an error body
    {"status": 500}
    {"stall_s": 10}                             read the request, wait, close without answering
    {"truncate": true}                          announce a long body, send part of it, close
    {"require_key": "sk-test", ...}             401 (body echoing the key received) unless that
                                                key was sent; otherwise the rest of the step
    {"model_unknown": true}                     404 model-not-found in the API's own shape
A request beyond the script gets 418 "script exhausted" (not retried by clients).

Every request is appended to the log as one JSON line: {"i", "path", "api", "headers" (names
lower-cased; the key's value replaced by "[redacted]"), "key_sent" (bool), "body" (parsed JSON,
or {"_raw": text}), "step" (index or null)}.

It exits by itself after --idle seconds without a request, after --max-requests requests, or
when --parent is given and that process is gone.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY_HEADERS = ("authorization", "x-api-key")


class State:
    def __init__(self, steps, log_path, max_requests):
        self.steps = steps
        self.log_path = log_path
        self.max_requests = max_requests
        self.lock = threading.Lock()
        self.next = 0
        self.count = 0
        self.last = time.monotonic()

    def take(self):
        with self.lock:
            self.count += 1
            self.last = time.monotonic()
            if self.next < len(self.steps):
                i = self.next
                self.next += 1
                return i, self.steps[i]
            return None, None

    def record(self, entry):
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, sort_keys=True) + "\n")
                f.flush()


def api_of(path):
    if path.rstrip("/").endswith("/messages"):
        return "anthropic"
    if path.rstrip("/").endswith("/chat/completions"):
        return "openai"
    return None


def sent_key(headers):
    auth = headers.get("Authorization")
    if auth and auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return headers.get("x-api-key")


def error_body(api, status, message, code=None):
    if api == "anthropic":
        kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error",
                529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    err = {"message": message, "type": "error", "code": code or str(status)}
    return {"error": err}


def reply_body(api, model, step):
    text = step.get("reply", "")
    tin, tout = (step.get("tokens") or [10, 5])[:2]
    if api == "anthropic":
        return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": step.get("finish", "end_turn"),
                "usage": {"input_tokens": tin, "output_tokens": tout}}
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": step.get("finish", "stop")}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}


def make_handler(state, stop):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # keep the test output clean
            pass

        def send(self, status, payload, headers=None, raw=None):
            data = raw if raw is not None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            self.close_connection = True

        def do_GET(self):
            state.take()
            self.send(404, {"error": {"message": "only POST is scripted"}})

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n > 0 else b""
            try:
                body = json.loads(raw.decode("utf-8"))
            except Exception:  # noqa: BLE001 — a test may send anything
                body = {"_raw": raw.decode("utf-8", "replace")}
            api = api_of(self.path)
            idx, step = state.take()
            key = sent_key(self.headers)
            headers = {k.lower(): ("[redacted]" if k.lower() in KEY_HEADERS else v)
                       for k, v in self.headers.items()}
            state.record({"i": state.count, "path": self.path, "api": api, "headers": headers,
                          "key_sent": bool(key), "body": body, "step": idx})
            try:
                self.answer(api, body, step, key)
            except (BrokenPipeError, ConnectionResetError):
                pass
            if state.max_requests and state.count >= state.max_requests:
                stop.set()

        def answer(self, api, body, step, key):
            model = body.get("model", "?") if isinstance(body, dict) else "?"
            if api is None:
                self.send(404, {"error": {"message": "unknown path " + self.path}})
                return
            if step is None:
                self.send(418, error_body(api, 418, "scripted server: script exhausted"))
                return
            if "stall_s" in step:
                time.sleep(float(step["stall_s"]))
                self.close_connection = True
                return
            if "delay_s" in step:
                time.sleep(float(step["delay_s"]))
            if "require_key" in step and key != step["require_key"]:
                self.send(401, error_body(api, 401, "Incorrect API key provided: %s" % (key or "(none)"),
                                          "invalid_api_key"))
                return
            if step.get("model_unknown"):
                self.send(404, error_body(api, 404, "The model `%s` does not exist" % model,
                                          "model_not_found"))
                return
            if step.get("truncate"):
                full = json.dumps(reply_body(api, model, {"reply": "x" * 2000})).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(full)))
                self.end_headers()
                self.wfile.write(full[: len(full) // 3])
                self.wfile.flush()
                self.close_connection = True
                return
            status = int(step.get("status", 200))
            hdrs = step.get("headers")
            if "raw" in step:
                self.send(status, None, hdrs, raw=step["raw"].encode())
            elif "body" in step:
                self.send(status, step["body"], hdrs)
            elif status == 200:
                self.send(200, reply_body(api, model, step), hdrs)
            else:
                self.send(status, error_body(api, status, "scripted HTTP %d" % status), hdrs)

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--idle", type=float, default=20.0)
    ap.add_argument("--max-requests", type=int, default=50)
    ap.add_argument("--parent", type=int, default=0)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    with open(a.script, encoding="utf-8") as f:
        steps = json.load(f)
    if not isinstance(steps, list):
        sys.exit("scripted_server: the script must be a JSON list of steps")
    state = State(steps, a.log, a.max_requests)
    stop = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(state, stop))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    while not stop.is_set():
        time.sleep(0.1)
        if time.monotonic() - state.last > a.idle:
            break
        if a.parent and os.getppid() != a.parent:
            break
    time.sleep(0.05)   # let the last answer go out
    os._exit(0)


if __name__ == "__main__":
    main()
