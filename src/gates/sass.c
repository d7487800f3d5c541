/* sass.c — see sass.h. A listing line looks like
 *         /(*)0410(*)/   @!P0 HFMA2.MMA R16, R21, R16, R21 ;   /(*) 0x0000001015107235 (*)/
 * (without the parentheses): an address comment, an optional predicate, the opcode with its
 * modifiers, operands up to ';', the encoding comment. */
#include "gates/sass.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "util/fnv.h"

static const char *const SASS_NAMES[SASS_NCLASSES] = {"cvt_f16", "cvt_bf16", "arith_f16", "arith_bf16",
                                                      "fp8",     "mma_low",  "timer",     "hw_reg"};

const char *sass_class_name(sass_class c) { return (unsigned)c < SASS_NCLASSES ? SASS_NAMES[c] : "?"; }

const char *sass_class_why(sass_class c) {
    if (c == SASS_TIMER)
        return "reads the clock or the global timer: a kernel that knows the time can tell when it is timed";
    if (c == SASS_HW_REG)
        return "reads a special register whose value depends on where the hardware ran it (SM, warp slot, counters) "
               "or that kopt does not know";
    return "computes or converts in reduced precision";
}

/* Whether the opcode's dot-separated parts include `mod` exactly. */
static int has_mod(const char *op, const char *mod) {
    size_t n = strlen(mod);
    for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.'))
        if (!strncmp(p + 1, mod, n) && (p[1 + n] == '.' || p[1 + n] == 0)) return 1;
    return 0;
}

/* Whether any part of the opcode starts with `prefix` (BF16_V2 starts with BF16). */
static int has_mod_prefix(const char *op, const char *prefix) {
    size_t n = strlen(prefix);
    for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.'))
        if (!strncmp(p + 1, prefix, n)) return 1;
    return 0;
}

static int base_is(const char *op, const char *base) {
    size_t n = strlen(base);
    return !strncmp(op, base, n) && (op[n] == '.' || op[n] == 0);
}

/* The class of a special register operand (its text from "SR_", n characters): 0 for
 * one the launch geometry fixes, timer for a clock (SR_CLOCKLO/HI, SR_GLOBALTIMERLO/HI and any
 * other name so begun), hw_reg for every other. */
static unsigned special_register(const char *sr, size_t n) {
    static const char *const FIXED[] = {
        "SR_TID",           "SR_CTAID",           "SR_LANEID",           "SR_LTMASK",
        "SR_LEMASK",        "SR_GTMASK",          "SR_GEMASK",           "SR_EQMASK",
        "SR_CgaCtaId",      "SR_SWINHI",          "SR_SWINLO",           "SR_CLUSTERID",
        "SR_CLUSTER_CTAID", "SR_CLUSTER_CTARANK", "SR_CLUSTER_NCTARANK", "SR_CLUSTER_NCTAID"};
    if (!strncmp(sr, "SR_CLOCK", 8) || !strncmp(sr, "SR_GLOBALTIMER", 14)) return SASS_BIT(SASS_TIMER);
    const char *dot = memchr(sr, '.', n);
    size_t base = dot ? (size_t)(dot - sr) : n; /* the name without a .X / .Y / .Z component */
    for (size_t i = 0; i < sizeof FIXED / sizeof *FIXED; i++)
        if (strlen(FIXED[i]) == base && !strncmp(sr, FIXED[i], base)) return 0;
    return SASS_BIT(SASS_HW_REG);
}

/* The classes of every special register named among the operands. */
static unsigned special_registers(const char *operands) {
    unsigned c = 0;
    for (const char *p = operands; (p = strstr(p, "SR_")) != NULL; p++) {
        if (p > operands && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue; /* inside a name */
        const char *q = p;
        while (isalnum((unsigned char)*q) || *q == '_' || *q == '.') q++;
        c |= special_register(p, (size_t)(q - p));
    }
    return c;
}

/* Source operands (all but the first) that carry data: a register other than RZ / URZ, a
 * uniform register, or a constant-bank read. Counts them; *zero is set when one is RZ. */
static int data_sources(const char *operands, int *zero) {
    int n = 0, idx = 0;
    *zero = 0;
    const char *p = operands;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (idx > 0) {
            const char *t = p;
            while (t < p + len && (isspace((unsigned char)*t) || *t == '-' || *t == '|' || *t == '!' || *t == '~')) t++;
            if (!strncmp(t, "RZ", 2) || !strncmp(t, "URZ", 3)) {
                *zero = 1;
            } else if ((t[0] == 'R' || (t[0] == 'U' && t[1] == 'R')) &&
                       isdigit((unsigned char)t[t[0] == 'U' ? 2 : 1])) {
                n++;
            } else if (t[0] == 'c' && t[1] == '[') {
                n++;
            }
        }
        idx++;
        if (!end) break;
        p = end + 1;
    }
    return n;
}

