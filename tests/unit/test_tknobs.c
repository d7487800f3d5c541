/* test_tknobs.c — Triton's code-generation knobs (src/util/tknobs.h): which settings count as
 * changed, and the guard's Python copy of the list. */
#include <criterion/criterion.h>
#include <string.h>

#include "util/buf.h"
#include "util/tknobs.h"

Test(tknobs, set_away_from_the_default) {
    cr_expect(tknob_changed("TRITON_F32_DEFAULT=ieee"));
    cr_expect(tknob_changed("TRITON_KERNEL_OVERRIDE=1"));
    cr_expect(tknob_changed("TRITON_DEBUG=True"));
    cr_expect(tknob_changed("PTXAS_OPTIONS=-O0"));
    cr_expect(tknob_changed("LLVM_PASS_PLUGIN_PATH=/tmp/p.so"));
    cr_expect(tknob_changed("TRITON_DEFAULT_FP_FUSION=0"));
    cr_expect(tknob_changed("TRITON_DEFAULT_FP_FUSION="), "an empty value is not fusion's default (on)");
    cr_expect(tknob_changed("TRITON_DEBUG=2"), "anything but an off value turns a default-off knob on");
}

Test(tknobs, at_the_default_or_not_a_knob) {
    cr_expect_not(tknob_changed("TRITON_DEBUG=0"));
    cr_expect_not(tknob_changed("TRITON_DEBUG="));
    cr_expect_not(tknob_changed("TRITON_KERNEL_OVERRIDE=off"));
    cr_expect_not(tknob_changed("TRITON_INTERPRET=FALSE"));
    cr_expect_not(tknob_changed("TRITON_DEFAULT_FP_FUSION=1"));
    cr_expect_not(tknob_changed("TRITON_DEFAULT_FP_FUSION=TRUE"));
    cr_expect_not(tknob_changed("TRITON_CACHE_DIR=/tmp/x"), "a cache location changes no code");
    cr_expect_not(tknob_changed("TRITON_DEBUGX=1"), "names are exact");
    cr_expect_not(tknob_changed("XTRITON_DEBUG=1"));
    cr_expect_not(tknob_changed("TRITON_DEBUG"), "not NAME=VALUE");
    cr_expect_not(tknob_changed(NULL));
}

Test(tknobs, the_guards_copy_lists_each_knob) {
    kbuf b = KBUF_INIT;
    tknobs_python(&b);
    const char *s = kbuf_str(&b);
    cr_expect(s[0] == '(' && s[b.len - 1] == ')');
    cr_expect(strstr(s, "('TRITON_DEFAULT_FP_FUSION', True), ") != NULL, "%s", s);
    cr_expect(strstr(s, "('TRITON_F32_DEFAULT', False), ") != NULL, "%s", s);
    cr_expect(strstr(s, "('TRITON_KERNEL_OVERRIDE', False), ") != NULL, "%s", s);
    kbuf_free(&b);
}
