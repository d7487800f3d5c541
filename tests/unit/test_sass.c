/* test_sass.c — precision classes read from SASS (src/gates/sass.h), on listings recorded from
 * real Triton kernels compiled for sm_90 (tests/fixtures/sass/, tools/gen_sass_fixtures.py:
 * each file's first line names the classes the kernel must show) and on single instructions at
 * the edges: the move idiom, the float16 -> float32 idiom, predicates, fp8 formats, special
 * registers (clocks, SM id, the allowlisted geometry ones). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gates/sass.h"
#include "testutil.h"

/* The classes named on a fixture's header line ("expected classes: a b" or "none"). */
__attribute__((noinline)) static unsigned expected_classes(const char *text) {
    const char *hdr = strstr(text, "expected classes:");
    cr_assert_not_null(hdr);
    char line[256];
    size_t off = strlen("expected classes:"), n = strcspn(hdr + off, "\n");
    snprintf(line, sizeof line, "%.*s", (int)n, hdr + off);
    unsigned c = 0;
    for (char *w = strtok(line, " "); w; w = strtok(NULL, " ")) {
        if (!strcmp(w, "none")) continue;
        int found = 0;
        for (int k = 0; k < SASS_NCLASSES; k++)
            if (!strcmp(w, sass_class_name((sass_class)k))) c |= SASS_BIT(k), found = 1;
        cr_assert(found, "unknown class %s in a fixture header", w);
    }
    return c;
}

static unsigned scan_fixture(const char *name, sass_report *r) {
    char rel[128];
    snprintf(rel, sizeof rel, "tests/fixtures/sass/%s.sass", name);
    size_t len = 0;
    char *text = tu_read_fixture(rel, &len);
    unsigned want = expected_classes(text);
    cr_assert_gt(sass_scan(text, r), 20, "%s: a listing of a real kernel", name);
    free(text);
    return want;
}

Test(sass, every_recorded_kernel_shows_exactly_its_classes) {
    const char *names[] = {"fp32_axpy",      "f16_round_trip", "f16_arith",         "bf16_arith",
                           "fp8_round_trip", "dot_default",    "dot_ieee",          "bf16_io_fp32_math",
                           "f16_io_fp32_math", "fp32_row_softmax", "clock64_read",      "globaltimer_read",
                           "smid_read",      "warpid_read",    "laneid_read",       "geometry_atomics"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        sass_report r;
        unsigned want = scan_fixture(names[i], &r);
        unsigned got = r.classes & ~SASS_BIT(SASS_CVT_F16); /* fp8 unpacks through float16: allowed noise */
        unsigned w = want & ~SASS_BIT(SASS_CVT_F16);
        if (!strcmp(names[i], "fp8_round_trip")) {
            cr_assert_eq(got, w, "%s: classes %#x, expected %#x", names[i], r.classes, want);
        } else {
            cr_assert_eq(r.classes, want, "%s: classes %#x, expected %#x", names[i], r.classes, want);
        }
    }
}

Test(sass, a_float32_model_refuses_any_reduced_precision) {
    const char *fp32[] = {"*fp32", "*fp32", "i32"};
    unsigned allowed = sass_allowed_for_types(fp32, 3);
    cr_assert_eq(allowed, 0);
    sass_report r;
    scan_fixture("f16_round_trip", &r);
    cr_assert_eq(sass_violation(r.classes, allowed), SASS_CVT_F16);
    cr_assert(strstr(r.first_insn[SASS_CVT_F16], "F2FP.F16"), "first: %s", r.first_insn[SASS_CVT_F16]);
    cr_assert_gt(r.first_line[SASS_CVT_F16], 1);
    scan_fixture("dot_default", &r);
    cr_assert_eq(sass_violation(r.classes, allowed), SASS_MMA_LOW, "tl.dot on float32 runs TF32 tensor cores");
    cr_assert(strstr(r.first_insn[SASS_MMA_LOW], "TF32"));
    scan_fixture("dot_ieee", &r);
    cr_assert_eq(sass_violation(r.classes, allowed), -1, "ieee dot: float32 FMAs");
    scan_fixture("fp32_row_softmax", &r);
    cr_assert_eq(sass_violation(r.classes, allowed), -1);
}

