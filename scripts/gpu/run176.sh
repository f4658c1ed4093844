#!/usr/bin/env bash
# Session 27: main after step 80 (Q6_K keeps its B fragments). The K-quant
# kernel and decode tests, a gate, and docs/perf.md's table command on the two
# Q6_K presets over f16 and FP8 KV (run174's Q6_K rows predate step 80).
# bin/main. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q6_k"
kq_tests main
wait_synth
gate main $M/9b-q6_k.gguf 300 256 1
for kv in f16 fp8; do
  el "bench (Q6_K presets, -kv $kv)"
  rm -rf /tmp/table-$kv; mkdir -p /tmp/table-$kv
  timeout 120 ./bin/main/bench -model "$M/0.8b-q6_k.gguf,$M/9b-q6_k.gguf" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -kv $kv -out /tmp/table-$kv > /tmp/table-$kv/stdout.txt 2> /tmp/table-$kv/stderr.txt
  grep -E '\| (graph|sampled) \|' /tmp/table-$kv/stdout.txt | cut -d'|' -f2,4,5,6,9,13
  tar czf "$OUT/table-$kv.tgz" -C /tmp table-$kv
done
el done
