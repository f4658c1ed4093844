#!/usr/bin/env bash
# Session 26, after steps 75-77 (perf.md's K-quant bullet: "ncu on the plain
# Q4_K and Q5_K kernels at 24576 x 4096 is the next measurement"). Steps
# 76-77 found the K-quant loops move with their register schedule, not with
# blocks or tiles in flight; run95's stall breakdown (its method: one
# matvec node of BenchmarkGPUGraphChain, clocks free) on main's kernels at
# the norm-fused 24576 x 4096 (plain Q4_K 3 blocks an SM, Q5_K 3, Q6_K 3)
# and 4096 x 4096 (wide Q4_K) says what a warp waits on: instruction
# issue, fixed latency, shared memory, or memory. bin/main (f42c332's
# kernels). carry ["bin"]. ~3 minutes.
set -u
source scripts/gpu/lib.sh
start_run
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active'
for c in Q4_K/24576x4096/xnorm=true Q5_K/24576x4096/xnorm=true Q6_K/24576x4096/xnorm=true Q4_K/4096x4096/xnorm=false; do
  el "ncu $c"
  (cd engine/gpu && timeout 60 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:matvec --metrics "$MET" \
    "$R/bin/main/engine_gpu.test" -test.run '^$' -test.bench "GraphChain/$c/graph" -test.benchtime 1x) > /tmp/n.txt 2>&1
  grep -E "^  matvec|stalled|inst_executed|issue_active|warps_active|duration|dram__" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  cp /tmp/n.txt "$OUT/ncu-$(echo $c | tr '/=' '__').txt"
done
el done
