#include "profile/ncu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

static const char *ncu_path(void) {
    const char *p = getenv("KOPT_NCU");
    return p && *p ? p : "ncu";
}

int ncu_available(void) {
    char *cmd = kasprintf("%s --version >/dev/null 2>&1", ncu_path());
    int rc = system(cmd);
    free(cmd);
    return rc == 0;
}

/* Split one CSV line (ncu quotes every field) into fields; returns the count. */
static size_t csv_fields(const char *line, char **f, size_t max) {
    size_t n = 0;
    const char *p = line;
    while (*p && *p != '\n' && n < max) {
        kbuf b = KBUF_INIT;
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"' && p[1] == '"') p++;
                kbuf_putc(&b, *p++);
            }
            if (*p == '"') p++;
        } else {
            while (*p && *p != ',' && *p != '\n') kbuf_putc(&b, *p++);
        }
        f[n++] = kbuf_steal(&b);
        if (*p == ',') p++;
        else break;
    }
    return n;
}

static int col(char **h, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++) if (!strcmp(h[i], name)) return (int)i;
    return -1;
}

enum { MAXF = 256 };

int ncu_parse_csv(const char *text, json_t **out, kerr *e) {
    json_t *res = json_object();
    char *h[MAXF] = {0}, *f[MAXF] = {0};
    size_t nh = 0;
    int kname = -1;
    const char *line = text;
    static const struct { const char *metric, *key; } M[] = {
        {"gpu__time_duration.sum", "time_ns"},
        {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_pct"},
        {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm_pct"},
        {"sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy_pct"},
        {"launch__registers_per_thread", "registers"},
    };
    int mc[5] = {-1, -1, -1, -1, -1};
    while (line && *line) {
        const char *next = strchr(line, '\n');
        if (kname < 0) {
            if (!strncmp(line, "\"ID\"", 4)) {   /* the header row */
                nh = csv_fields(line, h, MAXF);
                kname = col(h, nh, "Kernel Name");
                for (int m = 0; m < 5; m++) mc[m] = col(h, nh, M[m].metric);
            }
        } else if (line[0] == '"') {
            size_t nf = csv_fields(line, f, MAXF);
            char *endp = NULL;
            if (nf == nh && (strtol(f[0], &endp, 10), endp && *endp == '\0' && endp != f[0])) {   /* skip the units row */
                json_t *row = json_object();
                for (int m = 0; m < 5; m++) {
                    if (mc[m] < 0) continue;
                    char *num = f[mc[m]];
                    for (char *q = num; *q; q++) if (*q == ',') *q = '\0';   /* "1,234" is not used, but be safe */
                    char *end = NULL;
                    double v = strtod(num, &end);
                    if (end != num) json_object_set_new(row, M[m].key, json_real(v));
                }
                /* the kernel's name may carry its signature: keep the identifier */
                char *nm = f[kname];
                size_t k = strcspn(nm, "( <");
                nm[k] = '\0';
                json_object_set_new(res, nm, row);   /* the last launch of a name wins */
            }
            for (size_t i = 0; i < nf; i++) free(f[i]);
        }
        line = next ? next + 1 : NULL;
    }
    for (size_t i = 0; i < nh; i++) free(h[i]);
    if (kname < 0 || json_object_size(res) == 0) {
        json_decref(res);
        return kerr_set(e, KOPT_E_WORKER, "no kernel found in ncu's output");
    }
    *out = res;
    return 0;
}

int ncu_profile(const char *python, const char *module, const char *args, double timeout_s, json_t **out, kerr *e) {
    char *root = fs_kopt_root();
    const char *py = python && *python ? python : (getenv("KOPT_PYTHON") && *getenv("KOPT_PYTHON") ? getenv("KOPT_PYTHON") : "python3");
    char *cmd = kasprintf("timeout %d %s --clock-control none --csv --page raw --metrics %s -k regex:^triton_ "
                          "'%s' '%s/worker/ncu_run.py' '%s' '%s' 2>/dev/null",
                          (int)(timeout_s > 0 ? timeout_s : 300), ncu_path(), NCU_METRICS, py, root, module, args);
    free(root);
    log_info("ncu: %s", cmd);
    FILE *p = popen(cmd, "r");
    free(cmd);
    if (!p) return kerr_set(e, KOPT_E_WORKER, "cannot run ncu");
    kbuf b = KBUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) kbuf_append(&b, chunk, n);
    int status = pclose(p);
    int rc = ncu_parse_csv(kbuf_str(&b), out, e);
    if (rc) kerr_set(e, KOPT_E_WORKER, "ncu gave no usable metrics (exit status %d)", status);
    kbuf_free(&b);
    return rc;
}
