/* art_region.c — a region launcher written by region_build (region.h) read back as a kernel:
 *
 *     # kopt-region: K1 K2 ...
 *     # kopt-region-signature: in_ptr0:*fp32 out_ptr0:*fp32
 *     # kopt-region-aten: aten.exp, ...
 *     def NAME__launch(...):
 *         ...
 *     NAME = _KoptLaunch(NAME__launch)
 *
 * becomes a kernel NAME of kind ART_K_REGION (heuristic "region"): its statement spans the def
 * through the binding (what a stitched form-L candidate replaces), its source is that text, its
 * parameters and roles come from the signature line (in_ptr* in, out_ptr* out, in_out_ptr*
 * inout), its ATen ops from the aten line, the ATen call of a vendor region from its
 * `# kopt-region-vendor:` line (art_kernel.vendor_call). Ownership as in artifact.h. */
#include <stdlib.h>
#include <string.h>

#include "artifact/art_internal.h"
#include "artifact/region.h"

/* The end of the line p is on: its newline, or end. */
static const char *eol(const char *p, const char *end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

static const char *line_after(const char *p, const char *end, const char *marker) {
    size_t m = strlen(marker);
    while (p < end) {
        const char *le = eol(p, end);
        if ((size_t)(le - p) >= m && !memcmp(p, marker, m)) return p + m;
        p = le < end ? le + 1 : end;
    }
    return NULL;
}

/* The space-separated words of [p, end) appended to out. */
static void words(const char *p, const char *end, art_strlist *out) {
    while (p < end) {
        while (p < end && *p == ' ') p++;
        const char *q = p;
        while (q < end && *q != ' ') q++;
        if (q > p) art_strlist_push(out, kstrndup(p, (size_t)(q - p)));
        p = q;
    }
}

static void add_param(art_kernel *k, const char *s, size_t n) {
    const char *colon = memchr(s, ':', n);
    if (!colon) return;
    k->params = krealloc(k->params, (k->nparams + 1) * sizeof *k->params);
    art_param *p = &k->params[k->nparams++];
    p->name = kstrndup(s, (size_t)(colon - s));
    p->type = kstrndup(colon + 1, n - (size_t)(colon + 1 - s));
    p->role = !strncmp(p->name, "in_out_ptr", 10) ? ART_ROLE_INOUT
            : !strncmp(p->name, "out_ptr", 7)     ? ART_ROLE_OUT
            : !strncmp(p->name, "in_ptr", 6)      ? ART_ROLE_IN
                                                  : ART_ROLE_SCALAR;
}

int art_parse_region(art_ctx *c, size_t li, size_t lower) {
    artifact *a = c->a;
    const art_line *D = &c->lines[li];
    if (D->t1 - D->t0 < 3) return 0;
    const pytok *fn = &c->toks[D->t0 + 1];
    size_t pl = strlen(REGION_PREFIX);
    if (fn->kind != PYT_NAME || fn->len <= pl + 8 || memcmp(a->text + fn->off, REGION_PREFIX, pl) ||
        memcmp(a->text + fn->off + fn->len - 8, "__launch", 8))
        return 0;
    size_t end = li + 1;
    while (end < c->nlines && c->lines[end].depth > D->depth) end++;
    if (end >= c->nlines) return 0;
    const art_line *B = &c->lines[end];
    size_t nlen = fn->len - 8;
    const pytok *bt = &c->toks[B->t0];
    if (B->t1 - B->t0 != 6 || bt[0].kind != PYT_NAME || bt[0].len != nlen || memcmp(a->text + bt[0].off, a->text + fn->off, nlen) ||
        !pytok_is_op(a->text, &bt[1], "=") || !pytok_is_name(a->text, &bt[2], "_KoptLaunch") ||
        !pytok_is_op(a->text, &bt[3], "(") || bt[4].len != fn->len || memcmp(a->text + bt[4].off, a->text + fn->off, fn->len))
        return 0;
    art_span com = art_comment_before(a->text, lower, D->phys_start);
    const char *cp = a->text + com.off, *ce = cp + com.len;
    const char *sig = line_after(cp, ce, "# kopt-region-signature:");
    if (!com.len || !sig) return 0;
    a->kernels = art_grow(a->kernels, &c->kcap, a->nkernels, sizeof *a->kernels);
    art_kernel *k = &a->kernels[a->nkernels++];
    memset(k, 0, sizeof *k);
    k->name = kstrndup(a->text + fn->off, nlen);
    k->kind = ART_K_REGION;
    k->heuristic = kstrdup("region");
    k->line = D->line;
    size_t s = D->phys_start, e = (size_t)bt[5].off + bt[5].len;
    k->stmt = (art_span){s, e - s};
    k->literal = (art_span){s, 0};
    k->comment = com;
    k->source = kstrndup(a->text + s, e - s);
    k->source_len = e - s;
    art_strlist sw = {0};
    words(sig, eol(sig, ce), &sw);
    for (size_t i = 0; i < sw.n; i++) add_param(k, sw.v[i], strlen(sw.v[i]));
    art_strlist_free(&sw);
    const char *at = line_after(cp, ce, "# kopt-region-aten:");
    if (at) {
        /* art_comment_list reads "marker[a, b]": give it the text after the colon */
        char *tmp = kasprintf("[%.*s]", (int)(eol(at, ce) - at), at);
        art_comment_list(tmp, strlen(tmp), "[", &k->aten_ops);
        free(tmp);
    }
    const char *vc = line_after(cp, ce, "# kopt-region-vendor: ");
    if (vc) k->vendor_call = kstrndup(vc, (size_t)(eol(vc, ce) - vc));
    const char *ks = line_after(cp, ce, "# kopt-region:");
    if (ks) words(ks, eol(ks, ce), &k->members);
    return 1;
}

int region_binding_is(const art_kernel *k, const char *b) {
    if (k->kind != ART_K_REGION || !k->members.n) return 0;
    for (size_t i = 0; i < k->members.n; i++) {
        size_t n = strlen(k->members.v[i]);
        if (strncmp(b, k->members.v[i], n)) return 0;
        b += n;
        if (i + 1 < k->members.n && *b++ != '+') return 0;
    }
    return *b == '\0';
}
