#!/usr/bin/env bash
# Session 74, step 127: prefill chunks longer than a batch kernel's 8
# tokens, each batch launch taking them in passes (grid rows). The batch
# kernel and prefill tests of the new binary, then prime ms at P = 512:
# main (chunks of 8) against new at -chunk 8, 16 and 32, alternated twice,
# on the 0.8B bf16, q8_0 and Q4_K and 9B q8_0 presets, on any GPU.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:bench new=chunk16:memra,bench,engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth new "0.8b" "bf16 q8_0 q4_k"
S0=$SYNTH
synth new "9b" "q8_0"
SYNTH="$S0 $SYNTH"
run_tests new 'KernelMatvecBatch|PrefillMatchesTokenFeed|PrefillReplay|ProfilePrefill|GraphEqualsEager'
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf"
mkdir -p /tmp/bp
for r in 1 2; do
  for cfg in main:0 new:0 new:16 new:32; do
    b=${cfg%:*} c=${cfg#*:}
    d=/tmp/bp/$r-$b-$c; mkdir -p "$d"
    el "prime P=512 round $r: $b -chunk $c"
    args=""; [ "$c" = 0 ] || args="-chunk $c"
    timeout 150 "./bin/$b/bench" -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false $args -out "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo "rc $?"
    grep -E 'prime' "$d/stderr.txt"
  done
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el done
