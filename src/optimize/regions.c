/* regions.c — the region phase of `kopt optimize` (optimize_int.h): before kernels are searched
 * one by one, runs of consecutive launches that a region template can replace together
 * (artifact/region.h, agents/builtin_region.c) are searched as one kernel. The session is
 * regioned for the search; when no candidate for the region passes the four gates, it goes
 * back to Inductor's module and the member kernels are searched one by one as usual. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/region.h"
#include "optimize/optimize_int.h"
#include "util/buf.h"
#include "util/log.h"

enum { MAX_REGION_LAUNCHES = 8 };

static json_t *row_named(json_t *kernels, const char *name) {
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k)
        if (!strcmp(json_string_value(json_object_get(k, "name")), name)) return k;
    return NULL;
}

/* The family whose template applies to launches [f, l] of a as one region, or KF_NONE. */
static kfamily region_template(const artifact *a, int f, int l) {
    kbuf b = KBUF_INIT;
    kerr e = {0};
    artifact *r = NULL;
    kfamily t = KF_NONE;
    if (!region_build(a, f, l, REGION_PREFIX "probe", &b, &e) && !artifact_parse(kbuf_str(&b), b.len, &r, &e)) {
        int k = artifact_find_kernel(r, REGION_PREFIX "probe");
        if (k >= 0) {
            json_t *kc = opt_kernel_ctx(r, k, NULL);
            kfacts kf;
            kfacts_read(kc, &kf);
            t = builtin_region_match(&kf);
            kfacts_free(&kf);
            json_decref(kc);
        }
    }
    artifact_free(r);
    kbuf_free(&b);
    return t;
}

int opt_has_vendor_region(const artifact *a) {
    for (size_t i = 0; i < a->nlaunches; i++)
        if (a->launches[i].kind == ART_L_VENDOR && region_vendor_op(a->launches[i].callee) >= 0 &&
            region_template(a, (int)i, (int)i) != KF_NONE)
            return 1;
    return 0;
}

/* The longest run [*f, *l] of at least two Triton launches starting at or after `from` that a
 * template applies to, or one ATen call a template replaces (f == l); 0 when there is none. */
static int next_region(const artifact *a, int from, int *f, int *l, kfamily *tmpl) {
    int n = (int)a->nlaunches;
    for (int s = from; s < n; s++) {
        if (a->launches[s].kind == ART_L_VENDOR && region_vendor_op(a->launches[s].callee) >= 0) {
            kfamily t = region_template(a, s, s);
            if (t != KF_NONE) { *f = *l = s; *tmpl = t; return 1; }
            continue;
        }
        if (a->launches[s].kind != ART_L_TRITON || s + 1 >= n) continue;
        int end = s;
        while (end + 1 < n && end + 1 - s < MAX_REGION_LAUNCHES && a->launches[end + 1].kind == ART_L_TRITON) end++;
        for (int e = end; e > s; e--) {
            kfamily t = region_template(a, s, e);
            if (t != KF_NONE) { *f = s; *l = e; *tmpl = t; return 1; }
        }
    }
    return 0;
}


int opt_regions(octx *c, const json_t *profile, int kernels_left, kerr *e) {
    int from = 0, f = 0, l = 0, rc = 0;
    kfamily tmpl = KF_NONE;
    while (!rc && !opt_over_budget(c) && next_region(c->a, from, &f, &l, &tmpl)) {
        from = l + 1;
        art_strlist members = {0};
        json_t *args = json_array();
        double time_ms = 0, share = 0;
        for (int i = f; i <= l; i++) {
            const char *callee = c->a->launches[i].callee;
            art_strlist_push(&members, kstrdup(callee));
            const json_t *prow = row_named((json_t *)json_object_get(profile, "launches"), callee);
            json_array_append(args, json_object_get(prow, "args"));
            if (c->a->launches[i].kind == ART_L_VENDOR) {
                const vrow *vr = krows_find_vendor(&c->rows, callee);
                if (vr) { time_ms += vr->time_ms; share += vr->share; }
            } else {
                const krow *kr = krows_find(&c->rows, callee);
                if (kr) { time_ms += kr->time_ms; share += kr->share; }
            }
        }
        if (f == l) opt_progress(c, "library call %s (%s): searching a Triton kernel in its place", c->a->launches[f].callee, kfamily_name(tmpl));
        else opt_progress(c, "region of %d launches (%s): searching it as one kernel", l - f + 1, kfamily_name(tmpl));
        const char *name = NULL;
        kerr re = {0};
        int rr = verify_session_regionize(c->vs, f, l, &name, &re);
        if (rr == KOPT_E_CANDIDATE) {   /* the probe built it; the session could not: skip it */
            log_warn("region %d..%d: %s", f, l, re.msg);
            art_strlist_free(&members);
            json_decref(args);
            continue;
        }
        if (rr) { *e = re; art_strlist_free(&members); json_decref(args); return rr; }
        c->a = verify_session_artifact(c->vs);
        krow *row = krows_add(&c->rows, name);
        krow_set(&row->kernel_kind, "region");
        krow_set(&row->cls, "region");
        row->time_ms = time_ms;
        row->share = share;
        row->members = members;   /* the row owns the list from here */
        int rk = artifact_find_kernel(c->a, name);   /* the ATen ops it computes, for the reports */
        if (rk >= 0) {
            row->has_aten_ops = 1;
            for (size_t j = 0; j < c->a->kernels[rk].aten_ops.n; j++)
                art_strlist_push(&row->aten_ops, kstrdup(c->a->kernels[rk].aten_ops.v[j]));
        }
        json_t *target = json_pack("{s:s, s:f, s:f, s:o, s:s}", "kernel", name, "time_ms", time_ms, "share", share, "args",
                                   args, "class", "region");
        const char *nm = row->name;   /* the row's copy: `name` lives in the artifact unregion frees */
        rc = opt_search_kernel(c, target, row, kernels_left + 1, e);
        json_decref(target);
        int won = !rc && row->status == KROW_OPTIMIZED;
        if (won) {
            for (size_t j = 0; j < row->members.n; j++) {
                const char *m = row->members.v[j];
                vrow *vr = krows_find_vendor(&c->rows, m);   /* one row per op name: every call's region */
                if (vr) art_strlist_push(&vr->replaced_by, kstrdup(nm));
                krow *mr = krows_find(&c->rows, m);
                if (!mr) continue;
                mr->status = KROW_IN_REGION;
                krow_setf(&mr->why, "replaced with the other kernels of %s", nm);
            }
        } else if (!rc) {
            /* back to Inductor's module; the members are searched one by one */
            if ((rc = verify_session_unregion(c->vs, e))) return rc;
            c->a = verify_session_artifact(c->vs);
            krow_setf(&row->why, "%s; the member kernels were searched one by one", row->why ? row->why : "");
            /* regions further on are found in Inductor's module again, from the next launch */
            continue;
        }
        /* the regioned artifact numbers launches anew: the region is one launch now */
        from = f + 1;
    }
    return rc;
}
