#!/usr/bin/env bash
# Session 38 (step 93): ncu on gdn_mixout (what its warps wait on), the
# launches of TestGPUKernelGDNMixout at the 9B shape (q8_0) and the 0.8B
# shape (bf16), the third launch of each (steps carry state). Clocks free;
# run205's metrics. The binaries of run259. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum'
for c in 'hk16-hv32-d4096-map0-(?i)q8_0' 'hk16-hv16-d1024-map0-(?i)bf16'; do
  el "ncu gdn_mixout, $c"
  (cd engine/gpu && timeout 150 ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:'^gdn_mixout' --metrics "$MET" \
    "$R/bin/main/engine_gpu.test" -test.run "TestGPUKernelGDNMixout/$c\$" > /tmp/n.txt 2>&1)
  grep -E "^  gdn_mixout|stalled|inst_executed|issue_active|warps_active|duration|dram__|lts__|Block Size|Grid Size" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  cp /tmp/n.txt "$OUT/ncu-${c%%-map0*}.txt"
done
el done
