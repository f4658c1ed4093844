#!/usr/bin/env bash
# Session 31, docs/perf.md step 86: ncu on pfpre's FFN chain (64 phases from
# HBM, whole) with one and with two producer warps: why the second producer
# slowed it (run204). pchain -time pfpre -producers 1,2 launches pfpre twice
# for the checks, 60 times for each of the two no-row chains, then 60 for
# each form of the FFN chain, one producer first: launch 132 is the first
# producer's whole FFN past its 10 warm-up launches, launch 372 the two
# producers'. Clocks free; run195's metrics. carry ["bin"]. ~3 minutes.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill"
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum'
for skip in 132 372; do
  el "ncu pfpre launch $skip"
  timeout 150 ncu --clock-control none --launch-skip $skip --launch-count 1 -k regex:'^pfpre$' --metrics "$MET" \
    ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1 -time pfpre -producers 1,2 > /tmp/n.txt 2>&1
  grep -E "^  pfpre|stalled|inst_executed|issue_active|warps_active|duration|dram__|lts__|Block Size|Grid Size" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  grep -E "pfpre.*ab hbm" /tmp/n.txt | head -8
  cp /tmp/n.txt "$OUT/ncu-pfpre-$skip.txt"
done
el done
