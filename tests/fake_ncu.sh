#!/usr/bin/env bash
# A stand-in for Nsight Compute in CPU tests: answers --version, and for a profiling run prints
# CSV in the shape of `ncu --csv --page raw` (a header row, a units row, one row per launch).
# FAKE_NCU_ARGV=FILE: write the arguments received to FILE, each followed by a NUL byte.
# FAKE_NCU_SLEEP=S: sleep S seconds before answering a profiling run (a hung profiler).
if [ -n "${FAKE_NCU_ARGV:-}" ]; then printf '%s\0' "$@" > "$FAKE_NCU_ARGV"; fi
if [ "${1:-}" = "--version" ]; then echo "NVIDIA (R) Nsight Compute Command Line Profiler (fake)"; exit 0; fi
if [ -n "${FAKE_NCU_SLEEP:-}" ]; then sleep "$FAKE_NCU_SLEEP"; fi
cat <<'CSV'
==PROF== Connected to process 1234 (/usr/bin/python3)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","launch__registers_per_thread","sm__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","","","%","nsecond","register/thread","%","%"
"0","1234","python3","host","triton_poi_fused_add_addmm_relu_0","1","7","(256, 1, 1)","(8192, 1, 1)","0","9.0","61.20","30112","24","20.10","80.50"
"1","1234","python3","host","triton_poi_fused_add_addmm_relu_0","1","7","(256, 1, 1)","(8192, 1, 1)","0","9.0","88.40","20112","24","21.30","85.75"
CSV
