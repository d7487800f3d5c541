/* verify.h — `kopt verify`: the four-gate cascade over user-supplied candidates, and the
 * re-stitched output (docs/CANDIDATES.md). The optimizer calls the same entry points for each
 * candidate it generates.
 *
 * verify_run compiles the problem (torch.compile default; with max_autotune also
 * max-autotune-no-cudagraphs, and the faster of the two modules is the one candidates are
 * stitched into and timed against: the *start* module), parses the single output module,
 * and for each candidate in turn runs gate 1 (static rules, interface, compile-only), gate 2
 * (isolation on captured + fresh-seed arguments), gate 3 (model level on fresh seeds against
 * the eager model; float64 error ratio as fallback) and gate 4 (interleaved timing against the
 * baseline module). A candidate that crashes or hangs the worker is refused at the gate where
 * that happened; the worker restarts and the next candidate goes on. The best accepted
 * candidate per kernel is stitched; a candidate bound to `replaces=K1+K2+...` replaces those
 * consecutive launches as one region kernel (region.h, verify_session_regionize); several kernels' winners are combined and the combination
 * is re-checked by gates 3 and 4 (if it fails, the single best winner is kept). When nothing
 * passes, the output is the compiler's module unchanged. Before gate 1 compiles a candidate the
 * worker captures its launch (capture_launch): the module gates 1-4 judge, and the one written,
 * guard the replaced launch on that signature and keep Inductor's kernel for any other call,
 * with the verified candidate's sha256 in the header (guard.h).
 *
 * Output directory: optimized_module.py, kopt_meta.json, kopt_args.pt (+ kopt_attrs.pt),
 * kopt_loader.py, report.json, report.txt (the reports unless opts.no_reports).
 * Ownership: *doc is a new reference for the caller; opts and the worker are borrowed.
 */
#ifndef KOPT_VERIFY_H
#define KOPT_VERIFY_H

#include <jansson.h>

#include "util/err.h"
#include "worker/worker.h"

typedef struct verify_cand {
    const char *kernel;   /* kernel name, or NULL: taken from the file's `replaces=` line */
    const char *path;     /* candidate file */
} verify_cand;

typedef struct verify_opts {
    const char *problem;
    const char *out_dir;          /* created if missing */
    const char *workdir;          /* scratch (must exist) */
    const verify_cand *cands;
    size_t ncands;
    int seeds;                    /* fresh seeds for gates 2 and 3 (default 3) */
    double rho_max;               /* gate 3 (default 10) */
    double abs_bound;             /* gate 3: floor of the scale-aware absolute bound (default 5e-3) */
    int no_adversarial;           /* gate 3 without its adversarial input sets (tests, debugging) */
    int measure_floor;            /* measure the model's memory floor at setup (gate 4's physics
                                   * check); kopt optimize sets it from its own profile instead */
    double min_gain;              /* gate 4 (default 0.02) */
    int rounds;                   /* gate 4 interleaved rounds (default 40) */
    int allow_precision_change;
    int allow_launcher;           /* accept form-L files' own `def launch` (static.h, rule launcher) */
    const char *sass_python;      /* non-NULL: gate 1's machine-code check (sass_gate.h) with this
                                     python (absolute path, with triton) on form-P candidates */
    const char *sass_mode;        /* "required", "auto" or "off" (NULL: not asked, not reported) */
    const char *sass_note;        /* why the check is off (NULL when it runs) */
    int jit_judge;                /* the gates run a form-P candidate through Triton's JIT in the worker
                                     (its file imported there) even where gate 1 kept its cubins; by
                                     default they run the kept cubins (kopt.cubin, no candidate Python) */
    const char *memcheck;         /* non-NULL: gate 2's compute-sanitizer memcheck (memcheck.h) with
                                     this compute-sanitizer, around a worker of memcheck_python */
    const char *memcheck_python;
    int max_autotune;             /* also compile max-autotune-no-cudagraphs; start from the faster */
    double ma_timeout_s;          /* the max-autotune compile's limit (<= 0: the default compile's) */
    double timeout_s;             /* per candidate step (compile, isolate, runs); default 180 */
    int no_reports;               /* finish writes the module, loader and metadata, not report.* */
    void (*progress)(const char *stage, void *ctx);
    void *progress_ctx;
} verify_opts;

