#!/usr/bin/env bash
# Session 73: right after run411 on the same H200, step 125 alone: prime
# ms at P = 512 with -eager-chunks and without, one binary (main), twice.
source scripts/gpu/lib.sh; start_run; ms="$M/0.8b-bf16.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf"; for r in 1 2; do for f in -eager-chunks ""; do el "prime P=512 round $r ${f:-replay}"; timeout 60 ./bin/main/bench -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false $f -out /tmp/p$r$f > /dev/null 2> /tmp/err.txt; grep prime /tmp/err.txt; done; done; el done
