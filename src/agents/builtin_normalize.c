/* builtin_normalize.c — the row-normalize families, recognised from Inductor's FX graph fragment
 * (what the kernel computes, not how its text looks):
 *   - y = x / ||x|| over the last dimension, with ||x|| the L1 norm (sum of |x|) or the L2 norm
 *     (sqrt of the sum of squares, written as pow(s, 0.5) or sqrt(s)), optionally plus a
 *     constant epsilon. The graph must be exactly that: one input, the div's numerator the same
 *     input the norm reads, the sum over the last dimension with keepdim, no other call.
 *   - instance norm: var_mean (population variance) over every dimension of a [1, rows, ...]
 *     view but the rows', (x - mean) * rsqrt(var + eps), optionally times a per-channel weight
 *     and plus a per-channel bias repeated over the batch; the multiset of calls must be
 *     exactly that.
 *   - layer norm: var_mean over every dimension but the first, (x - mean) * rsqrt(var + eps) * W
 *     + B with W and B graph inputs, converted to float32 and back or not at all.
 *   - softmax statistics: prepare_softmax_online over the last dimension alone (the row max and
 *     sum of exponentials a cross-entropy's gather, or a softmax's later kernel, consumes); with
 *     the row's sum of log-probabilities beside them (a label-smoothed cross-entropy), read from
 *     the kernel's source line by line.
 *   - logsumexp over one dimension: ATen's decomposition (amax, the infinite max taken as 0,
 *     log of the sum of exponentials plus that max), of the input or of an fp32 input times a
 *     positive constant, nothing else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"

enum { FX_MAX_NODES = 16, FX_NAME = BUILTIN_FX_NAME };

static const fx_node *fx_find(const fx_node *ns, int n, const char *ref) {
    if (ref[0] != '%') return NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(ns[i].name, ref + 1)) return &ns[i];
    return NULL;
}

/* Whether arg i of n is node reference `ref` ("%x"). */
static int arg_is(const fx_node *n, int i, const char *ref) {
    char a[FX_NAME];
    return builtin_fx_arg(n, i, a, sizeof a) && !strcmp(a, ref);
}

static int arg_num(const fx_node *n, int i, double *v) {
    char a[FX_NAME], *end = NULL;
    if (!builtin_fx_arg(n, i, a, sizeof a)) return 0;
    *v = strtod(a, &end);
    return end != a && *end == '\0';
}

/* How many nodes of ns have target t. */
static int fx_count(const fx_node *ns, int n, const char *t) {
    int c = 0;
    for (int i = 0; i < n; i++) c += !strcmp(ns[i].target, t);
    return c;
}

static const fx_node *fx_first(const fx_node *ns, int n, const char *t) {
    for (int i = 0; i < n; i++)
        if (!strcmp(ns[i].target, t)) return &ns[i];
    return NULL;
}

/* Whether argument i of n refers to node `of`. */
static int arg_is_node(const fx_node *n, int i, const fx_node *of) {
    char ref[FX_NAME + 1];
    snprintf(ref, sizeof ref, "%%%s", of->name);
    return arg_is(n, i, ref);
}

/* How many nodes with target t take a0 as their first argument and a1 as their second (NULL:
 * any); *last (when not NULL) receives the last of them, or NULL. */
static int fx_calls(const fx_node *ns, int n, const char *t, const fx_node *a0, const fx_node *a1,
                    const fx_node **last) {
    int c = 0;
    if (last) *last = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(ns[i].target, t) && (!a0 || arg_is_node(&ns[i], 0, a0)) && (!a1 || arg_is_node(&ns[i], 1, a1))) {
            c++;
            if (last) *last = &ns[i];
        }
    return c;
}

/* The rsqrt of a norm's statistics: rsqrt(v + eps) with eps a number in (0, 1e-2), read into
 * *eps; NULL when the graph has no such node. */
