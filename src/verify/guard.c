#include "verify/guard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gates/candidate.h"
#include "util/tknobs.h"

/* ---------------------------------------------------------------- the signature (JSON edge) */

void guard_sig_free(guard_sig *s) {
    if (!s) return;
    for (size_t i = 0; i < s->nargs; i++) {
        free(s->args[i].shape);
        free(s->args[i].stride);
        free(s->args[i].dtype);
        free(s->args[i].device);
    }
    free(s->args);
    s->args = NULL;
    s->nargs = 0;
}

/* Whether s is a plain lowercase word ([a-z0-9_], starting with a letter): safe in a literal. */
static int plain_word(const char *s) {
    if (!s || !(*s >= 'a' && *s <= 'z')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

/* An array of integers into a fresh int64 array of *n items. 0 ok, -1 malformed. */
static int int_array(const json_t *a, int64_t **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (!json_is_array(a)) return -1;
    size_t m = json_array_size(a);
    int64_t *v = m ? kcalloc(m, sizeof *v) : NULL;
    for (size_t i = 0; i < m; i++) {
        const json_t *x = json_array_get(a, i);
        if (!json_is_integer(x)) { free(v); return -1; }
        v[i] = (int64_t)json_integer_value(x);
    }
    *out = v;
    *n = m;
    return 0;
}

/* One argument description: {"shape","stride","dtype","device"?,...} or {"value": v}. */
static int arg_from_json(const json_t *d, size_t i, guard_arg *g, kerr *e) {
    memset(g, 0, sizeof *g);
    if (!json_is_object(d)) return kerr_set(e, KOPT_E_WORKER, "capture_launch: argument %zu is not an object", i);
    const json_t *shape = json_object_get(d, "shape");
    if (shape) {
        size_t ns = 0, nt = 0;
        const char *dt = json_string_value(json_object_get(d, "dtype"));
        const json_t *dev = json_object_get(d, "device");
        g->kind = GUARD_TENSOR;
        if (int_array(shape, &g->shape, &ns) || int_array(json_object_get(d, "stride"), &g->stride, &nt) || ns != nt)
            return kerr_set(e, KOPT_E_WORKER, "capture_launch: argument %zu: shape and stride must be integer arrays "
                                              "of one length", i);
        g->ndim = ns;
        if (!plain_word(dt)) return kerr_set(e, KOPT_E_WORKER, "capture_launch: argument %zu: bad dtype", i);
        g->dtype = kstrdup(dt);
        if (dev && !json_is_null(dev)) {
            if (!plain_word(json_string_value(dev)))
                return kerr_set(e, KOPT_E_WORKER, "capture_launch: argument %zu: bad device", i);
            g->device = kstrdup(json_string_value(dev));
        }
        const json_t *al = json_object_get(d, "aligned16");
        if (al && !json_is_boolean(al))
            return kerr_set(e, KOPT_E_WORKER, "capture_launch: argument %zu: aligned16 must be a boolean", i);
        g->align16 = al ? json_is_true(al) : -1;
        return 0;
    }
    if (!json_object_get(d, "value"))
        return kerr_set(e, KOPT_E_WORKER, "capture_launch: argument %zu has neither a shape nor a value", i);
    const json_t *v = json_object_get(d, "value");
    if (json_is_boolean(v)) { g->kind = GUARD_BOOL; g->ival = json_is_true(v); }
    else if (json_is_integer(v)) { g->kind = GUARD_INT; g->ival = (long long)json_integer_value(v); }
    else if (json_is_real(v)) { g->kind = GUARD_FLOAT; g->fval = json_real_value(v); }
    else if (json_is_null(v)) g->kind = GUARD_NONE;
    else g->kind = GUARD_ANY;   /* a repr string or a sequence: the capture cannot pin it */
    return 0;
}

int guard_sig_from_json(const json_t *args, guard_sig *out, kerr *e) {
    memset(out, 0, sizeof *out);
    if (!json_is_array(args)) return kerr_set(e, KOPT_E_WORKER, "capture_launch: 'args' is not an array");
    size_t n = json_array_size(args);
    out->args = n ? kcalloc(n, sizeof *out->args) : NULL;
    for (size_t i = 0; i < n; i++) {
        out->nargs = i + 1;   /* what arg_from_json allocated is freed on failure */
        if (arg_from_json(json_array_get(args, i), i, &out->args[i], e)) {
            guard_sig_free(out);
            return e->code;
        }
    }
    out->nargs = n;
    return 0;
}

/* Whether s is a version string safe in a Python literal: 1-47 of [0-9A-Za-z.+_-]. */
static int version_word(const char *s) {
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
              strchr(".+_-", s[n])))
            return 0;
    return n > 0 && n < sizeof ((guard_env *)0)->triton;
}

