/* family.h — the built-in executor's kernel families as a typed enum: what the planner decides a
 * kernel (or region) computes and which template rewrites it. Inside kopt a family travels as a
 * kfamily; its name is the spelling at the edges only (the plan's "template" field, which an LLM
 * planner may also write, the candidates' labels, the store and the reports).
 *
 * Contract: kfamily_name gives a family's name ("" for KF_NONE and out-of-range values);
 * kfamily_parse is its inverse (KF_NONE for NULL or an unknown name); kfamily_rationale the
 * planner's one-line reason for proposing the family's rewrite (never NULL);
 * kfamily_is_row_split / kfamily_is_region classify (row_split_*: the one-read segment kernels;
 * region_*: templates of several launches or a library call).
 *
 * Ownership: every string is static.
 */
#ifndef KOPT_FAMILY_H
#define KOPT_FAMILY_H

typedef enum kfamily {
    KF_NONE = 0,
    /* one program per row (templates/kernels/row_*.py.tmpl) */
    KF_ROW_SOFTMAX,
    KF_ROW_LOG_SOFTMAX,
    KF_ROW_LAYER_NORM,
    KF_ROW_CUMSUM,
    KF_ROW_SOFTMAX_STATS,
    KF_ROW_LOGSUMEXP,
    /* rows cut into segments whose programs exchange partials */
    KF_ROW_SPLIT_SOFTMAX,
    KF_ROW_SPLIT_LOG_SOFTMAX,
    KF_ROW_SPLIT_L1_NORMALIZE,
    KF_ROW_SPLIT_L2_NORMALIZE,
    KF_ROW_SPLIT_INSTANCE_NORM,
    KF_ROW_SPLIT_LAYER_NORM,
    /* families chosen by what the kernel computes, any form */
    KF_SPLIT_MORE,
    KF_SCAN,
    KF_COL_SOFTMAX,
    KF_COL_LOGSUMEXP,
    KF_AVG_POOL,
    KF_MAX_POOL,
    KF_CL_GROUP_STATS,
    KF_ALIGNED_CHUNKS,
    KF_ROW_LN_PROLOGUE,
    KF_ROW_SM_PROLOGUE,
    KF_COLUMN_REUSE,
    /* regions */
    KF_REGION_SOFTMAX,
    KF_REGION_LOG_SOFTMAX,
    KF_REGION_GROUP_NORM,
    KF_REGION_LAYER_NORM,
    KF_REGION_AVG_POOL,
    KF_COUNT
} kfamily;

const char *kfamily_name(kfamily f);
kfamily kfamily_parse(const char *name);
const char *kfamily_rationale(kfamily f);
int kfamily_is_row_split(kfamily f);
int kfamily_is_region(kfamily f);

#endif
