#include "gates/gate1.h"

#include <stdlib.h>
#include <string.h>

const char *gate1_kernel_dtype(const art_kernel *k) {
    int rank = 0;   /* 0 none, 1 float16, 2 bfloat16, 3 float8 */
    for (size_t i = 0; i < k->nparams; i++) {
        const char *t = k->params[i].type;
        if (!t || t[0] != '*') continue;
        t++;
        if (!strncmp(t, "fp8", 3)) rank = 3;
        else if (!strcmp(t, "bf16") && rank < 2) rank = 2;
        else if (!strcmp(t, "fp16") && rank < 1) rank = 1;
    }
    static const char *const names[] = {NULL, "float16", "bfloat16", "float8"};
    return names[rank];
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