int guard_env_from_json(const json_t *ready, guard_env *out, kerr *e) {
    memset(out, 0, sizeof *out);
    out->cap_major = out->cap_minor = -1;
    const json_t *t = json_object_get(ready, "triton"), *cap = json_object_get(ready, "capability");
    if (t && !json_is_null(t)) {
        if (!json_is_string(t) || !version_word(json_string_value(t)))
            return kerr_set(e, KOPT_E_WORKER, "ready: 'triton' is not a version string");
        strcpy(out->triton, json_string_value(t));
    }
    if (cap && !json_is_null(cap)) {
        const json_t *ma = json_array_get(cap, 0), *mi = json_array_get(cap, 1);
        if (!json_is_array(cap) || json_array_size(cap) != 2 || !json_is_integer(ma) || !json_is_integer(mi) ||
            json_integer_value(ma) < 0 || json_integer_value(ma) > 99 || json_integer_value(mi) < 0 ||
            json_integer_value(mi) > 99)
            return kerr_set(e, KOPT_E_WORKER, "ready: 'capability' is not [major, minor]");
        out->cap_major = (int)json_integer_value(ma);
        out->cap_minor = (int)json_integer_value(mi);
    }
    return 0;
}

/* ---------------------------------------------------------------- Python text */

static void int_tuple(const int64_t *v, size_t n, kbuf *out) {
    kbuf_putc(out, '(');
    for (size_t i = 0; i < n; i++) kbuf_printf(out, "%s%lld", i ? ", " : "", (long long)v[i]);
    kbuf_puts(out, n == 1 ? ",)" : ")");
}

/* A float literal Python reads back to the same double. */
static void py_float(double x, kbuf *out) {
    if (isnan(x)) kbuf_puts(out, "float('nan')");
    else if (isinf(x)) kbuf_puts(out, x > 0 ? "float('inf')" : "float('-inf')");
    else {
        char b[40];
        snprintf(b, sizeof b, "%.17g", x);
        kbuf_puts(out, b);
        if (!strpbrk(b, ".eE")) kbuf_puts(out, ".0");
    }
}

void guard_sig_python(const guard_sig *s, kbuf *out) {
    kbuf_putc(out, '(');
    for (size_t i = 0; i < s->nargs; i++) {
        const guard_arg *g = &s->args[i];
        if (i) kbuf_puts(out, ", ");
        switch (g->kind) {
        case GUARD_TENSOR:
            kbuf_puts(out, "('t', ");
            int_tuple(g->shape, g->ndim, out);
            kbuf_puts(out, ", ");
            int_tuple(g->stride, g->ndim, out);
            kbuf_printf(out, ", '%s', ", g->dtype);
            if (g->device) kbuf_printf(out, "'%s'", g->device);
            else kbuf_puts(out, "None");
            if (g->align16 >= 0) kbuf_puts(out, g->align16 ? ", True" : ", False");
            kbuf_putc(out, ')');
            break;
        case GUARD_INT: kbuf_printf(out, "('i', %lld)", g->ival); break;
        case GUARD_FLOAT:
            kbuf_puts(out, "('f', ");
            py_float(g->fval, out);
            kbuf_putc(out, ')');
            break;
        case GUARD_BOOL: kbuf_printf(out, "('b', %s)", g->ival ? "True" : "False"); break;
        case GUARD_NONE: kbuf_puts(out, "('n',)"); break;
        case GUARD_ANY: kbuf_puts(out, "('*',)"); break;
        }
    }
    kbuf_puts(out, s->nargs == 1 ? ",)" : ")");
}

