#!/usr/bin/env bash
# Session 15, third call. bin/new = main with the merges (next/tile-overlap,
# next/graph-logits), the host sampler's fast top-k and gdn_delta's phases;
# bin/pre = main before gdn_delta's phases (a02a918); bin/base = main at the
# session's start (bd2344e: sampled steps eager, the old top-k). Every GPU
# test of new, gates, sampled generation (`memra run` defaults: temperature
# 0.8, top-k 40, top-p 0.95, min-p 0.05) base / new alternating on 0.8B and
# 9B bf16 (same seed: same tokens), gdn_delta pre / new in the bench at 1k
# (two rounds) and under ncu inside a 0.8B graph, then the full table of new.
# Build (here): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/gate ./tools/memra ./tools/bench,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# bench of a02a918 into /tmp/binall/pre/ and memra of bd2344e into /tmp/binall/base/ (worktrees),
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests new
wait $SYNTH
el "gates"
gate new $M/0.8b-bf16.gguf 300 1000 1
gate new $M/9b-q8_0.gguf 64 400 0
el "sampled generation (CLI defaults, seed 7), base / new alternating"
for m in 0.8b-bf16 9b-bf16; do
  for b in base new base new; do
    timeout 120 ./bin/$b/memra run -m $M/$m.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 --seed 7 -print-tokens -device cuda \
      > $OUT/samp-$m-$b.txt 2> $OUT/samp-$m-$b.err
    echo "$m $b: $(grep -E 'generated' $OUT/samp-$m-$b.err | tail -1)"
  done
  cmp -s $OUT/samp-$m-base.txt $OUT/samp-$m-new.txt && echo "$m: sampled tokens base == new" || echo "$m: sampled tokens DIFFER"
done
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf 1024 pre new pre new
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum'
for b in pre new; do
  el "ncu gdn_delta ($b; 0.8B bf16, 1k, in a graph)"
  timeout 100 ncu --clock-control none --graph-profiling node -k regex:gdn_delta --launch-skip 40 --launch-count 1 --metrics "$MET" \
    ./bin/$b/bench -model $M/0.8b-bf16.gguf -ctx 1024 -reps 1 -warmup 0 -tokens 8 -copy-mib 64 > /tmp/n.txt 2>&1
  grep -E "^  gdn|long_scoreboard|short_scoreboard|wait  |inst_executed|duration|dram__" /tmp/n.txt | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
el "bench (full table, new)"
mkdir -p $OUT/table
timeout 240 ./bin/new/bench -model $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf \
  -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out $OUT/table > $OUT/table/stdout.txt 2> $OUT/table/stderr.txt
tail -5 $OUT/table/stdout.txt
el done
