#!/usr/bin/env bash
# Ran in session 92 (log docs/results/h100-run485-log.txt; perf.md step 149)
# after session 91's four calls for it got no machine.
# Session 91: does a one-wave q8_0 grid lose with the early trigger on its
# own? (perf.md step 148 leaves it open: run482 moved every q8_0 grid at
# once, and run483's third form, the looping grids only, lost 1.4-2.0%.)
# t4 (scripts/gpu/patches/launch/trigger-wave.patch on 938a714): the q8_0
# kernels trigger just after their wait where their grid does not loop
# (units <= gridDim.x: every 0.8B q8_0 grid but the LM head's) and at the
# last unit where it does; ptxas (11.8, sm_90) gives them main's registers
# and no spill. If the 0.8B q8_0 gains, it lands. m and t4 in turn twice
# at 1k on the 0.8B q8_0 and the 9B q8_0 (the 0.8B bf16, whose kernels the
# patch leaves alone, as a control), tokens compared, two gates of t4.
# ~150 s with the start. carry ["bin"]; binaries: `BINS_ARCHS=90 bash
# scripts/gpu/bins.sh m=938a714:memra,bench,gate
# t4=938a714+scripts/gpu/patches/launch/trigger-wave.patch:memra,bench,gate`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
synth m "0.8b" "bf16 q8_0"
first=$SYNTH
synth m "9b" "q8_0"
SYNTH="$first $SYNTH"
wait_synth
bench_rotation "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf,$M/0.8b-bf16.gguf" 1024 m t4 m t4
el tokens
tokens_cmp m t4 "0.8b-q8_0 9b-q8_0"
el gates
gate t4 "$M/0.8b-q8_0.gguf" 64 256 0
gate t4 "$M/9b-q8_0.gguf" 64 128 0
el done