static const fx_node *rsqrt_eps(const fx_node *ns, int n, double *eps) {
    const fx_node *rs = fx_first(ns, n, "aten.rsqrt.default");
    char a0[FX_NAME];
    if (!rs || !builtin_fx_arg(rs, 0, a0, sizeof a0)) return NULL;
    const fx_node *add = fx_find(ns, n, a0);
    if (!add || strcmp(add->target, "aten.add.Tensor") || !arg_num(add, 1, eps) || !(*eps > 0 && *eps < 1e-2))
        return NULL;
    return rs;
}

/* "[d, ...]": every dimension of a rank-`rank` tensor but `skip`, as FX prints a dims list. */
static void dims_except(int rank, int skip, char *out, size_t cap) {
    size_t len = (size_t)snprintf(out, cap, "[");
    for (int d = 0; d < rank && len < cap; d++)
        if (d != skip) len += (size_t)snprintf(out + len, cap - len, "%s%d", len > 1 ? ", " : "", d);
    if (len < cap) snprintf(out + len, cap - len, "]");
}

/* The call_function nodes of kernel k's graph fragment into ns; their count, or -1 when one does
 * not parse or there are more than FX_MAX_NODES. */
static int fx_nodes(const kfacts *k, fx_node *ns) {
    int n = 0;
    for (size_t i = 0; i < k->fragment.n; i++) {
        const char *l = k->fragment.v[i];
        if (!strstr(l, "= call_function[")) continue;
        if (n == FX_MAX_NODES || !builtin_fx_parse(l, &ns[n])) return -1;
        n++;
    }
    return n;
}

