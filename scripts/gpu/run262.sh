#!/usr/bin/env bash
# Session 39 (step 94): matvec_q8_0_head, the plain q8_0 kernel with a whole
# unit of 1,024-column rows in its head before the wait (MEMRA_Q8_HEAD=1).
# Its matvec cases and the decode and graph tests with it on; 64 greedy
# tokens with it off and on (the same sums: the same bits); the gate with it
# on; bench graph tok/s at 1k on 0.8B q8_0 (and 0.8B bf16, which it does not
# touch, as a control) with MEMRA_Q8_HEAD=0 and =1 alternating; bench
# -profile 8 of 0.8B q8_0 both ways. carry ["bin"]. ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0 bf16"
el "engine/gpu tests (MEMRA_Q8_HEAD=1)"
(cd engine/gpu && MEMRA_Q8_HEAD=1 timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared|DecodeMatchesCPU|GraphEqualsEager|EarlyLoads' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
echo "q8_0 head cases passed: $(grep -cE -- '--- PASS: TestGPUKernelMatvec/q8_0-wide3' "$OUT/gputest.txt")"
wait_synth
el "greedy tokens, MEMRA_Q8_HEAD=0 and =1"
for h in 0 1; do
  MEMRA_Q8_HEAD=$h timeout 60 ./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda > "$OUT/tok-$h.txt" 2>&1
done
if grep -qE '^[0-9 ,]+$' "$OUT/tok-1.txt" && cmp -s <(grep -E '^[0-9 ,]+$' "$OUT/tok-0.txt") <(grep -E '^[0-9 ,]+$' "$OUT/tok-1.txt"); then
  echo "0.8b-q8_0: 64 greedy tokens head off == on"
else
  echo "0.8b-q8_0: greedy tokens DIFFER or missing (tok-*.txt)"
fi
el "gate (MEMRA_Q8_HEAD=1)"
export MEMRA_Q8_HEAD=1
gate main "$M/0.8b-q8_0.gguf" 64 256 0
gate main "$M/0.8b-q8_0.gguf" 300 128 1
unset MEMRA_Q8_HEAD
mkdir -p /tmp/bn
for h in 0 1 0 1 0 1; do
  el "bench MEMRA_Q8_HEAD=$h"
  d=/tmp/bn/head$h-$(date +%s%N); mkdir -p "$d"
  MEMRA_Q8_HEAD=$h timeout 100 ./bin/main/bench -model "$M/0.8b-q8_0.gguf,$M/0.8b-bf16.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
for h in 0 1; do
  el "bench -profile 8, MEMRA_Q8_HEAD=$h"
  MEMRA_Q8_HEAD=$h timeout 100 ./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/prof$h 2>/dev/null | grep -E '^\| (matvec|gdn|rms|attn)' | head -8
done
el done
