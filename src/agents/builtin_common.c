/* builtin_common.c — constructor plumbing shared by the built-in agents. */
#include <stdlib.h>

#include "agents/builtin.h"
#include "util/buf.h"

agent *builtin_new(agent_role role) {
    switch (role) {
    case AGENT_ANALYST: return builtin_analyst_new();
    case AGENT_PLANNER: return builtin_planner_new();
    case AGENT_EXECUTOR: return builtin_executor_new();
    case AGENT_SUMMARIZER: return builtin_summarizer_new();
    default: return NULL;
    }
}

agent *builtin_agent(agent_role role, const agent_vtable *vt, void *impl) {
    agent *a = kcalloc(1, sizeof *a);
    a->role = role;
    a->name = kstrdup("builtin");
    a->vt = vt;
    a->impl = impl;
    return a;
}
