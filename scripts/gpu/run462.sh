#!/usr/bin/env bash
# Session 85 (`bash scripts/gpu/run462.sh`, asked for as nvidia-h200, ran on
# an H100; log docs/results/h100-run462-log.txt): step 140, the delta rule
# and the gated norm in one launch (gdn_delta_normed, a head's 8 blocks a
# cluster), as the patch it was before it landed in 5833663. carry ["bin"];
# binaries: `BINS_ARCHS=90 bash scripts/gpu/bins.sh m=main:bench
# p=main+scripts/gpu/patches/gdnnorm.patch:memra,gate,bench,engine_gpu.test`
# at 1e89bb7 (the patch: 5833663's kernels and engine changes, removed once
# landed).
# The GPU tests it touches (the kernel against the two it fuses, bit for
# bit; decode against the CPU; graph and sessions against eager; prefill
# against token feed; the profiles), two gates, then main (m) and the patch
# (p) in turn, twice each, graph rows of the 0.8B and 9B bf16 and q8_0 at
# 1k, and p's 0.8B bf16 graph-step profile.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
el "GPU tests (p)"
(cd engine/gpu && timeout 250 "$R/bin/p/engine_gpu.test" -test.run 'GDNDelta|RMSNormGated|EarlyLoads|ProfileStep|ProfileGraphStep|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|Prefill|Chunk|Screened' -test.v -test.timeout 240s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -60
grep -A3 "TestGPUKernelGDNDeltaNormed" "$OUT/gputest.txt" | head -12
synth p "0.8b 9b" "bf16 q8_0"
wait_synth
el gates
gate p "$M/0.8b-bf16.gguf" 64 512 0
gate p "$M/9b-q8_0.gguf" 64 256 0
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf,$M/9b-bf16.gguf" 1024 m p m p
profile_at p "0.8b-bf16"
grep -A26 '^## Kernel time per graph step' /tmp/prof/stdout.txt
el done
