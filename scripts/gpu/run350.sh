#!/usr/bin/env bash
# Session 62, third call after run348.sh and run349.sh on the same warm
# machine: docs/perf.md's table command (run303's flags, contexts 64, 1k and 32k) on the models
# run348 wrote: the 0.8B preset in bf16, q8_0, Q4_K, Q5_K, Q6_K and Q4_K_M,
# the 9B in bf16, q8_0, Q6_K and Q4_K_M (the 9B Q4_K and Q5_K files were left
# out to fit the disk; their kernels are run303's), with -peer on run349's
# llama-bench reports.
set -u
source scripts/gpu/lib.sh
start_run
mkdir -p /tmp/table
ms=""
for m in 0.8b-bf16 0.8b-q8_0 0.8b-q4_k 0.8b-q5_k 0.8b-q6_k 0.8b-q4_k_m 9b-bf16 9b-q8_0 9b-q6_k 9b-q4_k_m; do ms="$ms,$M/$m.gguf"; done
peer=$(ls /tmp/lb/*.json 2>/dev/null | paste -sd, -)
el "bench (table; -peer ${peer:-none})"
timeout 420 ./bin/main/bench -model "${ms#,}" -ctx 64,1024,32768 -reps 3 -tokens 64 ${peer:+-peer "$peer"} -out /tmp/table \
  > /tmp/table/stdout.txt 2> /tmp/table/stderr.txt
sed -n '/## Against llama.cpp/,$p' /tmp/table/stdout.txt
grep -E 'copy bandwidth' /tmp/table/stderr.txt
grep -E '\| (graph|sampled) \|' /tmp/table/stdout.txt | cut -d'|' -f2,4,5,6,9,13
tar czf "$OUT/table.tgz" -C /tmp table
el done
