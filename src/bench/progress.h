/* progress.h — the text `kopt bench` shows while it runs: the progress line (rewritten in
 * place on a terminal) and the plain line written per finished problem (--json, -v or no
 * terminal). Pure formatting, so the arithmetic (ETA) is testable.
 *
 * Ownership: everything is borrowed; the functions append to the caller's kbuf.
 */
#ifndef KOPT_BENCH_PROGRESS_H
#define KOPT_BENCH_PROGRESS_H

#include <stddef.h>

#include "bench/record.h"
#include "util/buf.h"

typedef struct bench_progress {
    size_t total;               /* problems selected */
    size_t ended;               /* with a result: finished now, or ended in an earlier run */
    size_t nlanes;
    const char *const *running; /* per lane: the problem it runs, or NULL when idle */
    size_t waiting;             /* problems another live kopt bench is running */
    double mean_wall_s;         /* of the problems finished by this invocation; NAN: none yet */
    double geomean;             /* of their speedups over torch.compile default; NAN: none */
    size_t geomean_n;
} bench_progress;

/* mean_wall_s * left / lanes; NAN when the mean is unknown, 0 when nothing is left. */
double bench_eta_s(double mean_wall_s, size_t left, size_t lanes);

/* "12/50 done, 38 left, ETA 14m05s, geomean 1.072x (11) | 0:level1/3_x.py 1:-" */
void bench_progress_format(const bench_progress *p, kbuf *out);

/* "[12/50] level1/3_x.py done in 93.2 s on lane 0: 1.072x over default (95% CI 1.05-1.09)",
 * or "... failed (exit 5, model: <message>)", "... timeout after 300 s". */
void bench_progress_finished(const bench_record *r, size_t ended, size_t total, kbuf *out);

#endif
