"""Checks one `kopt inspect --json` document from the GPU suite; prints a one-line summary.
Exit 1 with the reason when a requirement of the inspect issue is not met."""
import json
import sys

doc = json.load(open(sys.argv[1]))
errs = []
if not doc.get("ok"):
    errs.append("ok is false")
s = doc.get("summary", {})
ratio = s.get("sum_over_model", 0)
if not 0.9 <= ratio <= 1.1:
    errs.append(f"per-launch sum / compiled model time = {ratio:.3f}, outside [0.9, 1.1]")
for g in doc.get("graphs", []):
    rt = g.get("roundtrip", {})
    if not rt.get("text_identical"):
        errs.append(f"graph {g['index']}: emitted text differs")
    if not rt.get("outputs_match"):
        errs.append(f"graph {g['index']}: round-tripped module's outputs differ")
    for r in g.get("launches", []):
        if not r.get("time_ms", 0) > 0:
            errs.append(f"launch {r['index']} has no time")
        if r["kind"] == "triton" and not r.get("bytes_read", 0) + r.get("bytes_written", 0) > 0:
            errs.append(f"launch {r['index']} ({r['name']}) moved no bytes")
replaceable = sum(r.get("replaceable", False) for g in doc.get("graphs", []) for r in g.get("launches", []))
if s.get("triton_launches", 0) < 1 and not replaceable:
    errs.append("no Triton launch and no library call kopt may replace")
t = doc.get("model", {}).get("times", {})
if errs:
    print("; ".join(errs))
    sys.exit(1)
print(f"{s['triton_launches']} triton + {s['vendor_calls']} vendor launches ({replaceable} replaceable), sum/model {ratio:.3f}, "
      f"eager {t['eager']['median_ms']:.3f} ms, compiled {t['compiled_default']['median_ms']:.3f} ms, "
      f"triton share {100 * s['triton_share']:.0f}%")
