/* reports.c — the human-readable reports of `kopt optimize` (src/report/ renders them). */
#include <stdlib.h>

#include "optimize/optimize.h"
#include "report/report.h"
#include "util/fs.h"

int optimize_write_reports(const json_t *doc, const char *out_dir, kerr *e) {
    char *md = fs_join(out_dir, "report.md"), *html = fs_join(out_dir, "report.html");
    int rc = report_write_markdown(doc, md, e);
    if (!rc) rc = report_write_html(doc, html, e);
    free(md);
    free(html);
    return rc;
}
