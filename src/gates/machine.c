/* machine.c — see machine.h. */
#include "gates/machine.h"

#include "gates/kmeta.h"

#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"

#define MACHINE_CUBIN_MAX (64u << 20)

static int keep_uid(void) {
    const char *k = getenv("KOPT_SANDBOX_KEEP_UID");
    return k && *k && strcmp(k, "0");
}

/* An executable `name` on $PATH (malloc'd), or NULL. */
static char *on_path(const char *name) {
    const char *path = getenv("PATH");
    if (!path) return NULL;
    char *dup = kstrdup(path), *save = NULL;
    for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char *f = kasprintf("%s/%s", d, name);
        if (f[0] == '/' && access(f, X_OK) == 0) {
            free(dup);
            return f;
        }
        free(f);
    }
    free(dup);
    return NULL;
}

char *machine_which(const char *name) {
    if (strchr(name, '/')) { /* not resolved: a venv's python is a link that must stay one */
        char cwd[4096];
        char *r = name[0] == '/' ? kstrdup(name) : getcwd(cwd, sizeof cwd) ? kasprintf("%s/%s", cwd, name) : NULL;
        if (r && access(r, X_OK) == 0) return r;
        free(r);
        return NULL;
    }
    return on_path(name);
}

int machine_python(const char *given, char **out, kerr *e) {
    const char *env = getenv("KOPT_PYTHON");
    const char *py = given ? given : env && *env ? env : "python3";
    if (!(*out = machine_which(py)))
        return kerr_set(e, KOPT_E_PYTHON, "cannot find python '%s'; hint: --python or KOPT_PYTHON", py);
    return 0;
}

int machine_tools(const char *given, char **python, kerr *e) {
    char *cu = NULL;
    int rc = machine_python(given, python, e);
    if (!rc) rc = machine_find_cuobjdump(*python, &cu, e);
    free(cu);
    if (rc) {
        free(*python);
        *python = NULL;
    }
    return rc;
}

/* Run a trusted tool in the sandbox anyway (it reads untrusted input), in a fresh directory. */
static int run_tool(char *const argv[], const char *in, size_t inlen, const char *const *env, double timeout,
                    size_t out_cap, const char *dir, sandbox_result *r, kerr *e) {
    /* no PID namespace: cuobjdump crashes (SIGSEGV) in one whose /proc is the host's */
    sandbox_opts so = {
        .workdir = dir, .timeout_s = timeout, .env = env, .out_cap = out_cap, .keep_uid = keep_uid(), .no_pidns = 1};
    return sandbox_run(&so, argv, in, inlen, r, e);
}

