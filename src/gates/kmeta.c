/* kmeta.c — see kmeta.h. */
#include "gates/kmeta.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"

/* An integer field's value into *v; 0 when it is missing or not an integer. */
static int int_field(const json_t *o, const char *k, long long *v) {
    const json_t *x = json_object_get(o, k);
    if (!json_is_integer(x)) return 0;
    *v = (long long)json_integer_value(x);
    return 1;
}

/* A field that must be absent, null, false, 0 or empty for a plain launch. */
static int plain(const json_t *o, const char *k) {
    const json_t *x = json_object_get(o, k);
    return !x || json_is_null(x) || json_is_false(x) || (json_is_integer(x) && json_integer_value(x) == 0) ||
           (json_is_array(x) && json_array_size(x) == 0);
}

int kmeta_check(const char *text, size_t len, const char *want_name, int want_warps, int want_stages, int want_arch,
                kmeta *out, kerr *e) {
    memset(out, 0, sizeof *out);
    if (len > KMETA_TEXT_MAX)
        return kerr_set(e, KOPT_E_CANDIDATE, "the compile's metadata is larger than %u bytes", KMETA_TEXT_MAX);
    json_error_t je;
    json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je); /* one value a key: no reading games */
    if (!json_is_object(m)) {
        json_decref(m);
        return kerr_set(e, KOPT_E_CANDIDATE, "the compile's metadata is not a JSON object");
    }
    int rc = 0;
    long long warps = 0, stages = 0, ctas = 0, shared = -1, arch = 0, ws = 0;
    const char *name = json_string_value(json_object_get(m, "name"));
    const json_t *tg = json_object_get(m, "target");
    const char *backend = json_string_value(json_object_get(tg, "backend"));
    if (!name || strcmp(name, want_name) || strlen(name) >= sizeof out->name)
        rc =
            kerr_set(e, KOPT_E_CANDIDATE, "the compiled kernel is named %s, not %s", name ? name : "(none)", want_name);
    else if (!int_field(m, "num_warps", &warps) || warps != want_warps)
        rc = kerr_set(e, KOPT_E_CANDIDATE, "the compiled kernel has %lld warps, %d were asked", warps, want_warps);
    else if (!int_field(m, "num_stages", &stages) || stages < 1 || (want_stages > 0 && stages != want_stages))
        rc = kerr_set(e, KOPT_E_CANDIDATE, "the compiled kernel has %lld stages, %d were asked", stages, want_stages);
    else if (!backend || strcmp(backend, "cuda") || !int_field(tg, "arch", &arch) || arch != want_arch ||
             !int_field(tg, "warp_size", &ws) || ws != 32)
        rc = kerr_set(e, KOPT_E_CANDIDATE, "the compiled kernel's target is not cuda sm_%d with 32-thread warps",
                      want_arch);
    else if (!int_field(m, "num_ctas", &ctas) || ctas != 1)
        rc = kerr_set(e, KOPT_E_CANDIDATE, "the compiled kernel asks for %lld CTAs a program (clusters), not 1", ctas);
    else if (!int_field(m, "shared", &shared) || shared < 0 || shared > KMETA_SHARED_MAX)
        rc = kerr_set(e, KOPT_E_CANDIDATE, "the compiled kernel's shared memory (%lld bytes) is not within 0..%lld",
                      shared, KMETA_SHARED_MAX);
    else {
        static const char *const MUST_BE_PLAIN[] = {"global_scratch_size",     "profile_scratch_size",
                                                    "launch_cooperative_grid", "launch_pdl",
                                                    "tensordesc_meta",         "tmem_size"};
        for (size_t i = 0; i < sizeof MUST_BE_PLAIN / sizeof *MUST_BE_PLAIN && !rc; i++)
            if (!plain(m, MUST_BE_PLAIN[i]))
                rc = kerr_set(e, KOPT_E_CANDIDATE, "the compiled kernel's %s is set: kopt launches plain kernels only",
                              MUST_BE_PLAIN[i]);
    }
    if (!rc) {
        snprintf(out->name, sizeof out->name, "%s", name);
        out->num_warps = (int)warps;
        out->num_stages = (int)stages;
        out->arch = (int)arch;
        out->shared = shared;
    }
    json_decref(m);
    return rc;
}

char *kmeta_json(const kmeta *m) {
    json_t *o = json_pack("{s:s, s:{s:s, s:i, s:i}, s:i, s:i, s:i, s:I, s:i, s:i, s:i, s:i, s:i, s:b, s:b, s:[], s:i}",
                          "name", m->name, "target", "backend", "cuda", "arch", m->arch, "warp_size", 32, "num_warps",
                          m->num_warps, "num_stages", m->num_stages, "num_ctas", 1, "shared", (json_int_t)m->shared,
                          "tmem_size", 0, "global_scratch_size", 0, "global_scratch_align", 1, "profile_scratch_size",
                          0, "profile_scratch_align", 1, "launch_cooperative_grid", 0, "launch_pdl", 0,
                          "tensordesc_meta", "warp_size", 32);
    char *s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(o);
    return s;
}
