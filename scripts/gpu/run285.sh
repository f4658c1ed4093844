#!/usr/bin/env bash
# Session 44, main after the second round of review fixes: GenerateGraph
# reserves prompt+n-1 positions (its last token is never fed), SetSampling
# and SetPenalty refuse a closed cache, frees after Engine.Close return nil,
# the gate's BENCH=1 reserves the graph arm's cache outside its timer, bench
# skips the contexts a model cannot hold. Every engine/gpu and engine/cuda
# GPU test, the gates (default with BENCH=1, 0.8B q8_0 f16 and FP8), greedy
# cuda == cpu, and bench on the tiny fixture (context length 4096) at the
# default contexts: 4096 and past skipped, said. carry ["bin"]. ~3 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
./bin/main/memra version
gpu_tests main
el "engine/cuda tests"
(cd engine/cuda && timeout 60 "$R/bin/main/engine_cuda.test" -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el gates
timeout 200 ./bin/main/gate default 64 256 bench 2>/dev/null | grep -E 'decode tok/s|gate (PASS|FAIL)|MISMATCH' | head -3
gate main "$M/0.8b-q8_0.gguf" 64 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
el "bench on the tiny fixture"
./bin/main/bench -model engine/testdata/fixtures/qwen35-tiny-bf16.gguf -reps 1 -tokens 16 -sampled=false -out /tmp/bt 2>&1 | grep -E 'skipped|results in|\| graph \||FAILED'; echo "bench rc ${PIPESTATUS[0]}"
grep -o '"skipped_contexts":[^]]*]' /tmp/bt/latest.json
grep -E 'not measured' /tmp/bt/latest.md
el done
