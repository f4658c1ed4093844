#!/usr/bin/env bash
# Session 71: main after step 122 (6d8e5fa, the committed fatbin): the
# batch, chunk and prefill GPU tests and gates on the K-quant and bf16
# presets step 122's kernels run; then, on an H200 only, main's decode at
# 64 and 1k on the types whose kernels changed since an H200 last ran them:
# Q4_K_M (step 113's mixed launch; run352 ran session 62's main: bench
# -compare against it), IQ4_XS and IQ4_NL (steps 107-108), Q3_K and Q4_0.
# Its H200 part did not run (the machine was an H100); it is written here
# through lib.sh's types_table, the same commands. carry ["bin"]; `bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
synth main "0.8b 9b" "q4_k q5_k q4_k_m"
synth_k=$SYNTH
synth main "0.8b" "bf16"
SYNTH="$SYNTH $synth_k"
run_tests main 'TestGPUKernelMatvecBatch|Chunk|TestGPUPrefillMatchesTokenFeed'
wait_synth
el "gates (main)"
gate main "$M/9b-q4_k.gguf" 300 32 0
gate main "$M/9b-q5_k.gguf" 300 32 0
gate main "$M/0.8b-q4_k_m.gguf" 300 128 1
gate main "$M/0.8b-bf16.gguf" 300 128 0
gate main "$M/9b-q4_k_m.gguf" 300 32 0
case $gpu in *H200*) ;; *) el "not an H200: no decode table"; exit 0 ;; esac
synth main "0.8b 9b" "iq4_xs iq4_nl q3_k q4_0"
wait_synth
types_table main docs/results/h200-run352.json "q4_k_m iq4_xs iq4_nl q3_k q4_0"
el done
