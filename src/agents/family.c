/* family.c — the kernel families' names and the planner's reasons (family.h). */
#include "agents/family.h"

#include <stddef.h>
#include <string.h>

static const struct {
    const char *name, *why;
} FAMILIES[KF_COUNT] = {
    [KF_NONE] = {"", ""},
    [KF_ROW_SOFTMAX] = {"row_softmax", "the kernel re-reads rows that fit on chip: one pass over each row"},
    [KF_ROW_LOG_SOFTMAX] = {"row_log_softmax", "the kernel re-reads rows that fit on chip: one pass over each row"},
    [KF_ROW_LAYER_NORM] = {"row_layer_norm", "the kernel re-reads rows that fit on chip: one pass over each row"},
    [KF_ROW_CUMSUM] = {"row_cumsum",
                       "a row scan: larger chunks, a carried total, more warps than Inductor's heuristics"},
    [KF_ROW_SOFTMAX_STATS] = {"row_softmax_stats", "the kernel re-reads rows that fit on chip: one pass over each row"},
    [KF_ROW_LOGSUMEXP] = {"row_logsumexp", "a logsumexp that reads each row twice (the max, then the sum): one read "
                                           "with an online max and rescaled sum"},
    [KF_ROW_SPLIT_SOFTMAX] = {"row_split_softmax", NULL},
    [KF_ROW_SPLIT_LOG_SOFTMAX] = {"row_split_log_softmax", NULL},
    [KF_ROW_SPLIT_L1_NORMALIZE] = {"row_split_l1_normalize", NULL},
    [KF_ROW_SPLIT_L2_NORMALIZE] = {"row_split_l2_normalize", NULL},
    [KF_ROW_SPLIT_INSTANCE_NORM] = {"row_split_instance_norm", NULL},
    [KF_ROW_SPLIT_LAYER_NORM] = {"row_split_layer_norm", NULL},
    [KF_SPLIT_MORE] = {"split_more",
                       "few, long reductions fill a few waves with an idle tail: split each into sub-ranges "
                       "over a second grid axis, combine the partials in order"},
    [KF_SCAN] = {"scan", "a cumulative sum or logcumsumexp written anew from what it computes: one read, one write, "
                         "loads coalesced whatever the scanned dimension, a carried total"},
    [KF_COL_SOFTMAX] = {"col_softmax",
                        "a softmax over a middle dimension read two or three times with strided loads: the whole "
                        "dimension of a few adjacent columns in registers, one read"},
    [KF_COL_LOGSUMEXP] = {"col_logsumexp",
                          "a logsumexp over a middle dimension read twice (the max, then the sum) a few columns "
                          "at a time: wide column tiles walk the dimension once with a running max and sum"},
    [KF_AVG_POOL] = {"avg_pool",
                     "an average pooling known from its FX graph: the family's kernel, tiles of outputs per "
                     "program, every window element one masked load"},
    [KF_MAX_POOL] = {"max_pool", "a max pooling known from its FX graph: the family's kernel, tiles of outputs per "
                                 "program, every window element one masked load, NaN propagated as ATen does"},
    [KF_CL_GROUP_STATS] = {"cl_group_stats",
                           "group-norm statistics read channels-last in pieces of a few channels: every "
                           "pixel row read whole, per-lane shifted sums, partials combined"},
    [KF_ALIGNED_CHUNKS] = {"aligned_chunks",
                           "a split reduction whose chunks start off 16-byte boundaries loads one element at a "
                           "time: the same chunks read as whole aligned vectors"},
    [KF_ROW_LN_PROLOGUE] = {"row_layer_norm_prologue",
                            "a layer norm with a pointwise prologue fused before it (a GELU, a residual add) over "
                            "rows that fit on chip, read twice with the prologue computed twice and Welford's "
                            "division per element: one read, the prologue once, sums from registers"},
    [KF_ROW_SM_PROLOGUE] = {"row_softmax_prologue",
                            "a softmax with a pointwise prologue fused before it (an attention mask and scale) "
                            "over rows that fit on chip, read twice with the prologue computed twice: one read, "
                            "the prologue once, max and sum from registers"},
    [KF_COLUMN_REUSE] = {"column_reuse",
                         "a pointwise kernel over rows re-reads its per-column operands (an affine weight and bias "
                         "over a large normalized shape) for every row: blocks of columns walk the rows, the "
                         "operands read once"},
    [KF_REGION_SOFTMAX] = {"region_softmax", NULL},
    [KF_REGION_LOG_SOFTMAX] = {"region_log_softmax", NULL},
    [KF_REGION_GROUP_NORM] = {"region_group_norm", NULL},
    [KF_REGION_LAYER_NORM] = {"region_layer_norm", NULL},
    [KF_REGION_AVG_POOL] = {"region_avg_pool", NULL},
};

static const char ROW_SPLIT_WHY[] =
    "rows too long for one program are read twice: one read, each row's segments held in "
    "registers by programs that exchange their partials";
static const char REGION_WHY[] = "Inductor splits these long rows over several kernels that read the input more than "
                                 "once: one pass, each row's programs exchanging partials";

const char *kfamily_name(kfamily f) { return f > KF_NONE && f < KF_COUNT ? FAMILIES[f].name : ""; }

kfamily kfamily_parse(const char *name) {
    if (!name || !*name) return KF_NONE;
    for (int f = KF_NONE + 1; f < KF_COUNT; f++)
        if (!strcmp(FAMILIES[f].name, name)) return (kfamily)f;
    return KF_NONE;
}

int kfamily_is_row_split(kfamily f) { return f >= KF_ROW_SPLIT_SOFTMAX && f <= KF_ROW_SPLIT_LAYER_NORM; }

int kfamily_is_region(kfamily f) { return f >= KF_REGION_SOFTMAX && f <= KF_REGION_AVG_POOL; }

const char *kfamily_rationale(kfamily f) {
    if (f <= KF_NONE || f >= KF_COUNT) return "";
    if (FAMILIES[f].why) return FAMILIES[f].why;
    return kfamily_is_row_split(f) ? ROW_SPLIT_WHY : REGION_WHY;
}
