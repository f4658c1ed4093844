#!/usr/bin/env bash
# Session 54: run330 found the mend's 0.8B q8_0 priming 13% slower than
# 54a4c5e's on one warm machine (82.1, 81.3 against 92.8, 94.8 ms) while
# its 9B q8_0 was 0.9% faster; this alternates the two four times on the
# 0.8B q8_0 preset alone, 5 reps each. carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
wait_synth
i=0
for b in prev main prev main prev main prev main; do
  i=$((i+1)); d=/tmp/bp3/$i-$b; rm -rf $d; mkdir -p $d
  timeout 60 ./bin/$b/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 5 -tokens 32 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "$b rc $?: $(grep -E 'prime' $d/stderr.txt)"
done
el done
