#!/usr/bin/env bash
# Prepared in session 15 for the next GPU session (this session's device
# time ran out after run108). Session 15's review mends changed tests and
# host code after run107, not the kernels (the fatbin is byte-identical):
# TestGPUSessionTop on a 9,000-token vocabulary (two top-k passes inside the
# graph), TestGPUKernelTopK against sample.TopK, the pinned views through
# cuda.HostSlice. Every GPU test, a gate, sampled generation on 0.8B bf16
# (the session's numbers: 1,027-1,047 tok/s), then ncu of attn_split inside
# a 0.8B bf16 graph past the priming (launch-skip 400: run105's caught a
# priming launch), the measurement perf.md names before another attention form.
# Build (here): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/gate ./tools/memra ./tools/bench,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b" "bf16 q8_0"
gpu_tests new
wait $SYNTH
gate new $M/0.8b-q8_0.gguf 300 1000 1
for i in 1 2; do
  timeout 120 ./bin/new/memra run -m $M/0.8b-bf16.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 --seed 7 -device cuda \
    > /dev/null 2> /tmp/samp.err
  echo "0.8b-bf16 sampled: $(grep -E 'generated' /tmp/samp.err | tail -1)"
done
MET='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum'
el "ncu attn_split (0.8B bf16, 1k, in a graph, past the priming)"
timeout 150 ncu --clock-control none --graph-profiling node -k regex:attn_split --launch-skip 400 --launch-count 2 --metrics "$MET" \
  ./bin/new/bench -model $M/0.8b-bf16.gguf -ctx 1024 -reps 1 -warmup 0 -tokens 16 -copy-mib 64 > /tmp/n.txt 2>&1
grep -E "^  attn|stalled|inst_executed|issue_active|warps_active|duration|dram__" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
el done
