#!/usr/bin/env bash
# Session 48, step 98's landed form (b023b50): the L2 set-aside sized by the
# caches that hold it, on by default where a cache's state and scratch fit
# (0.8B, 2B), none for 9B. Checks: the cuda GPU tests (TestGPUL2Window's
# holds), the decode tests (CPU, graph == eager, session), the default gate
# and gates on 0.8B bf16 and 2B q8_0, greedy cuda == cpu on 0.8B q8_0, all
# with the window on by default. Then the bench's graph rows at 1k and 32k,
# MEMRA_L2WINDOW=0 and unset alternating (0, on, on, 0) on one machine.
# carry ["bin"]. At most ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0 q4_k"
synth_a=$SYNTH
synth main "2b" "bf16 q8_0"
synth_b=$SYNTH
synth main "9b" "q8_0"
SYNTH="$synth_a $synth_b $SYNTH"
el "cuda GPU tests"
(cd engine/cuda && timeout 90 "$R/bin/main/engine_cuda.test" -test.run 'GPU' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|L2 |panic' | grep -v -- '--- PASS' | head -20)
el "decode GPU tests (window on by default)"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
el "default gate"
timeout 150 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
ls "$M"/*.gguf
gate main "$M/0.8b-bf16.gguf" 64 256 0
gate main "$M/2b-q8_0.gguf" 64 256 0
greedy main "$M/0.8b-q8_0.gguf"
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/2b-bf16.gguf,$M/2b-q8_0.gguf,$M/9b-q8_0.gguf"
mkdir -p /tmp/bn
for w in 0 on on 0; do
  d=/tmp/bn/w$w-$(date +%s%N); mkdir -p "$d"
  el "bench 1k,32k, MEMRA_L2WINDOW=$w"
  if [ "$w" = on ]; then unset MEMRA_L2WINDOW; else export MEMRA_L2WINDOW=0; fi
  timeout 130 ./bin/main/bench -model "$ms" -ctx 1024,32768 -reps 3 -tokens 64 -sampled=false -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6
  grep -hE 'copy bandwidth|MiB of L2' "$d/stderr.txt" | sed -E 's/^\[bench\] /  /'
done
unset MEMRA_L2WINDOW
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el done
