#!/usr/bin/env bash
# Session 13, review mends: matvecGrids sizes each tensor-core kernel's
# shared memory only for the widths MatvecWide can give it (tiledShapes per
# kernel). Every GPU test (TestGPUMatvecSharedLimit's new cases among them)
# and a gate each on the 9B Q5_K and Q6_K presets, whose 12,288-column down
# projections set the widest plain-kernel shapes at load.
set -u
source scripts/gpu/lib.sh
start_run
synth new "9b" "q5_k q6_k"
gpu_tests new
wait $SYNTH
gate new $M/9b-q6_k.gguf 64 300 1
gate new $M/9b-q5_k.gguf 300 300 0
el done
