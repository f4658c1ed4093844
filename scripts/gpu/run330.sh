#!/usr/bin/env bash
# Session 54: run329's priming again on the same warm machine, nothing else
# running (run329's 0.8B figures were noisy after its racecheck timed out):
# bin/prev 54a4c5e against bin/main (the mend), alternated twice, the q8_0
# presets at P=512. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q8_0"
wait_synth
nvidia-smi --query-compute-apps=pid,name --format=csv,noheader | head -3
ms="$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf"
i=0
for b in prev main prev main; do
  i=$((i+1)); d=/tmp/bp2/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
el done