Test(sass, half_models_allow_their_conversions_not_half_arithmetic) {
    const char *bf[] = {"*bf16", "*bf16", "i32"};
    const char *hf[] = {"*fp16", "*fp32"};
    sass_report r;
    scan_fixture("bf16_io_fp32_math", &r);
    cr_assert_eq(sass_violation(r.classes, sass_allowed_for_types(bf, 3)), -1, "Inductor's own bf16 pattern");
    scan_fixture("bf16_arith", &r);
    cr_assert_eq(sass_violation(r.classes, sass_allowed_for_types(bf, 3)), SASS_ARITH_BF16);
    scan_fixture("f16_io_fp32_math", &r);
    cr_assert_eq(sass_violation(r.classes, sass_allowed_for_types(hf, 2)), -1);
    cr_assert_eq(sass_violation(r.classes, sass_allowed_for_types(bf, 3)), SASS_CVT_F16, "bf16 does not allow f16");
    scan_fixture("f16_arith", &r);
    cr_assert_eq(sass_violation(r.classes, sass_allowed_for_types(hf, 2)), SASS_ARITH_F16);
}

Test(sass, single_instructions_at_the_edges) {
    cr_assert_eq(sass_classify("HFMA2.MMA", " R3, -RZ, RZ, 1.875, 0"), 0, "move idiom");
    cr_assert_eq(sass_classify("HFMA2.MMA", " R9, R4, 1, 1, R4"), SASS_BIT(SASS_ARITH_F16), "x*1+x");
    cr_assert_eq(sass_classify("HFMA2", " R9, R4, c[0x0][0x210], RZ"), SASS_BIT(SASS_ARITH_F16), "a constant bank is data");
    cr_assert_eq(sass_classify("HADD2.F32", " R17, -RZ, R16.H0_H0"), SASS_BIT(SASS_CVT_F16), "upconvert idiom");
    cr_assert_eq(sass_classify("HADD2.F32", " R17, R2.H0_H0, R16.H0_H0"), SASS_BIT(SASS_ARITH_F16), "a real add");
    cr_assert_eq(sass_classify("HFMA2.BF16_V2", " R1, R2, R3, -RZ"), SASS_BIT(SASS_ARITH_BF16));
    cr_assert_eq(sass_classify("HMNMX2", " R1, R2, R3, PT"), SASS_BIT(SASS_ARITH_F16), "half max");
    cr_assert_eq(sass_classify("HSETP2.GT.AND", " P0, PT, R2.H0_H0, R3.H0_H0, PT"), SASS_BIT(SASS_ARITH_F16));
    cr_assert_eq(sass_classify("F2F.F16.F32", " R1, R2"), SASS_BIT(SASS_CVT_F16));
    cr_assert_eq(sass_classify("F2F.BF16.F32", " R1, R2"), SASS_BIT(SASS_CVT_BF16));
    cr_assert_eq(sass_classify("F2F.F64.F32", " R2, R4"), 0, "float64 is not reduced precision");
    cr_assert_eq(sass_classify("F2FP.SATFINITE.E5M2.F32.PACK_AB_MERGE_C", " R1, R2, R3, RZ"), SASS_BIT(SASS_FP8));
    cr_assert_eq(sass_classify("HGMMA.64x64x8.F32.TF32", " R24, gdesc[UR4], R24"), SASS_BIT(SASS_MMA_LOW));
    cr_assert_eq(sass_classify("IMMA.16832.S8.S8", " R1, R2, R4, R6"), SASS_BIT(SASS_MMA_LOW));
    cr_assert_eq(sass_classify("DMMA.884", " R1, R2, R4, R6"), 0, "float64 tensor cores");
    cr_assert_eq(sass_classify("MUFU.EX2.F16", " R1, R2"), SASS_BIT(SASS_ARITH_F16));
    cr_assert_eq(sass_classify("MUFU.EX2", " R1, R2"), 0);
    cr_assert_eq(sass_classify("FFMA", " R1, R2, R3, R4"), 0);
    cr_assert_eq(sass_classify("HFMA2X", " R1, R2, R3, R4"), 0, "opcode names match whole");
}

/* Clock and hardware-state reads are refused whatever the types allow and with every precision
 * class accepted; the geometry registers Triton's own code reads are not. */
