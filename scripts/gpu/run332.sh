#!/usr/bin/env bash
# Session 54, the last mend (prefillPlan.launch returns its kernel, one
# lookup a launch; the SASS tests share sassBeforeWait): the batch and
# prefill GPU tests and the 0.8B q8_0 gate on main. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
el "batch and prefill GPU tests (main)"
(cd engine/gpu && timeout 120 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager' -test.v -test.timeout 110s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
grep -E -- '--- (PASS|FAIL): TestGPUPrefillMatchesTokenFeed/.*staged' "$OUT/gputest.txt"
wait_synth
gate main "$M/0.8b-q8_0.gguf" 300 256 1
el done
