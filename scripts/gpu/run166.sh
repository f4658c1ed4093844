#!/usr/bin/env bash
# Prepared in session 25, run in session 26 (docs/results/h200-run166-log.txt): first, the
# kernel test of matvec_q4_k_wave at the shapes whose shared memory is past
# 48 KB (run165 failed them at launch because the test harness never
# allowed the kernel more; fixed in b535966), with the shared-memory tests
# and BenchmarkGPUMatvec's Q4_K rows (the harness fix there too); then every
# engine/gpu GPU test and the FP8 KV table on the K-quant presets (their rows
# in perf.md's FP8 table predate steps 73-74). bin/main = main. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q5_k q6_k"
el "matvec kernel tests (main)"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared' -test.v -test.timeout 140s > "$OUT/gputest-matvec.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-matvec.txt" | grep -v "^    --- PASS" | head -20
echo "Q4_K wave subtests: $(grep -c -- '--- PASS.*Q4_K-wide2' "$OUT/gputest-matvec.txt") PASS, $(grep -c -- '--- FAIL.*Q4_K-wide2' "$OUT/gputest-matvec.txt") FAIL"
(cd engine/gpu && timeout 100 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvec/Q4_K' -test.benchtime 50x 2>&1 | grep -E 'Benchmark|FAIL|panic')
gpu_tests main
wait_synth
rm -rf /tmp/table
el "bench (K-quant presets, -kv fp8)"
mkdir -p /tmp/table
ms=""; for p in 0.8b 9b; do for t in q4_k q5_k q6_k; do ms="$ms,$M/$p-$t.gguf"; done; done
timeout 200 ./bin/main/bench -model "${ms#,}" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -kv fp8 -out /tmp/table > /tmp/table/stdout.txt 2> /tmp/table/stderr.txt
grep -E '\| (graph|sampled) \|' /tmp/table/stdout.txt | cut -d'|' -f2,4,5,6,9,13
tar czf "$OUT/table-fp8-kq.tgz" -C /tmp table
el done
