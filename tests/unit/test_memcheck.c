#include <criterion/criterion.h>
#include <string.h>

#include "verify/memcheck.h"

/* compute-sanitizer's report layout: a header line "========= <what>", the location on the
 * first indented "at ..." line (both the "at 0x.. in NAME" and the "at NAME+0x.." spellings) */
static const char LOG[] = "========= COMPUTE-SANITIZER\n"
                          "========= Invalid __global__ read of size 4 bytes\n"
                          "=========     at _kopt_triton_poi_fused_add_0__k+0x1b0 in /tmp/c000.module.py:12\n"
                          "=========     by thread (31,0,0) in block (4,0,0)\n"
                          "=========     Address 0x7f0012 is out of bounds\n"
                          "=========\n"
                          "========= Misaligned Shared or Local Address\n"
                          "=========     at 0x70 in triton_red_fused_sum_1\n"
                          "=========     by thread (0,0,0) in block (0,0,0)\n"
                          "=========\n"
                          "========= Invalid __global__ write of size 8 bytes\n"
                          "=========     at 0x90 in _kopt_triton_poi_fused_add_0__k\n"
                          "=========\n"
                          "========= ERROR SUMMARY: 3 errors\n";

Test(memcheck, attributes_reports_to_the_candidate_or_elsewhere) {
    memcheck_result r;
    memcheck_parse(LOG, strlen(LOG), &r);
    cr_expect_eq(r.cand_errors, 2);
    cr_expect_eq(r.other_errors, 1);
    cr_expect_str_eq(r.first, "Invalid __global__ read of size 4 bytes at _kopt_triton_poi_fused_add_0__k+0x1b0 in "
                              "/tmp/c000.module.py:12");
    cr_expect_str_eq(r.first_other, "Misaligned Shared or Local Address at 0x70 in triton_red_fused_sum_1");
}

Test(memcheck, banners_summaries_and_empty_logs_are_not_errors) {
    static const char clean[] = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n=========\n";
    memcheck_result r;
    memcheck_parse(clean, strlen(clean), &r);
    cr_expect_eq(r.cand_errors + r.other_errors, 0);
    cr_expect_str_eq(r.first, "");
    memcheck_parse("", 0, &r);
    cr_expect_eq(r.cand_errors + r.other_errors, 0);
    /* the application's own lines (not the sanitizer's) are ignored */
    static const char app[] = "Invalid __global__ read\n    at _kopt_x\n";
    memcheck_parse(app, strlen(app), &r);
    cr_expect_eq(r.cand_errors + r.other_errors, 0);
}

Test(memcheck, a_report_without_a_location_counts_elsewhere) {
    /* a hardware exception reported without a kernel line, then one cut off at the end of the
     * stretch read (no trailing newline): neither is the candidate's */
    static const char log[] = "========= Warp Illegal Address\n========= Target application returned an error\n"
                              "========= Invalid __global__ read of size 4 bytes";
    memcheck_result r;
    memcheck_parse(log, strlen(log), &r);
    cr_expect_eq(r.cand_errors, 0);
    cr_expect_eq(r.other_errors, 2);
    cr_expect_str_eq(r.first_other, "Warp Illegal Address");
    /* a candidate name in the header's own text is not a location */
    static const char hdr[] = "========= Invalid read in _kopt_k\n=========     at other_kernel+0x10\n";
    memcheck_parse(hdr, strlen(hdr), &r);
    cr_expect_eq(r.cand_errors, 0);
    cr_expect_eq(r.other_errors, 1);
}
