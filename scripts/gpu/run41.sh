#!/usr/bin/env bash
# Session 8: Nsight Compute on the matvec kernels as the graph chain runs
# them (BenchmarkGPUGraphChain, one case per call), main's kernels and the
# staged ones of branch next/mv-stage (run40: 1.5-2x slower per node), to
# see what bounds each: DRAM throughput, occupancy, warp stall reasons.
# bin/main = main, bin/st = next/mv-stage (engine_gpu.test each), packed
# with: tar cJf bin/bin.txz -C /tmp/binall .
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
R=$PWD
ncu --version | tail -1
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
prof() { # bin stage case kernel-regex
  el "ncu $1 MEMRA_MV_STAGE=$2 $3"
  (cd engine/gpu && MEMRA_MV_STAGE=$2 timeout 100 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:$4 $S \
    $R/bin/$1/engine_gpu.test -test.run '^$' -test.bench "GraphChain/$3/graph" -test.benchtime 1x) >> $OUT/ncu.txt 2>&1
  tail -3 $OUT/ncu.txt | head -2
}
for c in Q8_0/4096x4096/xnorm=false Q8_0/4096x12288/xnorm=false Q8_0/12288x4096/xnorm=true Q8_0/24576x4096/xnorm=true \
         BF16/4096x4096/xnorm=false Q8_0/1024x3584/xnorm=false BF16/7168x1024/xnorm=true Q8_0/4096x4096/xnorm=false/L2; do
  prof main 0 $c matvec
done
prof st 8192 Q8_0/4096x4096/xnorm=false matvec_q8_0_stage
prof st 8192 BF16/4096x4096/xnorm=false matvec_bf16_stage
prof st 8192 Q8_0/4096x4096/xnorm=false/L2 matvec_q8_0_stage
grep -E "^  [a-z_0-9]+\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Warp Cycles Per Issued|Issued Warp|No Eligible|Dynamic Shared|Waves Per SM|Grid Size" $OUT/ncu.txt
el done
