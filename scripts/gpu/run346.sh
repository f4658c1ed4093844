#!/usr/bin/env bash
# Session 61: the engine/gpu GPU tests run343.sh's gpu_tests did not reach
# (its 230 s test timeout passed on the H100 after TestGPUMatvecSharedLimit,
# TestGPUDecodeMatchesCPU taking 145 s of it), on bin/kql (run343.sh's
# build): the matvec kernels (usual, lean, batch) against their CPU
# references, embed, prefill against token feed, the step's byte profile,
# and the fusion-run tests. This is the command that ran, as a script.
source scripts/gpu/lib.sh; start_run; cd engine/gpu && timeout 480 "$R/bin/kql/engine_gpu.test" -test.run 'KernelMatvec|Prefill|ProfileStep|Lean|Embed|Batch|Fusion|Tiled' -test.v -test.timeout 470s > "$OUT/gputest2.txt" 2>&1; echo "rc $?"; grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest2.txt" | grep -v "^    --- PASS" | head -60; echo "subtests passed $(grep -c -- '    --- PASS' $OUT/gputest2.txt), failed $(grep -c -- '--- FAIL' $OUT/gputest2.txt)"
