#!/usr/bin/env bash
# Session 34, docs/perf.md step 89: pring_hx_ff (the producer fills whichever
# warp's slot is free first), pring_hx_er (consumers free a slot once its
# unit is in their registers) and pring_hx_ffer (both), checked bit for bit
# against pring_hx and timed beside it with 1 and 2 slots a warp; the graph
# nodes; ncu on pring_hx and pring_hx_er (the 64-phase chain's second
# launch: stalls, DRAM and L2). carry ["bin"]. ~3 min.
# Its pring_hx_er is the same sums as c68a520's, in an earlier form
# (before prg_take and prg_held_sums were factored out of it); run
# today, this script runs the committed code.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring forms: checks, timed with 1 and 2 slots a warp, pring_hx traced, then with no rows"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 1,2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum'
for k in pring_hx pring_hx_er; do
  el "ncu $k"
  timeout 120 ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:"^$k\$" --metrics "$MET" \
    ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2 -ncu "$k/x8" > /tmp/n.txt 2>&1
  grep -E "^  $k|stalled|inst_executed|issue_active|warps_active|duration|dram__|lts__|rror" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  cp /tmp/n.txt "$OUT/ncu-$k.txt"
done
el done
