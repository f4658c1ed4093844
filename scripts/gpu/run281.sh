#!/usr/bin/env bash
# Session 43, main's final binaries (after the review of run280's): the
# GPU tests the review's changes reach (decode against the CPU, graph
# against eager, engine/cuda's), the default gate through its exit status,
# greedy tokens cuda == cpu, and bench interrupted by ^C while it
# synthesises a 9B preset (never run on a GPU before: bench stops before
# synth without one): exit 130, no temporary file left, the report of the
# run so far written. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
el "GPU tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|KernelMatvec' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
(cd engine/cuda && timeout 60 "$R/bin/main/engine_cuda.test" 2>&1 | tail -1)
wait_synth
./bin/main/gate > /tmp/g.txt 2>&1; echo "gate default: rc $? $(grep -E 'gate (PASS|FAIL)' /tmp/g.txt)"
greedy main "$M/0.8b-q8_0.gguf"
el "bench ^C during synth"
rm -rf /tmp/mb /tmp/bi; mkdir -p /tmp/mb
./bin/main/bench -preset 9b -type bf16 -ctx 64 -models-dir /tmp/mb -out /tmp/bi > /tmp/bi.out 2> /tmp/bi.err &
BP=$!
for i in $(seq 1 60); do grep -q 'synth *[1-9]' /tmp/bi.err 2>/dev/null && break; sleep 0.5; done
ls /tmp/mb
kill -INT $BP; wait $BP; echo "bench after ^C: rc $?"
tail -4 /tmp/bi.err
echo "left in /tmp/mb: [$(ls /tmp/mb)]"
ls /tmp/bi
el done
