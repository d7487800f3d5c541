/* kplan.h — a planner's plan as the built-in executor carries it out: the executor context's
 * "plan" object ({"direction", "params": {"template", "variants": [...], "configs": [...],
 * "num_warps": [...], "XBLOCK", ...}}, agent.h) read once, at the agent edge, into a typed
 * struct. The JSON object stays the wire form (an LLM planner writes it, an LLM executor reads
 * it as it is); inside the built-in executor and the families a plan is a kplan: an enum for
 * its direction, the rewrite's family, typed parameter sets (variants) and launch
 * configurations.
 *
 * Contract: kplan_read fills *out from `plan` (0), or leaves it empty (direction KP_NONE) and
 * returns -1 when `plan` is not an object. It is lenient as kfacts_read is: a key absent or not
 * an integer reads as 0 (the families refuse what they cannot use, as before); entries of
 * "variants" / "configs" that are not objects are skipped, and a "num_warps" list (an older
 * plan's form) becomes one variant per entry. kplan_free releases what kplan_read allocated
 * (NULL-safe, idempotent on a zeroed struct).
 *
 * Ownership: the strings and the configurations' `raw` objects are borrowed from `plan`, which must outlive the
 * kplan; the arrays are the kplan's own.
 */
#ifndef KOPT_KPLAN_H
#define KOPT_KPLAN_H

#include <jansson.h>
#include <stddef.h>

#include "agents/family.h"

/* What the plan asks for. */
typedef enum kplan_dir {
    KP_NONE,          /* no direction */
    KP_LAUNCH_CONFIG, /* Inductor's kernel relaunched with the configs' block sizes and warps */
    KP_REWRITE,       /* a kernel written anew from the template's family, once per variant */
    KP_ONE_PASS,      /* an LLM planner's spelling: a rewrite where a template applies */
    KP_OTHER,         /* any other spelling (carried out where its params are block sizes) */
} kplan_dir;

/* One parameter set of a rewrite (each family reads the fields it uses; 0: not given). */
typedef struct kp_variant {
    long long num_warps;
    long long block_i, block_s, chunk; /* scan, column softmax: tiles and chunks */
    long long cb, ib;                  /* split column softmax: a segment's rows x columns */
    long long reread;                  /* split column softmax: 1 loads its block again after the exchange */
    long long r0_block, sub, nsub;     /* aligned chunks, split_more */
    long long rows;                    /* statistics tiles (1 when not given: has_rows) */
    int has_rows;
    long long seg;         /* row-split and region segments */
    long long bh, bw, odc; /* pooling tiles, output depths per program */
    long long nsplit, sb;  /* channels-last group statistics */
} kp_variant;

/* One launch configuration (0: not given). */
typedef struct kp_config {
    long long xblock, r0_block, yblock, num_warps, num_stages;
    int has_r0_block, has_yblock, has_num_warps, has_num_stages, has_xblock;
    int reverse_last;  /* "reverse_last_pass": true: the last r0 pass over its chunks backward (revloop.h) */
    const json_t *raw; /* borrowed */
} kp_config;

typedef struct kplan {
    kplan_dir dir;
    const char *direction; /* borrowed: as spelled (NULL: none) */
    kfamily tmpl;          /* params.template (KF_NONE: absent or unknown) */
    const char *tmpl_name; /* borrowed: as spelled (NULL: none) */
    kp_variant *var;       /* params.variants, or one per entry of params.num_warps */
    size_t nvar;
    int has_variants; /* params.variants was an array */
    kp_config *cfg;   /* params.configs */
    size_t ncfg;
    int has_configs; /* params.configs was an array */
    kp_config bare;  /* params' own XBLOCK / R0_BLOCK / YBLOCK / num_warps / num_stages */
} kplan;

int kplan_read(const json_t *plan, kplan *out);
void kplan_free(kplan *p);

#endif