const char *guard_shim(void) {
    return "if '_KoptGuard' not in globals():\n"
           "    import torch as _kopt_torch\n"
           "\n"
           "    def _kopt_knobs_set():\n"
           "        \"\"\"Triton's code-generation knobs set away from their defaults in this environment\n"
           "        (_KOPT_TRITON_KNOBS: src/util/tknobs.h); kopt verified Triton's default compile.\"\"\"\n"
           "        import os\n"
           "        bad = []\n"
           "        for name, default_on in _KOPT_TRITON_KNOBS:\n"
           "            v = os.environ.get(name)\n"
           "            if v is not None and (v.lower() not in ('1', 'true', 'on', 'yes') if default_on\n"
           "                                  else v.lower() not in ('', '0', 'false', 'off', 'no')):\n"
           "                bad.append(name)\n"
           "        return [name + ' set' for name in bad]\n"
           "\n"
           "    def _kopt_env_differs(args):\n"
           "        \"\"\"Where this process differs from what kopt verified in (_KOPT_VERIFIED_ON): Triton's\n"
           "        version, the compute capability of the first tensor argument's device.\"\"\"\n"
           "        on = globals().get('_KOPT_VERIFIED_ON') or {}\n"
           "        bad = []\n"
           "        want = on.get('triton')\n"
           "        if want is not None:\n"
           "            try:\n"
           "                import triton\n"
           "                have = getattr(triton, '__version__', None)\n"
           "            except ImportError:\n"
           "                have = None\n"
           "            if have != want:\n"
           "                bad.append('Triton %s (kopt verified with %s)' % (have, want))\n"
           "        want = on.get('capability')\n"
           "        if want is not None:\n"
           "            dev = next((a.device for a in args if isinstance(a, _kopt_torch.Tensor)), None)\n"
           "            have = (tuple(_kopt_torch.cuda.get_device_capability(dev))\n"
           "                    if dev is not None and dev.type == 'cuda' else None)\n"
           "            if have != tuple(want):\n"
           "                bad.append('compute capability %s (kopt verified on %s)' % (have, tuple(want)))\n"
           "        return bad\n"
           "\n"
           "    class _KoptGuard:\n"
           "        \"\"\"kopt: stands in for a replaced kernel. A launch whose arguments match the signature the\n"
           "        candidate was verified on (tensors: shape, stride, dtype, device type; scalars: value) runs\n"
           "        the candidate (module global `cand`); any other runs Inductor's kernel (global `orig`) and\n"
           "        is counted in _kopt_fallbacks. Where a Triton knob that changes the generated code is set\n"
           "        at the first launch (_kopt_knobs_set), or Triton's version or the GPU's compute capability\n"
           "        is not the verified one (_kopt_env_differs), every launch runs Inductor's kernel. Other\n"
           "        attributes are the candidate's.\"\"\"\n"
           "        __slots__ = ('_kopt_name', '_kopt_cand', '_kopt_orig', '_kopt_scope', '_kopt_signature',\n"
           "                     '_kopt_check', '_kopt_fast', '_kopt_fallbacks', '_kopt_unverified')\n"
           "\n"
           "        def __init__(self, name, cand, orig, signature, scope):\n"
           "            self._kopt_name = name\n"
           "            self._kopt_cand = cand\n"
           "            self._kopt_orig = orig\n"
           "            self._kopt_scope = scope\n"
           "            self._kopt_signature = signature\n"
           "            self._kopt_fallbacks = 0\n"
           "            self._kopt_unverified = None   # why this process is not the verified one: read at the first launch\n"
           "            self._kopt_check = tuple(\n"
           "                ('t', tuple(s[1]), tuple(s[2]), getattr(_kopt_torch, s[3], None), s[4], s[5] if len(s) > 5 else None)\n"
           "                if s[0] == 't' else s for s in signature)\n"
           "            # every tensor's alignment pinned: the launch Triton would specialise is the verified one,\n"
           "            # so the candidate may launch its compiled kernels directly (run_verified)\n"
           "            self._kopt_fast = all(s[5] is not None for s in self._kopt_check if s[0] == 't')\n"
           "\n"
           "        def _kopt_matches(self, args):\n"
           "            check = self._kopt_check\n"
           "            if len(args) != len(check):\n"
           "                return False\n"
           "            for a, s in zip(args, check):\n"
           "                k = s[0]\n"
           "                if k == 't':\n"
           "                    if (not isinstance(a, _kopt_torch.Tensor) or a.dtype != s[3] or a.shape != s[1]\n"
           "                            or a.stride() != s[2] or (s[4] is not None and a.device.type != s[4])\n"
           "                            or (s[5] is not None and (a.data_ptr() % 16 == 0) != s[5])):\n"
           "                        return False\n"
           "                elif k == 'i':\n"
           "                    if type(a) is not int or a != s[1]:\n"
           "                        return False\n"
           "                elif k == 'f':\n"
           "                    if type(a) is not float or not (a == s[1] or (a != a and s[1] != s[1])):\n"
           "                        return False\n"
           "                elif k == 'b':\n"
           "                    if type(a) is not bool or a != s[1]:\n"
           "                        return False\n"
           "                elif k == 'n':\n"
           "                    if a is not None:\n"
           "                        return False\n"
           "            return True\n"
           "\n"
           "        def run(self, *args, **kwargs):\n"
           "            if self._kopt_unverified is None:\n"
           "                self._kopt_unverified = _kopt_knobs_set() + _kopt_env_differs(args)\n"
           "                if self._kopt_unverified:\n"
           "                    import warnings\n"
           "                    warnings.warn('kopt: %s: Triton would not compile what kopt verified, so '\n"
           "                                  '%s runs Inductor\\'s kernel' % ('; '.join(self._kopt_unverified), self._kopt_name))\n"
           "            extra = [v for k, v in kwargs.items() if k != 'stream']\n"
           "            if not self._kopt_unverified and self._kopt_matches(args + tuple(extra) if extra else args):\n"
           "                cand = self._kopt_scope[self._kopt_cand]\n"
           "                if self._kopt_fast:\n"
           "                    return getattr(cand, 'run_verified', cand.run)(*args, **kwargs)\n"
           "                return cand.run(*args, **kwargs)\n"
           "            self._kopt_fallbacks += 1\n"
           "            return self._kopt_scope[self._kopt_orig].run(*args, **kwargs)\n"
           "\n"
           "        def __getattr__(self, attr):\n"
           "            if attr.startswith('_kopt_'):\n"
           "                raise AttributeError(attr)\n"
           "            return getattr(self._kopt_scope[self._kopt_cand], attr)\n";
}

