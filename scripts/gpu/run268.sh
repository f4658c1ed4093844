#!/usr/bin/env bash
# Prepared in session 39 (not run: the session's device time was spent),
# run in session 40 after run269 on the same machine (whose q8_0 models are
# removed first: the disk holds 64 GB), with next/wide-5120's binaries as
# bin/w5120.
# Step 95 left Q5_K and Q6_K at the 4,096-row bound: on synth 27B Q5_K and
# Q6_K, bench graph at 1k with their 5,120-row matrices on the plain kernels
# (MEMRA_KQ_WIDE=4096, main's rule for them) and the wide ones (5120),
# alternating, and the gate with the wide ones. Then 27B bf16, whose 54 GB
# file does not fit on the machine's disk beside the others: written to
# /dev/shm when it has room, its gates and bench at 1k and 32k. Uses this
# branch's environment bounds (bin/w5120 = next/wide-5120's binaries).
# carry ["bin"]. ~8-9 min: the K-quant synths are the slow part.
set -u
source scripts/gpu/lib.sh
start_run
rm -f "$M"/*q8_0.gguf
synth w5120 "27b" "q5_k q6_k"
wait_synth
mkdir -p /tmp/bn
for r in 1 2; do
  for t in q5_k q6_k; do
    for w in 4096 5120; do
      el "bench 27b-$t MEMRA_KQ_WIDE=$w"
      d=/tmp/bn/$t-$w-$(date +%s%N); mkdir -p "$d"
      MEMRA_KQ_WIDE=$w timeout 60 ./bin/w5120/bench -model "$M/27b-$t.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
    done
  done
done
export MEMRA_KQ_WIDE=5120
gate w5120 "$M/27b-q5_k.gguf" 64 64 0
gate w5120 "$M/27b-q6_k.gguf" 64 64 1
unset MEMRA_KQ_WIDE
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
rm -f "$M"/27b-q5_k.gguf "$M"/27b-q6_k.gguf
el "27b bf16 in /dev/shm: $(df -BG /dev/shm | tail -1)"
if [ "$(df -BG --output=avail /dev/shm | tail -1 | tr -dc 0-9)" -gt 60 ]; then
  ./bin/w5120/memra synth --arch qwen35 --preset 27b --type bf16 -o /dev/shm/27b-bf16.gguf > /dev/null 2>&1
  gate w5120 /dev/shm/27b-bf16.gguf 64 64 0
  timeout 200 ./bin/w5120/bench -model /dev/shm/27b-bf16.gguf -ctx 1024,32768 -reps 3 -tokens 32 -out /tmp/b16 2>/dev/null | grep -E '\| (graph|eager) \||copy bandwidth'
  rm -f /dev/shm/27b-bf16.gguf
else
  el "not enough room in /dev/shm: 27b bf16 skipped"
fi
el done
