#include <criterion/criterion.h>
#include <jansson.h>

#include "profile/ncu.h"

static const char CSV[] =
    "==PROF== Connected to process 77\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\","
    "\"Device\",\"CC\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__time_duration.sum\","
    "\"launch__registers_per_thread\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"sm__warps_active.avg.pct_of_peak_sustained_active\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"%\",\"nsecond\",\"register/thread\",\"%\",\"%\"\n"
    "\"0\",\"77\",\"python3\",\"h\",\"triton_red_fused_x_0\",\"1\",\"7\",\"(512, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\","
    "\"40.5\",\"150000\",\"32\",\"10.0\",\"50.0\"\n"
    "\"1\",\"77\",\"python3\",\"h\",\"triton_red_fused_x_0\",\"1\",\"7\",\"(512, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\","
    "\"82.25\",\"133000\",\"40\",\"12.5\",\"61.0\"\n"
    "\"2\",\"77\",\"python3\",\"h\",\"triton_poi_fused_y_1(float*, float*, int)\",\"1\",\"7\",\"(128, 1, 1)\",\"(64, 1, 1)\","
    "\"0\",\"9.0\",\"90\",\"9000\",\"16\",\"5\",\"70\"\n";

Test(ncu, parses_raw_csv_keeping_the_last_launch_per_kernel) {
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(ncu_parse_csv(CSV, &out, &e), 0, "%s", e.msg);
    cr_assert_eq(json_object_size(out), 2);
    const json_t *r = json_object_get(out, "triton_red_fused_x_0");
    cr_expect_float_eq(json_number_value(json_object_get(r, "dram_pct")), 82.25, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(r, "registers")), 40, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(r, "occupancy_pct")), 61.0, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(r, "time_ns")), 133000, 1e-9);
    /* a demangled signature is cut off the name */
    cr_expect_not_null(json_object_get(out, "triton_poi_fused_y_1"));
    json_decref(out);
}

Test(ncu, output_without_kernels_is_an_error) {
    json_t *out = NULL;
    kerr e = {0};
    cr_expect_neq(ncu_parse_csv("==ERROR== ERR_NVGPUCTRPERM - no permission\n", &out, &e), 0);
    cr_expect_neq(ncu_parse_csv("", &out, &e), 0);
}
