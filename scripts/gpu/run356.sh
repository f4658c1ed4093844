#!/usr/bin/env bash
# Session 64, on the card the device gives (H100 in sessions 61-64: the
# tables compare only within one call). Main's decode table with the run303
# command on the ten presets plus the 0.8B and 9B Q4_K_M, then run303's own
# binary (f8c59a2, session 48, main after step 98) at 1k on the ten,
# bench -compare old -> main; a gate on main; where a 9B Q4_K_M step's time
# goes (bench -profile 8 at 1k). carry ["bin"], binaries from
# `bash scripts/gpu/bins.sh main=main:memra,gate,bench old=f8c59a2:bench`.
# ~9 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k q4_k_m"
wait_synth
el "gates"
gate main "$M/9b-q4_k_m.gguf" 300 64 0
ten=""
for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q5_k q6_k; do ten="$ten,$M/$p-$t.gguf"; done; done
ten=${ten#,}
el "bench main (table command, twelve models)"
mkdir -p /tmp/table /tmp/old /tmp/prof
timeout 280 ./bin/main/bench -model "$ten,$M/0.8b-q4_k_m.gguf,$M/9b-q4_k_m.gguf" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/table \
  > /tmp/table/stdout.txt 2> /tmp/table/stderr.txt
grep -E 'copy bandwidth' /tmp/table/stderr.txt
grep -E '\| (graph|sampled) \|' /tmp/table/stdout.txt | cut -d'|' -f2,4,5,6,9,13
el "bench old (f8c59a2) at 1k"
timeout 80 ./bin/old/bench -model "$ten" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out /tmp/old \
  > /tmp/old/stdout.txt 2> /tmp/old/stderr.txt
grep -E 'copy bandwidth' /tmp/old/stderr.txt
el "compare old -> main"
./bin/main/bench -compare "$(ls -t /tmp/old/bench-*.json | head -1)" "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | grep -E '\| graph \||geomean' | cut -d'|' -f2-8
el "profile Q4_K_M at 1k"
timeout 50 ./bin/main/bench -model "$M/9b-q4_k_m.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -profile 8 -out /tmp/prof \
  > /tmp/prof/stdout.txt 2> /tmp/prof/stderr.txt
sed -n '/## Kernel time per step/,$p' /tmp/prof/stdout.txt | grep -v '^$' | head -44
tar czf "$OUT/table.tgz" -C /tmp table old prof
el done
