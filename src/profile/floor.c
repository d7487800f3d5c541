/* floor.c — the model floor and the floor check (contract in floor.h). */
#include "profile/floor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/decide.h"
#include "util/buf.h"

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }
static const char *str(const json_t *o, const char *k) {
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}
static int is_triton(const json_t *row) { return !strcmp(str(row, "kind"), "triton"); }

/* The best measured memory rate (bytes/s): the fastest of copy, read and write. */
static double best_rate(const roof_ceilings *c) {
    return fmax(c->copy_bytes_per_s, fmax(c->read_bytes_per_s, c->write_bytes_per_s));
}

/* Why a launch's measured rate is no evidence about DRAM rates: 0 when it is evidence; 1 when
 * it moves too little next to the L2 (or the L2 is unknown); 2 when it would need an
 * implausible rate (its counted bytes exceed what it moves). */
enum { EV_OK = 0, EV_CACHE, EV_COUNT };
static int evidence_kind(const json_t *row, const roof_ceilings *measured, double l2_bytes) {
    double ms = num(row, "time_ms"), b = num(row, "bytes_read") + num(row, "bytes_written");
    if (l2_bytes <= 0 || b < FLOOR_EVIDENCE_L2_TIMES * l2_bytes) return EV_CACHE;
    double best = best_rate(measured);
    if (ms > 0 && best > 0 && b / (ms * 1e-3) > FLOOR_PLAUSIBLE_RATE * best) return EV_COUNT;
    return EV_OK;
}

void floor_model_compute(const json_t *launches, double io_read, double io_written, const roof_ceilings *measured,
                         double l2_bytes, floor_model *out) {
    memset(out, 0, sizeof *out);
    out->rates = *measured;
    out->rate_from = -1;
    roof_ceilings *r = &out->rates;
    size_t i;
    const json_t *row;
    json_array_foreach(launches, i, row) {
        double ms = num(row, "time_ms");
        out->kernels_floor_ms += ms * num(row, "frac_of_ceiling");
        if (!is_triton(row) || ms <= 0) continue;
        double rd = num(row, "bytes_read"), wr = num(row, "bytes_written"), s = ms * 1e-3;
        if (roof_memory_floor_s(rd, wr, r) <= s || evidence_kind(row, measured, l2_bytes) != EV_OK) continue;
        /* raise each rate only as far as this kernel proves: its floor becomes its time */
        double rr = r->read_bytes_per_s > 0 ? r->read_bytes_per_s : r->copy_bytes_per_s;
        double wrt = r->write_bytes_per_s > 0 ? r->write_bytes_per_s : r->copy_bytes_per_s;
        if (rr > 0 && rd / rr > s) r->read_bytes_per_s = rd / s;
        if (wrt > 0 && wr / wrt > s) r->write_bytes_per_s = wr / s;
        if ((rd + wr) / best_rate(r) > s) r->copy_bytes_per_s = (rd + wr) / s;
        if ((rd + wr) / s / 1e9 > out->rate_from_gbps) {
            out->rate_from = (int)i;
            out->rate_from_gbps = (rd + wr) / s / 1e9;
        }
    }
    json_array_foreach(launches, i, row) {
        if (is_triton(row) && !(num(row, "flops") > 0)) continue; /* library calls and GEMM templates */
        double ms = num(row, "time_ms");
        out->vendor_floor_ms += fmin(ms * num(row, "frac_of_ceiling"), ms);
    }
    if (io_read + io_written > 0) out->io_floor_ms = roof_memory_floor_s(io_read, io_written, r) * 1e3;
    out->floor_ms = fmax(out->io_floor_ms, out->vendor_floor_ms);
}

/* Appends one entry to `below`. */
static void add_below(json_t *below, const char *what, const char *kind, double time_ms, double floor_ms,
                      const char *why) {
    json_array_append_new(below, json_pack("{s:s, s:s, s:f, s:f, s:f, s:s}", "what", what, "kind", kind, "time_ms",
                                           time_ms, "floor_ms", floor_ms, "ratio",
                                           floor_ms > 0 ? time_ms / floor_ms : 0.0, "why", why));
}

