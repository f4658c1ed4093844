#!/usr/bin/env bash
# Session 75, first call. On an H200: what step 127 waits for there (four
# gates of main, prime ms at P = 512 of old (main before step 127, chunks
# of 8) against main (32), alternated twice) and docs/perf.md's table
# command on main, compared with run410's. On any GPU: bench -profile 4
# at P = 512 on the 0.8B bf16 and q8_0 and 9B q8_0 presets, a prefill
# chunk of 32 tokens kernel by kernel (where a chunk's time goes now).
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh old=16afdf8:bench main=main:memra,gate,bench
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
case $gpu in
*H200*)
  synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  el gates
  gate main "$M/0.8b-bf16.gguf" 300 64 0
  gate main "$M/0.8b-q4_k.gguf" 77 64 1
  gate main "$M/9b-q8_0.gguf" 300 32 0
  gate main "$M/9b-bf16.gguf" 77 32 1
  prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf,$M/9b-bf16.gguf" old main old main
  full_table main
  el compare
  ./bin/main/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
*)
  synth main "0.8b" "bf16 q8_0"
  S0=$SYNTH
  synth main "9b" "q8_0"
  SYNTH="$S0 $SYNTH"
  wait_synth
  ;;
esac
el "bench -profile 4 at P = 512"
mkdir -p /tmp/prof
timeout 240 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -profile 4 -sampled=false -out /tmp/prof > "$OUT/prof.md" 2> /tmp/prof/stderr.txt
echo "rc $?"
grep -E 'prime|profile' /tmp/prof/stderr.txt | head -12
awk '/per prefill chunk/{p=1; n=0} p&&/^(\||##)/{print; if (++n>16) p=0}' "$OUT/prof.md"
el done
