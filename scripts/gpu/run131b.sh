#!/usr/bin/env bash
# run131 again from where it stopped: its GPU tests passed (new), then
# `wait $SYNTH` hung, because the warm machine still had run130's models and
# synth started no job (a bare wait waits on the tee). This one uses
# wait_synth and skips the tests already passed; it adds main's
# TestGPUKernelMatvec (c771b81's fused-norm epilogue cases, not yet run on a
# GPU). bin/main = main, bin/new = next/attn-8warp; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"; S0=$SYNTH
synth main "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "TestGPUKernelMatvec (main)"
(cd engine/gpu && timeout 120 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvec' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    --- PASS")
wait_synth
tokens_cmp main new "0.8b-q8_0 9b-q8_0"
el gates
gate new $M/0.8b-bf16.gguf 3000 1200 1
gate new $M/9b-q8_0.gguf 64 256 0
gate new $M/9b-q8_0.gguf 4300 64 1 # past the new split cap (66 splits = 4,224 keys), FP8 KV: G = 2
for b in main new; do
  for c in 1024 32768; do
    el "profile 9b-q8_0 ctx $c ($b)"
    timeout 90 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx $c -reps 1 -tokens 16 -profile 8 -out /tmp/prof-$b 2>/dev/null | grep -E '^\| attn'
  done
done
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024,4096,32768 main new main new
for b in main new; do
  el "bench 9b-q8_0 32k fp8 ($b)"
  timeout 120 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -kv fp8 -reps 3 -tokens 64 -out /tmp/bn-fp8-$b 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
el done
