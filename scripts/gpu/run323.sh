#!/usr/bin/env bash
# Session 53, after the review mend: the chunk kernel tests (the split's
# new cases: chunks of 1 and 8, a head group of 6), the prefill test with
# its new tensor-core-split case, session feed, graph == eager, and the
# default and 0.8B gates. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"
el "chunk and prefill tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'Chunk|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-prefill.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-prefill.txt" | grep -v "^    --- PASS" | head -20
grep -cE -- '--- PASS: TestGPUKernelAttnSplitChunk/' "$OUT/gputest-prefill.txt"
grep -E -- '--- (PASS|FAIL): TestGPUPrefillMatchesTokenFeed/mma' "$OUT/gputest-prefill.txt"
el "default gate"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
el "gates"
gate main "$M/0.8b-bf16.gguf" 300 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
el done
