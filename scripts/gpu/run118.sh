#!/usr/bin/env bash
# Session 17, step 55: a matvec's weight (and q8_0 scale) loads marked
# L1::no_allocate, so the weight stream stops evicting x from L1 (x is read
# again by every row unit; the q8_0 kernels read 1 byte of x per weight byte
# at R = 4, bf16 half that, and the wide kernels read x from global memory).
# bin/old = main (e257b2a), bin/new = no_allocate, bin/n256 = no_allocate
# plus the L2::256B prefetch-size hint. Graph chains of the q8_0 and bf16
# shapes on all three, ncu (L1 hit rate, L2 sectors, DRAM bytes) of the q8_0
# wide 4096 x 12288 node old / new, bench old/new/n256 in rotation at 1k on
# the four goal presets (two rounds), the matvec and graph tests and a gate
# on new. Build (here): the three sets of binaries; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
for b in old new n256; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/(Q8_0|BF16)/.*/graph' 2>&1 | grep -E 'Benchmark' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
MET=gpu__time_duration.sum,dram__bytes_read.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
for b in old new; do
  for c in 4096x12288 4096x4096; do
    el "ncu q8_0 wide $c graph node ($b)"
    (cd engine/gpu && timeout 100 ncu --clock-control none --graph-profiling node -k regex:matvec_q8_0_wide --launch-skip 70 --launch-count 1 --metrics "$MET" \
      "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 3x -test.bench "GraphChain/Q8_0/$c/xnorm=false/graph" 2>&1 | grep -E '^\s+(gpu__|dram__|l1tex__|lts__)' )
  done
done
wait $SYNTH
el "bench"
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf 1024 old new n256 old new n256
el "tests, gate (new)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'Matvec|GraphEqualsEager|DecodeMatchesCPU' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|panic' | grep -v '^    ')
gate new $M/9b-q8_0.gguf 64 256 0
gate new $M/0.8b-q8_0.gguf 300 500 1
el done
