/* agent.h — the one interface behind the five agent roles of `kopt optimize` (profiler,
 * analyst, planner, executor, summarizer). A role receives a structured context (JSON) and
 * returns a structured answer (JSON); failures come back to it as feedback it can act on.
 * Built-in, measurement-driven agents (src/agents/builtin_*.c) and LLM-backed agents
 * (src/llm/) implement the same vtable, so any role can be played by either.
 *
 * Contexts and answers per role (all JSON objects; unknown keys are ignored):
 *   profiler    ctx {"inspect": <kopt.inspect/1 document>}            -> {"kernels":[profile rows]}
 *   analyst     ctx {"launches":[profile rows], "model_ms", "model_floor_ms", "count_wrong":[names
 *               the floor check lists below their own floor]} -> {"ranked":[{"kernel","class",
 *               "gain_ms","share","frac_of_ceiling","why"}], "all":[...]} (builtin_analyst.c)
 *   planner     ctx {"kernel":{name, kind ("pointwise|reduction|...|region"), heuristic, grid_type,
 *                              persistent, constexprs, runtime_params, signature [{name,type,role}],
 *                              numels, shapes, masked, aten_ops, graph_fragment, jit_source,
 *                              source; regions: members [{name, aten_ops, graph_fragment, source}]
 *                              and, for one ATen library call (artifact/region.h), vendor_call;
 *                              tuned_config (the configuration Inductor's autotuner settled on,
 *                              as the worker's profile reported it: optimize/tuned.h);
 *                              sm_count, the worker's GPU's SMs} -- opt_kernel_ctx and
 *                              opt_search_kernel (search.c),
 *                    "analysis":{class, share, frac_of_ceiling, time_ms, bytes},
 *                    "history":[{"config":{...},"kernel_ms":x,"outcome":"accepted|refused|
 *                                screened-out|...","gate":N,"round":k,"direction","reason"}],
 *                    "round":k,
 *                    "budget":{"candidates_left":N}}
 *               (the built-in planner and executor read "kernel" once into typed kernel facts,
 *               agents/kfacts.h, and work on those; an LLM agent reads the object as it is)
 *               (library calls are never targets, except the allowlisted ATen calls a vendor
 *               region holds: those are region kernels like any other)
 *               -> {"plans":[{"direction":"launch_config|rewrite|one_pass|split|...","params":{...},
 *                             "rationale":"..."}]}
 *               (a launch_config's params hold "configs": [{XBLOCK, R0_BLOCK, YBLOCK,
 *               num_warps, num_stages, "reverse_last_pass": true|absent (revloop.h)}];
 *               a rewrite's params name its family's template, "template": a kfamily name,
 *               agents/family.h, read back with kfamily_parse; the search reads the answer
 *               once into typed plans, optimize_int.h's opt_plans_read, an empty list's
 *               "why" ending the kernel's search)
 *   executor    ctx {"kernel":{... as above}, "plan":{...}}
 *               (the built-in executor reads "plan" once into a typed plan, agents/kplan.h:
 *               the direction an enum, the template a kfamily, variants and launch
 *               configurations as integers; the families take it, never the JSON object)
 *               -> {"candidates":[{"label":"...","source":"<candidate file text, docs/CANDIDATES.md>",
 *                                  "config":{...}}]}
 *               (the search reads the answer once into typed candidates, optimize_int.h's
 *               opt_cands_read; an entry without a source string is skipped)
 *   summarizer  ctx {"attempt":{kernel, plan, label, gates:[...], outcome, reason, speedup}}
 *               -> {"experience":"one sentence", "tags":["..."]}
 * Feedback: agent_feedback(a, {"candidate":label, "gate":N, "reason":"...", "figures":{...}})
 * lets an agent that keeps a conversation (an LLM executor) retry with the compiler error or the
 * correctness figures; `act` called again then returns the retry. Built-in agents may ignore it.
 *
 * Ownership: the context is borrowed; *out is a new reference for the caller. An agent is
 * created by its constructor and released with agent_free (NULL-safe).
 */
#ifndef KOPT_AGENT_H
#define KOPT_AGENT_H

#include <jansson.h>

#include "util/err.h"

typedef enum {
    AGENT_PROFILER = 0,
    AGENT_ANALYST,
    AGENT_PLANNER,
    AGENT_EXECUTOR,
    AGENT_SUMMARIZER,
    AGENT_NROLES
} agent_role;

/* What became of one candidate in the search (optimize/search.c), as the planner's history, the
 * summarizer's attempt and an LLM's feedback carry it ("outcome"), spelled by agent_outcome_name
 * and read back by agent_outcome_parse: agents compare this enum, never the strings. */
typedef enum agent_outcome {
    AGENT_OUT_ACCEPTED = 0,  /* through gates 1-4 */
    AGENT_OUT_REFUSED,       /* at a gate */
    AGENT_OUT_SCREENED_OUT,  /* correct so far, not faster at kernel level (or not sent to the gates) */
    AGENT_OUT_REUSED,        /* the store already held its verdict */
    AGENT_OUT_ERROR,         /* kopt's own resources: no verdict */
    AGENT_OUT_UNKNOWN        /* absent or not one of the above (an LLM's or an old store's spelling) */
} agent_outcome;

/* "accepted", "refused", "screened-out", "reused", "error"; "unknown" for AGENT_OUT_UNKNOWN. */
const char *agent_outcome_name(agent_outcome o);
/* The outcome a name spells; AGENT_OUT_UNKNOWN for NULL or any other text. */
agent_outcome agent_outcome_parse(const char *s);

/* The analyst's class of a launch (its answer's "class"), spelled by agent_class_name and read
 * back by agent_class_parse. */
typedef enum agent_class {
    AGENT_CLASS_MEMORY = 0,    /* "memory-bound": above its memory-traffic floor, a target */
    AGENT_CLASS_NEAR_CEILING,  /* "near-ceiling": at >= 80% of the floor's speed */
    AGENT_CLASS_COMPUTE,       /* "compute-bound" */
    AGENT_CLASS_LATENCY,       /* "latency-bound": under 5 us, launch overhead dominates */
    AGENT_CLASS_VENDOR,        /* "vendor": a cuBLAS/cuDNN call, never a target */
    AGENT_CLASS_UNKNOWN        /* absent or another spelling (an LLM analyst's) */
} agent_class;

/* The class's name ("unknown" for AGENT_CLASS_UNKNOWN and out-of-range values). */
const char *agent_class_name(agent_class c);
/* The class a name spells; AGENT_CLASS_UNKNOWN for NULL or any other text. */
agent_class agent_class_parse(const char *s);

typedef struct agent agent;

typedef struct agent_vtable {
    int (*act)(agent *self, const json_t *ctx, json_t **out, kerr *e);
    int (*feedback)(agent *self, const json_t *fb, kerr *e);   /* may be NULL */
    void (*destroy)(agent *self);
} agent_vtable;

struct agent {
    agent_role role;
    char *name;              /* "builtin", "openai:<model>", "anthropic:<model>" */
    const agent_vtable *vt;
    void *impl;              /* owned by the implementation, freed by destroy */
};

static inline int agent_act(agent *a, const json_t *ctx, json_t **out, kerr *e) {
    return a->vt->act(a, ctx, out, e);
}
static inline int agent_feedback(agent *a, const json_t *fb, kerr *e) {
    return a->vt->feedback ? a->vt->feedback(a, fb, e) : 0;
}
void agent_free(agent *a);
const char *agent_role_name(agent_role r);
int agent_role_from_name(const char *s);   /* -1 if unknown */

#endif
