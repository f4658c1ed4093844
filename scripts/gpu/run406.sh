#!/usr/bin/env bash
# Session 73, step 125 (run406: run405 after its fix: graphs across
# buckets): prefill chunks replayed as graphs. On any GPU:
# the record/replay test of engine/cuda, the prefill, profile and
# graph tests of engine/gpu, then (synth done) prime ms at P = 512 with
# -eager-chunks and without, alternated twice in one binary,
# BenchmarkGPUPrefillChunk on real models, BenchmarkGPUPrefillHost, gates.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh new=replay:memra,bench,gate,engine_gpu.test
# plus bin/new/engine_cuda.test (go test -c ./engine/cuda), repacked.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth new "0.8b" "bf16 q8_0 q4_k"
S0=$SYNTH
synth new "9b" "q8_0"
SYNTH="$S0 $SYNTH"
el "engine/cuda record/replay tests"
(cd engine/cuda && timeout 60 "$R/bin/new/engine_cuda.test" -test.run 'GPURecordReplay|GPUGraphCaptureReplay|GPULaunchAllocatesNothing' -test.v > "$OUT/cudatest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/cudatest.txt"
el "engine/gpu prefill, profile and graph tests"
(cd engine/gpu && timeout 240 "$R/bin/new/engine_gpu.test" -test.run 'PrefillReplay|PrefillMatchesTokenFeed|ProfilePrefill|GraphEqualsEager|SessionEqualsEager|DecodeMatchesCPU' -test.v > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf"
mkdir -p /tmp/bp
for r in 1 2; do
  for mode in eager replay; do
    d=/tmp/bp/$r-$mode; mkdir -p "$d"
    flag=""; [ $mode = eager ] && flag=-eager-chunks
    el "bench prime P=512 ($mode, round $r)"
    timeout 150 ./bin/new/bench -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false $flag -out "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo "rc $?"; grep -E 'prime' "$d/stderr.txt"
  done
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
for m in 0.8b-bf16 0.8b-q4_k 9b-q8_0; do
  el "BenchmarkGPUPrefillChunk $m"
  (cd engine/gpu && MEMRA_BENCH_MODEL=$M/$m.gguf timeout 120 "$R/bin/new/engine_gpu.test" -test.run '^$' \
    -test.bench 'GPUPrefillChunk$' -test.benchtime 20x 2>&1 | grep -E 'Benchmark|FAIL|panic')
done
el "BenchmarkGPUPrefillHost"
(cd engine/gpu && timeout 120 "$R/bin/new/engine_gpu.test" -test.run '^$' -test.bench 'GPUPrefillHost' -test.benchtime 20x 2>&1 | grep -E 'Benchmark|FAIL|panic')
el gates
gate new "$M/0.8b-bf16.gguf" 300 64 0
gate new "$M/9b-q8_0.gguf" 300 32 1
el done
