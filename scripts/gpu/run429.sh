#!/usr/bin/env bash
# Session 76, PREPARED, NOT RUN (no H200 came), for an H200 right after
# run428 (the same warm machine and models): every engine/gpu GPU test of main, four gates, and prompt
# priming at P = 512 of pre127 (16afdf8, the parent of step 127's commit)
# against main, alternated twice: steps 127-129 on an H200, which they have
# not run on. On another GPU it says so and stops.
# carry ["bin"]; binaries as run428.sh says.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
case $gpu in *H200*) ;; *) el "not an H200: nothing to do"; exit 0 ;; esac
gpu_tests main
synth main "0.8b" "bf16 q8_0"
S0=$SYNTH
synth main "9b" "bf16 q8_0"
SYNTH="$S0 $SYNTH"
wait_synth
el gates
gate main "$M/9b-q8_0.gguf" 300 64 0
gate main "$M/9b-bf16.gguf" 300 64 1
gate main "$M/0.8b-bf16.gguf" 300 64 1
gate main "$M/0.8b-q8_0.gguf" 300 64 0
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" pre127 main pre127 main
el done
