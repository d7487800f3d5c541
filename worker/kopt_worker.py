#!/usr/bin/env python3
"""kernelopt's Python worker: `python3 worker/kopt_worker.py`, driven by the C core over
JSON lines on stdin/stdout (docs/PROTOCOL.md is the specification; worker/README.md a summary).

Start-up order matters:
  1. take the protocol fds and move fd 1 / sys.stdout to stderr (kopt.protocol.Channel), before
     anything else can print;
  2. point Inductor's cache at a private directory and choose the CUDA allocator's setting
     (kopt.env), before torch is imported;
  3. import torch/triton lazily, inside try (a failure is reported, not fatal);
  4. write the ready event, then serve requests until shutdown or EOF (kopt.server).
The worker executes and measures; every decision is the core's.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kopt.protocol import Channel, ChannelClosed  # noqa: E402
from kopt import env, server  # noqa: E402


def main():
    channel = Channel()
    cache_dir = env.setup_cache_dir()
    env.setup_allocator()

    def cleanup():
        env.remove_cache_dir(cache_dir)

    torch, triton, import_error = env.import_torch()
    ctx = server.Context(channel, torch, import_error)
    try:
        channel.write(env.ready_event(torch, triton, import_error))
    except ChannelClosed:
        server._exit(0, cleanup)
    server.serve(ctx, cleanup)


if __name__ == "__main__":
    main()
