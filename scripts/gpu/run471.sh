#!/usr/bin/env bash
# Session 86 (`bash scripts/gpu/run471.sh`, asked for as nvidia-h200, ran
# on an H100; log docs/results/h100-run471-log.txt): step 143 with its
# inputs staged in one trip to the L2 (run470 had one trip a head): attn_prep
# inside the attention split's launch over an f16 cache (attn_prep_split).
# Not taken (docs/perf.md step 143; run472.sh prepared to settle it). carry
# ["bin"]; binaries, at 9ac22d6 with the step on a branch of it (f21f7a0,
# its fatbin sm_90 only, since deleted; the step is kept as
# scripts/gpu/patches/attn/prepsplit-staged.patch): `bash
# scripts/gpu/bins.sh o=main:bench
# p=s86-prepsplit:memra,gate,bench,engine_gpu.test`; to build them again,
# `BINS_ARCHS=90 bash scripts/gpu/bins.sh o=9ac22d6:bench
# p=9ac22d6+scripts/gpu/patches/attn/prepsplit-staged.patch:memra,gate,bench,engine_gpu.test`.
# The GPU tests it touches (the kernel against attn_prep + the split, bit
# for bit; decode against the CPU; graph and
# session against eager; prefill against token feed; the omit, profile and
# early-load tests), gates on the 0.8B and the 9B, then main (o) and
# the step (p) in turn, twice each, graph rows of the 0.8B bf16 and q8_0 and
# the 9B q8_0 at 1k, and p's 0.8B bf16 graph-step profile.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth p "0.8b" "bf16 q8_0"
first=$SYNTH
synth p "9b" "q8_0"
SYNTH="$first $SYNTH"
el "GPU tests (p)"
(cd engine/gpu && timeout 250 "$R/bin/p/engine_gpu.test" -test.run 'AttnPrepSplit|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|OmitParts|EarlyLoads|ProfileStepBytes|PrefillMatchesTokenFeed' -test.v -test.timeout 240s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -60
wait_synth
el gates
gate p "$M/0.8b-bf16.gguf" 64 512 0
gate p "$M/0.8b-q8_0.gguf" 64 512 0
gate p "$M/9b-q8_0.gguf" 64 128 0
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 o p o p
profile_at p "0.8b-bf16"
grep -A26 '^## Kernel time per graph step' /tmp/prof/stdout.txt
el done
