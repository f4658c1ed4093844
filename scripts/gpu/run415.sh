#!/usr/bin/env bash
# Session 74, step 127: what a prefill chunk costs against its tokens.
# BenchmarkGPUPrefillChunk (eager and replayed, chunks of 1, 2, 4 and 8
# tokens) on the 0.8B bf16, 0.8B q8_0 and 9B q8_0 synth presets, then the
# bench's decode and priming rows of the same files on the same machine
# (-ctx 64 -prompt 512), on any GPU.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=<this commit>:memra,bench,engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth main "0.8b" "bf16 q8_0"
S0=$SYNTH
synth main "9b" "q8_0"
SYNTH="$S0 $SYNTH"
wait_synth
for m in 0.8b-bf16 0.8b-q8_0 9b-q8_0; do
  el "BenchmarkGPUPrefillChunk $m"
  (cd engine/gpu && MEMRA_BENCH_MODEL="$M/$m.gguf" timeout 150 "$R/bin/main/engine_gpu.test" -test.run '^$' \
    -test.bench 'GPUPrefillChunk' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$m /")
done
el "bench decode 64 and prime P=512"
mkdir -p /tmp/b415
timeout 200 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 64 -reps 3 -tokens 64 -prompt 512 -sampled=false -out /tmp/b415 > /tmp/b415/stdout.txt 2> /tmp/b415/stderr.txt
echo "rc $?"
grep -E 'prime|copy bandwidth' /tmp/b415/stderr.txt
grep -E '\| (graph|eager) \|' /tmp/b415/stdout.txt | cut -d'|' -f2,4,5,6,9,13
tar czf "$OUT/bench415.tgz" -C /tmp b415
el done
