#!/usr/bin/env bash
# Session 16: the device draw (kernels/draw.cu, GraphDecodeState.SetSampling).
# Every GPU test (TestGPUKernelSampleDraw: the kernel against the host
# sampler, 7 option sets x 120 draws; TestGPUGraphSampledEqualsSession:
# sampled graph generation against sample.Generate on a Session), a gate,
# sampled generation through the CLI (old: the host draw; new: the device
# draw; each twice, then the new one's tokens for one seed twice), and the
# bench's graph and sampled rows at 1k and 32k.
# Build (here): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/gate ./tools/memra ./tools/bench,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# old = main's memra from a worktree of de274e5; then tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
gpu_tests new
grep -E "TestGPUKernelSampleDraw|case [0-9]|TestGPUGraphSampled" "$OUT/gputest.txt" | head -12
wait $SYNTH
gate new $M/0.8b-q8_0.gguf 300 1000 1
for m in 0.8b-bf16 0.8b-q8_0 9b-q8_0; do
  for b in old new old new; do
    timeout 120 ./bin/$b/memra run -m $M/$m.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 --seed 7 -device cuda > /dev/null 2> /tmp/samp.err
    echo "$m sampled ($b): $(grep -E 'generated' /tmp/samp.err | tail -1)"
  done
done
for i in 1 2; do
  echo "new seed 9 tokens: $(timeout 60 ./bin/new/memra run -m $M/0.8b-bf16.gguf --prompt-tokens 1,2,3 -n 24 --seed 9 --print-tokens -device cuda 2>/dev/null | md5sum)"
done
el "bench 1k, 32k: graph and sampled rows"
mkdir -p /tmp/bn
timeout 300 ./bin/new/bench -model $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf -ctx 1024,32768 -reps 3 -tokens 64 -out /tmp/bn 2>/tmp/bn/stderr.txt \
  | grep -E '\| (graph|sampled) \|' | cut -d'|' -f2,4,5,6,9,13
cp /tmp/bn/latest.json $OUT/bench.json 2>/dev/null
el done
