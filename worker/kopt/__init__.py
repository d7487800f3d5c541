"""kopt — the Python worker of kernelopt (see docs/PROTOCOL.md, the authoritative spec).

One concern per module:
  protocol  the JSON-lines channel (protocol fds, stdout hygiene, JSON encoding)
  errors    OpError and the mapping of exceptions to protocol error codes
  env       lazy torch import, the ready event, the private Inductor cache directory
  server    the request loop and the op table
  tensors   tensor helpers: exact clones, descriptions, raw .bin tensor files
  problem   the loaded KernelBench problem (`load`) and the worker's state
  modules   importing Inductor output modules and their saved arguments
  capture   `compile`: torch.compile + capture of each graph's source and call() args
  targets   the runnable targets (eager / compiled / module) shared by run and time
  run       `run`: one run of a target, outputs dumped to tensor files
  timing    L2 flush, stream stall, `time`
  profile   `profile`: per-launch events in an instrumented output module
  ceilings  `ceilings`: copy bandwidth and matmul throughput

The worker executes and measures; it decides nothing (no tolerances, no statistics).
"""
