#!/usr/bin/env bash
# Session 86 (`bash scripts/gpu/run470.sh`, asked for as nvidia-h200, ran
# on an H100; log docs/results/h100-run470-log.txt): step 143, attn_prep
# inside the attention split's launch over an f16 cache (attn_prep_split).
# Not taken (docs/perf.md step 143). carry ["bin"]; binaries, at 9ac22d6
# with the step on a branch of it (a1f438f, its fatbin sm_90 only, since
# deleted; the step is kept as scripts/gpu/patches/attn/prepsplit.patch):
# `bash scripts/gpu/bins.sh o=main:bench
# p=s86-prepsplit:memra,gate,bench,engine_gpu.test`; to build them again,
# `BINS_ARCHS=90 bash scripts/gpu/bins.sh o=9ac22d6:bench
# p=9ac22d6+scripts/gpu/patches/attn/prepsplit.patch:memra,gate,bench,engine_gpu.test`.
# The GPU tests it touches (the kernel against attn_prep + the split, bit
# for bit; the split and prep kernels; decode against the CPU; graph and
# session against eager; prefill against token feed; the omit, profile and
# early-load tests), gates on the 0.8B over both caches, then main (o) and
# the step (p) in turn, twice each, graph rows of the 0.8B bf16 and q8_0 and
# the 9B q8_0 at 1k, the 9B q8_0 at 16k once each, and p's 0.8B bf16
# graph-step profile.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth p "0.8b" "bf16 q8_0"
first=$SYNTH
synth p "9b" "q8_0"
SYNTH="$first $SYNTH"
el "GPU tests (p)"
(cd engine/gpu && timeout 250 "$R/bin/p/engine_gpu.test" -test.run 'AttnPrepSplit|KernelAttention|KernelAttnPrep|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|OmitParts|EarlyLoads|ProfileStep|ProfileGraphStep|PrefillMatchesTokenFeed' -test.v -test.timeout 240s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -60
wait_synth
el gates
gate p "$M/0.8b-bf16.gguf" 64 512 0
gate p "$M/0.8b-q8_0.gguf" 64 512 0
gate p "$M/0.8b-q8_0.gguf" 64 256 1
gate p "$M/9b-q8_0.gguf" 64 128 0
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 o p o p
mv "$OUT/bench-rotation.tgz" "$OUT/bench-rotation-1k.tgz"
bench_rotation "$M/9b-q8_0.gguf" 16384 o p
profile_at p "0.8b-bf16"
grep -A26 '^## Kernel time per graph step' /tmp/prof/stdout.txt
el done
