/* builtin_analyst.c — the analyst role. Classifies each launch from the profiler's rows and
 * ranks Triton kernels by the model time there is to gain:
 *   vendor         a cuBLAS/cuDNN call: kept as it is, never a target;
 *   latency-bound  under 5 us: launch overhead dominates, nothing to win by rewriting;
 *   near-ceiling   >= 80% of the measured floor (bytes at the copy bandwidth);
 *   memory-bound   otherwise (Triton kernels of Inductor are byte-bound: their floor is bytes).
 *   gain_ms = time x (1 - fraction of ceiling): the time above the floor.
 * A kernel the floor check found below its own floor (ctx "count_wrong": its counted bytes are
 * more than it moves, e.g. an argument read only in part, or part of them came from the L2) has
 * no floor of its own to go by: it is memory-bound, its gain the model's relative gap to the model
 * floor applied to its time (0 without "model_floor_ms"), never "near its ceiling" because of a
 * count that is too high.
 * ctx {"launches":[rows], "model_ms": x, "model_floor_ms"?: f, "count_wrong"?: [names]}
 *   -> {"ranked":[...targets by gain...], "all":[...]}.
 * Targets: memory-bound kernels first, by gain; then near-ceiling kernels still under 95% of
 * the floor (the measured copy bandwidth is a practical ceiling, and a kernel at 82% of it
 * can still give 15%); kernels at >= 95% are not searched: that is what "near its ceiling"
 * stops. Every target's gain must be at least 1% of the model's time.
 * A kernel launched several times is ranked once, with its times summed.
 * The rows are read once into typed entries (an_row, the class an agent_class); JSON is written
 * only for the answer. */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "util/buf.h"

/* One kernel as the analyst ranks it: its first launch's row, the times of all its launches. */
typedef struct an_row {
    const char *name;          /* borrowed from the context */
    const json_t *kernel_kind; /* borrowed; copied into the answer as it is */
    agent_class cls;
    double time_ms, share, frac, gain_ms;
    json_int_t index;          /* the first launch's row in the profile */
    int count_wrong;           /* named by the floor check: its counted bytes are more than it moves */
} an_row;

/* gap: the model's relative gap to its floor, used for a kernel whose count is wrong */
static agent_class classify(int vendor, double t, double f, int count_wrong, double gap, double *gain) {
    *gain = t * (1 - (f < 1 ? f : 1));
    if (vendor) { *gain = 0; return AGENT_CLASS_VENDOR; }
    if (t < 0.005) return AGENT_CLASS_LATENCY;
    if (count_wrong) { *gain = t * gap; return AGENT_CLASS_MEMORY; }
    if (f >= 0.8) return AGENT_CLASS_NEAR_CEILING;
    return AGENT_CLASS_MEMORY;
}

static int named_in(const json_t *names, const char *name) {
    size_t i;
    json_t *x;
    json_array_foreach(names, i, x) if (name && json_is_string(x) && !strcmp(json_string_value(x), name)) return 1;
    return 0;
}

/* The rows of `launches` into v (n entries; a kernel's repeated launches added up); `wrong`: the
 * names whose count is wrong, `gap` the model's relative gap to its floor. */
static size_t rows_read(const json_t *launches, const json_t *wrong, double gap, an_row *v) {
    size_t n = 0, i;
    json_t *r;
    json_array_foreach(launches, i, r) {
        const char *name = json_string_value(json_object_get(r, "name"));
        const char *kind = json_string_value(json_object_get(r, "kind"));
        double t = json_number_value(json_object_get(r, "time_ms")), gain;
        double f = json_number_value(json_object_get(r, "frac_of_ceiling"));
        int cw = named_in(wrong, name);
        agent_class cls = classify(kind && !strcmp(kind, "vendor"), t, f, cw, gap, &gain);
        an_row *prev = NULL;
        for (size_t j = 0; j < n; j++)
            if (name && v[j].name && !strcmp(v[j].name, name)) prev = &v[j];
        if (prev) {   /* repeated launches of one kernel: add up */
            prev->time_ms += t;
            prev->gain_ms += gain;
            continue;
        }
        v[n++] = (an_row){name, json_object_get(r, "kernel_kind"), cls, t, json_number_value(json_object_get(r, "share")), f, gain,
                          json_integer_value(json_object_get(r, "index")), cw && cls == AGENT_CLASS_MEMORY};
    }
    return n;
}

