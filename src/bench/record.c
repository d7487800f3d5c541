/* record.c — a problem's bench result from its store row and document (contract in record.h). */
#include "bench/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static const char *const STATUS_NAMES[] = {"not run", "running", "done", "failed", "timeout"};

const char *bench_status_name(bench_status st) {
    return (unsigned)st < sizeof STATUS_NAMES / sizeof *STATUS_NAMES ? STATUS_NAMES[st] : "?";
}

const char *bench_start_name(bench_start s) {
    return s == BENCH_START_DEFAULT ? "default" : s == BENCH_START_MAX_AUTOTUNE ? "max-autotune" : NULL;
}

char *bench_level_name(int level) {
    return level > 0 ? kasprintf("level%d", level) : kstrdup("flat");
}

/* A finite number, else NAN (missing, null, not a number, NaN/Inf). */
static double br_num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    return isfinite(d) ? d : NAN;
}

/* A positive measurement, else NAN. */
static double br_pos(const json_t *o, const char *key) {
    double d = br_num(o, key);
    return d > 0 ? d : NAN;
}

/* A copy of the string member, or NULL. */
static char *br_str(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? kstrdup(s) : NULL;
}

/* A speedup: an {estimate, ci95_lo, ci95_hi} object, or a bare number (no CI). */
static bench_ci br_ci(const json_t *o) {
    bench_ci c = {NAN, NAN, NAN};
    if (json_is_number(o)) {   /* a bare number: an estimate without interval */
        c.est = json_number_value(o) > 0 ? json_number_value(o) : NAN;
        return c;
    }
    c.est = br_pos(o, "estimate");
    c.lo = br_pos(o, "ci95_lo");
    c.hi = br_pos(o, "ci95_hi");
    if (!isfinite(c.est)) c.lo = c.hi = NAN;
    return c;
}

/* A speedup's estimate times num / den, without a CI (a speedup derived from times). */
static bench_ci br_scaled(bench_ci c, double num, double den) {
    bench_ci r = {NAN, NAN, NAN};
    if (isfinite(c.est) && isfinite(num) && isfinite(den) && den > 0) r.est = c.est * num / den;
    return r;
}

void bench_record_init(bench_record *r, const char *rel, const char *sha, int level, double budget_s) {
    memset(r, 0, sizeof *r);
    r->rel = kstrdup(rel ? rel : "");
    r->sha = sha ? kstrdup(sha) : NULL;
    r->level = level;
    r->level_name = bench_level_name(level);
    r->status = BENCH_NOT_RUN;
    r->exit_code = r->gpu_index = -1;
    r->wall_s = r->disk_bytes = NAN;
    r->budget_s = budget_s;
    r->eager_ms = r->default_ms = r->max_autotune_ms = r->kopt_ms = r->floor_ms = NAN;
    r->vs_default = r->vs_max_autotune = (bench_ci){NAN, NAN, NAN};
    r->as_called_vs_default = r->as_called_vs_max_autotune = (bench_ci){NAN, NAN, NAN};
    r->setup_s = r->search_s = r->final_s = r->used_wall_s = NAN;
    r->candidates = r->gated = -1;
    for (int g = 0; g < 4; g++) r->gate_s[g] = NAN, r->refused[g] = -1;
    r->spent_before_search = -1;
    r->floor_ok = -1;
    r->peak_gpu_bytes = r->context_bytes = r->working_set_bytes = r->f64_peak_gpu_bytes = NAN;
    r->peak_step_bytes = r->growth_bytes = NAN;
    r->eager_peak_gpu_bytes = r->inputs_peak_gpu_bytes = NAN;
    r->setup_outside_s = NAN;
}

/* Frees the setup steps (the record then has none). */
static void br_steps_free(bench_record *r) {
    for (size_t i = 0; i < r->nsetup_steps; i++) free(r->setup_steps[i].op);
    free(r->setup_steps);
    r->setup_steps = NULL;
    r->nsetup_steps = 0;
}

