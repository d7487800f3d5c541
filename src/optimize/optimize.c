/* optimize.c — the `kopt optimize` pipeline (optimize.h): compile and capture (a verify
 * session), profile, whole-model baselines, the analyst's ranking, the search kernel by kernel
 * (search.c), re-stitching, an independent final measurement, and the document. */
#include "optimize/optimize.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/builtin.h"
#include "gates/stats.h"
#include "llm/agent_llm.h"
#include "optimize/optimize_int.h"
#include "profile/inspect.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

/* ---------------------------------------------------------------- budget, progress */

double opt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double opt_budget(const octx *c) { return c->o->budget_s > 0 ? c->o->budget_s : 120; }
int opt_max_cands(const octx *c) { return c->o->max_candidates > 0 ? c->o->max_candidates : 64; }
int opt_over_budget(const octx *c) {
    return opt_now() - c->t0 + c->check_s > opt_budget(c) || c->used >= opt_max_cands(c);
}

void opt_progress(octx *c, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char line[700];
    snprintf(line, sizeof line, "%s | %d cands | %.0fs left", buf, c->used, opt_budget(c) - (opt_now() - c->t0));
    if (c->o->progress) c->o->progress(line, c->o->progress_ctx);
    log_info("%s", line);
}



static void verify_progress(const char *stage, void *ctx) {
    octx *c = ctx;
    opt_progress(c, "%s", stage);
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

/* Every LLM call goes to the store (tokens, latency, cost; never the key). */
static void llm_observe(const llm_call_info *call, void *ctx) {
    octx *c = ctx;
    if (!c->store) return;
    store_llm_call row = {.run_id = c->run_id, .role = agent_role_name(call->role), .backend = call->backend,
                          .model = call->model, .tokens_in = call->tokens_in, .tokens_out = call->tokens_out,
                          .latency_ms = call->latency_s * 1000, .cost_usd = call->cost_usd, .ok = call->ok,
                          .error = call->error};
    kerr e = {0};
    if (store_llm_call_add(c->store, &row, &e)) mem_warn(c, &e);
}

int optimize_run(worker *w, const optimize_opts *o, json_t **doc_out, kerr *e) {
    octx c = {.w = w, .o = o, .t0 = opt_now()};
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
                      .progress = verify_progress, .progress_ctx = &c, .no_reports = 1};
    json_t *vdoc = json_pack("{s:s}", "schema", "kopt.verify/1");
    json_object_set_new(doc, "verify", vdoc);
    opt_progress(&c, "compiling and capturing");
    int rc = verify_session_open(w, &vo, vdoc, &c.vs, e);
    if (rc) goto done;
    c.a = verify_session_artifact(c.vs);
    json_object_set(doc, "problem", json_object_get(vdoc, "problem"));
    json_object_set(doc, "device", json_object_get(vdoc, "device"));
    c.store = o->store;
    c.gpu = json_string_value(json_object_get(json_object_get(vdoc, "device"), "name"));
    if (!c.gpu) c.gpu = "unknown";
    mem_run_begin(&c, json_string_value(json_object_get(doc, "problem")), json_object_get(vdoc, "device"));
    for (int r = 0; r < AGENT_NROLES; r++)
        if (c.ag[r] && agent_is_llm(c.ag[r])) agent_llm_set_observer(c.ag[r], llm_observe, &c);

    /* profiler */
    opt_progress(&c, "profiling every launch");
    builtin_profiler_env pe = {.w = w, .profile_module = verify_session_profile_module(c.vs), .module = verify_session_module(c.vs),
                               .args = verify_session_args(c.vs), .reps = 20, .use_ncu = o->use_ncu, .python = o->python};
    agent *prof = builtin_profiler_new(&pe);
    json_t *pctx = json_pack("{s:I}", "artifact", (json_int_t)(uintptr_t)c.a), *profile = NULL;
    rc = agent_act(prof, pctx, &profile, e);
    json_decref(pctx);
    agent_free(prof);
    if (rc) goto done;
    json_object_set(doc, "ceilings", json_object_get(profile, "ceilings"));
    json_object_set(doc, "profile_source", json_object_get(profile, "source"));
    size_t ntriton = 0;
    for (size_t i = 0; i < c.a->nlaunches; i++) ntriton += c.a->launches[i].kind == ART_L_TRITON;

    /* whole-model baselines */
    opt_progress(&c, "timing the model: eager, torch.compile%s", o->max_autotune ? ", max-autotune" : "");
    json_t *vars = json_pack("[{s:s}, {s:s, s:s}]", "kind", "eager", "kind", "compiled", "mode", "default");
    if (o->max_autotune) json_array_append_new(vars, json_pack("{s:s, s:s}", "kind", "compiled", "mode", "max-autotune-no-cudagraphs"));
    json_t *tres = time_variants(&c, vars, 20, e);
    if (!tres) { json_decref(profile); rc = e->code; goto done; }
    const json_t *smp = json_object_get(tres, "samples");
    double eager_ms = stats_median_json(json_array_get(smp, 0)), comp_ms = stats_median_json(json_array_get(smp, 1));
    json_t *model = json_pack("{s:f, s:f}", "eager_ms", eager_ms, "compiled_ms", comp_ms);
    if (o->max_autotune) json_object_set_new(model, "max_autotune_ms", json_real(stats_median_json(json_array_get(smp, 2))));
    json_object_set_new(doc, "model", model);
    json_decref(tres);
    double floor_ms = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(profile, "launches"), i, r)
        floor_ms += json_number_value(json_object_get(r, "time_ms")) * json_number_value(json_object_get(r, "frac_of_ceiling"));
    /* the model's floor: its own inputs and outputs moved once (Inductor's kernels may move
     * more: kernels_floor_ms is theirs, each at the copy bandwidth) */
    json_object_set_new(model, "kernels_floor_ms", json_real(floor_ms));
    double io = inspect_io_bytes(c.a, json_object_get(profile, "launches"));
    double gbps = json_number_value(json_object_get(json_object_get(profile, "ceilings"), "copy_gbps"));
    if (io > 0 && gbps > 0) floor_ms = io / (gbps * 1e9) * 1e3;
    json_object_set_new(model, "io_bytes", json_real(io));
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
        if (json_object_get(row, "ncu")) json_object_set(k, "ncu", json_object_get(row, "ncu"));
        json_array_append_new(kernels, k);
    }

    /* search, kernel by kernel in the analyst's order */
    const json_t *ranked = json_object_get(an, "ranked");
    if (ntriton == 0) {
        json_decref(an);
        json_decref(profile);
        rc = kerr_set(e, KOPT_E_NOTRITON, "torch.compile generated no Triton kernel for this model: nothing to optimize");
        goto done;
    }
    /* regions first: runs of launches a region template replaces together */
    rc = opt_regions(&c, kernels, profile, (int)json_array_size(ranked), e);
    if (rc) { json_decref(an); json_decref(profile); goto done; }
    json_array_foreach(ranked, i, r) {
        if (opt_over_budget(&c)) {
            json_t *k;
            size_t j;
            json_array_foreach(kernels, j, k)
                if (!strcmp(json_string_value(json_object_get(k, "name")), json_string_value(json_object_get(r, "kernel"))) &&
                    strcmp(json_string_value(json_object_get(k, "status")), "in_region"))
                    json_object_set_new(k, "why", json_string("budget exhausted before this kernel was searched"));
            continue;
        }
        json_t *krow = NULL, *k;
        size_t j;
        json_array_foreach(kernels, j, k)
            if (!strcmp(json_string_value(json_object_get(k, "name")), json_string_value(json_object_get(r, "kernel")))) krow = k;
        if (!krow || !strcmp(json_string_value(json_object_get(krow, "status")), "in_region")) continue;
        json_object_del(krow, "why");
        /* the launch's argument descriptions identify the kernel in the store */
        const json_t *prow = json_array_get(json_object_get(profile, "launches"), (size_t)json_integer_value(json_object_get(r, "index")));
        json_object_set(r, "args", json_object_get(prow, "args"));
        rc = opt_search_kernel(&c, r, krow, (int)(json_array_size(ranked) - i), e);
        if (rc) break;
    }
    json_decref(an);
    json_decref(profile);
    if (rc) goto done;

    /* choose, combine, write */
    opt_progress(&c, "re-stitching the winners");
    kerr fe = {0};
    int frc = verify_session_finish(c.vs, &fe);
    if (frc && frc != KOPT_E_CANDIDATE) { *e = fe; rc = frc; goto done; }
    const json_t *replaced = json_object_get(vdoc, "replaced");
    json_object_set(doc, "outcome", json_object_get(vdoc, "outcome"));
    if (json_object_size(replaced) > 0) {
        /* an independent final measurement: baseline module vs optimized module */
        opt_progress(&c, "final measurement: optimized vs baseline module");
        char *opt = fs_join(o->out_dir, "optimized_module.py");
        json_t *g = json_object();
        double sp = 0;
        int mr = verify_session_measure(c.vs, opt, g, &sp, e);
        free(opt);
        if (mr < 0 || !json_object_get(g, "speedup")) {
            if (mr >= 0) rc = kerr_set(e, KOPT_E_WORKER, "final measurement: %s", json_string_value(json_object_get(g, "reason")));
            else rc = e->code;
            json_decref(g);
            goto done;
        }
        json_object_set(model, "baseline_ms", json_object_get(g, "baseline_ms"));
        json_object_set(model, "optimized_ms", json_object_get(g, "candidate_ms"));
        json_object_set(model, "speedup", json_object_get(g, "speedup"));
        json_decref(g);
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
    double used = opt_now() - c.t0;
    json_object_set_new(doc, "budget", json_pack("{s:f, s:i, s:f, s:i, s:f}", "wall_s", opt_budget(&c), "candidates", opt_max_cands(&c),
                                                 "used_wall_s", used, "used_candidates", c.used, "gpu_s", used));
    if (c.compile_threads > 0) {
        json_object_set_new(json_object_get(doc, "budget"), "screen_compile_s", json_real(c.screen_compile_s));
        json_object_set_new(json_object_get(doc, "budget"), "compile_threads", json_integer(c.compile_threads));
    }
    if (c.reused) json_object_set_new(doc, "reused_verdicts", json_integer(c.reused));
    mem_run_end(&c, json_object_get(doc, "model"));
    if (c.store) {
        json_t *usage = NULL;
        kerr se = {0};
        if (!store_llm_usage(c.store, c.run_id, &usage, &se)) json_object_set_new(doc, "llm", usage);
    }
    rc = frc;
    if (rc == KOPT_E_CANDIDATE) rc = 0;   /* the baseline kept is a result, not a failure */
done:
    for (int q = 0; q < AGENT_NROLES; q++) if (c.owned[q]) agent_free(c.ag[q]);
    verify_session_close(c.vs);
    return rc;
}
