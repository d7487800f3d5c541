/* gap.c — why a model stays far from its memory floor: the optimize document's model.floor_gap
 * (issue 12: "every memory-bound problem within 1.3x of its memory floor or the report names the
 * reason"), named from the profile and the search's own records, nothing guessed:
 *   - no Triton kernel: the work is in library calls kopt keeps;
 *   - library calls take most of the profiled time: they are kept as they are (a call a vendor
 *     region replaced counts as that region's kernel row, not as a library call);
 *   - else the Triton kernel taking the most time after the search, its own distance to its
 *     floor (its profiled time x frac_of_ceiling), and what the search did there; when that
 *     kernel is itself near its floor, the gap is traffic the model's floor does not count. */
#include <math.h>
#include <string.h>

#include "optimize/optimize_int.h"
#include "util/buf.h"

/* o[key] as a string, or `dflt` when it is not one. */
static const char *gap_str(const json_t *o, const char *key, const char *dflt) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

/* The kernel's time after the search: after_ms when it was optimized, else its profiled time. */
static double gap_time(const json_t *k) {
    double after = json_number_value(json_object_get(k, "after_ms"));
    return after > 0 ? after : json_number_value(json_object_get(k, "time_ms"));
}

/* "aten.a, aten.b" from the kernel's ATen op list (at most four), or "" */
static void gap_ops(const json_t *k, kbuf *out) {
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(k, "aten_ops"), i, v) {
        if (i == 4) {
            kbuf_puts(out, ", ...");
            break;
        }
        kbuf_printf(out, "%s%s", i ? ", " : "", json_string_value(v) ? json_string_value(v) : "?");
    }
}

json_t *opt_floor_gap(const json_t *model, const json_t *kernels, const json_t *vendor) {
    double kopt = json_number_value(json_object_get(model, "optimized_ms"));
    double floor_ms = json_number_value(json_object_get(model, "floor_ms"));
    if (!(kopt > 0) || !(floor_ms > 0) || kopt / floor_ms <= OPT_FLOOR_GAP) return NULL;
    double ktime = 0, vtime = 0;
    const json_t *top = NULL;
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k) {
        if (!strcmp(gap_str(k, "status", ""), "in_region")) continue;
        /* a region that did not win: its time is its members' (kernels or a library call) */
        if (!strcmp(gap_str(k, "kernel_kind", ""), "region") && strcmp(gap_str(k, "status", ""), "optimized")) continue;
        double t = gap_time(k);
        ktime += t;
        if (!top || t > gap_time(top)) top = k;
    }
    kbuf why = KBUF_INIT, names = KBUF_INIT;
    size_t nkept = 0; /* library calls kopt kept: a call a region replaced is that region's row */
    json_array_foreach(vendor, i, k) {
        if (json_object_get(k, "replaced_by")) continue;
        vtime += json_number_value(json_object_get(k, "time_ms"));
        if (nkept < 3) kbuf_printf(&names, "%s%s", nkept ? ", " : "", gap_str(k, "name", "?"));
        nkept++;
    }
    if (nkept > 3) kbuf_puts(&names, ", ...");
    if (!top) {
        kbuf_printf(&why,
                    "torch.compile generated no Triton kernel: the time is in library calls (%s), which kopt keeps",
                    names.len ? kbuf_str(&names) : "none profiled");
    } else if (vtime >= ktime) {
        kbuf_printf(&why, "library calls (%s) take %.0f%% of the profiled time; kopt keeps them as they are",
                    kbuf_str(&names), 100 * vtime / (vtime + ktime));
    } else {
        double t = gap_time(top), frac = json_number_value(json_object_get(top, "frac_of_ceiling"));
        double own = frac > 0 ? t / (json_number_value(json_object_get(top, "time_ms")) * frac) : NAN;
        const char *status = gap_str(top, "status", "");
        kbuf ops = KBUF_INIT;
        gap_ops(top, &ops);
        kbuf_printf(&why, "%s (%s; %.0f%% of the profiled time)", gap_str(top, "name", "?"),
                    ops.len ? kbuf_str(&ops) : "no ATen ops recorded", 100 * t / (vtime + ktime));
        if (isfinite(own)) kbuf_printf(&why, " runs at %.2fx its own memory floor", own);
        if (!strcmp(status, "optimized")) kbuf_printf(&why, " with kopt's kernel (%s)", gap_str(top, "change", "?"));
        else kbuf_printf(&why, ", kept: %s", gap_str(top, "why", gap_str(top, "search_end", "not searched")));
        if (isfinite(own) && own <= OPT_FLOOR_GAP)
            kbuf_puts(
                &why,
                "; it is near its own floor, so the gap is traffic the model's floor does not count (intermediates "
                "between kernels, or a second pass over the input)");
        kbuf_free(&ops);
    }
    json_t *g =
        json_pack("{s:f, s:f, s:s}", "ratio", kopt / floor_ms, "above", OPT_FLOOR_GAP, "reason", kbuf_str(&why));
    kbuf_free(&why);
    kbuf_free(&names);
    return g;
}
