/* summary_md.c — summary.md (contract in render.h). */
#include "bench/summary.h"

void bench_summary_md(const bench_report *r, kbuf *out) {
    bench_tables t = {0};
    bench_tables_build(r, &t);
    kbuf_puts(out, "# ");
    bench_summary_title(r, out);
    kbuf_puts(out, "\n");
    if (r->interrupted)
        kbuf_printf(out, "\n**Interrupted** (signal %d): the problems that were running are not done; run the same "
                         "command again to finish the sweep.\n", r->interrupted);
    for (int i = 0; i < BENCH_T_PROBLEMS; i++) bench_table_md(&t.t[i], out);
    kbuf_puts(out, "\nThe chart of every problem's model times (eager, torch.compile default, max-autotune, kopt, "
                   "memory floor) is in summary.html.\n");
    bench_table_md(&t.t[BENCH_T_PROBLEMS], out);
    for (int i = 0; BENCH_T_AFTER_PROBLEMS[i] >= 0; i++)
        if (t.t[BENCH_T_AFTER_PROBLEMS[i]].nrows) bench_table_md(&t.t[BENCH_T_AFTER_PROBLEMS[i]], out);
    kbuf_puts(out, "\n## Definitions\n\n");
    for (int i = 0; BENCH_DEFINITIONS[i]; i++) kbuf_printf(out, "- %s\n", BENCH_DEFINITIONS[i]);
    bench_tables_free(&t);
}
