#include "gates/gate1.h"

#include <stdlib.h>

int gate1_check(const candidate *c, const art_kernel *k, const static_opts *so, kbuf *stitch, char **why,
                json_t **report) {
    kerr ce = {0};
    static_report sr = {0};
    *why = NULL;
    if (report) *report = NULL;
    int bad = static_check(c, so, &sr, &ce);
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
