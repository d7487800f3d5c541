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

/* An enum's name from its table (the last entry, "unknown", for out-of-range values), and the
 * index a name has among the first `unknown` entries (`unknown` when none). */
static const char *enum_name(const char *const *names, unsigned unknown, unsigned v) {
    return names[v <= unknown ? v : unknown];
}
static unsigned enum_parse(const char *const *names, unsigned unknown, const char *s) {
    for (unsigned i = 0; s && i < unknown; i++)
        if (!strcmp(s, names[i])) return i;
    return unknown;
}

static const char *const OUTCOMES[] = {"accepted", "refused", "screened-out", "reused", "error", "unknown"};
static const char *const CLASSES[] = {"memory-bound",  "near-ceiling", "compute-bound",
                                      "latency-bound", "vendor",       "unknown"};

const char *agent_outcome_name(agent_outcome o) { return enum_name(OUTCOMES, AGENT_OUT_UNKNOWN, (unsigned)o); }
agent_outcome agent_outcome_parse(const char *s) { return (agent_outcome)enum_parse(OUTCOMES, AGENT_OUT_UNKNOWN, s); }
const char *agent_class_name(agent_class c) { return enum_name(CLASSES, AGENT_CLASS_UNKNOWN, (unsigned)c); }
agent_class agent_class_parse(const char *s) { return (agent_class)enum_parse(CLASSES, AGENT_CLASS_UNKNOWN, s); }
