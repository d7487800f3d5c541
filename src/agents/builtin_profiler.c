/* builtin_profiler.c — the profiler role: GPU time, bytes and the position under the measured
 * ceilings of every launch, from the worker's CUDA-event timing of the instrumented module
 * (PROTOCOL.md `profile`, `ceilings`). The launch table needs the parsed artifact, which the
 * caller passes as an opaque handle in ctx["artifact"] (a pointer it owns; in-process only).
 * Returns {"ceilings":{...}, "launches":[rows], "sum_launch_ms": x, "call": {...}, "source"}.
 * Nsight Compute is not used yet: the event timing is the profile (see docs). */
#include <stdint.h>
#include <stdlib.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "profile/inspect.h"
#include "util/buf.h"

typedef struct {
    builtin_profiler_env env;
} prof_impl;

static int prof_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    prof_impl *p = self->impl;
    const artifact *a = (const artifact *)(uintptr_t)json_integer_value(json_object_get(ctx, "artifact"));
    if (!a) return kerr_set(e, KOPT_E_INTERNAL, "profiler: no artifact in the context");
    json_t *raw = NULL, *prof = NULL;
    int rc = worker_call(p->env.w, "ceilings", json_object(), 300, &raw, e);
    if (rc) return kerr_wrap(e, "measuring ceilings");
    json_t *ceil = inspect_ceilings(raw);
    json_decref(raw);
    rc = worker_call(p->env.w, "profile",
                     json_pack("{s:s, s:s, s:i, s:i}", "module", p->env.profile_module, "args", p->env.args, "reps",
                               p->env.reps > 0 ? p->env.reps : 20, "warmup", 3),
                     600, &prof, e);
    if (rc) { json_decref(ceil); return kerr_wrap(e, "profiling"); }
    if (json_array_size(json_object_get(prof, "launches")) != a->nlaunches) {
        json_decref(ceil);
        json_decref(prof);
        return kerr_set(e, KOPT_E_WORKER, "profile returned a different number of launches than the module has");
    }
    double sum = 0;
    json_t *rows = inspect_launch_table(a, prof, ceil, &sum);
    *out = json_pack("{s:o, s:o, s:f, s:o, s:s}", "ceilings", ceil, "launches", rows, "sum_launch_ms", sum, "call",
                     inspect_time_summary(json_object_get(prof, "total")), "source",
                     "CUDA events per launch (ncu not used)");
    json_decref(prof);
    return 0;
}

static void prof_destroy(agent *self) { free(self->impl); }

static const agent_vtable PROF_VT = {prof_act, NULL, prof_destroy};

agent *builtin_profiler_new(const builtin_profiler_env *env) {
    prof_impl *p = kcalloc(1, sizeof *p);
    p->env = *env;
    return builtin_agent(AGENT_PROFILER, &PROF_VT, p);
}
