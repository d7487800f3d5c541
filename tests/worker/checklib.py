"""The CPU worker tests' assertion helper: check(cond, what) stops at the first failed check
(prints "FAIL: what", exit 1) and counts the ones that hold; passed() is that count."""
import sys

_passed = 0


def check(cond, what):
    global _passed
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)
    _passed += 1


def passed():
    return _passed
