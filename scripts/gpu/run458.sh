#!/usr/bin/env bash
# Session 82, PREPARED, NOT RUN (its calls got no machine, then too little
# device time was left) (`bash scripts/gpu/run458.sh`), any GPU: `bench -profile`
# timing the greedy graph's own step (gpu.Model.ProfileGraphStep) instead
# of an eager one, whose 16-bit logits are read whole where the graph's
# go through step 132's screen (run457's bf16 profile showed a 171.5 us
# LM head that no graph step runs). p = main + patches/profgraph.patch:
# its profile tests (TestGPUProfileGraphStep: the profiled step is
# DecodeStepDC's, its launches the graph's nodes, its bytes an eager
# step's with ScreenBytes' in place of the matrix), the eager profile's
# tests, then bench -profile 8 on the 0.8B bf16 and q8_0 at 1k (~1 minute).
# carry ["bin"]; binaries: `bash scripts/gpu/bins.sh
# p=main+scripts/gpu/patches/profgraph.patch:memra,bench,engine_gpu.test`.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth p "0.8b" "bf16 q8_0"
el "tests (p)"
(cd engine/gpu && timeout 200 "$R/bin/p/engine_gpu.test" -test.run 'Profile|EarlyLoads|CountersOutOfStep' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|panic|profile_gpu_test' | grep -v '^    --- PASS')
wait_synth
el "profile"
mkdir -p /tmp/prof
timeout 200 ./bin/p/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -profile 8 -out /tmp/prof \
  > /tmp/prof/stdout.txt 2> /tmp/prof/stderr.txt
echo "bench rc $?"
grep -E '\| (graph|sampled|eager) \|' /tmp/prof/stdout.txt | cut -d'|' -f2,4,5,6,9,13
grep -A18 '^## Kernel time per graph step' /tmp/prof/stdout.txt
tar czf "$OUT/prof.tgz" -C /tmp prof
el done
