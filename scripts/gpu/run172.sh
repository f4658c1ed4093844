#!/usr/bin/env bash
# Session 26, after run171 (its stalls: math_pipe_throttle and not_selected
# lead on the plain K-quant kernels at 24576 x 4096): which pipes they
# fill, as percentages of peak, same nodes and method. bin/main. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
MET='regex:sm__inst_executed_pipe_[a-z_]*\.avg\.pct_of_peak_sustained_active,regex:sm__pipe_[a-z_]*_cycles_active\.avg\.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum'
for c in Q4_K/24576x4096/xnorm=true Q5_K/24576x4096/xnorm=true Q6_K/24576x4096/xnorm=true; do
  el "ncu pipes $c"
  (cd engine/gpu && timeout 60 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:matvec --metrics "$MET" \
    "$R/bin/main/engine_gpu.test" -test.run '^$' -test.bench "GraphChain/$c/graph" -test.benchtime 1x) > /tmp/n.txt 2>&1
  grep -E "^  matvec|pipe|inst_executed.sum|duration" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00" && $NF != "(!)"'
  cp /tmp/n.txt "$OUT/ncu-pipes-$(echo $c | tr '/=' '__').txt"
done
el done
