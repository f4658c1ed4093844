#!/usr/bin/env bash
# Session 67: ncu of the prefill batch kernels at 4,096 columns for 8
# tokens (what bounds them: issue, shared memory, or latency), before
# choosing the next prefill step. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=596260c:engine_gpu.test
# ~3 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
d=/tmp/ncu; mkdir -p $d
for c in "Q8_0/24576x4096/n8/staged matvec_batch_q8_0 q8s" "Q8_0/4096x12288/n8/laid matvec_batch_q8_0 q8l" "BF16/24576x4096/n8/global matvec_batch_bf16 bf"; do
  set -- $c
  el "ncu $1"
  (cd engine/gpu && timeout 150 ncu --clock-control none --launch-skip 3 --launch-count 1 -k "regex:$2" \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    -f -o "$d/$3" "$R/bin/main/engine_gpu.test" -test.run '^$' -test.bench "GPUMatvecBatch/$1\$" -test.benchtime 1x) > "$d/$3-run.txt" 2>&1
  echo "rc $?"; tail -3 "$d/$3-run.txt"
  ncu -i "$d/$3.ncu-rep" --print-details all > "$d/$3.txt" 2>&1
  ncu -i "$d/$3.ncu-rep" --page raw --csv > "$d/$3-raw.csv" 2>&1
  grep -E "^  [a-z_]+|Duration|Throughput|Registers Per|Occupancy|Block Limit|Issued|Eligible|Active Warps|Warp Cycles|Stall|Shared|Bank|Executed Ipc|Pipe|FMA|Wavefront" "$d/$3.txt" | head -70
done
tar czf "$OUT/ncu.tgz" -C /tmp ncu
el done