/* Returns 0 when at least one candidate was accepted, KOPT_E_CANDIDATE when all were refused
 * (the outputs are still written, holding the baseline), or another code when the pipeline
 * itself failed. */
int verify_run(worker *w, const verify_opts *o, json_t **doc, kerr *e);

/* The same pipeline as a session, for callers that generate candidates (kopt optimize):
 * open (load, compile, parse, instrument), check any number of candidate files, finish
 * (choose, combine, write OUT), close. The session document `doc` is borrowed and filled. */
typedef struct verify_session verify_session;
struct artifact;
int verify_session_open(worker *w, const verify_opts *o, json_t *doc, verify_session **out, kerr *e);
/* What gates 1-4 decided for one candidate, typed (the document's record says it in JSON). */
typedef enum verify_verdict_kind {
    VERIFY_ACCEPTED,
    VERIFY_REFUSED,   /* at gate refused_at */
    VERIFY_ERROR,     /* kopt's own resources (it ran out of GPU memory): no verdict on the candidate */
} verify_verdict_kind;

typedef struct verify_verdict {
    verify_verdict_kind kind;
    int refused_at;       /* 1..4 when refused, else 0 */
    int host_slower;      /* refused at gate 4 as slower as the model is called (host dispatch
                           * included) although its GPU time passed */
    double speedup;       /* gate 4's estimate when accepted, else 0 */
    const char *reason;   /* borrowed from the record (lives as long as the document): why it was
                           * refused, or the error; NULL when accepted */
} verify_verdict;

/* Gates 1-4 for one candidate file; *rec (borrowed, inside doc) receives its record and *out
 * (when not NULL) the verdict. A refused candidate is not an error: the return code is
 * non-zero only when the pipeline itself cannot go on. */
int verify_session_check(verify_session *v, const char *kernel, const char *path, json_t **rec, verify_verdict *out,
                         kerr *e);
/* Gate 1's machine-code check for the candidates checked from now on: with `python` (borrowed,
 * must outlive them; an absolute path with triton), or off (NULL). The session starts with
 * o->sass_python; kopt optimize turns it on for an LLM's candidates only. */
void verify_session_set_machine_check(verify_session *v, const char *python);
int verify_session_finish(verify_session *v, kerr *e);
void verify_session_close(verify_session *v);   /* NULL-safe */
const struct artifact *verify_session_artifact(const verify_session *v);
const char *verify_session_module(const verify_session *v);          /* Inductor's module */
/* The module candidates are stitched into and isolated against: Inductor's, or after
 * verify_session_regionize the regioned one (semantically the same module). */
const char *verify_session_base_module(const verify_session *v);
/* After verify_session_finish: the output module as the gates judge it -- each winner whose
 * machine code gate 1 kept runs from those cubins, no line of a candidate's file -- where that
 * differs from the module that ships (out_dir/optimized_module.py); NULL otherwise. A later
 * measurement of the output in the worker takes this one. Borrowed; valid until close. */
const char *verify_session_judged_output(const verify_session *v);
/* Launches first..last of the current artifact become one region kernel (region.h): the
 * session's artifact, base module and instrumented module become the regioned ones (gate 4
 * and the final measurement still compare against Inductor's module). *name (borrowed from
 * the artifact) is the region kernel's. KOPT_E_CANDIDATE when the launches cannot form one. */
int verify_session_regionize(verify_session *v, int first, int last, const char **name, kerr *e);
/* Back to Inductor's artifact (no-op when not regioned); winners of region kernels are dropped. */
int verify_session_unregion(verify_session *v, kerr *e);
const char *verify_session_args(const verify_session *v);            /* its captured call() args */
const char *verify_session_profile_module(const verify_session *v);  /* instrumented copy */
/* Gate 4's measurement of `module` against Inductor's (interleaved, L2 flushed, paired
 * bootstrap CI): fills g with baseline_ms, candidate_ms, speedup {estimate, ci95_lo, ci95_hi},
 * passed (against min_gain) or a reason. Returns 1 passed, 0 not, < 0 on a pipeline error. */
int verify_session_measure(verify_session *v, const char *module, json_t *g, double *speedup, kerr *e);
/* The launch spec of kernel index `kernel`'s first launch (PROTOCOL.md: {module, args,
 * launch, roles}; the worker captures the arguments when it needs them). Borrowed. */
