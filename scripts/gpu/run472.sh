#!/usr/bin/env bash
# Prepared in session 86 (`bash scripts/gpu/run472.sh`; its device time ran
# out in failed starts); it ran in session 87 as run473.sh's half for a card
# that is not an H200 (log docs/results/h100-run473-log.txt), with main's m
# for o. Step 143's two forms against main on one
# machine (run470 and run471 ran them on two H100s). carry ["bin"];
# binaries: `BINS_ARCHS=90 bash scripts/gpu/bins.sh o=9ac22d6:bench
# a=9ac22d6+scripts/gpu/patches/attn/prepsplit.patch:bench
# p=9ac22d6+scripts/gpu/patches/attn/prepsplit-staged.patch:memra,bench` (a:
# the step as run470 ran it, one trip to the L2 a head; p: its inputs staged
# in one trip, as run471 ran it). o, a and p in turn, three times each,
# graph rows of the 0.8B bf16 and q8_0 and the 9B q8_0 at 1k.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth p "0.8b" "bf16 q8_0"
first=$SYNTH
synth p "9b" "q8_0"
SYNTH="$first $SYNTH"
wait_synth
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 o a p o a p o a p
el done
