#!/usr/bin/env bash
# Session 12: docs/perf.md's full table with the binaries before step 37
# (aefdabd), the control for run81's table, which ran step 37 (kept after
# the two were compared). Reuses run81's models when the machine holds them.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
M=/tmp/models; mkdir -p $M
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q6_k; do
  [ -s $M/$p-$t.gguf ] || { ./bin/old/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"; }
done; done
[ -n "$pids" ] && { el "synth:$pids"; wait $pids; }
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q6_k.gguf
mkdir -p $OUT/table
el "bench (full table, old = main)"
timeout 200 ./bin/old/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out $OUT/table 2>$OUT/table/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
rm -f $OUT/table/latest.* $OUT/table/stderr.txt
el done
