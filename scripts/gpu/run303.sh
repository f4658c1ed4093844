#!/usr/bin/env bash
# Session 48, main after step 98 (f8c59a2: the L2 window held where the
# state and scratch are >= 1.4% of a step's weights, i.e. the 0.8B presets):
# the decode GPU tests, gates on 0.8B (f16 and FP8 KV), 2B q8_0 and 9B q8_0,
# 24 greedy tokens cuda against cpu, the bench's L2 line for 2B bf16 (no
# hold), and perf.md's full table (run271's command) with bench -compare
# against run271. carry ["bin"]. ~6 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
s1=$SYNTH
synth main "2b" "bf16 q8_0"
SYNTH="$s1 $SYNTH"
el "decode and cuda GPU tests"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|L2' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
(cd engine/cuda && timeout 90 "$R/bin/main/engine_cuda.test" -test.run 'GPU' 2>&1 | tail -2)
wait_synth
el "gates"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/0.8b-bf16.gguf" 64 128 1
gate main "$M/2b-q8_0.gguf" 64 128 0
gate main "$M/9b-q8_0.gguf" 64 64 0
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
el "2b: the bench's L2 line"
timeout 60 ./bin/main/bench -model "$M/2b-bf16.gguf,$M/2b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out /tmp/b2 2>&1 | grep -E 'MiB of L2|\| graph \|' | cut -d'|' -f1-6
full_table main
el "compare with run271"
./bin/main/bench -compare docs/results/h200-run271.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -60
el done