/* Why a Triton kernel ran below its floor at the measured ceilings (malloc'd). */
static char *kernel_why(const json_t *row, const floor_model *f, const roof_ceilings *measured, double l2_bytes,
                        size_t index) {
    double ms = num(row, "time_ms"), rd = num(row, "bytes_read"), wr = num(row, "bytes_written");
    double gbps = ms > 0 ? (rd + wr) / (ms * 1e-3) / 1e9 : 0;
    switch (evidence_kind(row, measured, l2_bytes)) {
    case EV_CACHE:
        if (l2_bytes <= 0)
            return kasprintf("it moves %.3g MB and the L2 size is unknown: part of it may have come from cache, "
                             "where the DRAM rates do not bind",
                             (rd + wr) / 1e6);
        return kasprintf("it moves %.3g MB, less than %.0fx the %.3g MB L2 cache: part of it came from cache, where "
                         "the DRAM rates do not bind",
                         (rd + wr) / 1e6, FLOOR_EVIDENCE_L2_TIMES, l2_bytes / 1e6);
    case EV_COUNT:
        return kasprintf("its counted %.4g GB would need %.0f GB/s, over %.2fx the best measured rate (%.0f GB/s): "
                         "the count is more than the kernel moves (an argument read only in part, or one buffer "
                         "counted twice)",
                         (rd + wr) / 1e9, gbps, FLOOR_PLAUSIBLE_RATE, best_rate(measured) / 1e9);
    default: break;
    }
    return kasprintf("it moved %.4g GB read and %.4g GB written at %.0f GB/s, faster than the measured rates allow "
                     "(read %.0f, write %.0f, copy %.0f GB/s): the measured bandwidth is low; the model floor takes "
                     "the rates the module's kernels reached%s",
                     rd / 1e9, wr / 1e9, gbps, measured->read_bytes_per_s / 1e9, measured->write_bytes_per_s / 1e9,
                     measured->copy_bytes_per_s / 1e9,
                     (int)index == f->rate_from ? " (floor_rate_from: this kernel)" : "");
}

/* Why a library call ran below its floor (malloc'd). */
static char *vendor_why(const json_t *row, const roof_ceilings *measured) {
    double ms = num(row, "time_ms"), flops = num(row, "flops");
    const char *math = str(row, "math");
    roof_math m = !strcmp(math, "tf32") ? ROOF_MATH_TF32 : !strcmp(math, "bf16") ? ROOF_MATH_BF16 : ROOF_MATH_FP32;
    double rate = roof_math_rate(measured, m);
    if (flops > 0 && rate > 0 &&
        flops / rate > roof_memory_floor_s(num(row, "bytes_read"), num(row, "bytes_written"), measured))
        return kasprintf(
            "it ran its %.4g GFLOP at %.1f TFLOP/s, above the measured %s matrix rate (%.1f TFLOP/s): the "
            "library uses a faster algorithm or arithmetic than that rate measures; the model floor counts "
            "the call's measured time instead",
            flops / 1e9, ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0, math[0] ? math : "fp32", rate / 1e12);
    return kasprintf(
        "it moved its bytes faster than the measured memory rates allow: the measured bandwidth is low, or "
        "its bytes are counted high; the model floor counts the call's measured time instead");
}

json_t *floor_check(const json_t *launches, const floor_model *f, const roof_ceilings *measured, double l2_bytes,
                    const floor_module_time *mods, size_t nmods) {
    json_t *below = json_array();
    size_t checked = 0;
    for (size_t m = 0; m < nmods; m++) {
        if (!(mods[m].time_ms > 0) || !(f->floor_ms > 0)) continue;
        checked++;
        if (mods[m].time_ms >= f->floor_ms) continue;
        char *why =
            kasprintf("a module doing the model's work ran in %.4g ms, below the model floor %.4g ms (the graph's "
                      "I/O %.4g ms, the library calls %.4g ms): its rates or its byte counts are wrong for this "
                      "model (an input read only in part, or a library call faster than its rate)",
                      mods[m].time_ms, f->floor_ms, f->io_floor_ms, f->vendor_floor_ms);
        add_below(below, mods[m].what, "module", mods[m].time_ms, f->floor_ms, why);
        free(why);
    }
    size_t i;
    const json_t *row;
    json_array_foreach(launches, i, row) {
        double ms = num(row, "time_ms"), frac = num(row, "frac_of_ceiling");
        if (!(ms > 0) || !(frac > 0)) continue;
        checked++;
        if (frac <= 1.0) continue;
        int tri = is_triton(row);
        char *why = tri ? kernel_why(row, f, measured, l2_bytes, i) : vendor_why(row, measured);
        add_below(below, str(row, "name"), tri ? "kernel" : "library call", ms, ms * frac, why);
        free(why);
    }
    size_t nb = json_array_size(below);
    char *why =
        nb ? kasprintf("%zu of the %zu measured times %s below %s floor, so %s floor%s wrong (each entry says why); "
                       "gate 4 refuses candidates below %.0f%% of the model floor only when the start module "
                       "itself takes at least that",
                       nb, checked, nb == 1 ? "is" : "are", nb == 1 ? "its" : "their", nb == 1 ? "that" : "those",
                       nb == 1 ? " is" : "s are", 100 * GATE4_FLOOR_MARGIN)
           : kasprintf("none of the %zu measured times (modules, kernels, library calls) is below its floor", checked);
    json_t *o =
        json_pack("{s:b, s:I, s:o, s:s}", "ok", nb == 0, "checked", (json_int_t)checked, "below", below, "why", why);
    free(why);
    return o;
}

json_t *floor_check_kernels_below(const json_t *check) {
    json_t *names = json_array();
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(check, "below"), i, b) {
        const char *kind = json_string_value(json_object_get(b, "kind")),
                   *what = json_string_value(json_object_get(b, "what"));
        if (kind && what && !strcmp(kind, "kernel")) json_array_append_new(names, json_string(what));
    }
    return names;
}
