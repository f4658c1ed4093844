#!/usr/bin/env bash
# Session 34, docs/perf.md step 89: pring_hx_l2 and pring_hx_l4 (pring_hx_er
# whose producer prefetches each warp's units 2 or 4 beyond the one it
# copies into the L2 with bulk prefetches, past a phase's end into the
# next), checked bit for bit against pring_hx with 1 and 2 slots a warp and
# timed beside every form with 1 and 2; the graph nodes; ncu on both.
# carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring forms: checks, timed with 1 and 2 slots a warp, traced, then with no rows"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 1,2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum'
for k in pring_hx_l2 pring_hx_l4; do
  el "ncu $k"
  timeout 120 ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:"^$k\$" --metrics "$MET" \
    ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2 -ncu "$k/x8" > /tmp/n.txt 2>&1
  grep -E "^  $k|stalled|inst_executed|issue_active|warps_active|duration|dram__|lts__|rror" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  cp /tmp/n.txt "$OUT/ncu-$k.txt"
done
el done