int guard_wrap(const char *kernel, const char *orig, size_t orig_len, const char *stitch, kbuf *out, kerr *e) {
    if (!candidate_is_ident(kernel))
        return kerr_set(e, KOPT_E_CANDIDATE, "cannot guard: '%s' is not a kernel name", kernel ? kernel : "(null)");
    kbuf_printf(out, "# kopt: Inductor's %s, kept for launches outside the verified signature\n", kernel);
    kbuf_append(out, orig, orig_len);
    kbuf_printf(out, "\n_kopt_orig_%s = %s\n", kernel, kernel);
    kbuf_puts(out, stitch);
    kbuf_printf(out, "\n_kopt_cand_%s = %s\n", kernel, kernel);
    kbuf_puts(out, "if '_KOPT_TRITON_KNOBS' not in globals():\n    _KOPT_TRITON_KNOBS = ");
    tknobs_python(out);
    kbuf_puts(out, "\n");
    kbuf_puts(out, guard_shim());
    kbuf_printf(out, "%s = _KoptGuard('%s', '_kopt_cand_%s', '_kopt_orig_%s', _KOPT_VERIFIED['%s']['signature'], "
                     "globals())",
                kernel, kernel, kernel, kernel, kernel);
    return 0;
}

void guard_header(const guard_entry *ents, size_t n, const guard_env *env, kbuf *out) {
    if (!n) return;
    kbuf_puts(out, "# kopt: what ships is what was verified (docs/CANDIDATES.md, \"The guard\"). Each replaced\n"
                   "# kernel runs its candidate only on the launch signature the gates verified; any other\n"
                   "# launch runs Inductor's kernel (counted in NAME._kopt_fallbacks).\n");
    for (size_t i = 0; i < n; i++)
        kbuf_printf(out, "# kopt-verified: %s sha256=%s\n", ents[i].kernel, ents[i].sha256);
    kbuf_puts(out, "_KOPT_VERIFIED = {\n");
    for (size_t i = 0; i < n; i++) {
        kbuf_printf(out, "    '%s': {'sha256': '%s', 'signature': ", ents[i].kernel, ents[i].sha256);
        guard_sig_python(ents[i].sig, out);
        kbuf_puts(out, "},\n");
    }
    kbuf_puts(out, "}\n");
    /* the Triton and GPU the gates ran on (None: unknown, not checked) */
    kbuf_puts(out, "_KOPT_VERIFIED_ON = {'triton': ");
    if (env && env->triton[0]) kbuf_printf(out, "'%s'", env->triton);
    else kbuf_puts(out, "None");
    kbuf_puts(out, ", 'capability': ");
    if (env && env->cap_major >= 0) kbuf_printf(out, "(%d, %d)", env->cap_major, env->cap_minor);
    else kbuf_puts(out, "None");
    kbuf_puts(out, "}\n");
}

void guard_insert_header(const char *text, size_t len, const char *header, kbuf *out) {
    /* after the last `from __future__ import` line, if any (Python wants it first) */
    size_t at = 0;
    for (size_t p = 0; p < len;) {
        const char *nl = memchr(text + p, '\n', len - p);
        size_t le = nl ? (size_t)(nl - text) + 1 : len;
        if (le - p >= 23 && !memcmp(text + p, "from __future__ import ", 23)) at = le;
        p = le;
    }
    kbuf_append(out, text, at);
    if (at && text[at - 1] != '\n') kbuf_putc(out, '\n');
    kbuf_puts(out, header);
    kbuf_append(out, text + at, len - at);
}