int builtin_normalize_match(const kfacts *k, int *p, double *eps) {
    fx_node ns[FX_MAX_NODES];
    int n = fx_nodes(k, ns);
    if (n < 0) return 0;
    /* the division: a graph input over the norm */
    const fx_node *div = fx_count(ns, n, "aten.div.Tensor") == 1 ? fx_first(ns, n, "aten.div.Tensor") : NULL;
    char x[FX_NAME], d[FX_NAME];
    if (!div || !builtin_fx_arg(div, 0, x, sizeof x) || !builtin_fx_arg(div, 1, d, sizeof d) || fx_find(ns, n, x) ||
        x[0] != '%')
        return 0;
    const fx_node *den = fx_find(ns, n, d);
    int used = 2; /* nodes the pattern accounts for: div, sum, then the rest */
    *eps = 0;
    if (den && !strcmp(den->target, "aten.add.Tensor")) {
        char b[FX_NAME];
        if (!builtin_fx_arg(den, 0, b, sizeof b) || !arg_num(den, 1, eps) || !(*eps >= 0 && *eps < 1e-2)) return 0;
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
        if (!builtin_fx_arg(den, 0, b, sizeof b)) return 0;
        sum = fx_find(ns, n, b);
        *p = 2;
        used++;
    }
    /* the sum over the last dimension, keepdim */
    char src[FX_NAME], dims[FX_NAME], keep[FX_NAME];
    if (!sum || strcmp(sum->target, "aten.sum.dim_IntList") || !builtin_fx_arg(sum, 0, src, sizeof src) ||
        !builtin_fx_arg(sum, 1, dims, sizeof dims) || !builtin_fx_arg(sum, 2, keep, sizeof keep) ||
        strcmp(keep, "True"))
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

/* The channel count C of `tl.load(PTR + ((x0 % C))` in the kernel source; 0 when absent. */
static long long channel_mod(const char *src, const char *ptr) {
    char want[64];
    snprintf(want, sizeof want, "tl.load(%s + ((x0 %% ", ptr);
    const char *at = src ? strstr(src, want) : NULL;
    if (!at) return 0;
    char *end = NULL;
    long long c = strtoll(at + strlen(want), &end, 10);
    return end && !strncmp(end, "))", 2) && c > 0 ? c : 0;
}

int builtin_instance_norm_match(const kfacts *k, double *eps, long long *channels, int *affine) {
    fx_node ns[FX_MAX_NODES];
    int n = fx_nodes(k, ns);
    if (n < 0) return 0;
    /* the statistics: population variance over all dimensions of the view but dim 1 (the rows) */
    const fx_node *vm = fx_first(ns, n, "aten.var_mean.correction");
    char x[FX_NAME], dims[FX_NAME];
    if (!vm || fx_count(ns, n, "aten.var_mean.correction") != 1 || strcmp(vm->kwargs, "correction: 0, keepdim: True") ||
        !builtin_fx_arg(vm, 0, x, sizeof x) || !builtin_fx_arg(vm, 1, dims, sizeof dims))
        return 0;
    const fx_node *view = fx_find(ns, n, x);
    int rank = view ? view->rank : 0;
    if (rank < 3 || rank > 5 || !view || strcmp(view->target, "aten.reshape.default")) return 0;
    char want[32];
    dims_except(rank, 1, want, sizeof want);
    if (strcmp(dims, want)) return 0;
    /* (x - mean) * rsqrt(var + eps) */
    const fx_node *rs = rsqrt_eps(ns, n, eps);
    const fx_node *sub = fx_first(ns, n, "aten.sub.Tensor");
    if (!rs || !sub || !arg_is(sub, 0, x) || fx_calls(ns, n, "aten.mul.Tensor", sub, rs, NULL) != 1) return 0;
    /* the whole graph, nothing more: affine adds two repeats, their unsqueezes, a mul and an add */
    int reps = fx_count(ns, n, "aten.repeat.default"), unsq = fx_count(ns, n, "aten.unsqueeze.default");
    *affine = reps == 2;
    int muls_adds = 1 + *affine; /* the norm's mul and eps add, and the affine's */
    if ((reps != 0 && reps != 2) || fx_count(ns, n, "aten.mul.Tensor") != muls_adds ||
        fx_count(ns, n, "aten.add.Tensor") != muls_adds || fx_count(ns, n, "aten.sub.Tensor") != 1 ||
        fx_count(ns, n, "aten.rsqrt.default") != 1 || fx_count(ns, n, "aten.reshape.default") != 1 ||
        (!*affine && unsq) || (*affine && (unsq < 2 || unsq > 6)) || n != 6 + 4 * *affine + unsq)
        return 0;
    *channels = 1;
    if (*affine) {
        const char *src = k->source;
        long long cw = channel_mod(src, "in_ptr1"), cb = channel_mod(src, "in_ptr2");
        if (!cw || cw != cb) return 0;
        *channels = cw;
    }
    return 1;
}

int builtin_layer_norm_match(const kfacts *k, double *eps) {
    fx_node ns[FX_MAX_NODES];
    int n = fx_nodes(k, ns);
    if (n < 0) return 0;
    const fx_node *vm = fx_first(ns, n, "aten.var_mean.correction");
    const fx_node *sub = fx_first(ns, n, "aten.sub.Tensor");
    char x[FX_NAME], dims[FX_NAME];
    if (!vm || !sub || strcmp(vm->kwargs, "correction: 0, keepdim: True") || !builtin_fx_arg(vm, 0, x, sizeof x) ||
        !builtin_fx_arg(vm, 1, dims, sizeof dims) || !arg_is(sub, 0, x))
        return 0;
    /* the statistics over every dimension but the first: [1, ..., rank-1] */
    int rank = sub->rank;
    char want[32];
    dims_except(rank, 0, want, sizeof want);
    if (rank < 2 || rank > 5 || strcmp(dims, want)) return 0;
    /* x itself, or x converted to float32 first */
    const fx_node *cx = fx_find(ns, n, x);
    int conv = fx_count(ns, n, "prims.convert_element_type.default");
    if (cx && (strcmp(cx->target, "prims.convert_element_type.default") || !arg_is(cx, 1, "torch.float32") || !conv))
        return 0;
    /* (x - mean) * rsqrt(var + eps) * W + B, W and B graph inputs */
    const fx_node *rs = rsqrt_eps(ns, n, eps), *norm = NULL, *scaled = NULL, *shifted = NULL;
    char w[FX_NAME], b[FX_NAME];
    if (!rs) return 0;
    fx_calls(ns, n, "aten.mul.Tensor", sub, rs, &norm);
    if (!norm) return 0;
    fx_calls(ns, n, "aten.mul.Tensor", norm, NULL, &scaled);
    if (!scaled || !builtin_fx_arg(scaled, 1, w, sizeof w) || w[0] != '%' || fx_find(ns, n, w)) return 0;
    fx_calls(ns, n, "aten.add.Tensor", scaled, NULL, &shifted);
    if (!shifted || !builtin_fx_arg(shifted, 1, b, sizeof b) || b[0] != '%' || fx_find(ns, n, b) || !strcmp(w, b))
        return 0;
    /* nothing else: the converts come in and out together */
    if ((conv != 0 && conv != 2) || (conv == 2) != (cx != NULL) || fx_count(ns, n, "aten.mul.Tensor") != 2 ||
        fx_count(ns, n, "aten.add.Tensor") != 2 || fx_count(ns, n, "aten.sub.Tensor") != 1 ||
        fx_count(ns, n, "aten.var_mean.correction") != 1 || fx_count(ns, n, "aten.rsqrt.default") != 1 || n != 7 + conv)
        return 0;
    /* the other convert rounds the result */
    if (conv == 2 && fx_calls(ns, n, "prims.convert_element_type.default", shifted, NULL, NULL) != 1) return 0;
    /* the kernel reads the weight and the bias at the row's own positions */
    const char *src = k->source;
    return src && strstr(src, "tl.load(in_ptr1 + (r0_1)") && strstr(src, "tl.load(in_ptr2 + (r0_1)");
}

/* The PlaceHolder line of graph input `ref` ("%arg0_1") in the fragment, and in *type the text
 * after its `Tensor "` (the dtype, then the shape and strides in brackets); NULL when none. */
static const char *placeholder_line(const kfacts *k, const char *ref, const char **type) {
    char want[FX_NAME + 16];
    snprintf(want, sizeof want, "%s : Tensor \"", ref);
    for (size_t i = 0; i < k->fragment.n; i++) {
        const char *l = k->fragment.v[i];
        if (strncmp(l, want, strlen(want)) || !strstr(l, "= PlaceHolder[")) continue;
        *type = l + strlen(want);
        return l;
    }
    return NULL;
}

/* The rank of graph input `ref` from its PlaceHolder line, and whether its last stride is 1; 0
 * when the fragment has no such line. */
static int placeholder_rank(const kfacts *k, const char *ref, int *last_unit) {
    const char *type = NULL, *l = placeholder_line(k, ref, &type);
    const char *sb = l ? strchr(type, ']') : NULL; /* the shape's end, the strides follow */
    const char *se = sb && sb[1] == '[' ? strchr(sb + 1, ']') : NULL;
    if (!se) return 0;
    const char *lastc = se;
    while (lastc > sb + 1 && lastc[-1] != ',' && lastc[-1] != '[') lastc--;
    while (*lastc == ' ') lastc++;
    *last_unit = !strncmp(lastc, "1]", 2);
    return builtin_fx_rank(l);
}

/* Whether src holds one online-softmax reduce whose (max, sum) pair, named into mx and sm, it
 * stores per row to out_ptr0 and out_ptr1. */
static int stats_stored(const char *src, char mx[16], char sm[16]) {
    static const char reduce[] = " = triton_helpers.online_softmax_reduce(";
    const char *red = src ? strstr(src, reduce) : NULL;
    if (!red || builtin_count(src, "online_softmax_reduce(") != 1) return 0;
    const char *ls = red;
    while (ls > src && ls[-1] != '\n') ls--;
    char want[64];
    if (sscanf(ls, " %15[a-z0-9_], %15[a-z0-9_] = triton_helpers", mx, sm) != 2) return 0;
    snprintf(want, sizeof want, "tl.store(out_ptr0 + (x0), %s, None)", mx);
    if (!strstr(src, want)) return 0;
    snprintf(want, sizeof want, "tl.store(out_ptr1 + (x0), %s, None)", sm);
    return strstr(src, want) != NULL;
}

int builtin_softmax_stats_match(const kfacts *k) {
    fx_node ns[FX_MAX_NODES];
    int n = fx_nodes(k, ns);
    static const char target[] = "prims.prepare_softmax_online.default";
    char x[FX_NAME], extra[FX_NAME];
    if (n != 1 || strcmp(ns[0].target, target) || !builtin_fx_arg(&ns[0], 0, x, sizeof x) ||
        builtin_fx_arg(&ns[0], 2, extra, sizeof extra))
        return 0;
    int unit = 0, rank = placeholder_rank(k, x, &unit);
    if (rank < 1 || !unit || builtin_fx_dim(&k->fragment, target, rank) != rank - 1) return 0;
    /* which pointer holds which statistic: the reduce's (max, sum) pair, stored per row */
    const char *src = k->source;
    char mx[16], sm[16];
    return stats_stored(src, mx, sm) && strstr(src, "tl.store(") == strstr(src, "tl.store(out_ptr0") &&
           !strstr(strstr(src, "tl.store(out_ptr1") + 1, "tl.store(");
}

/* The right-hand side of the one line of src that assigns `name` alone ("    tmp5 = tmp4 - tmp2":
 * "tmp4 - tmp2", up to the newline, into out[0..cap)); 0 when no line or several do. */
static int assigned(const char *src, const char *name, char *out, size_t cap) {
    size_t n = strlen(name), found = 0;
    for (const char *l = src; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *p = l;
        while (*p == ' ') p++;
        if (strncmp(p, name, n) || strncmp(p + n, " = ", 3)) continue;
        const char *r = p + n + 3, *e = strchr(r, '\n');
        size_t len = e ? (size_t)(e - r) : strlen(r);
        if (found++ || len >= cap) return 0;
        memcpy(out, r, len);
        out[len] = '\0';
    }
    return found == 1;
}

/* Follows `name` back through conversions to fp32 ("tmp1 = tmp0.to(tl.float32)"), into name. */
static void through_fp32(const char *src, char *name, size_t cap) {
    char r[256], v[16];
    for (int hop = 0; hop < 4 && assigned(src, name, r, sizeof r); hop++) {
        int end = 0;
        if (sscanf(r, "%15[a-z0-9_].to(tl.float32)%n", v, &end) != 1 || r[end]) return;
        snprintf(name, cap, "%s", v);
    }
}

int builtin_softmax_lsum_match(const kfacts *k) {
    static const char *const ops[] = {"prims.prepare_softmax_online", "aten.sub", "aten._log_softmax", "aten.sum"};
    unsigned has = 0;
    const char *src = k->source;
    if (!src || !builtin_ops_within(&k->aten_ops, ops, 4, &has) || has != 15u) return 0;
    char mx[16], sm[16], f[16], want[96], r[256], a[16], b[16], c[16], dd[16], e[16], g[16], ld[16];
    if (!stats_stored(src, mx, sm) || builtin_count(src, "online_softmax_combine(") != 1 ||
        builtin_count(src, "tl.store(") != 3)
        return 0;
    const char *st = strstr(src, "tl.store(out_ptr2 + (x0), ");
    if (!st || sscanf(st, "tl.store(out_ptr2 + (x0), %15[a-z0-9_], None)", f) != 1) return 0;
    /* F = tl.sum(_F, 1)[:, None]; _F = tl.where(mask, G, _F); G = _F + H;
     * H = tl.broadcast_to(E, [XBLOCK, R0_BLOCK]); E = C - D; D = tl_math.log(SM); C = L - MX;
     * L = tl.load(in_ptr0 + (r0_1 + N*x0), ...) */
    char acc[20];
    snprintf(acc, sizeof acc, "_%s", f);
    snprintf(want, sizeof want, "tl.sum(%s, 1)[:, None]", acc);
    if (!assigned(src, f, r, sizeof r) || strcmp(r, want)) return 0;
    snprintf(want, sizeof want, "    %s = tl.where(", acc);
    const char *w = strstr(src, want);
    int end = 0;
    if (!w || sscanf(w + strlen(want), "%15[a-z0-9_&() ], %15[a-z0-9_], %15[a-z0-9_])%n", a, g, b, &end) != 3 ||
        strcmp(b, acc) || strncmp(a, "r0_mask", 7))
        return 0;
    snprintf(want, sizeof want, "%s + %%15[a-z0-9_]%%n", acc);
    end = 0;
    if (!assigned(src, g, r, sizeof r) || sscanf(r, want, e, &end) != 1 || r[end]) return 0;
    end = 0;
    if (!assigned(src, e, r, sizeof r) ||
        sscanf(r, "tl.broadcast_to(%15[a-z0-9_], [XBLOCK, R0_BLOCK])%n", c, &end) != 1 || r[end])
        return 0;
    end = 0;
    if (!assigned(src, c, r, sizeof r) || sscanf(r, "%15[a-z0-9_] - %15[a-z0-9_]%n", a, dd, &end) != 2 || r[end])
        return 0;
    snprintf(want, sizeof want, "tl_math.log(%s)", sm);
    if (!assigned(src, dd, r, sizeof r) || strcmp(r, want)) return 0;
    end = 0;
    if (!assigned(src, a, r, sizeof r) || sscanf(r, "%15[a-z0-9_] - %15[a-z0-9_]%n", ld, b, &end) != 2 || r[end] ||
        strcmp(b, mx))
        return 0;
    through_fp32(src, ld, sizeof ld);
    long long rn = kfacts_numel(k, "r0_numel");
    snprintf(want, sizeof want, "tl.load(in_ptr0 + (r0_1 + %lld*x0), r0_mask", rn);
    return assigned(src, ld, r, sizeof r) && !strncmp(r, want, strlen(want));
}

/* The one dimension `dims` names ("[1]", "[-1]") of a rank-`rank` tensor, counted from 0; -1
 * when it names none or several. */
static int dims_one(const char *dims, int rank) {
    int d = 0, len = 0;
    if (rank < 1 || sscanf(dims, "[%d]%n", &d, &len) != 1 || dims[len]) return -1;
    if (d < 0) d += rank;
    return d >= 0 && d < rank ? d : -1;
}

/* The numbers of a bracketed list at p ("[32, 1024, 4096]") into v[0..max), the count into *n;
 * the position after the ']', or NULL when p holds no such list. */
static const char *int_list(const char *p, long long *v, int max, int *n) {
    if (!p || *p != '[') return NULL;
    for (*n = 0, p++; *p != ']'; (*n)++) {
        char *e;
        if (*n == max) return NULL;
        v[*n] = strtoll(p, &e, 10);
        if (e == p) return NULL;
        p = e + strspn(e, ", ");
    }
    return p + 1;
}

/* Whether graph input `ref` is contiguous: its PlaceHolder's strides (the bracket after the
 * shape) are the shape's suffix products. */
static int placeholder_contiguous(const kfacts *k, const char *ref) {
    const char *type = NULL;
    long long sh[KF_MAX_DIMS], st[KF_MAX_DIMS];
    int n = 0, m = 0;
    const char *p = placeholder_line(k, ref, &type) ? int_list(strchr(type, '['), sh, KF_MAX_DIMS, &n) : NULL;
    if (!int_list(p, st, KF_MAX_DIMS, &m) || m != n || !n) return 0;
    long long want_st = 1;
    for (int d = n; d-- > 0;) {
        if (sh[d] != 1 && st[d] != want_st) return 0;
        want_st *= sh[d];
    }
    return 1;
}

/* ATen's logsumexp decomposition over one dimension of a graph input with unit last stride
 * (see builtin.h), stored once per result to one output: the output's name into out[0..cap),
 * the reduced dimension into *dim, the input's rank into *rank and the constant c > 0 of an
 * fp32 input scaled first (logsumexp(x * c)) into *scale (1 when none). */
static int lse_match(const kfacts *k, char *out, size_t cap, int *dim, int *rank_out, double *scale) {
    fx_node ns[FX_MAX_NODES];
    int n = fx_nodes(k, ns);
    if (n < 10 || n > 14) return 0;
    /* amax(x, [d], True) of a graph input with unit last stride, or of x converted to float32
     * (fp16/bf16 inputs: the result is then converted back), or of an fp32 input times a
     * positive constant (Inductor fuses the mul in front; it is computed in fp32 either way) */
    const fx_node *amax = fx_count(ns, n, "aten.amax.default") == 1 ? fx_first(ns, n, "aten.amax.default") : NULL;
    char x[FX_NAME], dims[FX_NAME], keep[FX_NAME], v[FX_NAME];
    if (!amax || !builtin_fx_arg(amax, 0, x, sizeof x) || !builtin_fx_arg(amax, 1, dims, sizeof dims) ||
        !builtin_fx_arg(amax, 2, keep, sizeof keep) || strcmp(keep, "True"))
        return 0;
    const fx_node *mul = fx_find(ns, n, x); /* the scale, or the convert below, or NULL */
    double c = 1;
    if (mul && !strcmp(mul->target, "aten.mul.Tensor")) {
        if (!arg_num(mul, 1, &c) || !(c > 0 && c < 1e30) || !builtin_fx_arg(mul, 0, x, sizeof x) || fx_find(ns, n, x))
            return 0;
    } else {
        mul = NULL;
    }
    int muls = fx_count(ns, n, "aten.mul.Tensor");
    if (muls != (mul != NULL)) return 0;
    const fx_node *up = fx_find(ns, n, x); /* the convert to float32, or NULL */
    int conv = fx_count(ns, n, "prims.convert_element_type.default");
    if (mul && conv) return 0; /* a scaled 16-bit input: where ATen rounds x * c is not settled here */
    if (up && (strcmp(up->target, "prims.convert_element_type.default") || !arg_is(up, 1, "torch.float32") ||
               !builtin_fx_arg(up, 0, x, sizeof x) || fx_find(ns, n, x)))
        return 0;
    if (x[0] != '%' || (conv != 0 && conv != 2) || (conv == 2) != (up != NULL)) return 0;
    int unit = 0, rank = placeholder_rank(k, x, &unit), d = dims_one(dims, rank);
    if (!unit || d < 0) return 0;
    /* m' = where(|m| == inf, 0, m) */
    const fx_node *ab = NULL, *eq = NULL, *full = fx_first(ns, n, "aten.full.default"), *wh = NULL;
    double zero = 1;
    if (fx_calls(ns, n, "aten.abs.default", amax, NULL, &ab) != 1 ||
        fx_calls(ns, n, "aten.eq.Scalar", ab, NULL, &eq) != 1 || !builtin_fx_arg(eq, 1, v, sizeof v) ||
        strcmp(v, "inf") || !full || !arg_num(full, 1, &zero) || zero != 0 ||
        fx_calls(ns, n, "aten.where.self", eq, full, &wh) != 1 || !arg_is_node(wh, 2, amax))
        return 0;
    /* log(sum(exp(x - m'), [d])) + m' (squeezed unless keepdim), x the scaled or converted input */
    const fx_node *sub = NULL, *ex = NULL, *sum = NULL, *lg = NULL, *sq = NULL, *add = NULL, *xin = mul ? mul : up;
    if (fx_calls(ns, n, "aten.sub.Tensor", xin, wh, &sub) != 1 || (!xin && !arg_is(sub, 0, x)) ||
        fx_calls(ns, n, "aten.exp.default", sub, NULL, &ex) != 1 ||
        fx_calls(ns, n, "aten.sum.dim_IntList", ex, NULL, &sum) != 1 || !builtin_fx_arg(sum, 1, dims, sizeof dims) ||
        dims_one(dims, rank) != d || fx_calls(ns, n, "aten.log.default", sum, NULL, &lg) != 1)
        return 0;
    int keepdim = builtin_fx_arg(sum, 2, keep, sizeof keep) && !strcmp(keep, "True");
    if (!keepdim && (fx_calls(ns, n, "aten.squeeze.dims", wh, NULL, &sq) != 1 ||
                     !builtin_fx_arg(sq, 1, dims, sizeof dims) || dims_one(dims, rank) != d))
        return 0;
    if (fx_calls(ns, n, "aten.add.Tensor", lg, keepdim ? wh : sq, &add) != 1) return 0;
    /* the result converted back to the input's type when it was converted up */
    if (up && fx_calls(ns, n, "prims.convert_element_type.default", add, NULL, NULL) != 1) return 0;
    /* nothing else in the graph */
    if (n != 10 + !keepdim + conv + muls || fx_count(ns, n, "aten.add.Tensor") != 1 ||
        fx_count(ns, n, "aten.full.default") != 1)
        return 0;
    /* the kernel stores the result once, to its one output (in_out_ptr0 or an out_ptrN), and
     * reads no output */
    const char *src = k->source;
    const char *st = src ? strstr(src, "tl.store(") : NULL;
    char ptr[16];
    int len = 0;
    if (!st || strstr(st + 1, "tl.store(") || strstr(src, "tl.load(in_out_ptr") ||
        sscanf(st, "tl.store(%15[a-z_0-9] + (%n", ptr, &len) != 1 || !len)
        return 0;
    if (strcmp(ptr, "in_out_ptr0") &&
        (strncmp(ptr, "out_ptr", 7) || !ptr[7] || strspn(ptr + 7, "0123456789") != strlen(ptr + 7)))
        return 0;
    /* over a dimension that is not the last, the kernel's view (outer, C, inner) is the input's
     * own layout only when the input is contiguous */
    if (d != rank - 1 && !placeholder_contiguous(k, x)) return 0;
    snprintf(out, cap, "%s", ptr);
    *dim = d;
    *rank_out = rank;
    *scale = c;
    return 1;
}

/* The row form: the last dimension, stored at the row index (x0). */
static int lse_row(const kfacts *k, char *out, size_t cap, double *scale) {
    int d = -1, rank = 0;
    char o[16];
    const char *st = k->source ? strstr(k->source, "tl.store(") : NULL;
    if (!lse_match(k, o, sizeof o, &d, &rank, scale) || d != rank - 1 || !st ||
        strncmp(st + strlen("tl.store(") + strlen(o), " + (x0), ", 9))
        return 0;
    snprintf(out, cap, "%s", o);
    return 1;
}

int builtin_logsumexp_match(const kfacts *k, char *out, size_t cap, double *scale) {
    double c = 1;
    int ok = lse_row(k, out, cap, &c);
    if (scale) *scale = ok ? c : 1;
    return ok;
}

int builtin_col_logsumexp_match(const kfacts *k, char *out, size_t cap, int *dim, double *scale) {
    int d = -1, rank = 0;
    char o[16];
    if (!lse_match(k, o, sizeof o, &d, &rank, scale) || d == rank - 1) return 0;
    /* the output at the flat position: the stored index is a name assigned xindex itself */
    const char *st = strstr(k->source, "tl.store(") + strlen("tl.store(") + strlen(o);
    char xi[16], line[48];
    int len = 0;
    if (sscanf(st, " + (%15[a-z0-9_])%n", xi, &len) != 1 || !len || strncmp(st + len, ", ", 2)) return 0;
    snprintf(line, sizeof line, "\n    %s = xindex\n", xi);
    if (!strstr(k->source, line)) return 0;
    snprintf(out, cap, "%s", o);
    *dim = d;
    return 1;
}
