/* builtin_common.c — constructor plumbing and kernel-context predicates shared by the built-in agents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int builtin_has_op(const json_t *arr, const char *s) {
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (json_string_value(v) && strstr(json_string_value(v), s)) return 1;
    return 0;
}

int builtin_params_are(const json_t *k, const char *const *want, size_t n) {
    const json_t *rt = json_object_get(k, "runtime_params");
    if (json_array_size(rt) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = json_string_value(json_array_get(rt, i));
        size_t m = strlen(want[i]);
        if (!p || strncmp(p, want[i], m)) return 0;   /* prefix: out_ptr0 / out_ptr2 ... */
    }
    return 1;
}

/* The FX node line of `fragment` (Inductor's "Graph fragment" comment lines) that calls
 * `target` ("aten.cumsum.default"), or NULL. */
const char *builtin_fx_line(const json_t *fragment, const char *target) {
    char want[96];
    snprintf(want, sizeof want, "target=torch.ops.%s](args = (%%", target);
    size_t i;
    json_t *v;
    json_array_foreach(fragment, i, v) {
        const char *l = json_string_value(v);
        if (l && strstr(l, want)) return l;
    }
    return NULL;
}

/* The rank of the node's tensor type `Tensor "f32[a, b, c][...]"`; 0 when not found. */
int builtin_fx_rank(const char *line) {
    const char *t = strstr(line, "Tensor \"");
    const char *b = t ? strchr(t, '[') : NULL;
    if (!b) return 0;
    int rank = 1;
    for (const char *p = b + 1; *p && *p != ']'; p++) rank += *p == ',';
    return b[1] == ']' ? 0 : rank;
}

/* The integer after the node's first argument: `(args = (%x, D` -> D. 1 when read. */
int builtin_fx_int_arg(const char *line, long long *out) {
    const char *a = strstr(line, "](args = (%");
    const char *c = a ? strchr(a + 11, ',') : NULL;
    if (!c) return 0;
    char *end = NULL;
    *out = strtoll(c + 1, &end, 10);
    return end != c + 1;
}
