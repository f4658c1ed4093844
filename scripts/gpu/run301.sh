#!/usr/bin/env bash
# Session 48, step 98 continued: run300 found that setting aside the L2 the
# H200 allows (37.5 of 60 MiB) cuts the device-to-device copy from 4.1 to
# 1.35 TB/s and the 9B presets by 11-17%. Does a smaller set-aside keep the
# stream and still hold the state? bin/exp (branch next/l2-setaside: main
# with MEMRA_L2SET_MIB capping the set-aside; the window's hit ratio is then
# set-aside / window): the bench's graph rows at 1k and its copy bandwidth,
# the window off and at 4, 12 and 24 MiB, in two rounds in opposite order.
# carry ["bin"]. At most ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
synth exp "0.8b 9b" "bf16 q8_0"
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf"
mkdir -p /tmp/bn
for spec in off 4 12 24 24 12 4 off; do
  d=/tmp/bn/$spec-$(date +%s%N); mkdir -p "$d"
  if [ "$spec" = off ]; then w=0; s=0; else w=1; s=$spec; fi
  el "bench 1k, MEMRA_L2WINDOW=$w MEMRA_L2SET_MIB=$s"
  MEMRA_L2WINDOW=$w MEMRA_L2SET_MIB=$s timeout 100 ./bin/exp/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6
  grep -hE 'copy bandwidth|L2 set aside' "$d/stderr.txt" | sed -E 's/^\[bench\] (device [^,]*, )?/  /'
done
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el "gate with the window at 12 MiB"
MEMRA_L2WINDOW=1 MEMRA_L2SET_MIB=12 gate exp "$M/0.8b-bf16.gguf" 64 256 0
el done
