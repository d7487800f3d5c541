/* builtin_analyst.c — the analyst role. Classifies each launch from the profiler's rows and
 * ranks Triton kernels by the model time there is to gain:
 *   vendor         a cuBLAS/cuDNN call: kept as it is, never a target;
 *   latency-bound  under 5 us: launch overhead dominates, nothing to win by rewriting;
 *   near-ceiling   >= 80% of the measured floor (bytes at the copy bandwidth);
 *   memory-bound   otherwise (Triton kernels of Inductor are byte-bound: their floor is bytes).
 *   gain_ms = time x (1 - fraction of ceiling): the time above the floor.
 * ctx {"launches":[rows], "model_ms": x} -> {"ranked":[...targets by gain...], "all":[...]}.
 * Targets: memory-bound kernels first, by gain; then near-ceiling kernels still under 95% of
 * the floor (the measured copy bandwidth is a practical ceiling, and a kernel at 82% of it
 * can still give 15%); kernels at >= 95% are not searched: that is what "near its ceiling"
 * stops. Every target's gain must be at least 1% of the model's time.
 * A kernel launched several times is ranked once, with its times summed. */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "util/buf.h"

static const char *classify(const json_t *r, double *gain) {
    double t = json_number_value(json_object_get(r, "time_ms"));
    double f = json_number_value(json_object_get(r, "frac_of_ceiling"));
    *gain = t * (1 - (f < 1 ? f : 1));
    const char *kind = json_string_value(json_object_get(r, "kind"));
    if (kind && !strcmp(kind, "vendor")) { *gain = 0; return CLASS_VENDOR; }
    if (t < 0.005) return CLASS_LATENCY;
    if (f >= 0.8) return CLASS_NEAR_CEILING;
    return CLASS_MEMORY;
}

static int analyst_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    (void)self;
    (void)e;
    const json_t *rows = json_object_get(ctx, "launches");
    double model = json_number_value(json_object_get(ctx, "model_ms"));
    json_t *all = json_array(), *ranked = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        double gain;
        const char *cls = classify(r, &gain);
        const char *name = json_string_value(json_object_get(r, "name"));
        json_t *prev = NULL;
        size_t j;
        json_t *q;
        json_array_foreach(all, j, q)
            if (!strcmp(json_string_value(json_object_get(q, "kernel")), name)) prev = q;
        if (prev) {   /* repeated launches of one kernel: add up */
            json_object_set_new(prev, "time_ms", json_real(json_number_value(json_object_get(prev, "time_ms")) +
                                                           json_number_value(json_object_get(r, "time_ms"))));
            json_object_set_new(prev, "gain_ms", json_real(json_number_value(json_object_get(prev, "gain_ms")) + gain));
            continue;
        }
        char why[256];
        double f = json_number_value(json_object_get(r, "frac_of_ceiling"));
        if (!strcmp(cls, CLASS_VENDOR)) snprintf(why, sizeof why, "vendor-library call: kept as it is");
        else if (!strcmp(cls, CLASS_LATENCY)) snprintf(why, sizeof why, "%.1f us: launch-latency bound", 1e3 * json_number_value(json_object_get(r, "time_ms")));
        else if (!strcmp(cls, CLASS_NEAR_CEILING)) snprintf(why, sizeof why, "near its ceiling (%.0f%% of the memory-traffic floor)", 100 * f);
        else snprintf(why, sizeof why, "%.0f%% of the memory-traffic floor: %.4f ms above it", 100 * f, gain);
        json_array_append_new(all, json_pack("{s:s, s:s, s:O?, s:f, s:f, s:f, s:f, s:s, s:I}", "kernel", name, "class", cls,
                                             "kernel_kind", json_object_get(r, "kernel_kind"), "time_ms",
                                             json_number_value(json_object_get(r, "time_ms")), "share",
                                             json_number_value(json_object_get(r, "share")), "frac_of_ceiling", f,
                                             "gain_ms", gain, "why", why, "index",
                                             json_integer_value(json_object_get(r, "index"))));
    }
    /* targets: memory-bound kernels by gain, then near-ceiling ones under 95%, by gain */
    for (int pass = 0; pass < 2; pass++) {
        size_t first = json_array_size(ranked);
        json_array_foreach(all, i, r) {
            const char *cls = json_string_value(json_object_get(r, "class"));
            if (strcmp(cls, pass == 0 ? CLASS_MEMORY : CLASS_NEAR_CEILING)) continue;
            if (pass == 1 && json_number_value(json_object_get(r, "frac_of_ceiling")) >= 0.95) continue;
            double g = json_number_value(json_object_get(r, "gain_ms"));
            if (model > 0 && g < 0.01 * model) continue;
            size_t pos = first;
            while (pos < json_array_size(ranked) &&
                   json_number_value(json_object_get(json_array_get(ranked, pos), "gain_ms")) >= g)
                pos++;
            json_array_insert(ranked, pos, r);
        }
    }
    *out = json_pack("{s:o, s:o}", "ranked", ranked, "all", all);
    return 0;
}

static const agent_vtable ANALYST_VT = {analyst_act, NULL, NULL};

agent *builtin_analyst_new(void) { return builtin_agent(AGENT_ANALYST, &ANALYST_VT, NULL); }
