#!/usr/bin/env bash
# Session 52, main after the review mend (memra_xs_elem: one expression for
# an element's place in a staged copy; matvec_batch_f32's SASS moved, the
# others' did not; Model.l2Window shared by the step and prefill): the batch
# kernel, prefill, session feed and graph tests, and the default gate.
# carry ["bin"]. ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
el "batch, prefill and graph tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|KernelGDN|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager|L2Window' -test.v -test.timeout 140s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
grep -cE '^--- FAIL|^FAIL|panic' "$OUT/gputest.txt"
el "default gate"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
el done
