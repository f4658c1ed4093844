#!/usr/bin/env bash
# Session 30, step 85: why the trip-ahead L2 prefetch lost. run171's method
# (one matvec node of BenchmarkGPUGraphChain under ncu, clocks free, the
# stall reasons per issued instruction, instructions, DRAM bytes) on main
# (bin/main) and on next/mv-prefetch at PD = 1 (bin/pd1, d92369e), q8_0 at
# 24576 x 4096 norm fused (the narrow kernel, prefetching) and 4096 x 4096
# (the wave kernel, whose loop issues no prefetch there). carry ["bin"].
# ~3 minutes.
set -u
source scripts/gpu/lib.sh
start_run
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active'
for c in Q8_0/24576x4096/xnorm=true Q8_0/4096x4096/xnorm=false; do
  for b in main pd1; do
    el "ncu $c ($b)"
    (cd engine/gpu && timeout 60 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:matvec --metrics "$MET" \
      "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench "GraphChain/$c/graph" -test.benchtime 1x) > /tmp/n.txt 2>&1
    grep -E "^  matvec|stalled|inst_executed|issue_active|warps_active|duration|dram__" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
    cp /tmp/n.txt "$OUT/ncu-$b-$(echo $c | tr '/=' '__').txt"
  done
done
el done
