#!/usr/bin/env bash
# Developer probe of the GPU machine: versions, tools, torch internals kopt relies on.
set -u
echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
echo "== python"; which python3; python3 -c 'import sys,torch,triton;print(sys.version);print(torch.__version__, triton.__version__, torch.version.cuda)'
echo "== tools"; which ncu nvcc compute-sanitizer gcc cc make || true; ncu --version | tail -1
echo "== libs"; ldconfig -p | grep -E 'sqlite3|jansson|curl' || true
python3 - <<'PY'
import torch, inspect
from torch._inductor import codecache
print("PyCodeCache attrs:", [a for a in dir(codecache.PyCodeCache) if not a.startswith('__')])
for a in ("load_by_key_path", "load"):
    f = getattr(codecache.PyCodeCache, a, None)
    if f: print(a, inspect.signature(f))
print("_sleep:", hasattr(torch.cuda, "_sleep"))
p = torch.cuda.get_device_properties(0)
print("props:", p.name, p.multi_processor_count, getattr(p, "L2_cache_size", None), p.total_memory)
import torch._inductor.config as c
print("fx_graph_cache:", c.fx_graph_cache, "autotune_lookup_table" in dir(c))
PY
