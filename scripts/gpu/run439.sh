#!/usr/bin/env bash
# Session 78, after step 132 (`bash scripts/gpu/run439.sh`). On an H200:
# docs/perf.md's current table (lib.sh full_table, main) compared with
# run410's JSON, which steps 127-132 have not had. On another GPU: graph
# decode of the four goal models (0.8B and 9B, bf16 and q8_0) at 64, 1k and
# 32k with main (step 132), the bf16 ones with and without -full-logits,
# for the 9B's 32k / 1k with the screen. ~5 minutes either way.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,gate
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*)
  synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  full_table main
  el compare
  ./bin/main/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
*)
  synth main "0.8b 9b" "bf16 q8_0"
  wait_synth
  mkdir -p /tmp/t4
  for mode in screen full; do
    flag="" ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
    [ $mode = full ] && flag=-full-logits ms="$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" # q8_0 has no copy
    el "bench 64,1k,32k ($mode)"
    timeout 200 ./bin/main/bench -model "$ms" -ctx 64,1024,32768 \
      -reps 3 -tokens 64 -sampled=false $flag -out /tmp/t4/$mode > /tmp/t4/$mode.txt 2> /tmp/t4/$mode.err
    echo "rc $?"
    grep -E '\| graph \|' /tmp/t4/$mode.txt | cut -d'|' -f2,4,5,6,9,13
  done
  tar czf "$OUT/t4.tgz" -C /tmp t4
  ;;
esac
el done
