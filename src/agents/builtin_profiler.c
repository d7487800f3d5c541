/* builtin_profiler.c — the profiler role: GPU time, bytes and the position under the measured
 * ceilings of every launch, from the worker's CUDA-event timing of the instrumented module
 * (PROTOCOL.md `profile`, `ceilings`). The launch table needs the parsed artifact, which the
 * caller passes as an opaque handle in ctx["artifact"] (a pointer it owns; in-process only).
 * Returns {"ceilings":{...}, "launches":[rows], "sum_launch_ms": x, "call": {...}, "source",
 * "configs": {kernel: the launch configuration it settled on}} (configs as the worker reports
 * them, read with optimize/tuned.h; {} when it reports none).
 * With use_ncu, Nsight Compute's counters (DRAM and SM throughput, occupancy, registers) are
 * added to each Triton row when `ncu` is usable (profile/ncu.h); when it is not, the rows keep
 * their event timing and "source" says why. */
#include <stdint.h>
#include <stdlib.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "profile/inspect.h"
#include "profile/ncu.h"
#include "util/buf.h"

typedef struct {
    builtin_profiler_env env;
} prof_impl;

static int prof_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    prof_impl *p = self->impl;
    const artifact *a = (const artifact *)(uintptr_t)json_integer_value(json_object_get(ctx, "artifact"));
    if (!a) return kerr_set(e, KOPT_E_INTERNAL, "profiler: no artifact in the context");
    json_t *raw = NULL, *prof = NULL;
    /* a memory phase of its own: its buffers are transient, not part of judging the model */
    int rc = worker_call(p->env.w, "ceilings", json_pack("{s:s}", "phase", "ceilings"), 300, &raw, e);
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
    char *source = kstrdup("CUDA events per launch");
    if (p->env.use_ncu) {
        json_t *ncu = NULL;
        kerr ne = {0};
        if (!ncu_available()) {
            free(source);
            source = kstrdup("CUDA events per launch (ncu is not available: no counters)");
        } else if (ncu_profile(p->env.python, p->env.module, p->env.args, 600, &ncu, &ne)) {
            free(source);
            source = kasprintf("CUDA events per launch (ncu failed: %s)", ne.msg);
        } else {
            size_t i;
            json_t *r;
            int hit = 0;
            json_array_foreach(rows, i, r) {
                json_t *m = json_object_get(ncu, json_string_value(json_object_get(r, "name")));
                if (m) { json_object_set(r, "ncu", m); hit++; }
            }
            free(source);
            source = kasprintf("CUDA events per launch + Nsight Compute counters (%d kernels)", hit);
            json_decref(ncu);
        }
    }
    json_t *configs = json_object_get(prof, "configs");
    *out = json_pack("{s:o, s:o, s:f, s:o, s:s, s:o}", "ceilings", ceil, "launches", rows, "sum_launch_ms", sum, "call",
                     inspect_time_summary(json_object_get(prof, "total")), "source", source, "configs",
                     json_is_object(configs) ? json_incref(configs) : json_object());
    free(source);
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
