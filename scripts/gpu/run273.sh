#!/usr/bin/env bash
# Session 41, main at its end after the QA fixes (host-side: sampler bounds
# and the GPU penalty check, MEMRA_KV_FP8's values, run's default --ctx,
# unique temporary files, interrupts): every engine/gpu GPU test, gates on
# 0.8B q8_0 (f16 and FP8 KV), 24 greedy tokens cuda against cpu, a sampled
# run with the repetition penalty on the device, MEMRA_KV_FP8=yes refused,
# and bench graph at 1k on 0.8B q8_0 against run271's figure.
# carry ["bin"]. ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
gpu_tests main
wait_synth
el "gates"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/0.8b-q8_0.gguf" 300 128 1
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
el "sampled with the repetition penalty on the device"
timeout 60 ./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 32 --seed 7 --repeat-penalty 1.3 --print-tokens -device cuda 2>&1 | tail -3
el "MEMRA_KV_FP8=yes (refused)"
MEMRA_KV_FP8=yes timeout 60 ./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 4 -device cuda 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
el "bench 0.8b-q8_0 1k"
timeout 60 ./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/b08 2>/dev/null | grep -E '\| (graph|sampled|eager) \||copy bandwidth'
el done
