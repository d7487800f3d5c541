#include "gates/gate1.h"

#include <stdlib.h>

#include "gates/sass.h"

const char *gate1_kernel_dtype(const art_kernel *k) {
    unsigned a = 0; /* the reduced-precision pointer types, read as the machine-code check reads them */
    for (size_t i = 0; i < k->nparams; i++) a |= sass_allowed_for_types((const char *const *)&k->params[i].type, 1);
    return a & SASS_BIT(SASS_FP8)        ? "float8"
           : a & SASS_BIT(SASS_CVT_BF16) ? "bfloat16"
           : a & SASS_BIT(SASS_CVT_F16)  ? "float16"
                                         : NULL;
}

int gate1_check(const candidate *c, const art_kernel *k, const static_opts *so, kbuf *stitch, char **why,
                json_t **report) {
    kerr ce = {0};
    static_report sr = {0};
    *why = NULL;
    if (report) *report = NULL;
    static_opts o = so ? *so : (static_opts){0};
    if (!o.model_dtype) o.model_dtype = gate1_kernel_dtype(k);
    int bad = static_check(c, &o, &sr, &ce);
    if (report) *report = static_report_json(&sr);
    static_report_free(&sr);
    if (bad) {
        *why = kasprintf("%s", ce.msg);
        return 0;
    }
    if (candidate_check_interface(c, k, &ce)) {
        *why = kasprintf("launch interface: %s", ce.msg);
        return 0;
    }
    kbuf st = KBUF_INIT;
    if (candidate_form(c) == CAND_FORM_L) kbuf_puts(&st, candidate_launch_shim());
    if (candidate_stitch_text(c, k->name, &st, &ce)) {
        kbuf_free(&st);
        *why = kasprintf("stitching: %s", ce.msg);
        return 0;
    }
    kbuf_append(stitch, st.data, st.len);
    kbuf_free(&st);
    return 1;
}
