#!/usr/bin/env bash
# Session 16: run110's ncu put the sampled step's extra ~100 us in the top-k
# (topk_sort 48.7 + 47.8 us: a bitonic sort of each 4,096-pair slice) and
# the draw (16 us, lane 0 dividing in sequence). Now topk_select (a radix
# select, then the 64 kept placed by rank) and the divisions spread over the
# warp. Every GPU test, a gate, the CLI's sampled generation, ncu of the two
# kernels, and the bench's graph and sampled rows at 1k and 32k.
# Build (here): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/gate ./tools/memra ./tools/bench,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# then tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
gpu_tests new
grep -E "case [0-9]" "$OUT/gputest.txt" | head -8
wait $SYNTH
gate new $M/0.8b-q8_0.gguf 300 1000 1
gate new $M/9b-bf16.gguf 64 256 0
for m in 0.8b-bf16 0.8b-q8_0 9b-q8_0; do
  for i in 1 2; do
    timeout 120 ./bin/new/memra run -m $M/$m.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 --seed 7 -device cuda > /dev/null 2> /tmp/samp.err
    echo "$m sampled (new): $(grep -E 'generated' /tmp/samp.err | tail -1)"
  done
done
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum'
el "ncu topk_select, sample_draw (0.8B bf16, in a graph)"
timeout 150 ncu --clock-control none --graph-profiling node -k 'regex:topk_select|sample_draw' --launch-skip 20 --launch-count 3 --metrics "$MET" \
  ./bin/new/bench -model $M/0.8b-bf16.gguf -ctx 1024 -reps 1 -warmup 1 -tokens 16 -copy-mib 64 > /tmp/n.txt 2>&1
grep -E "^  [a-z]|stalled|inst_executed|issue_active|warps_active|duration" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
el "bench 1k, 32k: graph and sampled rows"
mkdir -p /tmp/bn
timeout 300 ./bin/new/bench -model $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf -ctx 1024,32768 -reps 3 -tokens 64 -out /tmp/bn 2>/tmp/bn/stderr.txt \
  | grep -E '\| (graph|sampled) \|' | cut -d'|' -f2,4,5,6,9,13
cp /tmp/bn/latest.json $OUT/bench.json 2>/dev/null
el done
