#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *kmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) { fputs("kopt: out of memory\n", stderr); abort(); }
    return p;
}
void *kcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) { fputs("kopt: out of memory\n", stderr); abort(); }
    return p;
}
void *krealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) { fputs("kopt: out of memory\n", stderr); abort(); }
    return q;
}

static void grow(kbuf *b, size_t extra) {
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    b->data = krealloc(b->data, cap);
    b->cap = cap;
}

void kbuf_append(kbuf *b, const char *s, size_t n) {
    grow(b, n);
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}
void kbuf_puts(kbuf *b, const char *s) { kbuf_append(b, s, strlen(s)); }
void kbuf_putc(kbuf *b, char c) { kbuf_append(b, &c, 1); }

void kbuf_vprintf(kbuf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    grow(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}
void kbuf_printf(kbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    kbuf_vprintf(b, fmt, ap);
    va_end(ap);
}
void kbuf_reset(kbuf *b) { b->len = 0; if (b->data) b->data[0] = '\0'; }

int kbuf_replace_first(kbuf *b, const char *from, const char *to) {
    char *at = b->data && *from ? strstr(b->data, from) : NULL;
    if (!at) return -1;
    kbuf nb = KBUF_INIT;
    kbuf_append(&nb, b->data, (size_t)(at - b->data));
    kbuf_puts(&nb, to);
    kbuf_puts(&nb, at + strlen(from));
    kbuf_free(b);
    *b = nb;
    return 0;
}
void kbuf_free(kbuf *b) { free(b->data); b->data = NULL; b->len = b->cap = 0; }
char *kbuf_steal(kbuf *b) {
    char *s = b->data ? b->data : kstrdup("");
    b->data = NULL; b->len = b->cap = 0;
    return s;
}
const char *kbuf_str(const kbuf *b) { return b->data ? b->data : ""; }

char *kstrdup(const char *s) { return kstrndup(s, strlen(s)); }
char *kstrndup(const char *s, size_t n) {
    char *p = kmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}
char *kasprintf(const char *fmt, ...) {
    kbuf b = KBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    kbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    return kbuf_steal(&b);
}

void kvec_push(kvec *v, void *p) {
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->items = krealloc(v->items, v->cap * sizeof *v->items);
    }
    v->items[v->len++] = p;
}
void kvec_free(kvec *v) { free(v->items); v->items = NULL; v->len = v->cap = 0; }
void kvec_free_all(kvec *v, void (*f)(void *)) {
    for (size_t i = 0; i < v->len; i++) f(v->items[i]);
    kvec_free(v);
}
