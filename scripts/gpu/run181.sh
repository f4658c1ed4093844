#!/usr/bin/env bash
# Session 28: TestGPUProfileStepBytes after review (a mixed K-quant case
# whose projections are separate launches, and each cache part checked on
# the kernel family that moves it), with the other ProfileStep tests.
# bin/main. carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
(cd engine/gpu && timeout 120 "$R/bin/main/engine_gpu.test" -test.run 'ProfileStep|EarlyLoads' -test.v -test.timeout 110s 2>&1 | grep -E "^(=== RUN|--- |    ---|ok|FAIL|PASS)|panic|profile_gpu_test")
el done
