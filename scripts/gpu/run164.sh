#!/usr/bin/env bash
# Session 25, step 73: bin/q56 = branch next/q5k-wide-s2 (the wide Q5_K and
# Q6_K rings 2 slots, Q5_K wide up to 4,096 rows; run163), the candidate for
# main; bin/q4s2 and bin/q4s3 = it with the wide Q4_K ring 2 or 3 slots
# instead of 4 (branches next/q4k-wide-s2, -s3). Every engine/gpu GPU test
# on q56 (the rewritten TestGPUMatvecSharedLimit's first run), Q4_K chains,
# tokens and a gate on q4s2, bench at 1k q56/q4s2/q4s3 twice, then the
# perf.md table command on the K-quant presets: all six on q56, the Q4_K two
# on q4s2 and q4s3. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth q56 "0.8b 9b" "q4_k q5_k q6_k"
gpu_tests q56
for b in q56 q4s2 q4s3; do chain $b 'Q4_K/(4096x12288|4096x4096)/.*/graph'; done
wait_synth
el "64 greedy tokens, gate"
tokens_cmp q56 q4s2 "0.8b-q4_k 9b-q4_k"
gate q4s2 $M/9b-q4_k.gguf 300 256 1
bench_rotation "$M/9b-q4_k.gguf,$M/0.8b-q4_k.gguf" 1024 q56 q4s2 q4s3 q56 q4s2 q4s3
kq_table() {
  local b=$1 ms=$2 d=/tmp/table-$1
  el "bench (table command, $b)"
  mkdir -p "$d"
  timeout 200 "./bin/$b/bench" -model "$ms" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
  grep -E '\| (graph|sampled) \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9,13
}
kq_table q56 "$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf"
kq_table q4s2 "$M/0.8b-q4_k.gguf,$M/9b-q4_k.gguf"
kq_table q4s3 "$M/0.8b-q4_k.gguf,$M/9b-q4_k.gguf"
tar czf "$OUT/tables.tgz" -C /tmp table-q56 table-q4s2 table-q4s3
el done
