#!/usr/bin/env bash
# Session 15, second call: run103 and run101 (prepared in session 14 on
# branches next/mv-grid-frac and next/kq-wide-rows, never run) in one call.
# bin/mvf: every matvec grid capped at a fraction of the resident blocks
# (MEMRA_MV_RESIDENT), so that under PDL the next kernel's blocks find room
# beside it; each fraction alternates with the full grid on the four goal
# presets at 1k. bin/kw: the K-quants' MatvecWide thresholds from
# MEMRA_KQ_WIDE (the 24576-row gate|up and the input projections on the wide
# kernels, Q5_K's 4096 x 4096), alternating with the default on the 9B
# K-quants at 1k, and the graph chain of the gate|up shape. Then ncu of
# attn_split and gdn_delta inside a 0.8B bf16 graph at 1k (no ncu of them yet).
# Build (here): bench and gate of each branch from worktrees into
# /tmp/binall/{mvf,kw}/, engine_gpu.test of next/kq-wide-rows into /tmp/binall/kw/,
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait $SYNTH
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
for round in 1 2; do
for f in "" 0.75 "" 0.5; do
  el "MEMRA_MV_RESIDENT='$f' round $round"
  d=/tmp/fr/$round-${f:-full}-$(date +%s%N); mkdir -p $d
  MEMRA_MV_RESIDENT=$f timeout 120 ./bin/mvf/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
done
KQ=$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf
for round in 1 2; do
for w in "" "q4_k=32768,q5_k=32768,q6_k=32768" "q5_k=4096"; do
  el "MEMRA_KQ_WIDE='$w' round $round"
  d=/tmp/kw/$round-${w:-default}; mkdir -p $d
  MEMRA_KQ_WIDE=$w timeout 150 ./bin/kw/bench -model $KQ -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
done
(cd engine/gpu && for w in "" "q4_k=32768,q5_k=32768,q6_k=32768"; do
  MEMRA_KQ_WIDE=$w timeout 100 "$R/bin/kw/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/(Q4_K|Q5_K|Q6_K)/24576x4096/.*/graph' 2>&1 | grep -E 'Benchmark' | sed "s/^/wide='$w' /"
done)
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum'
for k in attn_split gdn_delta; do
  el "ncu $k (0.8B bf16, 1k, in a graph)"
  timeout 100 ncu --clock-control none --graph-profiling node -k regex:$k --launch-skip 40 --launch-count 1 --metrics "$MET" \
    ./bin/new/bench -model $M/0.8b-bf16.gguf -ctx 1024 -reps 1 -warmup 0 -tokens 8 -copy-mib 64 > /tmp/n.txt 2>&1
  grep -E "^  (attn|gdn)|stalled|inst_executed|issue_active|warps_active|duration|dram__" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
el done
