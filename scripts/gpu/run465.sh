#!/usr/bin/env bash
# Session 85 (`bash scripts/gpu/run465.sh`, asked for as nvidia-h200, ran on
# an H100; log docs/results/h100-run465-log.txt): step 141, the conv, the
# delta rule and the gated norm in one launch where H_v = H_k
# (gdn_step_normed). Not taken: the patch, as it ran on 0567150, is
# scripts/gpu/patches/gdn/step.patch. carry ["bin"]; binaries, at 0567150
# with the patch then at scripts/gpu/patches/gdnstep.patch:
# `BINS_ARCHS=90 bash scripts/gpu/bins.sh m=main:bench
# p=main+scripts/gpu/patches/gdnstep.patch:memra,gate,bench,engine_gpu.test`.
# The GPU tests it touches (the kernel against the three it fuses, bit for
# bit; an equal-heads model's prefill against token feed and graph against
# eager; decode against the CPU; the omit, profile and early-load tests),
# two gates on the 0.8B (the preset whose heads are equal), then main (m)
# and the patch (p) in turn, twice each, graph rows of the 0.8B bf16 and
# q8_0 and the 9B q8_0 (unchanged: H_v = 2 H_k) at 1k, and p's 0.8B bf16
# graph-step profile.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
el "GPU tests (p)"
(cd engine/gpu && timeout 250 "$R/bin/p/engine_gpu.test" -test.run 'GDNStepNormed|GDNDeltaNormed|GDNDelta$|GDNConv$|EqualHeads|DecodeMatchesCPU|GraphEqualsEager|OmitParts|EarlyLoads|ProfileStep|ProfileGraphStep|PrefillMatchesTokenFeed' -test.v -test.timeout 240s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -60
grep -E -A2 "^--- (PASS|FAIL): Test(GPUKernelGDNStepNormed|GPUEqualHeadsStep)" "$OUT/gputest.txt" | head -12
synth p "0.8b" "bf16 q8_0"
first=$SYNTH
synth p "9b" "q8_0"
SYNTH="$first $SYNTH"
wait_synth
el gates
gate p "$M/0.8b-bf16.gguf" 64 512 0
gate p "$M/0.8b-q8_0.gguf" 64 512 1
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 m p m p
profile_at p "0.8b-bf16"
grep -A26 '^## Kernel time per graph step' /tmp/prof/stdout.txt
el done
