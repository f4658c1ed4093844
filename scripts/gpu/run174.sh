#!/usr/bin/env bash
# Session 27: main after step 79 (the K-quant ring's copies at immediate
# offsets, counted slots, the next item's address stepped). Every engine/gpu
# GPU test, two gates, then docs/perf.md's table command on the six K-quant
# presets over f16 and FP8 KV (run169's, whose rows step 79 made stale).
# bin/main. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q5_k q6_k"
gpu_tests main
wait_synth
el gates
gate main $M/9b-q5_k.gguf 64 256 0
gate main $M/0.8b-q4_k.gguf 300 256 1
ms=""; for p in 0.8b 9b; do for t in q4_k q5_k q6_k; do ms="$ms,$M/$p-$t.gguf"; done; done
for kv in f16 fp8; do
  el "bench (K-quant presets, -kv $kv)"
  rm -rf /tmp/table-$kv; mkdir -p /tmp/table-$kv
  timeout 250 ./bin/main/bench -model "${ms#,}" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -kv $kv -out /tmp/table-$kv > /tmp/table-$kv/stdout.txt 2> /tmp/table-$kv/stderr.txt
  grep -E '\| (graph|sampled) \|' /tmp/table-$kv/stdout.txt | cut -d'|' -f2,4,5,6,9,13
  tar czf "$OUT/table-$kv.tgz" -C /tmp table-$kv
done
el done