static json_t *row_json(const an_row *r) {
    char why[256];
    switch (r->cls) {
    case AGENT_CLASS_VENDOR: snprintf(why, sizeof why, "vendor-library call: kept as it is"); break;
    case AGENT_CLASS_LATENCY: snprintf(why, sizeof why, "%.1f us: launch-latency bound", 1e3 * r->time_ms); break;
    case AGENT_CLASS_NEAR_CEILING:
        snprintf(why, sizeof why, "near its ceiling (%.0f%% of the memory-traffic floor)", 100 * r->frac);
        break;
    default:
        if (r->count_wrong)
            snprintf(why, sizeof why, "faster than its counted bytes allow (the count is more than it moves): %.4f ms "
                     "above the floor at the model's gap to its own", r->gain_ms);
        else
            snprintf(why, sizeof why, "%.0f%% of the memory-traffic floor: %.4f ms above it", 100 * r->frac, r->gain_ms);
    }
    return json_pack("{s:s?, s:s, s:O?, s:f, s:f, s:f, s:f, s:s, s:I}", "kernel", r->name, "class", agent_class_name(r->cls),
                     "kernel_kind", r->kernel_kind, "time_ms", r->time_ms, "share", r->share, "frac_of_ceiling", r->frac,
                     "gain_ms", r->gain_ms, "why", why, "index", r->index);
}

static int analyst_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    (void)self;
    (void)e;
    const json_t *launches = json_object_get(ctx, "launches");
    double model = json_number_value(json_object_get(ctx, "model_ms"));
    double mfloor = json_number_value(json_object_get(ctx, "model_floor_ms"));
    double gap = model > 0 && mfloor > 0 && mfloor < model ? 1 - mfloor / model : 0;
    size_t cap = json_array_size(launches);
    an_row *rows = cap ? kcalloc(cap, sizeof *rows) : NULL;
    const an_row **ranked = cap ? kcalloc(cap, sizeof *ranked) : NULL;
    size_t n = rows_read(launches, json_object_get(ctx, "count_wrong"), gap, rows), nr = 0;
    /* targets: memory-bound kernels by gain, then near-ceiling ones under 95%, by gain */
    for (int pass = 0; pass < 2; pass++) {
        size_t first = nr;
        for (size_t i = 0; i < n; i++) {
            const an_row *r = &rows[i];
            if (r->cls != (pass == 0 ? AGENT_CLASS_MEMORY : AGENT_CLASS_NEAR_CEILING)) continue;
            if (pass == 1 && r->frac >= 0.95) continue;
            if (model > 0 && r->gain_ms < 0.01 * model) continue;
            size_t pos = first;
            while (pos < nr && ranked[pos]->gain_ms >= r->gain_ms) pos++;
            memmove(ranked + pos + 1, ranked + pos, (nr - pos) * sizeof *ranked);
            ranked[pos] = r;
            nr++;
        }
    }
    json_t *all = json_array(), *rk = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(all, row_json(&rows[i]));
    for (size_t i = 0; i < nr; i++) json_array_append(rk, json_array_get(all, (size_t)(ranked[i] - rows)));
    *out = json_pack("{s:o, s:o}", "ranked", rk, "all", all);
    free(ranked);
    free(rows);
    return 0;
}

static const agent_vtable ANALYST_VT = {analyst_act, NULL, NULL};

agent *builtin_analyst_new(void) { return builtin_agent(AGENT_ANALYST, &ANALYST_VT, NULL); }
