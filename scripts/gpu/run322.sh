#!/usr/bin/env bash
# Session 53, step 100 as landed: prime time before the session (bin/base,
# dfed218) and after (bin/main) on one machine, alternated, at P=512 for the
# four presets and P=2048 for the 0.8B ones, with main's -token-feed beside
# them; decode at 1k alongside. carry ["bin"]. ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
i=0
for run in "base" "main" "base" "main" "main -token-feed"; do
  set -- $run; b=$1; f=${2:-}
  i=$((i+1)); d=/tmp/bp/$i-$b$f; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($run)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false $f -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
for run in "base" "main" "main -token-feed"; do
  set -- $run; b=$1; f=${2:-}
  i=$((i+1)); d=/tmp/bp/$i-$b$f-2k; rm -rf $d; mkdir -p $d
  el "bench prime P=2048, 0.8B ($run)"
  timeout 150 ./bin/$b/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" -ctx 4096 -reps 3 -tokens 64 -prompt 2048 -sampled=false $f -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "memra run on cuda, a 300-token prompt (base, main)"
for b in base main; do
  timeout 60 ./bin/$b/memra run -m "$M/0.8b-bf16.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo "($b)"
done
el done