void bench_record_clear(bench_record *r) {
    if (!r) return;
    char **strs[] = {&r->rel, &r->sha, &r->level_name, &r->gpu, &r->owner, &r->started_at, &r->ended_at,
                     &r->device, &r->outcome, &r->floor_gap, &r->floor_below, &r->ma_error, &r->error_kind, &r->error_message,
                     &r->peak_step, &r->growth_step, &r->replaced, &r->final_pick};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
    br_steps_free(r);
}

/* The setup's seconds per worker op (record.h) from resources.setup_by_step: {op: {"seconds":
 * s, "calls": n}} (a plain number of seconds is taken too); entries without a finite s >= 0
 * are skipped. */
static void br_read_setup(bench_record *r, const json_t *res) {
    br_steps_free(r);
    r->setup_outside_s = br_num(res, "setup_outside_requests_s");
    const json_t *by = json_object_get(res, "setup_by_step");
    if (!json_is_object(by)) return;
    r->setup_steps = kcalloc(1 + json_object_size(by), sizeof *r->setup_steps);
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)by, key, val) {
        const json_t *sv = json_is_object(val) ? json_object_get(val, "seconds") : val;
        double sec = json_is_number(sv) ? json_number_value(sv) : NAN;
        if (!isfinite(sec) || sec < 0 || r->nsetup_steps >= BENCH_MAX_STEPS) continue;
        r->setup_steps[r->nsetup_steps++] = (bench_step_s){kstrdup(key), sec};
    }
}

/* Where the memory went (record.h): from the steps' allocator peaks and the memory outside the
 * allocator at their ends, in the order the worker first ran them. The largest peak is looked
 * for among the main phase's steps (plain op names): the peak the report's ratio is made of;
 * "op/phase" steps (the eager model, float64, the ceilings, the inputs) are phases of their own. */
static void br_read_steps(bench_record *r, const json_t *res) {
    const json_t *pk = json_object_get(res, "peak_by_step"), *out = json_object_get(res, "outside_allocator_by_step");
    const char *key;
    const json_t *val;
    double best = 0, lo = INFINITY, hi = 0;
    free(r->peak_step);
    free(r->growth_step);
    r->peak_step = r->growth_step = NULL;
    r->peak_step_bytes = r->growth_bytes = NAN;
    json_object_foreach((json_t *)pk, key, val) {
        double b = json_number_value(val);
        if (json_is_number(val) && b > best && !strchr(key, '/')) {
            best = b;
            free(r->peak_step);
            r->peak_step = kstrdup(key);
        }
    }
    if (r->peak_step) r->peak_step_bytes = best;
    json_object_foreach((json_t *)out, key, val) {
        if (!json_is_number(val)) continue;
        double b = json_number_value(val);
        if (b < lo) lo = b;
        if (b > hi) hi = b;
    }
    if (!(hi > lo)) return;
    json_object_foreach((json_t *)out, key, val) {
        if (json_is_number(val) && json_number_value(val) >= lo + 0.9 * (hi - lo)) {
            r->growth_step = kstrdup(key);
            r->growth_bytes = hi - lo;
            return;
        }
    }
}

/* The measured times below their own floor (model.floor_check.below, record.h's floor_below). */
static void br_read_below(bench_record *r, const json_t *fc) {
    free(r->floor_below);
    r->floor_below = NULL;
    kbuf b = KBUF_INIT;
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(fc, "below"), i, e) {
        const char *what = json_string_value(json_object_get(e, "what")), *kind = json_string_value(json_object_get(e, "kind"));
        double t = br_pos(e, "time_ms"), f = br_pos(e, "floor_ms");
        kbuf_printf(&b, "%s%s (%s) %.4g ms, %.2fx its floor %.4g ms", b.len ? "; " : "", what ? what : "?", kind ? kind : "?", t,
                    f > 0 ? t / f : NAN, f);
    }
    if (b.len) r->floor_below = kstrdup(kbuf_str(&b));
    kbuf_free(&b);
}

