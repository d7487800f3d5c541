/* lanes.c — visible GPUs and their name (contract in lanes.h). */
#include "bench/lanes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sys.h"
#include "util/buf.h"

#define SMI_TIMEOUT_S 20.0

/* The nvidia-smi to run: $KOPT_NVIDIA_SMI or "nvidia-smi" from PATH. */
static const char *bl_smi(void) {
    const char *s = getenv("KOPT_NVIDIA_SMI");
    return s && *s ? s : "nvidia-smi";
}

/* Appends a copy of the n bytes of id as a lane. */
static void bl_push(bench_lanes *l, const char *id, size_t n) {
    l->ids = krealloc(l->ids, (l->n + 1) * sizeof *l->ids);
    l->ids[l->n++] = kstrndup(id, n);
}

void bench_lanes_free(bench_lanes *l) {
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) free(l->ids[i]);
    free(l->ids);
    l->ids = NULL;
    l->n = 0;
}

void bench_lanes_parse(const char *cvd, bench_lanes *out) {
    const char *p = cvd ? cvd : "";
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *a = p, *b = end;
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        if (b > a) bl_push(out, a, (size_t)(b - a));
        p = *end ? end + 1 : end;
    }
}

/* The number of "GPU <n>:" lines of `nvidia-smi -L`; 0 when it cannot be run. */
static size_t bl_smi_count(void) {
    const char *argv[] = {bl_smi(), "-L", NULL};
    char *out = NULL;
    kerr e = {0};
    if (bench_capture(argv, SMI_TIMEOUT_S, &out, &e)) return 0;
    size_t n = 0;
    for (const char *ln = out; ln && *ln;) {
        if (!strncmp(ln, "GPU ", 4) && isdigit((unsigned char)ln[4])) n++;
        const char *nl = strchr(ln, '\n');
        ln = nl ? nl + 1 : NULL;
    }
    free(out);
    return n;
}

int bench_lanes_detect(int want, bench_lanes *out, kerr *e) {
    memset(out, 0, sizeof *out);
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    size_t visible = 0;
    if (cvd) {
        out->source = "CUDA_VISIBLE_DEVICES";
        bench_lanes_parse(cvd, out);
        if (out->n == 0)
            return kerr_set(e, KOPT_E_NOGPU, "CUDA_VISIBLE_DEVICES is set but names no GPU ('%s'); hint: unset "
                            "it or list the GPU ids to use", cvd);
        visible = out->n;
    } else if ((visible = bl_smi_count()) > 0) {
        out->source = "nvidia-smi";
    } else {
        out->source = "default";
        visible = want > 0 ? (size_t)want : 1;
    }
    if (want > 0 && (size_t)want > visible) {
        int rc = kerr_set(e, KOPT_E_USAGE, "--gpus %d: only %zu GPU%s visible (%s)", want, visible,
                          visible == 1 ? " is" : "s are", out->source);
        bench_lanes_free(out);
        return rc;
    }
    size_t n = want > 0 ? (size_t)want : visible;
    if (out->n == 0) {
        for (size_t i = 0; i < n; i++) {
            char id[24];
            int k = snprintf(id, sizeof id, "%zu", i);
            bl_push(out, id, (size_t)k);
        }
    }
    while (out->n > n) free(out->ids[--out->n]);
    return 0;
}

/* The first line of the output, trimmed; NULL when empty. */
static char *bl_first_line(const char *s) {
    if (!s) return NULL;
    while (isspace((unsigned char)*s)) s++;
    size_t n = strcspn(s, "\r\n");
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return n ? kstrndup(s, n) : NULL;
}

char *bench_gpu_name(const char *id) {
    const char *with_id[] = {bl_smi(), "--query-gpu=name", "--format=csv,noheader", "-i", id ? id : "0", NULL};
    const char *all[] = {bl_smi(), "--query-gpu=name", "--format=csv,noheader", NULL};
    const char *const *tries[] = {with_id, all};
    for (int t = 0; t < 2; t++) {
        char *out = NULL;
        kerr e = {0};
        if (bench_capture(tries[t], SMI_TIMEOUT_S, &out, &e)) continue;
        char *name = bl_first_line(out);
        free(out);
        if (name) return name;
    }
    return kstrdup("unknown");
}
