/* builtin_common.c — constructor plumbing and kernel-fact predicates shared by the built-in agents. */
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

int builtin_params_are(const kfacts *k, const char *const *want, size_t n) {
    if (k->runtime.n != n) return 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = k->runtime.v[i];
        size_t m = strlen(want[i]);
        if (!p || strncmp(p, want[i], m)) return 0;   /* prefix: out_ptr0 / out_ptr2 ... */
    }
    return 1;
}

/* The FX node line of `fragment` (Inductor's "Graph fragment" comment lines) that calls
 * `target` ("aten.cumsum.default"), or NULL. */
const char *builtin_fx_line(const kf_strs *fragment, const char *target) {
    char want[96];
    snprintf(want, sizeof want, "target=torch.ops.%s](args = (%%", target);
    return kf_strs_find(fragment, want);
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
    const char *v = c + 1 + (c[1] == ' ');
    int list = *v == '[';   /* a one-element list: amax(x, [D]) */
    char *end = NULL;
    *out = strtoll(v + list, &end, 10);
    return end != v + list && (!list || *end == ']');
}

int builtin_casts_to_fp32(const char *src, const char *out_tl) {
    for (const char *p = src ? strstr(src, ".to(") : NULL; p; p = strstr(p + 1, ".to(")) {
        if (!strncmp(p, ".to(tl.float32)", 15)) continue;
        size_t n = out_tl ? strlen(out_tl) : 0;
        const char *bol = p;
        while (bol > src && bol[-1] != '\n') bol--;
        char lhs[32], rest[32], store[64];
        int end = 0;
        /* `    A = B.to(out_tl)` then `    tl.store(..., A, ...)` */
        if (!n || strncmp(p + 4, out_tl, n) || strncmp(p + 4 + n, ")\n", 2) ||
            sscanf(bol, " %31[a-z0-9_] = %31[a-z0-9_]%n", lhs, rest, &end) != 2 || bol + end != p)
            return 0;
        const char *next = p + 4 + n + 2, *eol = next + strcspn(next, "\n");
        snprintf(store, sizeof store, ", %s, ", lhs);
        while (*next == ' ') next++;
        if (strncmp(next, "tl.store(", 9) || !memmem(next, (size_t)(eol - next), store, strlen(store))) return 0;
    }
    return src != NULL;
}

int builtin_ops_within(const kf_strs *ops, const char *const *allowed, size_t n, unsigned *has) {
    for (size_t i = 0; i < ops->n; i++) {
        const char *op = ops->v[i];
        size_t j = 0;
        while (j < n && strcmp(op, allowed[j])) j++;
        if (j == n) return 0;
        *has |= 1u << j;
    }
    return 1;
}

int builtin_fx_dim(const kf_strs *fragment, const char *target, int rank) {
    const char *l = builtin_fx_line(fragment, target);
    long long d;
    if (!l || !builtin_fx_int_arg(l, &d)) return -1;
    if (builtin_fx_rank(l)) rank = builtin_fx_rank(l);
    if (d < 0) d += rank;
    return d >= 0 && d < rank ? (int)d : -1;
}

void builtin_dims_keep(int *dims, int *ndims, int d) {
    if (d < 0) return;
    int found = 0;
    for (int i = 0; i < *ndims; i++) found |= dims[i] == d;
    dims[0] = d;
    *ndims = found;
}

int builtin_count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

const char *builtin_next_line(const char *p, char *buf, size_t cap) {
    size_t n = strcspn(p, "\n");
    snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
    return p[n] ? p + n + 1 : p + n;
}

const char *builtin_block_end(const char *p) {
    while (!strncmp(p, "        ", 8)) p += strcspn(p, "\n") + (p[strcspn(p, "\n")] ? 1 : 0);
    return p;
}

long long builtin_next_pow2(long long v) {
    long long p = 1;
    while (p < v) p <<= 1;
    return p;
}

int builtin_pow2_in(long long v, long long lo, long long hi) {
    return v >= lo && v <= hi && !(v & (v - 1));
}

