#!/usr/bin/env bash
# Session 52, main after gdn_delta and gdn_delta_chunk share their setup
# (memra_delta_rows; gdn_delta's SASS unchanged, gdn_delta_chunk's
# rescheduled): the GDN kernel tests, the prefill and graph tests, the
# default gate and a 0.8B bf16 gate primed in chunks. carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16"
el "GDN, prefill and graph tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelGDN|KernelMatvecBatch|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager|DecodeMatchesCPU' -test.v -test.timeout 140s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
grep -cE '^--- FAIL|^FAIL|panic' "$OUT/gputest.txt"
el "default gate"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
gate main "$M/0.8b-bf16.gguf" 300 256 0
el done
