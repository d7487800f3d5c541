/* util/buf.h: kbuf_replace_first. */
#include <criterion/criterion.h>
#include <string.h>

#include "util/buf.h"

Test(buf, replace_first_replaces_only_the_first) {
    kbuf b = KBUF_INIT;
    cr_expect_eq(kbuf_replace_first(&b, "a", "b"), -1, "an empty buffer holds nothing");
    kbuf_puts(&b, "x = a + a");
    cr_expect_eq(kbuf_replace_first(&b, "a", "bb"), 0);
    cr_expect_str_eq(kbuf_str(&b), "x = bb + a");
    cr_expect_eq(b.len, strlen("x = bb + a"));
    cr_expect_eq(kbuf_replace_first(&b, "zz", "q"), -1);
    cr_expect_str_eq(kbuf_str(&b), "x = bb + a", "absent: unchanged");
    cr_expect_eq(kbuf_replace_first(&b, "", "q"), -1, "an empty pattern is refused");
    cr_expect_eq(kbuf_replace_first(&b, "x = ", ""), 0);
    cr_expect_str_eq(kbuf_str(&b), "bb + a", "replaced by nothing");
    cr_expect_eq(kbuf_replace_first(&b, "a", "a long tail"), 0);
    cr_expect_str_eq(kbuf_str(&b), "bb + a long tail", "at the end");
    kbuf_free(&b);
}
