#!/usr/bin/env bash
# Session 54, step 101's last part: the staged kernels' first ring items
# issued before griddepcontrol.wait (weights have no writer; the copies of
# x after it), every batch kernel's wait inside memra_mvb. bin/base is
# 76d3d5d (before step 101), bin/prev 4b6735b (step 101 without it),
# bin/main the change. The batch, prefill, graph, session and early-load
# tests on main; prime time at P=512 on the four presets, the three
# alternated twice, decode at 1k alongside; gates. carry ["bin"]. ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "batch and prefill GPU tests (main)"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|GraphEqualsEager|SessionFeed|SessionEqualsEager|EarlyLoads|MatvecShared|DecodeMatchesCPU' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
grep -E -- '--- (PASS|FAIL): TestGPUPrefillMatchesTokenFeed/.*staged' "$OUT/gputest.txt"
el "BenchmarkGPUMatvecBatch n8, q8_0 (prev, main)"
for b in prev main; do
  (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 300x -test.bench 'GPUMatvecBatch/Q8_0/.*/n8/' 2>&1 |
    grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+300\s+/ /")
done
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
i=0
for b in base prev main base prev main; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "gates (main)"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
gate main "$M/0.8b-bf16.gguf" 300 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
gate main "$M/9b-q8_0.gguf" 300 64 0
gate main "$M/9b-bf16.gguf" 300 32 0
el "memra run on cuda, a 300-token prompt (base, main)"
for b in base main; do
  for m in 0.8b-bf16 0.8b-q8_0; do
    timeout 60 ./bin/$b/memra run -m "$M/$m.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo "($b $m)"
  done
done
el done
