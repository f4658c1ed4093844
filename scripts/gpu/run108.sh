#!/usr/bin/env bash
# Session 15, fifth call: two small-kernel changes after step 49, each on
# its branch and together. bin/pre = main; bin/a = next/gdn-rpw2 (gdn_delta
# with 2 state rows per warp: twice the warps); bin/b = next/gnorm-warp
# (rmsnorm_gated one warp per row); bin/ab = next/gdn-gnorm (both). The
# kernel tests of both and the graph = eager test on ab, the four in rotation
# on the goal presets at 1k (two rounds), then gates on ab.
# Build (here): bench of each branch from worktrees into /tmp/binall/{pre,a,b,ab}/,
# gate and engine_gpu.test of next/gdn-gnorm into /tmp/binall/ab/,
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth pre "0.8b 9b" "bf16 q8_0"
el "engine/gpu tests (ab: the two kernels, graph = eager)"
(cd engine/gpu && timeout 100 "$R/bin/ab/engine_gpu.test" -test.run 'KernelGDN|KernelRMSNormGated|GraphEqualsEager|SessionTop' -test.v -test.timeout 90s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | head -20
wait $SYNTH
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf 1024 pre a b ab pre a b ab
gate ab $M/0.8b-bf16.gguf 300 600 1
gate ab $M/9b-q8_0.gguf 64 300 0
el done