/* The model times, the start and the two speedups with their fallbacks (record.h). */
static void br_read_model(bench_record *r, const json_t *m) {
    r->eager_ms = br_pos(m, "eager_ms");
    r->default_ms = br_pos(m, "compiled_ms");
    if (!isfinite(r->default_ms)) r->default_ms = br_pos(m, "baseline_ms");
    r->max_autotune_ms = br_pos(m, "max_autotune_ms");
    r->kopt_ms = br_pos(m, "optimized_ms");
    r->floor_ms = br_pos(m, "floor_ms");
    const json_t *fok = json_object_get(json_object_get(m, "floor_check"), "ok");
    r->floor_ok = json_is_boolean(fok) ? json_is_true(fok) : -1;
    br_read_below(r, json_object_get(m, "floor_check"));
    const char *start = json_string_value(json_object_get(m, "start"));
    r->start = !start ? BENCH_START_UNKNOWN
               : !strcmp(start, "default") ? BENCH_START_DEFAULT
               : !strcmp(start, "max-autotune") ? BENCH_START_MAX_AUTOTUNE : BENCH_START_UNKNOWN;
    bench_ci sp = br_ci(json_object_get(m, "speedup"));
    int from_ma = r->start == BENCH_START_MAX_AUTOTUNE;
    const json_t *vd = json_object_get(m, "speedup_vs_default"), *vm = json_object_get(m, "speedup_vs_max_autotune");
    r->vs_default = vd && !json_is_null(vd) ? br_ci(vd) : from_ma ? br_scaled(sp, r->default_ms, r->max_autotune_ms) : sp;
    r->vs_max_autotune = vm && !json_is_null(vm) ? br_ci(vm) : from_ma ? sp : br_scaled(sp, r->max_autotune_ms, r->default_ms);
    r->as_called_vs_default = br_ci(json_object_get(m, "as_called_vs_default"));
    r->as_called_vs_max_autotune = br_ci(json_object_get(m, "as_called_vs_max_autotune"));
}

/* The gates' seconds of the verify session's candidates (bench_record.gate_s, gated). */
static void br_read_gates(bench_record *r, const json_t *verify) {
    const json_t *cands = json_object_get(verify, "candidates");
    if (!json_is_array(cands)) return;
    r->gated = 0;
    for (int n = 0; n < 4; n++) r->gate_s[n] = NAN; /* a document read again is not counted twice */
    size_t i, j;
    const json_t *c, *g;
    json_array_foreach(cands, i, c) {
        const json_t *gates = json_object_get(c, "gates");
        if (json_array_size(gates) >= 2) r->gated++;
        json_array_foreach(gates, j, g) {
            json_int_t n = json_integer_value(json_object_get(g, "gate"));
            double s = br_num(g, "seconds");
            if (n < 1 || n > 4 || !isfinite(s) || s < 0) continue;
            r->gate_s[n - 1] = isfinite(r->gate_s[n - 1]) ? r->gate_s[n - 1] + s : s;
        }
    }
}

/* The search's verdicts (bench_record.refused, replaced) from the report's kernels table. */
static void br_read_kernels(bench_record *r, const json_t *kernels) {
    if (!json_is_array(kernels)) return;
    free(r->replaced);
    r->replaced = NULL;
    for (int g = 0; g < 4; g++) r->refused[g] = 0;
    kbuf b = KBUF_INIT;
    size_t i;
    const json_t *k;
    json_array_foreach(kernels, i, k) {
        const json_t *rg = json_object_get(k, "refused_by_gate");
        for (int g = 0; g < 4; g++) {
            char key[2] = {(char)('1' + g), '\0'};
            json_int_t n = json_integer_value(json_object_get(rg, key));
            if (n > 0) r->refused[g] += n;
        }
        const char *st = json_string_value(json_object_get(k, "status"));
        const char *name = json_string_value(json_object_get(k, "name"));
        if (!st || strcmp(st, "optimized") || !name) continue;
        const char *change = json_string_value(json_object_get(k, "change"));
        kbuf_printf(&b, "%s%s: %s", b.len ? "; " : "", name, change ? change : "replaced");
    }
    if (b.len) r->replaced = kstrdup(kbuf_str(&b));
    kbuf_free(&b);
}

