/* builtin_summarizer.c — the summarizer role: one line of experience per attempt, for the
 * store and the report. ctx {"attempt":{kernel, kernel_kind, direction, label, outcome, gate,
 * reason, speedup}} -> {"experience": "...", "tags": [kernel_kind, direction, outcome]}. */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "util/buf.h"

static int summarizer_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    (void)self;
    (void)e;
    const json_t *a = json_object_get(ctx, "attempt");
    const char *kind = json_string_value(json_object_get(a, "kernel_kind"));
    const char *dir = json_string_value(json_object_get(a, "direction"));
    const char *label = json_string_value(json_object_get(a, "label"));
    const char *outcome = json_string_value(json_object_get(a, "outcome"));
    const char *reason = json_string_value(json_object_get(a, "reason"));
    kbuf b = KBUF_INIT;
    kbuf_printf(&b, "%s on a %s kernel (%s): ", dir ? dir : "?", kind ? kind : "?", label ? label : "?");
    agent_outcome o = agent_outcome_parse(outcome);
    if (o == AGENT_OUT_ACCEPTED)
        kbuf_printf(&b, "accepted, %.3fx at model level", json_number_value(json_object_get(a, "speedup")));
    else if (o == AGENT_OUT_SCREENED_OUT) {
        /* a screened-out candidate may have been faster and left unsent: the reason says why */
        double k = json_number_value(json_object_get(a, "kernel_ms")), orig = json_number_value(json_object_get(a, "orig_ms"));
        if (reason)
            kbuf_printf(&b, "not sent to the gates: %.200s (kernel-level screen %.4f ms vs %.4f ms)", reason, k, orig);
        else
            kbuf_printf(&b, "not faster than the original in the kernel-level screen (%.4f ms vs %.4f ms)", k, orig);
    }
    else
        kbuf_printf(&b, "refused at gate %d: %.200s", (int)json_integer_value(json_object_get(a, "gate")), reason ? reason : "?");
    *out = json_pack("{s:s, s:[s?, s?, s?]}", "experience", kbuf_str(&b), "tags", kind, dir, outcome);
    kbuf_free(&b);
    return 0;
}

static const agent_vtable SUMMARIZER_VT = {summarizer_act, NULL, NULL};

agent *builtin_summarizer_new(void) { return builtin_agent(AGENT_SUMMARIZER, &SUMMARIZER_VT, NULL); }
