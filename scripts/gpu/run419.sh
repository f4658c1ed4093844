#!/usr/bin/env bash
# Session 74, step 127 on whatever GPU comes with the session's last device
# time (asked for as nvidia-h200): prime ms at P = 512 of old (main before
# step 127, chunks of 8) against new (chunks of 32), alternated twice, on
# the 0.8B bf16 and Q4_K and 9B q8_0 presets, then a gate on new.
# carry ["bin"]; binaries as run418's.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth new "0.8b" "bf16 q4_k"
S0=$SYNTH
synth new "9b" "q8_0"
SYNTH="$S0 $SYNTH"
wait_synth
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" old new old new
el gate
gate new "$M/0.8b-bf16.gguf" 300 64 0
el done
