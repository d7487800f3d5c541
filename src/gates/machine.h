/* machine.h — gate 1's machine-code precision check (issue 11, item 4) for a form-P candidate:
 * each launch of its plan is specialised with concrete values (plan_eval.h), compiled by Triton
 * in a disposable sandbox process (sandbox.h, worker/kopt_compile.py: no GPU needed), the cubin
 * is disassembled by `cuobjdump -sass` (also sandboxed: it parses untrusted bytes) and the SASS
 * classified (sass.h); a class the replaced kernel's types do not allow refuses the candidate.
 * What the sandboxed compiler says about its kernel is not believed: the cubin and Triton's
 * metadata of the compile cross back, the metadata checked against what was asked (kmeta.h: a
 * name, warps, stages, target or launch feature other than asked refuses the candidate) and
 * rewritten by kopt. With machine_opts.keep_dir, each launch's cubin, kopt's metadata and the
 * launch's spec are kept for a loader that runs them without the candidate's Python
 * (worker/kopt/cubin.py: in `kopt verify` the gates' judged module runs them, docs/SECURITY.md);
 * with kernel_prefix the file is compiled under the stitched module's names.
 *
 * `kopt lint --sass` runs it with values given on the command line, `kopt verify` (sass_gate.h)
 * with the launch the gates captured.
 *
 * Ownership: machine_report holds malloc'd kernel names (machine_report_free); opts' strings
 * are borrowed. machine_find_cuobjdump keeps the path it asked a python for, for the process.
 */
#ifndef KOPT_MACHINE_H
#define KOPT_MACHINE_H

#include <jansson.h>

#include "gates/candidate.h"
#include "gates/plan.h"
#include "gates/plan_eval.h"
#include "gates/sass.h"
#include "sandbox/sandbox.h"
#include "util/err.h"

/* A compile server (issue 11's judge overhead): kopt_compile.py --serve in one sandbox session
 * (sandbox.h) for many compiles -- Triton imported and its compiler warmed up once, each compile
 * in a forked child in a directory of its own, every process but the server killed after each
 * (it must be PID 1 of a PID namespace: without one, machine_server_open refuses and the
 * compiles stay one sandbox process each). When the server does not answer a compile (it died,
 * it broke the protocol), it is closed and that compile, and every later one, runs in a process
 * of its own: the server only saves time, it never decides a verdict.
 * Ownership: the caller owns the struct; machine_server_close releases what open took. */
typedef struct machine_server {
    int open;
    sandbox_session s;
    char *dir;             /* its work directory (kopt's, removed at close) */
    char protections[320]; /* what its compiles ran under */
    double start_s;        /* seconds to start it: python, triton's import, the warm-up compile */
} machine_server;

typedef struct machine_opts {
    const char *python;        /* absolute path of a python3 with triton */
    const char *script;        /* the compile script; NULL: worker/kopt_compile.py under kopt's root */
    const char *cuobjdump;     /* absolute path, or NULL: machine_find_cuobjdump */
    int arch;                  /* compute capability x10 (90: H100/H200) */
    double timeout_s;          /* per compile (0: 120 s) */
    machine_server *server;    /* open: compile there (NULL or closed: a sandbox process each) */
    const char *keep_dir;      /* non-NULL: each launch's cubin, kopt's checked metadata and its spec are
                               copied there (launch<i>.cubin, .json, .spec.json) for a loader */
    const char *kernel_prefix; /* non-NULL: the replaced kernel's name K; the file is compiled with its
                                  names prefixed _kopt_K__ as the stitched module has them
                                  (candidate_prefixed_text), so the kernels kept carry those names */
} machine_opts;

/* Starts a compile server for o's python and script (o->server is not used). 0 with srv open;
 * KOPT_E_PYTHON / KOPT_E_INTERNAL with e saying why not (no PID namespace, triton missing, the
 * sandbox), srv then closed. */
int machine_server_open(const machine_opts *o, machine_server *srv, kerr *e);
void machine_server_close(machine_server *srv);

typedef struct machine_launch {
    char *kernel;
    unsigned classes; /* SASS_BIT set */
    int violation;    /* a sass_class outside the allowed set, or -1 */
    int line;         /* the SASS line of the violation's first instruction */
    char insn[96];    /* that instruction */
    size_t ninsn;     /* instructions read */
    uint64_t digest;  /* sass_digest of its listing (sass.h): which machine code was judged */
    long long shared; /* shared memory bytes, from the compile's checked metadata (kmeta.h) */
    int num_stages;   /* the stages it was compiled with (likewise) */
} machine_launch;

typedef struct machine_report {
    machine_launch launches[PLAN_MAX_LAUNCHES];
    size_t n;
    unsigned allowed;
    char protections[320]; /* sandbox_describe of the compiles */
    double compile_s;      /* wall seconds in the sandbox, all launches */
} machine_report;

/* Check every launch of p (the plan of form-P candidate c as written) with values v (lets are
 * evaluated into it). 0: checked, see r (refused when a launch has violation >= 0);
 * KOPT_E_CANDIDATE: a kernel does not compile or import (e says why); KOPT_E_USAGE: a value is
 * missing; KOPT_E_PYTHON: no usable python/triton/cuobjdump; KOPT_E_INTERNAL: the sandbox. */
int machine_check(const candidate *c, const launch_plan *p, plan_values *v, unsigned allowed, const machine_opts *o,
                  machine_report *r, kerr *e);
void machine_report_free(machine_report *r);

/* The report as kopt's reports write it: {"launches": [{"kernel", "instructions", "classes"}],
 * "allowed", "sandbox", "compile_s"} (new reference); a class set as an array of its names. */
json_t *machine_report_json(const machine_report *r);
json_t *machine_classes_json(unsigned classes);

/* The absolute path of an executable: `name` itself when it holds a '/', else searched on
 * $PATH; NULL when there is none. malloc'd. */
char *machine_which(const char *name);

/* The python for the sandboxed compile: `given`, else $KOPT_PYTHON, else python3, as an absolute
 * path (machine_which; malloc'd into *out). KOPT_E_PYTHON when there is none. */
int machine_python(const char *given, char **out, kerr *e);

/* $KOPT_CUOBJDUMP, else cuobjdump on PATH, else the one Triton ships next to its ptxas (asked
 * from `python`). malloc'd absolute path. */
int machine_find_cuobjdump(const char *python, char **out, kerr *e);

/* Whether gate 1's machine-code check can run by default: the python (machine_python of
 * `given`) and a cuobjdump (machine_find_cuobjdump, which imports its triton unless one is
 * configured or on PATH) are both found. 0 with *python set (malloc'd), else an error code with
 * e saying what is missing and *python NULL. */
int machine_tools(const char *given, char **python, kerr *e);

#endif
