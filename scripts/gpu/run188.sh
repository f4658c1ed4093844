#!/usr/bin/env bash
# Session 29: the ffn kernels at 64 registers, 4 blocks an SM (run187 had
# 79-80: 3). The ffn tests, graph = eager, two
# gates, then graph tok/s at 1k with MEMRA_FFN_FUSE=0 and 1 alternating on one
# machine, and profiles. bin/main: branch next/ffn-fused-r64 (c0ec6bc), ffn.cu's
# forms at 64 registers (docs/perf.md step 83). carry ["bin"]. ~3 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"
S1=$SYNTH
synth main "9b" "q8_0"
SYNTH="$S1 $SYNTH"
el "engine/gpu tests"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'KernelFFN|FFNFusedDecode|GraphEqualsEager|ProfileStepBytes' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|ffn" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
wait_synth
el "gates"
gate main $M/0.8b-bf16.gguf 64 128 0
gate main $M/9b-q8_0.gguf 64 128 0
ms=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for r in main:0 main:1 main:0 main:1; do
  b=${r%:*} f=${r#*:}
  el "bench 1024 $b MEMRA_FFN_FUSE=$f"
  d=/tmp/bn/$b-fuse$f-$(date +%s%N); mkdir -p "$d"
  MEMRA_FFN_FUSE=$f timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| (graph|eager) \|' | cut -d'|' -f2,3,4,5,6,9,13
done
for r in main:0 main:1; do
  b=${r%:*} f=${r#*:}
  el "profile $b MEMRA_FFN_FUSE=$f"
  d=/tmp/bn/prof-$b-$f; mkdir -p "$d"
  MEMRA_FFN_FUSE=$f timeout 100 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out "$d" > "$d/stdout.txt" 2>"$d/stderr.txt"
  grep -E '^\| (ffn|matvec_[a-z0-9_]* \| (7168|1024×3584|24576|4096×12288))' "$d/stdout.txt" | head -16
done
tar czf "$OUT/bench.tgz" -C /tmp bn
el done
