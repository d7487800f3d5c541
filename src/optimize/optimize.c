#include "optimize/optimize.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "gates/candidate.h"
#include "gates/static.h"
#include "gates/stats.h"
#include "profile/inspect.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"
#include "verify/verify.h"

typedef struct octx {
    worker *w;
    const optimize_opts *o;
    verify_session *vs;
    const artifact *a;
    agent *ag[AGENT_NROLES];
    int owned[AGENT_NROLES];
    double t0;
    int used;                 /* candidates generated */
    json_t *doc;
    json_t *attempts;         /* borrowed from doc */
    json_t *experiences;      /* borrowed from doc */
} octx;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double budget(const octx *c) { return c->o->budget_s > 0 ? c->o->budget_s : 120; }
static int max_cands(const octx *c) { return c->o->max_candidates > 0 ? c->o->max_candidates : 64; }
static int over_budget(const octx *c) { return now() - c->t0 > budget(c) || c->used >= max_cands(c); }

static void progress(octx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(octx *c, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char line[700];
    snprintf(line, sizeof line, "%s | %d cands | %.0fs left", buf, c->used, budget(c) - (now() - c->t0));
    if (c->o->progress) c->o->progress(line, c->o->progress_ctx);
    log_info("%s", line);
}

static void verify_progress(const char *stage, void *ctx) {
    octx *c = ctx;
    progress(c, "%s", stage);
}

/* ---------------------------------------------------------------- kernel context */

static int src_has(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

/* The kernel as the planner and executor see it (agent.h). */
static json_t *kernel_ctx(const artifact *a, int k) {
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
    json_t *numels = json_object();
    for (size_t i = 0; i < a->nlaunches; i++) {
        const art_launch *l = &a->launches[i];
        if (l->kind != ART_L_TRITON || l->kernel != k) continue;
        for (size_t j = 0; j < l->args.n; j++) {
            const art_param *p = art_launch_param(a, l, j);
            if (!p || p->role != ART_ROLE_SCALAR) continue;
            char *end = NULL;
            long long v = strtoll(l->args.v[j], &end, 10);
            if (end && *end == '\0' && end != l->args.v[j]) json_object_set_new(numels, p->name, json_integer(v));
        }
        break;
    }
    json_object_set_new(o, "numels", numels);
    json_object_set_new(o, "masked", json_pack("{s:b, s:b, s:b}", "x", src_has(K->source, "xmask = xindex < xnumel"), "r0",
                                               src_has(K->source, "r0_mask = r0_index < r0_numel"), "y",
                                               src_has(K->source, "ymask = yindex < ynumel")));
    json_t *aten = json_array();
    for (size_t i = 0; i < K->aten_ops.n; i++) json_array_append_new(aten, json_string(K->aten_ops.v[i]));
    json_object_set_new(o, "aten_ops", aten);
    char *jit = builtin_strip_heuristics(K->source, K->decorator.off, K->decorator.len);
    json_object_set_new(o, "jit_source", jit ? json_string(jit) : json_null());
    json_object_set_new(o, "source", json_string(K->source));
    free(jit);
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
    static_report sr = {0};
    if (static_check(cd, &so, &sr, &ce)) {
        *why = kasprintf("%s", ce.msg);
        static_report_free(&sr);
        candidate_free(cd);
        return 1;
    }
    static_report_free(&sr);
    if (candidate_check_interface(cd, &c->a->kernels[k], &ce)) {
        *why = kasprintf("launch interface: %s", ce.msg);
        candidate_free(cd);
        return 1;
    }
    kbuf st = KBUF_INIT;
    if (candidate_form(cd) == CAND_FORM_L) kbuf_puts(&st, candidate_launch_shim());
    int rc = candidate_stitch_text(cd, c->a->kernels[k].name, &st, &ce);
    candidate_free(cd);
    if (rc) { *why = kasprintf("stitching: %s", ce.msg); kbuf_free(&st); return 1; }
    rc = fs_write(cand_path, text, strlen(text), e);
    if (!rc) rc = verify_session_write_module(c->vs, c->a->kernels[k].name, kbuf_str(&st), mod_path, e);
    kbuf_free(&st);
    return rc ? -1 : 0;
}

static void record_attempt(octx *c, const char *kernel, const char *kind, const char *direction, const json_t *cand,
                           const char *outcome, int gate, const char *reason, double kernel_ms, double orig_ms, double speedup) {
    json_t *a = json_pack("{s:s, s:s?, s:s, s:s, s:O?, s:s, s:i}", "kernel", kernel, "kernel_kind", kind, "direction",
                          direction ? direction : "?", "label", json_string_value(json_object_get(cand, "label")), "config",
                          json_object_get(cand, "config"), "outcome", outcome, "gate", gate);
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
    json_decref(sum);
    json_decref(ctx);
    json_array_append_new(c->attempts, a);
}

static double median_arr(const json_t *arr) {
    size_t n = json_array_size(arr);
    if (!n) return 0;
    double *v = kcalloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = json_number_value(json_array_get(arr, i));
    double m = stats_median(v, n);
    free(v);
    return m;
}

/* ---------------------------------------------------------------- one kernel */

/* A kernel's share of what is left of the budget: the remaining time split evenly over the
 * kernels still to search (at least 15 s), so one kernel cannot starve the others. */
static int over_kernel_budget(const octx *c, double kstart, double kbudget) {
    return over_budget(c) || now() - kstart > kbudget;
}

static int search_kernel(octx *c, const json_t *target, json_t *krow, int kernels_left, kerr *e) {
    double kstart = now();
    double left = budget(c) - (now() - c->t0);
    double kbudget = kernels_left > 0 ? left / kernels_left : left;
    if (kbudget < 15) kbudget = 15;
    const char *kname = json_string_value(json_object_get(target, "kernel"));
    int k = artifact_find_kernel(c->a, kname);
    if (k < 0) return 0;
    const char *largs = NULL;
    if (verify_session_launch_args(c->vs, k, &largs, e)) return e->code;
    json_t *kc = kernel_ctx(c->a, k);
    const char *kkind = json_string_value(json_object_get(kc, "kind"));
    json_t *history = json_array();
    int tried = 0, accepted = 0;
    int refused[5] = {0};
    double best_speedup = 0;
    char *kdir = kasprintf("%s/k%d", c->o->workdir, k);
    int rc = fs_mkdirs(kdir, e);
    for (int round = 0; !rc && round < (c->o->max_rounds > 0 ? c->o->max_rounds : 3) && !over_kernel_budget(c, kstart, kbudget);
         round++) {
        json_t *pctx = json_pack("{s:O, s:O, s:O, s:i, s:{s:i}}", "kernel", kc, "analysis", target, "history", history,
                                 "round", round, "budget", "candidates_left", max_cands(c) - c->used);
        json_t *plans = NULL;
        rc = agent_act(c->ag[AGENT_PLANNER], pctx, &plans, e);
        json_decref(pctx);
        if (rc) break;
        if (json_array_size(json_object_get(plans, "plans")) == 0) {
            if (json_object_get(plans, "why")) json_object_set(krow, "search_end", json_object_get(plans, "why"));
            json_decref(plans);
            break;
        }
        size_t pi;
        const json_t *plan;
        json_array_foreach(json_object_get(plans, "plans"), pi, plan) {
        if (rc || over_kernel_budget(c, kstart, kbudget)) break;
        const char *direction = json_string_value(json_object_get(plan, "direction"));
        json_t *ectx = json_pack("{s:O, s:O}", "kernel", kc, "plan", plan), *ex = NULL;
        kerr xe = {0};
        if (agent_act(c->ag[AGENT_EXECUTOR], ectx, &ex, &xe)) {
            json_decref(ectx);
            log_warn("executor: %s", xe.msg);
            continue;
        }
        json_decref(ectx);
        const json_t *cands = json_object_get(ex, "candidates");
        /* gate 1 (static) before anything runs; then the kernel-level screen */
        json_t *mods = json_array(), *live = json_array(), *paths = json_array();
        size_t i;
        json_t *cd;
        json_array_foreach(cands, i, cd) {
            if (over_kernel_budget(c, kstart, kbudget)) break;
            c->used++;
            tried++;
            char *cp = kasprintf("%s/r%d_p%zu_c%zu.py", kdir, round, pi, i),
                 *mp = kasprintf("%s/r%d_p%zu_c%zu.module.py", kdir, round, pi, i);
            char *why = NULL;
            int pr = prepare_candidate(c, k, json_string_value(json_object_get(cd, "source")), cp, mp, &why, e);
            if (pr < 0) { free(cp); free(mp); rc = e->code; break; }
            if (pr > 0) {
                refused[1]++;
                record_attempt(c, kname, kkind, direction, cd, "refused", 1, why, 0, 0, 0);
                json_array_append_new(history, json_pack("{s:O, s:n, s:s, s:i, s:i}", "config", json_object_get(cd, "config"),
                                                         "kernel_ms", "outcome", "refused", "gate", 1, "round", round));
            } else {
                json_array_append_new(mods, json_string(mp));
                json_array_append_new(paths, json_string(cp));
                json_array_append(live, cd);
            }
            free(why);
            free(cp);
            free(mp);
        }
        if (rc || json_array_size(mods) == 0) { json_decref(mods); json_decref(live); json_decref(paths); json_decref(ex); continue; }
        (void)direction;
        progress(c, "%s: round %d, screening %zu configurations", kname, round, json_array_size(mods));
        json_t *bench = NULL;
        kerr be = {0};
        if (worker_call(c->w, "bench_kernels",
                        json_pack("{s:s, s:s, s:O, s:s, s:i, s:i}", "orig", verify_session_module(c->vs), "kernel", kname,
                                  "cands", mods, "launch_args", largs, "rounds", 10, "warmup", 2),
                        c->o->timeout_s > 0 ? c->o->timeout_s * 4 : 480, &bench, &be)) {
            log_warn("kernel screen failed for %s: %s", kname, be.msg);
            json_array_foreach(live, i, cd) record_attempt(c, kname, kkind, direction, cd, "error", 2, be.msg, 0, 0, 0);
            json_decref(mods); json_decref(live); json_decref(paths); json_decref(ex);
            continue;
        }
        double orig_ms = median_arr(json_object_get(bench, "orig"));
        if (!json_object_get(krow, "kernel_ms_orig")) json_object_set_new(krow, "kernel_ms_orig", json_real(orig_ms));
        /* order the survivors by their median */
        size_t n = json_array_size(live);
        double *med = kcalloc(n ? n : 1, sizeof *med);
        size_t *ord = kcalloc(n ? n : 1, sizeof *ord);
        for (i = 0; i < n; i++) {
            const json_t *s = json_array_get(json_object_get(bench, "cands"), i);
            med[i] = json_is_array(s) ? median_arr(s) : INFINITY;
            ord[i] = i;
            json_array_append_new(history, json_pack("{s:O, s:o, s:s, s:i}", "config", json_object_get(json_array_get(live, i), "config"),
                                                     "kernel_ms", isfinite(med[i]) ? json_real(med[i]) : json_null(), "outcome",
                                                     "screened", "round", round));
        }
        for (i = 1; i < n; i++)
            for (size_t j = i; j > 0 && med[ord[j - 1]] > med[ord[j]]; j--) { size_t t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t; }
        int sent = 0, top = c->o->screen_top > 0 ? c->o->screen_top : 2;
        for (size_t r = 0; r < n && !rc; r++) {
            size_t idx = ord[r];
            const json_t *cdj = json_array_get(live, idx);
            const json_t *s = json_array_get(json_object_get(bench, "cands"), idx);
            if (!json_is_array(s)) {
                refused[1]++;
                record_attempt(c, kname, kkind, direction, cdj, "refused", 1, json_string_value(json_object_get(s, "error")), 0, orig_ms, 0);
                continue;
            }
            if (sent >= top || !(med[idx] < 0.98 * orig_ms) || over_kernel_budget(c, kstart, kbudget)) {
                record_attempt(c, kname, kkind, direction, cdj, "screened-out", 0, NULL, med[idx], orig_ms, 0);
                continue;
            }
            sent++;
            progress(c, "%s: gates 1-4 for %s (screen %.4f vs %.4f ms)", kname, json_string_value(json_object_get(cdj, "label")),
                     med[idx], orig_ms);
            json_t *rec = NULL;
            int acc = 0;
            double sp = 0;
            rc = verify_session_check(c->vs, kname, json_string_value(json_array_get(paths, idx)), &rec, &acc, &sp, e);
            if (rc) break;
            int gate = (int)json_integer_value(json_object_get(rec, "refused_at"));
            if (acc) {
                accepted++;
                if (sp > best_speedup) {
                    best_speedup = sp;
                    json_object_set(krow, "change", json_object_get(cdj, "label"));
                    json_object_set(krow, "speedup", json_object_get(rec, "speedup"));
                }
            } else if (gate >= 1 && gate <= 4) {
                refused[gate]++;
            }
            record_attempt(c, kname, kkind, direction, cdj, acc ? "accepted" : "refused", acc ? 0 : gate,
                           json_string_value(json_object_get(rec, "reason")), med[idx], orig_ms, sp);
            json_array_append_new(history, json_pack("{s:O, s:f, s:s, s:i, s:i}", "config", json_object_get(cdj, "config"),
                                                     "kernel_ms", med[idx], "outcome", acc ? "accepted" : "refused", "gate",
                                                     acc ? 0 : gate, "round", round));
            if (acc && sp >= best_speedup) {
                json_object_set_new(krow, "kernel_ms_after", json_real(med[idx]));
                json_object_set_new(krow, "kernel_ms_before", json_real(orig_ms));
            }
        }
        free(med);
        free(ord);
        json_decref(bench);
        json_decref(mods);
        json_decref(live);
        json_decref(paths);
        json_decref(ex);
        }
        json_decref(plans);
    }
    json_object_set_new(krow, "tried", json_integer(tried));
    json_object_set_new(krow, "refused_by_gate", json_pack("{s:i, s:i, s:i, s:i}", "1", refused[1], "2", refused[2], "3",
                                                           refused[3], "4", refused[4]));
    json_object_set_new(krow, "status", json_string(accepted ? "optimized" : "kept"));
    if (!accepted && !json_object_get(krow, "why"))
        json_object_set_new(krow, "why", json_string(tried ? "no candidate was faster and correct through the four gates"
                                                           : "no candidate could be generated"));
    json_decref(kc);
    json_decref(history);
    free(kdir);
    return rc;
}

/* ---------------------------------------------------------------- pipeline */

static json_t *time_variants(octx *c, json_t *vars, int rounds, kerr *e) {
    json_t *res = NULL;
    if (worker_call(c->w, "time", json_pack("{s:o, s:i, s:i, s:b}", "variants", vars, "rounds", rounds, "warmup", 3,
                                            "flush_l2", 1),
                    1200, &res, e))
        return NULL;
    return res;
}

int optimize_run(worker *w, const optimize_opts *o, json_t **doc_out, kerr *e) {
    octx c = {.w = w, .o = o, .t0 = now()};
    json_t *doc = json_pack("{s:s}", "schema", "kopt.optimize/1");
    *doc_out = doc;
    c.doc = doc;
    c.attempts = json_array();
    c.experiences = json_array();
    json_object_set_new(doc, "attempts", c.attempts);
    json_object_set_new(doc, "experiences", c.experiences);
    for (int r = 0; r < AGENT_NROLES; r++) {
        c.ag[r] = o->agents[r];
        if (!c.ag[r] && r != AGENT_PROFILER) { c.ag[r] = builtin_new((agent_role)r); c.owned[r] = 1; }
    }
    json_t *agents = json_object();
    for (int r = 1; r < AGENT_NROLES; r++) json_object_set_new(agents, agent_role_name((agent_role)r), json_string(c.ag[r]->name));
    json_object_set_new(agents, "profiler", json_string("builtin"));
    json_object_set_new(doc, "agents", agents);

    verify_opts vo = {.problem = o->problem, .out_dir = o->out_dir, .workdir = o->workdir, .seeds = o->seeds > 0 ? o->seeds : 3,
                      .rho_max = 10, .abs_bound = 1e-2, .min_gain = o->min_gain > 0 ? o->min_gain : 0.02,
                      .rounds = o->rounds > 1 ? o->rounds : 30, .timeout_s = o->timeout_s > 0 ? o->timeout_s : 120,
                      .progress = verify_progress, .progress_ctx = &c};
    json_t *vdoc = json_pack("{s:s}", "schema", "kopt.verify/1");
    json_object_set_new(doc, "verify", vdoc);
    progress(&c, "compiling and capturing");
    int rc = verify_session_open(w, &vo, vdoc, &c.vs, e);
    if (rc) goto done;
    c.a = verify_session_artifact(c.vs);
    json_object_set(doc, "problem", json_object_get(vdoc, "problem"));
    json_object_set(doc, "device", json_object_get(vdoc, "device"));

    /* profiler */
    progress(&c, "profiling every launch");
    builtin_profiler_env pe = {.w = w, .profile_module = verify_session_profile_module(c.vs), .args = verify_session_args(c.vs), .reps = 20};
    agent *prof = builtin_profiler_new(&pe);
    json_t *pctx = json_pack("{s:I}", "artifact", (json_int_t)(uintptr_t)c.a), *profile = NULL;
    rc = agent_act(prof, pctx, &profile, e);
    json_decref(pctx);
    agent_free(prof);
    if (rc) goto done;
    json_object_set(doc, "ceilings", json_object_get(profile, "ceilings"));
    size_t ntriton = 0;
    for (size_t i = 0; i < c.a->nlaunches; i++) ntriton += c.a->launches[i].kind == ART_L_TRITON;

    /* whole-model baselines */
    progress(&c, "timing the model: eager, torch.compile%s", o->max_autotune ? ", max-autotune" : "");
    json_t *vars = json_pack("[{s:s}, {s:s, s:s}]", "kind", "eager", "kind", "compiled", "mode", "default");
    if (o->max_autotune) json_array_append_new(vars, json_pack("{s:s, s:s}", "kind", "compiled", "mode", "max-autotune-no-cudagraphs"));
    json_t *tres = time_variants(&c, vars, 20, e);
    if (!tres) { json_decref(profile); rc = e->code; goto done; }
    const json_t *smp = json_object_get(tres, "samples");
    double eager_ms = median_arr(json_array_get(smp, 0)), comp_ms = median_arr(json_array_get(smp, 1));
    json_t *model = json_pack("{s:f, s:f}", "eager_ms", eager_ms, "compiled_ms", comp_ms);
    if (o->max_autotune) json_object_set_new(model, "max_autotune_ms", json_real(median_arr(json_array_get(smp, 2))));
    json_object_set_new(doc, "model", model);
    json_decref(tres);
    double floor_ms = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(profile, "launches"), i, r)
        floor_ms += json_number_value(json_object_get(r, "time_ms")) * json_number_value(json_object_get(r, "frac_of_ceiling"));
    json_object_set_new(model, "floor_ms", json_real(floor_ms));

    /* analyst */
    json_t *actx = json_pack("{s:O, s:f}", "launches", json_object_get(profile, "launches"), "model_ms", comp_ms), *an = NULL;
    rc = agent_act(c.ag[AGENT_ANALYST], actx, &an, e);
    json_decref(actx);
    if (rc) { json_decref(profile); goto done; }
    json_t *kernels = json_array(), *vendor = json_array();
    json_object_set_new(doc, "kernels", kernels);
    json_object_set_new(doc, "vendor_calls", vendor);
    json_array_foreach(json_object_get(an, "all"), i, r) {
        const char *cls = json_string_value(json_object_get(r, "class"));
        const json_t *row = json_array_get(json_object_get(profile, "launches"), (size_t)json_integer_value(json_object_get(r, "index")));
        if (!strcmp(cls, CLASS_VENDOR)) {
            json_array_append_new(vendor, json_pack("{s:O, s:O, s:O}", "name", json_object_get(r, "kernel"), "time_ms",
                                                    json_object_get(r, "time_ms"), "share", json_object_get(r, "share")));
            continue;
        }
        json_t *k = json_pack("{s:O, s:O?, s:O, s:O, s:O, s:O, s:f, s:s, s:O}", "name", json_object_get(r, "kernel"), "kernel_kind",
                              json_object_get(r, "kernel_kind"), "time_ms", json_object_get(r, "time_ms"), "share",
                              json_object_get(r, "share"), "frac_of_ceiling", json_object_get(r, "frac_of_ceiling"), "class",
                              json_object_get(r, "class"), "bytes",
                              json_number_value(json_object_get(row, "bytes_read")) + json_number_value(json_object_get(row, "bytes_written")),
                              "status", "kept", "why", json_object_get(r, "why"));
        json_object_set(k, "aten_ops", json_object_get(row, "aten_ops"));
        json_array_append_new(kernels, k);
    }
    json_decref(profile);

    /* search, kernel by kernel in the analyst's order */
    const json_t *ranked = json_object_get(an, "ranked");
    if (ntriton == 0) {
        json_decref(an);
        rc = kerr_set(e, KOPT_E_NOTRITON, "torch.compile generated no Triton kernel for this model: nothing to optimize");
        goto done;
    }
    json_array_foreach(ranked, i, r) {
        if (over_budget(&c)) {
            json_t *k;
            size_t j;
            json_array_foreach(kernels, j, k)
                if (!strcmp(json_string_value(json_object_get(k, "name")), json_string_value(json_object_get(r, "kernel"))))
                    json_object_set_new(k, "why", json_string("budget exhausted before this kernel was searched"));
            continue;
        }
        json_t *krow = NULL, *k;
        size_t j;
        json_array_foreach(kernels, j, k)
            if (!strcmp(json_string_value(json_object_get(k, "name")), json_string_value(json_object_get(r, "kernel")))) krow = k;
        if (!krow) continue;
        json_object_del(krow, "why");
        rc = search_kernel(&c, r, krow, (int)(json_array_size(ranked) - i), e);
        if (rc) break;
    }
    json_decref(an);
    if (rc) goto done;

    /* choose, combine, write */
    progress(&c, "re-stitching the winners");
    kerr fe = {0};
    int frc = verify_session_finish(c.vs, &fe);
    if (frc && frc != KOPT_E_CANDIDATE) { *e = fe; rc = frc; goto done; }
    const json_t *replaced = json_object_get(vdoc, "replaced");
    json_object_set(doc, "outcome", json_object_get(vdoc, "outcome"));
    if (json_object_size(replaced) > 0) {
        /* an independent final measurement: baseline module vs optimized module */
        progress(&c, "final measurement: optimized vs baseline module");
        char *opt = fs_join(o->out_dir, "optimized_module.py");
        json_t *fv = json_pack("[{s:s,s:s,s:s},{s:s,s:s,s:s}]", "kind", "module", "module", verify_session_module(c.vs), "args",
                               verify_session_args(c.vs), "kind", "module", "module", opt, "args", verify_session_args(c.vs));
        free(opt);
        int n = o->rounds > 1 ? o->rounds : 30;
        json_t *fres = time_variants(&c, fv, n, e);
        if (!fres) { rc = e->code; goto done; }
        const json_t *fs = json_object_get(fres, "samples");
        size_t nb = json_array_size(json_array_get(fs, 0));
        double *b = kcalloc(nb, sizeof *b), *q = kcalloc(nb, sizeof *q);
        for (size_t t = 0; t < nb; t++) {
            b[t] = json_number_value(json_array_get(json_array_get(fs, 0), t));
            q[t] = json_number_value(json_array_get(json_array_get(fs, 1), t));
        }
        stats_ci ci;
        if (!stats_speedup_ci_paired(b, q, nb, 0.95, 4000, 11, &ci)) {
            json_object_set_new(model, "baseline_ms", json_real(stats_median(b, nb)));
            json_object_set_new(model, "optimized_ms", json_real(stats_median(q, nb)));
            json_object_set_new(model, "speedup", json_pack("{s:f, s:f, s:f}", "estimate", ci.estimate, "ci95_lo", ci.lo, "ci95_hi", ci.hi));
        }
        free(b);
        free(q);
        json_decref(fres);
    } else {
        json_object_set_new(model, "baseline_ms", json_real(comp_ms));
        json_object_set_new(model, "optimized_ms", json_real(comp_ms));
        json_object_set_new(model, "speedup", json_pack("{s:f, s:f, s:f}", "estimate", 1.0, "ci95_lo", 1.0, "ci95_hi", 1.0));
    }
    json_object_set_new(model, "method", json_string("GPU time of the graph's module (baseline: Inductor's; optimized: "
                                                     "re-stitched), interleaved rounds, L2 flushed, stream stalled; median and "
                                                     "95% paired bootstrap interval. Eager/compiled/max-autotune medians come "
                                                     "from a separate interleaved run of the whole model."));
    /* mark the optimized kernels by what verify chose */
    {
        json_t *k;
        size_t j;
        json_array_foreach(kernels, j, k) {
            const char *nm = json_string_value(json_object_get(k, "name"));
            if (json_object_get(replaced, nm)) {
                json_object_set_new(k, "status", json_string("optimized"));
                /* the kernel's time after: its profiled time scaled by the kernel-level screen's
                 * ratio (candidate median / original median, same interleaved measurement) */
                double kb = json_number_value(json_object_get(k, "kernel_ms_before"));
                double ka = json_number_value(json_object_get(k, "kernel_ms_after"));
                if (kb > 0 && ka > 0)
                    json_object_set_new(k, "after_ms", json_real(json_number_value(json_object_get(k, "time_ms")) * ka / kb));
            } else if (!strcmp(json_string_value(json_object_get(k, "status")), "optimized")) {
                json_object_set_new(k, "status", json_string("kept"));
                json_object_set_new(k, "why", json_string("its winner was dropped when the combination of winners failed"));
            }
        }
    }
    double used = now() - c.t0;
    json_object_set_new(doc, "budget", json_pack("{s:f, s:i, s:f, s:i, s:f}", "wall_s", budget(&c), "candidates", max_cands(&c),
                                                 "used_wall_s", used, "used_candidates", c.used, "gpu_s", used));
    rc = frc;
    if (rc == KOPT_E_CANDIDATE) rc = 0;   /* the baseline kept is a result, not a failure */
done:
    for (int q = 0; q < AGENT_NROLES; q++) if (c.owned[q]) agent_free(c.ag[q]);
    verify_session_close(c.vs);
    return rc;
}
