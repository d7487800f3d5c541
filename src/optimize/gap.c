/* gap.c — why a model stays far from its memory floor: the optimize document's model.floor_gap
 * (issue 12: "every memory-bound problem within 1.3x of its memory floor or the report names the
 * reason"), named from the profile and the search's own records, nothing guessed:
 *   - no Triton kernel: the work is in library calls kopt keeps;
 *   - library calls take most of the profiled time: they are kept as they are (a call a vendor
 *     region replaced counts as that region's kernel row, not as a library call);
 *   - else the Triton kernel taking the most time after the search, its own distance to its
 *     floor (its profiled time x frac_of_ceiling), and what the search did there (the kernel it
 *     kept, and how many candidates it gated there and where they were refused); when that
 *     kernel is itself near its floor, the gap is traffic the model's floor does not count. */
#include <math.h>
#include <string.h>

#include "optimize/optimize_int.h"
#include "util/buf.h"

/* The kernel's time after the search: after_ms when it was optimized, else its profiled time. */
static double gap_time(const krow *k) { return k->after_ms > 0 ? k->after_ms : k->time_ms; }

/* "aten.a, aten.b" from the kernel's ATen op list (at most four), or "" */
static void gap_ops(const krow *k, kbuf *out) {
    for (size_t i = 0; i < k->aten_ops.n; i++) {
        if (i == 4) {
            kbuf_puts(out, ", ...");
            break;
        }
        kbuf_printf(out, "%s%s", i ? ", " : "", k->aten_ops.v[i]);
    }
}

json_t *opt_floor_gap(const json_t *model, const krows *t) {
    double kopt = json_number_value(json_object_get(model, "optimized_ms"));
    double floor_ms = json_number_value(json_object_get(model, "floor_ms"));
    if (!(kopt > 0) || !(floor_ms > 0) || kopt / floor_ms <= OPT_FLOOR_GAP) return NULL;
    double ktime = 0, vtime = 0;
    const krow *top = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const krow *k = &t->v[i];
        if (k->status == KROW_IN_REGION) continue;
        /* a region that did not win: its time is its members' (kernels or a library call) */
        if (k->members.n && k->status != KROW_OPTIMIZED) continue;
        double tk = gap_time(k);
        ktime += tk;
        if (!top || tk > gap_time(top)) top = k;
    }
    kbuf why = KBUF_INIT, names = KBUF_INIT;
    size_t nkept = 0; /* library calls kopt kept: a call a region replaced is that region's row */
    for (size_t i = 0; i < t->nlib; i++) {
        const vrow *v = &t->lib[i];
        if (v->replaced_by.n) continue;
        vtime += v->time_ms;
        if (nkept < 3) kbuf_printf(&names, "%s%s", nkept ? ", " : "", v->name);
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
        double tk = gap_time(top), frac = top->has_frac ? top->frac_of_ceiling : 0;
        double own = frac > 0 ? tk / (top->time_ms * frac) : NAN;
        kbuf ops = KBUF_INIT;
        gap_ops(top, &ops);
        kbuf_printf(&why, "%s (%s; %.0f%% of the profiled time)", top->name,
                    ops.len ? kbuf_str(&ops) : "no ATen ops recorded", 100 * tk / (vtime + ktime));
        if (isfinite(own)) kbuf_printf(&why, " runs at %.2fx its own memory floor", own);
        if (top->status == KROW_OPTIMIZED)
            kbuf_printf(&why, " with kopt's kernel (%s)", top->change ? top->change : "?");
        else kbuf_printf(&why, ", kept: %s", top->why ? top->why : top->search_end ? top->search_end : "not searched");
        /* what the search measured there: other forms gated and refused (gate 4: correct, not faster) */
        if (top->searched && top->tried > 0)
            kbuf_printf(&why, "; %d candidate%s gated there, refused at gates 1-4: %d, %d, %d, %d", top->tried,
                        top->tried == 1 ? "" : "s", top->refused[1], top->refused[2], top->refused[3], top->refused[4]);
        if (top->searched && top->host_slower) /* gate 4's refusals as called: host work, not the kernel */
            kbuf_printf(&why, " (%d of gate 4's faster on the GPU but slower as the model is called)",
                        top->host_slower);
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
