#!/usr/bin/env bash
# PREPARED, NOT RUN (session 87's device time ran out in failed starts).
# Session 87 (`bash scripts/gpu/run475.sh`, asked for as nvidia-h200): step
# 143's fused launch only where a split block serves one q head (b9ebf6a,
# r) against main before the step (33c5442, m) and with the launch at every
# bucket (f86fc07, n), after run474 had n lose past 2k. carry ["bin"];
# binaries: `bash scripts/gpu/bins.sh m=33c5442:memra,bench n=f86fc07:bench
# r=b9ebf6a:gate,bench,engine_gpu.test`. The GPU tests the rule touches, a
# gate whose steps cross from the fused buckets to the unfused ones (0.8B
# bf16 from 2,048 tokens: 32 to 34 splits), then m, n and r once each
# (failed starts had left ~300 s of device time), graph rows of the 0.8B
# bf16 and q8_0 at 1k and 4k.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth m "0.8b" "bf16 q8_0"
wait_synth
el "GPU tests (r)"
(cd engine/gpu && timeout 120 "$R/bin/r/engine_gpu.test" -test.run 'PrepInSplit|AttnPrepSplit|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|OmitParts|EarlyLoads|ProfileStepBytes|ProfileGraphStep' -test.v -test.timeout 110s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
el gates
gate r "$M/0.8b-bf16.gguf" 2048 128 0
gate r "$M/0.8b-q8_0.gguf" 64 512 0
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" 1024,4096 m n r
el done
