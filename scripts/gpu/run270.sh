#!/usr/bin/env bash
# Session 40: main after the review of the NaN-logits change (FillSynthetic
# also sets the token read back; a step with parts omitted takes NoToken as
# token 0): the GPU tests it touches, then run268 (27B Q5_K and Q6_K at
# 5,120 rows, 27B bf16) on the same machine. carry ["bin"] (bin/main =
# main, bin/w5120 = next/wide-5120). ~9-10 min.
set -u
source scripts/gpu/lib.sh
start_run
el "engine/gpu tests (main)"
(cd engine/gpu && timeout 100 "$R/bin/main/engine_gpu.test" -test.run 'FillSynthetic|NaN|KernelArgmax|SampleDraw|OmitParts|GraphStopRunsAhead|GraphEqualsEager|SampledEqualsSession' -test.v -test.timeout 90s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
bash scripts/gpu/run268.sh
