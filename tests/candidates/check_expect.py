"""Checks a `kopt verify --json` report against the `# expect:` line of each candidate file.

  # expect: pass            accepted (all four gates)
  # expect: pass-or-gate4   passed gates 1-3; gate 4 may accept or refuse it (speed is measured)
  # expect: gateN <why>     refused at gate N
  # expect: gateN:TAG <why> refused at gate N for the reason TAG names (REASONS: the words the
                            reason must hold), e.g. gate4:recheck
Prints one line per candidate and a closing 'N passed, N failed' line; exits 1 on any mismatch.
"""
import json
import sys

# a refusal's tag -> words its reason must hold (src/verify/verify.c's messages)
REASONS = {"recheck": "on the inputs rotated for it", "state": "wrote to the model's parameters or buffers"}


def expectation(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# expect:"):
                return line[len("# expect:"):].strip()
    return None


def main():
    doc = json.load(open(sys.argv[1]))
    ok = bad = cubins = 0
    for c in doc.get("candidates", []):
        exp = expectation(c["candidate"])
        verdict = c.get("verdict")
        at = c.get("refused_at")
        word = exp.split()[0] if exp else ""
        word, _, tag = word.partition(":")
        if word == "pass":
            good = verdict == "accepted"
        elif word == "pass-or-gate4":
            good = verdict == "accepted" or at == 4
        elif word.startswith("gate") and word[4:].isdigit():
            good = verdict == "refused" and at == int(word[4:])
            if tag:   # an unknown tag never matches
                good = good and tag in REASONS and REASONS[tag] in (c.get("reason") or "")
        else:
            good = False
        got = "accepted" if verdict == "accepted" else "refused at gate %s" % at
        extra = ""
        for g in c.get("gates", []):
            if g.get("gate") == 4 and "speedup" in g:
                s = g["speedup"]
                extra = " speedup %.3fx [%.3f, %.3f]" % (s["estimate"], s["ci95_lo"], s["ci95_hi"])
        reason = (c.get("reason") or "")[:160]
        print("%s %s: expected %s, got %s%s%s" % ("PASS" if good else "FAIL", c["candidate"], exp, got, extra,
                                                ("  (" + reason + ")") if reason and not good else ""))
        ok += good
        bad += not good
        # a form-P candidate whose machine code gate 1 checked is judged from those cubins (no
        # candidate Python in the worker), unless the run asked for the JIT (--jit-judge)
        g1 = next((g for g in c.get("gates", []) if g.get("gate") == 1), {})
        if "launches" in (g1.get("sass") or {}) and at != 1:
            how = c.get("judged_code") or ""
            if how.startswith("cubin"):
                cubins += 1
            elif "--jit-judge" not in how:
                print("FAIL %s: gate 1 checked its machine code, but the gates ran: %s" % (c["candidate"], how or "?"))
                bad += 1
    print("judged from gate 1's cubins: %d candidate(s)" % cubins)
    print("verify expectations: %d passed, %d failed" % (ok, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
