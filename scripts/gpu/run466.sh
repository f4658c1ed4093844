#!/usr/bin/env bash
# Session 85 (`bash scripts/gpu/run466.sh`, asked for as nvidia-h200, ran on
# an H100; log docs/results/h100-run466-log.txt): step 142, gdn_delta_normed's
# cluster barrier split into its arrive and its wait, the state's rows stored
# between them. Not taken (within ±0.2%): the patch, as it ran on f2b77c0, is
# scripts/gpu/patches/gdn/split.patch. carry ["bin"]; binaries, the patch then
# at scripts/gpu/patches/split.patch: `BINS_ARCHS=90 bash scripts/gpu/bins.sh
# m=main:memra,bench p=main+scripts/gpu/patches/split.patch:bench,engine_gpu.test`.
# The kernel and graph tests of p, then m and p in turn, three times each,
# graph rows of the 0.8B bf16 and q8_0 and the 9B q8_0 at 1k.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cd engine/gpu && timeout 120 "$R/bin/p/engine_gpu.test" -test.run 'GDNDeltaNormed|GraphEqualsEager|PrefillMatchesTokenFeed|DecodeMatchesCPU' -test.timeout 110s 2>&1 | tail -3)
synth m "0.8b" "bf16 q8_0"
first=$SYNTH
synth m "9b" "q8_0"
SYNTH="$first $SYNTH"
wait_synth
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 m p m p m p
el done
