/* buf.h — kbuf, a growable byte/string buffer (always NUL-terminated).
 *
 * Ownership: a kbuf owns its `data`; kbuf_free releases it. kbuf_steal hands the string to the
 * caller (who then frees it with free()) and leaves the kbuf empty. A zero-initialised kbuf
 * (KBUF_INIT) is valid and empty. Allocation failure aborts: kopt cannot do useful work
 * without memory, and checking every append would drown the logic.
 */
#ifndef KOPT_BUF_H
#define KOPT_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct kbuf {
    char *data;  /* NUL-terminated when len > 0 or after any append; may be NULL when empty */
    size_t len;  /* bytes used, excluding the terminating NUL */
    size_t cap;  /* bytes allocated */
} kbuf;

#define KBUF_INIT {0}

void kbuf_append(kbuf *b, const char *s, size_t n);
void kbuf_puts(kbuf *b, const char *s);
void kbuf_putc(kbuf *b, char c);
void kbuf_printf(kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kbuf_vprintf(kbuf *b, const char *fmt, va_list ap);
void kbuf_reset(kbuf *b);          /* len = 0, keeps capacity */
/* Replace the first occurrence of `from` (non-empty) in b by `to`: 0, or -1 (b unchanged) when
 * there is none. */
int kbuf_replace_first(kbuf *b, const char *from, const char *to);
void kbuf_free(kbuf *b);           /* releases storage, back to empty */
char *kbuf_steal(kbuf *b);         /* caller owns the result (never NULL; "" when empty) */
const char *kbuf_str(const kbuf *b); /* never NULL */

/* Helpers on plain strings; results are malloc'd and owned by the caller. */
char *kstrdup(const char *s);
char *kstrndup(const char *s, size_t n);
char *kasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *kmalloc(size_t n);           /* aborts on failure */
void *kcalloc(size_t n, size_t sz);
void *krealloc(void *p, size_t n);

/* kvec: a growable array of pointers (e.g. strings). Owns the array, not the pointees unless
 * documented by the user of the vector. */
typedef struct kvec {
    void **items;
    size_t len, cap;
} kvec;
void kvec_push(kvec *v, void *p);
void kvec_free(kvec *v);                 /* frees the array only */
void kvec_free_all(kvec *v, void (*f)(void *)); /* calls f on each item, then frees */

#endif
