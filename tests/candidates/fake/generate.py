"""Writes the CPU test candidates for the fake worker into OUT_DIR (they are generated, not kept
in the tree: each is tests/candidates/14_gemm_bias_relu/good_epilogue.py (form P) with an expectation
and a marker that steers tests/fake_worker.py; see marked() there).

usage: python3 tests/candidates/fake_gen/generate.py OUT_DIR
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "14_gemm_bias_relu", "good_epilogue.py")
KERNEL = "triton_poi_fused_add_addmm_relu_0"

# file name -> (expectation, marker)
CASES = {
    "a_fast.py": ("pass", "FAKE_FAST"),
    "b_not_faster.py": ("gate4 not faster", "none"),
    "c_wrong.py": ("gate2 wrong values", "FAKE_WRONG"),
    "d_race.py": ("gate2 race", "FAKE_RACE"),
    "e_model_wrong.py": ("gate3 model differs", "FAKE_MODEL_WRONG"),
    "f_nocompile.py": ("gate1 does not compile", "FAKE_NOCOMPILE"),
    "g_crash.py": ("gate2 crash", "FAKE_CRASH"),
    "h_static_io.py": ("gate1 io", "none; reads a block size from a file"),
    "i_adversarial.py": ("gate3 wrong on adversarial inputs only", "FAKE_ADV_WRONG"),
    "j_writes_input.py": ("gate2 writes to its read-only input", "FAKE_WRITES_INPUT"),
    "k_writes_model_input.py": ("gate3 writes to the model's input", "FAKE_MUTATE"),
    "l_writes_when_timed.py": ("gate4 writes to the model's input when timed", "FAKE_MUTATE_TIMED FAKE_FAST"),
    "m_impossible.py": ("gate4 faster than the memory floor (or not confirmed)", "FAKE_IMPOSSIBLE"),
    "n_tampers_reference.py": ("gate2 changes the reference kept in the worker", "FAKE_TAMPER_REF"),
    "o_tampers_model_reference.py": ("gate3 changes outputs kept in the worker (its own: gate 3's references do not "
                                     "exist yet while it runs)", "FAKE_TAMPER_REF3"),
    "p_stale_when_timed.py": ("gate4:recheck returns results kept from contents it saw before when timed",
                              "FAKE_STALE_TIMED FAKE_FAST"),
    "p2_stale_when_called.py": ("gate4:recheck returns results kept from contents it saw before in the as-called "
                                "rounds only (no stall before them)", "FAKE_STALE_HOST FAKE_FAST"),
    "q_stale_indices_when_timed.py": ("gate4:recheck returns indices kept from contents it saw before when timed",
                                      "FAKE_STALE_INDICES FAKE_FAST"),
    "c2_zeroes_weight_when_timed.py": ("gate4:state writes to a weight of the model when timed", "FAKE_STATE_TIMED FAKE_FAST"),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    body = open(BASE).read().split("\n", 3)[3]   # drop the base file's three header lines
    for name, (expect, marker) in CASES.items():
        text = body
        if name == "h_static_io.py":   # a file access: refused by the static rules
            text = text.replace("    rmask = rows < n_rows\n", "    rmask = rows < n_rows + len(open('/tmp/kopt_block').read())\n", 1)
            assert "open(" in text
        with open(os.path.join(out, name), "w") as f:
            f.write("# expect: %s\n# kopt-candidate: replaces=%s\n# CPU test candidate for the fake worker; marker: %s\n%s"
                    % (expect, KERNEL, marker, text))


if __name__ == "__main__":
    main()
