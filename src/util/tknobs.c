#include "util/tknobs.h"

#include <string.h>
#include <strings.h>

typedef struct {
    const char *name;
    int default_on; /* 1: on unless set to an off value (FMA fusion); 0: off unless set */
} tknob;

static const tknob KNOBS[] = {
    {"TRITON_KERNEL_OVERRIDE", 0},
    {"TRITON_ENABLE_ASAN", 0},
    {"TRITON_ENABLE_EXPERIMENTAL_CONSAN", 0},
    {"TRITON_DEBUG", 0},
    {"TRITON_INTERPRET", 0},
    {"TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", 0},
    {"TRITON_INSTRUMENTATION_MODE", 0},
    {"TRITON_OVERRIDE_ARCH", 0},
    {"TRITON_F32_DEFAULT", 0},
    {"TRITON_MOCK_PTX_VERSION", 0},
    {"TRITON_LIBDEVICE_PATH", 0},
    {"DISABLE_PTXAS_OPT", 0},
    {"PTXAS_OPTIONS", 0},
    {"DISABLE_LLVM_OPT", 0},
    {"LLVM_PASS_PLUGIN_PATH", 0},
    {"TRITON_DEFAULT_FP_FUSION", 1},
};

static int one_of(const char *v, const char *const *set) {
    for (; *set; set++)
        if (!strcasecmp(v, *set)) return 1;
    return 0;
}

int tknob_changed(const char *entry) {
    static const char *const off[] = {"", "0", "false", "off", "no", NULL};
    static const char *const on[] = {"1", "true", "on", "yes", NULL};
    const char *eq = entry ? strchr(entry, '=') : NULL;
    if (!eq) return 0;
    size_t n = (size_t)(eq - entry);
    for (size_t i = 0; i < sizeof KNOBS / sizeof *KNOBS; i++)
        if (strlen(KNOBS[i].name) == n && !strncmp(KNOBS[i].name, entry, n))
            return KNOBS[i].default_on ? !one_of(eq + 1, on) : !one_of(eq + 1, off);
    return 0;
}

void tknobs_python(kbuf *out) {
    kbuf_puts(out, "(");
    for (size_t i = 0; i < sizeof KNOBS / sizeof *KNOBS; i++)
        kbuf_printf(out, "('%s', %s), ", KNOBS[i].name, KNOBS[i].default_on ? "True" : "False");
    kbuf_puts(out, ")");
}
