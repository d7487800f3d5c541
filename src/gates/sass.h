/* sass.h — precision and hardware-state reads from the machine code (issue 11, item 4): which
 * reduced-precision instruction classes a kernel's SASS (the text `cuobjdump -sass` prints for its
 * cubin) uses, whatever the source spelled, whether it reads a clock or another special register
 * that depends on where or when the hardware ran it, and whether a candidate does what the kernel
 * it replaces cannot.
 *
 * Classes (an instruction may fall in none):
 *   cvt_f16    conversions to or from float16 (F2FP.F16.*, F2F.*F16*, I2F/F2I .F16, and
 *              HADD2.F32 with a zero operand: the float16 -> float32 idiom)
 *   cvt_bf16   the same for bfloat16
 *   arith_f16  float16 arithmetic or comparison (HADD2 HMUL2 HFMA2 HMNMX2 HSETP2 HSET2, MUFU .F16),
 *              plain or on the MMA pipe (HFMA2.MMA), except the move idiom whose only sources are
 *              zero registers and immediates (`HFMA2.MMA R3, -RZ, RZ, 1.875, 0`)
 *   arith_bf16 the same with a BF16 modifier
 *   fp8        anything with an 8-bit (or smaller) float format in its opcode (E4M3, E5M2, ...)
 *   mma_low    tensor-core MMA other than float64 (HMMA HGMMA IMMA QMMA OMMA and the UTC*MMA
 *              forms): TF32, float16, bfloat16, fp8 or integer inputs
 *   timer      a read of the SM clock or the global timer (an SR_CLOCK* / SR_GLOBALTIMER* operand:
 *              S2R, S2UR, CS2R): a kernel that knows the time can tell when it is being timed
 *   hw_reg     a read of any other special register outside an allowlist of those whose value the
 *              launch geometry fixes (SR_TID.*, SR_CTAID.*, SR_LANEID, the lane masks SR_LTMASK
 *              SR_LEMASK SR_GTMASK SR_GEMASK SR_EQMASK, SR_CgaCtaId, SR_SWINHI/LO, SR_CLUSTER*;
 *              SRZ, the zero source of CS2R, names none): the SM or warp slot it ran on
 *              (SR_VIRTUALSMID, SR_SMID, SR_VIRTID), performance counters (SR_PM*), and every
 *              register this list does not know. Triton 3.6's own code for program ids,
 *              reductions, scans, sorts, atomics, dots, TMA and clusters reads only allowlisted
 *              ones (tools/sass_sreg_survey.py surveys them; tools/gen_sass_fixtures.py records
 *              the test listings). Driver values read from the constant bank (%nsmid, %gridid at
 *              c[0x0][0x10c], c[0x0][0x30] on sm_90) are not told apart from a kernel's own
 *              constants here: the static rules refuse their PTX names.
 * timer and hw_reg are never allowed (SASS_NEVER_ALLOWED): no option accepts them;
 * --allow-precision-change accepts the six precision classes (SASS_PRECISION).
 * What the replaced kernel can use is read from its pointer types (sass_allowed_for_types): a
 * float16 tensor allows cvt_f16, bfloat16 cvt_bf16, an fp8 type fp8 and cvt_f16; Inductor
 * computes in float32 whatever it loads, so no arithmetic class and no MMA is ever allowed
 * for the Triton kernels kopt replaces. Truncation by integer bit operations leaves no such
 * instruction: the numeric gates must catch it.
 *
 * Ownership: plain values; sass_scan writes a caller-provided report.
 */
#ifndef KOPT_SASS_H
#define KOPT_SASS_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SASS_CVT_F16 = 0,
    SASS_CVT_BF16,
    SASS_ARITH_F16,
    SASS_ARITH_BF16,
    SASS_FP8,
    SASS_MMA_LOW,
    SASS_TIMER,
    SASS_HW_REG,
    SASS_NCLASSES
} sass_class;

#define SASS_BIT(c) (1u << (c))
/* The classes that are a change of numerics (what --allow-precision-change accepts). */
#define SASS_PRECISION \
    (SASS_BIT(SASS_CVT_F16) | SASS_BIT(SASS_CVT_BF16) | SASS_BIT(SASS_ARITH_F16) | SASS_BIT(SASS_ARITH_BF16) | \
     SASS_BIT(SASS_FP8) | SASS_BIT(SASS_MMA_LOW))
/* The classes no option allows: what the kernel computes would depend on the time or the hardware's placement. */
#define SASS_NEVER_ALLOWED (SASS_BIT(SASS_TIMER) | SASS_BIT(SASS_HW_REG))

typedef struct sass_report {
    unsigned classes;                   /* OR of SASS_BIT(class) */
    int first_line[SASS_NCLASSES];      /* 1-based line of each class's first instruction, 0: none */
    char first_insn[SASS_NCLASSES][96]; /* that instruction, opcode and operands */
    size_t ninsn;                       /* instructions read */
    uint64_t digest;                    /* sass_digest of the instructions read */
} sass_report;

/* Classify every instruction of a cuobjdump/nvdisasm SASS listing. Returns the number of
 * instructions read; 0 means the text holds none (not a listing: a check must not pass on it). */
size_t sass_scan(const char *text, sass_report *r);

/* sass_digest, the digest of a listing's instructions (r->digest): 64-bit FNV-1a (util/fnv.h)
 * over each instruction read,
 * its text between the address comment and ';' (predicate included) with runs of blanks made
 * one space and the ends trimmed, each followed by '\n'. Addresses and encodings are left out,
 * so two listings of the same machine code from different cubin files agree; the GPU suite
 * (tests/gpu/check_sass_match.py) computes the same of Triton's own JIT compile to show the
 * sandbox's cubin is the code the launch runs. */

/* The classes one instruction (opcode with modifiers, operands as printed, no predicate)
 * belongs to, as a bit set. */
unsigned sass_classify(const char *opcode, const char *operands);

/* The classes allowed by the replaced kernel's argument types (Triton spellings: "*fp16",
 * "*bf16", "*fp8e4nv", "i32", ...). */
unsigned sass_allowed_for_types(const char *const *types, size_t n);

/* The first class in `classes & ~allowed`, or -1 when there is none; a never-allowed class is
 * reported before a precision one (it is the graver finding and no option accepts it), whatever
 * `allowed` says of it. */
int sass_violation(unsigned classes, unsigned allowed);

/* What a caller passes as `allowed`: the precision classes of for_types (sass_allowed_for_types),
 * and with allow_precision_change every precision class; never a bit outside SASS_PRECISION. */
unsigned sass_allowed(unsigned for_types, int allow_precision_change);

/* One line saying why class c is refused, for a verdict: "reads the clock ...". */
const char *sass_class_why(sass_class c);

const char *sass_class_name(sass_class c);

#endif
