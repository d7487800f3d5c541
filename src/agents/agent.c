#include "agents/agent.h"

#include <stdlib.h>
#include <string.h>

static const char *NAMES[AGENT_NROLES] = {"profiler", "analyst", "planner", "executor", "summarizer"};

void agent_free(agent *a) {
    if (!a) return;
    if (a->vt && a->vt->destroy) a->vt->destroy(a);
    free(a->name);
    free(a);
}

const char *agent_role_name(agent_role r) { return (unsigned)r < AGENT_NROLES ? NAMES[r] : "unknown"; }

int agent_role_from_name(const char *s) {
    for (int i = 0; s && i < AGENT_NROLES; i++)
        if (!strcmp(s, NAMES[i])) return i;
    return -1;
}

static const char *const OUTCOMES[] = {"accepted", "refused", "screened-out", "reused", "error", "unknown"};

const char *agent_outcome_name(agent_outcome o) {
    return (unsigned)o <= AGENT_OUT_UNKNOWN ? OUTCOMES[o] : OUTCOMES[AGENT_OUT_UNKNOWN];
}

agent_outcome agent_outcome_parse(const char *s) {
    for (int i = 0; s && i < AGENT_OUT_UNKNOWN; i++)
        if (!strcmp(s, OUTCOMES[i])) return (agent_outcome)i;
    return AGENT_OUT_UNKNOWN;
}

static const char *const CLASSES[] = {"memory-bound",  "near-ceiling", "compute-bound",
                                      "latency-bound", "vendor",       "unknown"};

const char *agent_class_name(agent_class c) {
    return (unsigned)c <= AGENT_CLASS_UNKNOWN ? CLASSES[c] : CLASSES[AGENT_CLASS_UNKNOWN];
}

agent_class agent_class_parse(const char *s) {
    for (int i = 0; s && i < AGENT_CLASS_UNKNOWN; i++)
        if (!strcmp(s, CLASSES[i])) return (agent_class)i;
    return AGENT_CLASS_UNKNOWN;
}
