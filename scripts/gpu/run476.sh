#!/usr/bin/env bash
# Session 88 (`bash scripts/gpu/run476.sh`, asked for as nvidia-h200; it
# came as an H100, log docs/results/h100-run476-log.txt, perf.md step 144).
# As it ran, its synth calls named bin/x/memra, which the binaries below
# lack, so its gates and benches found no models; calls typed inline on the
# same machine (in the log) made them with bench's own synth and ran the
# rest. Step
# 144, attn_prep_split preparing all of a block's heads at once (one block
# reduction of G + 1 sums, three barriers whatever the heads), against main
# (m, 1847233). y: the kernel alone (main's rule: fused only at one q head a
# block); x: the kernel with the fused launch at every f16 vector bucket
# (without the rule run474 led to). carry ["bin"]; binaries: `BINS_ARCHS=90 bash
# scripts/gpu/bins.sh m=1847233:bench
# y=1847233+scripts/gpu/patches/attn/prepsplit-heads.patch:bench,engine_gpu.test
# x=1847233+scripts/gpu/patches/attn/prepsplit-heads.patch+scripts/gpu/patches/attn/prepsplit-everybucket.patch:gate,bench,engine_gpu.test`.
# First the checks: the fused kernel's test (bit for bit against attn_prep
# then the split, every heads-a-block count up to G) on y, the decode,
# graph and session tests on x, and x's gates at contexts where its blocks
# serve two and four q heads. Then m, y and x in turn, graph rows of the
# 0.8B bf16 and q8_0 at 1k, 4k and 8k, then 9B q8_0 at 1k and 16k.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth x "0.8b" "bf16 q8_0"
first=$SYNTH
synth x "9b" "q8_0"
SYNTH="$first $SYNTH"
el "GPU tests (y, x)"
(cd engine/gpu && timeout 60 "$R/bin/y/engine_gpu.test" -test.run 'AttnPrepSplit' -test.v -test.timeout 50s > "$OUT/gputest-y.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest-y.txt" | grep -v "^    --- PASS" | head -20
(cd engine/gpu && timeout 120 "$R/bin/x/engine_gpu.test" -test.run 'GPU.*(AttnPrepSplit|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|ProfileStepBytes|ProfileGraphStep|DecodeStepDC)' -test.v -test.timeout 110s > "$OUT/gputest-x.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest-x.txt" | grep -v "^    --- PASS" | head -20
wait_synth
el gates
gate x "$M/0.8b-bf16.gguf" 2048 128 0
gate x "$M/0.8b-q8_0.gguf" 4300 64 0
gate x "$M/9b-q8_0.gguf" 1100 64 0
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" 1024,4096,8192 m y x x y m
bench_rotation "$M/9b-q8_0.gguf" 1024,16384 m y x
el done
