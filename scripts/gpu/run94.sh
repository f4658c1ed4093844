#!/usr/bin/env bash
# Prepared in session 13 for the next GPU session (branch next/kquant-chain):
# why the 4,096-row shapes stream slowly. First BenchmarkGPUGraphChain's new
# K-quant cases (Q4_K/Q5_K/Q6_K at 4096 x 12288 and 24576 x 4096 with the
# norm) beside q8_0's wide kernel and bf16 at the same shapes, each node in a
# graph as a step runs it; then ncu's stall breakdown (run42's metrics) on
# Q5_K and Q6_K at 4096 x 12288 (13.5 against 21.6 us in run87/run88 for 24%
# more bytes) and on q8_0's wide kernel there (perf.md step 41).
# Build (here): CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./engine/gpu
# (from engine/), then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
el "graph chain: K-quants, q8_0 and bf16 at the 9B shapes"
(cd engine/gpu && timeout 240 "$R/bin/new/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
  -test.bench 'GraphChain/(Q4_K|Q5_K|Q6_K|Q8_0|BF16)/(4096x12288|24576x4096)/.*/graph' 2>&1 | grep -E 'Benchmark')
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed'
for c in Q5_K/4096x12288/xnorm=false Q6_K/4096x12288/xnorm=false Q8_0/4096x12288/xnorm=false; do
  el "ncu $c"
  (cd engine/gpu && timeout 100 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:matvec --metrics "$MET" \
    "$R/bin/new/engine_gpu.test" -test.run '^$' -test.bench "GraphChain/$c/graph" -test.benchtime 1x) > /tmp/n.txt 2>&1
  grep -E "^  matvec|stalled|inst_executed|issue_active|warps_active|duration|dram__" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
el done
