/* err.h — the error convention of kernelopt.
 *
 * Every fallible function returns int: 0 on success, a non-zero kopt_code on failure, and
 * fills the caller's kerr with the code and one human-readable sentence (no trailing newline).
 * The kerr is owned by the caller (usually on its stack); callees only write into it.
 * Codes double as the process exit codes of `kopt`, so each class of failure is distinct.
 */
#ifndef KOPT_ERR_H
#define KOPT_ERR_H

#include <stddef.h>

typedef enum {
    KOPT_OK = 0,
    KOPT_E_INTERNAL = 1,    /* a bug in kopt, or an unexpected system failure            */
    KOPT_E_USAGE = 2,       /* bad command line                                          */
    KOPT_E_NOFILE = 3,      /* an input file does not exist or cannot be read             */
    KOPT_E_PROBLEM = 4,     /* problem file malformed: syntax error, no Model/get_inputs  */
    KOPT_E_MODEL = 5,       /* the model raised while being built or run                  */
    KOPT_E_NOGPU = 6,       /* no CUDA device visible to the worker                       */
    KOPT_E_WORKER = 7,      /* the worker crashed, hung or spoke nonsense                 */
    KOPT_E_NOTRITON = 8,    /* torch.compile produced no Triton kernel: nothing to do     */
    KOPT_E_PYTHON = 9,      /* no usable python3 with torch/triton                        */
    KOPT_E_PARSE = 10,      /* the Inductor output module could not be parsed             */
    KOPT_E_STORE = 11,      /* SQLite store failure                                       */
    KOPT_E_CANDIDATE = 12,  /* a candidate kernel file is unusable                        */
    KOPT_E_LLM = 13,        /* LLM endpoint unreachable, bad key, unknown model           */
    KOPT_E_IO = 14,         /* writing an output file failed                              */
    KOPT_E_COMPILE = 15,    /* torch.compile itself failed on the model                   */
} kopt_code;

typedef struct kerr {
    int code;        /* kopt_code; 0 when no error was recorded */
    char msg[1024];  /* one sentence, may include a hint after "; hint: " */
} kerr;

/* Record an error (printf-style) and return its code, so callers can `return kerr_set(...)`. */
int kerr_set(kerr *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefix an existing message with context ("loading x.py: <old message>"); returns e->code. */
int kerr_wrap(kerr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A stable short name for a code ("no-gpu", "worker", ...), used in --json output. */
const char *kopt_code_name(int code);

#endif
