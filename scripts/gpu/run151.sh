#!/usr/bin/env bash
# Prepared in session 22 (not yet run): ncu of the attention splits at 32k
# inside a 9B q8_0 graph after step 68, run139's method: the vector kernel
# over f16 (MEMRA_ATTN_MMA=0) against the tensor-core split over f16 (=1),
# and over e4m3 both ways. Step 68 left the e4m3 tensor-core split at 1.9
# TB/s and both f16 forms at ~2.9: what a warp waits on there (long
# scoreboard = memory, tensor pipe, barrier), the DRAM bytes and the L2 hit
# rate say which of two blocks an SM, more keys a trip or the access
# pattern comes next. bin/main; carry ["bin"]. ~4 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "9b" "q8_0"
wait_synth
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum'
for kv in f16 fp8; do for mma in 0 1; do
  el "ncu attn_split (9B q8_0, 32k, $kv KV, MEMRA_ATTN_MMA=$mma, in a graph)"
  MEMRA_ATTN_MMA=$mma timeout 100 ncu --clock-control none --graph-profiling node -k regex:attn_split --launch-skip 24 --launch-count 1 --metrics "$MET" \
    ./bin/main/bench -model $M/9b-q8_0.gguf -ctx 32768 -kv $kv -reps 1 -warmup 0 -prompt 1 -tokens 8 -copy-mib 64 > /tmp/n-$kv-$mma.txt 2>&1
  grep -E "^  attn|stalled|inst_executed|issue_active|warps_active|duration|dram__|lts__|l1tex__" /tmp/n-$kv-$mma.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  cp /tmp/n-$kv-$mma.txt "$OUT/"
done; done
el done
