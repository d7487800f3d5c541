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
