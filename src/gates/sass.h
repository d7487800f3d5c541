/* sass.h — precision read from the machine code (issue 11, item 4): which reduced-precision
 * instruction classes a kernel's SASS (the text `cuobjdump -sass` prints for its cubin) uses,
 * whatever the source spelled, and whether a candidate uses one the kernel it replaces cannot.
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
    SASS_NCLASSES
} sass_class;

#define SASS_BIT(c) (1u << (c))

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

/* The first class in `classes & ~allowed`, or -1 when there is none. */
int sass_violation(unsigned classes, unsigned allowed);

const char *sass_class_name(sass_class c);

#endif
