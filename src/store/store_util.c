/* store_util.c — hashing (SHA-256, the kernel key) and secret redaction for the store.
 * Contract in store.h. SHA-256 follows FIPS 180-4. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/buf.h"

/* ---- SHA-256 ------------------------------------------------------------------------------ */

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t bits;
    unsigned char block[64];
    size_t used;
} sha256_ctx;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static uint32_t ror32(uint32_t x, int n) {
    return (x >> n) | (x << (32 - n));
}

static void sha256_block(sha256_ctx *c, const unsigned char *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];
    uint32_t e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + S1 + ch + K256[i] + w[i];
        uint32_t S0 = ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22);
        uint32_t maj = (a & b) ^ (a & cc) ^ (b & cc);
        uint32_t t2 = S0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = cc;
        cc = b;
        b = a;
        a = t1 + t2;
    }
    c->h[0] += a;
    c->h[1] += b;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
    c->h[5] += f;
    c->h[6] += g;
    c->h[7] += h;
}

static void sha256_init(sha256_ctx *c) {
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->bits = 0;
    c->used = 0;
}

static void sha256_update(sha256_ctx *c, const void *data, size_t n) {
    const unsigned char *p = data;
    c->bits += (uint64_t)n * 8;
    while (n > 0) {
        if (c->used == 0 && n >= 64) {
            sha256_block(c, p);
            p += 64;
            n -= 64;
            continue;
        }
        size_t take = 64 - c->used < n ? 64 - c->used : n;
        memcpy(c->block + c->used, p, take);
        c->used += take;
        p += take;
        n -= take;
        if (c->used == 64) {
            sha256_block(c, c->block);
            c->used = 0;
        }
    }
}

static void sha256_hex_final(sha256_ctx *c, char out[STORE_SHA_HEX]) {
    uint64_t bits = c->bits;
    unsigned char pad = 0x80;
    sha256_update(c, &pad, 1);
    unsigned char zero = 0;
    while (c->used != 56) sha256_update(c, &zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(c, len, 8);
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) {
            unsigned v = (c->h[i] >> (24 - 8 * j)) & 0xff;
            out[8 * i + 2 * j] = hex[v >> 4];
            out[8 * i + 2 * j + 1] = hex[v & 15];
        }
    out[64] = '\0';
}

void store_sha256_hex(const void *data, size_t n, char out[STORE_SHA_HEX]) {
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, data, n);
    sha256_hex_final(&c, out);
}

static void field(sha256_ctx *c, const char *v, size_t n) {
    char len[32];
    int m = snprintf(len, sizeof len, "%zu:", n);
    sha256_update(c, len, (size_t)m);
    sha256_update(c, v, n);
    sha256_update(c, "\n", 1);
}

int store_kernel_key(const char *source, const char *shapes_json, const char *gpu,
                     char out[STORE_SHA_HEX], kerr *e) {
    out[0] = '\0';
    if (!source || !shapes_json || !gpu)
        return store_misuse(e, "store_kernel_key needs the source, the shapes and the gpu");
    json_error_t je;
    json_t *shapes = json_loads(shapes_json, JSON_DECODE_ANY, &je);
    if (!shapes) return store_misuse(e, "kernel shapes_json is not valid JSON: %s", je.text);
    char *canon = json_dumps(shapes, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(shapes);
    if (!canon) return store_misuse(e, "kernel shapes_json cannot be serialised");
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, "kopt.kernel/1\n", 14);
    field(&c, source, strlen(source));
    field(&c, canon, strlen(canon));
    field(&c, gpu, strlen(gpu));
    free(canon);
    sha256_hex_final(&c, out);
    return 0;
}

/* ---- redaction ---------------------------------------------------------------------------- */

#define REDACTED "[redacted]"
#define MIN_SECRET 10   /* >= strlen(REDACTED): redaction never lengthens the text */

static int tokch(unsigned char ch) {
    return isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~' || ch == '+' ||
           ch == '/' || ch == '=';
}

static size_t token_len(const char *p) {
    size_t n = 0;
    while (p[n] && tokch((unsigned char)p[n])) n++;
    return n;
}

static int word_start(const char *text, const char *p) {
    return p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-');
}

/* At p: the number of bytes to keep before the secret (*keep) and the secret's length; 0 when
 * no secret starts here. */
static size_t secret_at(const char *text, const char *p, size_t *keep) {
    *keep = 0;
    if (!word_start(text, p)) return 0;
    /* Provider key formats: sk-..., sk_..., AIza... */
    if ((strncmp(p, "sk-", 3) == 0 || strncmp(p, "sk_", 3) == 0 || strncmp(p, "AIza", 4) == 0)) {
        size_t n = token_len(p);
        return n >= 3 + 16 ? n : 0;
    }
    /* Authorization: Bearer <token> */
    if (strncasecmp(p, "bearer", 6) == 0 && (p[6] == ' ' || p[6] == '\t')) {
        size_t k = 6;
        while (p[k] == ' ' || p[k] == '\t') k++;
        size_t n = token_len(p + k);
        if (n < MIN_SECRET) return 0;
        *keep = k;
        return n;
    }
    /* name [:=] value, for names that carry credentials */
    static const char *const names[] = {"x-api-key", "api_key", "api-key", "apikey",
                                        "access_token", "auth_token", "token", "key",
                                        "password", "secret"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t m = strlen(names[i]);
        if (strncasecmp(p, names[i], m) != 0) continue;
        if (isalnum((unsigned char)p[m]) || p[m] == '_' || p[m] == '-') continue;
        size_t k = m;
        while (p[k] == '"' || p[k] == '\'' || p[k] == ' ') k++;
        if (p[k] != ':' && p[k] != '=') continue;
        k++;
        while (p[k] == '"' || p[k] == '\'' || p[k] == ' ') k++;
        size_t n = token_len(p + k);
        if (n < MIN_SECRET) continue;
        *keep = k;
        return n;
    }
    return 0;
}

void store_redact(char *text) {
    if (!text) return;
    size_t j = 0;
    const size_t rl = strlen(REDACTED);
    for (size_t i = 0; text[i];) {
        size_t keep, n = secret_at(text, text + i, &keep);
        if (n == 0) {
            text[j++] = text[i++];
            continue;
        }
        memmove(text + j, text + i, keep);   /* j <= i throughout */
        j += keep;
        memcpy(text + j, REDACTED, rl);      /* rl <= n: stays behind the read cursor */
        j += rl;
        i += keep + n;
    }
    text[j] = '\0';
}