/* One "call_function" line of the fragment into n; 0 when the line is not one. */
int builtin_fx_parse(const char *l, fx_node *n) {
    const char *ct = strstr(l, "= call_function[target=torch.ops.");
    const char *ar = ct ? strstr(ct, "](args = (") : NULL;
    if (l[0] != '%' || !ar) return 0;
    size_t nl = strcspn(l + 1, " :");
    const char *t = ct + strlen("= call_function[target=torch.ops.");
    size_t tl = (size_t)(ar - t);
    const char *a = ar + strlen("](args = (");
    int depth = 1;
    const char *e = a;
    for (; *e && depth; e++) depth += (*e == '(' || *e == '[') - (*e == ')' || *e == ']');
    if (depth || nl >= BUILTIN_FX_NAME || tl >= BUILTIN_FX_NAME || (size_t)(e - 1 - a) >= BUILTIN_FX_ARGS) return 0;
    memcpy(n->name, l + 1, nl);
    n->name[nl] = '\0';
    memcpy(n->target, t, tl);
    n->target[tl] = '\0';
    memcpy(n->args, a, (size_t)(e - 1 - a));
    n->args[e - 1 - a] = '\0';
    const char *kw = strstr(e, "kwargs = {");
    size_t kl = kw ? strcspn(kw + 10, "}") : 0;
    n->kwargs[0] = '\0';
    if (kw && kl < BUILTIN_FX_NAME) {
        memcpy(n->kwargs, kw + 10, kl);
        n->kwargs[kl] = '\0';
    }
    n->rank = builtin_fx_rank(l);
    return 1;
}

/* Argument i (0-based, top-level commas) of n, copied into out; 0 when there is none. */
int builtin_fx_arg(const fx_node *n, int i, char *out, size_t cap) {
    const char *p = n->args;
    for (int k = 0;; k++) {
        while (*p == ' ') p++;
        const char *s = p;
        int depth = 0;
        while (*p && (depth || *p != ',')) {
            depth += (*p == '(' || *p == '[') - (*p == ')' || *p == ']');
            p++;
        }
        if (k == i) {
            size_t len = (size_t)(p - s);
            while (len && s[len - 1] == ' ') len--;
            if (!len || len >= cap) return 0;
            memcpy(out, s, len);
            out[len] = '\0';
            return 1;
        }
        if (!*p) return 0;
        p++;
    }
}

int builtin_candidates_answer(json_t *cands, const char *tmpl, const char *limits, json_t **out, kerr *e) {
    if (!json_array_size(cands)) {
        json_decref(cands);
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite %s: no usable variant in the plan (%s)", tmpl ? tmpl : "?", limits);
    }
    *out = json_pack("{s:o}", "candidates", cands);
    return 0;
}

int builtin_float_ptr(const char *t) { return !strcmp(t, "*fp32") || !strcmp(t, "*fp16") || !strcmp(t, "*bf16"); }

size_t builtin_split_lines(const char *src, builtin_line *ls, size_t cap) {
    size_t n = 0;
    for (const char *p = src; p && *p && n < cap;) {
        const char *nl = strchr(p, '\n');
        const char *e = nl ? nl : p + strlen(p);
        int ind = 0;
        while (p + ind < e && p[ind] == ' ') ind++;
        size_t len = (size_t)(e - p - ind);
        while (len && (p[ind + len - 1] == ' ' || p[ind + len - 1] == '\r')) len--;
        if (len) ls[n++] = (builtin_line){p + ind, len, ind};
        if (!nl) break;
        p = nl + 1;
    }
    return n;
}

int builtin_splice_helper(kbuf *out, const char *t, const char *kernel, const char *helper, kerr *e) {
    char def[160];
    snprintf(def, sizeof def, "@triton.jit\ndef %s(", kernel);
    const char *at = strstr(t, def);
    if (!at) return kerr_set(e, KOPT_E_INTERNAL, "the rendered template has no kernel %s", kernel);
    kbuf_append(out, t, (size_t)(at - t));
    kbuf_printf(out, "%s\n\n", helper);
    kbuf_puts(out, at);
    return 0;
}

void builtin_one_launch_plan(kbuf *s, const kfacts *k, const char *grid, const char *constexprs, long long num_warps) {
    kbuf params = KBUF_INIT;
    for (size_t i = 0; kfacts_runtime(k, i); i++) kbuf_printf(&params, "%s\"%s\"", i ? ", " : "", kfacts_runtime(k, i));
    kbuf_printf(s, "\n\nKOPT_PLAN = {\n    \"params\": [%s],\n    \"launches\": [\n"
                   "        {\"kernel\": \"%s\", \"grid\": [\"%s\"], \"args\": [%s],\n"
                   "         \"constexprs\": {%s}, \"num_warps\": %lld, \"num_stages\": 1},\n"
                   "    ],\n}\n",
                kbuf_str(&params), k->name ? k->name : "?", grid, kbuf_str(&params), constexprs, num_warps);
    kbuf_free(&params);
}

void builtin_push_rewrite(json_t *cands, const char *label, const char *tmpl, const char *knob, long long value,
                          long long num_warps, const char *src) {
    json_t *cfg = json_pack("{s:s, s:I, s:I}", "template", tmpl, knob, (json_int_t)value, "num_warps", (json_int_t)num_warps);
    json_array_append_new(cands, json_pack("{s:s, s:o, s:s}", "label", label, "config", cfg, "source", src));
}
