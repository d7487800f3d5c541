#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int kerr_set(kerr *e, int code, const char *fmt, ...) {
    if (!e) return code;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

int kerr_wrap(kerr *e, const char *fmt, ...) {
    if (!e) return KOPT_E_INTERNAL;
    char prefix[512], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    /* Truncation is acceptable here: the prefix is short and the message stays readable. */
    size_t n = strnlen(prefix, sizeof e->msg - 1);
    memcpy(e->msg, prefix, n);
    size_t room = sizeof e->msg - n;
    if (room > 3) {
        memcpy(e->msg + n, ": ", 2);
        size_t m = strnlen(old, room - 3);
        memcpy(e->msg + n + 2, old, m);
        e->msg[n + 2 + m] = '\0';
    } else {
        e->msg[sizeof e->msg - 1] = '\0';
    }
    return e->code;
}

const char *kopt_code_name(int code) {
    switch (code) {
    case KOPT_OK: return "ok";
    case KOPT_E_INTERNAL: return "internal";
    case KOPT_E_USAGE: return "usage";
    case KOPT_E_NOFILE: return "no-file";
    case KOPT_E_PROBLEM: return "bad-problem";
    case KOPT_E_MODEL: return "model-raised";
    case KOPT_E_NOGPU: return "no-gpu";
    case KOPT_E_WORKER: return "worker";
    case KOPT_E_NOTRITON: return "no-triton-kernels";
    case KOPT_E_PYTHON: return "no-python";
    case KOPT_E_PARSE: return "parse";
    case KOPT_E_STORE: return "store";
    case KOPT_E_CANDIDATE: return "bad-candidate";
    case KOPT_E_LLM: return "llm";
    case KOPT_E_IO: return "io";
    case KOPT_E_COMPILE: return "compile";
    default: return "unknown";
    }
}
