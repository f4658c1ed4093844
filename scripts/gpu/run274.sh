#!/usr/bin/env bash
# Session 41, main after the review fixes: TestGPUGraphExactCapacity (a cache
# of exactly P + n − 1 positions, memra run's default --ctx since this
# session, holds a graph generation of n tokens, with and without a stop
# partway) with the graph, sampling and penalty GPU tests, the gate on the
# built-in default model and on 0.8B q8_0 with FP8 KV, and memra run on the
# GPU at the exact context (--ctx prompt + n − 1, given explicitly).
# carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
el "engine/gpu graph tests (main)"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'GraphExactCapacity|GraphStopRunsAhead|GraphEqualsEager|SampledEqualsSession|PenaltyEqualsSession|KernelRepeatPenalty|KernelSampleDraw|NaNWeights' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic|exact|capacity")
wait_synth
el "gates"
echo "gate default: $(timeout 120 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -2 | tr '\n' ' ')"
gate main "$M/0.8b-q8_0.gguf" 300 128 1
el "memra run at the exact context, greedy and sampled with the penalty"
timeout 60 ./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 64 --ctx 66 --greedy --print-tokens -device cuda 2>&1 | tail -2 | cut -c1-200
timeout 60 ./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 64 --ctx 66 --seed 3 --repeat-penalty 1.2 --print-tokens -device cuda 2>&1 | tail -2 | cut -c1-200
el done
