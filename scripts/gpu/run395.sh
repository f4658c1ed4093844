#!/usr/bin/env bash
# Session 72: run394's first-model priming effect (the first 0.8B K-quant
# model a bench run loads primed 24-32 ms slower at P=512, each repeat
# alike). Is it the process's first model, whatever the file? The same
# Q4_K file twice (a copy under another name) then Q6_K, three ways: as
# run394 ran, with -warmup 4, and with CUDA_MODULE_LOADING=EAGER (every
# kernel loaded when the module is, not at its first launch).
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test
# ~1.5 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth main "0.8b" "q4_k q6_k"
wait_synth
cp "$M/0.8b-q4_k.gguf" "$M/0.8b-q4_k-again.gguf"
ms="$M/0.8b-q4_k.gguf,$M/0.8b-q4_k-again.gguf,$M/0.8b-q6_k.gguf"
for way in plain warmup4 eager plain; do
  el "bench prime ($way)"
  args="" ; envs=""
  case $way in warmup4) args="-warmup 4" ;; eager) envs="CUDA_MODULE_LOADING=EAGER" ;; esac
  env $envs timeout 100 ./bin/main/bench -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false $args -out /tmp/fm 2>&1 >/dev/null | grep -E 'prime|graph:'
done
el done
