#!/usr/bin/env bash
# Session 48, step 98: an L2 access policy window over the decode state and
# scratch (MEMRA_L2WINDOW=1, c224c41). Checks first: the window's cuda test,
# the decode tests (CPU, graph == eager, session) and the default gate with
# the window on, 64 greedy tokens of 0.8B bf16 and 9B q8_0 with it on and
# off compared. Then the bench's graph rows at 1k, the window off and on
# alternating on one machine (two rounds), 0.8B bf16 and q8_0, 9B bf16 and
# q8_0. carry ["bin"]. At most ~8 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "cuda: TestGPUL2Window"
(cd engine/cuda && timeout 60 "$R/bin/main/engine_cuda.test" -test.run 'TestGPUL2Window|TestGPUModuleLaunch|TestGPUGraphCaptureReplay' -test.v 2>&1 | grep -E '^(=== RUN|--- |ok|FAIL|PASS)|gpu_test|panic' | head -20)
el "decode GPU tests with MEMRA_L2WINDOW=1"
(cd engine/gpu && MEMRA_L2WINDOW=1 timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v -test.timeout 190s > "$OUT/gputest-l2.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-l2.txt" | grep -v "^    --- PASS" | head -20
el "default gate with MEMRA_L2WINDOW=1"
MEMRA_L2WINDOW=1 timeout 150 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
ls -la "$M"
el "gates and tokens with the window on"
export MEMRA_L2WINDOW=1
gate main "$M/0.8b-bf16.gguf" 64 256 0
gate main "$M/9b-q8_0.gguf" 64 256 0
mkdir -p /tmp/tok
for m in 0.8b-bf16 9b-q8_0; do
  for w in 0 1; do
    MEMRA_L2WINDOW=$w timeout 60 ./bin/main/memra run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda > "/tmp/tok/$m-$w.txt" 2>&1
  done
  cmp -s <(grep -E '^[0-9 ,]+$' "/tmp/tok/$m-0.txt") <(grep -E '^[0-9 ,]+$' "/tmp/tok/$m-1.txt") && grep -qE '^[0-9 ,]+$' "/tmp/tok/$m-1.txt" \
    && echo "$m: 64 greedy tokens window off == on" || echo "$m: tokens DIFFER or missing (see tok.tgz)"
done
tar czf "$OUT/tok.tgz" -C /tmp tok
unset MEMRA_L2WINDOW
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
mkdir -p /tmp/bn
for round in 1 2; do
  for w in 0 1; do
    el "bench 1k, MEMRA_L2WINDOW=$w, round $round"
    d=/tmp/bn/w$w-r$round; mkdir -p "$d"
    MEMRA_L2WINDOW=$w timeout 150 ./bin/main/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
    grep -m1 'L2 set aside' "$d/stderr.txt" | sed 's/^/  /'
  done
done
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el done
