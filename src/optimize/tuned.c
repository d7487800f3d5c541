/* tuned.c — Inductor's autotuned configuration of a kernel (tuned.h). */
#include "optimize/tuned.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/store.h"
#include "util/buf.h"
#include "util/fs.h"

enum { BEST_CONFIG_MAX_BYTES = 64 * 1024 };

/* An integer field in [lo, hi] (a power of two when pow2), 0 when absent; -1 when invalid. */
static int field(const json_t *o, const char *key, int lo, int hi, int pow2) {
    const json_t *v = json_object_get(o, key);
    if (!v) return 0;
    if (!json_is_integer(v)) return -1;
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi || (pow2 && (x & (x - 1)))) return -1;
    return (int)x;
}

/* Reads the file at `path` into *text when it is a regular file of 1..64 KB; 1 when read. */
static int read_small(const char *path, char **text, size_t *len) {
    struct stat sb;
    kerr e = {0};
    if (stat(path, &sb) || !S_ISREG(sb.st_mode) || sb.st_size <= 0 || sb.st_size > BEST_CONFIG_MAX_BYTES) return 0;
    return !fs_read(path, text, len, &e);
}

/* Inductor's local autotune cache keeps a kernel's best configuration in the kernel's directory
 * under sha256("<the kernel file's basename>:<tag>") + ".best_config", the tag being
 * torch.compiler.config.cache_key_tag (environment TORCH_COMPILE_CACHE_KEY_TAG, default empty)
 * (AutotuneCache._prepare_key); older releases wrote "<kernel path without .py>.best_config".
 * Both names are tried, the hashed one first; *text is the first found (malloc'd). */
static int read_best_config(const char *kp, size_t n, char **text, size_t *len) {
    const char *slash = strrchr(kp, '/');
    const char *base = slash ? slash + 1 : kp;
    const char *tag = getenv("TORCH_COMPILE_CACHE_KEY_TAG");
    char *key = kasprintf("%s:%s", base, tag ? tag : "");
    char hex[STORE_SHA_HEX];
    store_sha256_hex(key, strlen(key), hex);
    free(key);
    char *hashed = kasprintf("%.*s%s.best_config", (int)(base - kp), kp, hex);
    char *beside = kasprintf("%.*s.best_config", (int)(n - 3), kp);
    int ok = read_small(hashed, text, len) || read_small(beside, text, len);
    free(hashed);
    free(beside);
    return ok;
}

int tuned_config_read(const art_kernel *k, tuned_config *out) {
    memset(out, 0, sizeof *out);
    const char *kp = k ? k->kernel_path : NULL;
    size_t n = kp ? strlen(kp) : 0;
    if (n < 4 || strcmp(kp + n - 3, ".py")) return 0;
    char *text = NULL;
    size_t len = 0;
    int ok = read_best_config(kp, n, &text, &len);
    json_t *j = ok ? json_loadb(text, len, 0, NULL) : NULL;
    free(text);
    if (!json_is_object(j)) {
        json_decref(j);
        return 0;
    }
    tuned_config t = {.xblock = field(j, "XBLOCK", 1, 4096, 1),
                      .yblock = field(j, "YBLOCK", 1, 4096, 1),
                      .r0_block = field(j, "R0_BLOCK", 1, 65536, 1),
                      .num_warps = field(j, "num_warps", 1, 32, 1),
                      .num_stages = field(j, "num_stages", 1, 8, 0),
                      .found_by_coordesc = json_is_true(json_object_get(j, "found_by_coordesc"))};
    json_decref(j);
    if (t.xblock <= 0 || t.num_warps <= 0 || t.num_stages <= 0 || t.yblock < 0 || t.r0_block < 0) return 0;
    *out = t;
    return 1;
}

json_t *tuned_config_json(const tuned_config *t) {
    json_t *o = json_pack("{s:i, s:i, s:i, s:b}", "XBLOCK", t->xblock, "num_warps", t->num_warps, "num_stages",
                          t->num_stages, "found_by_coordesc", t->found_by_coordesc);
    if (t->r0_block) json_object_set_new(o, "R0_BLOCK", json_integer(t->r0_block));
    if (t->yblock) json_object_set_new(o, "YBLOCK", json_integer(t->yblock));
    return o;
}