Test(sass, clock_and_hardware_state_reads_are_never_allowed) {
    const unsigned all = sass_allowed(~0u, 1);
    cr_assert_eq(all & SASS_NEVER_ALLOWED, 0, "no option allows a clock read");
    cr_assert_eq(all, SASS_PRECISION, "--allow-precision-change: every precision class");
    cr_assert_eq(sass_allowed(SASS_BIT(SASS_CVT_F16), 0), SASS_BIT(SASS_CVT_F16));
    const struct {
        const char *name;
        int want;
        const char *insn;
    } cases[] = {{"clock64_read", SASS_TIMER, "CS2R R4, SR_CLOCKLO"},
                 {"globaltimer_read", SASS_TIMER, "CS2R R4, SR_GLOBALTIMERLO"},
                 {"smid_read", SASS_HW_REG, "S2UR UR4, SR_VIRTUALSMID"},
                 {"warpid_read", SASS_HW_REG, "S2R R5, SR_VIRTID"},
                 {"laneid_read", -1, NULL},
                 {"geometry_atomics", -1, NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sass_report r;
        scan_fixture(cases[i].name, &r);
        cr_assert_eq(sass_violation(r.classes, all), cases[i].want, "%s", cases[i].name);
        cr_assert_eq(sass_violation(r.classes, 0), cases[i].want, "%s", cases[i].name);
        if (cases[i].insn) {
            cr_assert_str_eq(r.first_insn[cases[i].want], cases[i].insn);
            cr_assert_gt(r.first_line[cases[i].want], 1);
        }
    }
    /* the graver finding first, even where a precision class comes before it in the listing */
    cr_assert_eq(sass_violation(SASS_BIT(SASS_CVT_F16) | SASS_BIT(SASS_TIMER), 0), SASS_TIMER);
    cr_assert_eq(sass_violation(SASS_BIT(SASS_MMA_LOW) | SASS_BIT(SASS_HW_REG), 0), SASS_HW_REG);
    cr_assert_eq(sass_violation(SASS_BIT(SASS_HW_REG), ~0u), SASS_HW_REG, "not even an `allowed` that claims it");
    cr_assert_eq(sass_violation(SASS_BIT(SASS_TIMER), ~0u), SASS_TIMER);
    cr_assert_str_eq(sass_class_name(SASS_TIMER), "timer");
    cr_assert_str_eq(sass_class_name(SASS_HW_REG), "hw_reg");
    cr_assert_str_eq(sass_class_name(SASS_NCLASSES), "?", "past the last class");
    cr_assert(strstr(sass_class_why(SASS_TIMER), "clock"));
    cr_assert(strstr(sass_class_why(SASS_HW_REG), "special register"));
    cr_assert(strstr(sass_class_why(SASS_ARITH_F16), "reduced precision"));
}

Test(sass, special_registers_one_instruction_at_a_time) {
    const unsigned T = SASS_BIT(SASS_TIMER), H = SASS_BIT(SASS_HW_REG);
    cr_assert_eq(sass_classify("S2UR", " UR6, SR_CLOCKLO"), T, "%clock");
    cr_assert_eq(sass_classify("S2R", " R7, SR_CLOCKHI"), T);
    cr_assert_eq(sass_classify("CS2R", " R4, SR_GLOBALTIMERLO"), T, "%globaltimer, 64 bits");
    cr_assert_eq(sass_classify("S2R", " R4, SR_GLOBALTIMERHI"), T);
    cr_assert_eq(sass_classify("CS2R.32", " R4, SR_CLOCKLO"), T, "a modifier changes nothing");
    cr_assert_eq(sass_classify("S2R", " R1, SR_SMID"), H);
    cr_assert_eq(sass_classify("S2R", " R1, SR_PM0"), H, "a performance counter");
    cr_assert_eq(sass_classify("S2R", " R1, SR_NEWREGISTER"), H, "one kopt does not know");
    cr_assert_eq(sass_classify("S2R", " R1, SR_TIDX"), H, "names match whole: SR_TIDX is not SR_TID");
    cr_assert_eq(sass_classify("S2R", " R1, SR_TID.Y"), 0);
    cr_assert_eq(sass_classify("S2R", " R1, SR_CTAID.Z"), 0);
    cr_assert_eq(sass_classify("S2R", " R1, SR_LANEID"), 0);
    cr_assert_eq(sass_classify("S2R", " R1, SR_GEMASK"), 0);
    cr_assert_eq(sass_classify("S2UR", " UR5, SR_CgaCtaId"), 0);
    cr_assert_eq(sass_classify("S2R", " R1, SR_CLUSTER_CTARANK"), 0);
    cr_assert_eq(sass_classify("CS2R", " R2, SRZ"), 0, "CS2R R, SRZ zeroes a register pair");
    cr_assert_eq(sass_classify("MOV", " R1, R2"), 0);
    cr_assert_eq(sass_classify("IADD3", " R1, MYSR_CLOCKLO, R2, RZ"), 0, "inside another name: not a register");
    cr_assert_eq(sass_classify("S2R", NULL), 0);
    cr_assert_eq(sass_classify("S2R", " R1, SR_CLOCK"), T, "any name begun SR_CLOCK is a clock");
    cr_assert_eq(sass_classify("S2R", " R1, SR_GLOBALTIMER"), T);
    cr_assert_eq(sass_classify("S2R", "SR_CLOCKLO"), T, "at the operands' first character");
    cr_assert_eq(sass_classify("IADD3", " R1, MY_SR_CLOCKLO, R2, RZ"), 0, "after '_': inside another name");
    cr_assert_eq(sass_classify("S2R", " R1, SR_SMID.X"), H, "a component does not make it a geometry register");
    cr_assert_eq(sass_classify("S2R", " R1, SR_TID.X, SR_SMID"), H, "every register of the instruction counts");
}

/* The data sources of half-precision instructions: uniform registers and constant-bank reads carry
 * data, URZ is a zero like RZ, an immediate is no register but adding it is arithmetic. */
Test(sass, half_precision_data_sources) {
    const unsigned A = SASS_BIT(SASS_ARITH_F16), C = SASS_BIT(SASS_CVT_F16);
    cr_assert_eq(sass_classify("HMUL2", " R1, UR4, UR5"), A, "uniform registers are data");
    cr_assert_eq(sass_classify("HMUL2", " R1, c[0x0][0x210], c[0x0][0x214]"), A, "constant banks are data");
    cr_assert_eq(sass_classify("HADD2.F32", " R1, -URZ, R2.H0_H0"), C, "URZ is a zero: the upconvert idiom");
    cr_assert_eq(sass_classify("HADD2.F32", " R1, -RZ, c[0x0][0x210]"), C);
    cr_assert_eq(sass_classify("HADD2.F32", " R1, R2.H0_H0, 0.5"), A, "adding an immediate is arithmetic");
    cr_assert_eq(sass_classify("HMNMX2", " R1, UR4, 1, PT"), A);
    cr_assert_eq(sass_classify("HFMA2.MMA", " R3, -RZ, RZ, 10, 20"), 0, "immediates of two digits are no registers");
    cr_assert_eq(sass_classify("F2FP.F16.E4M3.UNPACK_B", " R1, R2"), SASS_BIT(SASS_FP8),
                 "an fp8 conversion through float16 is fp8, not a float16 conversion too");
    cr_assert_eq(sass_allowed(0, 0), 0, "nothing allowed without types or the option");
    cr_assert_eq(sass_allowed(SASS_BIT(SASS_FP8), 0), SASS_BIT(SASS_FP8));
}

/* The listing's edges: an address comment with no digits is not an instruction, an instruction
 * right after its address comment is read whole, a line without ';' is not an instruction even
 * after a longer one, a line longer than the parser's buffer and a very long opcode are read
 * without overrunning anything (ASan), blanks before ';' do not change the digest. */
Test(sass, listing_edges) {
    sass_report r;
    cr_assert_eq(sass_scan("  /**/ HFMA2 R1, R2, R3, R4 ;\n", &r), 0, "no address digits: not an instruction");
    cr_assert_eq(sass_scan("  /*0000*/HFMA2 R1, R2, R3, R4 ;\n", &r), 1);
    cr_assert_eq(r.classes, SASS_BIT(SASS_ARITH_F16), "the opcode read from the comment's end");
    cr_assert_eq(sass_scan("  /*0000*/ FFMA R1, R2, R3, R4 ;\n  /*0010*/ FFMA\n", &r), 1,
                 "a line without ';' after a longer one");
    char line[700];
    memset(line, ' ', sizeof line);
    memcpy(line, "/*0000*/ FFMA R1, R2, R3, R4", 28);
    line[sizeof line - 3] = ';';
    line[sizeof line - 2] = '\n';
    line[sizeof line - 1] = 0;
    cr_assert_eq(sass_scan(line, &r), 0, "cut at the buffer: the ';' is past it");
    for (size_t len = 508; len <= 514; len++) { /* the buffer's edge, byte by byte */
        char *t = calloc(len + 2, 1);
        memset(t, ' ', len);
        memcpy(t, "/*0000*/ FFMA R1, R2, R3, R4 ;", 30);
        t[len] = '\n';
        cr_assert_eq(sass_scan(t, &r), 1, "a line of %zu bytes", len);
        free(t);
    }
    char op[300] = "/*0000*/ HFMA2";
    size_t k = strlen(op);
    while (k < 200) op[k++] = 'X';
    snprintf(op + k, sizeof op - k, " R1, R2, R3, R4 ;\n");
    cr_assert_eq(sass_scan(op, &r), 1, "a 190-character opcode is read, cut, without overrun");
    for (size_t olen = 92; olen <= 100; olen++) { /* the opcode buffer's edge */
        char t[160];
        memset(t, 'X', sizeof t);
        memcpy(t, "/*0000*/ H", 10);
        snprintf(t + 9 + olen, sizeof t - 9 - olen, " R1, R2 ;\n");
        cr_assert_eq(sass_scan(t, &r), 1, "an opcode of %zu characters", olen);
        cr_assert_eq(r.classes, 0);
    }
    sass_report a, b;
    sass_scan("/*0000*/ EXIT;\n", &a);
    sass_scan("/*0000*/ EXIT   ;\n", &b);
    cr_assert_eq(a.digest, b.digest, "blanks before ';' do not count");
    sass_scan("/*0000*/    EXIT ;\n", &b);
    cr_assert_eq(a.digest, b.digest, "nor blanks before the opcode");
}

/* sass_digest: the instructions' text only (addresses, encodings, blanks and non-instruction
 * lines do not count); pinned on a recorded listing to the value the GPU suite's Python digest
 * (tests/gpu/check_sass_match.py --digest) computes, so the two stay one definition. */
Test(sass, digest_of_the_instructions_only) {
    const char *a = "        /*0000*/                   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */\n"
                    "        /*0010*/              @!P0 HFMA2 R20, R15, R20, R15 ;  /* 0x000000140f147231 */\n"
                    "        /*0020*/                   EXIT ;\n";
    const char *b = "header line\n"
                    "  /*0a00*/ LDC   R1,  c[0x0][0x28] ; /* 0x1 */\n"
                    "  /* a comment, not an instruction */\n"
                    "  /*0a10*/ @!P0  HFMA2 R20, R15, R20, R15 ;\n"
                    "  /*0a20*/ EXIT ;\n";
    const char *c = "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
                    "        /*0010*/              @!P0 HFMA2 R20, R15, R20, R14 ;\n"
                    "        /*0020*/                   EXIT ;\n";
    sass_report ra, rb, rc;
    sass_scan(a, &ra);
    sass_scan(b, &rb);
    sass_scan(c, &rc);
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the normalised text, computed here */
    for (const char *p = "LDC R1, c[0x0][0x28]\n@!P0 HFMA2 R20, R15, R20, R15\nEXIT\n"; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    cr_assert_eq(ra.digest, h, "%016" PRIx64 ", expected %016" PRIx64, ra.digest, h);
    cr_assert_eq(rb.digest, ra.digest, "addresses, encodings and blanks do not count");
    cr_assert_neq(rc.digest, ra.digest, "one register differs: another digest");
    sass_report r;
    scan_fixture("fp32_axpy", &r);
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, r.digest);
    cr_assert_str_eq(hex, "297848cc8e93862b", "the Python digest of tests/fixtures/sass/fp32_axpy.sass");
}

Test(sass, listing_parsing) {
    const char *text = "header\n"
                       "        /*0000*/                   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */\n"
                       "        /*0010*/              @!P0 HFMA2 R20, R15, R20, R15 ;  /* 0x000000140f147231 */\n"
                       "        /* not an instruction */\n"
                       "        /*0020*/                   EXIT ;\n";
    sass_report r;
    cr_assert_eq(sass_scan(text, &r), 3);
    cr_assert_eq(r.classes, SASS_BIT(SASS_ARITH_F16), "a predicated instruction counts");
    cr_assert_eq(r.first_line[SASS_ARITH_F16], 3);
    cr_assert_str_eq(r.first_insn[SASS_ARITH_F16], "HFMA2 R20, R15, R20, R15");
    cr_assert_eq(sass_scan("", &r), 0, "no listing, no instructions");
    cr_assert_eq(sass_scan("error: cuobjdump failed\n", &r), 0);
    cr_assert_eq(sass_violation(0, 0), -1);
    cr_assert_eq(sass_violation(SASS_BIT(SASS_FP8) | SASS_BIT(SASS_CVT_F16), SASS_BIT(SASS_CVT_F16)), SASS_FP8);
    const char *fp8[] = {"*fp8e4nv"};
    cr_assert_eq(sass_allowed_for_types(fp8, 1), SASS_BIT(SASS_FP8) | SASS_BIT(SASS_CVT_F16));
    const char *scalars[] = {"fp16", "i32", NULL};
    cr_assert_eq(sass_allowed_for_types(scalars, 3), 0, "only pointers carry tensors");
}
