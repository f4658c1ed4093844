#!/usr/bin/env bash
# Session 25, step 74: bin/main = main (after step 73); bin/q4w = branch
# next/q4k-wave (matvec_q4_k_wave: the wide Q4_K kernel with a 2-slot ring,
# for Q4_K matrices of 2,049-4,096 rows and more than 8,192 columns, the
# 9B down projection; same sums as the wide kernel). Matvec and decode GPU
# tests (q4w), chains, 64 greedy tokens main == q4w, a gate, bench at 1k
# twice, and the table command on the Q4_K presets. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k"
el "matvec and decode GPU tests (q4w)"
(cd engine/gpu && timeout 200 "$R/bin/q4w/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads|LaneScales' -test.v -test.timeout 190s > "$OUT/gputest-q4w.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-q4w.txt" | grep -v "^    --- PASS" | head -20
echo "Q4_K wave subtests: $(grep -c -- '--- PASS.*Q4_K-wide2' "$OUT/gputest-q4w.txt") PASS, $(grep -c -- '--- FAIL.*Q4_K-wide2' "$OUT/gputest-q4w.txt") FAIL"
for b in main q4w; do chain $b 'Q4_K/(4096x12288|4096x4096)/.*/graph'; done
wait_synth
el "64 greedy tokens, gate"
tokens_cmp main q4w "0.8b-q4_k 9b-q4_k"
gate q4w $M/9b-q4_k.gguf 300 256 1
bench_rotation "$M/9b-q4_k.gguf,$M/0.8b-q4_k.gguf" 1024 main q4w main q4w
el "bench (table command, q4w)"
mkdir -p /tmp/table-q4w
timeout 120 ./bin/q4w/bench -model "$M/0.8b-q4_k.gguf,$M/9b-q4_k.gguf" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/table-q4w > /tmp/table-q4w/stdout.txt 2> /tmp/table-q4w/stderr.txt
grep -E '\| (graph|sampled) \|' /tmp/table-q4w/stdout.txt | cut -d'|' -f2,4,5,6,9,13
tar czf "$OUT/table-q4w.tgz" -C /tmp table-q4w
el done
