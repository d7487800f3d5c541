/* output.c — writing results.json, summary.md and summary.html (contract in render.h). */
#include <stdlib.h>
#include <string.h>

#include "bench/render.h"
#include "util/fs.h"

/* Writes dir/name atomically. */
static int bo_write(const char *dir, const char *name, const char *text, kerr *e) {
    char *p = fs_join(dir, name);
    int rc = fs_write(p, text, strlen(text), e);
    free(p);
    return rc;
}

int bench_write_outputs(const bench_report *r, const char *dir, char **json_text, kerr *e) {
    if (json_text) *json_text = NULL;
    int rc = fs_mkdirs(dir, e);
    if (rc) return rc;
    json_t *doc = bench_results_json(r);
    char *js = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
    json_decref(doc);
    if (!js) return kerr_set(e, KOPT_E_INTERNAL, "cannot serialise results.json");
    kbuf md = KBUF_INIT, html = KBUF_INIT;
    bench_summary_md(r, &md);
    bench_summary_html(r, &html);
    if (!(rc = bo_write(dir, "results.json", js, e)) && !(rc = bo_write(dir, "summary.md", kbuf_str(&md), e)))
        rc = bo_write(dir, "summary.html", kbuf_str(&html), e);
    kbuf_free(&md);
    kbuf_free(&html);
    if (!rc && json_text)
        *json_text = js;
    else
        free(js);
    return rc;
}
