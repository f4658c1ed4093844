#!/usr/bin/env bash
# Session 12: Q4_K on the tensor cores with each run's sums in its own pair of
# B columns (mvq4s_step4: a lane does the scale arithmetic of 2 runs of a
# superblock instead of 8), in the register form (mmakr_) and the ring form
# (mmakc_), against the engine's kernels and run77's forms; then ncu's
# scheduler and warp-state sections on 24576 x 4096 for three of them.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
el "mvexp -xnorm"
timeout 300 ./bin/new/mvexp -cubin bin/mvexp.cubin -xnorm -variants mmak \
  -shapes 24576x4096,12352x4096,10240x4096,4096x12288,4096x4096,248320x4096,7168x1024,8224x1024,1024x3584,1024x2048,248320x1024 | grep -E '==|q4_k|mmak|copy'
el "ncu"
for k in matvec_q4_k mmakr_q4_k4_u1_b0 mmakc_q4_k4_s3_b0; do
  timeout 100 ncu --clock-control none -k "regex:^$k\$" -c 2 \
    --section SpeedOfLight --section SchedulerStats --section Occupancy --section LaunchStats \
    ./bin/new/mvexp -cubin bin/mvexp.cubin -xnorm -variants _q4_k4_ -shapes 24576x4096 >> $OUT/ncu.txt 2>&1
done
grep -E '^  [a-z_0-9]+\(|Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\)' $OUT/ncu.txt | head -60
el done
