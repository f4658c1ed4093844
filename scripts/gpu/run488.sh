#!/usr/bin/env bash
# PREPARED, NOT RUN (perf.md step 152).
# Session 93. Step 152 gave the Q6_K decode kernels a rule by columns (early
# release of the successor only on rows of 4,096 columns or more), timed on
# the 0.8B and 9B Q6_K files; the 0.8B Q4_K_M, whose Q6_K matrices (its LM
# head and the down projections llama-quantize gives more bits) now follow
# it too, was not timed, nor its mixed launches' Q6_K part, which keeps the
# early trigger. o = 000567f (before step 152), m = main after it (REV
# below), x = m + q6-mix.patch (the mixed launch's Q6_K part under the same
# rule; on the 9B every part has 4,096 columns or more, so x changes
# nothing there). o m x in turn twice at 1k on the 0.8B Q4_K_M and Q5_K_M;
# tokens; a gate; the mixed launch's GPU tests of x. ~200 s. carry ["bin"];
# binaries: `BINS_ARCHS=90 bash scripts/gpu/bins.sh o=000567f:memra,bench
# m=REV:memra,bench,gate x=REV+scripts/gpu/patches/launch/q6-mix.patch:memra,bench,gate,engine_gpu.test`.
# Session 94 named the release rules (memra_release, kernels/common.cuh;
# the same machine code): the patch now passes MEMRA_RELEASE_WIDE and
# builds on main only from that commit on, REV = main. Session 94 got no
# machine for it: the device tool stopped lending after two failed starts.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth m "0.8b" "q4_k_m q5_k_m"
wait_synth
bench_rotation "$M/0.8b-q4_k_m.gguf,$M/0.8b-q5_k_m.gguf" 1024 o m x o m x
el tokens
tokens_cmp o m "0.8b-q4_k_m 0.8b-q5_k_m"
tokens_cmp m x "0.8b-q4_k_m 0.8b-q5_k_m"
el gates
gate x "$M/0.8b-q4_k_m.gguf" 64 256 0
gate x "$M/0.8b-q5_k_m.gguf" 64 256 0
el "mixed launch tests (x)"
(cd engine/gpu && timeout 200 "$R/bin/x/engine_gpu.test" -test.run 'MatvecMix|MixedLaunch|GraphEqualsEager' -test.v > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
el done
