#!/usr/bin/env bash
# Session 8: the warp stall breakdown and instruction mix of main's matvecs
# (run41 gave the sections' summaries; only the top stall reason prints
# there). bin/main = main's engine_gpu.test (tar cJf bin/bin.txz -C /tmp/binall .).
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
R=$PWD
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,regex:sm__inst_executed_pipe_[a-z_]+\.avg\.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__bytes_read.sum'
for c in Q8_0/4096x4096/xnorm=false Q8_0/24576x4096/xnorm=true BF16/4096x4096/xnorm=false Q8_0/4096x12288/xnorm=false Q8_0/1024x3584/xnorm=false; do
  el "ncu $c"
  (cd engine/gpu && timeout 100 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:matvec --metrics "$M" \
    $R/bin/main/engine_gpu.test -test.run '^$' -test.bench "GraphChain/$c/graph" -test.benchtime 1x) > /tmp/n.txt 2>&1
  grep -E "^  matvec|stalled|inst_executed|issue_active|warps_active|duration|dram__bytes" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
el done