int machine_find_cuobjdump(const char *python, char **out, kerr *e) {
    *out = NULL;
    const char *env = getenv("KOPT_CUOBJDUMP");
    if (env && *env) {
        if (env[0] != '/' || access(env, X_OK) != 0)
            return kerr_set(e, KOPT_E_PYTHON, "KOPT_CUOBJDUMP=%s is not an executable absolute path", env);
        *out = kstrdup(env);
        return 0;
    }
    if ((*out = on_path("cuobjdump"))) return 0;
    /* asking python costs an import of triton: once per python and process */
    static char *found, *found_for;
    if (found && !strcmp(found_for, python)) {
        *out = kstrdup(found);
        return 0;
    }
    char *dir = NULL;
    int rc = fs_mkdtemp("kopt-find-", &dir, e);
    if (rc) return rc;
    char *argv[] = {(char *)python, "-I", "-c",
                    "import os, triton; print(os.path.join(os.path.dirname(triton.__file__), 'backends', "
                    "'nvidia', 'bin', 'cuobjdump'))",
                    NULL};
    static const char *const ENV[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
    sandbox_result r;
    rc = run_tool(argv, NULL, 0, ENV, 60, 1 << 16, dir, &r, e);
    fs_rmtree(dir);
    free(dir);
    if (rc) return KOPT_E_INTERNAL;
    char *p = kstrdup(kbuf_str(&r.out));
    p[strcspn(p, "\r\n")] = 0;
    int ok = r.exit_code == 0 && p[0] == '/' && access(p, X_OK) == 0;
    sandbox_result_free(&r);
    if (!ok) {
        free(p);
        return kerr_set(e, KOPT_E_PYTHON, "no cuobjdump: not on PATH and none beside %s's triton; set KOPT_CUOBJDUMP",
                        python);
    }
    free(found), free(found_for);
    found = kstrdup(p);
    found_for = kstrdup(python);
    *out = p;
    return 0;
}

/* The request kopt_compile.py reads. */
static char *compile_request(const kbuf *src, const plan_spec *s, int arch, double timeout_s) {
    json_t *sig = json_object(), *cx = json_object(), *attrs = json_object();
    for (size_t i = 0; i < s->nsig; i++) {
        json_object_set_new(sig, s->sig_names[i], json_string(s->sig_types[i]));
        if (s->sig_div16[i]) json_object_set_new(attrs, s->sig_names[i], json_string("D"));
    }
    for (size_t i = 0; i < s->ncx; i++) {
        json_t *v = json_loads(s->cx_values[i], JSON_DECODE_ANY, NULL);
        json_object_set_new(cx, s->cx_names[i], v ? v : json_null());
    }
    json_t *rq = json_pack("{s:s%, s:s, s:o, s:o, s:o, s:i, s:i, s:i}", "source", src->data, src->len, "kernel",
                           s->kernel, "signature", sig, "constexprs", cx, "attrs", attrs, "num_warps", s->num_warps,
                           "num_stages", s->num_stages, "arch", arch);
    if (timeout_s > 0) json_object_set_new(rq, "timeout_s", json_real(timeout_s));
    char *text = json_dumps(rq, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(rq);
    return text;
}

/* The sandbox's file dir/name: a regular file, not a link, of 1 to max bytes, read whole into
 * *data (malloc'd, NUL-terminated) and *len; -1 when it is not that. */
static int read_sandbox_file(const char *dir, const char *name, size_t max, char **data, size_t *len) {
    char *path = fs_join(dir, name);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    free(path);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (unsigned long long)st.st_size > max) {
        if (fd >= 0) close(fd);
        return -1;
    }
    char *buf = kmalloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    if (got != (size_t)st.st_size) {
        free(buf);
        return -1;
    }
    buf[got] = 0;
    *data = buf;
    *len = got;
    return 0;
}

/* Read dir/kernel.cubin (at most MACHINE_CUBIN_MAX bytes) and write it to a fresh file of kopt's
 * own in out_dir. */
static int take_cubin(const char *dir, const char *out_dir, char **out_path, kerr *e) {
    char *data = NULL;
    size_t len = 0;
    if (read_sandbox_file(dir, "kernel.cubin", MACHINE_CUBIN_MAX, &data, &len))
        return kerr_set(e, KOPT_E_CANDIDATE, "the sandboxed compile left no usable cubin");
    *out_path = fs_join(out_dir, "kernel.cubin");
    int rc = fs_write(*out_path, data, len, e);
    free(data);
    return rc;
}

/* Read dir/kernel.json (Triton's metadata of the compile, at most KMETA_TEXT_MAX bytes), check it
 * against what was asked (kmeta.h) into *km and write kopt's own copy to out_dir/kernel.json. */
static int take_metadata(const char *dir, const plan_spec *s, int arch, const char *out_dir, kmeta *km, kerr *e) {
    char *text = NULL;
    size_t len = 0;
    if (read_sandbox_file(dir, "kernel.json", KMETA_TEXT_MAX, &text, &len))
        return kerr_set(e, KOPT_E_CANDIDATE, "%s: the sandboxed compile left no usable metadata", s->kernel);
    kerr me = {0};
    int rc = kmeta_check(text, len, s->kernel, s->num_warps, s->num_stages, arch, km, &me);
    free(text);
    if (rc) return kerr_set(e, KOPT_E_CANDIDATE, "%s: the compile's metadata: %s", s->kernel, me.msg);
    char *mine = kmeta_json(km), *out = fs_join(out_dir, "kernel.json");
    rc = fs_write(out, mine, strlen(mine), e);
    free(mine), free(out);
    return rc;
}

/* Maps a compile's answer (kopt_compile.py's JSON) to a verdict: the cubin of `dir` copied into
 * `mine` (*cubin) and its checked metadata written there (*km), or the candidate's error. */
static int compile_answer(const plan_spec *s, const json_t *ans, const char *dir, const char *mine, int arch,
                          const char *stderr_tail, double timeout_s, char **cubin, kmeta *km, kerr *e) {
    const char *err = json_string_value(json_object_get(ans, "error"));
    if (json_is_true(json_object_get(ans, "timeout")))
        return kerr_set(e, KOPT_E_CANDIDATE, "compiling %s in the sandbox took more than %.0f s", s->kernel, timeout_s);
    if (!json_is_true(json_object_get(ans, "ok"))) {
        int no_triton = err && strstr(err, "triton does not import");
        size_t tl = strlen(stderr_tail);
        return kerr_set(e, no_triton ? KOPT_E_PYTHON : KOPT_E_CANDIDATE, "%s: %s%s%s", s->kernel,
                        err ? err : "the sandboxed compile failed", err ? "" : ": ",
                        err ? "" : (tl > 300 ? stderr_tail + tl - 300 : stderr_tail));
    }
    int rc = take_cubin(dir, mine, cubin, e);
    return rc ? rc : take_metadata(dir, s, arch, mine, km, e);
}

/* One compile in a sandbox process of its own: 0 with *cubin (in `mine`), or an error. */
static int compile_oneshot(const kbuf *src, const plan_spec *s, const machine_opts *o, const kbuf *script_text,
                           const char *mine, char **cubin, kmeta *km, machine_report *r, kerr *e) {
    char *sbx = NULL;
    int rc = fs_mkdtemp("kopt-sbx-", &sbx, e);
    if (rc) return rc;
    char *home = kasprintf("HOME=%s", sbx), *cache = kasprintf("TRITON_CACHE_DIR=%s/cache", sbx),
         *th = kasprintf("TRITON_HOME=%s", sbx);
    const char *env[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", home, cache, th, NULL};
    char *req = compile_request(src, s, o->arch ? o->arch : 90, 0);
    /* the script is copied in: the sandbox's uid may not reach kopt's tree */
    char *script = fs_join(sbx, "kopt_compile.py");
    rc = fs_write(script, script_text->data, script_text->len, e);
    char *argv[] = {(char *)o->python, "-I", script, NULL};
    sandbox_opts so = {.workdir = sbx,
                       .timeout_s = o->timeout_s > 0 ? o->timeout_s : 120,
                       .env = env,
                       .out_cap = 1 << 20,
                       .keep_uid = keep_uid()};
    sandbox_result sr;
    if (!rc) rc = sandbox_run(&so, argv, req, strlen(req), &sr, e);
    else rc = -1;
    free(req);
    free(script);
    if (!rc) {
        r->compile_s += sr.wall_s;
        snprintf(r->protections, sizeof r->protections, "%s", sandbox_describe(&sr));
        json_t *ans = json_loads(kbuf_str(&sr.out), JSON_DISABLE_EOF_CHECK, NULL);
        if (sr.exit_code == 127 || sr.exit_code == 126)
            rc = kerr_set(e, KOPT_E_PYTHON, "the sandbox could not start %s%s: %.200s", o->python,
                          sr.dropped_uid ? " as nobody (make it readable by all, or set KOPT_SANDBOX_KEEP_UID=1)" : "",
                          kbuf_str(&sr.err));
        else if (sr.timed_out)
            rc = kerr_set(e, KOPT_E_CANDIDATE, "compiling %s in the sandbox took more than %.0f s", s->kernel,
                          so.timeout_s);
        else
            rc = compile_answer(s, ans, sbx, mine, o->arch ? o->arch : 90, kbuf_str(&sr.err), so.timeout_s, cubin, km,
                                e);
        json_decref(ans);
        sandbox_result_free(&sr);
    } else {
        rc = KOPT_E_INTERNAL;
    }
    free(home), free(cache), free(th);
    fs_rmtree(sbx);
    free(sbx);
    return rc;
}

/* The server's directory name of an answer: letters, digits and '-' only (no way out of it). */
static const char *served_dir(const json_t *ans) {
    const char *d = json_string_value(json_object_get(ans, "dir"));
    if (!d || !*d || strlen(d) > 64) return NULL;
    for (const char *p = d; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) return NULL;
    return d;
}

/* One compile by the server: 0 with *cubin, an error of the candidate's, or -1 when the server
 * could not answer (it is then closed, and the caller compiles in a process of its own). */
static int compile_served(machine_server *srv, const kbuf *src, const plan_spec *s, const machine_opts *o,
                          const char *mine, char **cubin, kmeta *km, machine_report *r, kerr *e) {
    double timeout = o->timeout_s > 0 ? o->timeout_s : 120;
    char *req = compile_request(src, s, o->arch ? o->arch : 90, timeout);
    kbuf line = KBUF_INIT;
    kerr se = {0};
    double t0 = clock_now();
    int rc = sandbox_ask(&srv->s, req, 1 << 16, timeout + 10, &line, &se);
    free(req);
    json_t *ans = rc ? NULL : json_loads(kbuf_str(&line), 0, NULL);
    kbuf_free(&line);
    const char *d = served_dir(ans);
    if (rc || !d) { /* not an answer: the server is done for */
        json_decref(ans);
        machine_server_close(srv);
        return -1;
    }
    r->compile_s += clock_now() - t0;
    snprintf(r->protections, sizeof r->protections, "%s", srv->protections);
    char *dir = fs_join(srv->dir, d);
    rc = compile_answer(s, ans, dir, mine, o->arch ? o->arch : 90, "", timeout, cubin, km, e);
    fs_rmtree(dir);
    free(dir);
    json_decref(ans);
    return rc;
}

/* What a loader needs to launch the compiled kernel of launch spec s, as JSON text (caller
 * frees): the kernel's parameters in declared order, each one's Triton type ("constexpr" for those
 * fixed by value), the constexpr values, the parameters specialised as divisible by 16, warps and
 * stages. From kopt's own specialisation, not from the sandbox. */
static char *launch_spec_json(const plan_spec *s) {
    json_t *names = json_array(), *sig = json_array(), *cx = json_object(), *div = json_array();
    for (size_t i = 0; i < s->nargs; i++) {
        const char *type = "constexpr";
        for (size_t k = 0; k < s->nsig; k++)
            if (!strcmp(s->sig_names[k], s->arg_names[i])) {
                type = s->sig_types[k];
                if (s->sig_div16[k]) json_array_append_new(div, json_string(s->arg_names[i]));
            }
        json_array_append_new(names, json_string(s->arg_names[i]));
        json_array_append_new(sig, json_string(type));
    }
    for (size_t k = 0; k < s->ncx; k++) {
        json_t *v = json_loads(s->cx_values[k], JSON_DECODE_ANY, NULL);
        json_object_set_new(cx, s->cx_names[k], v ? v : json_null());
    }
    json_t *o =
        json_pack("{s:s, s:o, s:o, s:o, s:o, s:i, s:i}", "kernel", s->kernel, "arg_names", names, "signature", sig,
                  "constexprs", cx, "divisible_by_16", div, "num_warps", s->num_warps, "num_stages", s->num_stages);
    char *text = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}

/* Writes keep/launch<li>.<ext>. */
static int keep_file(const char *keep, size_t li, const char *ext, const char *data, size_t len, kerr *e) {
    char *name = kasprintf("launch%zu.%s", li, ext), *to = fs_join(keep, name);
    int rc = fs_write(to, data, len, e);
    free(name), free(to);
    return rc;
}

/* Keeps launch li for a loader in `keep`: its cubin (the file disassembled), kopt's metadata of
 * the compile (km) and its spec (launch_spec_json): launch<li>.cubin, .json, .spec.json. */
static int keep_launch(const plan_spec *s, size_t li, const char *cubin, const kmeta *km, const char *keep, kerr *e) {
    char *data = NULL, *meta = kmeta_json(km), *spec = launch_spec_json(s);
    size_t len = 0;
    int rc = fs_read(cubin, &data, &len, e);
    if (!rc) rc = keep_file(keep, li, "cubin", data, len, e);
    if (!rc) rc = keep_file(keep, li, "json", meta, strlen(meta), e);
    if (!rc) rc = keep_file(keep, li, "spec.json", spec, strlen(spec), e);
    free(data), free(meta), free(spec);
    return rc;
}

/* Compile one specialised launch (number li) in the sandbox, disassemble and classify it into L. */
static int check_launch(const kbuf *src, const plan_spec *s, size_t li, unsigned allowed, const machine_opts *o,
                        const char *cuobjdump, const kbuf *script_text, machine_launch *L, machine_report *r, kerr *e) {
    char *mine = NULL;
    int rc = fs_mkdtemp("kopt-sass-", &mine, e);
    if (rc) return rc;
    char *cubin = NULL;
    kmeta km;
    rc = -1;
    if (o->server && o->server->open) rc = compile_served(o->server, src, s, o, mine, &cubin, &km, r, e);
    if (rc == -1) rc = compile_oneshot(src, s, o, script_text, mine, &cubin, &km, r, e);
    if (!rc) {
        L->shared = km.shared;
        L->num_stages = km.num_stages;
        if (o->keep_dir) rc = keep_launch(s, li, cubin, &km, o->keep_dir, e);
    }
    if (!rc) {
        char *dargv[] = {(char *)cuobjdump, "-sass", cubin, NULL};
        static const char *const DENV[] = {"PATH=/usr/bin:/bin", "LANG=C", NULL};
        sandbox_result dr;
        if (run_tool(dargv, NULL, 0, DENV, 60, 256u << 20, mine, &dr, e) != 0) {
            rc = KOPT_E_INTERNAL;
        } else {
            sass_report rep;
            if (dr.exit_code != 0 || sass_scan(kbuf_str(&dr.out), &rep) == 0) {
                rc = kerr_set(e, KOPT_E_PYTHON, "%s -sass gave no listing for %s (exit %d, signal %d%s): %.200s",
                              cuobjdump, s->kernel, dr.exit_code, dr.term_signal, dr.timed_out ? ", timed out" : "",
                              kbuf_str(&dr.err));
            } else {
                L->classes = rep.classes;
                L->ninsn = rep.ninsn;
                L->digest = rep.digest;
                L->violation = sass_violation(rep.classes, allowed);
                if (L->violation >= 0) {
                    L->line = rep.first_line[L->violation];
                    snprintf(L->insn, sizeof L->insn, "%s", rep.first_insn[L->violation]);
                }
            }
            sandbox_result_free(&dr);
        }
    }
    free(cubin);
    fs_rmtree(mine);
    free(mine);
    return rc;
}

/* The compile script's text: o->script, else worker/kopt_compile.py under kopt's root. */
static int read_script(const machine_opts *o, kbuf *script, kerr *e) {
    char *root = o->script ? NULL : fs_kopt_root();
    char *path = o->script ? kstrdup(o->script) : fs_join(root, "worker/kopt_compile.py"), *text = NULL;
    size_t len = 0;
    int rc = fs_read(path, &text, &len, e);
    if (!rc) kbuf_append(script, text, len);
    free(text), free(path), free(root);
    return rc;
}

int machine_server_open(const machine_opts *o, machine_server *srv, kerr *e) {
    memset(srv, 0, sizeof *srv);
    if (!o->python || o->python[0] != '/')
        return kerr_set(e, KOPT_E_INTERNAL, "machine_server_open: python must be an absolute path");
    double t0 = clock_now();
    kbuf script = KBUF_INIT;
    int rc = read_script(o, &script, e);
    if (!rc) rc = fs_mkdtemp("kopt-srv-", &srv->dir, e);
    char *path = srv->dir ? fs_join(srv->dir, "kopt_compile.py") : NULL;
    if (!rc) rc = fs_write(path, script.data, script.len, e);
    kbuf_free(&script);
    char *home = srv->dir ? kasprintf("HOME=%s", srv->dir) : NULL,
         *th = srv->dir ? kasprintf("TRITON_HOME=%s", srv->dir) : NULL;
    const char *env[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", home, th, NULL};
    char *argv[] = {(char *)o->python, "-I", path, "--serve", NULL};
    /* the CPU limit is per process: each compile's child has its own */
    sandbox_opts so = {.workdir = srv->dir, .env = env, .cpu_s = 24 * 3600, .keep_uid = keep_uid()};
    if (!rc && sandbox_open(&so, argv, &srv->s, e)) rc = KOPT_E_INTERNAL;
    free(path);
    kbuf hello = KBUF_INIT;
    if (!rc) {
        srv->open = 1;
        kerr he = {0};
        json_t *h = NULL;
        if (!srv->s.pidns)
            rc = kerr_set(e, KOPT_E_INTERNAL, "no PID namespace here (%s): a compile's leftovers could outlive it",
                          srv->s.ns ? "refused" : srv->s.ns_why);
        else if (sandbox_ask(&srv->s, NULL, 1 << 12, o->timeout_s > 0 ? o->timeout_s : 120, &hello, &he))
            rc = kerr_set(e, KOPT_E_PYTHON, "the compile server did not start: %s", he.msg);
        else if (!(h = json_loads(kbuf_str(&hello), 0, NULL)) || !json_is_true(json_object_get(h, "ready")))
            rc =
                kerr_set(e, KOPT_E_PYTHON, "the compile server is not ready: %s",
                         json_string_value(json_object_get(h, "error")) ? json_string_value(json_object_get(h, "error"))
                                                                        : kbuf_str(&hello));
        json_decref(h);
    }
    kbuf_free(&hello);
    free(home), free(th);
    if (rc) {
        machine_server_close(srv);
        return rc;
    }
    snprintf(srv->protections, sizeof srv->protections, "%s; a forked child of a compile server",
             sandbox_session_describe(&srv->s));
    srv->start_s = clock_now() - t0;
    return 0;
}

void machine_server_close(machine_server *srv) {
    if (srv->open) {
        sandbox_result r;
        sandbox_close(&srv->s, &r);
        sandbox_result_free(&r);
    }
    if (srv->dir) fs_rmtree(srv->dir);
    free(srv->dir);
    memset(srv, 0, sizeof *srv);
}

int machine_check(const candidate *c, const launch_plan *p, plan_values *v, unsigned allowed, const machine_opts *o,
                  machine_report *r, kerr *e) {
    memset(r, 0, sizeof *r);
    r->allowed = allowed;
    if (!o->python || o->python[0] != '/')
        return kerr_set(e, KOPT_E_INTERNAL, "machine_check: python must be an absolute path");
    int rc = plan_eval_lets(p, v, e);
    if (!rc) rc = plan_eval_launches(p, v, e);
    if (rc) return rc;
    /* every launch specialised first: a missing value is said before anything runs */
    plan_spec *specs = kcalloc(p->nlaunches ? p->nlaunches : 1, sizeof *specs);
    size_t ns = 0;
    for (; ns < p->nlaunches && !rc; ns++) rc = plan_specialize(c, p, ns, v, &specs[ns], e);
    if (rc) ns--; /* the failed one cleaned itself up */
    char *cuobj = NULL;
    if (!rc) {
        if (o->cuobjdump) cuobj = kstrdup(o->cuobjdump);
        else rc = machine_find_cuobjdump(o->python, &cuobj, e);
    }
    /* the compile script, read once: each sandbox gets a copy (its uid may not reach kopt's tree) */
    kbuf script = KBUF_INIT;
    if (!rc) rc = read_script(o, &script, e);
    /* the source compiled: the file as written, or with its names prefixed as the stitched module
     * has them (kernel_prefix), each launch's kernel then asked for under that name */
    kbuf src = KBUF_INIT;
    if (o->kernel_prefix) candidate_prefixed_text(c, o->kernel_prefix, &src);
    else kbuf_append(&src, c->text, c->len);
    for (size_t i = 0; i < ns && !rc; i++) {
        machine_launch *L = &r->launches[r->n++];
        L->kernel = kstrdup(specs[i].kernel);
        L->violation = -1;
        if (o->kernel_prefix) {
            char *named = kasprintf("_kopt_%s__%s", o->kernel_prefix, specs[i].kernel);
            free(specs[i].kernel);
            specs[i].kernel = named;
        }
        rc = check_launch(&src, &specs[i], i, allowed, o, cuobj, &script, L, r, e);
    }
    kbuf_free(&src);
    kbuf_free(&script);
    for (size_t i = 0; i < ns; i++) plan_spec_free(&specs[i]);
    free(specs);
    free(cuobj);
    return rc;
}

json_t *machine_report_json(const machine_report *r) {
    json_t *ls = json_array();
    for (size_t i = 0; i < r->n; i++) {
        char dg[17];
        snprintf(dg, sizeof dg, "%016" PRIx64, r->launches[i].digest);
        json_array_append_new(ls,
                              json_pack("{s:s, s:I, s:o, s:s, s:I, s:i}", "kernel", r->launches[i].kernel,
                                        "instructions", (json_int_t)r->launches[i].ninsn, "classes",
                                        machine_classes_json(r->launches[i].classes), "sass_digest", dg, "shared_bytes",
                                        (json_int_t)r->launches[i].shared, "num_stages", r->launches[i].num_stages));
    }
    return json_pack("{s:o, s:o, s:s, s:f}", "launches", ls, "allowed", machine_classes_json(r->allowed), "sandbox",
                     r->protections, "compile_s", r->compile_s);
}

json_t *machine_classes_json(unsigned classes) {
    json_t *a = json_array();
    for (int k = 0; k < SASS_NCLASSES; k++)
        if (classes & SASS_BIT(k)) json_array_append_new(a, json_string(sass_class_name((sass_class)k)));
    return a;
}

void machine_report_free(machine_report *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) free(r->launches[i].kernel);
    r->n = 0;
}
