#!/usr/bin/env bash
# Session 63: the mixed launch (matvec_mix.cu, engine/gpu/mix.go) on the
# GPU. The engine/gpu tests of the matvec kernels (every kernel's memra_mvt
# loop now takes its block and grid as arguments), the mixed kernels
# against their parts' kernels bit for bit, decode against the CPU, graph
# against eager, the mixed launch against MEMRA_MIX=0 bit for bit; gates on
# the 0.8B and 9B Q4_K_M; 24 greedy tokens cuda against cpu; then graph
# decode at 64 and 1k, MEMRA_MIX=0 and =1 in turn on one machine (off on
# off on), with bench -compare, and main before it (bin/old, 44fdcbf) on the
# same files. carry ["bin"]. ~8 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "q4_k_m q5_k_m"
el "engine/gpu tests (main)"
(cd engine/gpu && timeout 250 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvec|MixedLaunch|MatvecShared|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 240s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|mixed launches|q4_k_m:" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
wait_synth
el "gates"
gate main "$M/0.8b-q4_k_m.gguf" 300 128 0
gate main "$M/9b-q4_k_m.gguf" 300 64 1
gate main "$M/9b-q5_k_m.gguf" 64 64 0
el "greedy 0.8b-q4_k_m"
greedy main "$M/0.8b-q4_k_m.gguf"
ms="$M/0.8b-q4_k_m.gguf,$M/9b-q4_k_m.gguf,$M/0.8b-q5_k_m.gguf,$M/9b-q5_k_m.gguf"
mkdir -p /tmp/bn
for r in 1 2; do for mix in 0 1; do
  el "bench MEMRA_MIX=$mix (round $r)"
  d=/tmp/bn/mix$mix-$r; mkdir -p $d
  MEMRA_MIX=$mix timeout 100 ./bin/main/bench -model "$ms" -ctx 64,1024 -reps 3 -tokens 64 -sampled=false -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
  awk '/^## Models/{f=1;next} /^## /{f=0} f && /k_m/' $d/bench-*.md | cut -d'|' -f2,14
done; done
el "bench old (44fdcbf, main before the mixed launch)"
mkdir -p /tmp/bn/old
timeout 100 ./bin/old/bench -model "$ms" -ctx 64,1024 -reps 3 -tokens 64 -sampled=false -out /tmp/bn/old 2>/tmp/bn/old/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
el "compare old -> off, old -> on (round 2)"
./bin/main/bench -compare /tmp/bn/old/bench-*.json /tmp/bn/mix0-2/bench-*.json 2>&1 | grep -E 'geomean' | head -3
./bin/main/bench -compare /tmp/bn/old/bench-*.json /tmp/bn/mix1-2/bench-*.json 2>&1 | grep -E 'geomean' | head -3
for r in 1 2; do
  el "compare off -> on (round $r)"
  ./bin/main/bench -compare /tmp/bn/mix0-$r/bench-*.json /tmp/bn/mix1-$r/bench-*.json 2>&1 | grep -E 'graph|geomean' | head -12
done
tar czf "$OUT/bench-mix.tgz" -C /tmp bn
el done
