/* search.c — the search over one kernel (optimize.h): planner rounds, executor candidates,
 * gate 1 before anything runs, the kernel-level screen, gates 1-4 for the fastest, and — for
 * an executor that keeps a conversation (an LLM) — feedback on each refusal and a retry. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "gates/candidate.h"
#include "gates/gate1.h"
#include "gates/stats.h"
#include "gates/static.h"
#include "llm/agent_llm.h"
#include "optimize/optimize_int.h"
#include "optimize/tuned.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

/* ---------------------------------------------------------------- kernel context */

static int src_has(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

/* A shape literal "(256, 2048, 1024)" as a JSON array of integers; NULL when it holds anything
 * but integer literals (symbolic sizes). */
static json_t *shape_of_text(const char *t) {
    if (!t) return NULL;
    while (*t == ' ' || *t == '(' || *t == '[') t++;
    json_t *arr = json_array();
    while (*t && *t != ')' && *t != ']') {
        char *end = NULL;
        long long v = strtoll(t, &end, 10);
        if (end == t || v < 0) { json_decref(arr); return NULL; }
        json_array_append_new(arr, json_integer(v));
        t = end;
        while (*t == ' ' || *t == ',') t++;
    }
    return arr;
}

/* The shape call() states for tensor `name` (a graph input or an allocation, through plain
 * aliases), or NULL. */
static json_t *buffer_shape(const artifact *a, const char *name) {
    const art_input *in;
    const art_stmt *st;
    if (!art_tensor_origin(a, name, &in, &st)) return NULL;
    const char *shape = in ? in->shape : st->kind == ART_ST_ALLOC ? st->shape : NULL;
    return shape ? shape_of_text(shape) : NULL;
}

/* The kernel as the planner and executor see it (agent.h), with `tuned` (NULL: none) as its
 * "tuned_config", where Inductor's autotuner ended: the planner's first step starts there. */
json_t *opt_kernel_ctx(const artifact *a, int k, const tuned_config *tuned) {
    const art_kernel *K = &a->kernels[k];
    json_t *o = json_pack("{s:s, s:s?, s:s?, s:s}", "name", K->name, "heuristic", K->heuristic, "grid_type",
                          K->grid_type, "kind", art_kernel_kind_name(K->kind));
    json_object_set_new(o, "persistent", json_boolean(K->kind == ART_K_PERSISTENT));
    json_t *ce = json_array(), *rt = json_array(), *sig = json_array();
    for (size_t i = 0; i < K->nparams; i++) {
        const art_param *p = &K->params[i];
        json_array_append_new(sig, json_pack("{s:s, s:s, s:s}", "name", p->name, "type", p->type, "role", art_role_name(p->role)));
        if (p->role == ART_ROLE_CONSTEXPR) json_array_append_new(ce, json_string(p->name));
        else json_array_append_new(rt, json_string(p->name));
    }
    json_object_set_new(o, "constexprs", ce);
    json_object_set_new(o, "runtime_params", rt);
    json_object_set_new(o, "signature", sig);
    json_t *numels = json_object(), *shapes = json_object();
    for (size_t i = 0; i < a->nlaunches; i++) {
        const art_launch *l = &a->launches[i];
        if (l->kind != ART_L_TRITON || l->kernel != k) continue;
        for (size_t j = 0; j < l->args.n; j++) {
            const art_param *p = art_launch_param(a, l, j);
            if (p && p->role != ART_ROLE_SCALAR && p->role != ART_ROLE_CONSTEXPR) {
                json_t *sh = buffer_shape(a, l->args.v[j]);   /* the tensor's shape, when call() states it */
                if (sh) json_object_set_new(shapes, p->name, sh);
            }
            if (!p || p->role != ART_ROLE_SCALAR) continue;
            char *end = NULL;
            long long v = strtoll(l->args.v[j], &end, 10);
            if (end && *end == '\0' && end != l->args.v[j]) json_object_set_new(numels, p->name, json_integer(v));
        }
        break;
    }
    json_object_set_new(o, "numels", numels);
    json_object_set_new(o, "shapes", shapes);   /* pointer parameter -> shape of its first launch's buffer */
    json_object_set_new(o, "masked", json_pack("{s:b, s:b, s:b}", "x", src_has(K->source, "xmask = xindex < xnumel"), "r0",
                                               src_has(K->source, "r0_mask = r0_index < r0_numel"), "y",
                                               src_has(K->source, "ymask = yindex < ynumel")));
    json_t *aten = json_array();
    for (size_t i = 0; i < K->aten_ops.n; i++) json_array_append_new(aten, json_string(K->aten_ops.v[i]));
    json_object_set_new(o, "aten_ops", aten);
    json_t *frag = json_array();   /* Inductor's FX graph fragment: what the kernel computes */
    for (size_t i = 0; i < K->graph_fragment.n; i++) json_array_append_new(frag, json_string(K->graph_fragment.v[i]));
    json_object_set_new(o, "graph_fragment", frag);
    if (K->kind == ART_K_REGION) {   /* the kernels it launches, for the region templates */
        json_t *mem = json_array();
        for (size_t i = 0; i < K->members.n; i++) {
            int m = artifact_find_kernel(a, K->members.v[i]);
            json_t *mo = json_pack("{s:s}", "name", K->members.v[i]);
            if (m >= 0) {
                json_t *ma = json_array();
                for (size_t j = 0; j < a->kernels[m].aten_ops.n; j++) json_array_append_new(ma, json_string(a->kernels[m].aten_ops.v[j]));
                json_object_set_new(mo, "aten_ops", ma);
                json_t *mf = json_array();
                for (size_t j = 0; j < a->kernels[m].graph_fragment.n; j++)
                    json_array_append_new(mf, json_string(a->kernels[m].graph_fragment.v[j]));
                json_object_set_new(mo, "graph_fragment", mf);
                json_object_set_new(mo, "source", json_string(a->kernels[m].source));
            }
            json_array_append_new(mem, mo);
        }
        json_object_set_new(o, "members", mem);
        if (K->vendor_call) json_object_set_new(o, "vendor_call", json_string(K->vendor_call));
    }
    char *jit = builtin_strip_heuristics(K->source, K->decorator.off, K->decorator.len);
    json_object_set_new(o, "jit_source", jit ? json_string(jit) : json_null());
    json_object_set_new(o, "source", json_string(K->source));
    free(jit);
    if (tuned && K->kind != ART_K_REGION) json_object_set_new(o, "tuned_config", tuned_config_json(tuned));
    return o;
}

/* ---------------------------------------------------------------- gate 1 before anything runs */

/* Static rules, interface and stitching; writes the stitched module. 0 ok, else *why is set. */
static int prepare_candidate(octx *c, int k, const char *text, const char *cand_path, const char *mod_path,
                             char **why, kerr *e) {
    candidate *cd = NULL;
    kerr ce = {0};
    *why = NULL;
    if (candidate_parse(text, strlen(text), &cd, &ce)) { *why = kasprintf("does not parse: %s", ce.msg); return 1; }
    static_opts so = {0};
    kbuf st = KBUF_INIT;
    int ok = gate1_check(cd, &c->a->kernels[k], &so, &st, why, NULL);
    candidate_free(cd);
    int rc = 0;
    if (ok) {
        rc = fs_write(cand_path, text, strlen(text), e);
        if (!rc) rc = verify_session_write_module(c->vs, c->a->kernels[k].name, kbuf_str(&st), mod_path, e);
    }
    kbuf_free(&st);
    return rc ? -1 : !ok;
}

void opt_cands_read(const json_t *answer, opt_cands *out) {
    const json_t *arr = json_object_get(answer, "candidates");
    out->n = 0;
    out->v = kcalloc(json_array_size(arr) + 1, sizeof *out->v);
    size_t i;
    const json_t *cd;
    json_array_foreach(arr, i, cd) {
        const char *source = json_string_value(json_object_get(cd, "source"));
        if (!source) continue;
        const char *label = json_string_value(json_object_get(cd, "label"));
        json_t *config = json_object_get(cd, "config");
        out->v[out->n++] = (opt_cand){.label = label ? kstrdup(label) : NULL, .source = kstrdup(source),
                                      .config = config ? json_incref(config) : NULL};
    }
}

void opt_cands_free(opt_cands *c) {
    for (size_t i = 0; c && i < c->n; i++) {
        free(c->v[i].label);
        free(c->v[i].source);
        json_decref(c->v[i].config);
    }
    if (c) {
        free(c->v);
        c->v = NULL;
        c->n = 0;
    }
}

void opt_plans_read(const json_t *answer, opt_plans *out) {
    const json_t *arr = json_object_get(answer, "plans");
    const char *why = json_string_value(json_object_get(answer, "why"));
    out->n = 0;
    out->v = kcalloc(json_array_size(arr) + 1, sizeof *out->v);
    out->why = why ? kstrdup(why) : NULL;
    size_t i;
    json_t *p;
    json_array_foreach(arr, i, p) {
        if (!json_is_object(p)) continue;
        const char *dir = json_string_value(json_object_get(p, "direction"));
        out->v[out->n++] = (opt_plan){.direction = kstrdup(dir ? dir : "?"), .raw = json_incref(p)};
    }
}

void opt_plans_free(opt_plans *p) {
    for (size_t i = 0; p && i < p->n; i++) {
        free(p->v[i].direction);
        json_decref(p->v[i].raw);
    }
    if (p) {
        free(p->v);
        free(p->why);
        p->v = NULL;
        p->why = NULL;
        p->n = 0;
    }
}

char *opt_stored_reason(int screened, const char *reason) {
    if (!screened) return reason ? kstrdup(reason) : NULL;
    return reason ? kasprintf("kernel-level screen: %s", reason)
                  : kstrdup("kernel-level screen: not 2% faster than the original");
}

void opt_record_attempt(octx *c, const char *kernel, const char *kind, const char *direction, const opt_cand *cand,
                        agent_outcome outcome, int gate, const char *reason, double kernel_ms, double orig_ms, double speedup) {
    json_t *a = json_pack("{s:s, s:s?, s:s, s:s?, s:O?, s:s, s:i}", "kernel", kernel, "kernel_kind", kind, "direction",
                          direction ? direction : "?", "label", cand->label, "config", cand->config, "outcome",
                          agent_outcome_name(outcome), "gate", gate);
    if (reason) json_object_set_new(a, "reason", json_string(reason));
    if (kernel_ms > 0) json_object_set_new(a, "kernel_ms", json_real(kernel_ms));
    if (orig_ms > 0) json_object_set_new(a, "orig_ms", json_real(orig_ms));
    if (speedup > 0) json_object_set_new(a, "speedup", json_real(speedup));
    json_t *sum = NULL;
    json_t *ctx = json_pack("{s:O}", "attempt", a);
    kerr e = {0};
    if (!agent_act(c->ag[AGENT_SUMMARIZER], ctx, &sum, &e)) {
        json_object_set(a, "experience", json_object_get(sum, "experience"));
        json_array_append(c->experiences, json_object_get(sum, "experience"));
    }
    /* the store keeps verdicts only: accepted, refused at a gate (a kernel-level screen that
     * found it slower counts as a performance refusal, gate 4), or error */
    if (outcome != AGENT_OUT_REUSED) {
        int screened = outcome == AGENT_OUT_SCREENED_OUT;
        char *tags = json_dumps(json_object_get(sum, "tags"), JSON_COMPACT);
        store_verdict v = outcome == AGENT_OUT_ACCEPTED ? STORE_ACCEPTED : outcome == AGENT_OUT_ERROR ? STORE_ERROR : STORE_REFUSED;
        char *why = opt_stored_reason(screened, reason);
        mem_attempt(c, direction, cand, v, screened ? 4 : gate, why, kernel_ms, orig_ms, speedup,
                    json_string_value(json_object_get(sum, "experience")), tags);
        free(why);
        free(tags);
    }
    json_decref(sum);
    json_decref(ctx);
    json_array_append_new(c->attempts, a);
}

/* ---------------------------------------------------------------- one kernel */

typedef struct kstate {
    int k;
    const char *kname, *kkind;
    const json_t *largs;          /* the launch spec of its first launch (borrowed from the session) */
    json_t *kc;                   /* the kernel as agents see it (owned) */
    krow *row;                    /* the kernel table's row for this kernel (borrowed) */
    json_t *history;              /* what the planner learns from (owned) */
    int tried, accepted, refused[5];
    int host_slower;   /* of refused[4]: faster on the GPU, slower as the model is called */
    int ungated;       /* faster in the screen, never gated: no budget left for their gates */
    double ungated_ms, ungated_orig_ms; /* the fastest of them in the screen, and the original there */
    double best_speedup;
    double best_ratio; /* original / screen median of its fastest accepted candidate (0: none yet) */
    char *kdir;
    double kstart, kbudget;
    int seq;                      /* candidate file numbering */
} kstate;

/* The kernel screen's limit (one bench_kernels request for all of a round's candidates): four
 * candidate steps (timeout_s or its default of 120 s), but no more than what is left of the
 * budget plus 15 s (at least 15 s): a screen that hangs (a candidate whose programs wait for
 * each other and are not all resident, or one whose compile does not end) must not hold the run
 * far past its budget (`kopt bench` counts a problem within budget up to 1.1 x + 15 s; at + 30 s
 * a 1-minute run whose screen hung with 47 s left ended at 98 s). */
double opt_screen_timeout_s(const optimize_opts *o, double left_s) {
    double steps = o->timeout_s > 0 ? o->timeout_s * 4 : 480;
    return fmin(steps, fmax(left_s, 0) + 15);
}

/* A kernel's share of what is left of the budget: the remaining time split evenly over the
 * kernels still to search (at least 15 s), so one kernel cannot starve the others. */
static int over_kernel_budget(const octx *c, const kstate *ks) {
    return opt_over_budget(c) || opt_now() - ks->kstart > ks->kbudget;
}

static void history_add(kstate *ks, const opt_cand *cand, double kernel_ms, agent_outcome outcome, int gate, int round,
                        const char *direction, const char *reason) {
    json_t *h = json_pack("{s:O?, s:o, s:s, s:i, s:i, s:s?}", "config", cand->config, "kernel_ms",
                          kernel_ms > 0 && isfinite(kernel_ms) ? json_real(kernel_ms) : json_null(), "outcome",
                          agent_outcome_name(outcome),
                          "gate", gate, "round", round, "direction", direction);
    if (reason) json_object_set_new(h, "reason", json_string(reason));
    json_array_append_new(ks->history, h);
}

/* The last refusal of an executor answer, for feedback: gate, reason, figures. */
typedef struct refusal {
    int gate;
    char *label, *reason;
    json_t *figures;
} refusal;

static void refusal_set(refusal *f, int gate, const char *label, const char *reason, const json_t *figures) {
    free(f->label);
    free(f->reason);
    json_decref(f->figures);
    f->gate = gate;
    f->label = kstrdup(label ? label : "?");
    f->reason = kstrdup(reason ? reason : "refused");
    f->figures = figures ? json_incref((json_t *)figures) : NULL;
}

static void refusal_free(refusal *f) { refusal_set(f, 0, NULL, NULL, NULL); free(f->label); free(f->reason); }

/* Whether a candidate screened at med ms against the original's orig ms is more than 2% behind
 * the kernel's fastest accepted candidate in the screen (the margin of the screen's own bar):
 * it cannot become the kernel's pick, so its gates would only spend the budget. Ratios, since
 * the original is timed afresh in every round; within 2% the gates (the model as a whole)
 * decide. */
static int behind_best(const kstate *ks, double orig, double med) {
    return ks->best_ratio > 0 && orig / med < 0.98 * ks->best_ratio;
}

/* Records a candidate behind_best() holds back from the gates (a screened-out verdict with the
 * figures; last takes it as the refusal an LLM executor is told). */
static void record_behind(octx *c, kstate *ks, const char *direction, const opt_cand *cd, double med, double orig,
                          int round, refusal *last) {
    char *why = kasprintf("not faster in the screen than this kernel's fastest accepted candidate: %.4f ms against "
                          "the original's %.4f (%.3fx; accepted %.3fx)",
                          med, orig, orig / med, ks->best_ratio);
    opt_record_attempt(c, ks->kname, ks->kkind, direction, cd, AGENT_OUT_SCREENED_OUT, 0, why, med, orig, 0);
    history_add(ks, cd, med, AGENT_OUT_SCREENED_OUT, 4, round, direction, NULL);
    refusal_set(last, 4, cd->label, why, NULL);
    free(why);
}

/* Gate 1 (static rules, interface, stitching) for every candidate of an executor answer, the
 * kernel-level screen of the survivors, then gates 1-4 for the fastest few. Returns non-zero
 * only when the pipeline cannot go on; *plan_accepted tells whether one passed. */
static int evaluate(octx *c, kstate *ks, const char *direction, const opt_cands *cands, int round, int *plan_accepted,
                    refusal *last, kerr *e) {
    int rc = 0;
    *plan_accepted = 0;
    /* the worker's requests name modules and paths (JSON: the protocol's edge); live[j] is the
     * candidate of mods[j] and paths[j] */
    json_t *mods = json_array(), *paths = json_array();
    const opt_cand **live = kcalloc(cands->n + 1, sizeof *live);
    size_t i, n = 0;
    for (i = 0; i < cands->n; i++) {
        const opt_cand *cd = &cands->v[i];
        if (over_kernel_budget(c, ks)) break;
        const char *text = cd->source;
        store_seen seen = {0};
        if (mem_seen(c, text, &seen)) {
            /* already judged: in this run before an interruption, or in an earlier run */
            c->reused++;
            agent_outcome was = seen.outcome == STORE_ACCEPTED ? AGENT_OUT_ACCEPTED
                              : seen.outcome == STORE_ERROR  ? AGENT_OUT_ERROR
                                                             : AGENT_OUT_REFUSED;
            history_add(ks, cd, 0, was, seen.refused_gate, round, direction, "verdict from the store");
            if (was != AGENT_OUT_ACCEPTED) {
                opt_record_attempt(c, ks->kname, ks->kkind, direction, cd, AGENT_OUT_REUSED, seen.refused_gate,
                                   "verdict from the store", 0, 0, 0);
                continue;
            }
            /* an accepted one is verified again: the gates are the guarantee */
        }
        c->used++;
        ks->tried++;
        int seq = ks->seq++;
        char *cp = kasprintf("%s/c%03d.py", ks->kdir, seq), *mp = kasprintf("%s/c%03d.module.py", ks->kdir, seq);
        char *why = NULL;
        int pr = prepare_candidate(c, ks->k, text, cp, mp, &why, e);
        if (pr < 0) { free(cp); free(mp); rc = e->code; break; }
        if (pr > 0) {
            ks->refused[1]++;
            opt_record_attempt(c, ks->kname, ks->kkind, direction, cd, AGENT_OUT_REFUSED, 1, why, 0, 0, 0);
            history_add(ks, cd, 0, AGENT_OUT_REFUSED, 1, round, direction, why);
            refusal_set(last, 1, cd->label, why, NULL);
        } else {
            json_array_append_new(mods, json_string(mp));
            json_array_append_new(paths, json_string(cp));
            live[n++] = cd;
        }
        free(why);
        free(cp);
        free(mp);
    }
    json_t *bench = NULL;
    double *med = NULL;
    size_t *ord = NULL;
    if (rc || n == 0) goto out;
    opt_progress(c, "%s: round %d, screening %zu candidates", ks->kname, round, n);
    kerr be = {0};
    if (worker_call(c->w, "bench_kernels",
                    json_pack("{s:s, s:s, s:O, s:O, s:i, s:i}", "orig", verify_session_base_module(c->vs), "kernel", ks->kname,
                              "cands", mods, "launch_args", ks->largs, "rounds", 10, "warmup", 2),
                    opt_screen_timeout_s(c->o, opt_budget(c) - (opt_now() - c->t0)), &bench, &be)) {
        log_warn("kernel screen failed for %s: %s", ks->kname, be.msg);
        for (i = 0; i < n; i++) opt_record_attempt(c, ks->kname, ks->kkind, direction, live[i], AGENT_OUT_ERROR, 2, be.msg, 0, 0, 0);
        refusal_set(last, 2, "the screened candidates", be.msg, NULL);
        goto out;
    }
    double orig_ms = stats_median_json(json_object_get(bench, "orig"));
    c->screen_compile_s += json_number_value(json_object_get(bench, "compile_s"));
    {
        int th = (int)json_integer_value(json_object_get(bench, "compile_threads"));
        if (th > c->compile_threads) c->compile_threads = th;
    }
    med = kcalloc(n, sizeof *med);
    ord = kcalloc(n, sizeof *ord);
    for (i = 0; i < n; i++) {
        const json_t *s = json_array_get(json_object_get(bench, "cands"), i);
        med[i] = json_is_array(s) ? stats_median_json(s) : INFINITY;
        ord[i] = i;
    }
    for (i = 1; i < n; i++)   /* fastest first */
        for (size_t j = i; j > 0 && med[ord[j - 1]] > med[ord[j]]; j--) { size_t t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t; }
    /* First record every verdict the screen already gives (so an interruption in the gates
     * loses none of them), then send the screen's survivors through gates 1-4, fastest
     * first: `top` of them, and up to two more while every one gated so far was refused for
     * correctness, so that a fast but wrong candidate does not hide the next fastest. */
    int top = c->o->screen_top > 0 ? c->o->screen_top : 2;
    size_t *send = kcalloc(n, sizeof *send), nsend = 0;
    for (size_t r = 0; r < n; r++) {
        size_t idx = ord[r];
        const opt_cand *cdj = live[idx];
        const char *label = cdj->label;
        const json_t *s = json_array_get(json_object_get(bench, "cands"), idx);
        int faster = med[idx] < 0.98 * orig_ms;   /* the screen's bar (INFINITY for no samples) */
        if (!json_is_array(s)) {   /* did not compile or raised: a gate-1 refusal */
            const char *why = json_string_value(json_object_get(s, "error"));
            ks->refused[1]++;
            opt_record_attempt(c, ks->kname, ks->kkind, direction, cdj, AGENT_OUT_REFUSED, 1, why, 0, orig_ms, 0);
            history_add(ks, cdj, 0, AGENT_OUT_REFUSED, 1, round, direction, why);
            refusal_set(last, 1, label, why, NULL);
        } else if ((int)nsend < top + 2 && faster) {
            send[nsend++] = idx;
        } else {
            opt_record_attempt(c, ks->kname, ks->kkind, direction, cdj, AGENT_OUT_SCREENED_OUT, 0,
                               faster ? "faster in the screen but not among the round's fastest" : NULL, med[idx],
                               orig_ms, 0);
            history_add(ks, cdj, med[idx], AGENT_OUT_SCREENED_OUT, 4, round, direction, NULL);
            if (!faster) {   /* a faster one left unsent is not told it was slow */
                char *why = kasprintf("correct so far but not faster at kernel level: %.4f ms against the original's %.4f ms",
                                      med[idx], orig_ms);
                refusal_set(last, 4, label, why, NULL);
                free(why);
            }
        }
    }
    int gated = 0, passed = 0, slow = 0;
    for (size_t r = 0; r < nsend && !rc; r++) {
        size_t idx = send[r];
        const opt_cand *cdj = live[idx];
        const char *label = cdj->label;
        /* beyond `top`, only while every gated one was refused for correctness (a gate-4
         * refusal says the model is not faster: slower candidates will not be either) */
        int enough = gated >= top && (passed || slow);
        /* its own gates and the final measurement must fit: twice the longest check */
        int no_time = over_kernel_budget(c, ks) || opt_now() - c->t0 + 2 * c->check_s > opt_budget(c);
        /* behind one accepted in an earlier round or earlier in this one: not gated, nor counted
         * as left ungated (the survivors come fastest first, so none ahead of it is skipped) */
        if (!enough && behind_best(ks, orig_ms, med[idx])) {
            record_behind(c, ks, direction, cdj, med[idx], orig_ms, round, last);
            continue;
        }
        if (!enough && no_time) {
            if (!ks->ungated || med[idx] < ks->ungated_ms) {
                ks->ungated_ms = med[idx];
                ks->ungated_orig_ms = orig_ms;
            }
            ks->ungated++;
        }
        if (enough || no_time) {
            opt_record_attempt(c, ks->kname, ks->kkind, direction, cdj, AGENT_OUT_SCREENED_OUT, 0,
                               enough ? "faster candidates of this round already went through the gates"
                                      : "budget: no time left for its gates and the final measurement",
                               med[idx], orig_ms, 0);
            history_add(ks, cdj, med[idx], AGENT_OUT_SCREENED_OUT, 4, round, direction, NULL);
            continue;
        }
        gated++;
        double t_check = opt_now();
        opt_progress(c, "%s: gates 1-4 for %s (screen %.4f vs %.4f ms)", ks->kname, label, med[idx], orig_ms);
        json_t *rec = NULL;
        verify_verdict vv = {0};
        rc = verify_session_check(c->vs, ks->kname, json_string_value(json_array_get(paths, idx)), &rec, &vv, e);
        if (rc) break;
        c->check_s = fmax(c->check_s, opt_now() - t_check);   /* the longest check so far */
        int acc = vv.kind == VERIFY_ACCEPTED, gate = vv.refused_at;
        int kopt_error = vv.kind == VERIFY_ERROR;   /* kopt's own resources: no verdict */
        double sp = vv.speedup;
        slow += vv.kind == VERIFY_REFUSED && gate == 4;
        const char *reason = vv.reason;
        if (acc) {
            ks->accepted++;
            passed++;
            if (orig_ms / med[idx] > ks->best_ratio) ks->best_ratio = orig_ms / med[idx];
            *plan_accepted = 1;
            if (sp > ks->best_speedup) {
                ks->best_speedup = sp;
                krow_set(&ks->row->change, label);
                json_decref(ks->row->speedup);
                ks->row->speedup = json_incref(json_object_get(rec, "speedup"));
                ks->row->kernel_ms_after = med[idx];
                ks->row->kernel_ms_before = orig_ms;
            }
        } else if (kopt_error) {
            c->resource_errors++;
        } else {
            if (gate >= 1 && gate <= 4) ks->refused[gate]++;
            ks->host_slower += vv.host_slower;
            refusal_set(last, gate, label, reason, json_object_get(rec, "gates"));
        }
        agent_outcome outcome = acc ? AGENT_OUT_ACCEPTED : kopt_error ? AGENT_OUT_ERROR : AGENT_OUT_REFUSED;
        opt_record_attempt(c, ks->kname, ks->kkind, direction, cdj, outcome, acc || kopt_error ? 0 : gate, reason, med[idx],
                           orig_ms, sp);
        history_add(ks, cdj, med[idx], outcome, acc || kopt_error ? 0 : gate, round, direction, reason);
    }
    free(send);
out:
    free(med);
    free(ord);
    json_decref(bench);
    json_decref(mods);
    free(live);
    json_decref(paths);
    return rc;
}

/* One plan: the executor's answer evaluated; an executor that keeps a conversation gets each
 * refusal back (the compiler error, the correctness figures, or "not faster") and retries,
 * up to its own retry limit (it answers with an error, or no candidate and no retry, when
 * done). */
static int run_plan(octx *c, kstate *ks, const opt_plan *plan, int round, kerr *e) {
    agent *ex = c->ag[AGENT_EXECUTOR];
    json_t *ectx = json_pack("{s:O, s:O}", "kernel", ks->kc, "plan", plan->raw);
    refusal last = {0};
    int rc = 0;
    /* an LLM's candidates get gate 1's machine-code check; kopt's own templates do not need it */
    verify_session_set_machine_check(c->vs, agent_is_llm(ex) ? c->sass_python : NULL);
    for (int turn = 0; turn < 1 + 8 && !rc && !over_kernel_budget(c, ks); turn++) {
        json_t *ans = NULL;
        kerr xe = {0};
        if (agent_act(ex, ectx, &ans, &xe)) {
            log_warn("executor (%s): %s", ex->name, xe.msg);
            break;
        }
        opt_cands cands;
        opt_cands_read(ans, &cands);
        int accepted = 0;
        refusal_set(&last, 0, NULL, NULL, NULL);
        if (cands.n == 0) {
            const char *err = json_string_value(json_object_get(ans, "error"));
            int retry = json_is_true(json_object_get(ans, "retry"));
            if (err) log_info("executor answer unusable: %s", err);
            json_decref(ans);
            opt_cands_free(&cands);
            if (retry && agent_is_llm(ex)) continue;   /* the agent queued its own feedback */
            break;
        }
        json_decref(ans);
        rc = evaluate(c, ks, plan->direction, &cands, round, &accepted, &last, e);
        opt_cands_free(&cands);
        if (rc || accepted || !agent_is_llm(ex) || !last.gate) break;
        json_t *fb = json_pack("{s:s, s:i, s:s}", "candidate", last.label, "gate", last.gate, "reason", last.reason);
        if (last.figures) json_object_set(fb, "figures", last.figures);
        kerr fe = {0};
        int frc = agent_feedback(ex, fb, &fe);
        json_decref(fb);
        if (frc) { log_info("executor feedback: %s", fe.msg); break; }
    }
    refusal_free(&last);
    json_decref(ectx);
    return rc;
}

int opt_search_kernel(octx *c, const json_t *target, krow *row, int kernels_left, kerr *e) {
    kstate ks = {.row = row, .kstart = opt_now()};
    double left = opt_budget(c) - (opt_now() - c->t0);
    ks.kbudget = kernels_left > 0 ? left / kernels_left : left;
    if (ks.kbudget < 15) ks.kbudget = 15;
    ks.kname = json_string_value(json_object_get(target, "kernel"));
    ks.k = artifact_find_kernel(c->a, ks.kname);
    if (ks.k < 0) return 0;
    if (verify_session_launch_args(c->vs, ks.k, &ks.largs, e)) return e->code;
    ks.kc = opt_kernel_ctx(c->a, ks.k, row->tuned.num_warps ? &row->tuned : NULL);
    json_t *sms = json_object_get(worker_info(c->w), "sm_count");   /* the GPU the candidates run on */
    if (json_is_integer(sms)) json_object_set(ks.kc, "sm_count", sms);
    ks.kkind = json_string_value(json_object_get(ks.kc, "kind"));
    ks.history = json_array();
    ks.kdir = kasprintf("%s/k%d", c->o->workdir, ks.k);
    int rc = fs_mkdirs(ks.kdir, e);

    /* memory: a kernel already optimized for the same source, shapes and GPU is not searched
     * again; its stored winner goes straight to the gates */
    char *stored = NULL, *slabel = NULL, *sdir = NULL;
    if (!rc && mem_kernel(c, ks.k, json_object_get(target, "args"), &stored, &slabel, &sdir)) {
        opt_progress(c, "%s: verifying the store's winner", ks.kname);
        opt_cand one = {.label = slabel, .source = stored};
        opt_cands cands = {.v = &one, .n = 1};
        refusal last = {0};
        int acc = 0;
        rc = evaluate(c, &ks, sdir, &cands, 0, &acc, &last, e);
        refusal_free(&last);
        if (acc) krow_set(&row->search_end, "reused the winner stored for this kernel");
    }
    free(stored);
    free(slabel);
    free(sdir);
    if (c->store) {
        json_t *dt = NULL;
        kerr se = {0};
        if (!store_direction_table(c->store, ks.kkind, &dt, &se)) json_object_set_new(ks.kc, "direction_stats", dt);
    }
    int max_rounds = c->o->max_rounds > 0 ? c->o->max_rounds : 3;
    for (int round = 0; !rc && !(ks.accepted && row->search_end) && round < max_rounds && !over_kernel_budget(c, &ks); round++) {
        json_t *pctx = json_pack("{s:O, s:O, s:O, s:i, s:{s:i}}", "kernel", ks.kc, "analysis", target, "history", ks.history,
                                 "round", round, "budget", "candidates_left", opt_max_cands(c) - c->used);
        json_t *ans = NULL;
        kerr pe = {0};
        int prc = agent_act(c->ag[AGENT_PLANNER], pctx, &ans, &pe);
        json_decref(pctx);
        if (prc) { log_warn("planner (%s): %s", c->ag[AGENT_PLANNER]->name, pe.msg); break; }
        opt_plans plans;
        opt_plans_read(ans, &plans);
        json_decref(ans);
        if (plans.n == 0) {
            if (plans.why) krow_set(&row->search_end, plans.why);
            opt_plans_free(&plans);
            break;
        }
        for (size_t pi = 0; pi < plans.n && !rc && !over_kernel_budget(c, &ks); pi++)
            rc = run_plan(c, &ks, &plans.v[pi], round, e);
        opt_plans_free(&plans);
    }
    row->searched = 1;
    row->tried = ks.tried;
    memcpy(row->refused, ks.refused, sizeof row->refused);
    row->host_slower = ks.host_slower;
    row->status = ks.accepted ? KROW_OPTIMIZED : KROW_KEPT;
    if (!ks.accepted && !row->why && ks.ungated)
        krow_setf(&row->why,
                  "the budget ran out before the gates of %d candidate%s faster in the kernel-level screen (the "
                  "fastest %.4f ms against the original's %.4f): a longer --budget may accept one",
                  ks.ungated, ks.ungated == 1 ? "" : "s", ks.ungated_ms, ks.ungated_orig_ms);
    if (!ks.accepted && !row->why && ks.host_slower)
        krow_setf(&row->why, "no candidate was faster and correct through the four gates (%d correct and faster on the GPU, "
                             "refused as slower as the model is called: the host work of their launches ate the gain)",
                  ks.host_slower);
    if (!ks.accepted && !row->why)
        krow_set(&row->why, ks.tried ? "no candidate was faster and correct through the four gates" : "no candidate could be generated");
    json_decref(ks.kc);
    json_decref(ks.history);
    free(ks.kdir);
    return rc;
}
