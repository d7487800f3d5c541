"""The newest result per problem over several `kopt bench` results.json files (sessions measure
a few problems each; this is how docs/BENCHMARKS.md's suite-wide line is computed). A problem's
newest result is the one with the latest `ended_at` among the files' done, correct problems.
Prints one row per problem (which file it came from) and the geometric means per level and
overall over default and over max-autotune. The rows come from different code versions: say so
wherever the figure is quoted.

usage: python3 tools/bench_newest.py RESULTS.json... [--json]
"""
import json
import math
import sys


def newest(paths):
    """{problem: (path, problem dict)} keeping the latest ended_at of each done, correct problem."""
    best = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for p in doc.get("problems", []):
            if p.get("status") != "done" or not p.get("correct"):
                continue
            key, when = p["problem"], p.get("ended_at") or doc.get("ended_at") or ""
            if key not in best or when >= best[key][2]:
                best[key] = (path, p, when)
    return {k: (v[0], v[1]) for k, v in best.items()}


def _est(p, which):
    s = p.get(which) or {}
    e = s.get("estimate")
    return e if isinstance(e, (int, float)) and e > 0 else None


def geomeans(rows):
    """{level: {"vs_default": (g, n), "vs_max_autotune": (g, n)}} plus "all"."""
    groups = {}
    for _, p in rows.values():
        for lv in (p.get("level_name") or "?", "all"):
            g = groups.setdefault(lv, {"vs_default": [], "vs_max_autotune": []})
            for k, field in (("vs_default", "speedup_vs_default"), ("vs_max_autotune", "speedup_vs_max_autotune")):
                e = _est(p, field)
                if e:
                    g[k].append(e)
    out = {}
    for lv, g in groups.items():
        out[lv] = {k: (math.exp(sum(map(math.log, v)) / len(v)) if v else None, len(v)) for k, v in g.items()}
    return out


def main(argv):
    as_json = "--json" in argv
    paths = [a for a in argv if a != "--json"]
    if not paths:
        sys.exit(__doc__)
    rows = newest(paths)
    gm = geomeans(rows)
    if as_json:
        print(json.dumps({"problems": {k: {"from": v[0], "speedup_vs_default": _est(v[1], "speedup_vs_default"),
                                           "speedup_vs_max_autotune": _est(v[1], "speedup_vs_max_autotune")}
                                       for k, v in sorted(rows.items())},
                          "geomeans": gm}, indent=1))
        return
    print("| problem | vs default | vs max-autotune | from |")
    print("|---|---:|---:|---|")
    for k, (path, p) in sorted(rows.items()):
        d, m = _est(p, "speedup_vs_default"), _est(p, "speedup_vs_max_autotune")
        print("| %s | %s | %s | %s |" % (k, "%.3fx" % d if d else "-", "%.3fx" % m if m else "-", path))
    for lv in sorted(gm):
        g = gm[lv]
        fmt = lambda t: "%.3fx (%d)" % t if t[0] else "- (0)"
        print("%s: %s over default, %s over max-autotune" % (lv, fmt(g["vs_default"]), fmt(g["vs_max_autotune"])))


if __name__ == "__main__":
    main(sys.argv[1:])