unsigned sass_classify(const char *op, const char *operands) {
    static const char *const FP8[] = {"E4M3", "E5M2", "E2M1", "E3M2", "E2M3", "E8M0", "UE8M0", "E4M3FN"};
    static const char *const MMA[] = {"HMMA",    "HGMMA",   "IMMA",    "QMMA",    "OMMA",
                                      "UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA", "UTCMMA"};
    static const char *const HALF[] = {"HADD2", "HMUL2", "HFMA2", "HMNMX2", "HSETP2", "HSET2", "HMNMX"};
    unsigned c = operands ? special_registers(operands) : 0;
    for (size_t i = 0; i < sizeof FP8 / sizeof *FP8; i++)
        if (has_mod_prefix(op, FP8[i])) c |= SASS_BIT(SASS_FP8);
    for (size_t i = 0; i < sizeof MMA / sizeof *MMA; i++)
        if (base_is(op, MMA[i])) return c | SASS_BIT(SASS_MMA_LOW);
    int bf = has_mod_prefix(op, "BF16"), f16 = has_mod(op, "F16");
    if (base_is(op, "F2FP") || base_is(op, "F2F") || base_is(op, "I2F") || base_is(op, "F2I") || base_is(op, "I2FP") ||
        base_is(op, "F2IP")) {
        if (c & SASS_BIT(SASS_FP8)) return c;
        if (bf) c |= SASS_BIT(SASS_CVT_BF16);
        if (f16) c |= SASS_BIT(SASS_CVT_F16);
        return c;
    }
    if (base_is(op, "MUFU")) {
        if (bf) c |= SASS_BIT(SASS_ARITH_BF16);
        else if (f16) c |= SASS_BIT(SASS_ARITH_F16);
        return c;
    }
    for (size_t i = 0; i < sizeof HALF / sizeof *HALF; i++) {
        if (!base_is(op, HALF[i])) continue;
        int zero = 0, data = data_sources(operands ? operands : "", &zero);
        if (data == 0) return c; /* a move of immediates: no arithmetic on data */
        if (base_is(op, "HADD2") && has_mod(op, "F32") && zero && data == 1)
            return c | SASS_BIT(SASS_CVT_F16); /* -RZ + h: float16 -> float32 */
        return c | SASS_BIT(bf ? SASS_ARITH_BF16 : SASS_ARITH_F16);
    }
    return c;
}

/* Folds instruction text [s, end) into the digest h, blanks collapsed (sass.h). */
static uint64_t digest_insn(uint64_t h, const char *s, const char *end) {
    while (s < end && isspace((unsigned char)*s)) s++;
    for (int blank = 0; s < end; s++) { /* a blank run is written only before what follows it */
        if (isspace((unsigned char)*s)) {
            blank = 1;
            continue;
        }
        if (blank) h = fnv1a64_byte(h, ' ');
        blank = 0;
        h = fnv1a64_byte(h, (unsigned char)*s);
    }
    return fnv1a64_byte(h, '\n');
}

size_t sass_scan(const char *text, sass_report *r) {
    memset(r, 0, sizeof *r);
    r->digest = FNV1A64_INIT;
    int line = 1;
    for (const char *p = text; p && *p; line++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char buf[512];
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, p, len);
        buf[len] = 0;
        p = eol ? eol + 1 : NULL;
        /* an instruction line: blanks, an address comment of hex digits, the instruction, ';' */
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        if (strncmp(s, "/*", 2)) continue;
        char *a = s + 2;
        while (isxdigit((unsigned char)*a)) a++;
        if (a == s + 2 || strncmp(a, "*/", 2)) continue;
        char *ins = a + 2;
        char *semi = strchr(ins, ';');
        if (!semi) continue;
        *semi = 0;
        const char *whole = ins; /* with its predicate: the digest's text */
        while (isspace((unsigned char)*ins)) ins++;
        if (*ins == '@') { /* predicate */
            while (*ins && !isspace((unsigned char)*ins)) ins++;
            while (isspace((unsigned char)*ins)) ins++;
        }
        if (!isupper((unsigned char)*ins)) continue;
        char *ops = ins;
        while (*ops && !isspace((unsigned char)*ops)) ops++;
        char op[96];
        size_t oplen = (size_t)(ops - ins) < sizeof op - 1 ? (size_t)(ops - ins) : sizeof op - 1;
        memcpy(op, ins, oplen);
        op[oplen] = 0;
        r->ninsn++;
        r->digest = digest_insn(r->digest, whole, semi);
        unsigned c = sass_classify(op, ops);
        for (int k = 0; k < SASS_NCLASSES; k++) {
            if (!(c & SASS_BIT(k)) || r->first_line[k]) continue;
            r->first_line[k] = line;
            char *t = ins + strlen(ins);
            while (t > ins && isspace((unsigned char)t[-1])) *--t = 0;
            snprintf(r->first_insn[k], sizeof r->first_insn[k], "%s", ins);
        }
        r->classes |= c;
    }
    return r->ninsn;
}

unsigned sass_allowed_for_types(const char *const *types, size_t n) {
    unsigned a = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = types[i];
        if (!t || t[0] != '*') continue;
        t++;
        if (!strcmp(t, "fp16")) a |= SASS_BIT(SASS_CVT_F16);
        else if (!strcmp(t, "bf16")) a |= SASS_BIT(SASS_CVT_BF16);
        else if (!strncmp(t, "fp8", 3)) a |= SASS_BIT(SASS_FP8) | SASS_BIT(SASS_CVT_F16);
    }
    return a;
}

int sass_violation(unsigned classes, unsigned allowed) {
    if (classes & SASS_BIT(SASS_TIMER)) return SASS_TIMER;
    if (classes & SASS_BIT(SASS_HW_REG)) return SASS_HW_REG;
    unsigned bad = classes & ~allowed;
    for (int k = 0; k < SASS_NCLASSES; k++)
        if (bad & SASS_BIT(k)) return k;
    return -1;
}

unsigned sass_allowed(unsigned for_types, int allow_precision_change) {
    return (for_types | (allow_precision_change ? SASS_PRECISION : 0u)) & SASS_PRECISION;
}
