#!/usr/bin/env bash
# Session 14, first call: where a graph step's time goes, and two leads.
# bin/new = main + `bench -omit` (gpu.Options.Omit); bin/wide = the same
# with the bf16/f16 matrices of up to 4,096 rows on the wide kernel (the 9B
# ffn down 4096 x 12288 and the 4096 x 4096 output projections; main: <= 2048).
#  1. GPU tests of the changed step (omit, graph == eager, decode == CPU).
#  2. bench -omit PART for each step part at 1k on the four goal presets:
#     graph ms/token without the part, against the whole step in the same
#     round (what each part costs inside a graph, overlap included).
#  3. the graph chains of session 13's prepared run94 (K-quants, q8_0, bf16 at 4096 x 12288 and
#     24576 x 4096; bf16 4096 x 12288 on both binaries) and its ncu stall
#     breakdown of Q5_K, Q6_K and q8_0 wide at 4096 x 12288.
#  4. mvexp: bf16 narrow and wide kernels at the 9B 4,096-row shapes.
#  5. bench main / wide in rotation on 9B bf16 (1k, 4k), and gates.
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'GPUOmitParts|GPUGraphEqualsEager|GPUDecodeMatchesCPU' -test.v > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
el "graph chains"
for b in new wide; do
(cd engine/gpu && timeout 240 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
  -test.bench 'GraphChain/(Q4_K|Q5_K|Q6_K|Q8_0|BF16)/(4096x12288|24576x4096|4096x4096)/.*/graph' 2>&1 | grep -E 'Benchmark' | sed "s/^/$b /")
done
el "mvexp bf16 at the 4096-row shapes"
timeout 120 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants mvg_bf16 -shapes 4096x12288,4096x4096 2>&1 | grep -E 'bf16|copy' | head -40
wait $SYNTH
el "gates"
gate new $M/0.8b-bf16.gguf 300 1000 0
gate new $M/9b-q8_0.gguf 64 400 1
gate wide $M/9b-bf16.gguf 64 400 0
el "bench -omit (1k, graph ms/token)"
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
i=0
for p in none embed gdn attn mixer-mv ffn logits none; do
  o=""; [ $p != none ] && o="-omit $p"
  i=$((i+1)); d=/tmp/om/$i-$p; mkdir -p $d
  timeout 120 ./bin/new/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 $o -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6 | sed "s/^/$p /"
  cp $d/latest.json $OUT/omit-$i-$p.json 2>/dev/null
done
bench_rotation $M/9b-bf16.gguf 1024,4096 new wide new wide
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed'
for c in Q5_K/4096x12288/xnorm=false Q6_K/4096x12288/xnorm=false Q8_0/4096x12288/xnorm=false; do
  el "ncu $c"
  (cd engine/gpu && timeout 100 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:matvec --metrics "$MET" \
    "$R/bin/new/engine_gpu.test" -test.run '^$' -test.bench "GraphChain/$c/graph" -test.benchtime 1x) > /tmp/n.txt 2>&1
  grep -E "^  matvec|stalled|inst_executed|issue_active|warps_active|duration|dram__" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
el done