int verify_session_launch_args(verify_session *v, int kernel, const json_t **spec, kerr *e);
/* The final measurement of `module` (the re-stitched winners): torch.compile default's module,
 * `module` and, when compiled, max-autotune's, interleaved; fills g with default_ms,
 * optimized_ms, max_autotune_ms, speedup_vs_default, speedup_vs_max_autotune (paired 95% CIs),
 * the same two timed as the model is called (as_called_vs_default / _max_autotune, host
 * dispatch included; where the first host rounds put `module` behind a compiler module while its
 * GPU time does not, taken again from those rounds pooled with GATE4_HOST_RECHECK_ROUNDS more, as
 * gate 4 does, the first figures kept in as_called_recheck), and baseline_ms / speedup against
 * the module the session started from.
 * When `module` is one of the compiler's own (a kept baseline), its figures against that one are
 * 1 by identity: it is not timed against itself. Otherwise its timed rounds are re-checked as in
 * gate 4 (fresh contents, GATE4_RECHECK_ROUNDS rounds compared with the outputs of the module the
 * search started from), and when they disagree, or its timing fails (also in the added host
 * rounds), *refused is set, g["reason"] says why and 0 is returned: the caller outputs a compiler
 * module instead (g's figures are not to be used then). */
int verify_session_final(verify_session *v, const char *module, json_t *g, int *refused, kerr *e);
/* Makes the output folder hold torch.compile's own module -- max-autotune's (use_ma) or
 * default's -- with its captured arguments, in place of what verify_session_finish wrote (the
 * document's "replaced" becomes empty): the final measurement found it faster. *module
 * (borrowed from the session) is its path, for measuring it again. */
int verify_session_output_compiled(verify_session *v, int use_ma, const char **module, kerr *e);
/* Medians of the eager model and the compiled modules (timed once, at setup when max-autotune
 * was compiled, else on first call): {eager_ms, default_ms, max_autotune_ms?, start}. Borrowed;
 * NULL on failure (e set). */
const json_t *verify_session_baselines(verify_session *v, kerr *e);
/* compile's working_set (inputs, parameters, buffers, outputs and intermediates), borrowed. */
const json_t *verify_session_working_set(const verify_session *v);

/* kopt's memory target for its main phase (bytes of device memory, the CUDA context included),
 * from the model's working set: VERIFY_MEM_CAP_WS times it, or the working set plus
 * VERIFY_MEM_CAP_EXTRA where that is more, but never above VERIFY_MEM_CAP_MAX times it (below
 * 0.86 GiB the extra would pass issue 10's 3x; there the worker degrades early, which costs
 * little at that size). The session sends it to the worker (`limits`), which degrades to stay
 * within it (captured launches forgotten, kept outputs and gate 2's references staged in host
 * memory, seed inputs redrawn in place, the loaded inputs displaced for a seed's run, smaller
 * comparison chunks: PROTOCOL.md); it is a target, not a limit: nothing fails at it. Issue 10
 * asks for a peak of at most 3x the working set; the margin below that is for the allocator's
 * rounding and the comparison's temporaries. Where the CUDA context alone is near the working
 * set, no degrading reaches 3x (the bench's memory table shows the peak without the context).
 * 0 when ws_bytes is not positive (no cap). */
#define VERIFY_MEM_CAP_WS 2.5
#define VERIFY_MEM_CAP_MAX 2.75
#define VERIFY_MEM_CAP_EXTRA (1.5 * 1073741824.0)
double verify_memory_cap(double ws_bytes);
double verify_session_setup_s(const verify_session *v);
/* The model's memory-traffic floor (ms) and the I/O bytes behind it, for gate 4's physics check
 * (gate4_below_floor); 0 leaves the check off, and so does a floor that the compiled baseline
 * (baseline_ms, its measured time) already runs below (the floor then counts traffic the model
 * does not make). */
void verify_session_set_floor(verify_session *v, double floor_ms, double io_bytes, double baseline_ms);
int verify_session_started_from_max_autotune(const verify_session *v);
/* Write Inductor's module with `kernel`'s statement replaced by `text` to `path`. */
int verify_session_write_module(verify_session *v, const char *kernel, const char *text, const char *path,
                                kerr *e);

/* The readable report of a verify document (appended to out). */
struct kbuf;
void verify_report_text(const json_t *doc, struct kbuf *out);

#endif
