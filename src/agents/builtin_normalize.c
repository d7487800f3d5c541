/* builtin_normalize.c — the row-normalize family, recognised from Inductor's FX graph fragment
 * (what the kernel computes, not how its text looks): y = x / ||x|| over the last dimension,
 * with ||x|| the L1 norm (sum of |x|) or the L2 norm (sqrt of the sum of squares, written as
 * pow(s, 0.5) or sqrt(s)), optionally plus a constant epsilon. The graph must be exactly that:
 * one input, the div's numerator the same input the norm reads, the sum over the last
 * dimension with keepdim, no other call in the fragment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"

enum { FX_MAX_NODES = 16, FX_NAME = 64, FX_ARGS = 256 };

typedef struct fx_node {
    char name[FX_NAME];   /* without '%' */
    char target[FX_NAME]; /* "aten.div.Tensor" */
    char args[FX_ARGS];   /* the text between "args = (" and the matching ")" */
    int rank;             /* the node's tensor rank (0: not given) */
} fx_node;

/* One "call_function" line of the fragment into n; 0 when the line is not one. */
static int fx_parse(const char *l, fx_node *n) {
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
    if (depth || nl >= FX_NAME || tl >= FX_NAME || (size_t)(e - 1 - a) >= FX_ARGS) return 0;
    memcpy(n->name, l + 1, nl);
    n->name[nl] = '\0';
    memcpy(n->target, t, tl);
    n->target[tl] = '\0';
    memcpy(n->args, a, (size_t)(e - 1 - a));
    n->args[e - 1 - a] = '\0';
    n->rank = builtin_fx_rank(l);
    return 1;
}

/* Argument i (0-based, top-level commas) of n, copied into out; 0 when there is none. */
static int fx_arg(const fx_node *n, int i, char *out, size_t cap) {
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

static const fx_node *fx_find(const fx_node *ns, int n, const char *ref) {
    if (ref[0] != '%') return NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(ns[i].name, ref + 1)) return &ns[i];
    return NULL;
}

/* Whether arg i of n is node reference `ref` ("%x"). */
static int arg_is(const fx_node *n, int i, const char *ref) {
    char a[FX_NAME];
    return fx_arg(n, i, a, sizeof a) && !strcmp(a, ref);
}

static int arg_num(const fx_node *n, int i, double *v) {
    char a[FX_NAME], *end = NULL;
    if (!fx_arg(n, i, a, sizeof a)) return 0;
    *v = strtod(a, &end);
    return end != a && *end == '\0';
}

int builtin_normalize_match(const json_t *k, int *p, double *eps) {
    const json_t *frag = json_object_get(k, "graph_fragment");
    fx_node ns[FX_MAX_NODES];
    int n = 0;
    size_t i;
    json_t *v;
    json_array_foreach(frag, i, v) {
        const char *l = json_string_value(v);
        if (!l || !strstr(l, "= call_function[")) continue;
        if (n == FX_MAX_NODES || !fx_parse(l, &ns[n])) return 0;
        n++;
    }
    /* the division: a graph input over the norm */
    const fx_node *div = NULL;
    for (int j = 0; j < n; j++)
        if (!strcmp(ns[j].target, "aten.div.Tensor")) {
            if (div) return 0;
            div = &ns[j];
        }
    char x[FX_NAME], d[FX_NAME];
    if (!div || !fx_arg(div, 0, x, sizeof x) || !fx_arg(div, 1, d, sizeof d) || fx_find(ns, n, x) || x[0] != '%')
        return 0;
    const fx_node *den = fx_find(ns, n, d);
    int used = 2; /* nodes the pattern accounts for: div, sum, then the rest */
    *eps = 0;
    if (den && !strcmp(den->target, "aten.add.Tensor")) {
        char b[FX_NAME];
        if (!fx_arg(den, 0, b, sizeof b) || !arg_num(den, 1, eps) || !(*eps >= 0 && *eps < 1e-2)) return 0;
        den = fx_find(ns, n, b);
        used++;
    }
    if (!den) return 0;
    const fx_node *sum = den;
    *p = 1;
    if (!strcmp(den->target, "aten.pow.Tensor_Scalar") || !strcmp(den->target, "aten.sqrt.default")) {
        double half = 0.5;
        if (!strcmp(den->target, "aten.pow.Tensor_Scalar") && !(arg_num(den, 1, &half) && half == 0.5)) return 0;
        char b[FX_NAME];
        if (!fx_arg(den, 0, b, sizeof b)) return 0;
        sum = fx_find(ns, n, b);
        *p = 2;
        used++;
    }
    /* the sum over the last dimension, keepdim */
    char src[FX_NAME], dims[FX_NAME], keep[FX_NAME];
    if (!sum || strcmp(sum->target, "aten.sum.dim_IntList") || !fx_arg(sum, 0, src, sizeof src) ||
        !fx_arg(sum, 1, dims, sizeof dims) || !fx_arg(sum, 2, keep, sizeof keep) || strcmp(keep, "True"))
        return 0;
    int rank = div->rank;
    char last[16];
    snprintf(last, sizeof last, "[%d]", rank - 1);
    if (strcmp(dims, "[-1]") && (rank < 1 || strcmp(dims, last))) return 0;
    /* what is summed: |x| (L1), or x squared (L2) */
    const fx_node *g = fx_find(ns, n, src);
    if (!g || !arg_is(g, 0, x)) return 0;
    used++;
    double two = 0;
    if (*p == 1) {
        if (strcmp(g->target, "aten.abs.default")) return 0;
    } else if (!(!strcmp(g->target, "aten.pow.Tensor_Scalar") && arg_num(g, 1, &two) && two == 2) &&
               !(!strcmp(g->target, "aten.mul.Tensor") && arg_is(g, 1, x))) {
        return 0;
    }
    return used == n;
}