void bench_record_read_doc(bench_record *r, const json_t *doc) {
    if (!json_is_object(doc)) return;
    free(r->device);
    free(r->outcome);
    free(r->floor_gap);
    free(r->ma_error);
    r->device = br_str(json_object_get(doc, "device"), "name");
    r->outcome = br_str(doc, "outcome");
    r->floor_gap = br_str(json_object_get(json_object_get(doc, "model"), "floor_gap"), "reason");
    r->ma_error = br_str(json_object_get(doc, "model"), "max_autotune_error");
    br_read_model(r, json_object_get(doc, "model"));
    br_read_kernels(r, json_object_get(doc, "kernels"));
    free(r->final_pick);
    r->final_pick = br_str(json_object_get(json_object_get(doc, "model"), "final_pick"), "module");
    const json_t *b = json_object_get(doc, "budget");
    r->setup_s = br_num(b, "setup_s");
    r->search_s = br_num(b, "search_s");
    r->final_s = br_num(b, "final_s");
    r->used_wall_s = br_num(b, "used_wall_s");
    const json_t *c = json_object_get(b, "used_candidates");
    r->candidates = json_is_integer(c) && json_integer_value(c) >= 0 ? (int64_t)json_integer_value(c) : -1;
    br_read_gates(r, json_object_get(doc, "verify"));
    const json_t *sbs = json_object_get(b, "spent_before_search");
    r->spent_before_search = json_is_boolean(sbs) ? json_is_true(sbs) : -1;
    const json_t *res = json_object_get(doc, "resources");
    r->peak_gpu_bytes = br_pos(res, "peak_gpu_bytes");
    r->context_bytes = br_pos(res, "context_bytes");
    r->working_set_bytes = br_pos(res, "working_set_bytes");
    r->f64_peak_gpu_bytes = br_pos(res, "f64_peak_gpu_bytes");
    r->eager_peak_gpu_bytes = br_pos(res, "eager_peak_gpu_bytes");
    r->inputs_peak_gpu_bytes = br_pos(res, "inputs_peak_gpu_bytes");
    br_read_steps(r, res);
    br_read_setup(r, res);
    if (!isfinite(r->disk_bytes)) r->disk_bytes = br_num(res, "disk_bytes");
    const json_t *err = json_object_get(doc, "error");
    if (json_is_object(err)) {
        free(r->error_kind);
        free(r->error_message);
        r->error_kind = br_str(err, "kind");
        r->error_message = br_str(err, "message");
    }
}

/* The record's status of a store status. */
static bench_status br_status(store_bench_status s) {
    switch (s) {
    case STORE_BENCH_RUNNING: return BENCH_RUNNING;
    case STORE_BENCH_DONE: return BENCH_DONE;
    case STORE_BENCH_TIMEOUT: return BENCH_TIMEOUT;
    case STORE_BENCH_FAILED:
    default: return BENCH_FAILED;
    }
}

void bench_record_from_row(bench_record *r, const store_bench_row *row) {
    bench_record_init(r, row->problem_rel, row->problem_sha, row->level, row->budget_s);
    r->gpu = row->gpu ? kstrdup(row->gpu) : NULL;
    r->owner = row->owner ? kstrdup(row->owner) : NULL;
    r->started_at = row->started_at ? kstrdup(row->started_at) : NULL;
    r->ended_at = row->ended_at ? kstrdup(row->ended_at) : NULL;
    r->status = br_status(row->status);
    r->exit_code = row->exit_code;
    r->gpu_index = row->gpu_index;
    r->wall_s = row->wall_s;
    r->disk_bytes = row->disk_bytes >= 0 ? (double)row->disk_bytes : NAN;
    if (row->doc_json) {
        json_t *doc = json_loads(row->doc_json, JSON_DECODE_ANY, NULL);
        bench_record_read_doc(r, doc);
        json_decref(doc);
    }
}

double bench_record_floor_ratio(const bench_record *r) {
    return isfinite(r->kopt_ms) && isfinite(r->floor_ms) && r->floor_ms > 0 ? r->kopt_ms / r->floor_ms : NAN;
}

double bench_record_peak_ratio(const bench_record *r) {
    return isfinite(r->peak_gpu_bytes) && isfinite(r->working_set_bytes) && r->working_set_bytes > 0
               ? r->peak_gpu_bytes / r->working_set_bytes
               : NAN;
}

int bench_record_within_budget(const bench_record *r) {
    if (!isfinite(r->wall_s) || !isfinite(r->budget_s)) return -1;
    return r->wall_s <= r->budget_s * 1.1 + 15.0;
}
