#!/usr/bin/env bash
# Session 20, the last device minutes: ncu of the attention split at 32k
# inside a 9B q8_0 graph, over an f16 and over an e4m3 cache (main after
# step 62, where both take ~430 us a step for 8 layers whichever the
# bytes): what a warp waits on (-prompt 1: the priming launches at a short
# context stay before launch 24, which falls in the graph at 32k), the measurement before another attention
# form (perf.md, the attention bullet). bin/new = main; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "9b" "q8_0"
wait_synth
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct'
for kv in f16 fp8; do
  el "ncu attn_split (9B q8_0, 32k, $kv KV, in a graph)"
  timeout 100 ncu --clock-control none --graph-profiling node -k regex:attn_split --launch-skip 24 --launch-count 1 --metrics "$MET" \
    ./bin/new/bench -model $M/9b-q8_0.gguf -ctx 32768 -kv $kv -reps 1 -warmup 0 -prompt 1 -tokens 8 -copy-mib 64 > /tmp/n-$kv.txt 2>&1
  grep -E "^  attn|stalled|inst_executed|issue_active|warps_active|duration|dram__|lts__" /tmp/n-$kv.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  cp /tmp/n-$kv.txt "$OUT/"
done
el done
